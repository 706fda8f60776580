//! A parser's or serde's message in the words of the file's author: what was found, what
//! was expected, and the known name a misspelled one most likely meant.

use super::error::did_you_mean;
use super::format::Format;
use super::locations::{join, parent_path};
use super::parser_messages;

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
pub(crate) struct Reworded {
    pub(crate) message: String,
    pub(crate) expected: Option<String>,
    pub(crate) suggestion: Option<String>,
    pub(crate) path: String,
    /// Set for an unknown key, which the path then ends with.
    pub(crate) unknown_key: Option<String>,
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
/// the text the file has where the error is, when known; `options` are the parser's, whose
/// limits a message may quote.
pub(crate) fn reword(
    msg: &str,
    path: String,
    token: Option<&str>,
    options: &serde_saphyr::Options,
    format: &dyn Format,
) -> Reworded {
    if let Some(plain) = parser_messages::reword(msg, token, options) {
        return Reworded::new(plain.message, plain.expected, path);
    }
    if let Some(rest) = msg.strip_prefix("unknown field ") {
        return unknown_key(rest, path, format);
    }
    if let Some(rest) = msg.strip_prefix("unknown variant ") {
        return unknown_variant(rest, path, format);
    }
    if let Some(rest) = msg.strip_prefix("missing field ") {
        let name = ticked(rest).unwrap_or(rest);
        let full = join(&path, name);
        return Reworded::new(format!("missing required key `{name}`"), None, full);
    }
    if let Some(rest) = msg.strip_prefix("duplicate mapping key") {
        let name = rest.trim_start_matches(':').trim();
        let hint = format
            .duplicate_key_hint(&path)
            .map_or_else(String::new, |hint| format!(" ({hint})"));
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
    if let Some(reworded) = msg
        .strip_prefix("invalid ")
        .and_then(|t| invalid_scalar(t, &path, token, format))
    {
        return reworded;
    }
    if let Some(reworded) = enum_shape(msg, &path) {
        return reworded;
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

/// serde's "unknown field `name`, expected one of ...": the key, the keys the mapping takes
/// and the one most likely meant, or what the format says of a key that belongs elsewhere.
fn unknown_key(rest: &str, path: String, format: &dyn Format) -> Reworded {
    let name = ticked(rest).unwrap_or(rest).to_string();
    let known = listed(rest);
    // Keys read by retrylab's own visitors are not in serde's path yet.
    let path = if path.rsplit(['.', ']']).next() == Some(name.as_str()) {
        path
    } else {
        join(&path, &name)
    };
    if let Some(message) = format.unknown_key(parent_path(&path), &name) {
        let mut r = Reworded::new(message, None, path);
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
    r
}

/// serde's "unknown variant `name`, expected ...": a value the enum does not have (or none
/// at all), in the format's word for the enum's values.
fn unknown_variant(rest: &str, path: String, format: &dyn Format) -> Reworded {
    let name = ticked(rest).unwrap_or(rest).to_string();
    let known = listed(rest);
    let expected = (!known.is_empty()).then(|| format!("one of {}", quote_all(&known)));
    if matches!(name.as_str(), "~" | "" | "null" | "Null" | "NULL") {
        return Reworded::new("no value given", expected, path);
    }
    let what = format.variant_noun(&path);
    let suggestion = did_you_mean(&name, known.iter().map(String::as_str));
    let mut r = Reworded::new(format!("unknown {what} `{name}`"), expected, path);
    r.suggestion = suggestion;
    r
}

/// "invalid u32" and its kin (`t` is what follows "invalid "): a number or a boolean that
/// does not read as its type, or a whole number past the format's own limit for its key.
fn invalid_scalar(
    t: &str,
    path: &str,
    token: Option<&str>,
    format: &dyn Format,
) -> Option<Reworded> {
    let path_owned = || path.to_owned();
    // A whole number past its type, where the format has a lower limit of its own: that
    // limit, not the type's, is the one to quote.
    let key = path.rsplit(['.', ']']).next().unwrap_or(path).to_owned();
    let past_limit = token
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .zip(format.documented_limit(&key));
    if let (Some(_), Some((written, (cap, unit)))) = (unsigned_range(t), past_limit) {
        return Some(Reworded::new(
            format!("`{key}: {written}`, over the limit of the format"),
            Some(format!("at most {cap} {unit}")),
            path_owned(),
        ));
    }
    let (message, expected) = if let Some(range) = unsigned_range(t) {
        ("invalid number", range)
    } else if matches!(t, "i8" | "i16" | "i32" | "i64") {
        ("invalid number", plain_type(t))
    } else if t.starts_with("floating point") {
        ("invalid number", "a number".to_owned())
    } else if t.starts_with("YAML 1.1 bool") || t.starts_with("boolean") {
        ("invalid boolean", "`true` or `false`".to_owned())
    } else {
        return None;
    };
    Some(Reworded::new(message, Some(expected), path_owned()))
}

/// Messages about the shape of an externally tagged enum (`client: { exponential: ... }`)
/// or of the document: parameters given to a word, a second key, an empty mapping, nothing.
fn enum_shape(msg: &str, path: &str) -> Option<Reworded> {
    let single = "a mapping with a single key, such as `{ exponential: { ... } }`";
    if msg.starts_with("unexpected value for unit enum variant") {
        let variant = path.rsplit('.').next().unwrap_or("").to_string();
        return Some(Reworded::new(
            format!("`{variant}` takes no parameters"),
            Some(format!("`{variant}` alone")),
            path.to_owned(),
        ));
    }
    if msg.starts_with("expected end of mapping after enum variant value") {
        return Some(Reworded::new(
            "only one key is allowed here",
            Some(single.to_owned()),
            parent_path(path).to_string(),
        ));
    }
    if msg.starts_with("expected string key for externally tagged enum") {
        return Some(Reworded::new(
            "empty mapping",
            Some(single.to_owned()),
            path.to_owned(),
        ));
    }
    if let Some(rest) = msg.strip_prefix("cannot deserialize null into ") {
        let what = rest.split(';').next().unwrap_or(rest);
        return Some(Reworded::new(
            "no value given",
            Some(plain_type(what)),
            path.to_owned(),
        ));
    }
    if msg.starts_with("externally tagged enum expected") {
        return Some(Reworded::new(
            "wrong type",
            Some("a word or a mapping with a single key, such as `{ at_least: 2s }`".into()),
            path.to_owned(),
        ));
    }
    if msg.starts_with("multiple YAML documents detected") {
        return Some(Reworded::new(
            "more than one YAML document",
            Some("a single scenario per file".into()),
            path.to_owned(),
        ));
    }
    None
}
