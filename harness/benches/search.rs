//! Cases per second of a property search: the `exponential` reference client (at most 10
//! attempts per call, no jitter) against the default space (up to 4 generated steps of
//! bursts, 429s with each `Retry-After` form, cuts, latencies and commits, then a 200), each
//! case judged by `conforms_to` with its trace recorded as in any run.
//!
//! `cargo bench -p retrylab --features search --bench search` prints one line per search.
//! The wall clock is read here, in the benchmark, never on the simulated path. `SEARCH_CASES`
//! sets the cases (default 4,000), `SEARCH_THREADS` the threads judging them (default: the
//! machine's available parallelism). The same figure for a third-party client is
//! `cargo bench -p retrylab-tests --bench search_clients`.

use std::time::Instant;

use retrylab::prelude::*;
use retrylab::scenario::{ClientSpec, Jitter};
use retrylab::search::{Invariants, SearchConfig, Space};

fn main() {
    let cases: u32 = from_env("SEARCH_CASES", || 4000);
    let threads: usize = from_env("SEARCH_THREADS", || {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    });
    let policy: ClientSpec = exponential()
        .initial(ms(100))
        .jitter(Jitter::None)
        .max_attempts(10)
        .into();
    let base = match Scenario::builder("bench")
        .endpoint("api", endpoint())
        .latency(ms(1))
        .operation(post("api", "/orders"))
        .client(policy.clone())
        .build()
    {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let invariants = Invariants::from(expect().conforms_to(policy.clone()));
    let config = SearchConfig::new(base)
        .seed(1)
        .cases(cases)
        .threads(threads)
        .space(Space::default());
    let started = Instant::now();
    let outcome =
        retrylab::search(config).run(retrylab::search::reference_client(&policy), &invariants);
    let elapsed = started.elapsed();
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    };
    if let Some(failure) = outcome.failure() {
        panic!(
            "the correct client failed a case:\n{}",
            failure.regression()
        );
    }
    println!(
        "search, exponential reference client (<= 10 attempts), {threads} threads: {} cases in {:.2} s, {:.0} cases/s",
        outcome.cases_tried(),
        elapsed.as_secs_f64(),
        f64::from(outcome.cases_tried()) / elapsed.as_secs_f64()
    );
}

/// `name`'s value, or `default` when unset; a value that is not a number ends the bench
/// rather than measuring something else than asked.
fn from_env<T: std::str::FromStr>(name: &str, default: impl FnOnce() -> T) -> T {
    match std::env::var(name) {
        Err(std::env::VarError::NotPresent) => default(),
        Ok(v) => match v.parse() {
            Ok(n) => n,
            Err(_) => panic!("{name}={v:?}: not a number"),
        },
        Err(e) => panic!("{name}: {e}"),
    }
}
