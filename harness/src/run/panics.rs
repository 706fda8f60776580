//! Panics of run threads: a panic in a task the client spawned (which tokio would swallow)
//! is filed for the run it belongs to, and fails that run.

use std::cell::RefCell;
use std::sync::Once;

thread_local! {
    /// Panic messages of the run on this thread; `None` on threads that are not run threads.
    static PANICS: RefCell<Option<Vec<String>>> = const { RefCell::new(None) };
}

/// Installs (once per process) a panic hook that also files panics of run threads, so a panic
/// in a task the client spawned (which tokio would swallow) fails the run.
pub(super) fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let message = panic_text(info.payload());
            let filed = PANICS.with(|cell| {
                cell.borrow_mut().as_mut().map(|panics| {
                    let location = info
                        .location()
                        .map(|l| format!(" at {}:{}", l.file(), l.line()))
                        .unwrap_or_default();
                    panics.push(format!("{message}{location}"));
                })
            });
            if filed.is_none() {
                previous(info);
            }
        }));
    });
}

pub(super) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-text payload".to_owned()
    }
}

/// Starts filing the panics of this thread, as the thread of one run.
pub(super) fn start_filing() {
    PANICS.with(|cell| *cell.borrow_mut() = Some(Vec::new()));
}

/// The panics filed on this run thread so far.
pub(super) fn take() -> Vec<String> {
    PANICS
        .with(|cell| cell.borrow_mut().take())
        .unwrap_or_default()
}

/// The `panic` verdict's message for the panics of a run, with a hint when the client
/// started a runtime inside the run's (tokio refuses, in words about blocking).
pub(super) fn panic_message(panics: &[String]) -> String {
    let mut message = format!("the client panicked: {}", panics.join("; "));
    let nested = panics.iter().any(|panic| {
        panic.contains("Cannot start a runtime from within a runtime")
            || panic.contains("Cannot drop a runtime in a context where blocking is not allowed")
            || panic.contains("can call blocking only when running on the multi-threaded runtime")
    });
    if nested {
        message += ". The client started or blocked on a runtime of its own inside the \
                    run's: a run is one current-thread runtime on virtual time, which the \
                    client's code must await on (call the async API and .await it) instead \
                    of blocking its thread";
    }
    message
}
