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
