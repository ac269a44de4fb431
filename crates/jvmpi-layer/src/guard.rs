//! Every function the JVM or a JVMPI agent calls into runs inside [`guard`]: a panic must never unwind into
//! the JVM or into C code, which would abort the process. The mechanism is the jvmti crate's, shared with
//! libhprof.so; this module gives it the layer's error style.

pub use jvmti::panic_guard::guard;

/// Replaces Rust's panic message with one line naming the layer.
pub fn install_panic_hook() {
    jvmti::panic_guard::install_panic_hook(|msg| crate::log::error(&format!("{msg}; the event is dropped")));
}
