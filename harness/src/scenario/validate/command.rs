//! A command client (`client: { command: [...] }`): its argv and placeholders, its
//! environment, and the backend it needs.

use super::Validator;
use crate::scenario::model::client::command::{PLACEHOLDERS, Placeholder, placeholders};
use crate::scenario::model::client::{CommandClient, ProcessPer};
use crate::scenario::model::turmoil::BackendKind;
use crate::scenario::yaml::locations::{index, join};

/// The longest a command's process may run: a day, far beyond any real client's call.
const MAX_TIMEOUT_MS: u64 = 86_400_000;

/// The prefix of the variables the harness sets itself, which a file may not set.
const RESERVED_PREFIX: &str = "RETRYLAB_";

impl Validator<'_> {
    /// The command client at `path` (`client`, or an envelope that may not be one).
    pub(super) fn command_client(&mut self, path: &str, c: &CommandClient) {
        if path != "client" {
            self.err_expected(
                &join(path, "command"),
                "a command is a client to run, not a policy to conform to",
                "a built-in policy, such as `{ exponential: { ... } }`",
            );
            return;
        }
        let argv = join(path, "command");
        if c.program().trim().is_empty() {
            self.err_expected(
                &argv,
                "no program given",
                "the program and its arguments, such as `[python3, client.py, \"{url}\"]`",
            );
        }
        for (i, arg) in c.command.iter().enumerate() {
            self.command_argument(&index(&argv, i), arg, c.per);
        }
        for (name, value) in &c.env {
            let at = join(&join(path, "env"), name);
            if name.is_empty() || name.contains(['=', '\0']) {
                self.err_expected(
                    &at,
                    format!("`{name}` cannot name a variable"),
                    "a name without `=` or NUL",
                );
            } else if name.starts_with(RESERVED_PREFIX) {
                self.err_expected(
                    &at,
                    format!("`{name}` is set by retrylab for each call"),
                    "a name that does not start with `RETRYLAB_`",
                );
            }
            if value.contains('\0') {
                self.err_expected(&at, "a NUL byte in a value", "text without NUL");
            }
        }
        if let Some(cwd) = &c.cwd {
            if cwd.trim().is_empty() || cwd.contains('\0') {
                self.err_expected(
                    &join(path, "cwd"),
                    "an empty directory or one with a NUL byte",
                    "a directory relative to the scenario file, such as `.`",
                );
            }
        }
        let timeout = join(path, "timeout");
        self.positive(&timeout, c.timeout, "`timeout`");
        self.at_most(&timeout, c.timeout.as_ms(), MAX_TIMEOUT_MS, "ms (a day)");
        if self.s.backend != BackendKind::Real {
            self.err_expected(
                "backend",
                format!(
                    "a command client runs on real sockets, not on `backend: {}`",
                    self.s.backend.name()
                ),
                "`backend: real`, or no `backend:` (a command client implies it)",
            );
        }
    }

    /// One argument of the command: its placeholders known, its endpoints the scenario's.
    fn command_argument(&mut self, at: &str, arg: &str, per: ProcessPer) {
        if arg.contains('\0') {
            self.err_expected(at, "a NUL byte in an argument", "text without NUL");
            return;
        }
        let parts = match placeholders(arg) {
            Ok(parts) => parts,
            Err(why) => {
                self.err(at, why);
                return;
            }
        };
        for part in parts {
            if part == Placeholder::Call && per == ProcessPer::Run {
                self.err_expected(
                    at,
                    "`{call}` with `per: run`: one process makes every call",
                    "no `{call}` (the process tells its calls apart itself, sending \
                     `x-retrylab-call`), or `per: call`",
                );
            }
            if let Placeholder::EndpointUrl(name) = part {
                if !self.s.endpoints.contains_key(name) {
                    let known = super::listed(self.s.endpoints.keys().map(String::as_str));
                    self.err_expected(
                        at,
                        format!("`{{url:{name}}}` names no endpoint of the scenario"),
                        format!("one of {known}; the placeholders are {PLACEHOLDERS}"),
                    );
                }
            }
        }
    }
}
