//! Located scenario errors: `file:line:col path: message`.

use std::borrow::Cow;
use std::fmt;

pub(crate) use super::suggest::did_you_mean;

/// A 1-based line and column in a scenario file.
///
/// ```
/// use retrylab::scenario::Location;
///
/// let at = Location::new(3, 5);
/// assert_eq!((at.line, at.column), (3, 5));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub struct Location {
    /// Line, from 1.
    pub line: u32,
    /// Column in characters, from 1.
    pub column: u32,
}

impl Location {
    /// A location at `line`, `column` (both from 1).
    pub const fn new(line: u32, column: u32) -> Self {
        Location { line, column }
    }
}

/// One problem in a scenario, with where it is and what was expected there.
///
/// It renders as `file:line:col path: message`, then `, expected ...` and
/// `(did you mean `x`?)` when known. `line` and `column` are 1-based; both are 0 for a
/// scenario built in code, which has no file position (the rendering is then
/// `file path: message`).
///
/// ```
/// use retrylab::scenario::Scenario;
///
/// let err = Scenario::from_yaml_str("version: 1\nnmae: x\n", "x.yaml").unwrap_err();
/// let first = &err.0[0];
/// assert_eq!((first.line, first.column), (2, 1));
/// assert_eq!(first.suggestion.as_deref(), Some("name"));
/// assert!(first.to_string().starts_with("x.yaml:2:1 nmae: unknown key `nmae`"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScenarioError {
    /// The file name as given to [`Scenario::load`](crate::scenario::Scenario::load) or
    /// [`Scenario::from_yaml_str`](crate::scenario::Scenario::from_yaml_str).
    pub file: String,
    /// Line, from 1 (0 when unknown).
    pub line: u32,
    /// Column, from 1 (0 when unknown).
    pub column: u32,
    /// Field path such as `client.exponential.jitter` or `expect.gaps[1]` (empty for the
    /// document itself).
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// What was expected there, when that can be said.
    pub expected: Option<String>,
    /// A likely intended spelling, for misspelled keys, policies and names.
    pub suggestion: Option<String>,
    /// The cargo feature of retrylab this build lacks, when that is what the error says: the
    /// scenario is sound, and a build with the feature runs it
    /// ([`ScenarioErrors::lacking_feature`]).
    pub lacking_feature: Option<&'static str>,
}

impl ScenarioError {
    /// An error at `location` (or without one) about `path`.
    ///
    /// ```
    /// use retrylab::scenario::{Location, ScenarioError};
    ///
    /// let e = ScenarioError::new("a.yaml", Some(Location::new(2, 3)), "seed", "too large")
    ///     .with_expected("a number below 2^64");
    /// assert_eq!(e.to_string(), "a.yaml:2:3 seed: too large, expected a number below 2^64");
    /// ```
    pub fn new(
        file: impl Into<String>,
        location: Option<Location>,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        let location = location.unwrap_or_default();
        ScenarioError {
            file: file.into(),
            line: location.line,
            column: location.column,
            path: clipped(path.into()),
            message: clipped(message.into()),
            expected: None,
            suggestion: None,
            lacking_feature: None,
        }
    }

    /// The same error, saying what was expected.
    pub fn with_expected(mut self, expected: impl Into<String>) -> Self {
        self.expected = Some(clipped(expected.into()));
        self
    }

    /// The same error, with a did-you-mean suggestion.
    pub fn with_suggestion(mut self, suggestion: Option<String>) -> Self {
        self.suggestion = suggestion;
        self
    }

    /// The same error, saying that it is all retrylab's cargo feature `feature` would fix.
    pub(crate) fn lacking(mut self, feature: &'static str) -> Self {
        self.lacking_feature = Some(feature);
        self
    }

    /// Where the error is, when known.
    pub fn location(&self) -> Option<Location> {
        (self.line > 0).then_some(Location::new(self.line, self.column))
    }
}

/// The errors reported for one file: the first ones by position, then one line counting the
/// rest, so a file of 150,000 mistakes prints 51 lines.
pub const MAX_REPORTED_ERRORS: usize = 50;

/// The most bytes of a path, message or expectation an error keeps. What a file wrote is
/// quoted whole up to this, then cut short with `…`: an endpoint name of megabytes would
/// otherwise be copied into the path of every error about its steps (an 8 MB file asked for
/// 8 GB of errors, and printed 400 MB).
const MAX_ERROR_TEXT: usize = 4096;

