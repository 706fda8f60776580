//! `retrylab run --client <policy>`: a reference policy, or a program, given on the command
//! line.

use retrylab::scenario::ClientSpec;

/// The policy `text` names: a bare name (`exponential`: the policy with its defaults) or a
/// YAML mapping as a file's `client:` is written (`{ exponential: { max_attempts: 5 } }`).
/// An unknown name, a `custom` client (only Rust code registers those) or a policy this
/// version does not run is an error that lists the policies it can run.
pub(crate) fn parse(text: &str) -> Result<ClientSpec, String> {
    let trimmed = text.trim();
    let bare = !trimmed.is_empty()
        && trimmed
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    let spec = if bare {
        check_name(text, trimmed)?;
        // `no_retry` takes no parameters; every other policy a mapping, here its defaults.
        let yaml = if trimmed == "no_retry" {
            trimmed.to_owned()
        } else {
            format!("{{ {trimmed}: {{}} }}")
        };
        serde_saphyr::from_str::<ClientSpec>(&yaml)
            .map_err(|e| format!("--client {text}: {e} (give its parameters as a mapping)"))?
    } else {
        serde_saphyr::from_str::<ClientSpec>(trimmed).map_err(|e| {
            format!(
                "--client {text}: {e}; write a policy name or a mapping such \
                 as '{{ exponential: {{ max_attempts: 5 }} }}' ({})",
                known()
            )
        })?
    };
    // A program is a client, not a policy: it needs no reference client.
    if !matches!(spec, ClientSpec::Command(_)) {
        check_name(text, spec.name())?;
    }
    Ok(spec)
}

/// Refuses a name that is no policy this version runs from the command line.
fn check_name(text: &str, name: &str) -> Result<(), String> {
    if name == "custom" {
        return Err(format!(
            "--client {text}: a custom client is written in Rust and runs from Rust \
             (retrylab::scenario_main! with a client registry); {}",
            known()
        ));
    }
    if !ClientSpec::is_built(name) {
        let what = if ClientSpec::names().any(|n| n == name) {
            "is not run by this version's reference client"
        } else {
            "is not a client policy"
        };
        return Err(format!("--client {text}: `{name}` {what}; {}", known()));
    }
    Ok(())
}

/// The policies `--client` takes, for error messages.
fn known() -> String {
    let names: Vec<&str> = ClientSpec::names()
        .filter(|n| *n != "custom" && ClientSpec::is_built(n))
        .collect();
    format!(
        "known policies: {}; or a program: '{{ command: [node, client.js, \"{{url}}\"] }}'",
        names.join(", ")
    )
}
