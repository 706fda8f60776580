//! `grpc` steps: the keys that go with them, and the HTTP/2 they need
//! ([scenario format](../../../../docs/scenario-format.md#grpc-steps)).

use super::Validator;
use crate::scenario::model::bounds::MAX_HEADER_BYTES;
use crate::scenario::model::endpoint::EndpointSpec;
use crate::scenario::model::grpc::{PushbackSpec, decode_reply};
use crate::scenario::model::step::StepSpec;
use crate::scenario::yaml::locations::{index, join};
use retrylab_endpoints::Protocol;

/// A reply's largest decoded size, as a `body`'s (1 MiB).
const MAX_REPLY_BYTES: usize = 1 << 20;

impl Validator<'_> {
    /// `message`, `pushback` and `reply` belong to a `grpc` step, and hold what can be sent.
    pub(super) fn grpc_fields(
        &mut self,
        path: &str,
        grpc: bool,
        message: Option<&str>,
        pushback: Option<&PushbackSpec>,
        reply: Option<&str>,
    ) {
        for (key, set) in [
            ("message", message.is_some()),
            ("pushback", pushback.is_some()),
            ("reply", reply.is_some()),
        ] {
            if set && !grpc {
                self.err_expected(
                    &join(path, key),
                    format!("`{key}` is part of a gRPC answer and needs `grpc`"),
                    "`grpc: <status>` in the same step, such as `grpc: unavailable`",
                );
            }
        }
        if let Some(message) = message
            && message.len() > MAX_HEADER_BYTES
        {
            self.over_limit(
                &join(path, "message"),
                format!("a message of {} bytes", message.len()),
                format!("at most {MAX_HEADER_BYTES} bytes"),
            );
        }
        if let Some(PushbackSpec::Raw(raw)) = pushback {
            self.raw_header_value(&join(path, "pushback.raw"), raw);
        }
        if let Some(reply) = reply {
            match decode_reply(reply) {
                Ok(bytes) if bytes.len() > MAX_REPLY_BYTES => self.over_limit(
                    &join(path, "reply"),
                    format!("a reply of {} bytes", bytes.len()),
                    format!("at most {MAX_REPLY_BYTES} bytes"),
                ),
                Ok(_) => {}
                Err(e) => self.err_expected(
                    &join(path, "reply"),
                    format!("`reply` is not base64 ({e})"),
                    "the message's bytes in standard base64, such as `CgJoaQ==`",
                ),
            }
        }
    }

    /// A `grpc` step needs an endpoint that speaks HTTP/2 only: gRPC runs over HTTP/2, and an
    /// `auto` endpoint would answer an HTTP/1.1 client with what it cannot read. Said once,
    /// at the first such step.
    pub(super) fn grpc_protocol(&mut self, path: &str, e: &EndpointSpec) {
        if e.protocol == Protocol::Http2 {
            return;
        }
        let mut lists: Vec<(String, Vec<StepSpec>)> = Vec::new();
        if let Some(steps) = &e.script {
            lists.push((join(path, "script"), steps.clone()));
        }
        if let Some(steps) = &e.timeline {
            lists.push((
                join(path, "timeline"),
                steps.iter().map(|s| s.as_step()).collect(),
            ));
        }
        for (i, r) in e.routes.iter().enumerate() {
            let rp = index(&join(path, "routes"), i);
            if let Some(steps) = &r.script {
                lists.push((join(&rp, "script"), steps.clone()));
            }
            if let Some(steps) = &r.timeline {
                lists.push((
                    join(&rp, "timeline"),
                    steps.iter().map(|s| s.as_step()).collect(),
                ));
            }
        }
        let first = lists.iter().find_map(|(list, steps)| {
            steps
                .iter()
                .enumerate()
                .find_map(|(i, step)| first_grpc(&index(list, i), step))
        });
        if let Some(at) = first {
            let e = self
                .s
                .error_at(
                    &join(&at, "grpc"),
                    format!(
                        "a `grpc` step answers in gRPC, which runs over HTTP/2, and this \
                         endpoint speaks `{}`",
                        e.protocol.name()
                    ),
                )
                .with_expected("`protocol: http2` on the endpoint".to_owned());
            self.errors.push(e);
        }
    }
}

/// The path of the first step at or under `step` (its random branches) that answers in gRPC.
fn first_grpc(path: &str, step: &StepSpec) -> Option<String> {
    if step.grpc.is_some() {
        return Some(path.to_owned());
    }
    let then = step
        .then
        .as_deref()
        .and_then(|s| first_grpc(&join(path, "then"), s));
    then.or_else(|| {
        step.r#else
            .as_deref()
            .and_then(|s| first_grpc(&join(path, "else"), s))
    })
}
