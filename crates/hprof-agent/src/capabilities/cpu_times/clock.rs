//! The two clocks behind method times. The thread's CPU clock (`CLOCK_THREAD_CPUTIME_ID`) is the truth but
//! is a system call (1–2 µs on a virtual machine, where the perf page offers no user-space time either);
//! the time-stamp counter costs nanoseconds but runs on while the thread waits. So the probes measure the
//! gaps between them in ticks, and every couple of milliseconds a thread reads its CPU clock once and
//! converts the ticks of that segment into CPU nanoseconds in proportion (see `recorder::Segment`).

use crate::clocks::monotonic_ns;
pub use crate::clocks::ticks;

/// Ticks per millisecond, measured over 10 ms of wall time (once, at load).
pub fn ticks_per_ms() -> u64 {
    let (t0, n0) = (ticks(), monotonic_ns());
    std::thread::sleep(std::time::Duration::from_millis(10));
    let (t1, n1) = (ticks(), monotonic_ns());
    let ns = (n1 - n0).max(1);
    ((t1.saturating_sub(t0)) as u128 * 1_000_000 / ns as u128).max(1) as u64
}
