//! What a scenario's YAML text may hold, checked before the text is parsed: what the YAML
//! parser accepts silently, or refuses for the wrong reason.
//!
//! - **Characters YAML forbids.** A YAML stream holds printable characters only: tab, line
//!   breaks and everything from U+0020 on, except DEL, the C1 controls other than U+0085,
//!   U+FFFE and U+FFFF. The parser skips a NUL in a comment and reads one in a quoted value
//!   as an unclosed quote; each forbidden character is an error at its position instead.
//! - **Content after `...`.** serde-saphyr stops reading at the end of the first document,
//!   so what follows `...` was never read, nor reported when it was not a whole document.
//!   After a line `...` only blank lines, comments and further `...` lines may follow.
//! - **Tags.** serde-saphyr applies `!!binary` (base64-decoding the value), lets `!!str 7`
//!   be a number and ignores every other tag, so a tag never says what it seems to. A
//!   scenario takes no tag: each one is an error asking to remove it.
//! - **A tab after `:`.** YAML separates a value from its `:` by spaces or tabs, but the
//!   parser refuses `key:<tab>value`. Such a tab is read as a space: one byte for one, so no
//!   position moves. A tab after `:` inside a quoted or block value is part of the value and
//!   stays.
//! - **Long keys.** A key written without `?` may have at most 1024 characters; the parser
//!   then reads a longer one as a value, and the error it gives later names the wrong thing.
//!   This is looked for only once the parse failed, and only in a file with a long line.
//!
//! One pass over the bytes finds what may be there; the parser's events are read only for a
//! file that may hold a tag or has a tab after `:`. In a debug build the parser's generic
//! code is compiled with the harness's, unoptimized, so reading its events costs about a
//! second per few megabytes: a pass every file paid would slow every test.

use std::borrow::Cow;

use saphyr_parser_bw::{Event, Parser, Span, Tag};

use super::error::{Location, ScenarioError};

/// YAML's limit on the length of an implicit key (one written without `?`).
const IMPLICIT_KEY_CHARS: usize = 1024;

/// The text to parse, and the first problem of the file, if any. The problem is kept apart
/// so that a file written for another format version is told that first.
pub(crate) struct Prepared<'a> {
    /// `src` with every tab that separates a value from its `:` read as a space.
    pub(crate) text: Cow<'a, str>,
    /// The first problem, by position.
    pub(crate) problem: Option<ScenarioError>,
}

/// Checks `src` (the file `file`) for what the parser would accept silently or misreport.
pub(crate) fn prepare<'a>(src: &'a str, file: &str) -> Prepared<'a> {
    let survey = Survey::of(src);
    let (text, scanned) = if survey.tag_sign || !survey.tabs.is_empty() {
        scan(src, &survey.tabs, file, Look::Tags)
    } else {
        (Cow::Borrowed(src), None)
    };
    let problem = [
        survey
            .forbidden
            .and_then(|at| forbidden_character(src, at, file)),
        survey
            .document_end
            .and_then(|at| after_document_end(src, at, file)),
        scanned,
    ]
    .into_iter()
    .flatten()
    .min_by_key(|e| (e.line, e.column));
    Prepared { text, problem }
}

/// The error for a key longer than an implicit key may be, when the parser stops on one in
/// `src` (already prepared): the typed parse, which failed, reports something else about it.
pub(crate) fn long_key(src: &str, file: &str) -> Option<ScenarioError> {
    if !src.split('\n').any(|line| line.len() > IMPLICIT_KEY_CHARS) {
        return None;
    }
    scan(src, &[], file, Look::LongKeys).1
}

/// Characters that look like YAML's `:` but are not, as an input method or a word processor
/// types them, and their names.
const COLON_LOOKALIKES: [(char, &str); 4] = [
    ('\u{ff1a}', "a fullwidth colon"),
    ('\u{fe55}', "a small colon"),
    ('\u{a789}', "a modifier letter colon"),
    ('\u{2236}', "the ratio sign"),
];

