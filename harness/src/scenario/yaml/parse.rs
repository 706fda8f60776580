//! Reading YAML text as a typed value, with its first error located and reworded.
//!
//! serde-saphyr gives each error a line and column; `serde_path_to_error` gives the field
//! path. The message is then reworded ([`reword`](super::reword)) into what an author needs:
//! what was found, what was expected, and a did-you-mean for misspellings.

use std::cell::Cell;

use serde::de::DeserializeOwned;
use serde_path_to_error::Segment;
use serde_saphyr::DuplicateKeyPolicy;

use super::embedded::{self, EXPECTED, FailedDocument, TextMap};
use super::error::{Location, ScenarioError};
use super::format::Format;
use super::locations::{SourceInfo, join};
use super::reword::{Reworded, reword};
use super::syntax;
use super::{brackets, parser_messages};

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
pub(crate) fn lenient_options() -> serde_saphyr::Options {
    let mut options = options();
    options.duplicate_keys = DuplicateKeyPolicy::LastWins;
    options
}

/// `src` read strictly as a `T` of `format` (a whole file, or a document a file holds as a
/// string), with its first error located and reworded.
pub(crate) fn typed<T: DeserializeOwned>(
    src: &str,
    name: &str,
    format: &'static dyn Format,
) -> Result<T, Box<ScenarioError>> {
    // A failure left by an earlier parse on this thread belongs to no error of this one.
    let _ = embedded::take_failure();
    let _reading = Reading::start(format);
    let mut path = None;
    let parsed = serde_saphyr::with_deserializer_from_str_with_options(src, options(), |de| {
        serde_path_to_error::deserialize::<_, T>(de).map_err(|e| {
            path = Some(e.path().iter().cloned().collect::<Vec<_>>());
            e.into_inner()
        })
    });
    parsed.map_err(|e| {
        let error = convert(&e, path.as_deref(), src, name, format);
        // The typed parse stops at the first value of a wrong type, which may be a bracket
        // left open that the parser has not reached the end of yet: the syntax comes first.
        if !error.message.starts_with("invalid YAML") {
            if let Some(mut open) = brackets::unclosed(src, name) {
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

thread_local! {
    /// The format of the parse running on this thread. A document written in a string is
    /// read in the format of the file that holds it, and its visitor is handed the string
    /// alone.
    static READING: Cell<Option<&'static dyn Format>> = const { Cell::new(None) };
}

/// The format of a parse running on this thread, from its start to its end (the format of
/// an enclosing parse is set back then, panic or not).
struct Reading(Option<&'static dyn Format>);

impl Reading {
    fn start(format: &'static dyn Format) -> Reading {
        Reading(READING.replace(Some(format)))
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        READING.set(self.0);
    }
}

/// `text`, a string's value, read as a `T` strictly, in the format of the file being read,
/// as a whole file is; the
/// error's message otherwise (the located error is kept for
/// [`take_failure`](embedded::take_failure)).
///
/// Called from inside [`typed`], by the visitor of a field that holds a document: the parse
/// of a file recurses here once per such string, which is why the two share this module.
pub(crate) fn from_text<T: DeserializeOwned>(text: &str) -> Result<T, String> {
    let Some(format) = READING.get() else {
        // Only the visitor of a field of a file being read calls this.
        return Err("a document in a string, read outside the parse of a file".to_owned());
    };
    // An empty document would read as every default: a string that says nothing.
    if text.trim().is_empty() {
        return Err(format!("an empty string, expected {EXPECTED}"));
    }
    typed::<T>(text, "", format).map_err(|error| {
        let message = format!(
            "in the text of the string, at its line {} column {}{}: {}",
            error.line,
            error.column,
            if error.path.is_empty() {
                String::new()
            } else {
                format!(" ({})", error.path)
            },
            Bare(&error)
        );
        embedded::keep_failure(FailedDocument {
            text: text.to_owned(),
            error: *error,
            message: message.clone(),
        });
        message
    })
}

/// An error's message, expectation and suggestion, without file or position.
struct Bare<'a>(&'a ScenarioError);

impl std::fmt::Display for Bare<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let e = self.0;
        f.write_str(&e.message)?;
        if let Some(expected) = &e.expected {
            write!(f, ", expected {expected}")?;
        }
        if let Some(suggestion) = &e.suggestion {
            write!(f, " (did you mean `{suggestion}`?)")?;
        }
        Ok(())
    }
}

/// Positions of every node of `src`, from a pass that tolerates duplicate keys.
pub(crate) fn source_info(src: &str, name: &str, format: &dyn Format) -> SourceInfo {
    SourceInfo::from_source(src, name, lenient_options(), format)
}

/// The error for `src`, which stops being UTF-8 where `e` says: located at the first invalid
/// byte (its column counted in characters, as every location is), with its byte offset.
pub(crate) fn invalid_utf8(src: &[u8], e: &std::str::Utf8Error, name: &str) -> ScenarioError {
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
    format: &dyn Format,
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
    let info = source_info(src, file, format);
    if truncated {
        // A duplicate key is found before serde sees the key, so the path stops at its
        // mapping; the location pass names the entry at the error's position.
        if let Some(p) = location.and_then(|at| info.path_at(at)) {
            path = p.to_string();
        }
    }
    let message = bare_message(e);
    let token = location.and_then(|at| syntax::token_at(src, at));
    let reworded = reword(&message, path, token, &options(), format);
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
    failure: embedded::FailedDocument,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

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
