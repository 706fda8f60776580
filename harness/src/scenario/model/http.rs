//! The HTTP values a scenario writes (methods, header names and values, the request URL) as
//! the run sends and matches them. Validation and the run's plan both convert through these
//! functions, so a value that loads is a value that runs.

use http::{HeaderName, HeaderValue, Method, Uri};

/// The longest URL the `http` crate parses (`u16::MAX - 1` bytes), so the longest a request
/// can have.
const URL_MAX_BYTES: usize = u16::MAX as usize - 1;

use super::headers::HeadersSpec;
use super::scenario::Scenario;
use crate::scenario::yaml::error::ScenarioError;
use crate::scenario::yaml::locations::{index, join};

impl Scenario {
    /// The method `text` written at `path`.
    pub(crate) fn method_at(&self, path: &str, text: &str) -> Result<Method, Box<ScenarioError>> {
        Method::from_bytes(text.as_bytes()).map_err(|_| {
            Box::new(
                self.error_at(path, format!("invalid method `{text}`"))
                    .with_expected("an HTTP method such as `GET` or `POST`"),
            )
        })
    }

    /// The header name `name` written at `path`.
    pub(crate) fn header_name_at(
        &self,
        path: &str,
        name: &str,
    ) -> Result<HeaderName, Box<ScenarioError>> {
        HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            Box::new(
                self.error_at(path, format!("invalid header name `{name}`"))
                    .with_expected(
                        "an HTTP token such as `Idempotency-Key` (letters, digits and `-`)",
                    ),
            )
        })
    }

    /// The headers written at `path`, in order, and what is wrong with any of them: a name
    /// that is not a token, a value with a control character (a tab aside), a name repeated
    /// in a mapping (which only a list of pairs may do).
    pub(crate) fn headers_at(
        &self,
        path: &str,
        headers: &HeadersSpec,
    ) -> (Vec<(HeaderName, HeaderValue)>, Vec<ScenarioError>) {
        let mut out = Vec::with_capacity(headers.len());
        let mut errors = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for (i, (name, value)) in headers.entries().iter().enumerate() {
            let at = match headers {
                HeadersSpec::Map(_) => join(path, name),
                HeadersSpec::Pairs(_) => index(path, i),
            };
            let parsed_name = self.header_name_at(&at, name);
            let parsed_value = HeaderValue::from_str(value).map_err(|_| {
                Box::new(self.error_at(
                    &at,
                    format!(
                        "the value of `{name}` contains a line break or another control character"
                    ),
                ))
            });
            let lower = name.to_ascii_lowercase();
            if matches!(headers, HeadersSpec::Map(_)) && !seen.insert(lower) {
                errors.push(
                    self.error_at(
                        &at,
                        format!("header `{name}` repeats (names are case-insensitive)"),
                    )
                    .with_expected("a list of pairs `[[Name, value], ...]` when a name repeats"),
                );
            }
            match (parsed_name, parsed_value) {
                (Ok(n), Ok(v)) => out.push((n, v)),
                (n, v) => errors.extend(n.err().into_iter().chain(v.err()).map(|e| *e)),
            }
        }
        (out, errors)
    }

    /// The URL each call requests, `http://<operation.endpoint><operation.path>`.
    ///
    /// Endpoint names are checked where they are declared, so a URL that does not parse is
    /// blamed on the path, unless it is too long: then on the name when the name alone is;
    /// when `operation.endpoint` names no endpoint, the error about that name says what is
    /// wrong instead.
    pub(crate) fn request_url(&self) -> Result<String, Box<ScenarioError>> {
        let o = &self.operation;
        if !o.path.starts_with('/') || o.path.contains(char::is_whitespace) {
            return Err(Box::new(
                self.error_at("operation.path", format!("invalid path `{}`", o.path))
                    .with_expected("a path starting with `/`, without spaces"),
            ));
        }
        let url = format!("http://{}{}", o.endpoint, o.path);
        if url.len() > URL_MAX_BYTES && self.endpoints.contains_key(&o.endpoint) {
            // The shortest URL of the name, `http://<name>/`, tells whose length it is.
            let (path, what, shorter) = if "http:///".len() + o.endpoint.len() > URL_MAX_BYTES {
                let n = o.endpoint.chars().count();
                (
                    "operation.endpoint",
                    format!("the endpoint name ({n} characters)"),
                    "name",
                )
            } else {
                (
                    "operation.path",
                    format!("the path ({} bytes)", o.path.len()),
                    "path",
                )
            };
            return Err(Box::new(
                self.error_at(
                    path,
                    format!(
                        "{what} makes the request URL {} bytes long, above the {URL_MAX_BYTES} \
                         bytes a URL may have",
                        url.len()
                    ),
                )
                .with_expected(format!("a shorter {shorter}")),
            ));
        }
        if url.parse::<Uri>().is_err() && self.endpoints.contains_key(&o.endpoint) {
            return Err(Box::new(
                self.error_at(
                    "operation.path",
                    format!("`{}` does not make a valid URL path", o.path),
                )
                .with_expected("a path of URL characters (escape others with `%`)"),
            ));
        }
        Ok(url)
    }
}
