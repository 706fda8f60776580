//! `retrylab search`: a file's `search:` block with its built-in client.

use std::io::Write as _;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressStyle};
use retrylab::scenario::{ClientSpec, Scenario};

/// `retrylab search`: the file's search, a progress bar while it runs, then its outcome.
pub(crate) fn search(
    path: &std::path::Path,
    shard: Option<retrylab::search::Shard>,
    regressions: &std::path::Path,
) -> ExitCode {
    use retrylab::search::{SearchConfig, Shard, reference_client};
    let scenario = match Scenario::load(path) {
        Ok(scenario) => scenario,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::from(2);
        }
    };
    let Some((config, invariants)) = SearchConfig::from_block(&scenario) else {
        eprintln!(
            "{}: no `search:` block to run: add one (docs/scenario-format.md#search), or \
             run the file with `retrylab run {}`",
            path.display(),
            path.display()
        );
        return ExitCode::from(2);
    };
    if shard.is_some() && !scenario.must_fail.is_empty() {
        // A shard sees only its own cases: whether the smallest failing case of the whole
        // search fails the checks must_fail lists is a verdict no single shard can give.
        eprintln!(
            "{}: `--shard` cannot judge a search with `must_fail`: run it whole, with \
             `retrylab search {}` and no `--shard`",
            path.display(),
            path.display()
        );
        return ExitCode::from(2);
    }
    if let ClientSpec::Custom(name) = &scenario.client {
        eprintln!(
            "{}: the client `{name}` is written in Rust: run the search with `cargo test`, \
             in a `scenario_main!` suite that registers `{name}` (or with \
             `retrylab::search`), or write a built-in policy in `client:` to search here",
            path.display()
        );
        return ExitCode::from(2);
    }
    let config = config
        .shard(shard.unwrap_or(Shard::WHOLE))
        .regressions(regressions);
    let progress = ProgressBar::new(0);
    progress.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} cases, {per_sec}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let bar = progress.clone();
    // The wall clock is read here, for the figure printed, never on the simulated path. The
    // rate is of this shard's own cases over the time they took: the clock stops at the last
    // of them, before any look at other shards' earlier cases and before shrinking.
    let started = std::time::Instant::now();
    let searched = std::rc::Rc::new(std::cell::Cell::new(started));
    let last = searched.clone();
    let outcome = retrylab::search(config)
        .progress(move |tried, total| {
            bar.set_length(u64::from(total));
            bar.set_position(u64::from(tried));
            last.set(std::time::Instant::now());
        })
        .run(reference_client(&scenario.client), &invariants);
    progress.finish_and_clear();
    let elapsed = searched.get().duration_since(started).as_secs_f64();
    let outcome = match outcome {
        Ok(outcome) => outcome,
        Err(error) => {
            eprintln!("{}: {error}", path.display());
            return ExitCode::from(2);
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{}: {} cases in {elapsed:.2} s ({:.0} cases/s, shrinking not counted)",
        path.display(),
        outcome.cases_tried(),
        f64::from(outcome.cases_tried()) / elapsed.max(f64::EPSILON)
    );
    match outcome.judge(&scenario.must_fail, regressions) {
        Ok(said) => {
            let _ = writeln!(out, "{said}");
            ExitCode::SUCCESS
        }
        Err(why) => {
            let _ = writeln!(out, "{why}");
            ExitCode::FAILURE
        }
    }
}
