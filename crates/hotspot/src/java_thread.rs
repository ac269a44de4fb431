//! Another thread's kernel thread id from its `JavaThread`, for a CPU clock aimed at it.
//!
//! An agent loaded at startup learns it on the thread itself, in its ThreadStart event. An agent that
//! attaches later finds threads already running, which will run no event of ours on themselves: it reads
//! `java.lang.Thread.eetop` (the `JavaThread*`) and follows `Thread::_osthread` to `OSThread::_thread_id`.
//! The thread may end meanwhile and its JavaThread be freed, so the two reads go through
//! [`peek`], which reports a bad address instead of faulting, and the caller checks afterwards
//! that `eetop` still holds the same JavaThread (HotSpot clears it before freeing one).

use crate::VmStructs;
use crate::heap::peek;

/// The kernel thread id of the thread whose `JavaThread` is at `java_thread`; `None` if the structure
/// tables do not describe the fields or the memory cannot be read.
pub fn os_thread_id(vm: &VmStructs, java_thread: usize) -> Option<i32> {
    if java_thread == 0 {
        return None;
    }
    let osthread_at = vm.offset("Thread", "_osthread").or_else(|_| vm.offset("JavaThread", "_osthread")).ok()?;
    let thread_id_at = vm.offset("OSThread", "_thread_id").ok()?;
    let osthread: u64 = peek(java_thread.checked_add(osthread_at)? as u64)?;
    if osthread == 0 {
        return None;
    }
    let tid: i32 = peek(osthread.checked_add(thread_id_at as u64)?)?;
    (tid > 0).then_some(tid)
}
