//! proptest strategies from a [`Space`]: each value is a whole scenario, the base with what
//! the space varies replaced.
//!
//! Every alternative lists its simplest form first and every range starts at its simplest
//! value, because that is the direction proptest shrinks in: a `Vec` drops elements before
//! it shrinks them, a union moves to earlier alternatives, `option::of` to `None`, a range
//! towards its start.

use std::sync::Arc;

use proptest::collection::vec;
use proptest::option;
use proptest::prelude::{BoxedStrategy, Just, Strategy, any, prop_oneof};
use proptest::sample::select;

use crate::scenario::{
    CommitSpec, DateFormat, DurationRange, Expectations, ExponentialLatencySpec, FailSpec,
    FaultSpec, LatencySpec, LognormalSpec, Millis, OffsetMillis, RetryAfterSpec, Scenario,
    ScriptState, StepSpec,
};

use super::space::Space;

/// A drawn case: a scenario, or why the draw gives none (a `vary:` path the scenario does
/// not have, a value its field does not take), which ends the search with that error.
pub(crate) type Drawn = Result<Scenario, String>;

/// `Retry-After` texts no client can read as a delay: a word, a fraction, an impossible date.
const UNREADABLE_RETRY_AFTER: [&str; 3] = ["soon", "1.5", "Fri, 32 Dec 2026 25:00:00 GMT"];

/// The cases of a search: `base` with the operation endpoint's script, the network latency,
/// its faults and the seed drawn from `space`, and `expect` as its expectations.
pub(crate) fn scenarios(
    base: Arc<Scenario>,
    space: &Space,
    expect: Expectations,
) -> BoxedStrategy<Drawn> {
    let then = space.then.clone();
    let network = match space.network_latency {
        Some(max) => latency(max).prop_map(Some).boxed(),
        None => Just(None).boxed(),
    };
    let seed = if space.seeds {
        any::<u64>().boxed()
    } else {
        Just(base.seed).boxed()
    };
    (
        vec(step(space), 1..=space.steps),
        network,
        vec(fault(space.fault_window), 0..=space.faults),
        seed,
    )
        .prop_map(move |(steps, latency, faults, seed)| {
            let mut case = (*base).clone();
            let endpoint = case.operation.endpoint.clone();
            let mut script = steps;
            script.push(then.clone());
            // The search checked the base before drawing; a case without the endpoint is
            // one the space cannot vary, not one to run as the base had it.
            let Some(e) = case.endpoints.get_mut(&endpoint) else {
                return Err(format!(
                    "the operation's endpoint `{endpoint}` is not among the base's endpoints"
                ));
            };
            e.script = Some(script);
            if let Some(latency) = latency {
                case.network.latency = latency;
            }
            case.network.faults.extend(schedule(&endpoint, faults));
            case.seed = seed;
            case.seeds = None;
            case.expect = expect.clone();
            case.must_fail.clear();
            case.status = None;
            case.snapshot = false;
            case.search = None;
            Ok(case)
        })
        .boxed()
}

/// One generated step.
fn step(space: &Space) -> BoxedStrategy<StepSpec> {
    let times = 1..=space.times;
    let mut kinds: Vec<BoxedStrategy<StepSpec>> = vec![
        (select(space.statuses.clone()), times.clone())
            .prop_map(|(status, n)| repeated(StepSpec::status(status), n))
            .boxed(),
    ];
    if let Some(max) = space.retry_after {
        kinds.push(
            (retry_after(max), times.clone())
                .prop_map(|(retry_after, n)| {
                    let mut step = StepSpec::status(429);
                    step.retry_after = retry_after;
                    repeated(step, n)
                })
                .boxed(),
        );
    }
    if space.cuts {
        kinds.push(
            (any::<bool>(), option::of(0..=32u64), times.clone())
                .prop_map(|(close, after, n)| repeated(cut(close, after), n))
                .boxed(),
        );
    }
    if space.hangs {
        kinds.push(
            times
                .prop_map(|n| repeated(StepSpec::fail(FailSpec::Hang), n))
                .boxed(),
        );
    }
    let kind = proptest::strategy::Union::new(kinds).boxed();
    let latency = match space.latency {
        Some(max) => option::of(latency(max)).boxed(),
        None => Just(None).boxed(),
    };
    let commit = if space.commits {
        option::of(select(vec![
            CommitSpec::Arrival,
            CommitSpec::BeforeResponse,
        ]))
        .boxed()
    } else {
        Just(None).boxed()
    };
    (kind, latency, commit)
        .prop_map(|(mut step, latency, commit)| {
            step.latency = latency;
            // A hang answers nothing, so it has no response to commit before; it may still
            // commit on arrival.
            step.commit = match (commit, &step.fail) {
                (Some(CommitSpec::BeforeResponse), Some(FailSpec::Hang)) => None,
                (commit, _) => commit,
            };
            step
        })
        .boxed()
}

