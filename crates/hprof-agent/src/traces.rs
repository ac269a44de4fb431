//! The trace table: interns stack traces into serials (from 300001) and frames into indexes.
//!
//! Two levels keep the hot path cheap: a trace taken as raw `(jmethodID, bci)` pairs is looked up first as
//! it is; only a new raw trace is resolved (names, line numbers) and then interned by its resolved frames,
//! so that two raw traces that print the same share one serial.

use crate::methods::MethodInfo;
use crate::methods::{MethodCache, MethodEnv};
use hprof_format::model::{Frame, LineNumber};
use hprof_format::serial_base;
use jvmti::{Jni, sys};
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex};

/// What the trace table needs around it to name frames: the method cache (and what that needs).
pub trait TraceEnv: MethodEnv {
    fn methods(&self) -> &MethodCache;
}

/// A frame as a stack walk returns it. `bci` is the bytecode index; negative means native or unknown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RawFrame {
    pub method: usize,
    pub bci: i32,
}

impl RawFrame {
    pub fn new(method: sys::jmethodID, bci: i32) -> RawFrame {
        RawFrame { method: method as usize, bci }
    }

    /// From JVMTI's `GetStackTrace`, whose location is -1 for native methods.
    pub fn from_jvmti(f: &sys::jvmtiFrameInfo) -> RawFrame {
        RawFrame { method: f.method as usize, bci: f.location.clamp(-1, i32::MAX as i64) as i32 }
    }

    /// Marks the start of a raw key with the thread serial, so one flat slice is the whole key.
    fn thread_marker(thread_serial: u32) -> RawFrame {
        RawFrame { method: usize::MAX, bci: thread_serial as i32 }
    }
}

/// A resolved frame and the class serial its binary STACK FRAME record names.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredFrame {
    pub frame: Frame,
    pub class_serial: u32,
}

#[derive(Debug, Clone)]
pub struct StoredTrace {
    pub serial: u32,
    /// 0 when traces do not record threads (thread=n).
    pub thread_serial: u32,
    pub frames: Arc<[u32]>,
}

#[derive(Debug, Default)]
struct Inner {
    by_raw: FxHashMap<Box<[RawFrame]>, u32>,
    by_frames: FxHashMap<(u32, Arc<[u32]>), u32>,
    traces: Vec<StoredTrace>,
    frames: Vec<StoredFrame>,
    frame_index: FxHashMap<(usize, LineNumber), u32>,
    pseudo_index: FxHashMap<String, u32>,
    named_index: FxHashMap<(String, String, String), u32>,
}

#[derive(Debug, Default)]
pub struct TraceTable {
    inner: Mutex<Inner>,
    lineno: bool,
}

/// Key buffers up to this depth live on the stack.
const INLINE_KEY: usize = 33;

