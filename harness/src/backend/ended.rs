//! What a client that kept its `Env` past its run gets, on every backend.

use std::io;

/// The error of every connect and every operation on a connection once the run has ended:
/// the run's records are closed, so nothing the client does would be seen.
pub(crate) fn run_ended_error() -> io::Error {
    io::Error::other(RunEnded)
}

/// The error inside [`run_ended_error`]; its `Debug` is its message too, since hyper-util's
/// error shows its cause by `Debug`.
struct RunEnded;

impl std::fmt::Display for RunEnded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "retrylab: the run this connection or Env belongs to has ended, and nothing it \
             sends now is recorded; an Env, and the HttpClient or EnvConnector taken from it, \
             must not outlive its run (keep them in the call's future, or in tasks the call \
             awaits before it returns)",
        )
    }
}

impl std::fmt::Debug for RunEnded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for RunEnded {}
