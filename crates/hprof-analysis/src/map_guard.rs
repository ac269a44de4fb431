//! A file that shrinks under our memory map (someone truncates the dump `hprof serve` is showing) makes a
//! read past its new end raise SIGBUS, which would kill the process. Copying multi-gigabyte dumps to
//! private memory is no answer, so the maps we read are registered here, and a SIGBUS handler that finds
//! the faulting address inside one of them maps anonymous zero pages over the rest of that map (with
//! MAP_FIXED: the file has no bytes there any more) and marks it shrunk. The read then goes on over zeros,
//! and the reader, which checks [`Guard::shrunk`] after each pass and before it shows results, reports
//! "FILE shrank from N to M bytes while being read" instead. A SIGBUS elsewhere goes to the handler that
//! was there before (Rust's own, or the default action).
//!
//! The handler is async-signal-safe: atomics and the mmap/sigaction system calls only; no lock, no
//! allocation. The table is a fixed array claimed with compare-and-swap.

use std::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Once, OnceLock};

/// Maps watched at once; a map beyond these is read unguarded (as every map was before).
const SLOTS: usize = 64;

struct Slot {
    start: AtomicUsize,
    /// 0: the slot is free (claimed by setting it first).
    len: AtomicUsize,
    shrunk: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const, reason = "only the array's initialiser")]
const FREE: Slot = Slot { start: AtomicUsize::new(0), len: AtomicUsize::new(0), shrunk: AtomicBool::new(false) };
static TABLE: [Slot; SLOTS] = [FREE; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);
static INSTALL: Once = Once::new();
/// What SIGBUS did before ours, for faults that are not in our maps.
static PREVIOUS: OnceLock<Previous> = OnceLock::new();

struct Previous(libc::sigaction);
// SAFETY: a plain C struct of a handler address, flags and a signal mask; it is written once before the
// handler is installed and only read afterwards.
unsafe impl Sync for Previous {}
// SAFETY: as above.
unsafe impl Send for Previous {}

/// A registered map; dropping it unregisters the map (drop it before unmapping).
pub struct Guard {
    slot: usize,
}

impl Guard {
    /// A read into this map faulted because the file is shorter than the map: its tail is zeros now.
    pub fn shrunk(&self) -> bool {
        TABLE[self.slot].shrunk.load(Acquire)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let s = &TABLE[self.slot];
        s.start.store(0, Release);
        s.shrunk.store(false, Relaxed);
        s.len.store(0, Release);
    }
}

/// Watches the map `[ptr, ptr + len)`; `None` when the table is full or the handler could not be installed.
pub fn watch(ptr: *const u8, len: usize) -> Option<Guard> {
    if len == 0 || !install() {
        return None;
    }
    for (i, s) in TABLE.iter().enumerate() {
        if s.len.compare_exchange(0, len, AcqRel, Acquire).is_ok() {
            s.shrunk.store(false, Relaxed);
            s.start.store(ptr as usize, Release);
            return Some(Guard { slot: i });
        }
    }
    None
}

fn install() -> bool {
    INSTALL.call_once(|| {
        // SAFETY: sysconf is called here, outside the handler, which only reads the stored value.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Relaxed);
        }
        // SAFETY: all-zero sigaction structs are valid (no handler, empty mask); sigaction only reads `new`
        // and writes `old`, both valid for the call.
        unsafe {
            let mut new: libc::sigaction = std::mem::zeroed();
            let mut old: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_sigbus as *const () as usize;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
            libc::sigemptyset(&mut new.sa_mask);
            // The previous action is stored before ours can run.
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) == 0 {
                let _ = PREVIOUS.set(Previous(old));
                libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut());
            }
        }
    });
    PREVIOUS.get().is_some()
}

/// The SIGBUS handler (async-signal-safe: atomics, mmap and sigaction only).
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for an SA_SIGINFO handler; si_addr is the faulting address.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Relaxed);
    for s in &TABLE {
        let start = s.start.load(Acquire);
        if start == 0 {
            continue;
        }
        let len = s.len.load(Acquire);
        if addr < start || addr >= start + len {
            continue;
        }
        // Everything from the faulting page to the map's end lies past the file's new end.
        let at = addr & !(page - 1);
        let end = (start + len).next_multiple_of(page);
        // SAFETY: [at, end) lies inside our own read-only map, registered and not yet unmapped (the
        // guard is dropped before the map); replacing its pages with anonymous zeros changes what our
        // own reads see, nothing else. mmap is async-signal-safe.
        let p = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                end - at,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            s.shrunk.store(true, Release);
            return;
        }
    }
    previous(sig, info, ctx);
}

/// Hands a SIGBUS that is not ours to the handler that was there before, or restores the default action
/// so that the faulting access, run again on return, ends the process as it always did.
fn previous(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let Some(Previous(old)) = PREVIOUS.get() else { return };
    let h = old.sa_sigaction;
    if h != libc::SIG_DFL && h != libc::SIG_IGN {
        if old.sa_flags & libc::SA_SIGINFO != 0 {
            // SAFETY: with SA_SIGINFO the previous handler has this signature; we pass on our arguments.
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { std::mem::transmute(h) };
            f(sig, info, ctx);
        } else {
            // SAFETY: without SA_SIGINFO the previous handler takes the signal number only.
            let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(h) };
            f(sig);
        }
        return;
    }
    // SAFETY: an all-zero sigaction with SIG_DFL (0) is the default action; sigaction is async-signal-safe.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    #[test]
    fn a_file_truncated_under_its_map_reads_as_zeros_and_is_flagged() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![7u8; 64 << 10]).unwrap();
        // SAFETY: a private temporary file; the test truncates it on purpose.
        let map = unsafe { memmap2::Mmap::map(&f) }.unwrap();
        let guard = super::watch(map.as_ptr(), map.len()).unwrap();
        assert_eq!(map[40_000], 7);
        f.set_len(4096).unwrap();
        let tail: u64 = map[8192..].iter().map(|&b| b as u64).sum();
        assert_eq!(tail, 0);
        assert!(guard.shrunk());
        assert_eq!(map[100], 7, "the bytes still in the file are read as they are");
        drop(guard);
        drop(map);
    }
}
