//! The kinds an endpoint can be beyond a scripted one, each with its configuration and the
//! state machine that applies it: a message broker (`broker`), a token-bucket rate limiter
//! (`rate_limiter`), and idempotency-key deduplication (`dedupe`).
//!
//! The endpoint consults them before a route's script: a broker answers what is not a send,
//! an empty bucket answers by itself, and dedupe rejects or replays a key it has seen.

pub(crate) mod broker;
pub(crate) mod dedupe;
pub(crate) mod rate_limiter;
