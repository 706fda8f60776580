//! Latency distributions, wherever they are written
//! ([scenario format](../../../../docs/scenario-format.md#latency)).

use super::Validator;
use crate::scenario::model::latency::LatencySpec;
use crate::scenario::yaml::locations::join;

/// The largest `sigma` of a lognormal latency. Beyond it a draw is the median times a factor
/// no duration holds, so every attempt would wait out the run's limit: refused at load, not
/// found out by a run that abandons its first attempt.
const MAX_SIGMA: f64 = 10.0;

impl Validator<'_> {
    pub(super) fn latency(&mut self, path: &str, l: &LatencySpec) {
        match l {
            LatencySpec::Fixed(_) | LatencySpec::Uniform(_) => {}
            LatencySpec::Lognormal(ln) => {
                let lp = join(path, "lognormal");
                if !(ln.sigma.is_finite() && ln.sigma > 0.0) {
                    self.err_expected(
                        &join(&lp, "sigma"),
                        format!("sigma {} is not positive", ln.sigma),
                        format!("a number above 0 and at most {MAX_SIGMA}"),
                    );
                } else if ln.sigma > MAX_SIGMA {
                    self.over_limit(
                        &join(&lp, "sigma"),
                        format!("`sigma: {:?}`", ln.sigma),
                        format!(
                            "at most {MAX_SIGMA} (at 10 a draw three deviations out is already \
                             10^13 times the median)"
                        ),
                    );
                }
                self.positive(&join(&lp, "median"), ln.median, "`median`");
                if let Some(max) = ln.max {
                    if max < ln.median {
                        self.err(
                            &join(&lp, "max"),
                            format!("max {max} is below the median {}", ln.median),
                        );
                    }
                }
            }
            LatencySpec::Exponential(ex) => {
                let ep = join(path, "exponential");
                self.positive(&join(&ep, "mean"), ex.mean, "`mean`");
                if let Some(max) = ex.max {
                    if max < ex.mean {
                        self.err(
                            &join(&ep, "max"),
                            format!("max {max} is below the mean {}", ex.mean),
                        );
                    }
                }
            }
        }
    }
}
