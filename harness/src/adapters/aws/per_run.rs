//! What the AWS SDK keeps from one call to the next, made afresh for each run: the
//! configuration with its retry partition (the retry quota's token bucket, the adaptive
//! mode's rate limiter), the clients built from it, and the seed of the generator the SDK
//! draws its randomness from.
//!
//! **The retry partition.** The SDK keeps the token bucket of a default partition (named
//! after the service and region, `sqs-us-east-1`) in a process-wide static
//! (aws-smithy-runtime, `client/retries/strategy/standard.rs`, `TOKEN_BUCKET`), so a second
//! run in the same process would start with the quota the first one left: after a run that
//! emptied it, a call allowed 100 attempts makes 1 or 2 where the first run's made 51. A custom
//! partition (`RetryPartition::custom`) owns its bucket and rate limiter; each run gets one
//! per client instance, shared by its calls.
//!
//! **The clients.** The SDK's retry strategy belongs to the client (it is made with the
//! client's runtime plugins) and holds the tokens of the last retry it paid for until its
//! next call forgets them (a retry) or gives them back (a success); a client dropped at the
//! end of a failed call gives them back at once. So a client made in every call would spend
//! half the quota a long-lived client spends on a failing service. [`client`] keeps one per
//! run, as a process keeps one.
//!
//! **The generator.** The SDK's jitter (`fastrand::f64()` in the standard retry strategy),
//! its invocation ids (aws-runtime's `DefaultInvocationIdGenerator`, forked from the same
//! generator) and its identity cache's jitter draw from `fastrand`'s thread-local
//! generator, seeded from the OS. A run executes on a thread of its own, on one
//! current-thread runtime that polls in a fixed order, so every draw happens on that thread
//! in the same order in every run: seeding the generator once per run, from
//! `env.seed("aws/fastrand")`, makes those draws, and so the trace, the same in every run
//! of the same scenario and seed.
//!
//! Runs are told apart by their tokio runtime (`Handle::id`, unique in a process), so the
//! state is fresh even if a thread were to host two runs.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::UNIX_EPOCH;

use aws_smithy_runtime::client::retries::{ClientRateLimiter, RetryPartition, TokenBucket};
use tokio::runtime::{Handle, Id};

use super::AwsSdkConfig;
use crate::Env;

/// The label of `env.seed` that seeds `fastrand`'s generator for a run.
pub const FASTRAND_SEED_LABEL: &str = "aws/fastrand";

/// The name of the retry partition each run gets (custom partitions are told apart by
/// identity, not by name).
pub const RETRY_PARTITION_NAME: &str = "retrylab";

thread_local! {
    /// The state of the run on this thread.
    static RUN: RefCell<Option<PerRun>> = const { RefCell::new(None) };
}

struct PerRun {
    runtime: Id,
    /// By client instance.
    instances: BTreeMap<u32, Instance>,
}

/// What one client instance of the run keeps.
struct Instance {
    config: AwsSdkConfig,
    /// The clients built with [`client`], by label and type.
    clients: BTreeMap<(String, TypeId), Box<dyn Any>>,
}

/// Runs `f` on the state of `env`'s client instance in this run, made (and the generator
/// seeded) at the first use in the run. `None` outside any runtime: not in a run (an `Env`
/// kept past its run, whose network fails every request saying so).
fn with_instance<R>(env: &Env, f: impl FnOnce(&mut Instance) -> R) -> Option<R> {
    let runtime = Handle::try_current().ok()?.id();
    let kept = RUN.with(|cell| {
        let mut cell = cell.borrow_mut();
        let run = match &mut *cell {
            Some(run) if run.runtime == runtime => run,
            slot => {
                fastrand::seed(env.seed(FASTRAND_SEED_LABEL));
                slot.insert(PerRun {
                    runtime,
                    instances: BTreeMap::new(),
                })
            }
        };
        let instance = run
            .instances
            .entry(env.client_index())
            .or_insert_with(|| Instance {
                config: AwsSdkConfig::build(env, fresh_partition(env)),
                clients: BTreeMap::new(),
            });
        f(instance)
    });
    Some(kept)
}

/// The configuration of `env`'s client instance in this run.
pub(super) fn config(env: &Env) -> AwsSdkConfig {
    with_instance(env, |instance| instance.config.clone())
        .unwrap_or_else(|| AwsSdkConfig::build(env, fresh_partition(env)))
}

