//! Signal-driven stack sampling: every Java thread gets a clock on its own CPU time that interrupts it with
//! SIGPROF; the handler copies the interrupted registers and, when asked, the AsyncGetCallTrace frames into
//! a fixed-size lock-free ring, which a consumer drains. All of the agent's signal-handler code lives here,
//! behind safe APIs (as async-profiler keeps one file per engine and pprof-rs one module for all signal
//! code); what to do with the samples is the agent's (`hprof-agent`'s `sampling::engine`).
//!
//! One file per concern: `signal` (the handler, the per-thread slots and the clocks it re-arms),
//! `perf_clock` (the kernel's task-clock events), `registers` (pc/sp/fp from a ucontext), `ring` (the
//! lock-free buffer the handler fills), `batch` (ticks drained from it, as consumers see them), `cost` (what the handler costs), `agent_work` (labels for the
//! agent's own work) and `clocks` (the async-signal-safe clocks the handler times itself with).
//!
//! Async-signal safety, which every change here must keep: the handler only loads and stores atomics,
//! makes system calls, reads the kernel's ucontext and calls AsyncGetCallTrace (made for signal handlers)
//! and the JVM's GetEnv (a thread-local read); it takes no lock, allocates nothing and never waits.

pub mod agent_work;
mod batch;
pub mod clocks;
mod cost;
pub mod native;
mod perf_clock;
mod registers;
mod ring;
mod signal;

pub use batch::{Frames, Mounted, Tick, TickBatch};
pub use cost::SamplerCost;
pub use registers::Registers;
pub use ring::{Claim, MAX_FRAMES, SampleRing, SlotData};
pub use signal::{ClockKind, NOT_A_JAVA_THREAD, NOT_WALKED, Shared, UNMOUNTING, installed};

/// The kernel's id of the calling thread (what clocks are armed for and samples carry).
pub fn current_tid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}
