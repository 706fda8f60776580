//! `network:`: per-endpoint latency and the faults of the simulated network
//! ([scenario format](../../../../docs/scenario-format.md#network)).

use std::collections::BTreeMap;

use super::Validator;
use crate::scenario::model::bounds::{MAX_ENDPOINTS, MAX_FAULTS};
use crate::scenario::model::duration::Millis;
use crate::scenario::model::latency::LatencySpec;
use crate::scenario::model::network::FaultSpec;
use crate::scenario::model::turmoil::BackendKind;
use crate::scenario::yaml::locations::{index, join};

impl Validator<'_> {
    pub(super) fn network(&mut self) {
        let n = &self.s.network;
        self.latency("network.latency", &n.latency);
        self.too_many(
            "network.endpoint_latency",
            n.endpoint_latency.len(),
            MAX_ENDPOINTS,
            "entries",
            "(one per endpoint)",
        );
        self.too_many(
            "network.faults",
            n.faults.len(),
            MAX_FAULTS,
            "faults",
            "in a scenario",
        );
        for (name, l) in &n.endpoint_latency {
            let p = join("network.endpoint_latency", name);
            if !self.s.endpoints.contains_key(name) {
                let suggestion = self.suggest(name, self.s.endpoints.keys().map(String::as_str));
                let e = self
                    .s
                    .error_at_key(&p, format!("no endpoint is named `{name}`"))
                    .with_suggestion(suggestion);
                self.errors.push(e);
            }
            self.latency(&p, l);
        }
        if self.s.backend == BackendKind::Real {
            // Loopback is the real backend's network: nothing can delay or cut it from here.
            if !n.latency.is_zero() {
                self.err_expected(
                    "network.latency",
                    "the sim network's latency cannot be made on the real backend",
                    "a step's `latency`, which delays the endpoint's answer",
                );
            }
            if !n.endpoint_latency.is_empty() {
                self.err_expected(
                    "network.endpoint_latency",
                    "the sim network's latency cannot be made on the real backend",
                    "a step's `latency`, which delays the endpoint's answer",
                );
            }
            if !n.faults.is_empty() {
                self.err_expected(
                    "network.faults",
                    "partitions and crashes of the sim network cannot be made on the real backend",
                    "`backend: sim`, or steps that `fail` (reset, close, hang)",
                );
            }
        }
        if self.s.backend == BackendKind::Turmoil {
            // turmoil's links have one latency each (fixed here); draws per segment are the
            // sim network's; `turmoil.latency` is turmoil's own, fixed or drawn by turmoil.
            let drawn = std::iter::once(("network.latency".to_owned(), &n.latency)).chain(
                n.endpoint_latency
                    .iter()
                    .map(|(name, l)| (join("network.endpoint_latency", name), l)),
            );
            for (path, latency) in drawn {
                if !matches!(latency, LatencySpec::Fixed(_)) {
                    self.err_expected(
                        &path,
                        "a latency distribution of the sim network cannot be made on the \
                         turmoil backend",
                        "a fixed latency, which turmoil gives the link",
                    );
                }
            }
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
                    // A crash is the endpoint host's crash on turmoil too; a partition is not.
                    if self.s.backend == BackendKind::Turmoil {
                        self.err_expected(
                            &join(&fp, "partition"),
                            "a `network.faults` partition holds segments until it heals and \
                             black-holes connects meanwhile, which turmoil's partitions do not \
                             do: it is sim-only",
                            "`turmoil.hold` or `turmoil.partition`",
                        );
                    }
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
            self.fault_sequence(faults);
        }
    }

    /// The faults of one endpoint, in order of their start, against those before them: none
    /// may follow a crash that never restarts, and none may start while an earlier one of
    /// its kind is still on. Each fault is compared with the two earlier ones that decide
    /// it (the first crash that never restarts, and of its kind the one that ends last), so
    /// the rule is linear in the faults and gives each fault at most one error of each sort.
    fn fault_sequence(&mut self, faults: &[(usize, &FaultSpec)]) {
        // (position in `faults`, index in `network.faults`) of the first crash that never
        // restarts.
        let mut never_restarted: Option<(usize, usize)> = None;
        // Per kind: (end, position, index) of the earlier fault that ends last.
        let mut last_end: BTreeMap<&str, (Millis, usize, usize)> = BTreeMap::new();
        for (k, (j, later)) in faults.iter().enumerate() {
            let path = join(&index("network.faults", *j), "at");
            let mut found: Vec<(usize, String)> = Vec::new();
            if let Some(&(end, position, i)) = last_end.get(later.kind()) {
                if later.at() < end {
                    let message = format!(
                        "this {kind} of `{endpoint}` starts at {at} while the {kind} of network.faults[{i}] is still on",
                        kind = later.kind(),
                        endpoint = later.endpoint(),
                        at = later.at(),
                    );
                    found.push((position, message));
                }
            }
            if let Some((position, i)) = never_restarted {
                let message = format!(
                    "`{}` never restarts after the crash of network.faults[{i}], so this fault cannot happen",
                    later.endpoint()
                );
                found.push((position, message));
            }
            // In the order of the earlier faults they concern.
            found.sort_by_key(|(position, _)| *position);
            for (_, message) in found {
                self.err(&path, message);
            }
            match later.window_end() {
                None => {
                    never_restarted.get_or_insert((k, *j));
                }
                Some(end) => {
                    let entry = last_end.entry(later.kind()).or_insert((end, k, *j));
                    if end > entry.0 {
                        *entry = (end, k, *j);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    /// Each fault was compared with every earlier one of its endpoint: 1,000 overlapping
    /// partitions gave 499,500 errors (11 s in a debug build); each fault now gets one.
    #[test]
    fn each_fault_gets_at_most_one_error_of_each_sort() {
        let faults: String = (0..1000)
            .map(|i| format!("    - {{ at: {i}ms, partition: api, for: 1d }}\n"))
            .collect();
        let src = format!(
            "version: 1\nname: x\nendpoints: {{ api: {{}} }}\noperation: {{ endpoint: api }}\n\
             network:\n  faults:\n{faults}"
        );
        let parsed = crate::scenario::load::parse(&src, "x.yaml").unwrap_or_else(|e| panic!("{e}"));
        let errors = crate::scenario::validate::validate(&parsed);
        assert_eq!(errors.len(), 999);
        assert_eq!(
            errors[998].to_string(),
            "x.yaml:1006:13 network.faults[999].at: this partition of `api` starts at 999ms \
             while the partition of network.faults[998] is still on"
        );
    }
}
