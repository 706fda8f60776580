//! Where each field of a parsed file came from, so errors found after parsing (by
//! validation, or by a runner that meets a feature it lacks) still point into the file.
//!
//! The map is built by a second pass over the same text into a small tree of
//! [`serde_saphyr::Spanned`] nodes; a scenario is a few kilobytes, so the extra pass is cheap
//! and keeps the typed model free of location wrappers.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use super::embedded::TextMap;
use super::error::Location;
use super::format::Format;
use super::syntax;

/// Positions of one node: its key (for mapping entries) and its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NodeLocation {
    pub(crate) key: Option<Location>,
    pub(crate) value: Location,
}

/// The file a scenario came from and a map from field paths to positions in it.
///
/// Paths are written as in errors: `client.exponential.jitter`, `expect.gaps[1]`.
/// Source information never takes part in equality: two scenarios are equal when they say the
/// same thing, wherever they were written.
///
/// ```
/// use retrylab::scenario::Scenario;
///
/// let yaml = "version: 1\nname: x\nendpoints:\n  api: {}\noperation:\n  endpoint: api\n";
/// let s = Scenario::from_yaml_str(yaml, "x.yaml").unwrap();
/// assert_eq!(s.source.file, "x.yaml");
/// let at = s.locate("operation.endpoint").unwrap();
/// assert_eq!((at.line, at.column), (6, 13));
/// ```
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct SourceInfo {
    /// The file name given when loading (`<code>` for scenarios built in code).
    pub file: String,
    pub(crate) nodes: BTreeMap<String, NodeLocation>,
    /// How the file writes each number that is not finite, by position (see
    /// `SourceInfo::as_written`).
    written: BTreeMap<Location, String>,
    /// The directory of the file the scenario was read from: what paths the file writes
    /// (a command client's `cwd`) are relative to. `None` for text or code.
    dir: Option<std::path::PathBuf>,
}

impl fmt::Debug for SourceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SourceInfo")
            .field("file", &self.file)
            .field("nodes", &self.nodes.len())
            .finish()
    }
}

impl PartialEq for SourceInfo {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl SourceInfo {
    /// Source information for a scenario with no file (built in code).
    ///
    /// ```
    /// use retrylab::scenario::SourceInfo;
    /// assert_eq!(SourceInfo::code("<code>").locate("name"), None);
    /// ```
    pub fn code(name: impl Into<String>) -> Self {
        SourceInfo {
            file: name.into(),
            nodes: BTreeMap::new(),
            written: BTreeMap::new(),
            dir: None,
        }
    }

    /// The directory of the file the scenario was read from (by [`Scenario::load`]), which
    /// relative paths in it are relative to; `None` for a scenario read from text or built in
    /// code.
    ///
    /// [`Scenario::load`]: crate::scenario::Scenario::load
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let s = Scenario::load("../scenarios/http/5xx-burst-then-success.yaml").unwrap();
    /// assert_eq!(s.source.dir(), Some(std::path::Path::new("../scenarios/http")));
    /// ```
    pub fn dir(&self) -> Option<&std::path::Path> {
        self.dir.as_deref()
    }

    /// Records the directory of the file the scenario was read from.
    pub(crate) fn set_dir(&mut self, dir: &std::path::Path) {
        self.dir = Some(dir.to_path_buf());
    }

    /// Records every node of `src`. Text that does not parse gives an empty map: locations
    /// are a help for messages, never a reason to fail.
    pub(crate) fn from_source(
        src: &str,
        file: &str,
        options: serde_saphyr::Options,
        format: &dyn Format,
    ) -> Self {
        let mut info = SourceInfo::code(file);
        let tree: Result<Spanned<Node>, _> =
            serde_saphyr::from_str_with_options(src, options.clone());
        if let Ok(root) = tree {
            let mut recorder = Recorder {
                src,
                options: &options,
                format,
                info: &mut info,
                budget: PATH_BYTES,
            };
            recorder.record(&root, "", None);
        }
        info
    }

    /// `message`, about the node at `at`, quoting a number that is not finite as the file
    /// writes it. serde-saphyr hands such a number to a visitor as the text `.nan` or
    /// `.inf`, and Rust prints it `NaN` or `inf`, so a file saying `NaN` or `Infinity` was
    /// told about `.nan` or `inf`.
    pub(crate) fn as_written(&self, at: Option<Location>, message: String) -> String {
        let Some(written) = at.and_then(|at| self.written.get(&at)) else {
            return message;
        };
        let Some(number) = NonFinite::of(written) else {
            return message;
        };
        let mut message = message;
        for shown in number.renderings() {
            // A string is what serde calls it; it is a number as written.
            let named = message.replace(&format!("string \"{shown}\""), &format!("`{written}`"));
            message = replace_word(&named, shown, written);
        }
        message
    }

    /// The position of the value at `path`, if the file wrote it.
    pub fn locate(&self, path: &str) -> Option<Location> {
        self.nodes.get(path).map(|n| n.value)
    }

    /// The position of the key at `path` (the value's, for list items).
    pub fn locate_key(&self, path: &str) -> Option<Location> {
        self.nodes.get(path).map(|n| n.key.unwrap_or(n.value))
    }

