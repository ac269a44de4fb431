//! The shared tables as a capability uses them: each method hands its table the rest of the session it
//! needs (JVMTI, the identifier counter, the writer, the tables it builds on), so that no caller passes
//! the context back into a table. The tables see the session only through their `*Env` traits, which the
//! context implements here.

use super::Context;
use crate::classes::{ClassEnv, ClassRecord, ClassTable};
use crate::ids::ObjectIds;
use crate::methods::{MethodCache, MethodEnv, MethodInfo};
use crate::output::{ReportTables, Reports};
use crate::threads::{ThreadEnv, ThreadRecord};
use crate::traces::{RawFrame, TraceEnv, TraceTable};
use jvmti::{Jni, Jvmti, sys};
use std::sync::Arc;

impl Context {
    /// The record of `class`, numbering it (and writing LOAD CLASS in binary output) if it is new.
    pub fn class_record(&self, class: sys::jclass) -> Option<Arc<ClassRecord>> {
        self.classes.register(self, class)
    }

    /// A class's tag was freed: it was unloaded (UNLOAD CLASS in binary output).
    pub fn class_freed(&self, tag: i64) {
        self.classes.on_class_freed(self, tag)
    }

    /// The record of a registered thread (null = the current thread).
    pub fn thread_record(&self, thread: sys::jthread) -> Option<Arc<ThreadRecord>> {
        self.threads.of(self, thread)
    }

    /// The record of `thread`, numbering it (and writing THREAD START) if it is new; true if it was.
    /// `on_own_thread` says whether the caller runs on that thread (see [`crate::threads::ThreadTable`]).
    pub fn register_thread(&self, thread: sys::jthread, on_own_thread: bool) -> Option<(Arc<ThreadRecord>, bool)> {
        self.threads.register(self, thread, on_own_thread)
    }

    /// A record for one of the JVM's own threads (see [`crate::threads::ThreadTable::register_jvm_thread`]).
    pub fn register_jvm_thread(&self, name: &str, tid: i32) -> Arc<ThreadRecord> {
        self.threads.register_jvm_thread(self, name, tid)
    }

    /// The serial of `thread`, 0 if it is not registered.
    pub fn thread_serial(&self, thread: sys::jthread) -> u32 {
        self.threads.serial_of(self, thread)
    }

    /// THREAD END for a thread, once.
    pub fn mark_thread_ended(&self, record: &ThreadRecord) {
        self.threads.mark_ended(self, record)
    }

    /// A method's details; `None` if the JVM no longer knows it.
    pub fn method_info(&self, jni: Option<Jni>, method: sys::jmethodID) -> Option<Arc<MethodInfo>> {
        self.methods.resolve(self, jni, method)
    }

    /// The trace table's index of a frame, resolving its method on first sight; `None` if the method is gone.
    pub fn frame_index(&self, jni: Option<Jni>, raw: RawFrame) -> Option<u32> {
        self.traces.frame_index(self, jni, raw)
    }

    /// The trace serial of a stack given as raw frames (already cut to the wanted depth), taken on the
    /// thread of serial `thread_serial` (the trace carries it with thread=y).
    pub fn intern_stack(&self, jni: Option<Jni>, thread_serial: u32, raw: &[RawFrame]) -> u32 {
        self.traces.intern_raw(self, jni, self.trace_thread_serial(thread_serial), raw)
    }

    /// The trace serial of a stack given as frame indexes, taken on the thread of serial `thread_serial`.
    pub fn intern_trace(&self, thread_serial: u32, frames: &[u32]) -> u32 {
        self.traces.intern(self.trace_thread_serial(thread_serial), frames)
    }

    /// The typed report methods, writing through the session's writer with the tables reports refer to.
    pub fn reports(&self) -> Reports<'_> {
        Reports::new(&self.output, self)
    }
}

// The shared tables and the writer take what they need through these traits, so that none of them
// depends on the context either.
impl ClassEnv for Context {
    fn jvmti(&self) -> Jvmti {
        self.jvmti
    }
    fn ids(&self) -> &ObjectIds {
        &self.ids
    }
    fn class_loaded(&self, record: &ClassRecord) {
        self.output.load_class(record);
    }
    fn class_unloaded(&self, serial: u32) {
        self.output.unload_class(serial);
    }
}

impl ThreadEnv for Context {
    fn jvmti(&self) -> Jvmti {
        self.jvmti
    }
    fn ids(&self) -> &ObjectIds {
        &self.ids
    }
    fn thread_started(&self, thread: &hprof_format::model::ThreadStart) {
        self.output.thread_start(thread);
    }
    fn thread_ended(&self, serial: u32) {
        self.output.thread_end(serial);
    }
}

impl MethodEnv for Context {
    fn classes(&self) -> &ClassTable {
        &self.classes
    }
}

impl TraceEnv for Context {
    fn methods(&self) -> &MethodCache {
        &self.methods
    }
}

impl ReportTables for Context {
    fn traces(&self) -> &TraceTable {
        &self.traces
    }
    fn classes(&self) -> &ClassTable {
        &self.classes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hprof_format::model::{Frame, LineNumber};

    fn trace_thread(options: &str) -> u32 {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::without_jvm(&format!("{options},file={}", dir.path().join("t.txt").display()));
        let frame = ctx.traces().named_frame(Frame {
            class_name: "com.example.Main".into(),
            method_name: "main".into(),
            method_signature: "()V".into(),
            source_file: None,
            line: LineNumber::Unknown,
        });
        let serial = ctx.intern_trace(200001, &[frame]);
        ctx.traces().trace(serial).unwrap().thread_serial
    }

    #[test]
    fn a_trace_carries_its_thread_only_with_thread_y() {
        assert_eq!(trace_thread("cpu=samples,thread=y"), 200001);
        assert_eq!(trace_thread("cpu=samples"), 0);
    }
}
