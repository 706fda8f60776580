//! JSON Schema for the types with hand-written (de)serialization (feature `schema`).
//!
//! The derived types get their schema from `schemars`; these describe what the hand-written
//! visitors accept, so editors validate the same forms the parser does.

use schemars::JsonSchema;
use schemars::r#gen::SchemaGenerator;
use schemars::schema::Schema;
use serde_json::json;

use super::dedupe::DedupeAnswerSpec;
use super::duration::{DurationOrNone, Millis, OffsetMillis};
use super::endpoint::{ThrottlePreset, WhenEmptySpec};
use super::grpc::{GrpcStatusSpec, PushbackSpec};
use super::headers::HeadersSpec;
use super::latency::{ExponentialLatencySpec, LatencySpec, LognormalSpec};
use super::retry_after::{DateFormat, RetryAfterSpec};
use super::step::{AfterBytes, FailSpec, StepSpec};
use super::values::{CountSpec, DurationRange, Probability};

const DURATION_PATTERN: &str = r"^(0|[0-9]+(\.[0-9]+)?(ms|s|m|h|d))$";

/// A schema from its JSON text; a malformed one degrades to "anything" rather than failing.
pub(crate) fn from_json(value: serde_json::Value) -> Schema {
    serde_json::from_value(value).unwrap_or(Schema::Bool(true))
}

pub(crate) fn string_pattern(pattern: &str, description: &str) -> Schema {
    from_json(json!({ "type": "string", "pattern": pattern, "description": description }))
}

pub(crate) fn string_enum(values: &[&str]) -> Schema {
    from_json(json!({ "type": "string", "enum": values }))
}

fn one_key(key: &str, value: Schema) -> Schema {
    from_json(json!({
        "type": "object",
        "properties": { key: value },
        "required": [key],
        "additionalProperties": false
    }))
}

fn duration_schema() -> Schema {
    from_json(json!({
        "anyOf": [
            { "type": "string", "pattern": DURATION_PATTERN },
            { "const": 0 }
        ],
        "description": "a whole-millisecond duration such as `250ms`, `2s`, `1.5s`, `5m`, `1h` or `1d`"
    }))
}

macro_rules! schema_impl {
    ($ty:ty, $name:literal, |$gen:ident| $body:expr) => {
        impl JsonSchema for $ty {
            fn schema_name() -> String {
                $name.to_string()
            }
            fn json_schema($gen: &mut SchemaGenerator) -> Schema {
                $body
            }
        }
    };
}

schema_impl!(Millis, "Millis", |_g| duration_schema());

schema_impl!(OffsetMillis, "OffsetMillis", |_g| string_pattern(
    r"^[+-]?(0|[0-9]+(\.[0-9]+)?(ms|s|m|h|d))$",
    "an offset such as `+30s` or `-5m`"
));

schema_impl!(DurationOrNone, "DurationOrNone", |_g| from_json(json!({
    "anyOf": [ { "const": "none" }, serde_json::to_value(duration_schema()).unwrap_or_default() ]
})));

schema_impl!(Probability, "Probability", |_g| from_json(json!({
    "type": "number", "minimum": 0, "maximum": 1
})));

schema_impl!(CountSpec, "CountSpec", |_g| from_json(json!({
    "anyOf": [
        { "type": "integer", "minimum": 0 },
        {
            "type": "object",
            "properties": {
                "min": { "type": "integer", "minimum": 0 },
                "max": { "type": "integer", "minimum": 0 }
            },
            "additionalProperties": false,
            "minProperties": 1
        }
    ]
})));

schema_impl!(DurationRange, "DurationRange", |_g| {
    let d = serde_json::to_value(duration_schema()).unwrap_or_default();
    from_json(json!({ "type": "array", "items": d, "minItems": 2, "maxItems": 2 }))
});

schema_impl!(HeadersSpec, "HeadersSpec", |_g| from_json(json!({
    "anyOf": [
        { "type": "object", "additionalProperties": { "type": ["string", "number"] } },
        {
            "type": "array",
            "items": {
                "anyOf": [
                    { "type": "array", "items": { "type": ["string", "number"] }, "minItems": 2, "maxItems": 2 },
                    { "type": "object", "additionalProperties": { "type": ["string", "number"] }, "minProperties": 1, "maxProperties": 1 }
                ]
            }
        }
    ]
})));

