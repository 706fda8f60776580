//! Documents written as a string: a field the format lets hold a mapping as text (JSON, say),
//! read like the mapping it holds ([`Format::is_document`](super::format::Format) says which
//! fields; [`from_text`](super::parse::from_text) reads them). Their errors point into the
//! string where the file's text allows: a single-line quoted string, or a literal block (`|`);
//! elsewhere at the string, saying where in it. This module holds where a string's text lies
//! in the file and the error of the last string that did not read.

use std::cell::RefCell;

use super::error::{Location, ScenarioError};

/// What a document written as a string may be.
pub(crate) const EXPECTED: &str = "a mapping, or a string holding one as JSON (`'{\"key\": ...}'`)";

/// Why the last document read from a string on this thread did not parse.
pub(crate) struct FailedDocument {
    /// The string.
    pub(crate) text: String,
    /// The error, located in `text` (line 1 is the string's first line).
    pub(crate) error: ScenarioError,
    /// The message handed to serde, by which the enclosing parse knows its error is this.
    pub(crate) message: String,
}

thread_local! {
    /// A visitor can only hand serde a message; the located error inside the string waits
    /// here for the parse of the file, which runs on the same thread, to place it.
    static FAILED: RefCell<Option<FailedDocument>> = const { RefCell::new(None) };
}

/// Keeps `failure` for the parse of the file to place, replacing any kept before.
pub(crate) fn keep_failure(failure: FailedDocument) {
    FAILED.with(|f| *f.borrow_mut() = Some(failure));
}

/// The error kept by the last failed [`from_text`](super::parse::from_text) on this thread, if any (taking it).
pub(crate) fn take_failure() -> Option<FailedDocument> {
    FAILED.with(|f| f.borrow_mut().take())
}

/// Where each character of a string value is in the file: line `l`, column `c` of the
/// string's text is at `lines[l - 1][c - 1]`.
pub(crate) struct TextMap {
    lines: Vec<Vec<Location>>,
}

impl TextMap {
    /// The map of the string whose value is `text` and whose node starts at `at` in `src`:
    /// a quoted string on one line, or a literal block (whose node starts at its text). The
    /// map is checked against `text`, so a string written otherwise (folded, or quoted over
    /// several lines) gives `None`, never a wrong position.
    pub(crate) fn of(src: &str, at: Location, text: &str) -> Option<TextMap> {
        let lines: Vec<&str> = src.split('\n').collect();
        let row = usize::try_from(at.line).ok()?.checked_sub(1)?;
        let column = usize::try_from(at.column).ok()?.checked_sub(1)?;
        let line = lines.get(row)?.trim_end_matches('\r');
        let (decoded, places) = match line.chars().nth(column)? {
            quote @ ('\'' | '"') => {
                let (decoded, places) = quoted(line, row, column, quote)?;
                (decoded == text).then_some((decoded, places))?
            }
            _ => {
                let (decoded, places) = literal(&lines, row, column)?;
                same_but_final_breaks(&decoded, text).then_some((decoded, places))?
            }
        };
        let mut map = vec![Vec::new()];
        for (c, place) in decoded.chars().zip(places) {
            if c == '\n' {
                map.push(Vec::new());
            } else if let Some(current) = map.last_mut() {
                current.push(place);
            }
        }
        Some(TextMap { lines: map })
    }

    /// The file's position of `inner`, a position in the string's text. A column just past
    /// the end of a line (where an error about a missing value points) is just past the
    /// line's last character in the file too.
    pub(crate) fn locate(&self, inner: Location) -> Option<Location> {
        let line = self
            .lines
            .get(usize::try_from(inner.line).ok()?.checked_sub(1)?)?;
        let column = usize::try_from(inner.column).ok()?.checked_sub(1)?;
        match line.get(column) {
            Some(at) => Some(*at),
            None => {
                let last = line.last()?;
                let beyond = u32::try_from(column + 1 - line.len()).ok()?;
                Some(Location::new(last.line, last.column.checked_add(beyond)?))
            }
        }
    }
}

fn location(row: usize, column: usize) -> Location {
    let clamp = |n: usize| u32::try_from(n + 1).unwrap_or(u32::MAX);
    Location::new(clamp(row), clamp(column))
}

/// The value of the quoted string opening at `column` of `line`, with each character's
/// position, when it closes on the same line.
fn quoted(line: &str, row: usize, column: usize, quote: char) -> Option<(String, Vec<Location>)> {
    let chars: Vec<char> = line.chars().collect();
    let (mut text, mut places) = (String::new(), Vec::new());
    let mut i = column + 1;
    loop {
        let c = *chars.get(i)?;
        let at = location(row, i);
        match (quote, c) {
            ('\'', '\'') if chars.get(i + 1) == Some(&'\'') => {
                text.push('\'');
                places.push(at);
                i += 2;
            }
            (q, c) if c == q => return Some((text, places)),
            ('"', '\\') => {
                let (decoded, used) = escape(&chars[i + 1..])?;
                text.push(decoded);
                places.push(at);
                i += 1 + used;
            }
            (_, c) => {
                text.push(c);
                places.push(at);
                i += 1;
            }
        }
    }
}

