//! Messages to stderr, in HPROF's style: `HPROF ERROR: …`, `HPROF WARNING: …`, and the verbose dump notes.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// `errorexit=y`: an error ends the process, as in HPROF.
static EXIT_ON_ERROR: AtomicBool = AtomicBool::new(false);
/// The process is in `exit()` already (our `atexit` hook runs), or an error is ending it.
static EXITING: AtomicBool = AtomicBool::new(false);
static TERMINATING: AtomicBool = AtomicBool::new(false);

pub fn exit_on_error(on: bool) {
    EXIT_ON_ERROR.store(on, Ordering::Relaxed);
}

/// Called first thing in the `atexit` hook: an error from then on may not call `exit()` again.
pub fn process_exiting() {
    EXITING.store(true, Ordering::Relaxed);
}

/// Whether an error (with `errorexit=y`) is ending the process: the exit writes no reports then.
pub fn terminating() -> bool {
    TERMINATING.load(Ordering::Relaxed)
}

pub fn error(msg: &str) {
    let _ = writeln!(std::io::stderr(), "HPROF ERROR: {msg}");
    if EXIT_ON_ERROR.load(Ordering::Relaxed) && !TERMINATING.swap(true, Ordering::Relaxed) {
        // HPROF's words and exit code for an error it would not go on after.
        let _ = writeln!(std::io::stderr(), "HPROF TERMINATED PROCESS");
        if EXITING.load(Ordering::Relaxed) {
            // Inside exit() already (a second exit() is undefined): end the process as it stands.
            // SAFETY: _exit takes no locks and runs no handlers; it is safe from any thread.
            unsafe { libc::_exit(9) }
        }
        std::process::exit(9);
    }
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