/// `text`, cut to [`MAX_ERROR_TEXT`] bytes on a character boundary, with `…` when cut.
fn clipped(mut text: String) -> String {
    if text.len() > MAX_ERROR_TEXT {
        let mut end = MAX_ERROR_TEXT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

impl fmt::Display for ScenarioError {
    /// Every part is shown through `visible`: the messages quote what the file wrote (keys,
    /// values, names), and an invisible character in it would make `seed\u{200b}` read as
    /// `seed`. Escaping here, where every error and warning is rendered, covers each quote.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&visible(&self.file))?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if self.path.is_empty() {
            f.write_str(":")?;
        } else {
            write!(f, " {}:", visible(&self.path))?;
        }
        write!(f, " {}", visible(&self.message))?;
        if let Some(expected) = &self.expected {
            write!(f, ", expected {}", visible(expected))?;
        }
        if let Some(suggestion) = &self.suggestion {
            write!(f, " (did you mean `{}`?)", visible(suggestion))?;
        }
        Ok(())
    }
}

/// `text` with every character a reader cannot see written as a Rust escape: `\u{200b}`
/// for a zero-width space, `\u{feff}` for a byte-order mark, `\t`, `\n`, `\r` and `\0` for
/// those controls. Unchanged (and not copied) when there is none.
///
/// Invisible are the control characters, the format characters (zero-width spaces and
/// joiners, direction marks and overrides, the byte-order mark, the soft hyphen, ...),
/// every space other than U+0020 (a no-break space looks like a space but is not one), the
/// line and paragraph separators, the variation selectors and the fillers that render as
/// nothing.
pub(crate) fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_invisible) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            c if is_invisible(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` shows nothing, or only blank space that is not a plain space (see [`visible`]).
fn is_invisible(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(
            c as u32,
            // Soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul fillers,
            // Mongolian vowel separator and free variation selectors.
            0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F
            // Zero-width space, joiners, direction marks; embeddings and overrides; word
            // joiner, invisible operators, isolates and deprecated format characters.
            | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F
            // Hangul filler, variation selectors, byte-order mark, halfwidth filler,
            // interlinear annotation and object replacement characters.
            | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0 | 0xFFF9..=0xFFFC
            // Shorthand format controls, musical symbol formatting, tags, variation
            // selectors supplement.
            | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0000..=0xE007F | 0xE0100..=0xE01EF
        )
}

impl std::error::Error for ScenarioError {}

/// Every problem found in one scenario, sorted by position.
///
/// Parsing stops at the first error (one entry); validation reports every cross-field error
/// at once. It renders as one error per line.
///
/// ```
/// use retrylab::scenario::Scenario;
///
/// let yaml = "version: 1\nname: x\nendpoints: { api: { script: [ { status: 200, times: 0 } ] } }\n\
///             operation: { endpoint: apj }\n";
/// let errors = Scenario::from_yaml_str(yaml, "x.yaml").unwrap_err();
/// assert_eq!(errors.len(), 2);
/// assert!(errors.to_string().contains("operation.endpoint"));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScenarioErrors(pub Vec<ScenarioError>);

impl ScenarioErrors {
    /// How many errors there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The errors, in order of position.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let errors = Scenario::from_yaml_str("version: 1\n", "x.yaml").unwrap_err();
    /// assert_eq!(errors.iter().count(), errors.len());
    /// ```
    pub fn iter(&self) -> std::slice::Iter<'_, ScenarioError> {
        self.0.iter()
    }

    /// The cargo feature of retrylab a scenario needs and this build lacks, when that is all
    /// these errors say: the file is sound, and a build with the feature runs it. A suite
    /// lists such a file as ignored and the CLI skips it, rather than failing it.
    ///
    /// ```
    /// use retrylab::scenario::Scenario;
    ///
    /// let yaml = "version: 1\nname: x\nbackend: turmoil\nendpoints: { api: {} }\n\
    ///             operation: { endpoint: api }\n";
    /// match Scenario::from_yaml_str(yaml, "x.yaml") {
    ///     Ok(_) => assert!(cfg!(feature = "turmoil")),
    ///     Err(errors) => assert_eq!(errors.lacking_feature(), Some("turmoil")),
    /// }
    /// let typo = Scenario::from_yaml_str("version: 1\n", "x.yaml").unwrap_err();
    /// assert_eq!(typo.lacking_feature(), None);
    /// ```
    pub fn lacking_feature(&self) -> Option<&'static str> {
        let feature = self.0.first()?.lacking_feature?;
        self.iter()
            .all(|e| e.lacking_feature == Some(feature))
            .then_some(feature)
    }

    /// Sorts by (line, column, path) so errors read top to bottom; unlocated ones come last.
    pub(crate) fn sorted(mut errors: Vec<ScenarioError>) -> Self {
        errors.sort_by(|a, b| {
            let key = |e: &ScenarioError| (e.line == 0, e.line, e.column);
            key(a).cmp(&key(b)).then_with(|| a.path.cmp(&b.path))
        });
        errors.dedup();
        ScenarioErrors(errors)
    }

    /// [`ScenarioErrors::sorted`], cut to the first
    /// [`MAX_REPORTED_ERRORS`] by position, with one more error,
    /// where the first one left out is, counting those left out: a file with a mistake
    /// repeated 150,000 times prints 51 lines, not 78 MB.
    pub(crate) fn reported(errors: Vec<ScenarioError>) -> Self {
        ScenarioErrors::capped(errors, "errors")
    }

    /// [`ScenarioErrors::reported`] for problems called `noun` (`warnings`).
    pub(crate) fn capped(errors: Vec<ScenarioError>, noun: &str) -> Self {
        let mut errors = ScenarioErrors::sorted(errors).0;
        let cap = MAX_REPORTED_ERRORS;
        if let Some(first_left_out) = errors.get(cap) {
            let more = errors.len() - cap;
            let summary = ScenarioError::new(
                first_left_out.file.clone(),
                first_left_out.location(),
                "",
                format!(
                    "{more} more {noun} from here on are not shown (at most {cap} {noun} are \
                     reported, the first by position)"
                ),
            );
            errors.truncate(cap);
            errors.push(summary);
        }
        ScenarioErrors(errors)
    }
}

