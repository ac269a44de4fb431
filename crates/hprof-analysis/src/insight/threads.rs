//! Threads: each stack with the objects each frame's locals hold (ROOT JAVA FRAME records and their
//! frame depth), with retained sizes per frame and per thread.
//!
//! Every object a frame holds is a GC root, so the dominator tree hangs it right under the super-root and
//! what it retains never overlaps what another root retains. A frame retains the sum over its distinct
//! objects; a thread the sum over its `Thread` object and every distinct object its frames hold (an
//! object two frames hold is counted once, at the topmost). An object that two roots share (two locals of
//! the thread, or a local and a static) is retained by neither, as in `hprof dominators`.

use super::fields::ObjectReader;
use super::roots_by_frame::{ThreadRoot, thread_roots};
use crate::dominators::DominatorTree;
use crate::dump::Dump;
use crate::heap::HeapGraph;
use hprof_format::model::Frame;
use rustc_hash::FxHashSet;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
pub struct HeldObject {
    pub node: u32,
    pub id: u64,
    pub class: String,
    pub shallow_bytes: u64,
    pub retained_bytes: u64,
}

#[derive(Debug, Clone)]
pub struct FrameLocals {
    /// 0 = the top of the stack.
    pub depth: u32,
    /// `None` when the dump has no stack trace for this depth.
    pub frame: Option<Frame>,
    pub objects: Vec<HeldObject>,
    pub retained_bytes: u64,
}

#[derive(Debug, Clone)]
pub struct ThreadInfo {
    pub serial: u32,
    pub name: Option<String>,
    pub object: Option<HeldObject>,
    /// Every frame of the stack trace, top first, each with what it holds.
    pub frames: Vec<FrameLocals>,
    /// JNI locals without a frame, native stack and thread block roots.
    pub other_roots: Vec<HeldObject>,
    pub retained_bytes: u64,
}

fn held(g: &HeapGraph, tree: &DominatorTree, v: u32) -> HeldObject {
    HeldObject {
        node: v,
        id: g.ids.get(v),
        class: super::root_paths::class_or_mirror(g, v),
        shallow_bytes: g.shallow[v as usize] as u64,
        retained_bytes: tree.retained[v as usize],
    }
}

/// Threads by retained size, biggest first.
pub fn threads(dump: &Dump, g: &HeapGraph, tree: &DominatorTree) -> Vec<ThreadInfo> {
    let r = ObjectReader::new(dump, g);
    let mut per: BTreeMap<u32, Vec<(u32, ThreadRoot)>> = BTreeMap::new();
    for (id, serial, what) in thread_roots(dump) {
        if let Some(v) = g.node(id) {
            per.entry(serial).or_default().push((v, what));
        }
    }
    let mut out = Vec::new();
    for (serial, roots) in per {
        let thread_obj = roots.iter().find_map(|&(v, w)| matches!(w, ThreadRoot::Thread { .. }).then_some(v));
        let trace = roots.iter().find_map(|&(_, w)| match w {
            ThreadRoot::Thread { trace_serial } => Some(trace_serial),
            _ => None,
        });
        // The trace of the thread object's root; else one whose thread serial is this thread's.
        let frames: Vec<Frame> = match trace.filter(|t| dump.traces.contains_key(t)) {
            Some(t) => dump.trace_frames(t),
            None => dump
                .traces
                .iter()
                .find(|(_, t)| t.thread_serial == serial)
                .map(|(&s, _)| dump.trace_frames(s))
                .unwrap_or_default(),
        };
        let name = dump
            .threads
            .iter()
            .find(|t| t.serial == serial && !t.name.is_empty())
            .map(|t| t.name.clone())
            .or_else(|| thread_obj.and_then(|t| r.field_node(t, "name")).and_then(|s| r.text_of(s, 200)))
            // A name from the heap reaches terminals: escaped like every name from the file.
            .map(|n| hprof_format::names::printable(&n).into_owned());
        let mut by_depth: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        let mut other = Vec::new();
        for &(v, w) in &roots {
            match w {
                ThreadRoot::JavaLocal { depth } | ThreadRoot::JniLocal { depth } if depth != u32::MAX => {
                    by_depth.entry(depth).or_default().push(v)
                }
                ThreadRoot::Thread { .. } => {}
                _ => other.push(v),
            }
        }
        let mut counted: FxHashSet<u32> = FxHashSet::default();
        let mut total = 0u64;
        if let Some(t) = thread_obj {
            counted.insert(t);
            total += tree.retained[t as usize];
        }
        let deepest = by_depth.keys().next_back().map_or(0, |&d| d as usize + 1).max(frames.len());
        let mut frame_rows = Vec::with_capacity(deepest);
        for depth in 0..deepest as u32 {
            let mut vs = by_depth.remove(&depth).unwrap_or_default();
            vs.sort_unstable();
            vs.dedup();
            let retained: u64 = vs.iter().map(|&v| tree.retained[v as usize]).sum();
            for &v in &vs {
                if counted.insert(v) {
                    total += tree.retained[v as usize];
                }
            }
            let mut objects: Vec<HeldObject> = vs.iter().map(|&v| held(g, tree, v)).collect();
            objects.sort_by(|a, b| b.retained_bytes.cmp(&a.retained_bytes).then(a.id.cmp(&b.id)));
            frame_rows.push(FrameLocals {
                depth,
                frame: frames.get(depth as usize).cloned(),
                objects,
                retained_bytes: retained,
            });
        }
        other.sort_unstable();
        other.dedup();
        for &v in &other {
            if counted.insert(v) {
                total += tree.retained[v as usize];
            }
        }
        out.push(ThreadInfo {
            serial,
            name,
            object: thread_obj.map(|t| held(g, tree, t)),
            frames: frame_rows,
            other_roots: other.iter().map(|&v| held(g, tree, v)).collect(),
            retained_bytes: total,
        });
    }
    out.sort_by(|a, b| b.retained_bytes.cmp(&a.retained_bytes).then(a.serial.cmp(&b.serial)));
    out
}
