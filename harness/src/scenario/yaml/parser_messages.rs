//! The YAML parser's messages in plain sentences.
//!
//! saphyr-parser (the scanner and parser under serde-saphyr) and serde-saphyr write their
//! errors for people who know YAML's grammar ("simple key expect ':'", "while parsing a
//! block mapping, did not find expected key"), and serde-saphyr prints a breached budget as
//! Rust `Debug`. Each text either of them can give a scenario author is listed here with
//! what it means for the file and what to write instead. A text not listed (a newer parser)
//! is shown as it is, after "invalid YAML:".

use serde_saphyr::Options;
use serde_saphyr::budget::{Budget, BudgetBreach};

/// A parser message reworded: what is wrong, and what was expected there.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Plain {
    pub(crate) message: String,
    pub(crate) expected: Option<String>,
}

fn plain(message: impl Into<String>, expected: Option<&str>) -> Option<Plain> {
    Some(Plain {
        message: format!("invalid YAML: {}", message.into()),
        expected: expected.map(str::to_owned),
    })
}

/// The sentence for the parser's message `msg`, under the parser `options` (whose limits it
/// names). `token` is the text the file has where the error is (an alias's `*name`), when
/// known. `None` when `msg` is not the parser's.
pub(crate) fn reword(msg: &str, token: Option<&str>, options: &Options) -> Option<Plain> {
    let alias = token.filter(|t| t.starts_with('*'));
    // The exact messages first, then the families, several of which share a prefix with an
    // exact message.
    keys_and_indicators(msg)
        .or_else(|| indentation(msg))
        .or_else(|| scalars(msg))
        .or_else(|| structure(msg, alias, options))
        .or_else(|| reword_family(msg, alias, options))
}

/// Keys, `:`, `-` and `?` where YAML cannot take them.
fn keys_and_indicators(msg: &str) -> Option<Plain> {
    match msg {
        "simple key expect ':'" => plain(
            "a key whose `:` is not on the line the key starts on (a key and its `:` must be \
             on one line)",
            Some("`key: value`"),
        ),
        "simple key expected" => plain(
            "the file ends after text where a key was expected",
            Some("`key: value`"),
        ),
        "mapping values are not allowed in this context" => plain(
            "`:` where no key can start (a plain value cannot hold `: `)",
            Some("the value quoted (`'a: b'`), or a nested mapping on lines of its own"),
        ),
        "mapping keys are not allowed in this context" => plain(
            "`?` (an explicit key) where no key can start",
            Some("a key at the indentation of its mapping"),
        ),
        "block sequence entries are not allowed in this context" => plain(
            "a list item `- ` where no list can start",
            Some("the list on lines of its own, indented under its key"),
        ),
        "\"-\" is only valid inside a block" => plain(
            "a `- ` list item inside `[...]` or `{...}`",
            Some("the items separated by `,`"),
        ),
        "'-' must be followed by a valid YAML whitespace" => plain(
            "`-` followed by a tab or text (a list item starts with `- `)",
            Some("a space after `-`, or the value quoted"),
        ),
        "':' must be followed by a valid YAML whitespace" => {
            plain("`:` followed by text", Some("a space after `:`"))
        }
        "':' may not precede any of `[{` in flow mapping" => plain(
            "`:` directly before `[` or `{` inside brackets",
            Some("a space after `:`"),
        ),
        "illegal placement of ':' indicator" => plain(
            "a `:` on a later line than its key inside `[...]`",
            Some("the key and its `:` on one line"),
        ),
        _ => None,
    }
}

