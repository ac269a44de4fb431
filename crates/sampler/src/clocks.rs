//! The clocks the agent reads: in nanoseconds the monotonic clock (wall time, which the vDSO reads without
//! a system call) and the calling thread's CPU clock, and the time-stamp counter in ticks. All are
//! async-signal-safe, so the signal handler may time itself with them.

/// The monotonic clock.
#[inline]
pub fn monotonic_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// The calling thread's CPU time.
#[inline]
pub fn thread_cpu_ns() -> u64 {
    read(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// A monotonic tick count: the TSC on x86-64 (nanoseconds' cost, but it runs on while the thread waits),
/// nanoseconds elsewhere.
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions; every x86-64 CPU has it.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        monotonic_ns()
    }
}

fn read(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a live timespec for clock_gettime to fill; async-signal-safe (vDSO or system call).
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_advance_and_cpu_time_only_while_running() {
        let (wall, cpu) = (monotonic_ns(), thread_cpu_ns());
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        assert!(thread_cpu_ns() > cpu, "busy for a while: the thread's CPU clock moved");
        std::thread::sleep(std::time::Duration::from_millis(20));
        let slept = monotonic_ns() - wall;
        assert!(slept >= 20_000_000, "the monotonic clock counts the 20 ms sleep: {slept} ns");
        assert!(thread_cpu_ns() - cpu < slept, "a sleeping thread takes no CPU time");
    }
}
