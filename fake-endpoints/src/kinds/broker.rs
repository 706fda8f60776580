//! A RocketMQ-like message broker over HTTP/JSON: `kind: broker`.
//!
//! A producer sends `POST /topics/{topic}/messages` with `{"key": ..., "body": ...}`; the
//! broker answers each send with the step its script gives, like any endpoint, and a send
//! whose step commits is *stored*: the ledger's [`stored messages`](crate::StoredMessage)
//! list gets its topic, its key, the id the broker gave it and the instant. The broker does
//! not deduplicate, as `RocketMQ` does not: two sends of one message are two stored messages
//! with two ids, and only their key tells a consumer they are the same.
//!
//! What is fixed here rather than scripted:
//! - **Where a send goes.** Only `POST /topics/{topic}/messages` is a send. Anything else is
//!   answered 404 with `{"code":40400,"message":"NOT_FOUND"}`, and a topic the broker does not
//!   have (when it was given [`topics`](Broker::topics)) 404 with
//!   `{"code":40402,"message":"TOPIC_NOT_FOUND"}`; neither consumes a step.
//! - **The message key** is the body's `key` field, a string. A body without one (or with
//!   `null`, or a blank string: `RocketMQ` skips blank keys) takes the value of the
//!   endpoint's key header (the scenario's `operation.idempotency_key` header, such as
//!   `KEYS`), when the request carries a non-blank one; otherwise the message has no key. A
//!   body that is not a JSON object, or whose `key` is neither a string nor `null`, is
//!   answered 400 with `{"code":40000,"message":"BAD_REQUEST"}` and consumes no step.
//! - **Message ids** count the broker's stored messages: the `n`-th message it stores is
//!   `<endpoint>-<n>` (`broker-1`, `broker-2`, ...). A crash keeps them: the store survives it.
//! - **The acknowledgement.** A 2xx step without a body of its own answers
//!   `{"message_id":"<id>"}` with the id of the message the send stored, or
//!   `{"message_id":null}` when its step stored nothing (`commit: never`). An empty body is
//!   no body of its own; 204 and 205, which carry no body, are sent as scripted.
//! - **Error codes.** A step's [`error_code`](Broker::error_code) answers
//!   `{"code":n,"message":...}`: HTTP 429 for the throttling codes (530, 42900, 215), 500 for
//!   any other code.
//!
//! The wiremock responder hands wiremock a step's response when the send arrives, before
//! the step stores anything: a broker served that way sends a 2xx as scripted, without the
//! acknowledgement's id. Everything else above holds there too.

use std::sync::Arc;

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method, StatusCode};

use crate::http::response::SentResponse;
use crate::script::step::Step;

/// The broker error codes that mean "throttled": `RocketMQ`'s gRPC `TOO_MANY_REQUESTS` (530
/// in `ApsaraMQ`'s documentation, 42900 in the open-source clients) and the Remoting
/// protocol's flow control (215).
pub const THROTTLING_CODES: [u32; 3] = [530, 42900, 215];

/// What makes an endpoint a broker: the topics it has.
///
/// ```
/// use retrylab_endpoints::{Broker, EndpointConfig, Step};
///
/// // Throttled once (code 530, answered 429), then stored and acknowledged with its id.
/// let config = EndpointConfig::http("broker")
///     .broker(Broker::new().topics(["orders"]))
///     .script([Broker::error_code(530), Step::status(200)]);
/// assert_eq!(config.routes[0].script[0].respond.status.as_u16(), 429);
/// assert!(config.broker.as_ref().is_some_and(|b| b.has_topic("orders")));
/// assert!(!config.broker.as_ref().is_some_and(|b| b.has_topic("payments")));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Broker {
    /// The topics it accepts sends to; empty: every topic.
    pub topics: Vec<String>,
}

impl Broker {
    /// A broker that accepts every topic.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts sends to these topics only.
    pub fn topics<T: Into<String>>(mut self, topics: impl IntoIterator<Item = T>) -> Self {
        self.topics = topics.into_iter().map(Into::into).collect();
        self
    }

    /// Whether a send to `topic` is accepted.
    pub fn has_topic(&self, topic: &str) -> bool {
        self.topics.is_empty() || self.topics.iter().any(|t| t == topic)
    }

