//! The thread-safety the docs promise, checked when this file compiles: a test that moves one
//! of these across threads (a scenario loaded once and run from several test threads, a
//! report handed to a reporting thread, an `Env` moved into a spawned task) builds on every
//! version that keeps these lines compiling.

use retrylab::suite::Clients;
use retrylab::{Env, Report, Scenario};

fn send_sync<T: Send + Sync>() {}

#[test]
fn the_documented_types_are_send_and_sync() {
    send_sync::<Scenario>();
    send_sync::<Report>();
    send_sync::<Env>();
    send_sync::<Clients>();
}