/// `step` repeated `n` times (`times` left out for 1, its default).
fn repeated(step: StepSpec, n: u32) -> StepSpec {
    if n > 1 { step.times(n) } else { step }
}

/// A reset (or, with `close`, a FIN): at once, or a 200 response cut after `after` bytes.
fn cut(close: bool, after: Option<u64>) -> StepSpec {
    match (close, after) {
        (false, None) => StepSpec::fail(FailSpec::reset()),
        (true, None) => StepSpec::fail(FailSpec::close()),
        (close, Some(n)) => {
            let mut step = StepSpec::status(200);
            step.fail = Some(if close {
                FailSpec::close_after(n)
            } else {
                FailSpec::reset_after(n)
            });
            step
        }
    }
}

/// A `Retry-After` of each form, or none: seconds from 0 to `max`, an HTTP-date 1 to `max`
/// seconds ahead in each format, or unreadable text.
fn retry_after(max: u32) -> BoxedStrategy<Option<RetryAfterSpec>> {
    let max = i64::from(max);
    prop_oneof![
        Just(None),
        (0..=max).prop_map(|s| Some(RetryAfterSpec::Seconds(s))),
        (
            1..=max.max(1),
            select(vec![
                DateFormat::Imf,
                DateFormat::Rfc850,
                DateFormat::Asctime
            ])
        )
            .prop_map(|(s, format)| Some(RetryAfterSpec::HttpDate {
                offset: OffsetMillis(s * 1000),
                format,
            })),
        select(UNREADABLE_RETRY_AFTER.to_vec()).prop_map(|t| Some(RetryAfterSpec::raw(t))),
    ]
    .boxed()
}

/// A latency up to `max`: fixed, then uniform, exponential and log-normal (clamped at
/// `max`).
fn latency(max: Millis) -> BoxedStrategy<LatencySpec> {
    let m = max.0;
    prop_oneof![
        (0..=m).prop_map(|d| LatencySpec::Fixed(Millis(d))),
        (0..=m, 0..=m).prop_map(|(a, b)| LatencySpec::Uniform(DurationRange {
            min: Millis(a.min(b)),
            max: Millis(a.max(b)),
        })),
        (1..=m.max(1)).prop_map(
            move |mean| LatencySpec::Exponential(ExponentialLatencySpec {
                mean: Millis(mean),
                max: Some(Millis(m.max(mean))),
            })
        ),
        (1..=m.max(1), select(vec![0.25, 0.5, 1.0])).prop_map(move |(median, sigma)| {
            LatencySpec::Lognormal(LognormalSpec {
                median: Millis(median),
                sigma,
                max: Some(Millis(m.max(median))),
            })
        }),
    ]
    .boxed()
}

/// A fault drawn on its own: the pause before it (after the previous one ended), and what
/// it does for how long.
#[derive(Clone, Debug)]
pub(crate) struct Fault {
    gap: Millis,
    kind: FaultKind,
}

#[derive(Clone, Debug)]
enum FaultKind {
    Partition(Millis),
    Crash(Millis, ScriptState),
}

fn fault(window: Millis) -> BoxedStrategy<Fault> {
    let w = window.0;
    let kind = prop_oneof![
        (1..=w).prop_map(|d| FaultKind::Partition(Millis(d))),
        (1..=w, select(vec![ScriptState::Keep, ScriptState::Reset]))
            .prop_map(|(d, state)| FaultKind::Crash(Millis(d), state)),
    ];
    (0..=w, kind)
        .prop_map(|(gap, kind)| Fault {
            gap: Millis(gap),
            kind,
        })
        .boxed()
}

