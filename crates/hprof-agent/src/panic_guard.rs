//! Every function the JVM calls (Agent_OnLoad, event callbacks, agent thread bodies, heap callbacks)
//! runs inside [`guard`]: a panic must never unwind into the JVM, which would abort it. The mechanism is
//! the jvmti crate's, shared with libjvmpi.so; this module gives it HPROF's error style.

pub use jvmti::panic_guard::guard;

/// Replaces Rust's default panic message with one line in HPROF's error style.
pub fn install_panic_hook() {
    jvmti::panic_guard::install_panic_hook(|msg| {
        crate::log::error(&format!("{msg}; profiling continues without this event"))
    });
}
