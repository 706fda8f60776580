//! Loading scenarios and turning parser errors into located [`ScenarioError`]s.
//!
//! serde-saphyr gives each error a line and column; `serde_path_to_error` gives the field
//! path. Serde's and the parser's messages are then reworded into what a scenario author
//! needs: what was found, what was expected, and a did-you-mean for misspellings.

use std::path::Path;

use serde_path_to_error::Segment;
use serde_saphyr::DuplicateKeyPolicy;

use super::client::ClientSpec;
use super::embedded::{self, TextMap};
use super::error::{Location, ScenarioError, ScenarioErrors, did_you_mean};
use super::locations::{SourceInfo, join};
use super::model::Scenario;
use super::{parser_messages, syntax, validate};

/// Deepest nesting accepted. Real scenarios nest about ten levels; the limit keeps every
/// recursive visitor far from the stack's end whatever the input.
const MAX_DEPTH: usize = 64;

/// Parser options shared by every pass: duplicate keys are errors, only `true`/`false` are
/// booleans (so `jitter: off` or `method: NO` stay strings), and the budget bounds the work
/// any input can cause.
pub(crate) fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_depth: MAX_DEPTH,
            max_nodes: 200_000,
            max_total_scalar_bytes: 16 * 1024 * 1024,
        },
        duplicate_keys: DuplicateKeyPolicy::Error,
        strict_booleans: true,
        with_snippet: false,
    }
}

/// Options for the location pass, which must not fail where the typed pass did: a duplicate
/// key there is reported by the typed pass, and the location pass only needs positions.
fn lenient_options() -> serde_saphyr::Options {
    let mut options = options();
    options.duplicate_keys = DuplicateKeyPolicy::LastWins;
    options
}

