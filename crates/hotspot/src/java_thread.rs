//! Another thread's kernel thread id from its `JavaThread`, for a CPU clock aimed at it.
//!
//! An agent loaded at startup learns it on the thread itself, in its ThreadStart event. An agent that
//! attaches later finds threads already running, which will run no event of ours on themselves: it reads
//! `java.lang.Thread.eetop` (the `JavaThread*`) and follows `Thread::_osthread` to `OSThread::_thread_id`.
//! The thread may end meanwhile and its JavaThread be freed, so the two reads go through
//! `process_vm_readv`, which reports a bad address instead of faulting, and the caller checks afterwards
//! that `eetop` still holds the same JavaThread (HotSpot clears it before freeing one).

use crate::VmStructs;

/// The kernel thread id of the thread whose `JavaThread` is at `java_thread`; `None` if the structure
/// tables do not describe the fields or the memory cannot be read.
pub fn os_thread_id(vm: &VmStructs, java_thread: usize) -> Option<i32> {
    if java_thread == 0 {
        return None;
    }
    let osthread_at = vm.offset("Thread", "_osthread").or_else(|_| vm.offset("JavaThread", "_osthread")).ok()?;
    let thread_id_at = vm.offset("OSThread", "_thread_id").ok()?;
    let osthread: usize = read(java_thread.checked_add(osthread_at)?)?;
    if osthread == 0 {
        return None;
    }
    let tid: i32 = read(osthread.checked_add(thread_id_at)?)?;
    (tid > 0).then_some(tid)
}

/// Reads a `T` from this process's memory at `address`, or `None` where nothing readable is mapped.
fn read<T: Copy + Default>(address: usize) -> Option<T> {
    let mut value = T::default();
    let size = std::mem::size_of::<T>();
    let local = libc::iovec { iov_base: &mut value as *mut T as *mut libc::c_void, iov_len: size };
    let remote = libc::iovec { iov_base: address as *mut libc::c_void, iov_len: size };
    // SAFETY: the kernel writes at most `size` bytes into `value` and checks the remote range itself,
    // failing with EFAULT rather than faulting.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    (n == size as isize).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::read;

    #[test]
    fn reads_mapped_memory_and_refuses_the_rest() {
        let x: u64 = 0x1234_5678_9abc_def0;
        assert_eq!(read::<u64>(&x as *const u64 as usize), Some(x));
        assert_eq!(read::<u64>(8), None);
    }
}
