//! Which thread an event is about, as a number: the Java thread id (`Thread.tid`), read from the thread
//! object the event names.
//!
//! A wait starts and ends with two events on the thread that waits, but not always on the same OS thread:
//! from JDK 24 a virtual thread blocked on a monitor, or waiting in Object.wait, unmounts and may come back
//! on another carrier. The Java thread id follows the thread, never the carrier, and is never reused.

use jvmti::{Jni, sys};

/// Marks a key made from an OS thread id, if the Java id cannot be read.
const OS_TID_KEY: u64 = 1 << 63;

/// Finds the id field, on a thread with no exception pending (VMInit).
pub fn init(jni: Jni) {
    crate::threads::java_thread_id_field(jni);
}

/// The key of `thread`, the thread an event arrived for (and on).
pub fn of(jni: Jni, thread: sys::jthread) -> u64 {
    match crate::threads::java_thread_id(jni, thread) {
        Some(tid) => tid as u64,
        None => OS_TID_KEY | crate::threads::current_os_tid() as u32 as u64,
    }
}