impl Scenario {
    /// Reads, parses and validates the scenario file at `path`.
    ///
    /// Errors name the file as `path` was given, so a relative path gives relative
    /// messages (`scenarios/http/x.yaml:3:5 ...`). Only regular files of at most
    /// [`MAX_FILE_BYTES`](crate::scenario::MAX_FILE_BYTES) are read; anything else (a
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
        let bytes = super::file::read(path.as_ref())
            .map_err(|why| ScenarioError::new(name, None, "", why))?;
        Scenario::from_yaml_bytes(&bytes, name)
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
        if let Some(e) = written_version(&prepared.text)
            .and_then(|v| validate::unsupported_version(&source_info(&prepared.text, name), v))
        {
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
    let mut scenario = typed::<Scenario>(src, name)?;
    scenario.source = source_info(src, name);
    Ok(scenario)
}

/// `src` read strictly as a `T` (a scenario, or a document a scenario holds as a string),
/// with its first error located and reworded.
pub(crate) fn typed<T: serde::de::DeserializeOwned>(
    src: &str,
    name: &str,
) -> Result<T, Box<ScenarioError>> {
    // A failure left by an earlier parse on this thread belongs to no error of this one.
    let _ = embedded::take_failure();
    let mut path = None;
    let parsed = serde_saphyr::with_deserializer_from_str_with_options(src, options(), |de| {
        serde_path_to_error::deserialize::<_, T>(de).map_err(|e| {
            path = Some(e.path().iter().cloned().collect::<Vec<_>>());
            e.into_inner()
        })
    });
    parsed.map_err(|e| {
        let error = convert(&e, path.as_deref(), src, name);
        // The typed parse stops at the first value of a wrong type, which may be a bracket
        // left open that the parser has not reached the end of yet: the syntax comes first.
        if !error.message.starts_with("invalid YAML") {
            if let Some(mut open) = super::brackets::unclosed(src, name) {
                // The value that failed is the bracket's, when it starts there: its key.
                if (open.line, open.column) == (error.line, error.column) {
                    open.path = error.path;
                }
                return Box::new(open);
            }
        }
        Box::new(error)
    })
}

/// Positions of every node of `src`, from a pass that tolerates duplicate keys.
fn source_info(src: &str, name: &str) -> SourceInfo {
    SourceInfo::from_source(src, name, lenient_options())
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

/// The error for `src`, which stops being UTF-8 where `e` says: located at the first invalid
/// byte (its column counted in characters, as every location is), with its byte offset.
fn invalid_utf8(src: &[u8], e: &std::str::Utf8Error, name: &str) -> ScenarioError {
    let at = e.valid_up_to();
    // Everything before `at` is valid, so this conversion loses nothing.
    let prefix = String::from_utf8_lossy(&src[..at]);
    let line = prefix.matches('\n').count() + 1;
    let column = prefix.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    let what = match (e.error_len(), src.get(at)) {
        (Some(_), Some(byte)) => format!("byte 0x{byte:02X} at byte offset {at}"),
        _ => format!("a character cut short by the end of the file at byte offset {at}"),
    };
    ScenarioError::new(
        name,
        Some(Location::new(clamp(line), clamp(column))),
        "",
        format!("the file is not valid UTF-8: {what}"),
    )
}

fn clamp(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Only whitespace and comments.
fn is_blank(src: &str) -> bool {
    src.trim_start_matches('\u{feff}')
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
}

/// Renders `serde_path_to_error` segments as `a.b[2].c`, stopping at the first unknown one.
fn render_path(segments: &[Segment]) -> (String, bool) {
    let mut out = String::new();
    for s in segments {
        match s {
            Segment::Seq { index } => out = format!("{out}[{index}]"),
            Segment::Map { key } => out = join(&out, key),
            Segment::Enum { variant } => out = join(&out, variant),
            _ => return (out, true),
        }
    }
    (out, false)
}

/// The error's text without serde-saphyr's " at line L, column C" suffix.
fn bare_message(e: &serde_saphyr::Error) -> String {
    let e = e.without_snippet();
    let text = match e {
        serde_saphyr::Error::Message { msg, .. } | serde_saphyr::Error::AliasError { msg, .. } => {
            msg.clone()
        }
        serde_saphyr::Error::Budget { breach, .. } => {
            parser_messages::budget(breach, &options().budget.unwrap_or_default())
        }
        other => other.to_string(),
    };
    match text.rfind(" at line ") {
        Some(i) if text[i..].contains(", column ") => text[..i].to_string(),
        _ => text,
    }
}

fn convert(
    e: &serde_saphyr::Error,
    segments: Option<&[Segment]>,
    src: &str,
    file: &str,
) -> ScenarioError {
    // A key too long to be implicit is read as a value: whatever the parse then says is
    // about the wrong thing. Only a failed parse of a file with a long line looks for one.
    let long_key = syntax::long_key(src, file);
    if let Some(long) = long_key.filter(|long| {
        e.location().is_none_or(|at| {
            (long.line, long.column)
                <= (
                    u32::try_from(at.line()).unwrap_or(u32::MAX),
                    u32::try_from(at.column()).unwrap_or(u32::MAX),
                )
        })
    }) {
        return long;
    }
    if let Some(lookalike) = e
        .location()
        .and_then(|at| syntax::colon_lookalike(src, usize::try_from(at.line()).ok()?, file))
    {
        return lookalike;
    }
    let location = e.location().map(|l| {
        Location::new(
            u32::try_from(l.line()).unwrap_or(u32::MAX),
            u32::try_from(l.column()).unwrap_or(u32::MAX),
        )
    });
    let (mut path, truncated) = segments.map(render_path).unwrap_or_default();
    let info = source_info(src, file);
    if truncated {
        // A duplicate key is found before serde sees the key, so the path stops at its
        // mapping; the location pass names the entry at the error's position.
        if let Some(p) = location.and_then(|at| info.path_at(at)) {
            path = p.to_string();
        }
    }
    let message = bare_message(e);
    let token = location.and_then(|at| syntax::token_at(src, at));
    let reworded = reword(&message, path, token);
    let mut location = location;
    if let Some(key) = &reworded.unknown_key {
        // serde-saphyr attributes an unknown key to its mapping once the mapping has had an
        // earlier key; the location pass knows where the key itself is.
        if let Some(at) = info.locate_key(&reworded.path) {
            location = Some(at);
        }
        debug_assert!(reworded.path.ends_with(key.as_str()));
    } else if let Some(at) = info.locate(&reworded.path) {
        // An error about a node is never before the node: an earlier position is its
        // container's, kept by the parser for errors raised outside its own calls.
        if location.is_none_or(|l| l < at) {
            location = Some(at);
        }
    }
    if location.is_none() {
        // Errors about a document that is a bare scalar (`null`, `~`) carry no position;
        // they concern the whole document, which starts at its first node (or line 1).
        location = Some(
            info.locate_nearest(&reworded.path, false)
                .unwrap_or(Location::new(1, 1)),
        );
    }
    if let Some(failure) = embedded::take_failure().filter(|f| f.message == message) {
        return inside_string(failure, location, &reworded.path, src, file);
    }
    let Reworded {
        message,
        expected,
        suggestion,
        path,
        ..
    } = reworded;
    let message = info.as_written(location, message);
    ScenarioError::new(file, location, path, message)
        .with_suggestion(suggestion)
        .with_expected_opt(expected)
}

/// The error of a document written as a string (see [`embedded`]), which starts at
/// `string` in `src`, at field `path`: placed in the file where the string's text allows,
/// else at the string, saying where in its text.
fn inside_string(
    failure: embedded::Failure,
    string: Option<Location>,
    path: &str,
    src: &str,
    file: &str,
) -> ScenarioError {
    let inner = failure.error;
    if inner.path.is_empty() && inner.message.starts_with("wrong type") {
        // Not a document at all: say what the string should hold.
        return ScenarioError::new(file, string, path, "a string that holds no JSON object")
            .with_expected(embedded::EXPECTED);
    }
    let inner_at = Location::new(inner.line, inner.column);
    let placed = string.and_then(|at| TextMap::of(src, at, &failure.text)?.locate(inner_at));
    let message = match placed {
        Some(_) => inner.message,
        None => format!(
            "{} (at line {}, column {} of the string's text)",
            inner.message, inner.line, inner.column
        ),
    };
    let path = if inner.path.is_empty() {
        path.to_owned()
    } else {
        join(path, &inner.path)
    };
    ScenarioError::new(file, placed.or(string), path, message)
        .with_suggestion(inner.suggestion)
        .with_expected_opt(inner.expected)
}

impl ScenarioError {
    fn with_expected_opt(mut self, expected: Option<String>) -> Self {
        self.expected = expected;
        self
    }
}

/// The text between the first pair of backticks.
fn ticked(s: &str) -> Option<&str> {
    let start = s.find('`')? + 1;
    let len = s[start..].find('`')?;
    Some(&s[start..start + len])
}

/// Names listed after "expected one of ", with or without backticks.
fn listed(s: &str) -> Vec<String> {
    let names = |list: &str, separator: &str| -> Vec<String> {
        list.split(separator)
            .map(|n| n.trim().trim_matches('`').to_string())
            .filter(|n| !n.is_empty())
            .collect()
    };
    if let Some((_, list)) = s.split_once("expected one of ") {
        return names(list, ", ");
    }
    // serde names the values of a two-value enum as "`a` or `b`", and a one-value enum's as
    // "`a`".
    s.split_once("expected `")
        .map(|(_, list)| names(&format!("`{list}"), " or "))
        .unwrap_or_default()
}

fn quote_all(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A readable name for what serde or the parser calls a type.
fn plain_type(t: &str) -> String {
    let t = t.trim();
    match t {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number".into(),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer".into(),
        "f32" | "f64" | "floating point" => "a number".into(),
        "a boolean" | "bool" => "`true` or `false`".into(),
        "a string" | "string" | "string scalar" | "a borrowed string" => "a string".into(),
        "a sequence" | "sequence start" => "a list".into(),
        "a map" | "mapping start" | "map" => "a mapping".into(),
        "unit" => "nothing".into(),
        _ if t.starts_with("struct ") => "a mapping".into(),
        _ if t.starts_with("enum ") => "one of the documented values".into(),
        _ if t.starts_with("unit variant") => "a single word".into(),
        _ => t.to_string(),
    }
}

/// Largest value of an unsigned type named by the parser's "invalid u32" message.
fn unsigned_range(t: &str) -> Option<String> {
    let max = match t {
        "u8" => u8::MAX as u64,
        "u16" => u16::MAX as u64,
        "u32" => u32::MAX as u64,
        "u64" | "usize" => u64::MAX,
        _ => return None,
    };
    Some(format!("a whole number from 0 to {max}"))
}

/// A parser message in the scenario's terms.
struct Reworded {
    message: String,
    expected: Option<String>,
    suggestion: Option<String>,
    path: String,
    /// Set for an unknown key, which the path then ends with.
    unknown_key: Option<String>,
}

impl Reworded {
    fn new(message: impl Into<String>, expected: Option<String>, path: String) -> Self {
        Reworded {
            message: message.into(),
            expected,
            suggestion: None,
            path,
            unknown_key: None,
        }
    }
}

/// Turns a serde or parser message into (message, expected, suggestion, path). `token` is
/// the text the file has where the error is, when known.
fn reword(msg: &str, path: String, token: Option<&str>) -> Reworded {
    if let Some(plain) = parser_messages::reword(msg, token, &options()) {
        return Reworded::new(plain.message, plain.expected, path);
    }
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        let name = ticked(rest).unwrap_or(rest).to_string();
        let known = listed(rest);
        // Keys read by retrylab's own visitors are not in serde's path yet.
        let path = if path.rsplit(['.', ']']).next() == Some(name.as_str()) {
            path
        } else {
            join(&path, &name)
        };
        let parent = super::locations::parent_path(&path).to_string();
        let policy = parent.rsplit('.').next().unwrap_or("");
        if name == "max_attempts" && ClientSpec::has_native_count(policy) {
            let mut r = Reworded::new(
                format!(
                    "`{policy}` counts attempts natively and takes no `max_attempts`; set `{}` instead",
                    ClientSpec::native_count_key(policy)
                ),
                None,
                path,
            );
            r.unknown_key = Some(name);
            return r;
        }
        let expected = if known.is_empty() {
            "no keys here".to_string()
        } else {
            format!("one of {}", quote_all(&known))
        };
        let suggestion = did_you_mean(&name, known.iter().map(String::as_str));
        let mut r = Reworded::new(format!("unknown key `{name}`"), Some(expected), path);
        r.suggestion = suggestion;
        r.unknown_key = Some(name);
        return r;
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        let name = ticked(rest).unwrap_or(rest).to_string();
        let known = listed(rest);
        if matches!(name.as_str(), "~" | "" | "null" | "Null" | "NULL") {
            let expected = (!known.is_empty()).then(|| format!("one of {}", quote_all(&known)));
            return Reworded::new("no value given", expected, path);
        }
        let what = if path == "client" || path.ends_with("conforms_to") {
            "policy"
        } else {
            "value"
        };
        let suggestion = did_you_mean(&name, known.iter().map(String::as_str));
        let expected = (!known.is_empty()).then(|| format!("one of {}", quote_all(&known)));
        let mut r = Reworded::new(format!("unknown {what} `{name}`"), expected, path);
        r.suggestion = suggestion;
        return r;
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        let name = ticked(rest).unwrap_or(rest);
        let full = join(&path, name);
        return Reworded::new(format!("missing required key `{name}`"), None, full);
    }
    if let Some(rest) = msg.strip_prefix("duplicate mapping key") {
        let name = rest.trim_start_matches(':').trim();
        let hint = if path.contains("headers") {
            " (write headers as a list of pairs when a name repeats)"
        } else {
            ""
        };
        let key = if name.is_empty() {
            "duplicate key".to_string()
        } else {
            format!("duplicate key `{name}`")
        };
        return Reworded::new(format!("{key}{hint}"), None, path);
    }
    if let Some(expected) = msg.strip_prefix("unexpected event: expected ") {
        return Reworded::new("wrong type".to_string(), Some(plain_type(expected)), path);
    }
    if let Some(t) = msg.strip_prefix("invalid ") {
        // A whole number past its type, where the format has a lower limit of its own:
        // that limit, not the type's, is the one to quote.
        let key = path.rsplit(['.', ']']).next().unwrap_or(&path).to_owned();
        let past_limit = token
            .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            .zip(super::bounds::documented_limit(&key));
        if let (Some(_), Some((written, (cap, unit)))) = (unsigned_range(t), past_limit) {
            return Reworded::new(
                format!("`{key}: {written}`, over the limit of the format"),
                Some(format!("at most {cap} {unit}")),
                path,
            );
        }
        if let Some(range) = unsigned_range(t) {
            return Reworded::new("invalid number".to_string(), Some(range), path);
        }
        if matches!(t, "i8" | "i16" | "i32" | "i64") {
            return Reworded::new("invalid number".to_string(), Some(plain_type(t)), path);
        }
        if t.starts_with("floating point") {
            return Reworded::new("invalid number".to_string(), Some("a number".into()), path);
        }
        if t.starts_with("YAML 1.1 bool") || t.starts_with("boolean") {
            return Reworded::new(
                "invalid boolean".to_string(),
                Some("`true` or `false`".into()),
                path,
            );
        }
    }
    if msg.starts_with("unexpected value for unit enum variant") {
        let variant = path.rsplit('.').next().unwrap_or("").to_string();
        return Reworded::new(
            format!("`{variant}` takes no parameters"),
            Some(format!("`{variant}` alone")),
            path,
        );
    }
    if msg.starts_with("expected end of mapping after enum variant value") {
        return Reworded::new(
            "only one key is allowed here".to_string(),
            Some("a mapping with a single key, such as `{ exponential: { ... } }`".into()),
            super::locations::parent_path(&path).to_string(),
        );
    }
    if msg.starts_with("expected string key for externally tagged enum") {
        return Reworded::new(
            "empty mapping".to_string(),
            Some("a mapping with a single key, such as `{ exponential: { ... } }`".into()),
            path,
        );
    }
    if let Some(rest) = msg.strip_prefix("cannot deserialize null into ") {
        let what = rest.split(';').next().unwrap_or(rest);
        return Reworded::new("no value given", Some(plain_type(what)), path);
    }
    if msg.starts_with("externally tagged enum expected") {
        return Reworded::new(
            "wrong type",
            Some("a word or a mapping with a single key, such as `{ at_least: 2s }`".into()),
            path,
        );
    }
    if msg.starts_with("multiple YAML documents detected") {
        return Reworded::new(
            "more than one YAML document".to_string(),
            Some("a single scenario per file".into()),
            path,
        );
    }
    if let Some(rest) = msg.strip_prefix("invalid type: ") {
        if let Some((found, expected)) = rest.rsplit_once(", expected ") {
            return Reworded::new(
                format!("wrong type: found {found}"),
                Some(plain_type(expected)),
                path,
            );
        }
    }
    if let Some(rest) = msg.strip_prefix("invalid length ") {
        if let Some((found, expected)) = rest.rsplit_once(", expected ") {
            return Reworded::new(
                format!("wrong number of items: {found}"),
                Some(expected.to_string()),
                path,
            );
        }
    }
    if let Some((message, expected)) = msg.rsplit_once(", expected ") {
        // Messages written by retrylab's own visitors end with ", expected ...".
        return Reworded::new(message, Some(expected.to_string()), path);
    }
    Reworded::new(msg, None, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAIL: &str = "endpoints: { api: {} }\noperation: { endpoint: api }\n";

    #[test]
    fn numbers_that_are_not_finite_are_quoted_as_written() {
        for (written, quoted) in [
            ("NaN", "`NaN`"),
            (".NaN", "`.NaN`"),
            ("inf", "`inf`"),
            ("-Infinity", "`-Infinity`"),
            ("1e400", "`1e400`"),
        ] {
            let yaml = format!(
                "version: 1\nname: x\n{TAIL}client: {{ exponential: {{ initial: {written} }} }}\n"
            );
            let err = Scenario::from_yaml_str(&yaml, "x.yaml")
                .unwrap_err()
                .to_string();
            assert!(err.contains(quoted), "{written}: {err}");
        }
    }

    /// AWS documents a delivery policy as JSON text; given as a string it is read as the
    /// mapping it holds (it was "wrong type, expected a mapping").
    #[test]
    fn a_delivery_policy_may_be_a_string_of_json() {
        let policy = r#"{"healthyRetryPolicy": {"minDelayTarget": 10, "maxDelayTarget": 30, "numRetries": 5, "backoffFunction": "linear"}, "throttlePolicy": {"maxReceivesPerSecond": 2}}"#;
        let head =
            format!("version: 1\nname: x\n{TAIL}client:\n  sns_delivery:\n    delivery_policy: ");
        let mapping =
            Scenario::from_yaml_str(&format!("{head}{policy}\n"), "x.yaml").expect("loads");
        for string in [
            format!("'{policy}'"),
            format!("{policy:?}"),
            format!("|\n      {policy}\n"),
            format!(">-\n      {policy}\n"),
        ] {
            let read = Scenario::from_yaml_str(&format!("{head}{string}\n"), "x.yaml")
                .unwrap_or_else(|e| panic!("{string}: {e}"));
            assert_eq!(read, mapping, "{string}");
        }
    }

    /// docs/scenario-format.md's Limits section states these numbers.
    #[test]
    fn the_parser_limits_are_the_documented_ones() {
        let o = options();
        let b = o.budget.expect("a budget");
        assert_eq!(
            (
                b.max_depth,
                b.max_nodes,
                b.max_total_scalar_bytes,
                b.max_events
            ),
            (64, 200_000, 16 * 1024 * 1024, 1_000_000)
        );
        assert_eq!(
            (
                b.max_aliases,
                b.max_anchors,
                b.max_documents,
                b.max_merge_keys
            ),
            (50_000, 50_000, 1024, 10_000)
        );
        assert!(b.enforce_alias_anchor_ratio);
        assert_eq!(
            (b.alias_anchor_ratio_multiplier, b.alias_anchor_min_aliases),
            (10, 100)
        );
        let a = o.alias_limits;
        assert_eq!(
            (a.max_total_replayed_events, a.max_replay_stack_depth),
            (1_000_000, 64)
        );
    }

    /// The parser refused `key:<tab>value`; YAML allows a tab there, and it reads as a space.
    #[test]
    fn a_tab_after_a_colon_separates_like_a_space() {
        let tabs = format!("version:\t1\nname:\tx\nseed:\t7\ndescription: \"a:\tb\"\n{TAIL}");
        let spaces = format!("version: 1\nname: x\nseed: 7\ndescription: \"a:\tb\"\n{TAIL}");
        let read = Scenario::from_yaml_str(&tabs, "x.yaml").expect("tabs after colons load");
        assert_eq!(
            read,
            Scenario::from_yaml_str(&spaces, "x.yaml").expect("loads")
        );
        assert_eq!((read.seed, read.description.as_deref()), (7, Some("a:\tb")));
    }
}