/// Tabs and indentation.
fn indentation(msg: &str) -> Option<Plain> {
    let tab = "a tab in the indentation";
    let spaces = Some("spaces (YAML indents with spaces only)");
    match msg {
        "tabs disallowed within this context (block indentation)"
        | "tab cannot be used as indentation"
        | "while scanning a plain scalar, found a tab"
        | "a block scalar content cannot start with a tab" => plain(tab, spaces),
        "tabs disallowed in this context" => plain("a tab after `?` or `-`", Some("a space")),
        "invalid indentation" => plain(
            "this line is indented less than the list or mapping it continues",
            Some("the same indentation as the lines before it"),
        ),
        "invalid indentation in flow construct" => plain(
            "a line inside `[...]` or `{...}` is indented too little",
            Some("it indented more than the key the brackets belong to"),
        ),
        "invalid indentation in multiline quoted scalar" => plain(
            "a line of a quoted value is indented too little",
            Some("it indented more than the value's key, or the quote that opens the value closed"),
        ),
        "invalid indentation for anchor" => plain(
            "an anchor or tag alone at the start of a line, before a list item",
            Some("it written after the item's `- `"),
        ),
        "wrongly indented line in block scalar" => plain(
            "a line of a `|` or `>` block is indented less than its first line",
            Some("every line of the block indented at least as much as the first"),
        ),
        "folded block scalars must indent their content" => plain(
            "the text of a `>` block is not indented",
            Some("its lines indented under the key"),
        ),
        "while scanning a block scalar, found an indentation indicator equal to 0" => plain(
            "a block indentation indicator of 0 (`|0`)",
            Some("a digit from 1 to 9, or none"),
        ),
        "while scanning a block scalar, did not find expected comment or line break" => plain(
            "text after `|` or `>` on the same line",
            Some("the block's text on the lines below it"),
        ),
        _ => None,
    }
}

/// Quoted, plain and block scalars, comments and tokens.
fn scalars(msg: &str) -> Option<Plain> {
    match msg {
        "unclosed quote" => plain("this quoted value is never closed", Some("a closing quote")),
        "while scanning a quoted scalar, found unexpected document indicator" => plain(
            "a line of a quoted value starts with `---` or `...`, which end a document",
            Some("that line indented"),
        ),
        "invalid trailing content after double-quoted scalar" => plain(
            "text after the closing quote of a value",
            Some("`,`, `:`, a comment or the end of the line (quote the whole value)"),
        ),
        "while parsing a quoted scalar, found unknown escape character" => plain(
            "an unknown escape in a double-quoted value",
            Some(
                "one of `\\\\`, `\\\"`, `\\n`, `\\t`, `\\xXX`, `\\uXXXX` (or single quotes, \
                 where `\\` is an ordinary character)",
            ),
        ),
        "while parsing a quoted scalar, did not find expected hexadecimal number" => plain(
            "an escape `\\x`, `\\u` or `\\U` without all its hexadecimal digits",
            Some("`\\xXX`, `\\uXXXX` or `\\UXXXXXXXX`"),
        ),
        "while parsing a quoted scalar, found invalid Unicode character escape code" => plain(
            "an escape that is not a Unicode character",
            Some("a code point up to `\\U0010FFFF`, outside the surrogates"),
        ),
        "plain scalar cannot start with '-' followed by ,[]{}" => plain(
            "a value starting with `-` and then `,`, `[`, `]`, `{` or `}`",
            Some("the value quoted"),
        ),
        "unexpected end of plain scalar"
        | "while parsing a node, did not find expected node content" => {
            plain("no value where one was expected", Some("a value"))
        }
        "comment intercepting the multiline text" => plain(
            "a comment between the lines of a value",
            Some("the value on one line, or quoted"),
        ),
        "expected whitespace" => plain("no space where one is needed", Some("a space")),
        "comments must be separated from other tokens by whitespace" => plain(
            "`#` right after a value (a comment needs a space before its `#`)",
            Some("a space before `#`, or the value quoted"),
        ),
        "did not find expected next token" => plain("unexpected text", None),
        "misplaced bracket" => plain(
            "a closing bracket without its opening one",
            Some("`[` before `]` and `{` before `}`"),
        ),
        _ => None,
    }
}

