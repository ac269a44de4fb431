//! The thread roots with their frame depth, which the graph does not keep: one pass over the sub-records.

use crate::dump::Dump;
use crate::heap::chunks;
use hprof_format::binary::{HeapRecord, HeapRecords};
use rayon::prelude::*;

/// A root that belongs to a thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadRoot {
    /// The `java.lang.Thread` object, with its stack trace's serial.
    Thread {
        trace_serial: u32,
    },
    /// A local variable or operand of the frame at `depth` (0 = top), ROOT JAVA FRAME.
    JavaLocal {
        depth: u32,
    },
    /// A JNI local reference, at `depth` when the writer knows it (-1 = unknown).
    JniLocal {
        depth: u32,
    },
    NativeStack,
    ThreadBlock,
    JniMonitor,
}

/// (object id, thread serial, what).
pub type ThreadRootRecord = (u64, u32, ThreadRoot);

pub fn thread_roots(dump: &Dump) -> Vec<ThreadRootRecord> {
    let Some(hd) = dump.heap_dump() else { return Vec::new() };
    let (cs, _) = chunks(dump, hd);
    let mut all: Vec<ThreadRootRecord> = cs
        .par_iter()
        .flat_map_iter(|c| {
            let mut out = Vec::new();
            for r in HeapRecords::new(&dump.data()[c.start..c.end], c.start as u64, dump.id_size()) {
                let Ok((_, r)) = r else { break };
                use HeapRecord::*;
                let item = match r {
                    RootThreadObject { id, thread_serial, trace_serial } => {
                        (id, thread_serial, ThreadRoot::Thread { trace_serial })
                    }
                    RootJavaFrame { id, thread_serial, frame } => {
                        (id, thread_serial, ThreadRoot::JavaLocal { depth: frame })
                    }
                    RootJniLocal { id, thread_serial, frame } => {
                        (id, thread_serial, ThreadRoot::JniLocal { depth: frame })
                    }
                    RootNativeStack { id, thread_serial } => (id, thread_serial, ThreadRoot::NativeStack),
                    RootThreadBlock { id, thread_serial } => (id, thread_serial, ThreadRoot::ThreadBlock),
                    RootJniMonitor { id, thread_serial, .. } => (id, thread_serial, ThreadRoot::JniMonitor),
                    _ => continue,
                };
                out.push(item);
            }
            dump.source.release(c.start, c.end);
            out
        })
        .collect();
    all.sort_by_key(|&(id, serial, _)| (serial, id));
    all
}
