//! Ctrl-C during a session ends it as `quit` does, so that what arrived is saved under its name (an
//! existing output is replaced only when the session ends); a second Ctrl-C ends hprof at once.

use std::sync::mpsc::Sender;
use std::thread;

/// Blocks SIGINT in this thread and the threads it starts from now on (call it before starting any), and
/// has a thread of its own wait for it and send `event`.
pub fn forward<T: Send + 'static>(to: Sender<T>, event: T) {
    let set = sigint();
    // SAFETY: `set` is an initialised signal set; a null old set is allowed.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    thread::spawn(move || {
        let mut signal = 0;
        // SAFETY: `set` holds SIGINT, blocked in every thread of ours, and `signal` is a valid out-pointer.
        if unsafe { libc::sigwait(&set, &mut signal) } == 0 {
            let _ = to.send(event);
        }
    });
}

/// Unblocks SIGINT in this thread: the next Ctrl-C is delivered here and ends the process.
pub fn second_ends_hprof() {
    let set = sigint();
    // SAFETY: as in `forward`.
    unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
}

fn sigint() -> libc::sigset_t {
    // SAFETY: sigemptyset initialises the set it is given; sigaddset adds a valid signal number to it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        set
    }
}
