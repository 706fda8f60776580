//! The configuration of a search: its base scenario, space, seed, cases, shard and where
//! its regression goes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::scenario::{Scenario, VarySpec};

use super::invariant::Invariants;

use super::shard::Shard;
use super::space::Space;

/// How a search runs.
///
/// ```
/// use retrylab::prelude::*;
/// use retrylab::search::{SearchConfig, Shard, Space};
///
/// let base = Scenario::builder("orders")
///     .endpoint("api", endpoint())
///     .operation(post("api", "/orders"))
///     .build()
///     .unwrap();
/// let config = SearchConfig::new(base)
///     .seed(7)
///     .cases(500)
///     .space(Space::default().steps(3))
///     .shard(Shard::new(1, 4).unwrap())
///     .regressions("target/regressions");
/// assert_eq!(config.search_seed(), 7);
/// ```
#[derive(Clone, Debug)]
#[must_use = "a configuration does nothing until given to `retrylab::search`"]
pub struct SearchConfig {
    pub(crate) base: Scenario,
    pub(crate) space: Space,
    pub(crate) seed: u64,
    pub(crate) cases: u32,
    pub(crate) shard: Shard,
    pub(crate) regressions: PathBuf,
    pub(crate) max_shrink_steps: u32,
    pub(crate) threads: usize,
    /// A `search:` block's `vary:`, which replaces the space when set.
    pub(crate) vary: Option<BTreeMap<String, VarySpec>>,
}

/// Where regression files go unless told: `scenarios/regressions/`, relative to the working
/// directory (a test's is its crate's directory).
pub const DEFAULT_REGRESSIONS: &str = "scenarios/regressions";

impl SearchConfig {
    /// A search around `base`: its operation endpoint's script, and what else
    /// [`Space::default`] varies. The search seed is the base's `seed:`, 256 cases (unless
    /// `PROPTEST_CASES` says otherwise), the whole search in one shard, regressions under
    /// [`DEFAULT_REGRESSIONS`], at most 4,096 shrinking steps, as many cases at once as the
    /// machine has parallelism.
    pub fn new(base: Scenario) -> SearchConfig {
        SearchConfig {
            seed: base.seed,
            base,
            space: Space::default(),
            cases: 256,
            shard: Shard::WHOLE,
            regressions: PathBuf::from(DEFAULT_REGRESSIONS),
            max_shrink_steps: 4096,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            vary: None,
        }
    }

    /// The search a scenario's `search:` block describes, with its invariants: `cases`,
    /// the `vary:` paths instead of a [`Space`], `invariants:` as the expectations of every
    /// case, the file's `seed:` as the search seed. `None` without a `search:` block.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    /// use retrylab::search::SearchConfig;
    ///
    /// let s = Scenario::from_yaml_str(
    ///     "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
    ///      search: { cases: 10, vary: { network.latency: { durations: [0ms, 5ms] } }, \
    ///      invariants: { attempts: 1 } }\n",
    ///     "x.yaml",
    /// ).unwrap();
    /// let (config, invariants) = SearchConfig::from_block(&s).unwrap();
    /// assert_eq!(invariants.names(), ["attempts"]);
    /// # let _ = config;
    /// ```
    pub fn from_block(scenario: &Scenario) -> Option<(SearchConfig, Invariants)> {
        let block = scenario.search.as_ref()?;
        let mut config = SearchConfig::new(scenario.clone()).cases(block.cases);
        config.vary = Some(block.vary.clone());
        Some((config, Invariants::from(block.invariants.clone())))
    }

    /// The search seed: with the same one, the same cases, the same smallest failing case
    /// and the same regression file.
    pub fn seed(mut self, seed: u64) -> SearchConfig {
        self.seed = seed;
        self
    }

    /// The search seed.
    pub fn search_seed(&self) -> u64 {
        self.seed
    }

    /// Cases to try; `PROPTEST_CASES` overrides it. A search refuses 0
    /// ([`SearchError::Config`](super::SearchError::Config)).
    pub fn cases(mut self, cases: u32) -> SearchConfig {
        self.cases = cases;
        self
    }

    /// What the cases vary.
    pub fn space(mut self, space: Space) -> SearchConfig {
        self.space = space;
        self
    }

    /// Try only the cases of this shard.
    pub fn shard(mut self, shard: Shard) -> SearchConfig {
        self.shard = shard;
        self
    }

    /// Why a search cannot run with this configuration, if it cannot.
    pub(crate) fn refused(&self) -> Vec<&'static str> {
        let mut why = Vec::new();
        if self.cases == 0 {
            why.push("`SearchConfig::cases(0)`: at least one case");
        }
        if self.threads == 0 {
            why.push("`SearchConfig::threads(0)`: at least one thread");
        }
        if self.vary.is_none() {
            why.extend(self.space.refused());
        }
        why
    }

    /// Write regression files to `dir`.
    pub fn regressions(mut self, dir: impl Into<PathBuf>) -> SearchConfig {
        self.regressions = dir.into();
        self
    }

    /// Judge up to `n` cases at once (default: the machine's available parallelism). The
    /// outcome is the same for any `n`: each case is judged alone, and the first failing case
    /// is taken in index order. Shrinking runs one case after another. A search refuses 0.
    pub fn threads(mut self, n: usize) -> SearchConfig {
        self.threads = n;
        self
    }

    /// Stop shrinking after `n` steps (a step runs one case).
    pub fn max_shrink_steps(mut self, n: u32) -> SearchConfig {
        self.max_shrink_steps = n;
        self
    }
}
