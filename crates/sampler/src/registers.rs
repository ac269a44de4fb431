//! The interrupted thread's program counter, stack pointer and frame pointer, read from the signal's
//! ucontext. Async-signal-safe: plain loads from the context the kernel saved on the thread's stack.

use std::ffi::c_void;

/// Registers of the interrupted code at the moment of a tick.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Registers {
    pub pc: usize,
    pub sp: usize,
    pub fp: usize,
}

impl Registers {
    /// Reads them from a signal handler's third argument (all zero for a null context).
    ///
    /// # Safety
    /// `ucontext` must be null or the `ucontext_t` the kernel passed to a SA_SIGINFO handler.
    pub unsafe fn from_ucontext(ucontext: *const c_void) -> Registers {
        if ucontext.is_null() {
            return Registers::default();
        }
        // SAFETY: the caller guarantees a kernel-made ucontext_t, which lives for the handler's duration.
        let uc = unsafe { &*(ucontext as *const libc::ucontext_t) };
        Self::read(uc)
    }

    #[cfg(target_arch = "x86_64")]
    fn read(uc: &libc::ucontext_t) -> Registers {
        let g = &uc.uc_mcontext.gregs;
        Registers {
            pc: g[libc::REG_RIP as usize] as usize,
            sp: g[libc::REG_RSP as usize] as usize,
            fp: g[libc::REG_RBP as usize] as usize,
        }
    }

    #[cfg(target_arch = "aarch64")]
    fn read(uc: &libc::ucontext_t) -> Registers {
        let m = &uc.uc_mcontext;
        Registers { pc: m.pc as usize, sp: m.sp as usize, fp: m.regs[29] as usize }
    }

    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    fn read(_: &libc::ucontext_t) -> Registers {
        Registers::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_context_reads_as_zero() {
        // SAFETY: null is allowed.
        assert_eq!(unsafe { Registers::from_ucontext(std::ptr::null()) }, Registers::default());
    }

    /// A real signal on this thread: the handler's pc, sp and fp point into this process (sp near a local).
    #[test]
    fn signal_context_has_this_threads_stack_pointer() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static SP: AtomicUsize = AtomicUsize::new(0);
        static PC: AtomicUsize = AtomicUsize::new(0);
        extern "C" fn on_signal(_: libc::c_int, _: *mut libc::siginfo_t, uc: *mut c_void) {
            // SAFETY: the kernel's ucontext for this SA_SIGINFO handler.
            let r = unsafe { Registers::from_ucontext(uc) };
            SP.store(r.sp, Ordering::Relaxed);
            PC.store(r.pc, Ordering::Relaxed);
        }
        let local = 0u64;
        // SAFETY: a zeroed sigaction with a valid SA_SIGINFO handler; SIGUSR2 is raised on this thread only
        // and the previous action is restored.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(libc::SIGUSR2, &action, &mut old);
            libc::pthread_kill(libc::pthread_self(), libc::SIGUSR2);
            libc::sigaction(libc::SIGUSR2, &old, std::ptr::null_mut());
        }
        let here = &local as *const u64 as usize;
        let sp = SP.load(Ordering::Relaxed);
        assert!(sp != 0 && sp.abs_diff(here) < 1 << 20, "sp {sp:#x} far from a local at {here:#x}");
        assert_ne!(PC.load(Ordering::Relaxed), 0);
    }
}
