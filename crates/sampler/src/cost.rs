//! What the sampler itself costs, measured where it is spent: the signal handler (wall time inside it, by
//! the monotonic clock, which the vDSO reads without a system call — async-signal-safe), the resolver
//! thread (its own CPU clock) and the creation of jmethodIDs for each prepared class. Only with
//! `HPROF_CPU_STATS=1` does the handler time itself; the agent prints the totals at exit and the benchmark
//! divides them by the process's CPU time. The kernel's share of delivering each signal is not in these figures.

use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Default)]
pub struct SamplerCost {
    pub handler_ns: AtomicU64,
    pub handler_calls: AtomicU64,
    /// The part of `handler_ns` spent in AsyncGetCallTrace; the rest is mostly re-arming the clock.
    pub walk_ns: AtomicU64,
    /// The parts spent unwinding native frames (`cstack`): from the interrupted registers, reading the
    /// kernel's call chain from the perf ring, and finding the native frames between Java ones.
    pub native_ns: AtomicU64,
    pub kernel_ns: AtomicU64,
    pub between_ns: AtomicU64,
    pub resolver_ns: AtomicU64,
    pub method_ids_ns: AtomicU64,
    /// Threads given each kind of clock.
    pub perf_clocks: AtomicU64,
    pub posix_timers: AtomicU64,
}

impl SamplerCost {
    pub fn add(counter: &AtomicU64, ns: u64) {
        counter.fetch_add(ns, Ordering::Relaxed);
    }

    /// One line for the verbose log: `cpu=samples: agent time <total> ms (…)`.
    pub fn summary(&self) -> String {
        let ms = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64 / 1e6;
        let calls = self.handler_calls.load(Ordering::Relaxed);
        let (handler, resolver, ids) = (ms(&self.handler_ns), ms(&self.resolver_ns), ms(&self.method_ids_ns));
        let walks = ms(&self.walk_ns);
        let (native, kernel, between) = (ms(&self.native_ns), ms(&self.kernel_ns), ms(&self.between_ns));
        format!(
            "cpu=samples: agent time {:.1} ms (signal handler {handler:.1} ms over {calls} samples, of which stack \
             walks {walks:.1} ms, native unwinding {native:.1} ms, kernel call chains {kernel:.1} ms, native frames \
             between Java ones {between:.1} ms; resolver thread {resolver:.1} ms, jmethodIDs {ids:.1} ms; threads with perf \
             clocks {}, with POSIX timers {})",
            handler + resolver + ids,
            self.perf_clocks.load(Ordering::Relaxed),
            self.posix_timers.load(Ordering::Relaxed),
        )
    }
}
