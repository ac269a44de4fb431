//! What the probes record: per thread, a calling-context tree (each node one method called from its parent
//! node) with exact call counts and self CPU time, and the shadow stack of nodes now running.
//!
//! Each thread owns its profile; the mutex around it is only ever contended by a dump reading it, so on the
//! probe's path it costs one uncontended atomic pair. Nothing here calls the JVM: no JNI, no JVMTI, no
//! allocation except when the tree or the stack grows.
//!
//! Time: between two probes the thread runs the method on top of its shadow stack, so the gap is that
//! method's self time. Gaps are measured in ticks, with each probe's own work (from its first tick read to
//! its last) left out. Every `segment_ticks` a probe reads the thread's CPU clock and converts the ticks
//! credited in the segment at the segment's rate (CPU ns per tick of wall time, probes' own ticks
//! included): time the thread spent waiting or descheduled is thus spread over the methods of that
//! segment instead of being charged to whichever method was on top, and the probes' share is left out.

use super::clock::ticks;
use crate::clocks::thread_cpu_ns;
use rustc_hash::FxHashMap;
use std::cell::{RefCell, UnsafeCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The root of every thread's tree: not a method.
pub const ROOT: u32 = 0;
const NO_METHOD: u32 = u32::MAX;
/// How far down an exit probe looks for its method when the top of the stack is another (an exit was
/// missed: an exception thrown out of a constructor's super() call, or a virtual thread moved).
const EXIT_SEARCH: usize = 64;

#[derive(Debug, Clone)]
pub struct Node {
    pub parent: u32,
    pub method: u32,
    pub calls: u64,
    /// Converted self time, CPU nanoseconds.
    pub self_ns: f64,
    /// Ticks credited in the open segment, not yet converted.
    pending_ticks: u64,
    /// The last method called from here and its node: loops call the same callee again and again, and
    /// this spares them the hash lookup.
    cached_method: u32,
    cached_child: u32,
}

impl Node {
    fn new(parent: u32, method: u32) -> Node {
        Node { parent, method, calls: 0, self_ns: 0.0, pending_ticks: 0, cached_method: NO_METHOD, cached_child: 0 }
    }
}

pub struct ThreadProfile {
    pub nodes: Vec<Node>,
    children: FxHashMap<(u32, u32), u32>,
    stack: Vec<u32>,
    touched: Vec<u32>,
    last_tick: u64,
    segment_start_tick: u64,
    segment_start_cpu: u64,
    /// CPU ns per tick in the last closed segment, for converting the open one at a dump.
    last_rate: f64,
    segment_ticks: u64,
    /// A probe's own ticks between its clock read and the next probe's, measured at start-up: left out of
    /// every gap.
    probe_ticks: u64,
    /// This segment's length: `segment_ticks` × [0.5, 1.5), drawn anew for each, so that segments cannot
    /// fall into step with a program's own rhythm of calls.
    segment_limit: u64,
    rng: u64,
    pub thread_serial: u32,
}

impl ThreadProfile {
    fn new(segment_ticks: u64, probe_ticks: u64, initial_rate: f64, thread_serial: u32) -> ThreadProfile {
        let now = ticks();
        ThreadProfile {
            nodes: vec![Node::new(ROOT, NO_METHOD)],
            children: FxHashMap::default(),
            stack: Vec::with_capacity(256),
            touched: Vec::with_capacity(256),
            last_tick: now,
            segment_start_tick: now,
            segment_start_cpu: thread_cpu_ns(),
            last_rate: initial_rate,
            segment_ticks,
            probe_ticks,
            segment_limit: segment_ticks,
            rng: now | 1,
            thread_serial,
        }
    }

    #[inline]
    fn credit(&mut self, now: u64) {
        let gap = now.saturating_sub(self.last_tick).saturating_sub(self.probe_ticks);
        let top = self.stack.last().copied().unwrap_or(ROOT);
        let node = &mut self.nodes[top as usize];
        if node.pending_ticks == 0 && gap > 0 {
            self.touched.push(top);
        }
        node.pending_ticks += gap;
    }

    fn close_segment(&mut self, now: u64) {
        let cpu = thread_cpu_ns();
        let span = now.saturating_sub(self.segment_start_tick).max(1);
        let rate = cpu.saturating_sub(self.segment_start_cpu) as f64 / span as f64;
        for &n in &self.touched {
            let node = &mut self.nodes[n as usize];
            node.self_ns += node.pending_ticks as f64 * rate;
            node.pending_ticks = 0;
        }
        self.touched.clear();
        self.last_rate = rate;
        self.segment_start_cpu = cpu;
        // xorshift64
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.segment_limit = self.segment_ticks / 2 + self.rng % self.segment_ticks.max(1);
        self.segment_start_tick = ticks();
        // The clock read is the probe's, not the method's.
        self.last_tick = self.segment_start_tick;
    }

    fn enter(&mut self, method: u32) {
        let now = ticks();
        self.credit(now);
        let parent = self.stack.last().copied().unwrap_or(ROOT);
        let p = &self.nodes[parent as usize];
        let child = if p.cached_method == method {
            p.cached_child
        } else {
            let nodes = &mut self.nodes;
            let child = *self.children.entry((parent, method)).or_insert_with(|| {
                nodes.push(Node::new(parent, method));
                (nodes.len() - 1) as u32
            });
            let p = &mut self.nodes[parent as usize];
            p.cached_method = method;
            p.cached_child = child;
            child
        };
        self.nodes[child as usize].calls += 1;
        self.stack.push(child);
        if now.wrapping_sub(self.segment_start_tick) > self.segment_limit {
            self.close_segment(now);
        }
        self.last_tick = now;
    }

    fn exit(&mut self, method: u32) {
        let now = ticks();
        self.credit(now);
        let depth = self.stack.len();
        if let Some(k) = (depth.saturating_sub(EXIT_SEARCH)..depth)
            .rev()
            .find(|&k| self.nodes[self.stack[k] as usize].method == method)
        {
            self.stack.truncate(k);
        }
        if now.wrapping_sub(self.segment_start_tick) > self.segment_limit {
            self.close_segment(now);
        }
        self.last_tick = now;
    }

    /// Self time of a node including its unconverted ticks (at the last rate).
    pub fn self_ns(&self, node: &Node) -> f64 {
        node.self_ns + node.pending_ticks as f64 * self.last_rate
    }
}

/// A thread's profile and the flag that guards it. The owner takes the flag on every probe (one atomic
/// swap; releasing it is a plain store on x86), a dump takes it to copy the tree; a futex mutex costs two
/// atomic operations per probe, a fifth of an empty method's instrumented call.
pub struct ThreadSlot {
    busy: AtomicBool,
    profile: UnsafeCell<ThreadProfile>,
}

// SAFETY: the profile is only reached through `with`, under the `busy` flag.
unsafe impl Sync for ThreadSlot {}
// SAFETY: ThreadProfile is Send; the slot moves between threads only inside an Arc.
unsafe impl Send for ThreadSlot {}

impl ThreadSlot {
    fn new(profile: ThreadProfile) -> ThreadSlot {
        ThreadSlot { busy: AtomicBool::new(false), profile: UnsafeCell::new(profile) }
    }

    /// Runs `f` with the profile, spinning while another thread holds it (only a dump copying it, or the
    /// owner's probe while a dump waits).
    pub fn with<R>(&self, f: impl FnOnce(&mut ThreadProfile) -> R) -> R {
        while self.busy.swap(true, Ordering::Acquire) {
            std::hint::spin_loop();
        }
        struct Release<'a>(&'a AtomicBool);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _release = Release(&self.busy);
        // SAFETY: `busy` is held, so no other reference to the profile exists until `_release` drops.
        f(unsafe { &mut *self.profile.get() })
    }
}

