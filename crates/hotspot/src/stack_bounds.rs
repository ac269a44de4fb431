//! The current thread's stack, so that the walker reads nothing outside it. Found once per thread with
//! `pthread_getattr_np` (not async-signal-safe, hence not for signal handlers: the walker runs in JVMTI
//! callbacks).

use std::cell::Cell;

thread_local! {
    /// [low, high) of this thread's stack; (0, 0) until looked up.
    static BOUNDS: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// [low, high) of the current thread's stack, or `None` if the C library cannot tell.
pub fn current() -> Option<(usize, usize)> {
    let cached = BOUNDS.try_with(|b| b.get()).ok()?;
    if cached.1 != 0 {
        return Some(cached);
    }
    let found = unsafe { look_up() }?;
    let _ = BOUNDS.try_with(|b| b.set(found));
    Some(found)
}

unsafe fn look_up() -> Option<(usize, usize)> {
    let mut attr: libc::pthread_attr_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::pthread_getattr_np(libc::pthread_self(), &mut attr) } != 0 {
        return None;
    }
    let mut base: *mut libc::c_void = std::ptr::null_mut();
    let mut size: libc::size_t = 0;
    let got = unsafe { libc::pthread_attr_getstack(&attr, &mut base, &mut size) };
    unsafe { libc::pthread_attr_destroy(&mut attr) };
    (got == 0 && !base.is_null()).then(|| (base as usize, base as usize + size))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_local_lies_inside() {
        let local = 7u64;
        let (low, high) = super::current().expect("bounds");
        let at = &local as *const u64 as usize;
        assert!(low < at && at < high, "{low:#x} < {at:#x} < {high:#x}");
    }
}
