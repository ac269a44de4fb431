//! Which thread an event is about, as a number: the Java thread id (`Thread.tid`), read from the thread
//! object the event names.
//!
//! A wait starts and ends with two events on the thread that waits, but not always on the same OS thread:
//! from JDK 24 a virtual thread blocked on a monitor, or waiting in Object.wait, unmounts and may come back
//! on another carrier. The Java thread id follows the thread, never the carrier, and is never reused.

use jvmti::{Jni, sys};
use std::sync::OnceLock;

#[derive(Default)]
pub struct ThreadKeys {
    /// `java.lang.Thread.tid`, looked up once at VMInit (as an address: a field ID is a plain pointer).
    tid_field: OnceLock<Option<usize>>,
}

/// Marks a key made from an OS thread id, if the Java id cannot be read.
const OS_TID_KEY: u64 = 1 << 63;

impl ThreadKeys {
    /// Finds the field, on a thread with no exception pending (VMInit).
    pub fn init(&self, jni: Jni) {
        self.tid_field.get_or_init(|| {
            let class = jni.find_class(c"java/lang/Thread").ok()?;
            let field = jni.field_id(class, c"tid", c"J").ok();
            jni.delete_local_ref(class);
            field.map(|f| f as usize)
        });
    }

    /// The key of `thread`, the thread an event arrived for (and on).
    pub fn of(&self, jni: Jni, thread: sys::jthread) -> u64 {
        match self.tid_field.get().copied().flatten() {
            Some(field) if !thread.is_null() => jni.long_field(thread, field as sys::jfieldID) as u64,
            _ => OS_TID_KEY | crate::threads::current_os_tid() as u32 as u64,
        }
    }
}
