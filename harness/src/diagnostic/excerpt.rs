//! The few source lines around an error, made safe to print: clipped to a bounded width and
//! with invisible characters escaped, with the span of the field the error points at.

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};

use crate::scenario::visible;

/// The most characters of a source line shown. A file may hold a line of megabytes (a long
/// key, a flow mapping on one line); a snippet shows this much around the error's column.
const MAX_SHOWN: usize = 120;

/// Lines shown before and after the error's line.
const CONTEXT: u32 = 1;

/// The lines around one error, as shown, and where the error's field is in them.
#[derive(Debug)]
pub(super) struct Excerpt {
    /// `file:line:col`, the snippet's header.
    name: String,
    /// The shown lines, joined by `\n`.
    text: String,
    /// The 0-based line of the file the first shown line is.
    first_line: usize,
    /// The field's bytes in `text`.
    pub(super) span: SourceSpan,
}

impl Excerpt {
    /// The lines of a file (as [`lines`] splits it) around `line` (1-based), with the span of the token that starts
    /// at `column` (1-based, in characters) on it. `None` when the file has no such line.
    pub(super) fn around(name: String, lines: &[&str], line: u32, column: u32) -> Option<Excerpt> {
        let index = usize::try_from(line.checked_sub(1)?).ok()?;
        if index >= lines.len() {
            return None;
        }
        let first = index.saturating_sub(CONTEXT as usize);
        // The empty "line" after a final newline is shown only when the error is on it.
        let mut shown = lines.len();
        if shown > index + 1 && lines.last().is_some_and(|l| l.is_empty()) {
            shown -= 1;
        }
        let last = (index + CONTEXT as usize).min(shown - 1);
        let mut text = String::new();
        let mut span = SourceSpan::from((0, 0));
        for (i, raw) in lines.iter().enumerate().take(last + 1).skip(first) {
            if i > first {
                text.push('\n');
            }
            let start = text.len();
            if i == index {
                let (shown, at, len) = shown_line(raw, column.saturating_sub(1) as usize);
                text.push_str(&shown);
                span = SourceSpan::from((start + at, len));
            } else {
                text.push_str(&shown_line(raw, 0).0);
            }
        }
        // A last line left empty would be dropped by the snippet: a space keeps the error at
        // the end of a file visible.
        if text.ends_with('\n') || text.is_empty() {
            text.push(' ');
        }
        Some(Excerpt {
            name,
            text,
            first_line: first,
            span,
        })
    }
}

/// The lines of `source`, split once for all its errors: at `\n`, a `\r` before it dropped.
pub(super) fn lines(source: &str) -> Vec<&str> {
    source
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// `raw` as shown: at most [`MAX_SHOWN`] characters from a little before character
/// `column`, cut ends marked `…`, invisible characters escaped; with the byte offset and
/// length, in what is shown, of the token at `column`.
fn shown_line(raw: &str, column: usize) -> (String, usize, usize) {
    // Only what can be shown is read: a line of megabytes is not copied for each error.
    let chars: Vec<char> = raw
        .chars()
        .take(column.saturating_add(MAX_SHOWN + 1))
        .collect();
    let token = token_len(&chars, column);
    let start = if chars.len() <= MAX_SHOWN {
        0
    } else {
        column
            .saturating_sub(MAX_SHOWN / 3)
            .min(chars.len() - MAX_SHOWN)
    };
    let end = (start + MAX_SHOWN).min(chars.len());
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let (mut at, mut len) = (None, 0);
    for (i, c) in chars.iter().enumerate().take(end).skip(start) {
        if i == column {
            at = Some(out.len());
        }
        let before = out.len();
        let mut buffer = [0; 4];
        out.push_str(&visible(c.encode_utf8(&mut buffer)));
        if i >= column && i < column + token {
            len += out.len() - before;
        }
    }
    // A column past the shown part (past the line's end, or in a line cut short) points just
    // after it.
    let at = at.unwrap_or(out.len());
    if end < chars.len() {
        out.push('…');
    }
    (out, at, len)
}

/// How many characters the token starting at `column` has: a quoted scalar to its closing
/// quote, anything else up to YAML's next delimiter. At least one character when there is
/// one, so that the label has something to point at.
fn token_len(chars: &[char], column: usize) -> usize {
    let Some(&first) = chars.get(column) else {
        return 0;
    };
    let rest = &chars[column..];
    if first == '"' || first == '\'' {
        return rest[1..]
            .iter()
            .position(|&c| c == first)
            .map_or(rest.len(), |end| end + 2);
    }
    rest.iter()
        .position(|&c| c.is_whitespace() || matches!(c, ':' | ',' | '{' | '}' | '[' | ']' | '#'))
        .unwrap_or(rest.len())
        .max(1)
}

impl SourceCode for Excerpt {
    /// The shown lines, numbered as in the file.
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner =
            self.text
                .as_str()
                .read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            inner.line() + self.first_line,
            inner.column(),
            inner.line_count(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_spanned() {
        let e = Excerpt::around(
            "f:2:1".into(),
            &lines("version: 1\nnmae: x\nseed: 3\n"),
            2,
            1,
        )
        .expect("line 2 exists");
        assert_eq!(e.text, "version: 1\nnmae: x\nseed: 3");
        assert_eq!((e.span.offset(), e.span.len()), (11, 4));
        assert_eq!(e.first_line, 0);
        let quoted = Excerpt::around("f".into(), &lines("a: \"x y\" # c\n"), 1, 4).expect("line 1");
        assert_eq!((quoted.span.offset(), quoted.span.len()), (3, 5));
    }

    #[test]
    fn long_lines_are_clipped_and_invisible_characters_escaped() {
        let line = format!("{}key: v", "x".repeat(1000));
        let (shown, at, len) = shown_line(&line, 1000);
        assert!(shown.starts_with('…') && shown.chars().count() <= MAX_SHOWN + 2);
        assert_eq!(&shown[at..at + len], "key");
        let (shown, at, len) = shown_line("\u{feff}seed\u{200b}: 1", 1);
        assert_eq!(shown, "\\u{feff}seed\\u{200b}: 1");
        assert_eq!(&shown[at..at + len], "seed\\u{200b}");
    }

    #[test]
    fn a_line_past_the_end_has_no_excerpt() {
        assert!(Excerpt::around("f".into(), &lines("a: 1\n"), 3, 1).is_none());
        assert!(Excerpt::around("f".into(), &lines("a: 1\n"), 0, 1).is_none());
        let end = Excerpt::around("f".into(), &lines("a: 1\n"), 2, 1).expect("the empty last line");
        assert_eq!(end.span.len(), 0);
    }
}
