//! The error code of a broker's JSON error body, `{"code": 530, "message": "..."}`.

/// The integer `code` of a JSON object `body`: a JSON integer, or a string holding one (as
/// some gateways quote it); `None` for anything else.
///
/// ```
/// use retrylab::policy::rocketmq::broker_code;
///
/// assert_eq!(broker_code(br#"{"code": 530, "message": "TOO_MANY_REQUESTS"}"#), Some(530));
/// assert_eq!(broker_code(br#"{"code": "42900"}"#), Some(42900));
/// assert_eq!(broker_code(br#"{"code": "Throttling"}"#), None);
/// assert_eq!(broker_code(b"Service Unavailable"), None);
/// ```
pub fn broker_code(body: &[u8]) -> Option<i64> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    match value.as_object()?.get("code")? {
        serde_json::Value::Number(n) => n.as_i64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}
