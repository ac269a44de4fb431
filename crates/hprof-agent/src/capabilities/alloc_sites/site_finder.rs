//! Which site an allocation belongs to: its class and the trace of its first `depth` frames.
//!
//! JVMTI's GetStackTrace costs about a microsecond per call — on a program that allocates 30 million
//! objects, more than the program itself. So the allocating thread names its frames with the `hotspot`
//! walker instead (tens of nanoseconds: a `Method*` and bytecode pointer per interpreted frame, a return
//! address and compile id per compiled one) and looks the site up in a per-thread cache keyed by those
//! identities. Only a stack never seen before goes to GetStackTrace; equal identities always mean equal
//! traces, since a compiled frame's return address and compile id fix its inlined methods and bytecode
//! indexes, and `depth` physical frames cover at least `depth` Java frames.
//!
//! The class is part of the key too: with a collector that moves objects only inside pauses (G1, Parallel,
//! Serial — each pause starts a new cache epoch), as the class object's address, read from the callback's
//! JNI handle; otherwise (ZGC, Shenandoah) as the class serial, which costs a JVMTI tag lookup.
//!
//! A `Method*` may be reused once its class is unloaded, which only a garbage collection does, so the
//! caches start over after every collection ([`SiteFinder::on_gc_start`]). Where the walker cannot be used
//! (not x86-64, a JVM that exports no structure tables) or gives up on a stack, GetStackTrace is used
//! directly, and the caches are keyed by its jmethodIDs instead.
//!
//! `HPROF_VERIFY_WALK=1` checks every cached answer against GetStackTrace and reports mismatches at exit;
//! the tests run with it on every JDK.

use super::per_thread::AllocThread;
use super::site_table::{SiteKey, SiteTable};
use crate::context::Context;
use crate::log;
use crate::traces::RawFrame;
use hotspot::{VmStructs, WalkError, Walker};
use hprof_format::serial_base;
use jvmti::{Jni, sys};
use std::mem::MaybeUninit;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Stacks up to this depth are taken into buffers on the stack.
const INLINE_DEPTH: usize = 64;
/// Cache keys for stacks up to this depth are built on the stack (HPROF's default depth is 4).
const INLINE_KEY_DEPTH: usize = 16;
/// Key word 0 holds the class: its object's address (8-aligned) or its serial shifted left by 3, with
/// these low bits saying which, and how the frames that follow were named.
const KEY_CLASS_SERIAL: u64 = 1;
const KEY_JVMTI_FRAMES: u64 = 2;
const KEY_NO_TRACE: u64 = 4;

#[derive(Default)]
pub struct SiteFinder {
    walker: OnceLock<Option<Walker>>,
    /// Whether class objects move only inside collection pauses (so their addresses can key the cache).
    addresses_stable_between_pauses: OnceLock<bool>,
    /// Garbage collections started so far: a thread's cache is emptied when this moves.
    gc_epoch: AtomicU64,
    walk_failures: [AtomicU64; WalkError::ALL.len()],
    verify: Verification,
}

#[derive(Default)]
struct Verification {
    enabled: OnceLock<bool>,
    checked: AtomicU64,
    mismatches: AtomicU64,
}

impl SiteFinder {
    /// Sets the walker up; called at VMInit, on a Java thread (its `eetop` tells where a JNIEnv lies
    /// inside a JavaThread).
    pub fn init(&self, ctx: &Context, jni: Jni) {
        let walker = self.walker.get_or_init(|| match new_walker(ctx, jni) {
            Ok(w) => Some(w),
            Err(e) => {
                log::verbose(ctx.options.verbose, &format!("heap=sites: stacks through JVMTI only ({e})"));
                None
            }
        });
        let _ = self.addresses_stable_between_pauses.set(!crate::collector::is_concurrent());
        let verify = std::env::var_os("HPROF_VERIFY_WALK").is_some_and(|v| v == "1");
        let _ = self.verify.enabled.set(verify && walker.is_some());
    }

