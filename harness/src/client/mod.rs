//! Built-in clients: the reference client, which runs any [`Policy`](crate::policy::Policy)
//! over `env.http_client()`.

pub(crate) mod command;
mod reference;

pub use command::kill_running as kill_running_commands;
pub use reference::{CallError, ReferenceClient};
