//! Every function the JVM or a JVMPI agent calls into runs inside [`guard`]: a panic must never unwind into
//! the JVM or into C code, which would abort the process.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

static HOOK: Once = Once::new();

/// Replaces Rust's panic message with one line naming the layer.
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
            crate::log::error(&format!("internal error: {msg}{at}; the event is dropped"));
        }));
    });
}

/// Runs `f`; a panic becomes `fallback` (the hook has printed the message).
pub fn guard<T>(f: impl FnOnce() -> T, fallback: T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}
