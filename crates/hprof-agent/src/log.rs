//! Messages to stderr, in HPROF's style: `HPROF ERROR: …`, `HPROF WARNING: …`, and the verbose dump notes.

use std::io::Write;

pub fn error(msg: &str) {
    let _ = writeln!(std::io::stderr(), "HPROF ERROR: {msg}");
}

pub fn warning(msg: &str) {
    let _ = writeln!(std::io::stderr(), "HPROF WARNING: {msg}");
}

/// A message printed only with verbose=y (the default).
pub fn verbose(enabled: bool, msg: &str) {
    if enabled {
        let _ = write!(std::io::stderr(), "{msg}");
    }
}