schema_impl!(LatencySpec, "LatencySpec", |g| {
    let options = vec![
        duration_schema(),
        one_key("uniform", g.subschema_for::<DurationRange>()),
        one_key("lognormal", g.subschema_for::<LognormalSpec>()),
        one_key("exponential", g.subschema_for::<ExponentialLatencySpec>()),
    ];
    from_json(json!({ "anyOf": serde_json::to_value(options).unwrap_or_default() }))
});

schema_impl!(WhenEmptySpec, "WhenEmptySpec", |g| {
    let options = vec![
        g.subschema_for::<ThrottlePreset>(),
        g.subschema_for::<StepSpec>(),
    ];
    from_json(json!({ "anyOf": serde_json::to_value(options).unwrap_or_default() }))
});

schema_impl!(DedupeAnswerSpec, "DedupeAnswerSpec", |g| {
    let step = serde_json::to_value(g.subschema_for::<StepSpec>()).unwrap_or_default();
    from_json(json!({
        "description": "Dedupe's answer: a status, or a response written out (`status`, `headers`, `body`, `retry_after`).",
        "anyOf": [ { "type": "integer", "minimum": 100, "maximum": 599 }, step ]
    }))
});

/// An HTTP/2 error code by its name.
fn h2_code() -> Schema {
    from_json(json!({ "type": "string", "enum": retrylab_endpoints::H2Code::NAMES }))
}

/// `goaway`'s value: `graceful`, or a code.
fn h2_goaway() -> Schema {
    let words: &[&str] = &super::h2_fail::GOAWAY_WORDS;
    from_json(json!({ "type": "string", "enum": words }))
}

/// `rst_stream`'s value: a code, or `{ code, body_bytes }`.
fn h2_rst_stream() -> Schema {
    let code = serde_json::to_value(h2_code()).unwrap_or_default();
    from_json(json!({
        "anyOf": [
            code.clone(),
            {
                "type": "object",
                "properties": { "code": code, "body_bytes": { "type": "integer", "minimum": 0 } },
                "required": ["code", "body_bytes"],
                "additionalProperties": false
            }
        ]
    }))
}

schema_impl!(FailSpec, "FailSpec", |g| {
    let options = vec![
        string_enum(&["close", "reset", "hang"]),
        one_key("close", g.subschema_for::<AfterBytes>()),
        one_key("reset", g.subschema_for::<AfterBytes>()),
        one_key("rst_stream", h2_rst_stream()),
        one_key("goaway", h2_goaway()),
    ];
    from_json(json!({ "anyOf": serde_json::to_value(options).unwrap_or_default() }))
});

schema_impl!(GrpcStatusSpec, "GrpcStatusSpec", |_g| {
    let names: Vec<String> = retrylab_endpoints::GrpcCode::snake_names().collect();
    from_json(json!({
        "anyOf": [
            { "type": "string", "enum": names },
            { "type": "integer", "minimum": 0, "maximum": 16 }
        ],
        "description": "a gRPC status: its name in snake case, or its number"
    }))
});

schema_impl!(PushbackSpec, "PushbackSpec", |_g| {
    let duration = serde_json::to_value(duration_schema()).unwrap_or_default();
    from_json(json!({
        "anyOf": [
            duration,
            {
                "type": "object",
                "properties": { "raw": { "type": "string" } },
                "required": ["raw"],
                "additionalProperties": false
            }
        ]
    }))
});

schema_impl!(RetryAfterSpec, "RetryAfterSpec", |g| {
    let date = serde_json::to_value(g.subschema_for::<OffsetMillis>()).unwrap_or_default();
    let format = serde_json::to_value(g.subschema_for::<DateFormat>()).unwrap_or_default();
    from_json(json!({
        "anyOf": [
            { "type": "integer" },
            {
                "type": "object",
                "properties": { "http_date": date, "format": format },
                "required": ["http_date"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": { "raw": { "type": "string" } },
                "required": ["raw"],
                "additionalProperties": false
            }
        ]
    }))
});