/// Nesting, documents, anchors, collections left open and the end of the file.
fn structure(msg: &str, alias: Option<&str>, options: &Options) -> Option<Plain> {
    match msg {
        "recursion limit exceeded" => plain(
            "brackets nested more than 255 levels deep",
            Some(&format!(
                "at most {} levels of nesting",
                options
                    .budget
                    .as_ref()
                    .map_or(u8::MAX.into(), |b| b.max_depth)
            )),
        ),
        "invalid content after document end marker" => plain(
            "text after `...`, which ends the document",
            Some("nothing after `...` but a comment"),
        ),
        "while parsing node, found unknown anchor" => match alias {
            Some(alias) => plain(
                format!("alias `{alias}` names no anchor"),
                Some(&format!(
                    "an anchor `&{}` on a value before it",
                    &alias[1..]
                )),
            ),
            None => plain(
                "an alias names no anchor",
                Some("an anchor `&name` on a value before `*name`"),
            ),
        },
        "while scanning an anchor or alias, did not find expected alphabetic or numeric character" => {
            plain(
                "`&` or `*` without a name",
                Some(
                    "an anchor `&name` or an alias `*name` (quote a value that starts with `&` or `*`)",
                ),
            )
        }
        "while parsing a block mapping, did not find expected key" => plain(
            "a line that is not a key of the mapping it is indented into",
            Some("`key: value` at the indentation of the mapping's other keys"),
        ),
        "while parsing a flow mapping, did not find expected ',' or '}'" => plain(
            "a `{...}` mapping continues without `,`",
            Some("`,` or `}`"),
        ),
        "while parsing a flow sequence, expected ',' or ']'" => {
            plain("a `[...]` list continues without `,`", Some("`,` or `]`"))
        }
        "while parsing a block collection, did not find expected '-' indicator" => plain(
            "a line that is not an item of the list it is indented into",
            Some("`- item` at the indentation of the list's other items"),
        ),
        // The parser says "EOF" for any token that cannot come next, a wrong bracket too.
        "unexpected EOF while parsing a flow sequence"
        | "unexpected EOF while parsing an implicit flow mapping" => {
            plain("a `[...]` list is not closed where it must be", Some("`]`"))
        }
        "unexpected EOF while parsing a flow mapping" => plain(
            "a `{...}` mapping is not closed where it must be",
            Some("`}`"),
        ),
        "unexpected EOF while parsing a block sequence"
        | "unexpected EOF while parsing a block mapping"
        | "unexpected eof"
        | "unexpected end of input" => plain("the file ends in the middle of a value", None),
        "unexpected sequence end"
        | "unexpected mapping end"
        | "list or mapping end with no start" => plain(
            "a list or mapping ends where a value was expected",
            Some("a value"),
        ),
        "did not find expected <stream-start>"
        | "did not find expected <document-start>"
        | "did not find expected <document start>"
        | "missing explicit document end marker before directive"
        | "duplicate version directive"
        | "the TAG directive must only be given at most once per handle in the same document" => {
            plain(
                "a misplaced or repeated `%` directive",
                Some("no directive (a scenario needs none: remove the `%...` line)"),
            )
        }
        "YAML merge value must be mapping or sequence of mappings" => plain(
            "a merge key `<<` whose value is not a mapping",
            Some("`<<: *name` with an anchored mapping, or a list of them"),
        ),
        _ => None,
    }
}

