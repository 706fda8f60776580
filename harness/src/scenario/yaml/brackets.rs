//! A `[` or `{` never closed.
//!
//! The typed parse reads a file as it goes, and stops at the first value of the wrong type:
//! `name: [unclosed` is a list where a string belongs, so it fails there, on the type,
//! before the parser reaches the end of the file and finds the bracket open. The syntax
//! error comes first for the author, so when the typed parse fails on a value, the whole
//! text is parsed once more for a bracket left open.

use saphyr_parser_bw::{Event, Parser};

use super::error::{Location, ScenarioError};

/// The error for a `[` or `{` in `src` that the parser found still open when it failed, at
/// the bracket; `None` when the text parses, or fails with no bracket open.
pub(crate) fn unclosed(src: &str, file: &str) -> Option<ScenarioError> {
    // The collections open at each point: where each starts, and whether it is written
    // with a bracket (a flow collection) rather than by indentation.
    let mut open: Vec<Option<(usize, usize, char, usize)>> = Vec::new();
    for item in Parser::new_from_str(src) {
        let (event, span) = match item {
            Ok(next) => next,
            Err(_) => {
                // The parser failed with brackets open: one is the cause only when the rest
                // of the text never closes it (a failure inside a closed list is another
                // error, which the parse reports).
                let (line, column, bracket, _) = open
                    .iter()
                    .rev()
                    .flatten()
                    .copied()
                    .find(|&(_, _, bracket, at)| never_closed(&src[at..], bracket))?;
                let (close, kind) = match bracket {
                    '[' => (']', "list"),
                    _ => ('}', "mapping"),
                };
                return Some(
                    ScenarioError::new(
                        file,
                        Some(Location::new(clamp(line), clamp(column))),
                        "",
                        format!(
                            "invalid YAML: the `{bracket}` opened at {line}:{column} is never \
                             closed"
                        ),
                    )
                    .with_expected(format!("a `{close}` after the last item of the {kind}")),
                );
            }
        };
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                let at = span.start.byte_offset();
                let bracket = at
                    .and_then(|at| Some((at, src.get(at..)?.chars().next()?)))
                    .filter(|(_, c)| matches!(c, '[' | '{'));
                open.push(bracket.map(|(at, b)| (span.start.line(), span.start.col() + 1, b, at)));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                open.pop();
            }
            _ => {}
        }
    }
    None
}

/// Whether `rest`, which starts with `bracket`, ends before a matching close: brackets
/// inside quoted strings and comments do not count.
fn never_closed(rest: &str, bracket: char) -> bool {
    let close = if bracket == '[' { ']' } else { '}' };
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut previous = ' ';
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        match quote {
            Some('"') if c == '\\' => {
                chars.next();
            }
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && previous.is_whitespace() => {
                // A comment runs to the end of its line.
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        break;
                    }
                }
            }
            None if c == bracket => depth += 1,
            None if c == close => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return false;
                }
            }
            None => {}
        }
        previous = c;
    }
    true
}

fn clamp(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_left_open_is_named_at_its_bracket() {
        let error = unclosed(
            "version: 1\nname: [unclosed\nendpoints: { api: {} }\noperation: { endpoint: api }\n",
            "x.yaml",
        )
        .expect("an unclosed bracket");
        assert_eq!(
            error.to_string(),
            "x.yaml:2:7: invalid YAML: the `[` opened at 2:7 is never closed, expected a `]` \
             after the last item of the list"
        );
    }

    #[test]
    fn closed_brackets_and_other_errors_are_not_its_business() {
        assert!(unclosed("a: [1, 2]\nb: { c: d }\n", "x.yaml").is_none());
        assert!(unclosed("a: b: c\n", "x.yaml").is_none());
        // A list closed later, with an error inside it.
        assert!(unclosed("a: [1 2: 3,\n  4]\n", "x.yaml").is_none());
        // Brackets in strings and comments are text.
        assert!(unclosed("a: [\"]\", 1 # ]\nb: c\n", "x.yaml").is_some());
    }
}
