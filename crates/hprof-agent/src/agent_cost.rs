//! What the agent's own work around the profile costs, part by part — loading, VMInit, each prepared class,
//! each started thread, the reports at exit — in CPU time of the thread doing it, so that the end-to-end
//! overhead can be taken apart (benches/cpu-samples/startup.sh). Only with `HPROF_CPU_STATS=1`, like the
//! sampler's own figures (`sampler::SamplerCost`); otherwise a part costs one relaxed load.

use crate::clocks;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Copy)]
pub enum Part {
    /// Agent_OnLoad / Agent_OnAttach: options, JVMTI environment, capabilities, output, events.
    Load,
    /// The VMInit event: classes and threads that predate it, each capability's start.
    VmInit,
    /// Every ClassPrepare the core and the capabilities handle (class records, jmethodIDs).
    ClassPrepare,
    /// Every ThreadStart: the thread's record and each capability's start (the sampler's clock).
    ThreadStart,
    /// VMDeath: samplers stopped, the exit reports written, the output closed.
    Exit,
}

const PARTS: [(&str, Part); 5] = [
    ("load", Part::Load),
    ("VMInit", Part::VmInit),
    ("class prepares", Part::ClassPrepare),
    ("thread starts", Part::ThreadStart),
    ("exit reports", Part::Exit),
];

static NANOS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];
static COUNTS: [AtomicU64; 5] = [const { AtomicU64::new(0) }; 5];

pub fn measuring() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("HPROF_CPU_STATS").is_some())
}

/// Runs `f`, adding its CPU time on this thread to `part` (and one to its count) when measuring.
#[inline]
pub fn timed<T>(part: Part, f: impl FnOnce() -> T) -> T {
    timed_as(part, 1, f)
}

/// As [`timed`], for a further handler of an event already counted (a capability's, after the core's).
#[inline]
pub fn timed_more<T>(part: Part, f: impl FnOnce() -> T) -> T {
    timed_as(part, 0, f)
}

#[inline]
fn timed_as<T>(part: Part, count: u64, f: impl FnOnce() -> T) -> T {
    if !measuring() {
        return f();
    }
    let start = clocks::thread_cpu_ns();
    let result = f();
    NANOS[part as usize].fetch_add(clocks::thread_cpu_ns().saturating_sub(start), Ordering::Relaxed);
    COUNTS[part as usize].fetch_add(count, Ordering::Relaxed);
    result
}

/// One line for the log: `agent parts: load 3.1 ms, VMInit 5.0 ms, class prepares 9.8 ms (2,950), …`.
pub fn summary() -> String {
    let parts: Vec<String> = PARTS
        .iter()
        .map(|&(name, part)| {
            let ms = NANOS[part as usize].load(Ordering::Relaxed) as f64 / 1e6;
            match part {
                Part::ClassPrepare | Part::ThreadStart => {
                    format!("{name} {ms:.1} ms ({})", COUNTS[part as usize].load(Ordering::Relaxed))
                }
                _ => format!("{name} {ms:.1} ms"),
            }
        })
        .collect();
    format!("agent parts (CPU time of the threads doing them): {}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_every_part_with_counts_for_the_repeated_ones() {
        let s = summary();
        for name in ["load", "VMInit", "class prepares", "thread starts", "exit reports"] {
            assert!(s.contains(name), "{s}");
        }
        assert_eq!(s.matches(" ms (").count(), 2, "{s}");
    }
}
