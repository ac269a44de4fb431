//! Every function the JVM calls (Agent_OnLoad, event callbacks, agent thread bodies, heap callbacks)
//! runs inside [`guard`]: a panic must never unwind into the JVM, which would abort it.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

static HOOK: Once = Once::new();

/// Replaces Rust's default panic message with one line in HPROF's error style.
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let at = info.location().map(|l| format!(" [{}:{}]", l.file(), l.line())).unwrap_or_default();
            crate::log::error(&format!("internal error: {msg}{at}; profiling continues without this event"));
        }));
    });
}

/// Runs `f`; a panic becomes `fallback` (the message has already been printed by the hook).
pub fn guard<T>(f: impl FnOnce() -> T, fallback: T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}
