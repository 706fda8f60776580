//! The watchdog's records of a run that stopped its own clock: the polls that blocked the
//! run's thread, and how the thread spent that real time. They explain a run; nothing in
//! them enters the trace's timeline.

/// A poll of the client that blocked the thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LongPoll {
    /// The virtual instant it happened at.
    pub(crate) at_ms: u64,
    /// Attempts the run had started when the poll began, and when it ended.
    pub(crate) attempts: (u32, u32),
    /// How much real time it took, in ms.
    pub(crate) wall_ms: u64,
    /// `false`: one poll of the client blocked the run's thread. `true`: between two polls
    /// the run waited in real time for something outside the simulation (a `spawn_blocking`
    /// task that sleeps, a std channel, real IO) while virtual time stood still.
    pub(crate) waited: bool,
    /// How the run's thread spent that real time, where the system says (Linux).
    pub(crate) spent: Option<Spent>,
}

/// How a thread spent a span of real time, from the kernel's accounting of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Spent {
    /// On a CPU, in ms.
    pub(crate) on_cpu_ms: u64,
    /// Ready to run but waiting for a CPU (the machine's load), in ms.
    pub(crate) waiting_ms: u64,
    /// Asleep: in a sleep, a lock, IO, or a wait for another thread, in ms.
    pub(crate) asleep_ms: u64,
}

impl Spent {
    /// The real time the thread took of its own doing: on a CPU or asleep. Time spent
    /// waiting for a CPU is the machine's load, not the thread's.
    pub(crate) fn own_ms(&self) -> u64 {
        self.on_cpu_ms + self.asleep_ms
    }
}
