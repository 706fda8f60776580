//! What Ctrl-C, SIGTERM and SIGHUP do to a process running command clients: kill their
//! process groups, then end as the signal would have ended it.
//!
//! Each command client runs in a process group of its own (so that it is stopped with every
//! process it starts), which also puts it out of reach of the terminal's Ctrl-C and of a
//! signal sent to retrylab's group, the way the pytest plugin stops `retrylab serve`. A
//! signal's default action ends the process without a destructor, so without this the
//! clients would run on, orphaned, until their own timeout.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use signal_hook::low_level::{emulate_default_handler, signal_name};

use std::sync::Once;

use super::group::kill_running;

/// Installed once per process, whoever calls first (the CLI, a suite, a harness of one's own).
static INSTALLED: Once = Once::new();

/// Catches SIGINT, SIGTERM and SIGHUP for the rest of the process, on a thread of its own:
/// on the first one, kills the process group of every command client still running (and
/// starts no other), says how many on standard error, and ends the process as the signal's
/// default action does, so a shell or a parent sees it die of that signal. A signal this
/// process was started ignoring (`nohup`, a background job's SIGINT) stays ignored.
///
/// The `retrylab` command and [`scenario_main!`](crate::scenario_main) suites call it
/// first thing; a harness of one's own that runs command clients may call it too. A second
/// call does nothing. Problems setting it up are printed as warnings: everything still runs,
/// only a signal would leave clients behind.
///
/// ```
/// retrylab::client::kill_commands_on_signal();
/// ```
pub fn kill_commands_on_signal() {
    INSTALLED.call_once(install);
}

fn install() {
    let caught: Vec<i32> = [SIGINT, SIGTERM, SIGHUP]
        .into_iter()
        .filter(|&signal| !ignored(signal))
        .collect();
    let mut signals = match Signals::new(&caught) {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!(
                "retrylab: warning: cannot catch SIGINT/SIGTERM ({e}); a command client \
                 still running when this process is stopped by one is not stopped with it"
            );
            return;
        }
    };
    let watcher = std::thread::Builder::new()
        .name("retrylab-signals".to_owned())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let killed = kill_running();
                if killed > 0 {
                    eprintln!(
                        "retrylab: stopped by {}; killed {killed} command client process \
                         group(s) still running",
                        signal_name(signal).unwrap_or("a signal")
                    );
                }
                // Dying of the signal, not exiting with a code: a shell loop stops on a
                // Ctrl-C only when its command died of SIGINT. The exit code is the
                // shell's convention for it, should the default action fail to end us.
                let _ = emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
    if let Err(e) = watcher {
        eprintln!(
            "retrylab: warning: cannot start the signal thread ({e}); a command client still \
             running when this process is stopped by a signal is not stopped with it"
        );
    }
}

/// Whether `signal`'s action is to be ignored, as a parent may set up before starting this
/// process (`nohup` for SIGHUP, a shell's background job for SIGINT): catching it would end
/// a process that was meant to live through it.
fn ignored(signal: i32) -> bool {
    // SAFETY: with a null new action, `sigaction` only reads the current one into `old`, a
    // plain C struct for which all zeroes is a valid value.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0
            && old.sa_sigaction == libc::SIG_IGN
    }
}
