//! The ways a scenario is loaded: a file, bytes or text, read as YAML and then validated, so
//! that every way in says the same of the same text.

use std::path::Path;

use super::model::format::SCENARIO;
use super::model::scenario::Scenario;
use super::validate;
use super::yaml::error::{Location, ScenarioError, ScenarioErrors};
use super::yaml::parse::{invalid_utf8, lenient_options, source_info, typed};
use super::yaml::{file, syntax};

impl Scenario {
    /// Reads, parses and validates the scenario file at `path`.
    ///
    /// Errors name the file as `path` was given, so a relative path gives relative
    /// messages (`scenarios/http/x.yaml:3:5 ...`). Only regular files of at most
    /// `internals::MAX_FILE_BYTES` are read; anything else (a
    /// FIFO, a device, a dangling symlink) is an error saying what the path is.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let err = Scenario::load("no/such/file.yaml").unwrap_err();
    /// assert_eq!(err.to_string(), "no/such/file.yaml: no such file or directory");
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Scenario, ScenarioErrors> {
        let path = path.as_ref();
        Scenario::load_as(path, &path.display().to_string())
    }

    /// [`Scenario::load`], with errors naming the file `name` (as a command line or a test
    /// suite shows it) rather than `path`.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let err = Scenario::load_as("/no/such/dir/x.yaml", "x.yaml").unwrap_err();
    /// assert_eq!(err.to_string(), "x.yaml: no such file or directory");
    /// ```
    pub fn load_as(path: impl AsRef<Path>, name: &str) -> Result<Scenario, ScenarioErrors> {
        let path = path.as_ref();
        let bytes = file::read(path).map_err(|why| ScenarioError::new(name, None, "", why))?;
        let mut scenario = Scenario::from_yaml_bytes(&bytes, name)?;
        scenario
            .source
            .set_dir(path.parent().unwrap_or(Path::new("")));
        Ok(scenario)
    }

    /// [`Scenario::from_yaml_str`] for bytes not yet known to be UTF-8: text that is not
    /// gets one error at the first invalid byte, with its line, column and byte offset.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let err = Scenario::from_yaml_bytes(b"version: 1\nname: caf\xe9\n", "x.yaml").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "x.yaml:2:10: the file is not valid UTF-8: byte 0xE9 at byte offset 20"
    /// );
    /// ```
    pub fn from_yaml_bytes(src: &[u8], name: &str) -> Result<Scenario, ScenarioErrors> {
        match std::str::from_utf8(src) {
            Ok(src) => Scenario::from_yaml_str(src, name),
            Err(e) => Err(invalid_utf8(src, &e, name).into()),
        }
    }

    /// Parses and validates a scenario from YAML text; `name` is the file name used in
    /// error messages.
    ///
    /// A file of another format version than 1 gets that one error. Otherwise parsing stops
    /// at the first error; validation ([`Scenario::validate`]) then reports every other
    /// error, sorted by position, including what a run would refuse.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let yaml = "version: 1\nname: x\nendpoints: { api: {} }\noperation: { endpoint: api }\n\
    ///             client: { exponential: { jitter: ful } }\n";
    /// let err = Scenario::from_yaml_str(yaml, "x.yaml").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "x.yaml:5:34 client.exponential.jitter: unknown value `ful`, expected one of \
    ///      `none`, `full`, `equal`, `decorrelated` (did you mean `full`?)"
    /// );
    /// ```
    pub fn from_yaml_str(src: &str, name: &str) -> Result<Scenario, ScenarioErrors> {
        let prepared = syntax::prepare(src, name);
        if let Some(e) = written_version(&prepared.text).and_then(|v| {
            validate::unsupported_version(&source_info(&prepared.text, name, &SCENARIO), v)
        }) {
            return Err(e.into());
        }
        let scenario = parse_prepared(prepared, name).map_err(|e| ScenarioErrors::from(*e))?;
        scenario.validate().map(|()| scenario)
    }
}

/// The scenario `src` describes, with the position of every node, not validated: the checks
/// of its text (see [`syntax`]) and the typed parse, which stop at the first error. For tests
/// that compare what a run of a parsed scenario says with what loading says.
#[cfg(test)]
pub(crate) fn parse(src: &str, name: &str) -> Result<Scenario, Box<ScenarioError>> {
    parse_prepared(syntax::prepare(src, name), name)
}

/// [`parse`] of a text already checked.
fn parse_prepared(
    prepared: syntax::Prepared<'_>,
    name: &str,
) -> Result<Scenario, Box<ScenarioError>> {
    if let Some(problem) = prepared.problem {
        return Err(Box::new(problem));
    }
    let src = prepared.text.as_ref();
    if is_blank(src) {
        return Err(Box::new(
            ScenarioError::new(name, Some(Location::new(1, 1)), "", "the file is empty")
                .with_expected(
                    "a scenario with at least `version`, `name`, `endpoints` and `operation`",
                ),
        ));
    }
    let mut scenario = typed::<Scenario>(src, name, &SCENARIO)?;
    scenario.source = source_info(src, name, &SCENARIO);
    if scenario.locate("backend").is_none() {
        scenario.imply_backend();
    }
    Ok(scenario)
}

/// The `version:` of a document whose top level is a mapping, read before anything else: a
/// file written for another version of the format is answered with that alone, never with
/// what this version makes of its other keys (a missing key, an unknown one). `None` when
/// the text does not say, or not as a whole number; parsing then reports it.
fn written_version(src: &str) -> Option<u64> {
    /// Only `version`; serde skips every other key, whatever its type.
    #[derive(serde::Deserialize)]
    struct Head {
        version: Option<u64>,
    }
    serde_saphyr::from_str_with_options::<Head>(src, lenient_options())
        .ok()?
        .version
}

/// Only whitespace and comments.
fn is_blank(src: &str) -> bool {
    src.trim_start_matches('\u{feff}')
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
}
