//! An endpoint's connect schedule: counts or instants, and on real sockets only what a
//! kernel can make (refused, then black-holed connections, each until an instant).

use super::Validator;
use crate::scenario::model::connection::{ConnectAction, ConnectStepSpec};
use crate::scenario::model::endpoint::EndpointSpec;
use crate::scenario::model::turmoil::BackendKind;
use crate::scenario::yaml::locations::{index, join};

impl Validator<'_> {
    /// The connect schedule of the endpoint at `path`.
    pub(super) fn connect_schedule(&mut self, path: &str, e: &EndpointSpec) {
        let mut last_until = None;
        for (i, c) in e.connect.iter().enumerate() {
            let cp = index(&join(path, "connect"), i);
            self.count_at_least_one(&join(&cp, "times"), c.times, "times");
            if let Some(until) = c.until {
                if c.times.is_some() {
                    self.err_expected(
                        &join(&cp, "until"),
                        "`times` and `until` both given",
                        "one of them: a number of attempts, or every attempt before an instant",
                    );
                }
                self.positive(&join(&cp, "until"), until, "`until`");
                if last_until.is_some_and(|before| until <= before) {
                    self.err_expected(
                        &join(&cp, "until"),
                        "an instant no later than the entry before it",
                        "instants that increase from entry to entry",
                    );
                }
                last_until = Some(until);
            }
        }
        if self.s.backend == BackendKind::Real {
            self.real_connect(path, &e.connect);
        }
    }

    /// On real sockets: a window of refused connections, then one of black-holed ones, each
    /// `until` an instant, and then every connection accepted.
    fn real_connect(&mut self, path: &str, steps: &[ConnectStepSpec]) {
        let mut seen_blackhole = false;
        let mut windows_over = false;
        for (i, c) in steps.iter().enumerate() {
            let at = join(&index(&join(path, "connect"), i), "action");
            match (c.action, c.until) {
                (ConnectAction::Accept, _) => windows_over = true,
                (_, None) => self.err_expected(
                    &at,
                    format!(
                        "a `{}` entry of a number of attempts cannot be made on real sockets: \
                         the kernel refuses or drops those connects, and no program sees them \
                         to count them",
                        c.action.name()
                    ),
                    "`until: <instant>` (every connect before it), as in \
                     `{ action: refuse, until: 2s }`",
                ),
                _ if windows_over => self.err_expected(
                    &at,
                    "a window after connections were accepted: real sockets cannot stop \
                     listening",
                    "the windows first, then `accept`",
                ),
                (ConnectAction::Refuse, Some(_)) if seen_blackhole => self.err_expected(
                    &at,
                    "refused connections after black-holed ones: real sockets cannot stop \
                     listening",
                    "the `refuse` window first, then the `blackhole` one",
                ),
                (ConnectAction::Blackhole, Some(_)) => seen_blackhole = true,
                _ => {}
            }
        }
    }
}