/// The faults one after another on `endpoint`, so that none overlaps another (the format
/// refuses overlapping faults), each starting its gap after the previous one ended.
fn schedule(endpoint: &str, faults: Vec<Fault>) -> Vec<FaultSpec> {
    let mut at = 0u64;
    faults
        .into_iter()
        .map(|f| {
            let start = Millis(at.saturating_add(f.gap.0));
            let (spec, length) = match f.kind {
                FaultKind::Partition(d) => (
                    FaultSpec::Partition {
                        at: start,
                        endpoint: endpoint.to_owned(),
                        r#for: d,
                    },
                    d,
                ),
                FaultKind::Crash(d, state) => (
                    FaultSpec::Crash {
                        at: start,
                        endpoint: endpoint.to_owned(),
                        restart_after: Some(d),
                        script_state: state,
                    },
                    d,
                ),
            };
            at = start.0.saturating_add(length.0);
            spec
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use proptest::strategy::ValueTree;

    use super::*;
    use crate::scenario::{EndpointSpec, OperationSpec};

    /// 2,000 draws of the widest space: every kind of step, `Retry-After` form, latency
    /// distribution and fault shows up, and every case validates as a file would.
    #[test]
    fn the_widest_space_draws_every_kind_and_only_valid_scenarios() {
        let base = Scenario::builder("x")
            .endpoint("api", EndpointSpec::http())
            .operation(OperationSpec::get("api", "/"))
            .build()
            .unwrap();
        let space = Space::default()
            .hangs(true)
            .network_latency(Some(Millis::from_ms(50)))
            .faults(3, Millis::from_secs(5));
        let strategy = scenarios(Arc::new(base), &space, Expectations::default());
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..2000 {
            let case = crate::search::case::tree(&strategy, 3, i)
                .unwrap()
                .current()
                .unwrap();
            if let Err(e) = case.validate() {
                panic!("case {i} is invalid: {e}\n{}", case.to_yaml());
            }
            for step in case.endpoints["api"].script.as_deref().unwrap() {
                let kind = match (&step.status, &step.fail, &step.retry_after) {
                    (_, Some(FailSpec::Hang), _) => "hang",
                    (Some(200), Some(_), _) => "cut after bytes",
                    (None, Some(_), _) => "cut",
                    (Some(429), _, None) => "429",
                    (Some(429), _, Some(RetryAfterSpec::Seconds(_))) => "429 seconds",
                    (Some(429), _, Some(RetryAfterSpec::HttpDate { format, .. })) => match format {
                        DateFormat::Imf => "429 imf",
                        DateFormat::Rfc850 => "429 rfc850",
                        DateFormat::Asctime => "429 asctime",
                    },
                    (Some(429), _, Some(RetryAfterSpec::Raw(_))) => "429 raw",
                    (Some(200), None, _) => "200",
                    _ => "5xx",
                };
                seen.insert(kind);
                if let Some(latency) = &step.latency {
                    seen.insert(latency.kind());
                }
                if step.commit.is_some() {
                    seen.insert("commit");
                }
            }
            for fault in &case.network.faults {
                seen.insert(fault.kind());
            }
        }
        let all = [
            "200",
            "429",
            "429 asctime",
            "429 imf",
            "429 raw",
            "429 rfc850",
            "429 seconds",
            "5xx",
            "commit",
            "crash",
            "cut",
            "cut after bytes",
            "exponential",
            "fixed",
            "hang",
            "lognormal",
            "partition",
            "uniform",
        ];
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), all);
    }

    /// Case `i` is the same whether drawn alone or after others.
    #[test]
    fn a_case_depends_on_the_seed_and_its_index_alone() {
        let base = Scenario::builder("x")
            .endpoint("api", EndpointSpec::http())
            .operation(OperationSpec::get("api", "/"))
            .build()
            .unwrap();
        let strategy = scenarios(Arc::new(base), &Space::default(), Expectations::default());
        let draw = |i| {
            crate::search::case::tree(&strategy, 9, i)
                .unwrap()
                .current()
                .unwrap()
        };
        let alone = draw(17);
        for i in 0..17 {
            let _ = draw(i);
        }
        assert_eq!(draw(17), alone);
        assert_ne!(draw(18), alone);
    }
}
