//! The processes of a command client (`client: { command: [...] }`): what each was asked to
//! run, how it ended and what it printed, kept in the report beside the trace.

use std::fmt;

/// How many bytes of each of a process's outputs a report keeps; the rest is counted.
pub const OUTPUT_LIMIT: usize = 64 * 1024;

/// One process of a command client.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProcessRun {
    /// The client instance that ran it (0 unless a fleet).
    pub client: u32,
    /// The call it made (`per: call`), or `None` for a process of the whole run (`per: run`).
    pub call: Option<u32>,
    /// The program and its arguments, placeholders expanded.
    pub argv: Vec<String>,
    /// The working directory it ran in, when the file gave one.
    pub cwd: Option<String>,
    /// When it started and ended, in ms since the run started.
    pub start_ms: u64,
    /// See `start_ms`.
    pub end_ms: u64,
    /// How it ended.
    pub exit: ProcessExit,
    /// Requests the endpoints received while it ran (of any process, when several overlap).
    pub requests: u64,
    /// Whether members of its process group outlived it (and were killed).
    pub left_children: bool,
    /// Its standard output, as much as a report keeps.
    pub stdout: ProcessOutput,
    /// Its standard error, as much as a report keeps.
    pub stderr: ProcessOutput,
}

/// How a process of a command client ended; displayed as the run's outputs say it.
///
/// ```
/// use retrylab::ProcessExit;
/// assert_eq!(ProcessExit::Code(1).to_string(), "exit 1");
/// assert!(!ProcessExit::Code(1).success());
/// let killed = ProcessExit::TimedOut { after_ms: 2_000 };
/// assert_eq!(killed.to_string(), "killed at its timeout (2.000s)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProcessExit {
    /// It exited with this status.
    Code(i32),
    /// A signal ended it (not one of retrylab's).
    Signal(i32),
    /// It was still running at its `timeout` and was killed with its process group.
    TimedOut {
        /// The timeout, in ms.
        after_ms: u64,
    },
    /// It never started: the program is missing, not executable, or the OS refused.
    NotStarted(String),
    /// The run stopped (at `limits.wall`) while it ran: it was killed with its group.
    Stopped,
}

impl ProcessExit {
    /// Whether it exited on its own with status 0.
    pub fn success(&self) -> bool {
        *self == ProcessExit::Code(0)
    }
}

impl fmt::Display for ProcessExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProcessExit::Code(code) => write!(f, "exit {code}"),
            ProcessExit::Signal(signal) => write!(f, "signal {signal}"),
            ProcessExit::TimedOut { after_ms } => write!(
                f,
                "killed at its timeout ({})",
                crate::trace::seconds(*after_ms)
            ),
            ProcessExit::NotStarted(why) => write!(f, "not started: {why}"),
            ProcessExit::Stopped => f.write_str("killed when the run stopped"),
        }
    }
}

/// What a process wrote to one of its outputs: the first [`OUTPUT_LIMIT`] bytes, decoded
/// lossily, and how many more were cut.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProcessOutput {
    /// The text kept.
    pub text: String,
    /// Bytes written past the limit, not kept.
    pub cut_bytes: u64,
    /// Why the output could not be read to its end, if it could not (a process outside the
    /// group held it open).
    pub unfinished: Option<String>,
}

impl ProcessOutput {
    /// The text kept, then a line saying how much was cut, if anything was.
    ///
    /// ```
    /// use retrylab::ProcessOutput;
    /// let mut output = ProcessOutput::default();
    /// output.text = "a\n".into();
    /// output.cut_bytes = 10;
    /// assert_eq!(output.shown(), "a\n[retrylab: 10 more bytes cut]\n");
    /// ```
    pub fn shown(&self) -> String {
        let mut text = self.text.clone();
        if self.cut_bytes > 0 {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("[retrylab: {} more bytes cut]\n", self.cut_bytes));
        }
        if let Some(why) = &self.unfinished {
            text.push_str(&format!("[retrylab: {why}]\n"));
        }
        text
    }
}

impl ProcessOutput {
    /// The last `n` lines of [`shown`](Self::shown) (the cut notes included), after a line
    /// saying how many came before, if any did.
    pub(crate) fn tail(&self, n: usize) -> Vec<String> {
        let shown = self.shown();
        let lines: Vec<&str> = shown.lines().collect();
        let skipped = lines.len().saturating_sub(n);
        let mut tail = Vec::new();
        if skipped > 0 {
            tail.push(format!("... {skipped} line(s) before"));
        }
        tail.extend(lines[skipped..].iter().map(|l| (*l).to_owned()));
        tail
    }
}

impl ProcessRun {
    /// `` `python3 client.py http://...` `` and its call: how findings name the process.
    pub(crate) fn headline_argv(&self) -> String {
        match self.call {
            Some(call) => format!("`{}` (call {call})", self.argv.join(" ")),
            None => format!("`{}`", self.argv.join(" ")),
        }
    }

    /// `` `python3 client.py http://...` (call 0): exit 1 ``: one line for summaries.
    pub fn headline(&self) -> String {
        let call = match self.call {
            Some(call) => format!("call {call}"),
            None => "every call".to_owned(),
        };
        format!("`{}` ({call}): {}", self.argv.join(" "), self.exit)
    }

    /// The process as JSON: its argv, call, times, exit and outputs.
    pub fn to_json(&self) -> serde_json::Value {
        let (code, signal) = match self.exit {
            ProcessExit::Code(code) => (Some(code), None),
            ProcessExit::Signal(signal) => (None, Some(signal)),
            _ => (None, None),
        };
        serde_json::json!({
            "client": self.client,
            "call": self.call,
            "argv": self.argv,
            "cwd": self.cwd,
            "start_ms": self.start_ms,
            "end_ms": self.end_ms,
            "exit": self.exit.to_string(),
            "exit_code": code,
            "signal": signal,
            "requests": self.requests,
            "left_children": self.left_children,
            "stdout": self.stdout.text,
            "stdout_cut_bytes": self.stdout.cut_bytes,
            "stderr": self.stderr.text,
            "stderr_cut_bytes": self.stderr.cut_bytes,
        })
    }
}
