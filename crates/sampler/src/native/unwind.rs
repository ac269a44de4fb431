//! The published native unwinder and the walk the signal handler makes with it.
//!
//! The unwinder (framehop's, with its module list) is rebuilt off the signal path and published through one
//! atomic pointer; a handler counts itself in `readers` before loading it, and the one who replaces it frees
//! the old one only once no handler is inside (else it keeps it: a few kilobytes per `dlopen`, never a
//! freed unwinder under a handler). framehop's rule cache wants exclusive use, so the handler takes one of a
//! pool with a compare-and-swap and, should all be busy, skips the native frames of that one sample.

use super::modules::{LoadedObject, loaded_objects, loader_generation};
use super::stack::{StackBounds, read_word};
use crate::registers::Registers;
use framehop::{
    CacheNative, ExplicitModuleSectionInfo, Module, MustNotAllocateDuringUnwind, UnwindRegsNative, Unwinder,
    UnwinderNative,
};
use std::cell::UnsafeCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Native frames kept per sample.
pub const MAX_NATIVE_FRAMES: usize = 128;
/// Kernel frames kept per sample.
pub const MAX_KERNEL_FRAMES: usize = 64;
/// Rule caches: handlers unwinding at once (one per CPU at most, plus a margin for nested signals).
const CACHES: usize = 64;

type NativeUnwinderImpl = UnwinderNative<Vec<u8>, MustNotAllocateDuringUnwind>;
type Cache = CacheNative<MustNotAllocateDuringUnwind>;

struct CacheSlot {
    busy: AtomicBool,
    cache: UnsafeCell<Cache>,
}

/// Where Java code lies: the addresses of HotSpot's `CodeCache::_low_bound` and `_high_bound`, read at each
/// sample (the code cache is reserved once, after the agent is loaded). Zero: not known, the native walk
/// then stops at the first frame outside every loaded object.
#[derive(Default)]
pub struct JavaCode {
    low_at: AtomicUsize,
    high_at: AtomicUsize,
}

impl JavaCode {
    /// `low_at`/`high_at`: addresses of two pointer-sized statics that live as long as the process.
    pub fn set(&self, low_at: usize, high_at: usize) {
        self.low_at.store(low_at, Ordering::Release);
        self.high_at.store(high_at, Ordering::Release);
    }

    fn contains(&self, pc: u64) -> bool {
        let (low_at, high_at) = (self.low_at.load(Ordering::Acquire), self.high_at.load(Ordering::Acquire));
        if low_at == 0 || high_at == 0 {
            return false;
        }
        // SAFETY: `set` was given the addresses of two statics of libjvm, which is never unloaded.
        let (low, high) = unsafe {
            (std::ptr::read_volatile(low_at as *const usize), std::ptr::read_volatile(high_at as *const usize))
        };
        low != 0 && (low as u64) <= pc && pc < high as u64
    }
}

/// A loaded object as symbolization needs it.
#[derive(Debug, Clone)]
pub struct ObjectInfo {
    pub path: String,
    pub base: u64,
    pub range: std::ops::Range<u64>,
}

pub struct NativeUnwinder {
    current: AtomicPtr<NativeUnwinderImpl>,
    readers: AtomicUsize,
    caches: Box<[CacheSlot]>,
    /// The loader's counters at the last refresh, and the objects then.
    state: Mutex<((u64, u64), Vec<ObjectInfo>)>,
    pub java_code: JavaCode,
    /// Where HotSpot's call stub returns to (native code calling Java), for the frames between Java frames.
    pub call_stub: CallStub,
    /// Samples whose native frames were skipped because every cache was busy.
    pub busy_skips: AtomicUsize,
}

// SAFETY: the caches are handed out exclusively by their `busy` flags; the published unwinder is only read.
unsafe impl Sync for NativeUnwinder {}
// SAFETY: as for Sync.
unsafe impl Send for NativeUnwinder {}

