//! The layer's messages, on stderr, in the style of the JVM's own agent errors.

pub fn error(msg: &str) {
    eprintln!("JVMPI ERROR: {msg}");
}

pub fn warning(msg: &str) {
    eprintln!("JVMPI WARNING: {msg}");
}

/// What the layer decided, with verbose=y.
pub fn info(msg: &str) {
    eprintln!("JVMPI: {msg}");
}
