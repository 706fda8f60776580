//! The report of a run: its trace, how it ended, and the verdicts of its checks.

use std::fmt::Write as _;

pub(crate) mod process;
mod snapshot;
mod verdict;

pub use process::{ProcessExit, ProcessOutput, ProcessRun};
pub(crate) use snapshot::assert as assert_snapshot;
pub(crate) use snapshot::name_for as snapshot_name;
pub(crate) use verdict::Finding;
pub use verdict::{Judgement, Verdict};

use crate::trace::assemble::Assembled;
use crate::trace::{LongPoll, Trace};

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// Every call returned (and the drain elapsed).
    Completed,
    /// `limits.max_virtual_time` elapsed first.
    VirtualTimeLimit,
    /// `limits.max_client_attempts` attempts were made.
    AttemptLimit,
    /// `limits.wall` of real time elapsed before the run finished: the client held the thread
    /// (a `std::thread::sleep`, blocking IO, a busy loop), the runtime waited on something
    /// outside the simulation (`spawn_blocking`), or the run was slow; the verdict says which.
    /// The run was stopped, or, when the client's code held its thread, abandoned.
    WallLimit,
    /// The client, or a task it spawned, panicked.
    Panicked,
    /// The scenario cannot run (a feature it uses is not built yet, or it is invalid).
    NotRunnable,
}

impl RunEnd {
    /// The verdict name of this ending (`wall_limit`, ...), or `None` when it is not a failure.
    pub fn verdict_name(&self) -> Option<&'static str> {
        match self {
            RunEnd::Completed => None,
            RunEnd::VirtualTimeLimit => Some("virtual_time_limit"),
            RunEnd::AttemptLimit => Some("attempt_limit"),
            RunEnd::WallLimit => Some("wall_limit"),
            RunEnd::Panicked => Some("panic"),
            RunEnd::NotRunnable => Some("not_runnable"),
        }
    }
}

/// Calls a summary lists; the rest are counted.
const SUMMARY_CALLS: usize = 20;
/// Timeline lines a summary prints (after folding look-alike runs); the rest are counted.
const SUMMARY_TIMELINE: usize = 60;
/// Lines of each output of a command client's process a summary prints (its last ones).
const PROCESS_LINES: usize = 5;
/// Characters of a call's value a summary prints.
const VALUE_CHARS: usize = 300;

/// `text` cut to [`VALUE_CHARS`] characters, saying how much was left out.
fn clip(text: &str) -> String {
    match text.char_indices().nth(VALUE_CHARS) {
        Some((cut, _)) => format!(
            "{}... ({} more characters)",
            &text[..cut],
            text[cut..].chars().count()
        ),
        None => text.to_owned(),
    }
}

/// What a run produced. `Send` and `Sync`: hand it to another thread to report on.
///
/// ```
/// use retrylab::scenario::{EndpointSpec, OperationSpec, Scenario, StepSpec};
///
/// let report = Scenario::builder("ok")
///     .endpoint("api", EndpointSpec::http().script([StepSpec::status(200)]))
///     .operation(OperationSpec::get("api", "/"))
///     .build()
///     .unwrap()
///     .run(|env| async move {
///         let response = env.http_client().request(env.operation().request()).await;
///         response.map(|r| r.status().as_u16()).map_err(|e| e.to_string())
///     });
/// assert!(report.passed(), "{}", report.summary());
/// assert_eq!(report.trace().timeline(), "t=0.000s  #1  GET /  -> 200  conn 1 new\n");
/// ```
#[derive(Debug, Clone)]
#[must_use = "a report judges nothing until checked: call `assert()`, or read `passed()`"]
pub struct Report {
    pub(crate) name: String,
    pub(crate) seed: u64,
    pub(crate) trace: Trace,
    pub(crate) end: RunEnd,
    pub(crate) verdicts: Vec<Verdict>,
    /// The snapshot to assert, when the scenario asks for one: its name.
    pub(crate) snapshot: Option<String>,
    /// Why the scenario's snapshot is not compared on this run, when it asks for one and is
    /// not compared (a seed other than the snapshot's).
    pub(crate) snapshot_skipped: Option<String>,
    /// What each endpoint recorded, by endpoint name (for the request checks).
    pub(crate) ledgers: Vec<(String, retrylab_endpoints::LedgerSnapshot)>,
    /// The (client, call) of each request of each ledger, as the trace attributed it
    /// (`None`: no call could be found for it).
    pub(crate) request_calls: Vec<Vec<Option<(u32, u32)>>>,
    /// Polls of the client that blocked the thread (bypass diagnostics).
    pub(crate) long_polls: Vec<LongPoll>,
    /// Things that do not fail the run but most likely are not what the author meant (an
    /// expectation the client cannot meet, script steps no request consumed), one sentence
    /// each.
    pub(crate) warnings: Vec<String>,
    /// Why the run could not settle before it was judged (requests still in flight or being
    /// processed when `limits.max_virtual_time` came), if it could not.
    pub(crate) unsettled: Option<String>,
    /// The processes of a command client, in the order they started.
    pub(crate) processes: Vec<ProcessRun>,
}

