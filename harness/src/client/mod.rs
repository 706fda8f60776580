//! Built-in clients: the reference client, which runs any [`Policy`](crate::policy::Policy)
//! over `env.http_client()`.

pub(crate) mod command;
mod reference;

pub use command::kill_commands_on_signal;
pub use reference::{CallError, ReferenceClient};
