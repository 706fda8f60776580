//! Header lists, wherever they are written: names are HTTP tokens, values have no line breaks,
//! and a map does not repeat a name.

use super::{Validator, is_token};
use crate::scenario::headers::HeadersSpec;
use crate::scenario::locations::{index, join};

impl Validator<'_> {
    pub(super) fn headers(&mut self, path: &str, h: &HeadersSpec) {
        let mut seen: Vec<String> = Vec::new();
        for (i, (name, value)) in h.entries().iter().enumerate() {
            let (name_path, value_path) = match h {
                HeadersSpec::Map(_) => (join(path, name), join(path, name)),
                HeadersSpec::Pairs(_) => (index(path, i), index(path, i)),
            };
            if !is_token(name) {
                self.err_expected(
                    &name_path,
                    format!("invalid header name `{name}`"),
                    "letters, digits and `-` (an HTTP token)",
                );
            }
            if value.contains(['\r', '\n', '\0']) {
                self.err(
                    &value_path,
                    format!("the value of `{name}` contains a line break or NUL"),
                );
            }
            let lower = name.to_ascii_lowercase();
            if matches!(h, HeadersSpec::Map(_)) && seen.contains(&lower) {
                self.err_expected(
                    &name_path,
                    format!("header `{name}` repeats (names are case-insensitive)"),
                    "a list of pairs `[[Name, value], ...]` when a name repeats",
                );
            }
            seen.push(lower);
        }
    }
}