/// The error for a key written with a character that looks like `:` (`name： x`), when the
/// parse of `src` failed on line `failed_line` (from 1). The parser reads such a line as text
/// and fails on it or on the next line, about something else. A lookalike in a value, a
/// comment or a quoted string is fine, so only a failed parse looks, only on those two lines,
/// and only where no `: `, `#` or quote came first on the line.
pub(crate) fn colon_lookalike(src: &str, failed_line: usize, file: &str) -> Option<ScenarioError> {
    let mut offset = 0;
    for (index, line) in src.split('\n').enumerate().take(failed_line) {
        let start = offset;
        offset += line.len() + 1;
        if index + 2 < failed_line {
            continue;
        }
        let plain = line.find(['#', '"', '\'']).map_or(line, |cut| &line[..cut]);
        let plain = plain.find(": ").map_or(plain, |cut| &plain[..cut]);
        for (at, c) in plain.char_indices() {
            let Some((_, name)) = COLON_LOOKALIKES.iter().find(|(l, _)| *l == c) else {
                continue;
            };
            return Some(
                ScenarioError::new(
                    file,
                    Some(location_of(src, start + at)),
                    "",
                    format!(
                        "`{c}` (U+{:04X}, {name}) is not YAML's `:`, so this line holds no key",
                        c as u32
                    ),
                )
                .with_expected("`:` (U+003A) between a key and its value"),
            );
        }
    }
    None
}

/// What one pass over the bytes of a file finds, for the checks that follow.
#[derive(Default)]
struct Survey {
    /// The first byte that may start a character YAML forbids.
    forbidden: Option<usize>,
    /// The first line that is a document end marker (`...`).
    document_end: Option<usize>,
    /// Whether a `!` starts a word somewhere, as a tag does.
    tag_sign: bool,
    /// The tabs that follow a `:` directly.
    tabs: Vec<usize>,
}

impl Survey {
    fn of(src: &str) -> Survey {
        let bytes = src.as_bytes();
        let mut survey = Survey::default();
        let mut previous = b'\n';
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'\t' if previous == b':' => survey.tabs.push(i),
                b'!' if matches!(previous, b' ' | b'\t' | b'\n' | b'\r' | b'[' | b'{' | b',') => {
                    survey.tag_sign = true;
                }
                b'.' if previous == b'\n'
                    && survey.document_end.is_none()
                    && document_end(&src[i..]).is_some() =>
                {
                    survey.document_end = Some(i);
                }
                // UTF-8 leads of U+0080..U+00BF (the C1 controls among them) and of
                // U+F000..U+FFFF (U+FFFE and U+FFFF among them).
                0x00..=0x08 | 0x0B | 0x0C | 0x0E..=0x1F | 0x7F | 0xC2 | 0xEF
                    if survey.forbidden.is_none()
                        && src[i..].chars().next().is_some_and(|c| !is_printable(c)) =>
                {
                    survey.forbidden = Some(i);
                }
                _ => {}
            }
            previous = b;
        }
        survey
    }
}

/// The error for the character at byte `at`, when YAML does not allow it.
fn forbidden_character(src: &str, at: usize, file: &str) -> Option<ScenarioError> {
    let c = src
        .get(at..)?
        .chars()
        .next()
        .filter(|&c| !is_printable(c))?;
    if c == '\0' && looks_like_utf16(src.as_bytes()) {
        return Some(
            ScenarioError::new(
                file,
                Some(location_of(src, at)),
                "",
                "the file looks like UTF-16 without a byte-order mark (a NUL byte beside \
                 every character of its first line)",
            )
            .with_expected("UTF-8 text (save the file as UTF-8)"),
        );
    }
    let what = match c {
        '\0' => "a NUL byte (U+0000)".to_owned(),
        c => format!("the control character U+{:04X}", c as u32),
    };
    let escape = match c {
        '\0' => "\\0".to_owned(),
        c if (c as u32) < 0x100 => format!("\\x{:02X}", c as u32),
        c => format!("\\u{:04X}", c as u32),
    };
    Some(
        ScenarioError::new(
            file,
            Some(location_of(src, at)),
            "",
            format!("{what} is not allowed in YAML text"),
        )
        .with_expected(format!(
            "printable characters (write it as `{escape}` inside a double-quoted value)"
        )),
    )
}