    /// The position of `path`, or of its nearest written ancestor: a defaulted field is
    /// reported where its parent is.
    pub(crate) fn locate_nearest(&self, path: &str, key: bool) -> Option<Location> {
        let mut current = path;
        loop {
            let found = if key {
                self.locate_key(current)
            } else {
                self.locate(current)
            };
            if found.is_some() {
                return found;
            }
            if current.is_empty() {
                return None;
            }
            current = parent_path(current);
        }
    }

    /// The path of the entry whose key or value starts at `at`, deepest first.
    pub(crate) fn path_at(&self, at: Location) -> Option<&str> {
        self.nodes
            .iter()
            .filter(|(_, n)| n.key == Some(at) || n.value == at)
            .max_by_key(|(p, _)| p.len())
            .map(|(p, _)| p.as_str())
    }
}

/// A number that is not finite, as YAML and Rust spell it.
#[derive(Clone, Copy)]
enum NonFinite {
    NaN,
    Infinity,
    NegativeInfinity,
}

impl NonFinite {
    /// What `text`, a plain scalar, reads as: serde-saphyr reads `.nan` and `.inf` in any
    /// case and sign, and hands anything else to Rust, which also reads `NaN`, `inf`,
    /// `infinity` and numbers too large for a float (`1e400`).
    fn of(text: &str) -> Option<NonFinite> {
        let lower = text.to_ascii_lowercase();
        let value = match lower.as_str() {
            ".nan" | "+.nan" | "-.nan" => f64::NAN,
            ".inf" | "+.inf" => f64::INFINITY,
            "-.inf" => f64::NEG_INFINITY,
            _ => text.parse::<f64>().ok()?,
        };
        if value.is_nan() {
            Some(NonFinite::NaN)
        } else if value == f64::INFINITY {
            Some(NonFinite::Infinity)
        } else if value == f64::NEG_INFINITY {
            Some(NonFinite::NegativeInfinity)
        } else {
            None
        }
    }

    /// How messages may show it: serde-saphyr's canonical YAML, and Rust's `Display`.
    fn renderings(self) -> [&'static str; 2] {
        match self {
            NonFinite::NaN => [".nan", "NaN"],
            NonFinite::Infinity => [".inf", "inf"],
            NonFinite::NegativeInfinity => ["-.inf", "-inf"],
        }
    }
}

/// `text` with every `word` that stands alone (not inside a longer word or number)
/// replaced by `with`.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let is_word = |c: char| c.is_alphanumeric() || matches!(c, '.' | '-' | '+' | '_');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(word) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + word.len()..].chars().next();
        out.push_str(&rest[..i]);
        if before.is_some_and(is_word) || after.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            out.push_str(word);
        } else {
            out.push_str(with);
        }
        rest = &rest[i + word.len()..];
    }
    out.push_str(rest);
    out
}

/// `a.b[2]` -> `a.b`, `a.b` -> `a`, `a` -> the empty path.
pub(crate) fn parent_path(path: &str) -> &str {
    match path.rfind(['.', '[']) {
        Some(i) => &path[..i],
        None => "",
    }
}

/// `join("a", "b")` is `a.b`; at the root it is `b`.
pub(crate) fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// `index("a.b", 2)` is `a.b[2]`.
pub(crate) fn index(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

fn to_location(l: &serde_saphyr::Location) -> Location {
    Location::new(
        u32::try_from(l.line()).unwrap_or(u32::MAX),
        u32::try_from(l.column()).unwrap_or(u32::MAX),
    )
}

/// The bytes of paths the map may hold. Each node's full path is kept, so a deep chain of
/// long keys above a long list would cost the depth times the keys for every item (a
/// 360 KB file asked for 9 GB); past this budget, nodes are not recorded, and an error
/// about one is located at its nearest recorded ancestor. Real scenarios use a few
/// kilobytes.
const PATH_BYTES: usize = 32 * 1024 * 1024;

/// Fills the source information of `src` from a tree of its nodes.
struct Recorder<'a> {
    src: &'a str,
    options: &'a serde_saphyr::Options,
    /// Which strings hold documents.
    format: &'a dyn Format,
    info: &'a mut SourceInfo,
    /// What is left of [`PATH_BYTES`].
    budget: usize,
}