    /// A step answering with broker error `code`: 429 for a throttling code
    /// ([`THROTTLING_CODES`]), 500 for any other, with `content-type: application/json` and
    /// `{"code":<code>,"message":<name>}`. Like any step it commits nothing unless told to.
    ///
    /// ```
    /// use retrylab_endpoints::Broker;
    ///
    /// let throttled = Broker::error_code(42900);
    /// assert_eq!(throttled.respond.status.as_u16(), 429);
    /// assert_eq!(&throttled.respond.body[..], br#"{"code":42900,"message":"TOO_MANY_REQUESTS"}"#);
    /// assert_eq!(Broker::error_code(50001).respond.status.as_u16(), 500);
    /// ```
    pub fn error_code(code: u32) -> Step {
        let (status, message) = match code {
            // The Remoting protocol's flow control names itself.
            215 => (StatusCode::TOO_MANY_REQUESTS, "FLOW_CONTROL"),
            _ if THROTTLING_CODES.contains(&code) => {
                (StatusCode::TOO_MANY_REQUESTS, "TOO_MANY_REQUESTS")
            }
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "BROKER_ERROR"),
        };
        Step::status(status.as_u16())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .body(format!(r#"{{"code":{code},"message":"{message}"}}"#))
    }
}

/// A send the broker accepted, before its step decides whether it is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Send {
    pub(crate) topic: Arc<str>,
    pub(crate) key: Option<Arc<str>>,
}

impl Broker {
    /// Why the broker answers a request itself rather than with a step, or `None` for a
    /// send it takes: the rule the broker serves by, for a caller that wants to know before
    /// sending (a scenario's load-time warnings).
    ///
    /// ```
    /// use http::Method;
    /// use retrylab_endpoints::{Broker, Refusal};
    ///
    /// let broker = Broker::new().topics(["orders"]);
    /// let post = |path: &str, body: &str| broker.refusal(&Method::POST, path, body.as_bytes());
    /// assert_eq!(post("/topics/orders/messages", "{}"), None);
    /// assert_eq!(post("/topics/payments/messages", "{}"), Some(Refusal::TopicNotFound));
    /// assert_eq!(post("/topics/orders/messages", "not json"), Some(Refusal::BadRequest));
    /// ```
    pub fn refusal(&self, method: &Method, path: &str, body: &[u8]) -> Option<Refusal> {
        // The key header only gives the key, never a refusal.
        self.read(method, path, body, None).err()
    }

    /// Reads a request as a send, or the answer the broker gives it instead.
    /// `header_key` is the value of the endpoint's key header, if the request carries it.
    pub(crate) fn read(
        &self,
        method: &Method,
        path: &str,
        body: &[u8],
        header_key: Option<&HeaderValue>,
    ) -> Result<Send, Refusal> {
        let topic = path
            .strip_prefix("/topics/")
            .and_then(|rest| rest.strip_suffix("/messages"))
            .filter(|topic| !topic.is_empty() && !topic.contains('/'));
        let Some(topic) = topic.filter(|_| method == Method::POST) else {
            return Err(Refusal::NotFound);
        };
        if !self.has_topic(topic) {
            return Err(Refusal::TopicNotFound);
        }
        let Ok(serde_json::Value::Object(fields)) = serde_json::from_slice(body) else {
            return Err(Refusal::BadRequest);
        };
        // A blank key is no key, as `RocketMQ`'s producer skips blank keys; `null` is no key
        // too, the way JSON writes an absent value.
        let blank = |key: &str| key.trim().is_empty();
        let key = match fields.get("key") {
            Some(serde_json::Value::String(key)) if !blank(key) => Some(Arc::from(key.as_str())),
            None | Some(serde_json::Value::Null) | Some(serde_json::Value::String(_)) => header_key
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .filter(|key| !blank(key))
                .map(Arc::from),
            Some(_) => return Err(Refusal::BadRequest),
        };
        Ok(Send {
            topic: Arc::from(topic),
            key,
        })
    }
}