/// Messages that carry a value, or come in families sharing a prefix.
fn reword_family(msg: &str, alias: Option<&str>, options: &Options) -> Option<Plain> {
    if let Some(rest) = msg.strip_prefix("unclosed bracket '") {
        let open = rest.chars().next().unwrap_or('[');
        let close = if open == '{' { '}' } else { ']' };
        return plain(
            format!("this `{open}` is never closed"),
            Some(&format!("`{close}`")),
        );
    }
    if let Some(rest) = msg.strip_prefix("unexpected character: `") {
        let c = rest.trim_end_matches('\'');
        return plain(
            format!("`{c}` cannot start a plain value"),
            Some("the value quoted"),
        );
    }
    if msg.starts_with("Recursive references") {
        let which = alias.map_or_else(|| "an alias".to_owned(), |a| format!("alias `{a}`"));
        return plain(
            format!(
                "{which} is used inside the value its anchor marks, so the value would contain itself"
            ),
            Some("a copy of the value instead of the alias"),
        );
    }
    if msg.starts_with("alias references unknown anchor") {
        return plain(
            "an alias names no anchor",
            Some("an anchor `&name` on a value before `*name`"),
        );
    }
    let limits = &options.alias_limits;
    if msg.starts_with("alias replay limit exceeded") {
        return plain(
            format!(
                "aliases expand to more than {} values in all, the parser's limit against alias bombs",
                limits.max_total_replayed_events
            ),
            Some("fewer aliases"),
        );
    }
    if msg.starts_with("alias replay stack depth exceeded") {
        return plain(
            format!(
                "aliases nested inside aliases more than {} deep, the parser's limit",
                limits.max_replay_stack_depth
            ),
            Some("fewer levels of aliases"),
        );
    }
    if msg.starts_with("alias expansion limit exceeded") {
        return plain(
            "an anchor is expanded by too many aliases, the parser's limit",
            None,
        );
    }
    if msg.starts_with("cannot deserialize scalar tagged")
        || msg.starts_with("invalid !!binary")
        || msg.starts_with("!!binary")
    {
        return plain(
            "a YAML tag (`!...`), which scenarios do not take",
            Some("the value without its tag"),
        );
    }
    const TAG_TEXTS: &[&str] = &[
        "while scanning a tag",
        "while parsing a tag",
        "while scanning a verbatim tag",
        "while scanning TAG",
        "invalid global tag character",
        "the handle wasn't declared",
    ];
    if TAG_TEXTS.iter().any(|t| msg.starts_with(t)) {
        return plain(
            "a malformed YAML tag (`!...`); scenarios take no tags",
            Some("the value without its tag"),
        );
    }
    if msg.starts_with("while scanning a directive")
        || msg.starts_with("while scanning a YAML directive")
    {
        return plain(
            "a malformed `%` directive",
            Some("no directive (a scenario needs none: remove the `%...` line)"),
        );
    }
    if msg.starts_with("internal error") {
        return plain(format!("the YAML parser failed ({msg})"), None);
    }
    // A text of a newer parser: shown as it is, marked as a syntax error.
    const PARSER_WORDS: &[&str] = &[
        "while parsing",
        "while scanning",
        "did not find expected",
        "not allowed in this context",
        "unexpected EOF",
        "indentation",
        "tab",
        "unclosed",
        "anchor",
        "simple key",
    ];
    if PARSER_WORDS.iter().any(|w| msg.contains(w)) {
        return plain(msg, None);
    }
    None
}