impl NativeUnwinder {
    /// Allocates the caches and reads the loaded objects. Not in a signal handler.
    pub fn new() -> NativeUnwinder {
        let caches =
            (0..CACHES).map(|_| CacheSlot { busy: AtomicBool::new(false), cache: UnsafeCell::new(Cache::new_in()) });
        let me = NativeUnwinder {
            current: AtomicPtr::new(std::ptr::null_mut()),
            readers: AtomicUsize::new(0),
            caches: caches.collect(),
            state: Mutex::new(((u64::MAX, u64::MAX), Vec::new())),
            java_code: JavaCode::default(),
            call_stub: CallStub::default(),
            busy_skips: AtomicUsize::new(0),
        };
        me.refresh();
        me
    }

    /// Reads the loaded objects again if the loader's counters moved since the last time (a `dlopen` or
    /// `dlclose`), and publishes an unwinder for them. Cheap when nothing moved. Not in a signal handler.
    /// Returns whether the list was read again.
    pub fn refresh(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let generation = loader_generation();
        if generation == state.0 {
            return false;
        }
        let objects = loaded_objects();
        let mut unwinder = NativeUnwinderImpl::new();
        for object in &objects {
            unwinder.add_module(module_of(object));
        }
        state.0 = generation;
        state.1 = objects.into_iter().map(|o| ObjectInfo { path: o.path, base: o.base, range: o.range }).collect();
        let old = self.current.swap(Box::into_raw(Box::new(unwinder)), Ordering::SeqCst);
        if !old.is_null() {
            self.retire(old);
        }
        true
    }

