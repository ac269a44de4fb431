//! Where a thread's stack lies, so that the native unwinder reads nothing outside it. Known for threads
//! armed on themselves (`pthread_getattr_np`, not in a signal handler); for the others (the JVM's own
//! threads, threads found after an attach) reads go through `process_vm_readv`, which reports an unreadable
//! address instead of faulting.

/// [low, high) of a stack; (0, 0) when unknown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StackBounds {
    pub low: usize,
    pub high: usize,
}

impl StackBounds {
    pub fn known(&self) -> bool {
        self.high > self.low
    }
}

/// The calling thread's stack. Not async-signal-safe (the C library may read `/proc/self/maps`).
pub fn current_stack_bounds() -> StackBounds {
    // SAFETY: a C struct of integers and nullable pointers, for which all-zero bytes are a valid value.
    let mut attr: libc::pthread_attr_t = unsafe { std::mem::zeroed() };
    // SAFETY: pthread calls on the current thread with an attribute object initialised by pthread_getattr_np.
    if unsafe { libc::pthread_getattr_np(libc::pthread_self(), &mut attr) } != 0 {
        return StackBounds::default();
    }
    let mut base: *mut libc::c_void = std::ptr::null_mut();
    let mut size: libc::size_t = 0;
    // SAFETY: as above.
    let got = unsafe { libc::pthread_attr_getstack(&attr, &mut base, &mut size) };
    // SAFETY: as above.
    unsafe { libc::pthread_attr_destroy(&mut attr) };
    if got != 0 || base.is_null() {
        return StackBounds::default();
    }
    StackBounds { low: base as usize, high: base as usize + size }
}

/// The word at `addr` of the current thread's stack: read directly inside known bounds, through the kernel
/// otherwise. Async-signal-safe.
pub(crate) fn read_word(bounds: StackBounds, addr: u64) -> Result<u64, ()> {
    let addr = addr as usize;
    if !addr.is_multiple_of(8) {
        return Err(());
    }
    if bounds.known() {
        if addr < bounds.low || addr.checked_add(8).is_none_or(|end| end > bounds.high) {
            return Err(());
        }
        // SAFETY: an aligned word inside the thread's own stack mapping, which stays mapped while it runs.
        return Ok(unsafe { std::ptr::read_volatile(addr as *const u64) });
    }
    let mut value = 0u64;
    let local = libc::iovec { iov_base: &mut value as *mut u64 as *mut libc::c_void, iov_len: 8 };
    let remote = libc::iovec { iov_base: addr as *mut libc::c_void, iov_len: 8 };
    // SAFETY: a system call writing at most 8 bytes into `value`; an unreadable address is an error.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    if n == 8 { Ok(value) } else { Err(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_local_is_inside_and_readable_and_outside_is_refused() {
        let local = 0x5eed_u64;
        let at = &local as *const u64 as u64;
        let bounds = current_stack_bounds();
        assert!(bounds.known() && (bounds.low as u64) < at && at < bounds.high as u64);
        assert_eq!(read_word(bounds, at), Ok(0x5eed));
        assert_eq!(read_word(StackBounds::default(), at), Ok(0x5eed), "through the kernel");
        assert_eq!(read_word(bounds, bounds.high as u64), Err(()));
        assert_eq!(read_word(StackBounds::default(), 8), Err(()), "page zero");
    }
}