/// One thread's tree, copied out for a report (from either kind of probe).
pub struct Snapshot {
    pub thread_serial: u32,
    /// (parent, method, calls, self ns); node 0 is the root, parents come before their children.
    pub nodes: Vec<(u32, u32, u64, f64)>,
}

/// Every thread's profile, for dumps. Threads that ended stay: their calls count.
#[derive(Default)]
pub struct Registry {
    pub threads: Mutex<Vec<Arc<ThreadSlot>>>,
}

impl Registry {
    /// Every thread's tree, each copied under its flag.
    pub fn snapshots(&self) -> Vec<Snapshot> {
        let slots = self.threads.lock().unwrap_or_else(|e| e.into_inner()).clone();
        slots
            .iter()
            .map(|s| {
                s.with(|p| Snapshot {
                    thread_serial: p.thread_serial,
                    nodes: p.nodes.iter().map(|n| (n.parent, n.method, n.calls, p.self_ns(n))).collect(),
                })
            })
            .collect()
    }
}

thread_local! {
    static SLOT: RefCell<Option<Arc<ThreadSlot>>> = const { RefCell::new(None) };
}

/// Settings the probes need, fixed once the recorder starts.
pub struct Settings {
    pub segment_ticks: u64,
    pub probe_ticks: u64,
    pub initial_rate: f64,
}

/// A probe's own ticks from its clock read to the next probe's, measured on a scratch profile: what a
/// call of an empty method costs beyond the JNI transitions, which stay in the callers' time.
pub fn measure_probe_ticks() -> u64 {
    let mut p = ThreadProfile::new(u64::MAX, 0, 1.0, 0);
    const N: u64 = 100_000;
    let start = ticks();
    for _ in 0..N {
        p.enter(1);
        p.exit(1);
    }
    ticks().saturating_sub(start) / (2 * N)
}

/// Runs `f` on the calling thread's profile, creating it on the thread's first probe (`serial` gives the
/// thread's serial then).
#[inline]
pub fn with_profile(
    registry: &Registry,
    settings: &Settings,
    serial: impl FnOnce() -> u32,
    f: impl FnOnce(&mut ThreadProfile),
) {
    // A probe in a thread being torn down (TLS already destroyed) records nothing.
    let _ = SLOT.try_with(|cell| {
        let mut slot = cell.borrow_mut();
        let slot = slot.get_or_insert_with(|| {
            let s = Arc::new(ThreadSlot::new(ThreadProfile::new(
                settings.segment_ticks,
                settings.probe_ticks,
                settings.initial_rate,
                serial(),
            )));
            registry.threads.lock().unwrap_or_else(|e| e.into_inner()).push(s.clone());
            s
        });
        slot.with(f);
    });
}

pub fn enter(p: &mut ThreadProfile, method: u32) {
    p.enter(method)
}

pub fn exit(p: &mut ThreadProfile, method: u32) {
    p.exit(method)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_nest_into_a_tree_and_missed_exits_are_recovered() {
        let mut p = ThreadProfile::new(u64::MAX, 0, 1.0, 0);
        p.enter(1);
        p.enter(2);
        p.exit(2);
        p.enter(2);
        p.enter(3); // its exit is missed
        p.exit(2); // pops 3 and 2
        p.exit(1);
        let calls: Vec<(u32, u32, u64)> = p.nodes[1..].iter().map(|n| (n.parent, n.method, n.calls)).collect();
        assert_eq!(calls, vec![(0, 1, 1), (1, 2, 2), (2, 3, 1)]);
        assert!(p.stack.is_empty());
        // An exit whose method is nowhere on the stack changes nothing.
        p.enter(1);
        p.exit(9);
        assert_eq!(p.stack.len(), 1);
    }
}