/// Whether `bytes` start as ASCII text in UTF-16 does: every other byte of the first line
/// (or first 64 bytes) NUL, the ones between not. Text that merely holds a NUL has none of
/// that regularity.
fn looks_like_utf16(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64)];
    let head = head
        .iter()
        .position(|&b| b == b'\n')
        .map_or(head, |end| &head[..end]);
    if head.len() < 4 {
        return false;
    }
    [0, 1].iter().any(|&nul_at| {
        head.iter()
            .enumerate()
            .all(|(i, &b)| (b == 0) == (i % 2 == nul_at))
    })
}

/// YAML 1.2's `c-printable`.
fn is_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
        || c >= '\u{10000}'
}

/// The first thing after the document end marker at byte `end` that is not a comment, a
/// blank or another marker. A line of `...` (followed by nothing, or by a space or tab) ends
/// the document wherever it appears, even inside a block scalar, so this needs no parsing.
fn after_document_end(src: &str, end: usize, file: &str) -> Option<ScenarioError> {
    let ended = src[..end].matches('\n').count() + 1;
    let mut offset = end;
    for line in src[end..].split('\n') {
        let start = offset;
        offset += line.len() + 1;
        let rest = document_end(line).unwrap_or(line);
        let Some(content) = rest.find(|c: char| !matches!(c, ' ' | '\t' | '\r')) else {
            continue;
        };
        // After `...` itself a blank comes first, so a `#` here always starts a comment.
        if rest[content..].starts_with('#') {
            continue;
        }
        let at = start + (line.len() - rest.len()) + content;
        return Some(
            ScenarioError::new(
                file,
                Some(location_of(src, at)),
                "",
                format!("content after the end of the document (the `...` on line {ended})"),
            )
            .with_expected("nothing after `...` but comments (one scenario per file)"),
        );
    }
    None
}

