//! cpu=wall: where the time goes, not only the CPU. Every interval (50 ms unless `interval=` says), the
//! stacks of every live Java thread — running or not — with its state as the root frame (`[running]`,
//! `[in_native]`, `[sleeping]`, `[blocked_on_monitor]`, `[waiting]`, `[parked]`).
//!
//! One tick is one `GetThreadListStackTraces` call from the agent's own thread: the JVM takes all the
//! stacks in one VM operation (one safepoint per tick, not one handshake per thread). Its cost grows with
//! the threads it walks, so a tick takes at most [`MAX_THREADS_PER_TICK`]; beyond that, threads take turns
//! (round robin) and each sample stands for the threads skipped, so shares stay unbiased.
//!
//! Virtual threads (JDK 21+) are not in `GetAllThreads`: they are followed from VirtualThreadStart to
//! VirtualThreadEnd and sampled like platform threads, parked or mounted. A carrier thread whose virtual
//! thread is mounted shows only the carrier's frames below the continuation; that sample is left out, since
//! the virtual thread's own sample counts the time.

use super::profile::{Profile, Sample};
use crate::context::Context;
use crate::sampling::ThreadSwitches;
use crate::traces::RawFrame;
use jvmti::{Jni, sys};
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Threads walked per tick at most; more take turns.
pub const MAX_THREADS_PER_TICK: usize = 256;

#[derive(Default)]
pub struct WallSampler {
    switches: ThreadSwitches,
    /// Where the next tick's round starts among the candidates, when they are more than the cap.
    cursor: AtomicUsize,
    /// Live virtual threads: serial → global reference (as an address).
    virtual_threads: Mutex<BTreeMap<u32, usize>>,
    /// Frame index → whether it is the continuation's entry, the top of a carrier whose virtual thread runs.
    continuation_frames: Mutex<FxHashMap<u32, FrameKind>>,
    /// Whether a failed tick was reported (once).
    warned: AtomicBool,
    /// Set when the session ends: virtual threads are no longer followed (nor held).
    closed: AtomicBool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    /// Where a carrier enters a virtual thread: the carrier's top frame while one is mounted.
    Entry,
    /// Where a virtual thread unmounts: its top frame while it is not running.
    Yield,
    /// VirtualThread.sleepNanos: a virtual thread in Thread.sleep.
    Sleep,
    Other,
}

/// The state a sample's root frame names, from JVMTI's thread state bits.
pub fn state_label(state: u32) -> &'static str {
    let has = |bit: u32| state & bit != 0;
    if has(sys::JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) {
        "[blocked_on_monitor]"
    } else if has(sys::JVMTI_THREAD_STATE_SLEEPING) {
        "[sleeping]"
    } else if has(sys::JVMTI_THREAD_STATE_PARKED) {
        "[parked]"
    } else if has(sys::JVMTI_THREAD_STATE_WAITING) {
        "[waiting]"
    } else if has(sys::JVMTI_THREAD_STATE_IN_NATIVE) {
        "[in_native]"
    } else if has(sys::JVMTI_THREAD_STATE_RUNNABLE) {
        "[running]"
    } else {
        "[other]"
    }
}

/// The candidates one tick walks, with the samples each stands for: all of them (weight 1) up to `cap`,
/// else `cap` of them from `start` on, round the list, whose weights add up to `n`.
pub fn pick(n: usize, cap: usize, start: usize) -> Vec<(usize, u64)> {
    if n <= cap {
        return (0..n).map(|i| (i, 1)).collect();
    }
    let (base, extra) = ((n / cap) as u64, n % cap);
    (0..cap).map(|k| ((start + k) % n, base + u64::from(k < extra))).collect()
}

impl WallSampler {
    pub fn set_sampling(&self, serial: Option<u32>, on: bool) {
        self.switches.set(serial, on);
    }

    /// A virtual thread started (registered by the caller as `serial`): it is sampled from now on.
    pub fn virtual_thread_started(&self, jni: Jni, serial: u32, thread: sys::jthread) {
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        let global = jni.new_global_ref(thread);
        if global.is_null() {
            return;
        }
        let old = self.virtual_threads.lock().unwrap_or_else(|e| e.into_inner()).insert(serial, global as usize);
        if let Some(old) = old {
            jni.delete_global_ref(old as sys::jobject);
        }
    }