impl Report {
    /// The report of a run that never ran (its scenario, its thread or its runtime could not
    /// start): `message` is its one verdict, named after how it ended, and nothing else.
    pub(crate) fn not_run(name: String, seed: u64, end: RunEnd, message: String) -> Report {
        let check = end.verdict_name().unwrap_or("run");
        Report {
            name,
            seed,
            trace: Trace::default(),
            end,
            verdicts: vec![Verdict::fail(check, message)],
            snapshot: None,
            snapshot_skipped: None,
            ledgers: Vec::new(),
            request_calls: Vec::new(),
            long_polls: Vec::new(),
            warnings: Vec::new(),
            unsettled: None,
            processes: Vec::new(),
        }
    }

    /// The report of a run before it is judged: what it recorded, how it ended, and the
    /// verdicts of the run itself (a limit, a refused connect), which no scenario expects.
    pub(crate) fn of_run(
        name: String,
        seed: u64,
        end: RunEnd,
        assembled: Assembled,
        long_polls: Vec<LongPoll>,
        unsettled: Option<String>,
        verdicts: Vec<Verdict>,
    ) -> Report {
        Report {
            name,
            seed,
            trace: assembled.trace,
            end,
            verdicts,
            snapshot: None,
            snapshot_skipped: None,
            ledgers: assembled.ledgers,
            request_calls: assembled.request_calls,
            long_polls,
            warnings: Vec::new(),
            unsettled,
            processes: Vec::new(),
        }
    }

    /// The scenario's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The seed the run used.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The timeline.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// let scenario = Scenario::builder("two 503s, then 200")
    ///     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .client(exponential().initial(ms(10)).max_attempts(3))
    ///     .expect(expect().outcome(Success).attempts(3))
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = scenario.run_builtin();
    ///
    /// assert_eq!(report.trace().attempts.len(), 3);
    /// assert_eq!(report.trace().attempts[2].outcome.status(), Some(200));
    /// ```
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// How the run ended.
    pub fn end(&self) -> &RunEnd {
        &self.end
    }

    /// The processes of a command client (`client: { command: [...] }`), in the order they
    /// started: each one's argv, exit and output. Empty for any other client.
    pub fn processes(&self) -> &[ProcessRun] {
        &self.processes
    }

    /// The warnings: things that do not fail the run but most likely are not what the
    /// scenario's author meant, one located sentence each: the scenario's contradictions
    /// ([`Scenario::warnings`](crate::Scenario::warnings)), then the script steps no request
    /// consumed.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// let scenario = Scenario::builder("gives up before the 200")
    ///     .endpoint("api", endpoint().script([status(503).times(3), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .client(exponential().initial(ms(10)).max_attempts(3))
    ///     .expect(expect().outcome(Failure))
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = scenario.run_builtin();
    ///
    /// assert!(report.passed());
    /// assert_eq!(
    ///     report.warnings(),
    ///     ["<code> endpoints.api.script[1]: no request consumed this step (endpoint `api`, step 2 of 2)"]
    /// );
    /// ```
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Every verdict, run-level ones first.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// let scenario = Scenario::builder("two 503s, then 200")
    ///     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .client(exponential().initial(ms(10)).max_attempts(3))
    ///     .expect(expect().outcome(Success).attempts(3))
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = scenario.run_builtin();
    ///
    /// let checks: Vec<&str> = report.verdicts().iter().map(|v| v.check.as_str()).collect();
    /// assert!(checks.contains(&"outcome") && checks.contains(&"attempts"));
    /// assert!(report.verdicts().iter().all(|v| v.passed()));
    /// ```
    pub fn verdicts(&self) -> &[Verdict] {
        &self.verdicts
    }