/// The character a double-quoted escape stands for (after its `\`), and how many
/// characters it takes; `None` for an escape that continues on the next line.
fn escape(rest: &[char]) -> Option<(char, usize)> {
    let hex = |n: usize| -> Option<(char, usize)> {
        let digits: String = rest.get(1..=n)?.iter().collect();
        let code = u32::from_str_radix(&digits, 16).ok()?;
        Some((char::from_u32(code)?, 1 + n))
    };
    let simple = match rest.first()? {
        '0' => '\0',
        'a' => '\u{7}',
        'b' => '\u{8}',
        't' | '\t' => '\t',
        'n' => '\n',
        'v' => '\u{b}',
        'f' => '\u{c}',
        'r' => '\r',
        'e' => '\u{1b}',
        ' ' => ' ',
        '"' => '"',
        '/' => '/',
        '\\' => '\\',
        'N' => '\u{85}',
        '_' => '\u{a0}',
        'L' => '\u{2028}',
        'P' => '\u{2029}',
        'x' => return hex(2),
        'u' => return hex(4),
        'U' => return hex(8),
        _ => return None,
    };
    Some((simple, 1))
}

/// The value of the literal block whose text starts at `column` of line `row` (its
/// indentation), with each character's position: every line from there on indented at
/// least as much, and the blank lines between them. Chomping only changes the last line
/// breaks, which the caller's comparison with the value tolerates by trimming them.
fn literal(lines: &[&str], row: usize, column: usize) -> Option<(String, Vec<Location>)> {
    let indent = column;
    let first = lines.get(row)?;
    if first.len() < indent || !first[..indent].bytes().all(|b| b == b' ') {
        return None;
    }
    let (mut text, mut places) = (String::new(), Vec::new());
    for (r, line) in lines.iter().enumerate().skip(row) {
        let line = line.trim_end_matches('\r');
        let blank = line.trim_start_matches(' ').is_empty();
        if !blank && (line.len() < indent || !line[..indent].bytes().all(|b| b == b' ')) {
            break;
        }
        let content = line.get(indent..).unwrap_or("");
        for (i, c) in content.chars().enumerate() {
            text.push(c);
            places.push(location(r, indent + i));
        }
        text.push('\n');
        places.push(location(r, indent + content.chars().count()));
    }
    Some((text, places))
}

/// `text` and `value` may differ only in the line breaks at their end (a block's chomping).
fn same_but_final_breaks(text: &str, value: &str) -> bool {
    text.trim_end_matches('\n') == value.trim_end_matches('\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_string_maps_each_character() {
        let src = "a: '{\"x\": ''y''}'\nb: \"{\\\"z\\\": 1}\"\n";
        let map = TextMap::of(src, Location::new(1, 4), "{\"x\": 'y'}").unwrap();
        assert_eq!(map.locate(Location::new(1, 2)), Some(Location::new(1, 6)));
        assert_eq!(map.locate(Location::new(1, 8)), Some(Location::new(1, 13)));
        let map = TextMap::of(src, Location::new(2, 4), "{\"z\": 1}").unwrap();
        assert_eq!(map.locate(Location::new(1, 2)), Some(Location::new(2, 6)));
        assert_eq!(map.locate(Location::new(1, 7)), Some(Location::new(2, 13)));
        assert!(TextMap::of(src, Location::new(1, 4), "something else").is_none());
    }

    #[test]
    fn a_literal_block_maps_lines_and_columns() {
        let src = "a: |\n  {\n    \"x\": 1\n  }\nb: 2\n";
        let map = TextMap::of(src, Location::new(2, 3), "{\n  \"x\": 1\n}\n").unwrap();
        assert_eq!(map.locate(Location::new(2, 3)), Some(Location::new(3, 5)));
        assert_eq!(map.locate(Location::new(3, 1)), Some(Location::new(4, 3)));
        // A block whose value is not its lines (folded into one) gets no map, not a wrong one.
        let folded = "a: >\n  {\n    \"x\": 1 }\n";
        assert!(TextMap::of(folded, Location::new(2, 3), "{\n  \"x\": 1 }\n").is_some());
        assert!(TextMap::of(folded, Location::new(2, 3), "{   \"x\": 1 }\n").is_none());
    }
}
