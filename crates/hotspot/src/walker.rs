//! Walks the current thread's Java frames from its last Java frame anchor and names each one by identity.
//!
//! A thread inside a JVMTI callback (or any native code) left Java through a transition that recorded
//! its last Java frame in `JavaThread::_anchor`: stack pointer, frame pointer and, unless the VM has not
//! needed it yet, the return address (otherwise it is the word below the stack pointer, which HotSpot's
//! own `capture_last_Java_pc` reads too). From there each frame gives its sender the way HotSpot's x86-64
//! `frame::sender` does:
//!
//! - interpreted (the pc is in the interpreter): `Method*` and bytecode pointer are slots below the frame
//!   pointer; the sender's pc and frame pointer are above it;
//! - compiled, or a stub (the pc is in a code blob): the sender's stack pointer is `frame_size` words
//!   up, with the return address and the saved frame pointer just below it;
//! - the call stub (the first Java frame of a call from C++ or JNI): its JavaCallWrapper holds the anchor
//!   of the native frame that called — the walk goes on from there, or ends if there is none.
//!
//! The identities written out, two words per Java frame:
//! - interpreted: `Method*`, bytecode pointer;
//! - compiled: return address, `COMPILED | compile id` (compile ids are never reused, so an address the
//!   code cache hands to a later method cannot be mistaken for the old one).
//!
//! A `Method*` can be reused after its class is unloaded, which happens only inside a garbage collection:
//! caches keyed by these identities must be emptied after each collection.

use crate::code_cache::{BlobKind, CodeCache};
use crate::layout::{self, Layout};
use crate::per_thread::{CachedBlob, WalkerThread};
use crate::structs::VmStructs;
use std::ffi::c_void;

/// Marks the second word of a compiled frame's identity (a bytecode pointer never has this bit).
pub const COMPILED: u64 = 1 << 63;
/// Frames (Java or not) visited before a walk gives up: a guard against a corrupt chain.
const MAX_STEPS: usize = 4096;

/// Why a walk stopped short; the caller takes the stack from JVMTI instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkError {
    /// The C library could not tell where this thread's stack is.
    NoStackBounds,
    /// A frame pointed outside the thread's stack.
    OffStack,
    /// A return address in no code blob the walker knows.
    UnknownCode,
    /// A blob without a usable frame size.
    NoFrameSize,
    /// A compiled frame that returns into its deoptimization handler (its real pc is elsewhere).
    Deoptimized,
    /// More than `MAX_STEPS` frames.
    TooDeep,
}

impl WalkError {
    pub const ALL: [WalkError; 6] = [
        WalkError::NoStackBounds,
        WalkError::OffStack,
        WalkError::UnknownCode,
        WalkError::NoFrameSize,
        WalkError::Deoptimized,
        WalkError::TooDeep,
    ];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn describe(self) -> &'static str {
        match self {
            WalkError::NoStackBounds => "stack bounds unknown",
            WalkError::OffStack => "frame off the stack",
            WalkError::UnknownCode => "unknown code",
            WalkError::NoFrameSize => "blob without frame size",
            WalkError::Deoptimized => "deoptimized frame",
            WalkError::TooDeep => "too deep",
        }
    }
}

/// Identities of Java frames, two words each (see the module documentation).
pub type FrameIds = [u64];

pub struct Walker {
    layout: Layout,
    code: CodeCache,
    /// `JNIEnv*` minus `JavaThread*`: the env is a field of the thread.
    env_offset: usize,
    interpreter: (usize, usize),
    call_stub_return: usize,
}

/// A frame while walking: stack pointer (the unextended one, which frame sizes count from), frame
/// pointer and pc.
#[derive(Debug, Clone, Copy)]
struct Frame {
    sp: usize,
    fp: usize,
    pc: usize,
}

