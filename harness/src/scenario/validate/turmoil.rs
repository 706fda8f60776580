//! `turmoil:`: turmoil-native faults, their endpoints and that their windows do not overlap.

use super::Validator;
use crate::scenario::FaultSpec;
use crate::scenario::LatencySpec;
use crate::scenario::model::bounds::MAX_FAULTS;
use crate::scenario::model::duration::Millis;
use crate::scenario::model::turmoil::{BackendKind, WindowSpec};
use crate::scenario::yaml::locations::{index, join};

impl Validator<'_> {
    pub(super) fn turmoil(&mut self) {
        let Some(t) = &self.s.turmoil else {
            return;
        };
        if self.s.backend != BackendKind::Turmoil {
            self.err_key(
                "turmoil",
                format!(
                    "`turmoil:` applies to `backend: turmoil`, but the backend is `{}`",
                    self.s.backend.name()
                ),
            );
        }
        if let Some(l) = &t.latency {
            self.latency("turmoil.latency", l);
            self.turmoil_latency(l);
        }
        self.windows("turmoil.hold", &t.hold, "hold");
        self.windows("turmoil.partition", &t.partition, "partition");
        // In turmoil a partition drops the messages a hold keeps and its repair ends the
        // hold, so the two on one link at once would not do what the file says.
        for (i, p) in t.partition.iter().enumerate() {
            let p_end = p.at.0.saturating_add(p.r#for.0);
            for (j, h) in t.hold.iter().enumerate() {
                let h_end = h.at.0.saturating_add(h.r#for.0);
                if p.endpoint == h.endpoint && p.at.0 < h_end && h.at.0 < p_end {
                    self.err(
                        &join(&index("turmoil.partition", i), "at"),
                        format!(
                            "this partition of `{}` overlaps turmoil.hold[{j}]: turmoil drops \
                             held messages on a partition and ends the hold on its repair, \
                             so a hold and a partition of one endpoint must not overlap",
                            p.endpoint
                        ),
                    );
                }
            }
        }
        self.too_many(
            "turmoil.crash",
            t.crash.len(),
            MAX_FAULTS,
            "crashes",
            "in a list",
        );
        let mut crashes: Vec<(usize, Millis, Option<Millis>, &str)> = Vec::new();
        for (i, c) in t.crash.iter().enumerate() {
            let cp = index("turmoil.crash", i);
            self.endpoint_ref(&join(&cp, "endpoint"), &c.endpoint);
            if let Some(b) = c.bounce_after {
                self.positive(&join(&cp, "bounce_after"), b, "`bounce_after`");
            }
            // Both lists crash the same host on turmoil: one list keeps them from overlapping.
            let in_network =
                self.s.network.faults.iter().any(
                    |f| matches!(f, FaultSpec::Crash { endpoint, .. } if *endpoint == c.endpoint),
                );
            if in_network {
                self.err(
                    &join(&cp, "endpoint"),
                    format!(
                        "`{}` also crashes under `network.faults`: write an endpoint's crashes \
                         in one of the two lists",
                        c.endpoint
                    ),
                );
            }
            crashes.push((
                i,
                c.at,
                c.bounce_after.map(|b| Millis(c.at.0.saturating_add(b.0))),
                &c.endpoint,
            ));
        }
        // A hold or a partition while its endpoint is down: every crash of the endpoint,
        // from either list, before the sort below reorders this list's.
        let mut down: Vec<(String, Millis, Option<Millis>, &str)> = crashes
            .iter()
            .map(|&(i, at, end, endpoint)| (index("turmoil.crash", i), at, end, endpoint))
            .collect();
        for (i, f) in self.s.network.faults.iter().enumerate() {
            if let FaultSpec::Crash { at, endpoint, .. } = f {
                down.push((index("network.faults", i), *at, f.window_end(), endpoint));
            }
        }
        self.windows_while_down("turmoil.hold", &t.hold, "hold", &down);
        self.windows_while_down("turmoil.partition", &t.partition, "partition", &down);
        crashes.sort_by_key(|c| (c.3, c.1, c.0));
        for pair in crashes.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a.3 == b.3 && a.2.is_none_or(|end| b.1 < end) {
                self.err(
                    &join(&index("turmoil.crash", b.0), "at"),
                    format!("`{}` is still down from turmoil.crash[{}]", b.3, a.0),
                );
            }
        }
    }

    /// `windows` (of `what`, under `path`) must not overlap a crash in `down` (its path, its
    /// start, its end if it bounces, its endpoint) of the same endpoint: a connect is judged
    /// refused or not once, at the instant its SYN would reach the host with the link's
    /// latency, which a held or partitioned link moves or cancels.
    fn windows_while_down(
        &mut self,
        path: &str,
        windows: &[WindowSpec],
        what: &str,
        down: &[(String, Millis, Option<Millis>, &str)],
    ) {
        for (i, w) in windows.iter().enumerate() {
            let w_end = w.at.0.saturating_add(w.r#for.0);
            let crash = down.iter().find(|(_, at, end, endpoint)| {
                *endpoint == w.endpoint && at.0 < w_end && end.is_none_or(|end| w.at.0 < end.0)
            });
            if let Some((crash, ..)) = crash {
                self.err(
                    &join(&index(path, i), "at"),
                    format!(
                        "this {what} of `{}` overlaps {crash}, while its host is down: the \
                         client's connector judges a connect by the host's state when its SYN \
                         would arrive, which the {what} moves, so a {what} and a crash of one \
                         endpoint must not overlap",
                        w.endpoint
                    ),
                );
            }
        }
    }

    /// `turmoil.latency`: what turmoil's latency model makes, and only that. turmoil draws
    /// a message's latency as `min + floor((max - min) * x)` milliseconds, capped at `max`,
    /// with `x` exponential: a fixed latency is `min = max`, and `{ exponential: { mean, max
    /// } }` is `min = 0` with the curve that makes `mean` the mean. A uniform or lognormal
    /// shape is not among what it draws.
    fn turmoil_latency(&mut self, latency: &LatencySpec) {
        let why = match latency {
            LatencySpec::Fixed(_) => None,
            LatencySpec::Uniform(_) => Some(
                "turmoil draws a link's latency from an exponential curve only, so a uniform \
                 latency cannot be made on its links",
            ),
            LatencySpec::Lognormal(_) => Some(
                "turmoil draws a link's latency from an exponential curve only, so a lognormal \
                 latency cannot be made on its links",
            ),
            LatencySpec::Exponential(e) => {
                if e.max.is_none() {
                    self.err_expected(
                        "turmoil.latency.exponential",
                        "turmoil draws a link's latency between a minimum and a maximum, so an \
                         exponential latency on its links needs `max`",
                        "`{ exponential: { mean, max } }`",
                    );
                }
                self.drawn_latency_with_crashes();
                None
            }
        };
        if let Some(why) = why {
            self.err_expected(
                "turmoil.latency",
                why,
                "a fixed latency, or `{ exponential: { mean, max } }`, which turmoil draws",
            );
            return;
        }
        // One place says how long a crossing takes.
        let n = &self.s.network;
        if n.latency != LatencySpec::default() || !n.endpoint_latency.is_empty() {
            self.err(
                "turmoil.latency",
                "`network.latency` or `network.endpoint_latency` is set too: write the links' \
                 latency in one place",
            );
        }
    }

    /// A drawn `turmoil.latency` and a crash of an endpoint's host: the client's connector
    /// judges a connect refused when its SYN would reach a crashed host, one link latency
    /// after the connect, and the SYN's latency is turmoil's own draw, which the connector
    /// cannot see. So the two do not go together.
    fn drawn_latency_with_crashes(&mut self) {
        let Some(t) = &self.s.turmoil else {
            return;
        };
        let in_network = self
            .s
            .network
            .faults
            .iter()
            .position(|f| matches!(f, FaultSpec::Crash { .. }))
            .map(|i| index("network.faults", i));
        let crash = (!t.crash.is_empty())
            .then(|| index("turmoil.crash", 0))
            .or(in_network);
        if let Some(crash) = crash {
            self.err(
                "turmoil.latency",
                format!(
                    "a drawn latency and {crash}'s crash: the client's connector judges a \
                     connect refused by the host's state when its SYN arrives, and turmoil \
                     draws that SYN's latency where the connector cannot read it, so crashes \
                     need a fixed `turmoil.latency`"
                ),
            );
        }
    }

    fn windows(&mut self, path: &str, windows: &[WindowSpec], what: &str) {
        self.too_many(path, windows.len(), MAX_FAULTS, "windows", "in a list");
        let mut spans: Vec<(usize, &str, Millis, Millis)> = Vec::new();
        for (i, w) in windows.iter().enumerate() {
            let wp = index(path, i);
            self.endpoint_ref(&join(&wp, "endpoint"), &w.endpoint);
            self.positive(&join(&wp, "for"), w.r#for, "`for`");
            spans.push((
                i,
                &w.endpoint,
                w.at,
                Millis(w.at.0.saturating_add(w.r#for.0)),
            ));
        }
        spans.sort_by_key(|s| (s.1, s.2, s.0));
        for pair in spans.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if a.1 == b.1 && b.2 < a.3 {
                self.err(
                    &join(&index(path, b.0), "at"),
                    format!("this {what} of `{}` overlaps {path}[{}]", b.1, a.0),
                );
            }
        }
    }
}