    /// The failed verdicts.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// let scenario = Scenario::builder("expects too few attempts")
    ///     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .client(exponential().initial(ms(10)).max_attempts(3))
    ///     .expect(expect().outcome(Success).attempts(2)) // three are made
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = scenario.run_builtin();
    ///
    /// let failed: Vec<&str> = report.failures().map(|v| v.check.as_str()).collect();
    /// assert_eq!(failed, ["attempts"]);
    /// ```
    pub fn failures(&self) -> impl Iterator<Item = &Verdict> {
        self.verdicts.iter().filter(|v| !v.passed())
    }

    /// Whether every verdict passed.
    ///
    /// ```
    /// use retrylab::prelude::*;
    ///
    /// // A client that gives up after one 503, against a scenario that expects a retry.
    /// let scenario = Scenario::builder("one 503")
    ///     .endpoint("api", endpoint().script([status(503), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .client(exponential().initial(ms(10)).max_attempts(1))
    ///     .expect(expect().outcome(Success))
    ///     .build()
    ///     .unwrap();
    /// let report = scenario.run_builtin();
    /// assert!(!report.passed());
    /// assert_eq!(report.failures().map(|v| v.check.as_str()).collect::<Vec<_>>(), ["outcome"]);
    /// ```
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// # let scenario = Scenario::builder("two 503s, then 200")
    /// #     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
    /// #     .operation(get("api", "/"))
    /// #     .client(exponential().initial(ms(10)).max_attempts(3))
    /// #     .expect(expect().outcome(Success).attempts(3))
    /// #     .build()
    /// #     .unwrap();
    /// let report = scenario.run_builtin();
    ///
    /// assert!(report.passed(), "{}", report.summary());
    /// ```
    pub fn passed(&self) -> bool {
        self.failures().next().is_none()
    }