    pub fn virtual_thread_ended(&self, jni: Jni, serial: u32) {
        if let Some(g) = self.virtual_threads.lock().unwrap_or_else(|e| e.into_inner()).remove(&serial) {
            jni.delete_global_ref(g as sys::jobject);
        }
    }

    /// The session ended and no tick runs any more: lets go of the virtual threads' references, which would
    /// otherwise keep ended virtual threads alive after a session that ends before the JVM (attach,
    /// `duration=`).
    pub fn release_all(&self, jni: Jni) {
        self.closed.store(true, Ordering::Release);
        let all = std::mem::take(&mut *self.virtual_threads.lock().unwrap_or_else(|e| e.into_inner()));
        for g in all.into_values() {
            jni.delete_global_ref(g as sys::jobject);
        }
    }

    /// What a frame says about virtual threads (looked up once per frame).
    fn kind(&self, ctx: &Context, frame: u32) -> FrameKind {
        *self.continuation_frames.lock().unwrap_or_else(|e| e.into_inner()).entry(frame).or_insert_with(|| {
            let Some(f) = ctx.traces().frame(frame) else { return FrameKind::Other };
            match (f.frame.class_name.as_str(), f.frame.method_name.as_str()) {
                ("jdk.internal.vm.Continuation", "enterSpecial" | "enter" | "enter0" | "run") => FrameKind::Entry,
                ("jdk.internal.vm.Continuation", "yield0" | "yield") => FrameKind::Yield,
                ("java.lang.VirtualThread", "sleepNanos") => FrameKind::Sleep,
                _ => FrameKind::Other,
            }
        })
    }