/// The sentence for a breached parser budget, naming the limit and its value.
pub(crate) fn budget(breach: &BudgetBreach, limits: &Budget) -> String {
    let what = match breach {
        BudgetBreach::Events { .. } => format!(
            "more than {} YAML events (values, keys, and starts and ends of lists and mappings)",
            limits.max_events
        ),
        BudgetBreach::Aliases { .. } => {
            format!("more than {} aliases (`*name`)", limits.max_aliases)
        }
        BudgetBreach::Anchors { .. } => {
            format!("more than {} anchors (`&name`)", limits.max_anchors)
        }
        BudgetBreach::Depth { .. } => format!(
            "lists and mappings nested more than {} levels deep",
            limits.max_depth
        ),
        BudgetBreach::Documents { .. } => {
            format!("more than {} YAML documents", limits.max_documents)
        }
        BudgetBreach::Nodes { .. } => {
            format!("more than {} values, lists and mappings", limits.max_nodes)
        }
        BudgetBreach::ScalarBytes { .. } => format!(
            "more than {} bytes of text in values",
            limits.max_total_scalar_bytes
        ),
        BudgetBreach::MergeKeys { .. } => {
            format!("more than {} merge keys (`<<`)", limits.max_merge_keys)
        }
        BudgetBreach::AliasAnchorRatio { aliases, anchors } => format!(
            "{aliases} aliases for {anchors} anchors, more than {} per anchor (the mark of an \
             alias bomb)",
            limits.alias_anchor_ratio_multiplier
        ),
        BudgetBreach::InputBytes { .. } => match limits.max_reader_input_bytes {
            Some(max) => format!("more than {max} bytes"),
            None => "too many bytes".to_owned(),
        },
        BudgetBreach::SequenceUnbalanced => {
            "a list or mapping that ends without having started".to_owned()
        }
        // The enum is non-exhaustive: a newer serde-saphyr may add limits.
        other => format!("{other:?}"),
    };
    format!("the file exceeds a limit of the YAML parser: {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_budget_breach_names_its_limit() {
        let limits = Budget {
            max_depth: 64,
            ..Budget::default()
        };
        assert_eq!(
            budget(&BudgetBreach::Depth { depth: 65 }, &limits),
            "the file exceeds a limit of the YAML parser: lists and mappings nested more than 64 \
             levels deep"
        );
        assert_eq!(
            budget(&BudgetBreach::Nodes { nodes: 250_001 }, &limits),
            "the file exceeds a limit of the YAML parser: more than 250000 values, lists and \
             mappings"
        );
        for breach in [
            BudgetBreach::Events { events: 0 },
            BudgetBreach::Aliases { aliases: 0 },
            BudgetBreach::Anchors { anchors: 0 },
            BudgetBreach::Documents { documents: 0 },
            BudgetBreach::ScalarBytes {
                total_scalar_bytes: 0,
            },
            BudgetBreach::MergeKeys { merge_keys: 0 },
            BudgetBreach::AliasAnchorRatio {
                aliases: 200,
                anchors: 1,
            },
            BudgetBreach::InputBytes { input_bytes: 0 },
            BudgetBreach::SequenceUnbalanced,
        ] {
            let text = budget(&breach, &limits);
            assert!(!text.contains('{') && !text.contains("Breach"), "{text}");
        }
    }

    /// Inputs for the parser's messages: each is reworded, and the parser's own text is gone.
    #[test]
    fn the_parser_texts_are_reworded() {
        let cases = [
            "a: b: c\n",
            "a: 1\nfoo\n",
            "a: [1, 2\n",
            "a: {b: 1\n",
            "a: ]\n",
            "a: 'x\n",
            "a: \"x\\q\"\n",
            "a: \"\\xZZ\"\n",
            "a: \"\\uD800\"\n",
            "a: \"x\" y\n",
            "a:\n  - b\n - c\n",
            "a:\n\tb: 1\n",
            "a: |0\n  x\n",
            "a: | x\n  y\n",
            "a: @x\n",
            "a: [- b]\n",
            "a: &\n",
            "a: *x\n",
            "a: {b: c d: e}\n",
            "a: [b c: d e: f]\n",
            "- a\nb: 1\n",
            "? a\n: b\n?\tc\n",
            "a: !<x\n",
            "%YAML x\n---\n",
            "%YAML 1.2\n%YAML 1.2\n---\n",
            "a: 1\n--- \"x\n---\nb\n",
            "{a: 1}#c\n",
            "a: { b: [ }\n",
            "a: [\n- b]\n",
            "a: [a:[1]]\n",
            "a: !foo!bar x\n",
            "a: 1\n- b\n",
        ];
        let options = Options::default();
        for case in cases {
            let error = saphyr_parser_bw::Parser::new_from_str(case)
                .find_map(Result::err)
                .unwrap_or_else(|| panic!("{case:?} parses"));
            let raw = error.info();
            let plain = reword(raw, Some("*x"), &options)
                .unwrap_or_else(|| panic!("{raw:?} (from {case:?}) is not reworded"));
            let text = format!("{} {:?}", plain.message, plain.expected);
            assert!(!text.contains(raw), "{raw:?} is shown as it is: {text}");
            assert!(text.starts_with("invalid YAML: "), "{text}");
        }
    }

    #[test]
    fn unknown_texts_are_left_to_the_caller() {
        assert_eq!(reword("something new", None, &Options::default()), None);
    }
}
