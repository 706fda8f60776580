//! A check's verdict: how it came out, and the findings that say why.

/// What a check concluded.
///
/// ```
/// # use retrylab::prelude::*;
/// // No response carries Retry-After, so there is nothing to honour: not judged, not ok.
/// let scenario = Scenario::builder("nothing to judge")
///     .endpoint("api", endpoint().script([status(200)]))
///     .operation(get("api", "/"))
///     .expect(expect().retry_after(Default::default()))
///     .build()
///     .unwrap();
///
/// let report = scenario.run_builtin();
///
/// let verdict = report.verdicts().iter().find(|v| v.check == "retry_after").unwrap();
/// assert_eq!(verdict.judgement, Judgement::NotJudged);
/// assert!(!verdict.passed() && !report.passed());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Judgement {
    /// The check held.
    Passed,
    /// The check did not hold.
    Failed,
    /// The evidence the check needs is missing or incomplete (the run ended early, nothing
    /// was requested, ...), so it could not be judged. Counts as a failure: a verdict never
    /// passes on nothing.
    NotJudged,
}

impl Judgement {
    /// How reports mark it: `ok`, `FAIL` or `not judged`.
    pub fn mark(self) -> &'static str {
        match self {
            Judgement::Passed => "ok",
            Judgement::Failed => "FAIL",
            Judgement::NotJudged => "not judged",
        }
    }
}

/// Where in a run a finding is: a call, named by its client and its index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CallRef {
    /// The client instance (0 unless the scenario runs a fleet).
    pub client: u32,
    /// The call's index within its client, from 0.
    pub call: u32,
}

/// One thing a check found wrong, located in the run when it can be.
///
/// ```
/// # use retrylab::prelude::*;
/// let scenario = Scenario::builder("two calls, both fail")
///     .endpoint("api", endpoint().script([status(503)]))
///     .operation(get("api", "/").calls(2))
///     .expect(expect().outcome(Success))
///     .build()
///     .unwrap();
///
/// let report = scenario.run_builtin();
///
/// let outcome = report.failures().find(|v| v.check == "outcome").unwrap();
/// let calls: Vec<u32> = outcome.findings.iter().filter_map(|f| f.call).map(|c| c.call).collect();
/// assert_eq!(calls, [0, 1]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Finding {
    /// The call it concerns, when it concerns one.
    pub call: Option<CallRef>,
    /// The attempt it concerns: its number within the call, from 1.
    pub attempt: Option<u32>,
    /// What was found, as a sentence that names the call and attempt too.
    pub message: String,
}

impl Finding {
    /// A finding about call `call` of client `client`.
    pub(crate) fn call(client: u32, call: u32, message: String) -> Finding {
        Finding {
            call: Some(CallRef { client, call }),
            attempt: None,
            message,
        }
    }

    /// The same finding, about attempt `n` of its call.
    pub(crate) fn attempt(mut self, n: u32) -> Finding {
        self.attempt = Some(n);
        self
    }
}

impl From<String> for Finding {
    /// A finding about the run as a whole.
    fn from(message: String) -> Finding {
        Finding {
            call: None,
            attempt: None,
            message,
        }
    }
}

/// The judgement of one check.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verdict {
    /// The check's name, as written under `expect:` (or a run-level name like `wall_limit`).
    pub check: String,
    /// What the check concluded.
    pub judgement: Judgement,
    /// What was found, pointing at the attempt when there is one: for a failure, the
    /// first findings as one text.
    pub message: String,
    /// Every finding of a failed check, one by one, with the call and attempt each concerns.
    pub findings: Vec<Finding>,
}

impl Verdict {
    /// A failed verdict.
    pub fn fail(check: impl Into<String>, message: impl Into<String>) -> Verdict {
        Verdict::new(check, Judgement::Failed, message)
    }

    /// A passed verdict.
    pub fn pass(check: impl Into<String>, message: impl Into<String>) -> Verdict {
        Verdict::new(check, Judgement::Passed, message)
    }

    /// A verdict that could not be judged: `why` says which evidence is missing.
    pub fn not_judged(check: impl Into<String>, why: impl Into<String>) -> Verdict {
        Verdict::new(check, Judgement::NotJudged, why)
    }

    fn new(check: impl Into<String>, judgement: Judgement, message: impl Into<String>) -> Verdict {
        Verdict {
            check: check.into(),
            judgement,
            message: message.into(),
            findings: Vec::new(),
        }
    }

    /// The same verdict, with its findings.
    pub(crate) fn with_findings(mut self, findings: Vec<Finding>) -> Verdict {
        self.findings = findings;
        self
    }

    /// Whether the check held. A verdict that was not judged did not.
    pub fn passed(&self) -> bool {
        self.judgement == Judgement::Passed
    }
}
