//! The threads of one dump, gathered before the heap walk: each live thread's serial and stack trace (for
//! ROOT THREAD OBJECT and the frame numbers of ROOT JAVA FRAME), and the monitors threads hold (ROOT
//! MONITOR USED, which HotSpot's JVMTI no longer reports as roots).
//!
//! A thread that runs on between its stack trace and the walk may have other frames by then, and the
//! frame numbers of its roots must point into the trace its ROOT THREAD OBJECT names. So the walk notes the
//! frames it sees holding roots, and [`ThreadRoots::settle_traces`] keeps the earlier trace only where they
//! agree with it, building the trace from the walk's frames otherwise.

use crate::capabilities::heap_dump::ids::{DumpIds, tag_object};
use crate::context::Context;
use crate::traces::RawFrame;
use jvmti::{Jni, Jvmti, sys};
use rustc_hash::FxHashMap;

/// Stacks deeper than this are cut (the frames nearest the top are kept).
const MAX_FRAMES: usize = 16_384;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpThread {
    pub serial: u32,
    /// The thread's whole stack before the walk, as a trace, and its frames.
    pub trace_serial: u32,
    frames: Vec<RawFrame>,
}

/// A frame in which the walk found a root: the thread, the frame's depth (0 = top), its method and
/// location (-1 for a native method).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeenFrame {
    pub thread: u32,
    pub depth: i32,
    pub method: usize,
    pub location: i64,
}

/// Stands for a frame the walk saw no root in, in a trace built from the walk's frames.
const UNSEEN_FRAME: &str = "<frame not seen by the heap walk>";

#[derive(Debug, Default)]
pub struct ThreadRoots {
    /// By the thread object's identifier (its THREAD START obj=).
    by_id: FxHashMap<u64, DumpThread>,
    /// Identifiers of objects whose monitors some thread holds.
    pub monitors: Vec<u64>,
    /// Thread serials by Java thread id (`Thread.getId()`), for the walk's stack roots when the thread
    /// objects carry no tags.
    by_tid: FxHashMap<i64, u32>,
}

impl ThreadRoots {
    /// Registers every live thread, tags its thread object with its THREAD START identifier, interns its
    /// stack as a trace and tags the monitors it owns.
    pub fn collect(ctx: &Context, jni: Jni, dump_env: Jvmti, ids: &mut DumpIds) -> ThreadRoots {
        let mut roots = ThreadRoots::default();
        let current = ctx.jvmti.current_thread().unwrap_or(std::ptr::null_mut());
        let threads = ctx.jvmti.all_threads().unwrap_or_default();
        for thread in threads {
            let own = !current.is_null() && jni.is_same_object(thread, current);
            jni.with_local_frame(16, || roots.add(ctx, jni, dump_env, ids, thread, own));
            jni.delete_local_ref(thread);
        }
        jni.delete_local_ref(current);
        roots.monitors.sort_unstable();
        roots.monitors.dedup();
        roots
    }

    fn add(&mut self, ctx: &Context, jni: Jni, dump_env: Jvmti, ids: &mut DumpIds, thread: sys::jthread, own: bool) {
        let Some((record, _)) = ctx.register_thread(thread, own) else { return };
        if dump_env.set_tag(thread, record.object_id as i64).is_err() {
            return;
        }
        ids.tagged(jni, thread, record.object_id, false);
        if let Some(tid) = crate::threads::java_thread_id(jni, thread) {
            self.by_tid.insert(tid, record.serial);
        }
        let frames = stack(ctx, thread);
        let trace_serial = ctx.intern_stack(Some(jni), record.serial, &frames);
        self.by_id.insert(record.object_id, DumpThread { serial: record.serial, trace_serial, frames });
        for monitor in ctx.jvmti.owned_monitor_info(thread).unwrap_or_default() {
            // An array used as a lock would need its length in the tag: such locks go unlisted.
            let class = jni.object_class(monitor);
            let is_array = ctx.class_record(class).is_some_and(|c| c.signature.starts_with('['));
            if !is_array {
                let id = tag_object(jni, dump_env, ids, monitor);
                if id != 0 {
                    self.monitors.push(id);
                }
            }
        }
    }

    /// The traces of the threads' stacks before the walk.
    pub fn traces(&self) -> impl Iterator<Item = u32> + '_ {
        self.by_id.values().map(|t| t.trace_serial)
    }

    pub fn get(&self, thread_object_id: u64) -> Option<&DumpThread> {
        self.by_id.get(&thread_object_id)
    }

    /// The serial of the thread with Java thread id `tid`.
    pub fn serial_of_tid(&self, tid: i64) -> Option<u32> {
        self.by_tid.get(&tid).copied()
    }

    /// The trace each thread's ROOT THREAD OBJECT names (by thread serial), given the frames the walk saw
    /// holding roots: the trace from before the walk where they agree with it, else one built from them.
    pub fn settle_traces(&self, ctx: &Context, jni: Jni, seen: &[SeenFrame]) -> FxHashMap<u32, u32> {
        let mut by_thread: FxHashMap<u32, Vec<&SeenFrame>> = FxHashMap::default();
        for f in seen {
            by_thread.entry(f.thread).or_default().push(f);
        }
        let mut traces = FxHashMap::default();
        for t in self.by_id.values() {
            let seen = by_thread.get(&t.serial).map(Vec::as_slice).unwrap_or_default();
            let agrees = seen.iter().all(|f| t.frames.get(f.depth as usize).is_some_and(|p| p.method == f.method));
            let serial = if agrees { t.trace_serial } else { trace_from_walk(ctx, jni, t.serial, seen) };
            traces.insert(t.serial, serial);
        }
        traces
    }
}

/// A trace of the frames the walk saw, with a pseudo-frame at the depths it saw none.
fn trace_from_walk(ctx: &Context, jni: Jni, thread_serial: u32, seen: &[&SeenFrame]) -> u32 {
    let depth = seen.iter().map(|f| f.depth.max(0) as usize + 1).max().unwrap_or(0);
    let mut frames = vec![None; depth];
    for f in seen {
        frames[f.depth.max(0) as usize]
            .get_or_insert(RawFrame { method: f.method, bci: f.location.clamp(-1, i32::MAX as i64) as i32 });
    }
    let indexes: Vec<u32> = frames
        .into_iter()
        .map(|f| {
            f.and_then(|raw| ctx.frame_index(Some(jni), raw)).unwrap_or_else(|| ctx.traces().pseudo_frame(UNSEEN_FRAME))
        })
        .collect();
    ctx.intern_trace(thread_serial, &indexes)
}

/// The thread's whole stack, top first.
fn stack(ctx: &Context, thread: sys::jthread) -> Vec<RawFrame> {
    let depth = ctx.jvmti.frame_count(thread).map_or(0, |n| (n.max(0) as usize).min(MAX_FRAMES));
    let frames = if depth == 0 { Vec::new() } else { ctx.jvmti.stack_frames(thread, 0, depth).unwrap_or_default() };
    frames.iter().map(RawFrame::from_jvmti).collect()
}