/// Why a request is not a send the broker takes: the broker answers it itself, and it
/// consumes no step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not `POST /topics/{topic}/messages`.
    NotFound,
    /// A topic the broker does not have.
    TopicNotFound,
    /// A body that is not a JSON object, or a `key` that is neither a string nor `null`.
    BadRequest,
}

impl Refusal {
    /// The status of the broker's answer: 404 for a wrong method, path or topic, 400 for a
    /// bad body.
    ///
    /// ```
    /// use retrylab_endpoints::Refusal;
    ///
    /// assert_eq!(Refusal::TopicNotFound.status().as_u16(), 404);
    /// assert_eq!(Refusal::BadRequest.status().as_u16(), 400);
    /// ```
    pub fn status(self) -> StatusCode {
        match self {
            Refusal::NotFound | Refusal::TopicNotFound => StatusCode::NOT_FOUND,
            Refusal::BadRequest => StatusCode::BAD_REQUEST,
        }
    }

    /// The broker's answer.
    pub(crate) fn response(self) -> SentResponse {
        let body: &'static str = match self {
            Refusal::NotFound => r#"{"code":40400,"message":"NOT_FOUND"}"#,
            Refusal::TopicNotFound => r#"{"code":40402,"message":"TOPIC_NOT_FOUND"}"#,
            Refusal::BadRequest => r#"{"code":40000,"message":"BAD_REQUEST"}"#,
        };
        json(self.status(), Bytes::from_static(body.as_bytes()))
    }
}

/// The acknowledgement a 2xx step without a body of its own sends: `response` with
/// `{"message_id": ...}`, naming `stored` (the message the send stored, if it stored one).
/// `None` for any other response, which is sent as scripted: a non-2xx, a body of its own,
/// or a 204 or 205, which carry none. A step's empty body is no body of its own: the
/// response keeps no trace of whether one was written.
pub(crate) fn acknowledgement(
    response: &SentResponse,
    stored: Option<&str>,
) -> Option<SentResponse> {
    // 204 and 205 carry no body by definition: such a step is sent as scripted.
    let bodiless = matches!(
        response.status,
        StatusCode::NO_CONTENT | StatusCode::RESET_CONTENT
    );
    if !response.status.is_success() || bodiless || !response.body.is_empty() {
        return None;
    }
    let id = match stored {
        Some(id) => serde_json::Value::from(id),
        None => serde_json::Value::Null,
    };
    let body = serde_json::json!({ "message_id": id }).to_string();
    let mut ack = response.clone();
    if !ack.headers.iter().any(|(name, _)| name == CONTENT_TYPE) {
        ack.headers
            .push((CONTENT_TYPE, HeaderValue::from_static("application/json")));
    }
    ack.body = Bytes::from(body);
    Some(ack)
}

/// The id of a broker's `n`-th stored message (from 1).
pub(crate) fn message_id(endpoint: &str, n: usize) -> Arc<str> {
    Arc::from(format!("{endpoint}-{n}"))
}

