//! JVMTI extension events: events a JVM offers beyond the specification's table, found by their id
//! (HotSpot's `com.sun.hotspot.events.VirtualThreadMount`/`Unmount`, JDK 21+) and enabled by setting a
//! callback for each.

use crate::env::{Jvmti, jvmti_call};
use crate::error::Result;
use crate::sys;
use std::ffi::CStr;

/// The callback of an extension event whose parameters are the current thread's JNIEnv and a thread, as
/// HotSpot's VirtualThreadMount and VirtualThreadUnmount are (the JVM passes them after the jvmtiEnv).
pub type ThreadExtensionCallback = unsafe extern "C" fn(*mut sys::jvmtiEnv, *mut sys::JNIEnv, sys::jthread);

impl Jvmti {
    /// The index of the extension event named `id`, if this JVM offers it.
    pub fn extension_event_index(self, id: &str) -> Result<Option<i32>> {
        let mut count: sys::jint = 0;
        let mut infos: *mut sys::jvmtiExtensionEventInfo = std::ptr::null_mut();
        jvmti_call!(self, GetExtensionEvents, &mut count, &mut infos)?;
        let mut found = None;
        for i in 0..count.max(0) as usize {
            // SAFETY: JVMTI filled `count` entries; each entry's strings and parameter array are its own
            // allocations, read here and freed once below.
            unsafe {
                let info = &*infos.add(i);
                if !info.id.is_null() && CStr::from_ptr(info.id).to_bytes() == id.as_bytes() {
                    found = Some(info.extension_event_index);
                }
                for p in 0..info.param_count.max(0) as usize {
                    self.deallocate((*info.params.add(p)).name);
                }
                self.deallocate(info.params);
                self.deallocate(info.id);
                self.deallocate(info.short_description);
            }
        }
        // SAFETY: the array JVMTI allocated, no longer read.
        unsafe { self.deallocate(infos) };
        Ok(found)
    }

    /// Sets the callback of extension event `index` and enables the event VM-wide, or disables it with
    /// `None`. (HotSpot posts an extension event only when both its callback is set and its notification
    /// mode is on, as for the standard events.)
    pub fn set_extension_event_callback(self, index: i32, callback: Option<ThreadExtensionCallback>) -> Result<()> {
        // SAFETY: JVMTI declares extension callbacks variadic (`void (*)(jvmtiEnv*, ...)`) and calls them with
        // the event's parameters; on x86_64 and aarch64 Linux a variadic call passes pointer arguments exactly
        // as a call to a function declaring them does, so a function taking the event's parameters is called
        // correctly through the variadic type (HotSpot passes JNIEnv* and jthread for these events).
        let raw: sys::jvmtiExtensionEvent = callback.map(|f| unsafe {
            std::mem::transmute::<ThreadExtensionCallback, unsafe extern "C" fn(*mut sys::jvmtiEnv, ...)>(f)
        });
        let mode = if callback.is_some() { sys::JVMTI_ENABLE } else { sys::JVMTI_DISABLE };
        if callback.is_none() {
            jvmti_call!(self, SetEventNotificationMode, mode, index as sys::jvmtiEvent, std::ptr::null_mut())?;
        }
        jvmti_call!(self, SetExtensionEventCallback, index, raw)?;
        if callback.is_some() {
            jvmti_call!(self, SetEventNotificationMode, mode, index as sys::jvmtiEvent, std::ptr::null_mut())?;
        }
        Ok(())
    }
}
