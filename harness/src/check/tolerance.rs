//! The tolerance: slack on every timing bound of the checks, in the direction that forgives
//! measurement jitter (docs/scenario-format.md#top-level).
//!
//! On the real backend instants are real milliseconds, read with the OS scheduler's jitter:
//! a client that waited exactly 1 s may be measured at 0.998 s. So a lower bound is lowered
//! by the tolerance and an upper bound raised by it (saturating), and a verdict judged with a
//! tolerance says so beside the bound it prints, so a reader knows why a short gap passed.
//! On the simulated backend the tolerance is 0 unless the scenario sets one, and every bound
//! is exact.

use crate::scenario::BoundSpec;

/// The slack of one run's checks, in ms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tolerance(pub(crate) u64);

impl Tolerance {
    /// The slack in ms.
    pub(crate) fn ms(self) -> u64 {
        self.0
    }

    /// Whether bounds are exact.
    pub(crate) fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// Whether `value` meets the lower bound `min`, less the slack.
    pub(crate) fn at_least(self, value: u64, min: u64) -> bool {
        value >= min.saturating_sub(self.0)
    }

    /// Whether `value` meets the upper bound `max`, plus the slack.
    pub(crate) fn at_most(self, value: u64, max: u64) -> bool {
        value <= max.saturating_add(self.0)
    }

    /// Whether `value` equals `target` give or take the slack.
    pub(crate) fn equals(self, value: u64, target: u64) -> bool {
        self.at_least(value, target) && self.at_most(value, target)
    }

    /// Whether `d` meets `bound` widened by the slack.
    pub(crate) fn contains(self, bound: BoundSpec, d: u64) -> bool {
        match bound {
            BoundSpec::Within(r) => {
                self.at_least(d, r.min.as_ms()) && self.at_most(d, r.max.as_ms())
            }
            BoundSpec::AtLeast(min) => self.at_least(d, min.as_ms()),
            BoundSpec::AtMost(max) => self.at_most(d, max.as_ms()),
        }
    }

    /// ` (less the 50ms tolerance)`, after a lower bound; empty without a tolerance.
    pub(crate) fn less(self) -> String {
        self.note("less the")
    }

    /// ` (plus the 50ms tolerance)`, after an upper bound; empty without a tolerance.
    pub(crate) fn plus(self) -> String {
        self.note("plus the")
    }

    /// ` (give or take the 50ms tolerance)`, after a range or an exact value; empty without a
    /// tolerance.
    pub(crate) fn either_way(self) -> String {
        self.note("give or take the")
    }

    /// ` (widened by the 50ms tolerance)`, after bounds of several directions; empty
    /// without a tolerance.
    pub(crate) fn widened(self) -> String {
        self.note("widened by the")
    }

    /// The note for `bound`'s direction.
    pub(crate) fn note_for(self, bound: BoundSpec) -> String {
        self.words_for(bound)
            .map(|w| format!(" ({w})"))
            .unwrap_or_default()
    }

    /// `, less the 50ms tolerance` for `bound`'s direction, inside a parenthesis that is
    /// already open; empty without a tolerance.
    pub(crate) fn clause_for(self, bound: BoundSpec) -> String {
        self.words_for(bound)
            .map(|w| format!(", {w}"))
            .unwrap_or_default()
    }

    /// `, less the 50ms tolerance`, inside an open parenthesis; empty without a tolerance.
    pub(crate) fn less_clause(self) -> String {
        self.words("less the")
            .map(|w| format!(", {w}"))
            .unwrap_or_default()
    }

    /// `, give or take the 50ms tolerance`, inside an open parenthesis; empty without a
    /// tolerance.
    pub(crate) fn either_way_clause(self) -> String {
        self.words("give or take the")
            .map(|w| format!(", {w}"))
            .unwrap_or_default()
    }

    fn note(self, how: &str) -> String {
        self.words(how)
            .map(|w| format!(" ({w})"))
            .unwrap_or_default()
    }

    fn words_for(self, bound: BoundSpec) -> Option<String> {
        self.words(match bound {
            BoundSpec::AtLeast(_) => "less the",
            BoundSpec::AtMost(_) => "plus the",
            BoundSpec::Within(_) => "give or take the",
        })
    }

    /// `less the 50ms tolerance`, or `None` without a tolerance. In ms always (`1500ms`,
    /// never `1.500s`): the tolerance is a setting, and reads apart from the instants and
    /// bounds a verdict prints in seconds.
    fn words(self, how: &str) -> Option<String> {
        (!self.is_zero()).then(|| format!("{how} {}ms tolerance", self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Millis;

    fn ms(n: u64) -> Millis {
        Millis::from_ms(n)
    }

    #[test]
    fn a_bound_widens_in_the_direction_that_forgives() {
        let t = Tolerance(50);
        assert!(t.contains(BoundSpec::AtLeast(ms(1000)), 950));
        assert!(!t.contains(BoundSpec::AtLeast(ms(1000)), 949));
        assert!(t.contains(BoundSpec::AtMost(ms(1000)), 1050));
        assert!(!t.contains(BoundSpec::AtMost(ms(1000)), 1051));
        let within = BoundSpec::within(ms(100), ms(200)).unwrap();
        assert!(t.contains(within, 50) && t.contains(within, 250));
        assert!(!t.contains(within, 49) && !t.contains(within, 251));
        // Nothing is widened past zero or past u64::MAX.
        assert!(t.contains(BoundSpec::AtLeast(ms(10)), 0));
        assert!(Tolerance(u64::MAX).at_most(u64::MAX, u64::MAX));
        assert!(t.equals(950, 1000) && t.equals(1050, 1000) && !t.equals(1051, 1000));
    }

    #[test]
    fn without_a_tolerance_bounds_are_exact_and_say_nothing() {
        let t = Tolerance::default();
        assert!(t.contains(BoundSpec::AtLeast(ms(1000)), 1000));
        assert!(!t.contains(BoundSpec::AtLeast(ms(1000)), 999));
        assert!(!t.contains(BoundSpec::AtMost(ms(1000)), 1001));
        assert_eq!(t.less() + &t.plus() + &t.either_way() + &t.widened(), "");
        assert_eq!(t.less_clause() + &t.either_way_clause(), "");
        assert_eq!(t.clause_for(BoundSpec::AtLeast(ms(1))), "");
    }

    #[test]
    fn the_note_names_the_tolerance_in_ms() {
        let t = Tolerance(1500);
        assert_eq!(t.less(), " (less the 1500ms tolerance)");
        assert_eq!(t.plus(), " (plus the 1500ms tolerance)");
        assert_eq!(
            t.note_for(BoundSpec::within(ms(1), ms(2)).unwrap()),
            " (give or take the 1500ms tolerance)"
        );
        assert_eq!(
            t.clause_for(BoundSpec::AtMost(ms(1))),
            ", plus the 1500ms tolerance"
        );
        assert_eq!(t.less_clause(), ", less the 1500ms tolerance");
        assert_eq!(t.widened(), " (widened by the 1500ms tolerance)");
    }
}
