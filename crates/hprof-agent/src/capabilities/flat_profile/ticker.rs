//! The flat profile's wall-clock ticker: an agent thread that wakes every interval, as -Xprof's periodic
//! task did, and tells what the VM as a whole is doing — running a VM operation (the VM thread on a CPU),
//! compiling (a compiler thread on a CPU) — for the global summary and the per-thread "Blocked" ticks.
//!
//! HotSpot exports neither its safepoint state nor its current VM operation to agents (not in
//! gHotSpotVMStructs, and libjvm's other symbols are stripped), and the VM and compiler threads are hidden
//! from JVMTI. So they are found by name in /proc/self/task (looked up again every second), and a VM
//! operation or a compilation is under way when one of them is running (state R) at the tick.

use crate::agent_thread::StopSwitch;
use crate::context::Context;
use crate::log;
use jvmti::Jni;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the VM is doing at a tick.
#[derive(Debug, Clone, Copy, Default)]
pub struct VmNow {
    /// A garbage collection is under way (JVMTI's GarbageCollectionStart without its Finish yet).
    pub gc: bool,
    /// The VM thread is on a CPU: a VM operation (GC or other) runs, at a safepoint or not.
    pub vm_operation: bool,
    pub compiling: bool,
}

#[derive(Default)]
pub struct Ticker {
    thread: Arc<StopSwitch>,
}

/// How often the VM's own threads are looked up again.
const RESCAN: Duration = Duration::from_secs(1);

impl Ticker {
    pub fn start(
        &self,
        ctx: &Context,
        jni: Jni,
        interval_ms: u32,
        gc_active: Arc<AtomicBool>,
        on_tick: impl Fn(&Context, Jni, &VmNow) + Send + 'static,
    ) {
        let thread = self.thread.clone();
        thread.start();
        let body = move |ctx: &'static Context, jni: Jni| {
            let period = Duration::from_millis(interval_ms.max(1) as u64);
            let mut vm_threads = VmThreads::default();
            let mut next = Instant::now() + period;
            while !thread.wait(next.saturating_duration_since(Instant::now())) {
                if Instant::now() < next {
                    continue;
                }
                // A late wake-up (a loaded machine) counts as one tick, not a burst of catch-up ticks.
                next = (next + period).max(Instant::now());
                // Before any JNI or JVMTI call: those wait for a safepoint (a GC) to end.
                let mut now = vm_threads.now();
                now.gc = gc_active.load(Ordering::Relaxed);
                jni.with_local_frame(16, || on_tick(ctx, jni, &now));
            }
            thread.finished();
        };
        if let Err(e) = crate::agent_thread::spawn(ctx, jni, "HPROF flat profiler", body) {
            self.thread.finished();
            log::error(&format!("cpu=flat: {e}"));
        }
    }

    /// Stops the ticker and waits briefly for its last tick, so that it does not race the final report.
    pub fn stop(&self) {
        self.thread.stop();
    }
}

/// The VM thread and the JIT's threads, by kernel thread id.
#[derive(Default)]
struct VmThreads {
    vm_thread: Option<i32>,
    compilers: Vec<i32>,
    scanned: Option<Instant>,
}

impl VmThreads {
    fn now(&mut self) -> VmNow {
        if self.scanned.is_none_or(|t| t.elapsed() >= RESCAN) {
            self.rescan();
        }
        let vm_operation = self.vm_thread.is_some_and(thread_running);
        VmNow { gc: false, vm_operation, compiling: self.compilers.iter().any(|&tid| thread_running(tid)) }
    }

    /// Threads whose name (the kernel keeps 15 bytes) is HotSpot's for the VM thread or a compiler thread.
    fn rescan(&mut self) {
        self.scanned = Some(Instant::now());
        self.vm_thread = None;
        self.compilers.clear();
        let Ok(dir) = std::fs::read_dir("/proc/self/task") else { return };
        for e in dir.flatten() {
            let Some(tid) = e.file_name().to_str().and_then(|t| t.parse::<i32>().ok()) else { continue };
            let Ok(comm) = std::fs::read_to_string(e.path().join("comm")) else { continue };
            let comm = comm.trim_end();
            if comm == "VM Thread" {
                self.vm_thread = Some(tid);
            } else if is_compiler_thread_name(comm) {
                self.compilers.push(tid);
            }
        }
    }
}

fn is_compiler_thread_name(comm: &str) -> bool {
    comm.starts_with("C1 CompilerThre") || comm.starts_with("C2 CompilerThre") || comm.starts_with("JVMCI")
}

/// Whether a thread of this process is running or ready to run (state R in its stat line).
fn thread_running(tid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")) else { return false };
    stat_state(&stat) == Some('R')
}

/// The state letter of a /proc stat line: the first field after the parenthesised name (which may itself
/// hold spaces and parentheses, hence the last ')').
fn stat_state(stat: &str) -> Option<char> {
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_state_survives_odd_thread_names() {
        assert_eq!(stat_state("1234 (C2 CompilerThre) R 1 2 3"), Some('R'));
        assert_eq!(stat_state("1234 (a) b) (c) S 1 2"), Some('S'));
        assert_eq!(stat_state("garbage"), None);
    }

    #[test]
    fn compiler_thread_names() {
        assert!(is_compiler_thread_name("C2 CompilerThre"));
        assert!(is_compiler_thread_name("C1 CompilerThre"));
        assert!(!is_compiler_thread_name("GC Thread#0"));
    }

    #[test]
    fn this_thread_is_running() {
        assert!(thread_running(sampler::current_tid()));
    }
}