    /// The root frame's state. JVMTI calls an unmounted virtual thread (top frame Continuation.yield0)
    /// RUNNABLE on JDK 21, and one in Thread.sleep PARKED: both are told by their frames.
    fn state_of(&self, ctx: &Context, state: u32, frames: &[u32]) -> &'static str {
        let unmounted = frames.first().is_some_and(|&f| self.kind(ctx, f) == FrameKind::Yield);
        let label =
            if unmounted && state & sys::JVMTI_THREAD_STATE_WAITING == 0 { "[parked]" } else { state_label(state) };
        if label == "[parked]" && frames.iter().take(12).any(|&f| self.kind(ctx, f) == FrameKind::Sleep) {
            "[sleeping]"
        } else {
            label
        }
    }

    /// One tick, standing for `intervals` intervals of wall time: the stacks and states of every thread to
    /// sample (or the cap's share of them).
    pub fn sample_once(&self, ctx: &Context, jni: Jni, max_frames: usize, intervals: u64, profile: &Mutex<Profile>) {
        if !self.switches.all_on() {
            return;
        }
        let time_ms = ctx.elapsed_ms();
        let Ok(platform) = ctx.jvmti.all_threads() else { return };
        let mut candidates: Vec<(sys::jthread, u32)> = Vec::with_capacity(platform.len());
        {
            let mut p = profile.lock().unwrap_or_else(|e| e.into_inner());
            for &t in &platform {
                // The agent's own threads have no record.
                let Some(record) = ctx.thread_record(t) else { continue };
                if self.switches.is_on(record.serial) && p.keeps_thread(ctx, record.serial) {
                    candidates.push((t, record.serial));
                }
            }
            for (&serial, &global) in self.virtual_threads.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                if self.switches.is_on(serial) && p.keeps_thread(ctx, serial) {
                    candidates.push((global as sys::jthread, serial));
                }
            }
        }
        let start = self.cursor.fetch_add(MAX_THREADS_PER_TICK, Ordering::Relaxed);
        let chosen = pick(candidates.len(), MAX_THREADS_PER_TICK, start % candidates.len().max(1));
        let threads: Vec<sys::jthread> = chosen.iter().map(|&(i, _)| candidates[i].0).collect();
        // A virtual thread may end between the copy above and this call: its global reference still names
        // the thread object, which JVMTI reports as terminated.
        let stacks = if threads.is_empty() {
            Vec::new()
        } else {
            match ctx.jvmti.thread_list_stack_traces(&threads, max_frames as i32) {
                Ok(s) => s,
                Err(e) => {
                    if !self.warned.swap(true, Ordering::Relaxed) {
                        crate::log::warning(&format!("cpu=wall: GetThreadListStackTraces failed ({e}); tick lost"));
                    }
                    Vec::new()
                }
            }
        };
        {
            let mut p = profile.lock().unwrap_or_else(|e| e.into_inner());
            for (stack, &(i, weight)) in stacks.iter().zip(&chosen) {
                if stack.state & sys::JVMTI_THREAD_STATE_ALIVE == 0 {
                    continue;
                }
                let mut frames: Vec<u32> =
                    stack.frames.iter().map(|f| p.frame(ctx, Some(jni), RawFrame::from_jvmti(f))).collect();
                if frames.first().is_some_and(|&top| self.kind(ctx, top) == FrameKind::Entry) {
                    continue;
                }
                let state = self.state_of(ctx, stack.state, &frames);
                if frames.len() >= max_frames && max_frames >= crate::sampling::MAX_FRAMES {
                    frames.push(ctx.traces().pseudo_frame(super::profile::TRUNCATED));
                }
                let root = Some(ctx.traces().pseudo_frame(state));
                let weight = weight * intervals;
                p.add(
                    ctx,
                    Sample {
                        thread_serial: candidates[i].1,
                        frames: &frames,
                        native: 0,
                        java_only: None,
                        root,
                        weight,
                        time_ms,
                    },
                );
            }
        }
        for t in platform {
            jni.delete_local_ref(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_the_cap_every_thread_once() {
        assert_eq!(pick(3, 256, 7), [(0, 1), (1, 1), (2, 1)]);
        assert!(pick(0, 256, 0).is_empty());
    }

    #[test]
    fn over_the_cap_threads_take_turns_and_weights_add_up() {
        let n = 1000;
        let mut seen = vec![0u64; n];
        let mut start = 0;
        // Four ticks of 256 cover 1,000 threads; each tick's weights stand for all of them.
        for _ in 0..4 {
            let p = pick(n, 256, start % n);
            assert_eq!(p.len(), 256);
            assert_eq!(p.iter().map(|&(_, w)| w).sum::<u64>(), n as u64);
            for (i, w) in p {
                seen[i] += w;
            }
            start += 256;
        }
        assert!(seen.iter().all(|&w| w >= 3), "every thread sampled in four ticks");
        // Over many ticks every thread's weight averages out to one sample per tick.
        let mut total = vec![0u64; n];
        let mut start = 0;
        for _ in 0..1000 {
            for (i, w) in pick(n, 256, start % n) {
                total[i] += w;
            }
            start += 256;
        }
        let (lo, hi) = (total.iter().min().unwrap(), total.iter().max().unwrap());
        assert!(*lo >= 980 && *hi <= 1020, "per-thread totals {lo}..{hi}, expected ≈ 1000");
    }

    #[test]
    fn states_are_named_most_specific_first() {
        use sys::*;
        let alive = JVMTI_THREAD_STATE_ALIVE;
        assert_eq!(state_label(alive | JVMTI_THREAD_STATE_RUNNABLE), "[running]");
        assert_eq!(state_label(alive | JVMTI_THREAD_STATE_RUNNABLE | JVMTI_THREAD_STATE_IN_NATIVE), "[in_native]");
        let sleeping = JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT;
        assert_eq!(state_label(alive | sleeping | JVMTI_THREAD_STATE_SLEEPING), "[sleeping]");
        assert_eq!(state_label(alive | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER), "[blocked_on_monitor]");
        let object_wait = JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_IN_OBJECT_WAIT;
        assert_eq!(state_label(alive | object_wait), "[waiting]");
        assert_eq!(state_label(alive | JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_PARKED), "[parked]");
    }
}