fn json(status: StatusCode, body: Bytes) -> SentResponse {
    SentResponse {
        status,
        headers: vec![(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
        grpc: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(broker: &Broker, method: Method, path: &str, body: &str) -> Result<Send, Refusal> {
        broker.read(&method, path, body.as_bytes(), None)
    }

    #[test]
    fn only_a_post_to_a_topic_s_messages_is_a_send() {
        let broker = Broker::new().topics(["orders"]);
        let send = read(
            &broker,
            Method::POST,
            "/topics/orders/messages",
            r#"{"key":"o-1"}"#,
        );
        assert_eq!(
            send,
            Ok(Send {
                topic: Arc::from("orders"),
                key: Some(Arc::from("o-1"))
            })
        );
        for (method, path) in [
            (Method::GET, "/topics/orders/messages"),
            (Method::POST, "/topics/orders"),
            (Method::POST, "/topics//messages"),
            (Method::POST, "/topics/a/b/messages"),
            (Method::POST, "/"),
        ] {
            assert_eq!(
                read(&broker, method, path, "{}"),
                Err(Refusal::NotFound),
                "{path}"
            );
        }
        assert_eq!(
            read(&broker, Method::POST, "/topics/payments/messages", "{}"),
            Err(Refusal::TopicNotFound)
        );
        // Without topics, every topic is the broker's.
        assert!(
            read(
                &Broker::new(),
                Method::POST,
                "/topics/payments/messages",
                "{}"
            )
            .is_ok()
        );
    }

    #[test]
    fn the_key_is_the_body_s_else_the_key_header_s() {
        let broker = Broker::new();
        let header = HeaderValue::from_static("k-header");
        let key = |body: &str, header: Option<&HeaderValue>| {
            broker
                .read(&Method::POST, "/topics/t/messages", body.as_bytes(), header)
                .map(|s| s.key.map(|k| k.to_string()))
        };
        assert_eq!(
            key(r#"{"key":"o-1"}"#, Some(&header)),
            Ok(Some("o-1".into()))
        );
        assert_eq!(
            key(r#"{"body":"x"}"#, Some(&header)),
            Ok(Some("k-header".into()))
        );
        assert_eq!(key(r#"{"key":null}"#, None), Ok(None));
        // null, empty and blank keys are no key: the header's, if any, is the key.
        for body in [r#"{"key":null}"#, r#"{"key":""}"#, r#"{"key":"  "}"#] {
            assert_eq!(key(body, None), Ok(None), "{body}");
            assert_eq!(
                key(body, Some(&header)),
                Ok(Some("k-header".into())),
                "{body}"
            );
        }
        let blank = HeaderValue::from_static(" ");
        assert_eq!(key("{}", Some(&blank)), Ok(None));
        assert_eq!(key(r#"{"body":"x"}"#, None), Ok(None));
        assert_eq!(key(r#"{"key":5}"#, None), Err(Refusal::BadRequest));
        assert_eq!(key("not json", None), Err(Refusal::BadRequest));
        assert_eq!(key("[1]", None), Err(Refusal::BadRequest));
        assert_eq!(key("", None), Err(Refusal::BadRequest));
    }

    #[test]
    fn a_bare_2xx_acknowledges_with_the_stored_id() {
        let ok = SentResponse::status_only(StatusCode::OK);
        let ack = acknowledgement(&ok, Some("broker-2")).unwrap_or_else(|| panic!("no ack"));
        assert_eq!(&ack.body[..], br#"{"message_id":"broker-2"}"#);
        assert_eq!(
            ack.headers,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))]
        );
        let lost = acknowledgement(&ok, None).unwrap_or_else(|| panic!("no ack"));
        assert_eq!(&lost.body[..], br#"{"message_id":null}"#);
        // A scripted body, and any non-2xx, are sent as scripted.
        let scripted = SentResponse {
            body: Bytes::from_static(b"{}"),
            ..ok.clone()
        };
        assert_eq!(acknowledgement(&scripted, Some("broker-1")), None);
        // Statuses without a body get none.
        for status in [
            StatusCode::NO_CONTENT,
            StatusCode::RESET_CONTENT,
            StatusCode::NOT_MODIFIED,
        ] {
            let bare = SentResponse::status_only(status);
            assert_eq!(acknowledgement(&bare, Some("broker-1")), None, "{status}");
        }
        let throttled = Broker::error_code(530)
            .respond
            .render(std::time::UNIX_EPOCH);
        assert_eq!(acknowledgement(&throttled, Some("broker-1")), None);
    }

    /// Flow control answers exactly as a step with code 530 does: one rule writes both.
    #[test]
    fn flow_control_answers_as_code_530() {
        let throttled = crate::RateLimit::per_second(1)
            .rocketmq_throttled()
            .when_empty;
        assert_eq!(throttled.status.as_u16(), 429);
        assert_eq!(
            &throttled.body[..],
            br#"{"code":530,"message":"TOO_MANY_REQUESTS"}"#
        );
        assert_eq!(
            throttled.headers,
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))]
        );
    }

    #[test]
    fn error_codes_answer_429_when_throttling_and_500_otherwise() {
        let status = |code| Broker::error_code(code).respond.status.as_u16();
        assert_eq!(THROTTLING_CODES.map(status), [429, 429, 429]);
        assert_eq!(status(1), 500);
        assert_eq!(
            &Broker::error_code(215).respond.body[..],
            br#"{"code":215,"message":"FLOW_CONTROL"}"#
        );
    }
}