    /// Frees a replaced unwinder once no handler is inside one; keeps it if that moment does not come soon.
    fn retire(&self, old: *mut NativeUnwinderImpl) {
        let deadline = Instant::now() + Duration::from_millis(100);
        while Instant::now() < deadline {
            if self.readers.load(Ordering::SeqCst) == 0 {
                // SAFETY: `old` came from Box::into_raw, was swapped out of `current` (no new handler can load
                // it) and no handler that loaded it before is still inside (readers was zero after the swap).
                drop(unsafe { Box::from_raw(old) });
                return;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// The loaded objects as of the last refresh.
    pub fn objects(&self) -> Vec<ObjectInfo> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1.clone()
    }

    /// Whether `pc` is Java code (interpreter, stub or compiled method).
    pub fn is_java_code(&self, pc: u64) -> bool {
        self.java_code.contains(pc)
    }

    /// Unwinds the interrupted native frames into `out` (the interrupted pc first, then return addresses),
    /// stopping at the first Java code, at the end of the stack, or when a frame cannot be read. Returns how
    /// many were written. Async-signal-safe: atomics, plain reads of the unwind tables and of the thread's
    /// stack (bounded, see `stack`), no allocation, no lock.
    pub fn unwind(&self, registers: Registers, bounds: StackBounds, out: &mut [u64]) -> usize {
        if registers.pc == 0 || out.is_empty() || self.is_java_code(registers.pc as u64) {
            return 0;
        }
        self.with_unwinder(0, |unwinder, cache| {
            self.walk_to_java(unwinder, cache, bounds, (registers.pc, registers.sp, registers.fp), out).0
        })
    }

    /// The native frames between Java frames: where native code called Java (JNI `Call…Method`, reflection,
    /// the launcher), HotSpot's call stub sits between them, and the Java frames above it do not say how the
    /// native code below got there. Finds the call stub's frames by the return address it leaves on the
    /// stack (`StubRoutines::_call_stub_return_address`), scanning up from `sp`, and unwinds from each the
    /// native code that called it down to the Java frame that called that code (a native method's wrapper).
    /// Writes each such segment's frames (return addresses, innermost first) followed by [`SEGMENT_END`],
    /// innermost segment first, at most `segments` of them; a segment that never reaches Java code (the
    /// thread's own start) is left out. Only for threads whose stack bounds are known. Returns the words
    /// written. Async-signal-safe, as `unwind`.
    pub fn unwind_between(&self, sp: usize, bounds: StackBounds, segments: usize, out: &mut [u64]) -> usize {
        let Some(stub_return) = self.call_stub.return_address() else { return 0 };
        if segments == 0 || !bounds.known() || out.len() < 2 {
            return 0;
        }
        self.with_unwinder(0, |unwinder, cache| {
            let (mut n, mut found) = (0, 0);
            let end = bounds.high.min(sp.saturating_add(MAX_SCAN));
            let mut at = (sp + 7) & !7;
            while at + 8 <= end && found < segments && n + 2 <= out.len() {
                if read_word(bounds, at as u64) == Ok(stub_return)
                    && let Some(caller) = call_stub_caller(bounds, at)
                    && !self.is_java_code(caller.0 as u64)
                {
                    // The segment's last slot is kept for its end marker.
                    let room = out.len() - n - 1;
                    let (written, reached_java) =
                        self.walk_to_java(unwinder, cache, bounds, caller, &mut out[n..n + room]);
                    if reached_java && written > 0 {
                        n += written;
                        out[n] = SEGMENT_END;
                        n += 1;
                        found += 1;
                    }
                }
                at += 8;
            }
            n
        })
    }

    /// Runs `f` with the published unwinder and a rule cache of the pool (`fallback` when none is free or no
    /// unwinder is published).
    fn with_unwinder<T>(&self, fallback: T, f: impl FnOnce(&NativeUnwinderImpl, &mut Cache) -> T) -> T {
        let Some(slot) = self
            .caches
            .iter()
            .find(|c| c.busy.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok())
        else {
            self.busy_skips.fetch_add(1, Ordering::Relaxed);
            return fallback;
        };
        self.readers.fetch_add(1, Ordering::SeqCst);
        let unwinder = self.current.load(Ordering::SeqCst);
        // SAFETY: a published unwinder stays allocated while `readers` counts us (see `retire`); the cache is
        // ours alone while its `busy` flag is set.
        let result = match unsafe { unwinder.as_ref() } {
            // SAFETY: the cache is ours alone while its `busy` flag, set above, stays set.
            Some(unwinder) => f(unwinder, unsafe { &mut *slot.cache.get() }),
            None => fallback,
        };
        self.readers.fetch_sub(1, Ordering::SeqCst);
        slot.busy.store(false, Ordering::Release);
        result
    }

    /// Unwinds from (pc, sp, fp) into `out` until Java code; returns the frames written and whether the walk
    /// ended at Java code (rather than at the stack's end or an unreadable frame).
    fn walk_to_java(
        &self,
        unwinder: &NativeUnwinderImpl,
        cache: &mut Cache,
        bounds: StackBounds,
        (pc, sp, fp): (usize, usize, usize),
        out: &mut [u64],
    ) -> (usize, bool) {
        let mut read = |addr: u64| read_word(bounds, addr);
        let regs = UnwindRegsNative::new(pc as u64, sp as u64, fp as u64);
        let mut frames = unwinder.iter_frames(pc as u64, regs, cache, &mut read);
        let mut n = 0;
        while n < out.len() {
            let Ok(Some(frame)) = frames.next() else { return (n, false) };
            let pc = frame.address();
            if self.is_java_code(pc) {
                return (n, true);
            }
            out[n] = pc;
            n += 1;
        }
        (n, false)
    }
}

/// Bytes of stack scanned for call stubs above the interrupted frame.
const MAX_SCAN: usize = 256 * 1024;

/// Ends each segment of [`NativeUnwinder::unwind_between`]'s output (never a code address).
pub const SEGMENT_END: u64 = 0;

/// The registers of the native code that called HotSpot's call stub, from the slot `at` where the stub's
/// call into Java left its return address. Every Java frame HotSpot builds (interpreted or compiled, on x86_64
/// and aarch64) saves its caller's frame pointer just below its return address — HotSpot's own
/// `frame::sender` relies on it — so the word below is the call stub's frame pointer; the stub's frame
/// begins with the usual pair (saved frame pointer, return address into its caller, JavaCalls::call_helper).
fn call_stub_caller(bounds: StackBounds, at: usize) -> Option<(usize, usize, usize)> {
    let stub_fp = read_word(bounds, at as u64 - 8).ok()? as usize;
    if stub_fp <= at || !stub_fp.is_multiple_of(8) || stub_fp + 16 > bounds.high {
        return None;
    }
    let caller_fp = read_word(bounds, stub_fp as u64).ok()? as usize;
    let caller_pc = read_word(bounds, stub_fp as u64 + 8).ok()? as usize;
    (caller_pc != 0).then_some((caller_pc, stub_fp + 16, caller_fp))
}

/// Where HotSpot keeps the call stub's return address (`StubRoutines::_call_stub_return_address`, set once
/// the stubs are generated).
#[derive(Default)]
pub struct CallStub {
    return_at: AtomicUsize,
}

impl CallStub {
    /// `at`: the address of a pointer-sized static of libjvm.
    pub fn set(&self, at: usize) {
        self.return_at.store(at, Ordering::Release);
    }

    fn return_address(&self) -> Option<u64> {
        let at = self.return_at.load(Ordering::Acquire);
        if at == 0 {
            return None;
        }
        // SAFETY: `set` was given the address of a static of libjvm, which is never unloaded.
        let value = unsafe { std::ptr::read_volatile(at as *const usize) } as u64;
        (value != 0).then_some(value)
    }
}

impl Default for NativeUnwinder {
    fn default() -> Self {
        Self::new()
    }
}

fn module_of(object: &LoadedObject) -> Module<Vec<u8>> {
    let (eh_frame_hdr_svma, eh_frame_hdr) = object.eh_frame_hdr.clone().unzip();
    let (eh_frame_svma, eh_frame) = object.eh_frame.clone().unzip();
    let info = ExplicitModuleSectionInfo {
        base_svma: 0,
        eh_frame_hdr_svma,
        eh_frame_hdr,
        eh_frame_svma,
        eh_frame,
        ..Default::default()
    };
    Module::new(object.path.clone(), object.range.clone(), object.base, info)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::current_stack_bounds;

    #[inline(never)]
    fn unwind_here(unwinder: &NativeUnwinder, out: &mut [u64]) -> usize {
        let (pc, sp, fp): (usize, usize, usize);
        // SAFETY: reads the current instruction, stack and frame pointers into locals.
        unsafe {
            std::arch::asm!("lea {0}, [rip]", "mov {1}, rsp", "mov {2}, rbp", out(reg) pc, out(reg) sp, out(reg) fp);
        }
        std::hint::black_box(unwinder.unwind(Registers { pc, sp, fp }, current_stack_bounds(), out))
    }

    #[inline(never)]
    fn middle(unwinder: &NativeUnwinder, out: &mut [u64]) -> usize {
        std::hint::black_box(unwind_here(unwinder, out)) + std::hint::black_box(0)
    }

    /// A walk from here reaches this test's callers: each frame's return address lies in a function that
    /// called it, down through the test harness.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn unwinding_from_here_finds_the_callers() {
        let unwinder = NativeUnwinder::new();
        let mut out = [0u64; MAX_NATIVE_FRAMES];
        let n = middle(&unwinder, &mut out);
        assert!(n >= 4, "only {n} frames: {:x?}", &out[..n]);
        let middle_at = middle as *const () as u64;
        assert!(
            out[1..n].iter().any(|&ra| ra > middle_at && ra < middle_at + 256),
            "no return address into middle ({middle_at:#x}): {:x?}",
            &out[..n]
        );
        assert!(!unwinder.refresh(), "nothing was loaded meanwhile");
    }
}
