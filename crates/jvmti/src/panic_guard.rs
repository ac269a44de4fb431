//! Every function the JVM (or C code it loaded) calls into runs inside [`guard`]: a panic must never unwind
//! into the JVM, which would abort the process. Shared by libhprof.so and libjvmpi.so; each installs the hook
//! once with its own way of reporting.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

static HOOK: Once = Once::new();

/// Replaces Rust's default panic message with one line, `internal error: <message> [<file>:<line>]`, handed
/// to `report` (the library's own error style). Later calls do nothing.
pub fn install_panic_hook(report: fn(&str)) {
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(move |info| {
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let at = info.location().map(|l| format!(" [{}:{}]", l.file(), l.line())).unwrap_or_default();
            report(&format!("internal error: {msg}{at}"));
        }));
    });
}

/// Runs `f`; a panic becomes `fallback` (the hook has already printed the message).
pub fn guard<T>(f: impl FnOnce() -> T, fallback: T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}
