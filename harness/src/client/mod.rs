//! Built-in clients: the reference client, which runs any [`Policy`](crate::policy::Policy)
//! over `env.http_client()`; and [`kill_commands_on_signal`], which keeps a process stopped
//! by a signal from leaving the programs of `client: { command }` behind.

pub(crate) mod command;
mod reference;

pub use command::kill_commands_on_signal;
pub use reference::{CallError, ReferenceClient};
