//! The service error code of an AWS error response, for the AWS policies' classification
//! (throttling and transient error codes, docs/retry-behaviours.md#2-aws-sdk-retry-modes).
//!
//! Where the code comes from, in the order the SDKs look (smithy-rs `aws_json_errors` and
//! botocore's REST-JSON parser both prefer the header to the body):
//! 1. the `x-amzn-ErrorType` header (any case);
//! 2. a JSON object body's `__type`, else `code`, else `Code` (awsJson 1.0/1.1, REST-JSON);
//! 3. the first `<Code>...</Code>` element of an XML body (S3, the query protocols, EC2).
//!
//! Every value is sanitized the same way: the text before the first `:` (a header such as
//! `ThrottlingException:http://internal.amazon.com/coral/...`), then the text after the last
//! `#` (a namespaced `__type` such as `com.amazonaws.dynamodb.v20120810#ThrottlingException`),
//! trimmed. An empty result counts as no code. Success (2xx) responses carry no error code.

/// The error code of a response with `status`, `headers` (name, value pairs, any case) and
/// `body`; `None` for a 2xx or when no source names one.
///
/// ```
/// use retrylab::policy::aws::error_code::error_code;
///
/// let json = br#"{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"}"#;
/// assert_eq!(error_code(400, &[], json).as_deref(), Some("ProvisionedThroughputExceededException"));
///
/// let header = [("x-amzn-ErrorType".to_string(), "ThrottlingException:http://internal/".to_string())];
/// assert_eq!(error_code(400, &header, b"").as_deref(), Some("ThrottlingException"));
///
/// let xml = b"<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>";
/// assert_eq!(error_code(503, &[], xml).as_deref(), Some("SlowDown"));
///
/// assert_eq!(error_code(503, &[], b"Service Unavailable"), None);
/// assert_eq!(error_code(200, &header, json), None);
/// ```
pub fn error_code(status: u16, headers: &[(String, String)], body: &[u8]) -> Option<String> {
    if (200..300).contains(&status) {
        return None;
    }
    from_header(headers)
        .or_else(|| from_json(body))
        .or_else(|| from_xml(body))
}

/// Text before the first `:`, then after the last `#`, trimmed; `None` when empty.
fn sanitize(raw: &str) -> Option<String> {
    let before_colon = raw.split(':').next().unwrap_or("");
    let after_hash = before_colon.rsplit('#').next().unwrap_or("");
    let code = after_hash.trim();
    (!code.is_empty()).then(|| code.to_string())
}

fn from_header(headers: &[(String, String)]) -> Option<String> {
    headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("x-amzn-errortype"))
        .and_then(|(_, value)| sanitize(value))
}

fn from_json(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let object = value.as_object()?;
    ["__type", "code", "Code"]
        .iter()
        .find_map(|key| object.get(*key).and_then(|v| v.as_str()).and_then(sanitize))
}

fn from_xml(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body).ok()?;
    let open = text.find("<Code>")? + "<Code>".len();
    let close = text[open..].find("</Code>")? + open;
    sanitize(&text[open..close])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(name: &str, value: &str) -> Vec<(String, String)> {
        vec![(name.to_string(), value.to_string())]
    }

    #[test]
    fn sources_and_precedence() {
        // The header wins over the body, as in both SDKs.
        let body = br#"{"__type":"ValidationException"}"#;
        assert_eq!(
            error_code(400, &h("X-Amzn-ErrorType", "Throttling"), body).as_deref(),
            Some("Throttling")
        );
        // `__type` before `code`.
        let both = br#"{"code":"A","__type":"ns#B"}"#;
        assert_eq!(error_code(400, &[], both).as_deref(), Some("B"));
        assert_eq!(
            error_code(400, &[], br#"{"code":"RequestLimitExceeded"}"#).as_deref(),
            Some("RequestLimitExceeded")
        );
        assert_eq!(
            error_code(400, &[], br#"{"Code":"SlowDown"}"#).as_deref(),
            Some("SlowDown")
        );
        // Query/EC2 XML nests the code.
        let ec2 = b"<Response><Errors><Error><Code>RequestLimitExceeded</Code></Error></Errors></Response>";
        assert_eq!(
            error_code(503, &[], ec2).as_deref(),
            Some("RequestLimitExceeded")
        );
        assert_eq!(
            error_code(500, &[], b"<Code> InternalError </Code>").as_deref(),
            Some("InternalError")
        );
    }

    #[test]
    fn nothing_to_find() {
        for body in [
            &b""[..],
            b"{}",
            b"[1,2]",
            br#"{"__type": 5}"#,
            br#"{"__type": "ns#"}"#,
            b"<Code></Code>",
            b"<Code>unterminated",
            b"\xff\xfe",
        ] {
            assert_eq!(error_code(500, &[], body), None, "{body:?}");
        }
        assert_eq!(error_code(500, &h("x-amzn-errortype", ":x"), b""), None);
        assert_eq!(
            error_code(204, &h("x-amzn-errortype", "Throttling"), b""),
            None
        );
    }
}
