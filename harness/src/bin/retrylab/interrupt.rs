//! What Ctrl-C, SIGTERM and SIGHUP do to a running `retrylab`: kill the command clients it
//! started, then exit.
//!
//! Each command client runs in a process group of its own (so that it is stopped with every
//! process it starts), which also puts it out of reach of the terminal's Ctrl-C and of a
//! signal sent to retrylab's group, the way the pytest plugin stops `retrylab serve`. A
//! signal's default action ends retrylab without a destructor, so without this the clients
//! would run on, orphaned, until their own timeout.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Catches the stopping signals on a thread of its own for the rest of the process.
pub(crate) fn kill_commands_on_signal() {
    let mut signals = match Signals::new([SIGINT, SIGTERM, SIGHUP]) {
        Ok(signals) => signals,
        Err(e) => {
            // Not fatal: everything still runs, only a signal would leave clients behind.
            eprintln!(
                "retrylab: warning: cannot catch SIGINT/SIGTERM ({e}); a command client \
                 still running when retrylab is stopped by one is not stopped with it"
            );
            return;
        }
    };
    let watcher = std::thread::Builder::new()
        .name("retrylab-signals".to_owned())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let killed = retrylab::client::kill_running_commands();
                let name = match signal {
                    SIGINT => "SIGINT",
                    SIGTERM => "SIGTERM",
                    _ => "SIGHUP",
                };
                if killed > 0 {
                    eprintln!(
                        "retrylab: stopped by {name}; killed {killed} command client \
                         process group(s) still running"
                    );
                }
                // The shell's convention for a process ended by a signal.
                std::process::exit(128 + signal);
            }
        });
    if let Err(e) = watcher {
        eprintln!(
            "retrylab: warning: cannot start the signal thread ({e}); a command client still \
             running when retrylab is stopped by a signal is not stopped with it"
        );
    }
}
