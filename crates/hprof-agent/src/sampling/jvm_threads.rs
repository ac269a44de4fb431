//! The JVM's own threads — GC workers, the VM thread, JIT compiler threads — which JVMTI does not show:
//! with native frames on (`cstack`), the engine arms their CPU clocks too, found by name among the
//! process's tasks, so that time spent collecting garbage or compiling shows up under the thread that
//! spent it. Their samples carry native frames only.

use crate::context::Context;
use rustc_hash::FxHashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Names (the kernel's `comm`, cut at 15 bytes) of HotSpot's own threads in JDK 17–25: G1, Parallel,
/// Serial, ZGC and Shenandoah workers, the VM thread, the periodic task thread, the JIT compilers.
const JVM_THREAD_PREFIXES: &[&str] = &[
    "GC Thread#",
    "G1 ",
    "VM Thread",
    "VM Periodic Tas",
    "C1 CompilerThre",
    "C2 CompilerThre",
    "Sweeper thread",
    "ZWorker",
    "ZDriver",
    "ZDirector",
    "ZUncommit",
    "ZRuntimeWorker",
    "ZStat",
    "Shenandoah",
    "Conc#",
];

/// How often the tasks are listed again (threads the JVM starts later: GC workers grow with the heap).
const SCAN_EVERY: Duration = Duration::from_secs(1);

pub fn is_jvm_thread(comm: &str) -> bool {
    JVM_THREAD_PREFIXES.iter().any(|p| comm.starts_with(p))
}

#[derive(Default)]
pub struct JvmThreads {
    /// Kernel id → thread serial of the threads armed; and when the tasks were last listed.
    state: Mutex<(FxHashMap<i32, u32>, Option<Instant>)>,
}

impl JvmThreads {
    /// Lists the process's tasks (at most every [`SCAN_EVERY`]): arms the JVM threads not seen before with
    /// `arm(tid, serial, name)`, and ends those that are gone with `ended(serial)`.
    pub fn scan(&self, ctx: &Context, arm: impl Fn(i32, u32, &str) -> bool, ended: impl Fn(u32)) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.1.is_some_and(|at| at.elapsed() < SCAN_EVERY) {
            return;
        }
        state.1 = Some(Instant::now());
        let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return };
        let live: Vec<i32> = tasks.filter_map(|t| t.ok()?.file_name().to_str()?.parse().ok()).collect();
        for &tid in &live {
            if state.0.contains_key(&tid) {
                continue;
            }
            let Ok(comm) = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm")) else { continue };
            let name = comm.trim_end_matches('\n');
            if !is_jvm_thread(name) {
                continue;
            }
            let record = ctx.register_jvm_thread(name, tid);
            if arm(tid, record.serial, name) {
                state.0.insert(tid, record.serial);
            } else {
                ctx.mark_thread_ended(&record);
            }
        }
        let gone: Vec<i32> = state.0.keys().filter(|t| !live.contains(t)).copied().collect();
        for tid in gone {
            if let Some(serial) = state.0.remove(&tid) {
                ended(serial);
                if let Some(record) = ctx.thread_by_serial(serial) {
                    ctx.mark_thread_ended(&record);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_jvm_thread;

    #[test]
    fn gc_and_compiler_threads_are_the_jvms_and_java_threads_are_not() {
        for name in ["GC Thread#0", "G1 Conc#0", "G1 Refine#0", "VM Thread", "C2 CompilerThre", "ZWorker#3"] {
            assert!(is_jvm_thread(name), "{name}");
        }
        for name in ["main", "Finalizer", "Reference Handl", "pool-1-thread-1", "GCWatcher"] {
            assert!(!is_jvm_thread(name), "{name}");
        }
    }
}
