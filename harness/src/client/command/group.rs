//! A command's process group: the program runs as the leader of a group of its own, so that
//! it is stopped with every process it started (a client that forks, a shell wrapper), and
//! so that retrylab can tell whether any of them outlived it.
//!
//! Every group still running is also listed process-wide, for [`kill_running`]: a group of
//! its own does not get the terminal's Ctrl-C or a signal sent to retrylab's group, so a
//! retrylab stopped by a signal (which runs no destructor) must kill them itself
//! (`signals.rs`).

use std::collections::BTreeSet;
use std::process::{Child, Command};
use std::sync::{Mutex, PoisonError};

/// The groups of this process's command clients that have not ended yet, and whether the
/// process is stopping (after [`kill_running`], no group starts).
struct Running {
    groups: BTreeSet<i32>,
    stopping: bool,
}

static RUNNING: Mutex<Running> = Mutex::new(Running {
    groups: BTreeSet::new(),
    stopping: false,
});

/// The running list, usable even if a thread panicked while holding it: no update leaves
/// it half-written.
fn running() -> std::sync::MutexGuard<'static, Running> {
    RUNNING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Kills every command client's process group still running in this process and stops any
/// other from starting; returns how many groups it killed. For a process about to end on a
/// signal: there is no way back.
pub(super) fn kill_running() -> usize {
    let groups = {
        let mut running = running();
        running.stopping = true;
        std::mem::take(&mut running.groups)
    };
    groups
        .iter()
        .filter(|&&pgid| Group { pgid, armed: false }.kill())
        .count()
}

/// A running process group, killed when dropped unless it was found empty: a run stopped
/// at `limits.wall` while a program ran, or a call cut short for any reason, leaves no
/// process behind.
pub(super) struct Group {
    pgid: i32,
    armed: bool,
}

impl Group {
    /// Starts `command` (set up with `process_group(0)`) as the leader of a group of its
    /// own, listed as running. The list stays locked from before the spawn until the group
    /// is on it, so a signal's [`kill_running`] either finds the group or keeps it from
    /// starting: no client starts unseen while the process stops.
    pub(super) fn spawn(command: &mut Command) -> std::io::Result<(Child, Group)> {
        let mut running = running();
        if running.stopping {
            return Err(std::io::Error::other(
                "retrylab is stopping on a signal and starts no more processes",
            ));
        }
        let child = command.spawn()?;
        let pgid = i32::try_from(child.id()).unwrap_or(0);
        running.groups.insert(pgid);
        Ok((child, Group { pgid, armed: true }))
    }

    /// Whether any process of the group is still alive (signal 0 checks without sending).
    pub(super) fn alive(&self) -> bool {
        self.signal(0)
    }

    /// Kills every process of the group; `true` when there was one to kill.
    pub(super) fn kill(&self) -> bool {
        self.signal(libc::SIGKILL)
    }

    /// Kills what is left of the group and disarms the drop.
    pub(super) fn finish(mut self) -> bool {
        self.armed = false;
        let killed = self.kill();
        running().groups.remove(&self.pgid);
        killed
    }

    fn signal(&self, signal: i32) -> bool {
        // Group 0 or 1 would be this process's own group or init's: never signalled.
        if self.pgid <= 1 {
            return false;
        }
        // SAFETY: `killpg` only sends a signal; the group is the one this module created,
        // and a group that no longer exists gives ESRCH, read as `false`.
        unsafe { libc::killpg(self.pgid, signal) == 0 }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.armed {
            self.kill();
            running().groups.remove(&self.pgid);
        }
    }
}
