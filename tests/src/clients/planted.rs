//! A planted defect for the property search: the reference client with the `exponential`
//! policy of [`policy`], except that it makes one attempt more than `max_attempts` allows,
//! and the correct client beside it.
//!
//! `scenarios/search/planted-off-by-one.yaml` searches for the defect without being told
//! where it is; `tests/search.rs` asserts that the search finds it and shrinks it.

use retrylab::Env;
use retrylab::client::ReferenceClient;
use retrylab::scenario::{ClientSpec, Jitter, Millis, exponential};

/// The attempts the policy allows per call.
pub const MAX_ATTEMPTS: u32 = 3;

/// The policy both clients claim: exponential from 100 ms, no jitter, 3 attempts.
pub fn policy() -> ClientSpec {
    policy_with(MAX_ATTEMPTS)
}

fn policy_with(max_attempts: u32) -> ClientSpec {
    exponential()
        .initial(Millis::from_ms(100))
        .jitter(Jitter::None)
        .max_attempts(max_attempts)
        .into()
}

/// The defect: it counts its attempts from 0 where the policy counts from 1, so it makes
/// `MAX_ATTEMPTS + 1` attempts against a schedule that keeps failing.
pub async fn off_by_one(env: Env) -> Result<u16, String> {
    call(&env, policy_with(MAX_ATTEMPTS + 1)).await
}

/// The same client without the defect.
pub async fn correct(env: Env) -> Result<u16, String> {
    call(&env, policy()).await
}

async fn call(env: &Env, spec: ClientSpec) -> Result<u16, String> {
    let policy = spec.policy().map_err(|e| e.to_string())?;
    ReferenceClient::new(policy)
        .call(env)
        .await
        .map_err(|e| e.to_string())
}
