//! The checks of a file's text before it is parsed.

use super::*;

fn problem(src: &str) -> Option<String> {
    prepare(src, "x.yaml").problem.map(|e| e.to_string())
}

#[test]
fn forbidden_characters_are_located() {
    assert_eq!(
        problem("a: 1\nb: \"x\0y\"\n").as_deref(),
        Some(
            "x.yaml:2:6: a NUL byte (U+0000) is not allowed in YAML text, expected \
                 printable characters (write it as `\\0` inside a double-quoted value)"
        )
    );
    assert!(problem("# \u{7f}\n").unwrap().contains("U+007F"));
    assert!(problem("a: \u{9c}\n").unwrap().contains("`\\x9C`"));
    assert_eq!(problem("a: \"\u{85}\u{a0}\u{feff}\t\"\r\n"), None);
}

#[test]
fn only_comments_follow_the_document_end() {
    assert_eq!(problem("a: 1\n...\n# c\n\n...  # again\n"), None);
    assert_eq!(
        problem("a: 1\n...\n  [\n").as_deref(),
        Some(
            "x.yaml:3:3: content after the end of the document (the `...` on line 2), \
                 expected nothing after `...` but comments (one scenario per file)"
        )
    );
    assert!(
        problem("a: 1\n... b\n")
            .unwrap()
            .starts_with("x.yaml:2:5: content")
    );
    assert!(
        problem("a: |\n  x\n...\n%YAML 1.2\n")
            .unwrap()
            .starts_with("x.yaml:4:1:")
    );
    // Not a marker: `...` followed by other text, or indented.
    assert_eq!(problem("a: ...x\nb: |\n  ...\n"), None);
}

#[test]
fn tags_are_refused_with_their_path() {
    assert_eq!(
        problem("a:\n  - 1\n  - !!binary aGk=\n").as_deref(),
        Some(
            "x.yaml:3:14 a[1]: the YAML tag `!!binary` is not allowed here, expected the \
                 value without a tag (scenarios take no YAML tags: quote a value to make it a \
                 string)"
        )
    );
    assert!(problem("a: !foo {b: 1}\n").unwrap().contains("`!foo`"));
    assert!(problem("! a: 1\n").unwrap().contains("`!`"));
    assert!(
        problem("a: !<tag:x,2026:y> 1\n")
            .unwrap()
            .contains("`!<tag:x,2026:y>`")
    );
    assert!(problem("a: 'it is !!str'\n").is_none());
}

#[test]
fn a_tab_after_a_colon_is_a_space_outside_values() {
    let src = "a:\t1\nb: \"x:\ty\"\nc: |\n  z:\tw\nd:\t-1\n";
    let prepared = prepare(src, "x.yaml");
    assert!(prepared.problem.is_none());
    assert_eq!(prepared.text, "a: 1\nb: \"x:\ty\"\nc: |\n  z:\tw\nd: -1\n");
    assert!(matches!(prepare("a: 1\n", "x.yaml").text, Cow::Borrowed(_)));
}

#[test]
fn content_starts_after_indentation_and_items() {
    assert_eq!(content_column("  - - a: 1"), 6);
    assert_eq!(content_column("  -a: 1"), 2);
    assert_eq!(content_column("a"), 0);
}

#[test]
fn a_long_key_is_named() {
    let key = "k".repeat(1100);
    let long = |src: &str| long_key(src, "x.yaml").map(|e| e.to_string());
    for (src, at) in [
        (format!("a:\n  {key}: 1\n"), "x.yaml:2:3 a:"),
        (format!("a: 1\n{key}: 1\n"), "x.yaml:2:1:"),
        (format!("a:\n  - \"{key}\": 1\n"), "x.yaml:2:5 a[0]:"),
    ] {
        let text = long(&src).unwrap_or_default();
        assert!(text.starts_with(at), "{text}");
        assert!(
            text.contains("longer than YAML's limit of 1024 characters"),
            "{text}"
        );
    }
    // Long values, and long keys where YAML allows them, are not long keys.
    assert_eq!(long(&format!("a: {{{key}: 1}}\n")), None);
    assert_eq!(long(&format!("a:\n  ? {key}\n  : 1\n")), None);
    assert_eq!(long(&format!("a: {key} b: c\n")), None);
}