impl From<ScenarioError> for ScenarioErrors {
    fn from(e: ScenarioError) -> Self {
        ScenarioErrors(vec![e])
    }
}

impl IntoIterator for ScenarioErrors {
    type Item = ScenarioError;
    type IntoIter = std::vec::IntoIter<ScenarioError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a ScenarioErrors {
    type Item = &'a ScenarioError;
    type IntoIter = std::slice::Iter<'a, ScenarioError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Display for ScenarioErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioErrors {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invisible_characters_are_escaped() {
        assert_eq!(visible("seed"), "seed");
        assert!(matches!(visible("caf\u{e9} \u{1f600}"), Cow::Borrowed(_)));
        assert_eq!(visible("\u{feff}version"), "\\u{feff}version");
        assert_eq!(visible("a\u{a0}b\u{2028}c"), "a\\u{a0}b\\u{2028}c");
        assert_eq!(visible("x\u{7f}\u{85}\u{202e}"), "x\\u{7f}\\u{85}\\u{202e}");
        let e = ScenarioError::new(
            "f.yaml",
            Some(Location::new(1, 1)),
            "seed\u{200b}",
            "unknown key `seed\u{200b}`",
        )
        .with_suggestion(Some("seed".into()));
        assert_eq!(
            e.to_string(),
            "f.yaml:1:1 seed\\u{200b}: unknown key `seed\\u{200b}` (did you mean `seed`?)"
        );
    }

    #[test]
    fn long_texts_are_cut_short() {
        let name = "é".repeat(5000);
        let e = ScenarioError::new("f.yaml", None, format!("endpoints.{name}"), name.clone())
            .with_expected(name.clone());
        for text in [&e.path, &e.message, e.expected.as_ref().unwrap_or(&name)] {
            assert!(
                text.len() <= MAX_ERROR_TEXT + '…'.len_utf8(),
                "{}",
                text.len()
            );
            assert!(text.ends_with("é…"), "{}", &text[text.len() - 10..]);
        }
        let short = ScenarioError::new("f.yaml", None, "seed", "too large");
        assert_eq!(
            (short.path.as_str(), short.message.as_str()),
            ("seed", "too large")
        );
    }

    #[test]
    fn display() {
        let e = ScenarioError::new("f.yaml", Some(Location::new(1, 2)), "", "empty");
        assert_eq!(e.to_string(), "f.yaml:1:2: empty");
        let e = ScenarioError::new("<code>", None, "seed", "bad").with_suggestion(Some("x".into()));
        assert_eq!(e.to_string(), "<code> seed: bad (did you mean `x`?)");
    }
}
