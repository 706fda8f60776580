//! The scenario format, as the YAML reader asks about it ([`Format`]).

use super::bounds::documented_limit;
use super::client::ClientSpec;
use crate::scenario::yaml::format::Format;

/// The scenario format.
pub(crate) struct ScenarioFormat;

/// The format every scenario text is read as.
pub(crate) static SCENARIO: ScenarioFormat = ScenarioFormat;

impl Format for ScenarioFormat {
    fn is_document(&self, path: &str) -> bool {
        // AWS documents an SNS delivery policy as JSON text (the console, the CLI and
        // CloudFormation take it as a string), so a policy copied from there pastes in.
        path == "sns_delivery.delivery_policy" || path.ends_with(".sns_delivery.delivery_policy")
    }

    fn unknown_key(&self, parent: &str, name: &str) -> Option<String> {
        let policy = parent.rsplit('.').next().unwrap_or("");
        (name == "max_attempts" && ClientSpec::has_native_count(policy)).then(|| {
            format!(
                "`{policy}` counts attempts natively and takes no `max_attempts`; set `{}` instead",
                ClientSpec::native_count_key(policy)
            )
        })
    }

    fn variant_noun(&self, path: &str) -> &'static str {
        if path == "client" || path.ends_with("conforms_to") {
            "policy"
        } else {
            "value"
        }
    }

    fn documented_limit(&self, key: &str) -> Option<(u64, &'static str)> {
        documented_limit(key)
    }

    fn duplicate_key_hint(&self, path: &str) -> Option<&'static str> {
        path.contains("headers")
            .then_some("write headers as a list of pairs when a name repeats")
    }
}
