//! What the walker keeps per thread: where the thread's stack is (so that it reads nothing outside it),
//! and the code blobs its return addresses were last found in (a lookup in the code heap's segment map
//! touches several cache lines; a thread returns to the same few hundred addresses over and over).
//!
//! The caller keeps it with its own per-thread state (one thread-local access per walk instead of two). The
//! stack is found with `pthread_getattr_np`, so not in a signal handler: the walker runs in JVMTI callbacks.

/// Blobs remembered per thread (direct-mapped by return address).
const BLOB_SLOTS: usize = 256;

/// A return address and what the walker needs of the blob it lies in.
#[derive(Debug, Clone, Copy, Default)]
pub struct CachedBlob {
    /// 0: empty slot.
    pub pc: usize,
    pub blob: usize,
    pub frame_words: i32,
    /// The nmethod's compile id, or -1 for a stub.
    pub compile_id: i32,
    /// The blob's name pointer: with the compile id, tells that the blob is still the one remembered.
    pub name: usize,
}

pub struct WalkerThread {
    /// [low, high) of the thread's stack.
    pub stack: (usize, usize),
    /// The caller's epoch the blobs were remembered in: code can be freed and its memory reused only
    /// after a garbage collection (JDK 20+) or by JDK 17's sweeper, whose reuse the checks on a hit catch.
    epoch: u64,
    blobs: Box<[CachedBlob; BLOB_SLOTS]>,
}

impl WalkerThread {
    /// The current thread's state; `None` if the C library cannot tell where its stack is.
    pub fn for_current_thread() -> Option<WalkerThread> {
        // SAFETY: stack_bounds only asks pthread about the current thread.
        let stack = unsafe { stack_bounds() }?;
        Some(WalkerThread { stack, epoch: 0, blobs: Box::new([CachedBlob::default(); BLOB_SLOTS]) })
    }

    /// Forgets the blobs remembered in another epoch.
    pub(crate) fn enter_epoch(&mut self, epoch: u64) {
        if self.epoch != epoch {
            self.epoch = epoch;
            self.blobs.fill(CachedBlob::default());
        }
    }

    /// The slot for `pc`.
    pub(crate) fn blob_slot(&mut self, pc: usize) -> &mut CachedBlob {
        &mut self.blobs[(pc ^ (pc >> 8)) % BLOB_SLOTS]
    }
}

unsafe fn stack_bounds() -> Option<(usize, usize)> {
    // SAFETY: a C struct of integers and nullable pointers, for which all-zero bytes are a valid value.
    let mut attr: libc::pthread_attr_t = unsafe { std::mem::zeroed() };
    // SAFETY: pthread calls on the current thread with an attribute object initialised by pthread_getattr_np.
    if unsafe { libc::pthread_getattr_np(libc::pthread_self(), &mut attr) } != 0 {
        return None;
    }
    let mut base: *mut libc::c_void = std::ptr::null_mut();
    let mut size: libc::size_t = 0;
    // SAFETY: pthread calls on the current thread with an attribute object initialised by pthread_getattr_np.
    let got = unsafe { libc::pthread_attr_getstack(&attr, &mut base, &mut size) };
    // SAFETY: pthread calls on the current thread with an attribute object initialised by pthread_getattr_np.
    unsafe { libc::pthread_attr_destroy(&mut attr) };
    (got == 0 && !base.is_null()).then(|| (base as usize, base as usize + size))
}

#[cfg(test)]
mod tests {
    use super::WalkerThread;

    #[test]
    fn a_local_lies_inside_the_stack() {
        let local = 7u64;
        let at = &local as *const u64 as usize;
        let (low, high) = WalkerThread::for_current_thread().expect("bounds").stack;
        assert!(low < at && at < high, "{low:#x} < {at:#x} < {high:#x}");
    }

    #[test]
    fn a_new_epoch_forgets_blobs() {
        let mut t = WalkerThread::for_current_thread().unwrap();
        t.enter_epoch(1);
        t.blob_slot(0x1234).pc = 0x1234;
        t.enter_epoch(1);
        assert_eq!(t.blob_slot(0x1234).pc, 0x1234);
        t.enter_epoch(2);
        assert_eq!(t.blob_slot(0x1234).pc, 0);
    }
}
