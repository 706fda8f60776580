//! `network:`: per-endpoint latency and the faults of the simulated network
//! ([scenario format](../../../../docs/scenario-format.md#network)).

use std::collections::BTreeMap;

use super::Validator;
use crate::scenario::error::did_you_mean;
use crate::scenario::locations::{index, join};
use crate::scenario::network::FaultSpec;
use crate::scenario::turmoil::BackendKind;

impl Validator<'_> {
    pub(super) fn network(&mut self) {
        let n = &self.s.network;
        self.latency("network.latency", &n.latency);
        for (name, l) in &n.endpoint_latency {
            let p = join("network.endpoint_latency", name);
            if !self.s.endpoints.contains_key(name) {
                let known: Vec<&str> = self.s.endpoints.keys().map(String::as_str).collect();
                let e = self
                    .s
                    .error_at_key(&p, format!("no endpoint is named `{name}`"))
                    .with_suggestion(did_you_mean(name, known));
                self.errors.push(e);
            }
            self.latency(&p, l);
        }
        if !n.faults.is_empty() && self.s.backend == BackendKind::Turmoil {
            self.err_expected(
                "network.faults",
                "`network.faults` are sim-only: their turmoil semantics differ",
                "turmoil-native faults under `turmoil:`",
            );
        }
        let horizon = self.s.limits.max_virtual_time;
        let mut by_endpoint: BTreeMap<&str, Vec<(usize, &FaultSpec)>> = BTreeMap::new();
        for (i, f) in n.faults.iter().enumerate() {
            let fp = index("network.faults", i);
            let key = f.kind();
            self.endpoint_ref(&join(&fp, key), f.endpoint());
            match f {
                FaultSpec::Partition { r#for, .. } => {
                    self.positive(&join(&fp, "for"), *r#for, "`for`");
                }
                FaultSpec::Crash { restart_after, .. } => {
                    if let Some(r) = restart_after {
                        self.positive(&join(&fp, "restart_after"), *r, "`restart_after`");
                    }
                }
            }
            if let Some(h) = horizon {
                if f.at() >= h {
                    self.err(
                        &join(&fp, "at"),
                        format!(
                            "the fault starts at {} but the run stops at limits.max_virtual_time {h}",
                            f.at()
                        ),
                    );
                }
            }
            by_endpoint.entry(f.endpoint()).or_default().push((i, f));
        }
        for faults in by_endpoint.values_mut() {
            faults.sort_by_key(|(i, f)| (f.at(), *i));
            for (k, (j, later)) in faults.iter().enumerate() {
                for (i, earlier) in &faults[..k] {
                    let same_kind = earlier.kind() == later.kind();
                    let never_restarts = matches!(
                        earlier,
                        FaultSpec::Crash {
                            restart_after: None,
                            ..
                        }
                    );
                    let overlaps = earlier.window_end().is_none_or(|end| later.at() < end);
                    if never_restarts {
                        self.err(
                            &join(&index("network.faults", *j), "at"),
                            format!(
                                "`{}` never restarts after the crash of network.faults[{i}], so this fault cannot happen",
                                later.endpoint()
                            ),
                        );
                    } else if same_kind && overlaps {
                        self.err(
                            &join(&index("network.faults", *j), "at"),
                            format!(
                                "this {} of `{}` starts at {} while the {} of network.faults[{i}] is still on",
                                later.kind(),
                                later.endpoint(),
                                later.at(),
                                earlier.kind()
                            ),
                        );
                    }
                }
            }
        }
    }
}