impl Recorder<'_> {
    fn record(&mut self, node: &Spanned<Node>, path: &str, key: Option<Location>) {
        let Some(left) = self.budget.checked_sub(path.len()) else {
            return;
        };
        self.budget = left;
        let value = to_location(&node.referenced);
        self.info
            .nodes
            .insert(path.to_string(), NodeLocation { key, value });
        match &node.value {
            Node::Leaf => {}
            Node::NonFinite => {
                if let Some(token) = syntax::token_at(self.src, value) {
                    if NonFinite::of(token).is_some() {
                        self.info.written.insert(value, token.to_owned());
                    }
                }
            }
            Node::Text(text) => self.document(text, path, value),
            Node::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    // Checked before the path is built (`[i]` is at most 22 bytes), so a long
                    // one costs nothing once the budget is spent.
                    if path.len() + 22 > self.budget {
                        break;
                    }
                    self.record(item, &index(path, i), None);
                }
            }
            Node::Map(entries) => {
                for (k, v) in entries {
                    if path.len() + k.value.0.len() + 1 > self.budget {
                        continue;
                    }
                    self.record(v, &join(path, &k.value.0), Some(to_location(&k.referenced)));
                }
            }
        }
    }

    /// The nodes of a document written as the string `text` at `path` (see
    /// [`embedded`](super::embedded)), placed where the string's text is in the file, or
    /// at the string when its text cannot be placed.
    fn document(&mut self, text: &str, path: &str, at: Location) {
        if !self.format.is_document(path) {
            return;
        }
        let inner =
            SourceInfo::from_source(text, &self.info.file, self.options.clone(), self.format);
        let map = TextMap::of(self.src, at, text);
        let place = |l: Location| map.as_ref().and_then(|m| m.locate(l)).unwrap_or(at);
        for (inner_path, node) in inner.nodes {
            if inner_path.is_empty() {
                continue;
            }
            let located = NodeLocation {
                key: node.key.map(place),
                value: place(node.value),
            };
            self.info.nodes.insert(join(path, &inner_path), located);
        }
    }
}

/// A YAML node reduced to its shape; scalars are not kept, but for a string that may hold a
/// JSON document (it starts with `{`), whose nodes are placed too.
enum Node {
    Leaf,
    /// A plain number that is not finite (which serde-saphyr hands over as `.nan`, `.inf`).
    NonFinite,
    Text(String),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(Spanned<Key>, Spanned<Node>)>),
}

/// A mapping key as text (complex keys become `?`).
struct Key(String);

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any YAML node")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_i128<E: de::Error>(self, _: i128) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_u128<E: de::Error>(self, _: u128) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Node, E> {
                Ok(if matches!(v, ".nan" | ".inf" | "-.inf") {
                    Node::NonFinite
                } else if v.trim_start().starts_with('{') {
                    Node::Text(v.to_owned())
                } else {
                    Node::Leaf
                })
            }
            fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_none<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                Node::deserialize(d)
            }
            fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                Node::deserialize(d)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Spanned<Node>>()? {
                    items.push(item);
                }
                Ok(Node::Seq(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<Key>>()? {
                    let value = map.next_value::<Spanned<Node>>()?;
                    entries.push((key, value));
                }
                Ok(Node::Map(entries))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping key")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Key, E> {
                Ok(Key("~".to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Key, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Key("?".to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Key, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Key("?".to_string()))
            }
        }
        deserializer.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_keys_values_and_items() {
        let src = "a:\n  b: [1, {c: 2}]\nd: x\n";
        let info = SourceInfo::from_source(
            src,
            "f",
            crate::scenario::yaml::parse::options(),
            &crate::scenario::model::format::SCENARIO,
        );
        assert_eq!(info.locate("a.b"), Some(Location::new(2, 6)));
        assert_eq!(info.locate_key("a.b"), Some(Location::new(2, 3)));
        assert_eq!(info.locate("a.b[1].c"), Some(Location::new(2, 14)));
        assert_eq!(info.locate("d"), Some(Location::new(3, 4)));
        assert_eq!(
            info.locate_nearest("a.b[1].zz", false),
            Some(Location::new(2, 10))
        );
        assert_eq!(info.path_at(Location::new(3, 1)), Some("d"));
    }

    /// Every node kept its full path: 60 levels of 1,000-character keys above a list of
    /// 5,000 items asked for 300 MB of paths (a 360 KB file of 150,000 items, for 9 GB).
    /// The map now holds at most its budget, and the first nodes are still located.
    #[test]
    fn long_paths_are_recorded_within_a_budget() {
        let key = "k".repeat(1000);
        let mut src = String::new();
        for level in 0..60 {
            src.push_str(&format!("{key}{level}: {{"));
        }
        src.push_str(&format!("z: [{}]", vec!["0"; 5000].join(",")));
        src.push_str(&"}".repeat(60));
        let info = SourceInfo::from_source(
            &src,
            "f",
            crate::scenario::yaml::parse::options(),
            &crate::scenario::model::format::SCENARIO,
        );
        let bytes: usize = info.nodes.keys().map(String::len).sum();
        assert!(bytes <= PATH_BYTES, "{bytes} bytes of paths");
        assert_eq!(
            info.locate_key(&format!("{key}0")),
            Some(Location::new(1, 1))
        );
        assert!(info.nodes.len() > 60, "{} nodes", info.nodes.len());
    }

    #[test]
    fn only_whole_words_are_requoted() {
        assert_eq!(
            replace_word("x inf, -inf, info .inf", "inf", "Inf"),
            "x Inf, -inf, info .inf"
        );
    }

    #[test]
    fn paths() {
        assert_eq!(parent_path("a.b[2]"), "a.b");
        assert_eq!(parent_path("a.b"), "a");
        assert_eq!(parent_path("a"), "");
        assert_eq!(join("", "a"), "a");
        assert_eq!(index("a", 1), "a[1]");
    }
}