/// The client `build` makes from the run's configuration, made at its first use in the run
/// and kept under `label` (and its type) for the run's later calls.
pub(super) fn client<C: Clone + 'static>(
    env: &Env,
    label: &str,
    build: impl FnOnce(AwsSdkConfig) -> C,
) -> C {
    let key = (label.to_owned(), TypeId::of::<C>());
    let kept = with_instance(env, |instance| {
        let kept = instance.clients.get(&key)?.downcast_ref::<C>();
        kept.cloned()
    })
    .flatten();
    if let Some(client) = kept {
        return client;
    }
    // Built outside the borrow of the run's state: `build` may ask for the configuration.
    let client = build(config(env));
    with_instance(env, |instance| {
        let kept = instance
            .clients
            .entry(key)
            .or_insert_with(|| Box::new(client.clone()));
        kept.downcast_ref::<C>().cloned()
    })
    .flatten()
    .unwrap_or(client)
}

/// A partition of its own: the bucket the SDK makes for a default partition under Retry
/// Behavior 2.0 (500 tokens; a retry costs 5, 10 after a transient error, 5 after a
/// throttle), and the rate limiter it makes for the adaptive mode, started at the virtual now.
fn fresh_partition(env: &Env) -> RetryPartition {
    let now = env
        .now_system()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |since| since.as_secs_f64());
    RetryPartition::custom(RETRY_PARTITION_NAME)
        .token_bucket(TokenBucket::default())
        .client_rate_limiter(ClientRateLimiter::new(now))
        .build()
}

impl Env {
    /// The AWS SDK for Rust configuration of this run, and its retry partition (see
    /// [`AwsSdkConfig`]; feature `aws`): the same in every call of the run. Outside a run
    /// (an `Env` kept past its run) each call gets a fresh configuration, whose requests the
    /// ended run's network refuses.
    ///
    /// An SDK client keeps state from call to call beyond its retry partition: its retry
    /// strategy holds the tokens of the last retry it paid for until its next call. Build
    /// the client once per run with [`Env::aws_sdk_client`], as a process builds it once; a
    /// client built in every call gives those tokens back to the quota when it is dropped.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// # let scenario = Scenario::builder("sdk config")
    /// #     .endpoint("queue", endpoint().script([status(200)]))
    /// #     .operation(post("queue", "/"))
    /// #     .build()
    /// #     .unwrap();
    /// scenario.run(|env: Env| async move {
    ///     let aws = env.aws_sdk_config();
    ///     assert_eq!(aws.sdk_config.endpoint_url(), Some("http://queue"));
    ///     Ok::<_, ()>(())
    /// });
    /// ```
    pub fn aws_sdk_config(&self) -> AwsSdkConfig {
        config(self)
    }

    /// The AWS SDK client `build` makes from [`Env::aws_sdk_config`], built at the first
    /// call of the run that asks for it and kept under `label` for the run's later calls
    /// (feature `aws`). Each request it sends is an attempt of the call that sent it.
    ///
    /// One client for the run's calls is what a process has: the retry quota, and the
    /// tokens the SDK's retry strategy holds from one call to the next, carry over as they
    /// do in production, and start afresh in every run.
    ///
    /// ```
    /// # use retrylab::prelude::*;
    /// # let scenario = Scenario::builder("three calls")
    /// #     .endpoint("queue", endpoint().script([status(200)]))
    /// #     .operation(post("queue", "/").calls(3))
    /// #     .build()
    /// #     .unwrap();
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    ///
    /// let built = Arc::new(AtomicU32::new(0));
    /// let counter = built.clone();
    /// scenario.run(move |env: Env| {
    ///     let counter = counter.clone();
    ///     async move {
    ///         // With a service crate: aws_sdk_sqs::Client::from_conf(
    ///         //     aws_sdk_sqs::config::Builder::from(&aws.sdk_config)
    ///         //         .retry_partition(aws.retry_partition).build())
    ///         let client = env.aws_sdk_client("sqs", |aws| {
    ///             counter.fetch_add(1, Ordering::Relaxed);
    ///             aws.sdk_config
    ///         });
    ///         assert_eq!(client.endpoint_url(), Some("http://queue"));
    ///         Ok::<_, ()>(())
    ///     }
    /// });
    /// assert_eq!(built.load(Ordering::Relaxed), 1); // once for the run's three calls
    /// ```
    pub fn aws_sdk_client<C: Clone + 'static>(
        &self,
        label: &str,
        build: impl FnOnce(AwsSdkConfig) -> C,
    ) -> C {
        client(self, label, build)
    }
}
