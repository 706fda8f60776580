//! What the reader asks of the format it reads. The reader knows YAML and no key of any
//! format; these are the few places where a parser's message reads better in the format's own
//! words, or where a field is read differently, and the format says so here.

/// The format a text is read as, seen from the reader.
pub(crate) trait Format: Sync {
    /// Whether the node at `path` may be a document written as a string, read like the
    /// mapping its text holds.
    fn is_document(&self, path: &str) -> bool;

    /// The message for the unknown key `name` in the mapping at `parent`, when the format
    /// has something more useful to say than "unknown key" (the key belongs elsewhere).
    fn unknown_key(&self, parent: &str, name: &str) -> Option<String>;

    /// What the values of the enum at `path` are called in messages: `value` unless the
    /// format names them (a `policy`).
    fn variant_noun(&self, path: &str) -> &'static str;

    /// The format's own upper limit on the whole number under `key`, and its unit: quoted
    /// instead of the Rust type's when a number is past both.
    fn documented_limit(&self, key: &str) -> Option<(u64, &'static str)>;

    /// A hint for a key written twice in the mapping at `path`.
    fn duplicate_key_hint(&self, path: &str) -> Option<&'static str>;
}
