//! `--max-memory SIZE`: the heap this process may allocate, counted by a thin wrapper around the system
//! allocator. Past the limit, hprof stops at once with an error naming the option and exit status 1 (an
//! allocation failure would otherwise abort without a word). The memory-mapped file is not counted: its
//! pages belong to the page cache and are dropped under pressure.
//!
//! Large blocks (the graph's per-object arrays) are also marked for transparent huge pages: where the
//! system leaves them to `madvise` (Debian's default), a 120 MB array otherwise costs 30,000 page faults
//! to fill, about a fifth of `hprof dominators`' CPU time.

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

/// Blocks of 128 KiB and more get mappings of their own, returned to the system when freed. (glibc's
/// default raises that threshold to the largest block freed so far: the graph's per-chunk buffers, a few
/// hundred kilobytes each, would then stay in its arenas after use, 100–200 MB on a 1 GB dump.)
pub fn give_back_at_once() {
    // SAFETY: mallopt only changes the C allocator's tuning; called once, before any thread exists.
    unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10) };
}

/// Blocks this large are mmapped by the system allocator on their own: huge pages fit them.
const HUGE_FROM: usize = 4 << 20;

/// Asks for huge pages over the 2 MiB-aligned inside of a block just allocated (before it is touched).
fn advise_huge(p: *mut u8, size: usize) {
    const HUGE: usize = 2 << 20;
    if p.is_null() || size < HUGE_FROM {
        return;
    }
    let start = (p as usize).next_multiple_of(HUGE);
    let end = (p as usize + size) / HUGE * HUGE;
    if end > start {
        // SAFETY: the range lies inside the block the allocator just gave us; the advice changes how its
        // pages are backed, never their contents. A failure (no THP support) leaves them as they were.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

// SAFETY: every call is passed on to the system allocator unchanged; only a counter is kept beside it.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        reserve(layout.size());
        // SAFETY: the caller's contract, passed on.
        let p = unsafe { System.alloc(layout) };
        advise_huge(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        reserve(layout.size());
        // SAFETY: as above.
        let p = unsafe { System.alloc_zeroed(layout) };
        advise_huge(p, layout.size());
        p
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
        } else {
            advise_huge(p, new_size);
        }
        p
    }
}
