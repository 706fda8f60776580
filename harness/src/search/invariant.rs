//! Invariants: what must hold in every case of a search.

use std::fmt;
use std::sync::Arc;

use crate::report::{Report, Verdict};
use crate::scenario::Expectations;

/// A closure over a case's report: `Ok(())` when the invariant holds, else why not.
type Closure = Arc<dyn Fn(&Report) -> Result<(), String> + Send + Sync>;

/// The invariants of a search: expectations of the format, judged by the same checks as a
/// file's `expect:` (each case runs with them as its `expect:`), and closures over each
/// case's report and trace, judged after them as verdicts named after the closure.
///
/// Only the expectations can be written to a regression file; a failure that only a
/// closure sees is written with a comment saying so.
///
/// ```
/// use retrylab::scenario::{EffectsSpec, Expectations};
/// use retrylab::search::Invariants;
///
/// let invariants = Invariants::from(Expectations::default().effects(EffectsSpec::AtMostOnce))
///     .holds("at most 5 attempts", |report| {
///         let n = report.trace().attempts.len();
///         if n <= 5 { Ok(()) } else { Err(format!("{n} attempts")) }
///     });
/// assert_eq!(invariants.names(), ["effects", "at most 5 attempts"]);
/// ```
#[derive(Clone, Default)]
pub struct Invariants {
    pub(crate) expect: Expectations,
    pub(crate) closures: Vec<(String, Closure)>,
}

impl Invariants {
    /// No invariant yet; add some with [`Invariants::holds`] or start from expectations
    /// ([`Invariants::from`]): a search refuses to run without any
    /// ([`SearchError::NoInvariants`](super::SearchError::NoInvariants)).
    pub fn new() -> Invariants {
        Invariants::default()
    }

    /// Adds a closure over each case's report, named `name` in its failed verdict.
    pub fn holds(
        mut self,
        name: impl Into<String>,
        check: impl Fn(&Report) -> Result<(), String> + Send + Sync + 'static,
    ) -> Invariants {
        self.closures.push((name.into(), Arc::new(check)));
        self
    }

    /// The expectations, as a case's `expect:`.
    pub fn expectations(&self) -> &Expectations {
        &self.expect
    }

    /// The names of the invariants: the expectations' checks, then the closures.
    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .expect
            .check_names()
            .into_iter()
            .map(str::to_owned)
            .collect();
        names.extend(self.closures.iter().map(|(name, _)| name.clone()));
        names
    }

    /// Judges the closures on `report`, adding a verdict named after each: passed, or failed
    /// with why not. A closure that panics fails with its panic's message: the panic is the
    /// invariant's, not the search's, and a worker that unwound would never send its verdict.
    pub(crate) fn judge_closures(&self, report: &mut Report) {
        for (name, check) in &self.closures {
            let judged = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(report)));
            let verdict = match judged {
                Ok(Ok(())) => Verdict::pass(name.clone(), "held"),
                Ok(Err(why)) => Verdict::fail(name.clone(), why),
                Err(panic) => Verdict::fail(
                    name.clone(),
                    format!("the invariant panicked: {}", panic_message(panic.as_ref())),
                ),
            };
            report.verdicts.push(verdict);
        }
    }
}

/// What a caught panic says: its `&str` or `String` payload, else that it said nothing.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

impl From<Expectations> for Invariants {
    fn from(expect: Expectations) -> Invariants {
        Invariants {
            expect,
            closures: Vec::new(),
        }
    }
}

impl fmt::Debug for Invariants {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Invariants")
            .field("expect", &self.expect)
            .field(
                "closures",
                &self.closures.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish()
    }
}