impl Walker {
    /// `env` and `java_thread` are the JNIEnv and the `JavaThread*` (java.lang.Thread's `eetop`) of one
    /// thread, which tells where the env lives inside a thread. Call after VMInit, when the code cache
    /// and the interpreter exist.
    pub fn new(vm: &VmStructs, env: *const c_void, java_thread: usize) -> Result<Walker, String> {
        if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
            return Err("the frame walker supports x86-64 Linux only".into());
        }
        let env_offset = (env as usize).checked_sub(java_thread).filter(|o| *o < 1 << 16);
        let env_offset = env_offset.ok_or("JNIEnv does not lie inside its JavaThread")?;
        let layout = Layout::resolve(vm)?;
        let code = CodeCache::new(&layout)?;
        // SAFETY: an address from HotSpot's structure tables (stub queue, call stub return address) in libjvm's
        // static data, or a word of the current thread's frame anchor, checked against its stack before use.
        let queue = unsafe { *(layout.interpreter_code as *const usize) };
        if queue == 0 {
            return Err("the interpreter is not generated yet".into());
        }
        // SAFETY: an address from HotSpot's structure tables (stub queue, call stub return address) in libjvm's
        // static data, or a word of the current thread's frame anchor, checked against its stack before use.
        let start = unsafe { *((queue + layout.stub_queue_buffer) as *const usize) };
        // SAFETY: an address from HotSpot's structure tables (stub queue, call stub return address) in libjvm's
        // static data, or a word of the current thread's frame anchor, checked against its stack before use.
        let len = unsafe { *((queue + layout.stub_queue_limit) as *const i32) };
        // SAFETY: an address from HotSpot's structure tables (stub queue, call stub return address) in libjvm's
        // static data, or a word of the current thread's frame anchor, checked against its stack before use.
        let call_stub_return = unsafe { *(layout.call_stub_return_address as *const usize) };
        if start == 0 || len <= 0 || call_stub_return == 0 {
            return Err("the interpreter or the call stub is not generated yet".into());
        }
        Ok(Walker { layout, code, env_offset, interpreter: (start, start + len as usize), call_stub_return })
    }

    /// Writes the identities of up to `max_frames` Java frames of the current thread, innermost first, into
    /// `out` (two words per frame; `out` holds at least `2 * max_frames`); returns how many it wrote, fewer
    /// only when the stack has no more Java frames. `epoch` is the caller's garbage collection count: the
    /// walker forgets what it knows of code blobs when it changes.
    ///
    /// # Safety
    /// `t` must be the current thread's [`WalkerThread`] and `env` its JNIEnv, and the thread must be outside
    /// Java code (in a JVMTI callback or other native code), so that its anchor describes its stack.
    pub unsafe fn walk(
        &self,
        t: &mut WalkerThread,
        env: *const c_void,
        epoch: u64,
        max_frames: usize,
        out: &mut FrameIds,
    ) -> Result<usize, WalkError> {
        t.enter_epoch(epoch);
        // Only the live part of the stack, from this very frame up: below it lie dead stack and HotSpot's
        // protected guard zones, which a corrupt frame pointer must not lead a read into.
        let here = &epoch as *const u64 as usize;
        let mem = Stack { low: here.max(t.stack.0), high: t.stack.1 };
        let thread = env as usize - self.env_offset;
        let Some(mut frame) = self.anchor_frame(&mem, thread + self.layout.thread_anchor, false)? else {
            return Ok(0);
        };
        let mut written = 0;
        for _ in 0..MAX_STEPS {
            if written >= max_frames {
                return Ok(written);
            }
            if frame.pc >= self.interpreter.0 && frame.pc < self.interpreter.1 {
                let method = mem.word(frame.fp, layout::INTERPRETER_METHOD)?;
                let bcp = mem.word(frame.fp, layout::INTERPRETER_BCP)?;
                out[2 * written] = method as u64;
                out[2 * written + 1] = bcp as u64;
                written += 1;
                frame = Frame {
                    sp: mem.word(frame.fp, layout::INTERPRETER_SENDER_SP)?,
                    fp: mem.word(frame.fp, layout::LINK)?,
                    pc: mem.word(frame.fp, layout::RETURN_ADDRESS)?,
                }
                .above(frame)?;
                continue;
            }
            if frame.pc == self.call_stub_return {
                // The JavaCallWrapper lives in the frame of the C++ code that called Java.
                let wrapper = mem.word(frame.fp, self.layout.entry_frame_call_wrapper)?;
                match self.anchor_frame(&mem, wrapper + self.layout.call_wrapper_anchor, true)? {
                    Some(caller) => frame = caller.above(frame)?,
                    None => return Ok(written),
                }
                continue;
            }
            let blob = self.blob_at(t, frame.pc)?;
            if blob.compile_id >= 0 {
                out[2 * written] = frame.pc as u64;
                out[2 * written + 1] = COMPILED | blob.compile_id as u32 as u64;
                written += 1;
            }
            let sender_sp = frame.sp + blob.frame_words as usize * 8;
            frame = Frame { sp: sender_sp, fp: mem.word(sender_sp, -layout::SENDER_SP)?, pc: mem.word(sender_sp, -1)? }
                .above(frame)?;
        }
        Err(WalkError::TooDeep)
    }

    /// The blob a return address lies in, from the thread's cache when it still holds there.
    fn blob_at(&self, t: &mut WalkerThread, pc: usize) -> Result<CachedBlob, WalkError> {
        let cached = *t.blob_slot(pc);
        if cached.pc == pc
            && self.code.name(cached.blob) == cached.name
            && (cached.compile_id < 0 || self.code.compile_id(cached.blob) == cached.compile_id)
        {
            return Ok(cached);
        }
        let blob = self.code.find_blob(pc).ok_or(WalkError::UnknownCode)?;
        let kind = self.code.kind(blob).ok_or(WalkError::UnknownCode)?;
        let frame_words = self.code.frame_size(blob);
        if frame_words <= 0 {
            return Err(WalkError::NoFrameSize);
        }
        let compile_id = match kind {
            BlobKind::Nmethod if pc >= self.code.stub_section(blob) => return Err(WalkError::Deoptimized),
            BlobKind::Nmethod => self.code.compile_id(blob),
            BlobKind::Stub => -1,
        };
        let found = CachedBlob { pc, blob, frame_words, compile_id, name: self.code.name(blob) };
        *t.blob_slot(pc) = found;
        Ok(found)
    }

    /// The frame a JavaFrameAnchor (a thread's, or one saved in a JavaCallWrapper on the stack) describes;
    /// `None` when it is empty (no Java frame). An anchor found through the stack is read like the stack,
    /// checked word by word.
    fn anchor_frame(&self, mem: &Stack, anchor: usize, on_stack: bool) -> Result<Option<Frame>, WalkError> {
        let l = &self.layout;
        let read = |offset: usize| {
            // SAFETY: an address from HotSpot's structure tables (stub queue, call stub return address) in libjvm's
            // static data, or a word of the current thread's frame anchor, checked against its stack before use.
            if on_stack { mem.word(anchor + offset, 0) } else { Ok(unsafe { *((anchor + offset) as *const usize) }) }
        };
        let sp = read(l.anchor_sp)?;
        if sp == 0 {
            return Ok(None);
        }
        let mut pc = read(l.anchor_pc)?;
        if pc == 0 {
            pc = mem.word(sp, -1)?;
        }
        let fp = read(l.anchor_fp)?;
        mem.check(sp)?;
        Ok(Some(Frame { sp, fp, pc }))
    }
}

impl Frame {
    /// This frame, if it is a caller of `callee`: stacks grow down, so a caller's stack pointer is higher.
    /// Anything else means a corrupt chain, which must not send the walk in circles.
    fn above(self, callee: Frame) -> Result<Frame, WalkError> {
        if self.sp > callee.sp { Ok(self) } else { Err(WalkError::OffStack) }
    }
}

/// The current thread's stack: the only memory the walker reads words from by frame arithmetic.
struct Stack {
    low: usize,
    high: usize,
}

impl Stack {
    fn check(&self, addr: usize) -> Result<(), WalkError> {
        if addr >= self.low && addr < self.high && addr.is_multiple_of(8) { Ok(()) } else { Err(WalkError::OffStack) }
    }

    /// The word `index` words from `base`.
    fn word(&self, base: usize, index: isize) -> Result<usize, WalkError> {
        let addr = base.checked_add_signed(index * 8).ok_or(WalkError::OffStack)?;
        self.check(addr)?;
        // SAFETY: an address from HotSpot's structure tables (stub queue, call stub return address) in libjvm's
        // static data, or a word of the current thread's frame anchor, checked against its stack before use.
        Ok(unsafe { *(addr as *const usize) })
    }
}