impl TraceTable {
    pub fn new(lineno: bool) -> TraceTable {
        TraceTable { inner: Mutex::default(), lineno }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The serial for a trace given as raw frames (already cut to the wanted depth).
    pub fn intern_raw(
        &self,
        ctx: &(impl TraceEnv + ?Sized),
        jni: Option<Jni>,
        thread_serial: u32,
        raw: &[RawFrame],
    ) -> u32 {
        let mut inline = [RawFrame { method: 0, bci: 0 }; INLINE_KEY];
        let mut heap = Vec::new();
        let key: &[RawFrame] = if raw.len() < INLINE_KEY {
            inline[0] = RawFrame::thread_marker(thread_serial);
            inline[1..=raw.len()].copy_from_slice(raw);
            &inline[..=raw.len()]
        } else {
            heap.push(RawFrame::thread_marker(thread_serial));
            heap.extend_from_slice(raw);
            &heap
        };
        if let Some(&serial) = self.lock().by_raw.get(key) {
            return serial;
        }
        let frames: Vec<u32> = raw
            .iter()
            .map(|&f| self.frame_index(ctx, jni, f).unwrap_or_else(|| self.pseudo_frame("<unknown method>")))
            .collect();
        let serial = self.intern(thread_serial, &frames);
        self.lock().by_raw.insert(key.into(), serial);
        serial
    }

    /// The serial for a trace of frame indexes.
    pub fn intern(&self, thread_serial: u32, frames: &[u32]) -> u32 {
        let mut inner = self.lock();
        let key: Arc<[u32]> = frames.into();
        if let Some(&serial) = inner.by_frames.get(&(thread_serial, key.clone())) {
            return serial;
        }
        let serial = serial_base::TRACE + 1 + inner.traces.len() as u32;
        inner.traces.push(StoredTrace { serial, thread_serial, frames: key.clone() });
        inner.by_frames.insert((thread_serial, key), serial);
        serial
    }

    /// The index of a frame, resolving its method on first sight; `None` if the method is gone.
    pub fn frame_index(&self, ctx: &(impl TraceEnv + ?Sized), jni: Option<Jni>, raw: RawFrame) -> Option<u32> {
        let method = ctx.methods().resolve(ctx, jni, raw.method as sys::jmethodID)?;
        let line = self.line_number(&method, raw.bci);
        let mut inner = self.lock();
        if let Some(&i) = inner.frame_index.get(&(raw.method, line)) {
            return Some(i);
        }
        let i = inner.frames.len() as u32;
        inner.frames.push(StoredFrame {
            frame: Frame {
                class_name: method.class_name.clone(),
                method_name: method.name.clone(),
                method_signature: method.signature.clone(),
                source_file: method.source_file.clone(),
                line,
            },
            class_serial: method.class_serial,
        });
        inner.frame_index.insert((raw.method, line), i);
        Some(i)
    }

    /// The index of a pseudo-frame such as `[GC active]`, for what a sampler saw instead of Java code.
    pub fn pseudo_frame(&self, label: &str) -> u32 {
        let mut inner = self.lock();
        if let Some(&i) = inner.pseudo_index.get(label) {
            return i;
        }
        let i = inner.frames.len() as u32;
        inner.frames.push(StoredFrame { frame: Frame::pseudo(label), class_serial: 0 });
        inner.pseudo_index.insert(label.to_owned(), i);
        i
    }

    /// The index of a frame known by its names rather than a jmethodID (cpu=times' shadow stacks).
    pub fn named_frame(&self, frame: Frame) -> u32 {
        let mut inner = self.lock();
        let key = (frame.class_name.clone(), frame.method_name.clone(), frame.method_signature.clone());
        if let Some(&i) = inner.named_index.get(&key) {
            return i;
        }
        let i = inner.frames.len() as u32;
        inner.frames.push(StoredFrame { frame, class_serial: 0 });
        inner.named_index.insert(key, i);
        i
    }

    fn line_number(&self, method: &MethodInfo, bci: i32) -> LineNumber {
        if method.native || bci == -3 {
            return LineNumber::Native;
        }
        if !self.lineno {
            return LineNumber::NotRecorded;
        }
        if bci < 0 {
            return LineNumber::Unknown;
        }
        match method.line_table.line_of(bci as i64) {
            Some(n) if n > 0 => LineNumber::Line(n as u32),
            _ => LineNumber::Unknown,
        }
    }

    pub fn trace(&self, serial: u32) -> Option<StoredTrace> {
        let index = serial.checked_sub(serial_base::TRACE + 1)?;
        self.lock().traces.get(index as usize).cloned()
    }

    pub fn frame(&self, index: u32) -> Option<StoredFrame> {
        self.lock().frames.get(index as usize).cloned()
    }

    /// The frames of a trace, resolved, top first.
    pub fn frames_of(&self, serial: u32) -> Vec<StoredFrame> {
        let inner = self.lock();
        let Some(t) = serial.checked_sub(serial_base::TRACE + 1).and_then(|i| inner.traces.get(i as usize)) else {
            return Vec::new();
        };
        t.frames.iter().filter_map(|&i| inner.frames.get(i as usize).cloned()).collect()
    }

    /// `Class.method` of a trace's top frame, as CPU reports name a row.
    pub fn top_method(&self, serial: u32) -> Option<String> {
        self.frames_of(serial).first().map(|f| f.frame.qualified_method())
    }

    pub fn len(&self) -> usize {
        self.lock().traces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every serial handed out so far.
    pub fn serials(&self) -> std::ops::RangeInclusive<u32> {
        serial_base::TRACE + 1..=serial_base::TRACE + self.len() as u32
    }
}
