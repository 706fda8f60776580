//! Cases per second of a property search with a third-party retry client:
//! `backon_exponential` (backon's `ExponentialBuilder::default()`, at most 4 attempts)
//! against the default space, each case judged by `attempts: { max: 4 }`.
//!
//! `cargo bench -p retrylab-tests --bench search_clients` prints one line. The figure for the
//! built-in `exponential` reference client is `cargo bench -p retrylab --features search
//! --bench search`. `SEARCH_CASES` sets the cases (default 4,000).

use std::time::Instant;

use retrylab::prelude::*;
use retrylab::scenario::CountSpec;
use retrylab::search::{Invariants, SearchConfig, Space};
use retrylab_tests::clients::backon;

fn main() {
    let cases: u32 = from_env("SEARCH_CASES", || 4000);
    let threads: usize = from_env("SEARCH_THREADS", || {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    });
    let base = match Scenario::builder("bench")
        .endpoint("api", endpoint())
        .latency(ms(1))
        .operation(get("api", "/items"))
        .build()
    {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    let invariants = Invariants::from(expect().attempts(CountSpec::between(0, 4)));
    let config = SearchConfig::new(base)
        .seed(1)
        .cases(cases)
        .threads(threads)
        .space(Space::default());
    let started = Instant::now();
    let outcome = match retrylab::search(config).run(backon::exponential, &invariants) {
        Ok(o) => o,
        Err(e) => panic!("{e}"),
    };
    let elapsed = started.elapsed();
    if let Some(failure) = outcome.failure() {
        panic!("backon failed a case:\n{}", failure.regression());
    }
    println!(
        "search, backon_exponential (<= 4 attempts), {threads} threads: {} cases in {:.2} s, {:.0} cases/s",
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