    pub fn on_gc_start(&self) {
        self.gc_epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// The site of an allocation of an instance of `class` by the current thread, whose state `t` is (none
    /// for an allocation made while another is recorded); `None` when the class cannot be registered or
    /// the site table is full.
    pub fn site_of(&self, q: SiteQuery<'_>, t: Option<&mut AllocThread>, class: sys::jclass) -> Option<u32> {
        let SiteQuery { ctx, jni, skip, .. } = q;
        let depth = ctx.depth();
        let class_serial = || ctx.class_record(class).map(|c| c.serial);
        // With thread=y a trace names its thread, and virtual threads share their carrier's cache: no cache.
        let Some(t) = t.filter(|_| !ctx.options.thread) else {
            return self.site_from_jvmti(q, class_serial()?, depth);
        };
        let mut key_buf = [0u64; 1 + 2 * INLINE_KEY_DEPTH];
        let mut key_heap = Vec::new();
        // The key names the skipped frames too (a probe's own frame): they are the same for every stack.
        let walk_depth = depth + skip;
        let key: &mut [u64] = if walk_depth <= INLINE_KEY_DEPTH {
            &mut key_buf[..1 + 2 * walk_depth]
        } else {
            key_heap.resize(1 + 2 * walk_depth, 0);
            &mut key_heap
        };
        if let Some(walker) = self.walker.get().and_then(Option::as_ref) {
            let (class_key, epoch) = self.class_key(ctx, class)?;
            key[0] = class_key;
            let walked = match t.walker() {
                // SAFETY: `site_of` runs in the allocation event on the allocating thread, in native code inside a JVMTI
                // callback; `w` is that thread's own WalkerThread (kept in its AllocThread) and `jni` its JNIEnv.
                Some(w) => unsafe { walker.walk(w, jni.raw() as *const _, epoch, walk_depth, &mut key[1..]) },
                None => Err(WalkError::NoStackBounds),
            };
            match walked {
                Ok(n) => {
                    let key = &key[..1 + 2 * n];
                    let site = t.stacks.site_for(epoch, key, || self.site_from_jvmti(q, class_serial()?, depth));
                    if self.verify.enabled.get() == Some(&true) {
                        self.verify(q, class_serial()?, depth, site);
                    }
                    return site;
                }
                Err(e) => {
                    self.walk_failures[e.index()].fetch_add(1, Ordering::Relaxed);
                    return self.site_from_jvmti(q, class_serial()?, depth);
                }
            }
        }
        // No walker: the JVMTI frames themselves make the key.
        let epoch = self.gc_epoch.load(Ordering::Acquire);
        self.site_from_jvmti_frames(q, t, class_serial()?, depth, epoch, key)
    }

    /// The class part of a cache key, and the collection epoch the key belongs to.
    fn class_key(&self, ctx: &Context, class: sys::jclass) -> Option<(u64, u64)> {
        if self.addresses_stable_between_pauses.get() == Some(&true) {
            // A local JNI handle points at the slot that holds the object's address. The epoch read on both
            // sides tells that no pause moved the object in between.
            let before = self.gc_epoch.load(Ordering::Acquire);
            // SAFETY: `class` is a JNI local reference the JVM passed to this allocation event, on this thread,
            // valid until the event returns.
            let address = unsafe { hotspot::jni_handles::slot_word(class as *const std::ffi::c_void) };
            let after = self.gc_epoch.load(Ordering::Acquire);
            if before == after && address != 0 && address.is_multiple_of(8) {
                return Some((address, before));
            }
        }
        let epoch = self.gc_epoch.load(Ordering::Acquire);
        let serial = ctx.class_record(class)?.serial;
        Some(((serial as u64) << 3 | KEY_CLASS_SERIAL, epoch))
    }

    /// GetStackTrace, then the trace and site tables.
    fn site_from_jvmti(&self, q: SiteQuery<'_>, class_serial: u32, depth: usize) -> Option<u32> {
        let mut stack = JvmtiStack::new(depth);
        intern_site(q, class_serial, stack.take(q.ctx, q.skip))
    }

    /// Without the walker: GetStackTrace on every allocation, its frames the cache key, so that at least
    /// the trace and site tables' locks are skipped for a known stack.
    fn site_from_jvmti_frames(
        &self,
        q: SiteQuery<'_>,
        t: &mut AllocThread,
        class_serial: u32,
        depth: usize,
        epoch: u64,
        key: &mut [u64],
    ) -> Option<u32> {
        let mut stack = JvmtiStack::new(depth);
        let taken = stack.take(q.ctx, q.skip);
        let frames = taken.unwrap_or(&[]);
        key[0] = (class_serial as u64) << 3
            | KEY_CLASS_SERIAL
            | KEY_JVMTI_FRAMES
            | if taken.is_none() { KEY_NO_TRACE } else { 0 };
        for (i, f) in frames.iter().enumerate() {
            key[1 + 2 * i] = f.method as u64;
            key[2 + 2 * i] = f.location as u64;
        }
        t.stacks.site_for(epoch, &key[..1 + 2 * frames.len()], || intern_site(q, class_serial, taken))
    }

    fn verify(&self, q: SiteQuery<'_>, class_serial: u32, depth: usize, cached: Option<u32>) {
        let SiteQuery { ctx, sites, .. } = q;
        let truth = self.site_from_jvmti(q, class_serial, depth);
        self.verify.checked.fetch_add(1, Ordering::Relaxed);
        // A thread JVMTI cannot take a stack of (still starting, say: "no trace") and one the walker found
        // no Java frame on agree.
        let frames_of = |site: Option<u32>| {
            site.and_then(|s| sites.key(s)).map(|k| (k.class_serial, ctx.traces().frames_of(k.trace_serial)))
        };
        if truth != cached && frames_of(truth) != frames_of(cached) {
            let n = self.verify.mismatches.fetch_add(1, Ordering::Relaxed);
            if n < 5 {
                let describe = |site: Option<u32>| {
                    let key = site.and_then(|s| sites.key(s));
                    let frames = key.map(|k| ctx.traces().frames_of(k.trace_serial));
                    format!("{key:?} {frames:?}")
                };
                log::warning(&format!(
                    "heap=sites: walk check mismatch: cached {} / JVMTI {}",
                    describe(cached),
                    describe(truth)
                ));
            }
        }
    }

    /// One line for the verbose log (and the tests): how stacks were found.
    pub fn summary(&self) -> String {
        let mut line = match self.walker.get() {
            Some(Some(_)) => "stacks walked".to_string(),
            _ => "stacks through JVMTI only".to_string(),
        };
        line.push_str(if self.addresses_stable_between_pauses.get() == Some(&true) {
            ", classes by address"
        } else {
            ", classes by serial"
        });
        for e in WalkError::ALL {
            let n = self.walk_failures[e.index()].load(Ordering::Relaxed);
            if n > 0 {
                line.push_str(&format!(", {n} by JVMTI ({})", e.describe()));
            }
        }
        if self.verify.enabled.get() == Some(&true) {
            line.push_str(&format!(
                "; walk check: {} verified, {} mismatches",
                self.verify.checked.load(Ordering::Relaxed),
                self.verify.mismatches.load(Ordering::Relaxed)
            ));
        }
        line
    }
}

/// A buffer for GetStackTrace: on the stack up to [`INLINE_DEPTH`] frames (no zeroing: JVMTI writes it).
struct JvmtiStack {
    inline: [MaybeUninit<sys::jvmtiFrameInfo>; INLINE_DEPTH],
    heap: Vec<MaybeUninit<sys::jvmtiFrameInfo>>,
    depth: usize,
}

impl JvmtiStack {
    fn new(depth: usize) -> JvmtiStack {
        let heap = if depth > INLINE_DEPTH { vec![MaybeUninit::uninit(); depth] } else { Vec::new() };
        JvmtiStack { inline: [MaybeUninit::uninit(); INLINE_DEPTH], heap, depth }
    }

