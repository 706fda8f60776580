//! Header lists, wherever they are written: names are HTTP tokens, values have no control
//! characters, a map does not repeat a name, and a list holds at most
//! [`MAX_HEADERS`] entries of [`MAX_HEADER_BYTES`] in all. The rules on each entry are those
//! of the conversion the run uses ([`Scenario::headers_at`](crate::scenario::Scenario)),
//! called here.

use super::Validator;
use crate::scenario::model::bounds::{MAX_HEADER_BYTES, MAX_HEADERS};
use crate::scenario::model::headers::HeadersSpec;

impl Validator<'_> {
    pub(super) fn headers(&mut self, path: &str, h: &HeadersSpec) {
        self.too_many(path, h.len(), MAX_HEADERS, "headers", "in a list");
        let bytes: usize = h
            .entries()
            .iter()
            .map(|(name, value)| name.len() + value.len())
            .sum();
        if bytes > MAX_HEADER_BYTES {
            self.over_limit(
                path,
                format!("headers of {bytes} bytes"),
                format!("at most {MAX_HEADER_BYTES} bytes of names and values in a list"),
            );
        }
        let (_, errors) = self.s.headers_at(path, h);
        self.errors.extend(errors);
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::EndpointSpec;
    use crate::scenario::HeadersSpec;
    use crate::scenario::OperationSpec;
    use crate::scenario::Scenario;

    /// A repeated name in a mapping was looked for in every name before it: 100,000 headers
    /// took minutes. The list is now over its limit, found in a moment.
    #[test]
    fn a_long_list_of_headers_is_checked_in_linear_time() {
        let mut operation = OperationSpec::get("api", "/");
        operation.headers = Some(HeadersSpec::map(
            (0..100_000).map(|i| (format!("x-h{i}"), "v")),
        ));
        let started = std::time::Instant::now();
        let errors = Scenario::builder("x")
            .endpoint("api", EndpointSpec::http())
            .operation(operation)
            .build()
            .map(|_| ())
            .unwrap_err();
        // Generous: the quadratic search took over a minute in a debug build.
        assert!(started.elapsed().as_secs() < 20, "{:?}", started.elapsed());
        let first = errors.iter().next().map(ToString::to_string);
        assert_eq!(
            first.as_deref(),
            Some(
                "<code> operation.headers: 100000 headers, over the limit of the format, \
                 expected at most 64 headers in a list"
            ),
            "{errors}"
        );
    }
}
