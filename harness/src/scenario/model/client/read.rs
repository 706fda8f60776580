//! Reading `client:`. A policy is a word (`no_retry`) or a mapping of one key naming it
//! (`{ exponential: { ... } }`); a command is a mapping of its own keys
//! (`{ command: [...], env: { ... } }`), which no externally tagged enum can read: the
//! mapping is read here, key by key, so that every value still goes through the path that
//! locates its errors (`client.exponential.jitter`, `client.timeout`).

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

use super::command::{CommandClient, ProcessPer};
use super::defaults::s_30;
use super::{ClientSpec, POLICIES};
use crate::scenario::model::duration::Millis;

/// The keys of a command client, in the order the format's table gives them.
const COMMAND_KEYS: &[&str] = &["command", "env", "cwd", "per", "timeout"];

/// What `client:` can be, for "expected ..." in errors.
const EXPECTED: &str = "a policy (`no_retry`, `{ exponential: { ... } }`, ...) or a command \
                        (`{ command: [program, args...] }`)";

impl<'de> Deserialize<'de> for ClientSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ClientVisitor)
    }
}

struct ClientVisitor;

impl<'de> Visitor<'de> for ClientVisitor {
    type Value = ClientSpec;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECTED)
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<ClientSpec, E> {
        match name {
            "no_retry" => Ok(ClientSpec::NoRetry),
            // Every other policy takes parameters, even when all of them default.
            _ if POLICIES.iter().any(|p| p.name == name) => Err(E::custom(format!(
                "`{name}` takes parameters, expected `{{ {name}: {{}} }}` for its defaults"
            ))),
            "command" => Err(E::custom(
                "`command` takes the program and its arguments, expected `{ command: \
                 [program, args...] }`",
            )),
            _ => Err(E::unknown_variant(name, variant_names())),
        }
    }

    fn visit_unit<E: de::Error>(self) -> Result<ClientSpec, E> {
        Err(E::custom(format!("no value given, expected {EXPECTED}")))
    }

    fn visit_none<E: de::Error>(self) -> Result<ClientSpec, E> {
        self.visit_unit()
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ClientSpec, A::Error> {
        let Some(key) = map.next_key::<String>()? else {
            return Err(de::Error::custom(format!(
                "empty mapping, expected {EXPECTED}"
            )));
        };
        if COMMAND_KEYS.contains(&key.as_str()) {
            return command(key, map).map(ClientSpec::Command);
        }
        let policy = policy(&key, &mut map)?;
        if let Some(second) = map.next_key::<String>()? {
            return Err(de::Error::custom(format!(
                "only one key is allowed here (`{key}` names the policy, `{second}` is a \
                 second key), expected a mapping with a single key, such as `{{ exponential: \
                 {{ ... }} }}`"
            )));
        }
        Ok(policy)
    }
}

/// The names `client:` takes, for an unknown one's error (with its nearest match): read
/// off the policy table once, since serde's error wants them for the program's lifetime.
fn variant_names() -> &'static [&'static str] {
    static NAMES: std::sync::LazyLock<Vec<&'static str>> =
        std::sync::LazyLock::new(|| POLICIES.iter().map(|p| p.name).chain(["command"]).collect());
    &NAMES
}

/// The policy `name`, its parameters the map's next value.
fn policy<'de, A: MapAccess<'de>>(name: &str, map: &mut A) -> Result<ClientSpec, A::Error> {
    Ok(match name {
        "no_retry" => {
            map.next_value::<NoParameters>()?;
            ClientSpec::NoRetry
        }
        "fixed" => ClientSpec::Fixed(map.next_value()?),
        "exponential" => ClientSpec::Exponential(map.next_value()?),
        "linear" => ClientSpec::Linear(map.next_value()?),
        "fibonacci" => ClientSpec::Fibonacci(map.next_value()?),
        "aws_standard" => ClientSpec::AwsStandard(map.next_value()?),
        "aws_standard_2_1" => ClientSpec::AwsStandard21(map.next_value()?),
        "aws_adaptive" => ClientSpec::AwsAdaptive(map.next_value()?),
        "sns_delivery" => ClientSpec::SnsDelivery(map.next_value()?),
        "grpc_retry" => ClientSpec::GrpcRetry(map.next_value()?),
        "grpc_connection_backoff" => ClientSpec::GrpcConnectionBackoff(map.next_value()?),
        "rocketmq_producer" => ClientSpec::RocketmqProducer(map.next_value()?),
        "servicenow_exponential" => ClientSpec::ServicenowExponential(map.next_value()?),
        "servicenow_header" => ClientSpec::ServicenowHeader(map.next_value()?),
        "custom" => ClientSpec::Custom(map.next_value()?),
        other => return Err(de::Error::unknown_variant(other, variant_names())),
    })
}