    /// The current thread's top `depth` frames below the `skip` topmost; `None` when JVMTI cannot take them
    /// (a thread still starting, say).
    fn take(&mut self, ctx: &Context, skip: usize) -> Option<&[sys::jvmtiFrameInfo]> {
        if self.depth == 0 {
            // No frames asked for: skip GetStackTrace's fixed cost.
            return Some(&[]);
        }
        let buf = if self.depth <= INLINE_DEPTH { &mut self.inline[..self.depth] } else { &mut self.heap[..] };
        ctx.jvmti.stack_trace_into(std::ptr::null_mut(), skip as i32, buf).ok()
    }
}

/// Who asks for a site: the agent's context, the site table, and the allocating thread with its JNI
/// environment.
#[derive(Clone, Copy)]
pub struct SiteQuery<'a> {
    pub ctx: &'a Context,
    pub sites: &'a SiteTable,
    pub jni: Jni,
    pub thread: sys::jthread,
    /// Frames on top that are not the allocation's: 1 for a bytecode probe's own frame.
    pub skip: usize,
}

/// The site of `class_serial` at the trace JVMTI took (HPROF's "no trace" serial if it took none).
fn intern_site(q: SiteQuery<'_>, class_serial: u32, taken: Option<&[sys::jvmtiFrameInfo]>) -> Option<u32> {
    let SiteQuery { ctx, sites, jni, thread, .. } = q;
    let trace_serial = match taken {
        None => serial_base::TRACE,
        Some(frames) => {
            let raw: Vec<RawFrame> = frames.iter().map(RawFrame::from_jvmti).collect();
            ctx.intern_stack(Some(jni), ctx.thread_serial(thread), &raw)
        }
    };
    sites.intern(SiteKey { class_serial, trace_serial })
}

fn new_walker(ctx: &Context, jni: Jni) -> Result<Walker, String> {
    let vm = VmStructs::get().ok_or("the JVM exports no structure tables")?;
    let thread = ctx.jvmti.current_thread().map_err(|e| format!("GetCurrentThread: {e}"))?;
    let class = jni.find_class(c"java/lang/Thread").map_err(|e| format!("java.lang.Thread: {e}"))?;
    let eetop = jni.field_id(class, c"eetop", c"J").map_err(|e| format!("Thread.eetop: {e}"))?;
    let java_thread = jni.long_field(thread, eetop) as usize;
    jni.delete_local_ref(class);
    jni.delete_local_ref(thread);
    Walker::new(vm, jni.raw() as *const _, java_thread)
}