/// What follows `...` when `text`, a line or the rest of the file from a line's start, is a
/// document end marker.
fn document_end(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("...")?;
    (rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n'])).then_some(rest)
}

/// The 1-based line and column (in characters) of byte `at` of `src`.
fn location_of(src: &str, at: usize) -> Location {
    let before = &src[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    Location::new(clamp(line), clamp(column))
}

fn clamp(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The word of `src` that starts at `at`: the text up to a blank, a line break, a comma or a
/// bracket, such as an alias `*name` or a number as the file writes it.
pub(crate) fn token_at(src: &str, at: Location) -> Option<&str> {
    let line = src
        .split('\n')
        .nth(usize::try_from(at.line).ok()?.checked_sub(1)?)?;
    let skip = usize::try_from(at.column).ok()?.checked_sub(1)?;
    let start = line.char_indices().nth(skip).map(|(i, _)| i)?;
    let rest = &line[start..];
    let end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '{' | '}'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// What a pass over the parser's events looks for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Look {
    /// The first tag, and which of the `tabs` lie inside values.
    Tags,
    /// A key too long to be implicit, where the parser stops.
    LongKeys,
}

/// One pass over the parser's events of `src`, with each of the `tabs` (after a `:`) read
/// as a space: the text to parse (the tabs inside values put back), and what `look` finds.
/// Looking for tags, a syntax error ends the pass without a problem: the typed parse
/// reports it, with the field it was reading.
fn scan<'a>(
    src: &'a str,
    tabs: &[usize],
    file: &str,
    look: Look,
) -> (Cow<'a, str>, Option<ScenarioError>) {
    let spaced: Cow<'a, str> = if tabs.is_empty() {
        Cow::Borrowed(src)
    } else {
        let mut bytes = src.as_bytes().to_vec();
        for &t in tabs {
            bytes[t] = b' ';
        }
        // A tab and a space are both one byte of ASCII: the text is still UTF-8.
        Cow::Owned(String::from_utf8(bytes).unwrap_or_else(|_| src.to_owned()))
    };
    let mut keep = vec![false; tabs.len()];
    let mut path = PathTracker::default();
    // The last scalar, and the path it was read at: a long key is read as a value.
    let mut last_scalar: Option<(Span, Snapshot)> = None;
    let mut problem = None;
    for item in Parser::new_from_str(&spaced) {
        let (event, span) = match item {
            Ok(next) => next,
            Err(e) if look == Look::LongKeys => {
                problem = long_key_at(
                    &spaced,
                    e.info(),
                    e.marker(),
                    last_scalar.as_ref(),
                    &path,
                    file,
                );
                break;
            }
            Err(_) => break,
        };
        let (tag, text) = match &event {
            Event::Scalar(value, _, _, tag) => (tag.as_ref(), Some(value.as_ref())),
            Event::SequenceStart(_, tag) | Event::MappingStart(_, tag) => (tag.as_ref(), None),
            _ => (None, None),
        };
        if let Some(tag) = tag.filter(|_| look == Look::Tags) {
            let at = Location::new(clamp(span.start.line()), clamp(span.start.col() + 1));
            problem = Some(
                ScenarioError::new(
                    file,
                    Some(at),
                    path.node(text),
                    format!("the YAML tag `{}` is not allowed here", written(tag)),
                )
                .with_expected(
                    "the value without a tag (scenarios take no YAML tags: quote a value to \
                     make it a string)",
                ),
            );
            break;
        }
        match event {
            Event::Scalar(value, ..) => {
                // A tab the scan made a space inside a value's text is the value's own.
                if let Some(range) = span.byte_range().filter(|_| !tabs.is_empty()) {
                    let first = tabs.partition_point(|&t| t < range.start);
                    for (i, &t) in tabs.iter().enumerate().skip(first) {
                        if t >= range.end {
                            break;
                        }
                        keep[i] = true;
                    }
                }
                // Only a scalar too long to be a key can be a key the parser read as a value.
                if look == Look::LongKeys
                    && span.end.index() - span.start.index() > IMPLICIT_KEY_CHARS
                {
                    last_scalar = Some((span, path.snapshot()));
                }
                path.filled(&value);
            }
            Event::SequenceStart(..) => path.open(Frame::Seq(0)),
            Event::MappingStart(..) => path.open(Frame::Map(None)),
            Event::SequenceEnd | Event::MappingEnd => path.close(),
            Event::Alias(_) => path.filled("*"),
            _ => {}
        }
    }
    if !keep.contains(&true) {
        return (spaced, problem);
    }
    let mut bytes = spaced.into_owned().into_bytes();
    for (&t, keep) in tabs.iter().zip(keep) {
        if keep {
            bytes[t] = b'\t';
        }
    }
    let text = String::from_utf8(bytes).map_or(Cow::Borrowed(src), Cow::Owned);
    (text, problem)
}

/// A tag as it is written: `!!str`, `!foo`, `!` or `!<tag:example.com,2026:x>`.
fn written(tag: &Tag) -> String {
    match (tag.handle.as_str(), tag.suffix.as_str()) {
        ("tag:yaml.org,2002:", suffix) => format!("!!{suffix}"),
        ("!", suffix) => format!("!{suffix}"),
        ("", "!") => "!".to_owned(),
        (handle, suffix) => format!("!<{handle}{suffix}>"),
    }
}

/// The error for a key too long to be implicit, when the parser's error `info` at `at` is
/// that: a plain or quoted key of more than 1024 characters makes the parser read it as a
/// value, and then refuse the `:` after it ("mapping values are not allowed"), or refuse to
/// go on without one ("simple key expect ':'"). The key starts where the line's content does
/// (after its indentation and any `- `), and the error lies more than 1024 characters on.
fn long_key_at(
    src: &str,
    info: &str,
    at: &saphyr_parser_bw::Marker,
    last_scalar: Option<&(Span, Snapshot)>,
    path: &PathTracker,
    file: &str,
) -> Option<ScenarioError> {
    if !matches!(
        info,
        "mapping values are not allowed in this context" | "simple key expect ':'"
    ) {
        return None;
    }
    let line = src.split('\n').nth(at.line().checked_sub(1)?)?;
    let key_column = content_column(line);
    if at.col() <= key_column + IMPLICIT_KEY_CHARS {
        return None;
    }
    // "mapping values" also comes of `: ` inside a long value; the value then starts after
    // a key, not where the line's content does. The key was read as a value, at the path of
    // the mapping it belongs to.
    let path = if info.starts_with("mapping") {
        let (scalar, before) = last_scalar?;
        if scalar.start.line() != at.line() || scalar.start.col() != key_column {
            return None;
        }
        path.at(before)
    } else {
        path.node(None)
    };
    Some(
        ScenarioError::new(
            file,
            Some(Location::new(clamp(at.line()), clamp(key_column + 1))),
            path,
            format!(
                "this key is longer than YAML's limit of {IMPLICIT_KEY_CHARS} characters for a \
                 key written without `?` (quoting it does not lift the limit)"
            ),
        )
        .with_expected(
            "a shorter key, or an explicit key: `? <key>` on one line and `: <value>` on the next",
        ),
    )
}

/// The column (from 0, in characters) where a line's content starts: after its indentation
/// and the `- ` of any list items it opens.
fn content_column(line: &str) -> usize {
    let mut rest = line.trim_start_matches(' ');
    while let Some(item) = rest.strip_prefix('-') {
        if !item.starts_with([' ', '\t']) {
            break;
        }
        rest = item.trim_start_matches([' ', '\t']);
    }
    line[..line.len() - rest.len()].chars().count()
}

/// Where the parser is in the document, as a field path.
#[derive(Default)]
struct PathTracker {
    frames: Vec<Frame>,
}

/// An open list (the index of its next item), or mapping (the key being read or whose value
/// is being read; `None` while a key is expected).
#[derive(Clone)]
enum Frame {
    Seq(usize),
    Map(Option<String>),
}

impl PathTracker {
    fn open(&mut self, frame: Frame) {
        self.frames.push(frame);
    }

    /// A list or mapping ended: it was one node of its parent (a complex key reads as `?`).
    fn close(&mut self) {
        self.frames.pop();
        self.filled("?");
    }

    /// A scalar (or alias, or a closed collection) `text` filled the current place.
    fn filled(&mut self, text: &str) {
        match self.frames.last_mut() {
            Some(Frame::Seq(i)) => *i += 1,
            Some(Frame::Map(key @ None)) => *key = Some(text.to_owned()),
            Some(Frame::Map(key @ Some(_))) => *key = None,
            None => {}
        }
    }

    /// The path of the node about to fill the current place: the current key's value, the
    /// current item, or a key (named by the scalar `key`, when it is one).
    fn node(&self, key: Option<&str>) -> String {
        let mut path = String::new();
        for frame in &self.frames {
            push(&mut path, frame);
        }
        if let (Some(Frame::Map(None)), Some(key)) = (self.frames.last(), key) {
            push(&mut path, &Frame::Map(Some(key.to_owned())));
        }
        path
    }

    /// What [`PathTracker::at`] needs to give the path of the node about to be read, once
    /// the parser has gone past it: the depth, and the innermost place as it is now.
    fn snapshot(&self) -> Snapshot {
        Snapshot {
            depth: self.frames.len(),
            top: self.frames.last().cloned(),
        }
    }

    /// The path [`PathTracker::node`] gave when `before` was taken, provided the parser has
    /// not left the list or mapping it was in since.
    fn at(&self, before: &Snapshot) -> String {
        let outer = before.depth.saturating_sub(1).min(self.frames.len());
        let mut path = String::new();
        for frame in self.frames[..outer].iter().chain(&before.top) {
            push(&mut path, frame);
        }
        path
    }
}

/// A place of [`PathTracker`], kept cheaply (see [`PathTracker::snapshot`]).
struct Snapshot {
    depth: usize,
    top: Option<Frame>,
}

/// Adds the place `frame` is at to `path`; one buffer, so a path costs its length, however
/// deep the nesting.
fn push(path: &mut String, frame: &Frame) {
    match frame {
        Frame::Seq(i) => path.push_str(&format!("[{i}]")),
        Frame::Map(Some(key)) => {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(key);
        }
        Frame::Map(None) => {}
    }
}

#[cfg(test)]
mod tests;