    /// Every verdict, what each call returned, then the timeline: what a failing test prints.
    ///
    /// The output is bounded whatever the run's size: the first 20 calls, each value cut
    /// at 300 characters, and the first 60 lines of the timeline with runs of look-alike
    /// attempts folded as in snapshots; a last line says how much was left out and where to
    /// see it all.
    ///
    /// ```
    /// use retrylab::prelude::*;
    ///
    /// // A client that gives up after one 503, against a scenario that expects a retry.
    /// let scenario = Scenario::builder("one 503")
    ///     .endpoint("api", endpoint().script([status(503), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .client(exponential().initial(ms(10)).max_attempts(1))
    ///     .expect(expect().outcome(Success))
    ///     .build()
    ///     .unwrap();
    /// let report = scenario.run_builtin();
    /// let summary = report.summary();
    /// assert!(summary.starts_with("scenario `one 503` (seed 0)\n"));
    /// assert!(summary.contains("FAIL outcome"));
    /// // What each call returned, then the timeline.
    /// assert!(summary.contains("calls:\n  call 0: Err("), "{summary}");
    /// assert!(summary.ends_with("t=0.000s  #1  GET /  -> 503  conn 1 new  => stop: max_attempts_exceeded\n"));
    /// ```
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// let scenario = Scenario::builder("expects too few attempts")
    ///     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .client(exponential().initial(ms(10)).max_attempts(3))
    ///     .expect(expect().outcome(Success).attempts(2)) // three are made
    ///     .build()
    ///     .unwrap();
    ///
    /// let report = scenario.run_builtin();
    ///
    /// let summary = report.summary();
    /// assert!(summary.starts_with("scenario `expects too few attempts`"), "{summary}");
    /// assert!(summary.contains("FAIL attempts"), "{summary}");
    /// assert!(summary.contains("timeline (3 attempts):"), "{summary}");
    /// ```
    pub fn summary(&self) -> String {
        let mut out = String::new();
        // The name, the calls' results and the timeline's paths are the file's and the
        // client's text: a control character in one shows escaped, never reaches the terminal.
        let visible = crate::scenario::visible;
        let _ = writeln!(
            out,
            "scenario `{}` (seed {})",
            visible(&self.name),
            self.seed
        );
        for verdict in &self.verdicts {
            let _ = writeln!(
                out,
                "  {:<4} {}: {}",
                verdict.judgement.mark(),
                verdict.check,
                // A message quotes what clients and endpoints sent (header values, call
                // results): a tab or an invisible character in one must show.
                crate::scenario::visible(&verdict.message)
            );
        }
        if self.verdicts.is_empty() {
            // A run with no check passes whatever its calls came to: say so, never `ok` alone.
            let _ = writeln!(
                out,
                "  note: nothing was judged (no `expect`): the run passes whatever the calls \
                 came to"
            );
        }
        for warning in &self.warnings {
            let _ = writeln!(out, "  warning: {warning}");
        }
        if let Some(why) = &self.snapshot_skipped {
            let _ = writeln!(out, "  note: {why}");
        }
        out.push_str("calls:\n");
        let calls = &self.trace.calls;
        for call in calls.iter().take(SUMMARY_CALLS) {
            let _ = writeln!(out, "  {}", visible(&clip(&call.line())));
        }
        if calls.len() > SUMMARY_CALLS {
            let _ = writeln!(
                out,
                "  ... {} more calls (all of them: report.trace().calls)",
                calls.len() - SUMMARY_CALLS
            );
        }
        let timeline = self.trace.compact_timeline();
        let _ = writeln!(
            out,
            "timeline ({} attempts{}):",
            self.trace.attempts.len(),
            if timeline.len() < self.trace.attempts.len() {
                ", look-alike runs folded"
            } else {
                ""
            }
        );
        for line in timeline.iter().take(SUMMARY_TIMELINE) {
            let _ = writeln!(out, "  {}", visible(line));
        }
        if timeline.len() > SUMMARY_TIMELINE {
            let _ = writeln!(
                out,
                "  ... {} more lines (the whole timeline: report.trace().timeline(), or \
                 `retrylab run <file> --format json`)",
                timeline.len() - SUMMARY_TIMELINE
            );
        }
        // A command client's processes, with the end of what each printed: the program's
        // own account of a failure.
        if !self.processes.is_empty() {
            out.push_str("processes:\n");
            for process in self.processes.iter().take(SUMMARY_CALLS) {
                let _ = writeln!(out, "  {}", visible(&clip(&process.headline())));
                for (name, output) in [("stdout", &process.stdout), ("stderr", &process.stderr)] {
                    for line in output.tail(PROCESS_LINES) {
                        let _ = writeln!(out, "    {name}| {}", visible(&clip(&line)));
                    }
                }
            }
            if self.processes.len() > SUMMARY_CALLS {
                let _ = writeln!(
                    out,
                    "  ... {} more processes (all of them: report.processes(), or `retrylab \
                     run <file> --format json`)",
                    self.processes.len() - SUMMARY_CALLS
                );
            }
        }
        // A fleet's shape: how its calls ended, and its attempts per bucket of time.
        if let Some(fleet) = self.trace.fleet() {
            out.push_str("fleet:\n");
            for line in fleet.lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        // At most a thousand by the format's limit on faults, two events each.
        if !self.trace.faults.is_empty() {
            out.push_str("faults:\n");
            for line in self.trace.fault_lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        // Only with a broker that stored messages; as many lines as the timeline's at most.
        if !self.trace.messages.is_empty() {
            out.push_str("messages:\n");
            // Only the lines shown are built.
            let lines = self
                .trace
                .message_lines_with(crate::trace::instants::Instants::Exact, SUMMARY_TIMELINE);
            for line in &lines {
                let _ = writeln!(out, "  {line}");
            }
            let stored = self.trace.messages.len();
            if stored > lines.len() {
                let _ = writeln!(out, "  ... {} more messages", stored - lines.len());
            }
        }
        out
    }

    /// The name of the insta snapshot this run is compared with, when the scenario sets
    /// `snapshot: true` and the run used its snapshot seed: the file's path without its
    /// extension, folders joined with `__` (`scenarios__http__429` for
    /// `scenarios/http/429.yaml`). The snapshot is `<name>.snap` in the test crate's
    /// `tests/snapshots`, holding [`Report::snapshot_text`]; `retrylab run
    /// --update-snapshots` writes it there.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let yaml = "version: 1\nname: x\nendpoints: { api: { script: [ { status: 200 } ] } }\n\
    ///             operation: { endpoint: api }\n";
    /// let report = Scenario::from_yaml_str(yaml, "x.yaml").unwrap().run_builtin();
    /// // No `snapshot: true`, no snapshot.
    /// assert_eq!(report.snapshot_name(), None);
    /// ```
    pub fn snapshot_name(&self) -> Option<&str> {
        self.snapshot.as_deref()
    }

    /// The report as snapshot text: calls, the compacted attempt timeline, connections,
    /// effects, verdicts and warnings (when there are any).
    pub fn snapshot_text(&self) -> String {
        snapshot::render(self)
    }

    /// Panics with the failed verdicts and the timeline unless every verdict passed; then,
    /// when the scenario sets `snapshot: true`, asserts its insta snapshot (in
    /// `$CARGO_MANIFEST_DIR/tests/snapshots`; review changes with `cargo insta review`).
    ///
    /// ```should_panic
    /// use retrylab::prelude::*;
    ///
    /// // A client that gives up after one 503, against a scenario that expects a retry.
    /// let scenario = Scenario::builder("one 503")
    ///     .endpoint("api", endpoint().script([status(503), status(200)]))
    ///     .operation(get("api", "/"))
    ///     .client(exponential().initial(ms(10)).max_attempts(1))
    ///     .expect(expect().outcome(Success))
    ///     .build()
    ///     .unwrap();
    /// let report = scenario.run_builtin();
    /// report.assert(); // panics: the outcome check failed; the message names the seed
    /// ```
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// # let scenario = Scenario::builder("two 503s, then 200")
    /// #     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
    /// #     .operation(get("api", "/"))
    /// #     .client(exponential().initial(ms(10)).max_attempts(3))
    /// #     .expect(expect().outcome(Success).attempts(3))
    /// #     .build()
    /// #     .unwrap();
    /// scenario.run_builtin().assert(); // passes: every check held
    ///
    /// # let failing = Scenario::builder("expects too few attempts")
    /// #     .endpoint("api", endpoint().script([status(503).times(2), status(200)]))
    /// #     .operation(get("api", "/"))
    /// #     .client(exponential().initial(ms(10)).max_attempts(3))
    /// #     .expect(expect().outcome(Success).attempts(2)) // three are made
    /// #     .build()
    /// #     .unwrap();
    /// let failing = std::panic::catch_unwind(|| failing.run_builtin().assert());
    /// assert!(failing.is_err(), "three attempts, two expected");
    /// ```
    #[track_caller]
    pub fn assert(&self) {
        // Verdicts first: a failed check must read as one, not as a snapshot diff that
        // invites accepting the regression.
        if !self.passed() {
            panic!(
                "{}\nseed {}: run again with RETRYLAB_SEED={} to reproduce this run",
                self.summary(),
                self.seed,
                self.seed
            );
        }
        if let Some(why) = &self.snapshot_skipped {
            let name = crate::scenario::visible(&self.name);
            eprintln!("retrylab: scenario `{name}`: {why}");
        }
        if let Some(name) = &self.snapshot {
            snapshot::assert(name, &self.snapshot_text());
        }
    }
}