/// The value of `{ no_retry: ~ }`: nothing, or the error saying it takes nothing.
struct NoParameters;

impl<'de> Deserialize<'de> for NoParameters {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Nothing;
        impl<'de> Visitor<'de> for Nothing {
            type Value = NoParameters;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`no_retry` alone")
            }
            fn visit_unit<E: de::Error>(self) -> Result<NoParameters, E> {
                Ok(NoParameters)
            }
            fn visit_none<E: de::Error>(self) -> Result<NoParameters, E> {
                Ok(NoParameters)
            }
            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<NoParameters, A::Error> {
                Err(de::Error::custom(
                    "`no_retry` takes no parameters, expected `no_retry` alone",
                ))
            }
        }
        deserializer.deserialize_any(Nothing)
    }
}

/// A command client whose first key, `first`, was read already.
fn command<'de, A: MapAccess<'de>>(first: String, mut map: A) -> Result<CommandClient, A::Error> {
    let mut argv: Option<Vec<String>> = None;
    let mut env: Option<BTreeMap<String, String>> = None;
    let mut cwd: Option<String> = None;
    let mut per: Option<ProcessPer> = None;
    let mut timeout: Option<Millis> = None;
    let mut key = Some(first);
    while let Some(name) = key {
        let duplicate = match name.as_str() {
            "command" => argv.replace(map.next_value()?).is_some(),
            "env" => env.replace(map.next_value()?).is_some(),
            "cwd" => cwd.replace(map.next_value()?).is_some(),
            "per" => per.replace(map.next_value()?).is_some(),
            "timeout" => timeout.replace(map.next_value()?).is_some(),
            other => return Err(de::Error::unknown_field(other, COMMAND_KEYS)),
        };
        if duplicate {
            return Err(de::Error::duplicate_field(static_key(&name)));
        }
        key = map.next_key::<String>()?;
    }
    let Some(command) = argv else {
        return Err(de::Error::missing_field("command"));
    };
    Ok(CommandClient {
        command,
        env: env.unwrap_or_default(),
        cwd,
        per: per.unwrap_or_default(),
        timeout: timeout.unwrap_or_else(s_30),
    })
}

/// `name`, one of [`COMMAND_KEYS`], as the `&'static str` serde's errors take.
fn static_key(name: &str) -> &'static str {
    COMMAND_KEYS
        .iter()
        .find(|k| **k == name)
        .copied()
        .unwrap_or("command")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str) -> Result<ClientSpec, String> {
        serde_saphyr::from_str::<ClientSpec>(yaml).map_err(|e| e.to_string())
    }

    #[test]
    fn a_policy_reads_as_before_and_a_command_as_a_mapping_of_its_keys() {
        assert_eq!(read("no_retry"), Ok(ClientSpec::NoRetry));
        assert_eq!(
            read("{ custom: orders }"),
            Ok(ClientSpec::Custom("orders".into()))
        );
        assert!(matches!(
            read("{ exponential: {} }"),
            Ok(ClientSpec::Exponential(_))
        ));
        let command = read("{ env: { A: b }, command: [python3, x.py, '{url}'], per: run }");
        assert_eq!(
            command,
            Ok(ClientSpec::Command(
                CommandClient::new(["python3", "x.py", "{url}"])
                    .env("A", "b")
                    .per(ProcessPer::Run)
            ))
        );
    }

    #[test]
    fn a_command_written_back_reads_the_same() {
        let client =
            ClientSpec::Command(CommandClient::new(["node", "c.js"]).timeout(Millis::from_secs(5)));
        let yaml = serde_saphyr::to_string(&client).unwrap_or_default();
        assert_eq!(read(&yaml), Ok(client));
    }

    #[test]
    fn mistakes_say_what_was_expected() {
        assert!(read("exponential").is_err_and(|e| e.contains("takes parameters")));
        assert!(read("{ exponental: {} }").is_err_and(|e| e.contains("unknown variant")));
        assert!(read("{ command: [x], shell: true }").is_err_and(|e| e.contains("unknown field")));
        assert!(read("{ env: {} }").is_err_and(|e| e.contains("missing field `command`")));
        assert!(read("{ fixed: {}, linear: {} }").is_err_and(|e| e.contains("only one key")));
        assert!(read("{ no_retry: { a: 1 } }").is_err_and(|e| e.contains("takes no parameters")));
    }
}
