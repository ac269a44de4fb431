//! `--max-memory SIZE`: the heap this process may allocate, counted by a thin wrapper around the system
//! allocator. Past the limit, hprof stops at once with an error naming the option and exit status 1 (an
//! allocation failure would otherwise abort without a word). The memory-mapped file is not counted: its
//! pages belong to the page cache and are dropped under pressure.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::OnceLock;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;

pub struct Capped;

static USED: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);
/// The message, made when the limit is set: the allocator must not allocate to report.
static MESSAGE: OnceLock<String> = OnceLock::new();

/// Caps the heap at `bytes` from now on.
pub fn set(bytes: u64, as_given: &str) {
    let _ = MESSAGE.set(format!(
        "hprof: error: stopped: this needs more than --max-memory {as_given} ({bytes} bytes) of memory; \
         allow more with --max-memory SIZE\n"
    ));
    LIMIT.store(usize::try_from(bytes).unwrap_or(usize::MAX), Relaxed);
}

fn reserve(n: usize) {
    let before = USED.fetch_add(n, Relaxed);
    if before.saturating_add(n) > LIMIT.load(Relaxed) {
        exceeded();
    }
}

fn exceeded() -> ! {
    let msg = MESSAGE.get().map_or("hprof: error: --max-memory exceeded\n", |m| m.as_str());
    // SAFETY: write(2) and _exit(2) on our own stderr; nothing here allocates or takes a lock.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::_exit(1)
    }
}

// SAFETY: every call is passed on to the system allocator unchanged; only a counter is kept beside it.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        reserve(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        reserve(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) };
        USED.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            reserve(new_size - layout.size());
        }
        // SAFETY: as above.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            // The old block stays: undo the growth counted.
            if new_size > layout.size() {
                USED.fetch_sub(new_size - layout.size(), Relaxed);
            }
        } else if new_size < layout.size() {
            USED.fetch_sub(layout.size() - new_size, Relaxed);
        }
        p
    }
}
