//! A process's output, read to its end on a thread of its own and kept up to
//! [`OUTPUT_LIMIT`] bytes: a program that prints 100 MB never blocks on a full pipe, and
//! never fills the report.

use std::io::Read;

use tokio::sync::oneshot;

use crate::report::ProcessOutput;
use crate::report::process::OUTPUT_LIMIT;

/// Reads `pipe` to its end on a new thread; the receiver gets what was kept.
pub(super) fn capture(mut pipe: impl Read + Send + 'static) -> oneshot::Receiver<ProcessOutput> {
    let (sender, receiver) = oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("retrylab-output".to_owned())
        .spawn(move || {
            let mut kept = Vec::new();
            let mut cut = 0u64;
            let mut buffer = [0u8; 16 * 1024];
            let mut unfinished = None;
            loop {
                match pipe.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(n) => {
                        let room = OUTPUT_LIMIT.saturating_sub(kept.len()).min(n);
                        kept.extend_from_slice(&buffer[..room]);
                        cut += (n - room) as u64;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        unfinished = Some(format!("reading the output failed: {e}"));
                        break;
                    }
                }
            }
            // The receiver is gone when the run no longer waits for this output.
            let _ = sender.send(ProcessOutput {
                text: String::from_utf8_lossy(&kept).into_owned(),
                cut_bytes: cut,
                unfinished,
            });
        });
    // A thread that could not start drops the sender with its closure: the caller sees the
    // receiver end without a value, and says the output was not read.
    drop(spawned);
    receiver
}
