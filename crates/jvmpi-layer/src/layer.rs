//! The layer's state: the JVM handles, which JVMPI events the agent enabled, and delivery to the agent's
//! `NotifyEvent`.

use crate::abi::{JVMPI_Event, JVMPI_MAX_EVENT_TYPE_VAL, JVMPI_REQUESTED_EVENT};
use jvmti::{Jvmti, Vm, sys};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

const EVENT_SLOTS: usize = JVMPI_MAX_EVENT_TYPE_VAL as usize + 1;

pub struct Layer {
    pub vm: Vm,
    pub jvmti: Jvmti,
    enabled: [AtomicBool; EVENT_SLOTS],
    /// DisableGC nesting depth (see `gc.rs` for why it blocks nothing).
    pub gc_disabled: AtomicI32,
    /// Set once JVM_SHUT_DOWN has been delivered: nothing is sent after it.
    pub shut_down: AtomicBool,
    /// Set at VMInit: JNI calls that need the live phase are safe.
    pub live: AtomicBool,
}

static LAYER: OnceLock<Layer> = OnceLock::new();

pub fn init(vm: Vm, jvmti: Jvmti) -> &'static Layer {
    LAYER.get_or_init(|| Layer {
        vm,
        jvmti,
        enabled: std::array::from_fn(|_| AtomicBool::new(false)),
        gc_disabled: AtomicI32::new(0),
        shut_down: AtomicBool::new(false),
        live: AtomicBool::new(false),
    })
}

pub fn layer() -> Option<&'static Layer> {
    LAYER.get()
}

impl Layer {
    pub fn is_enabled(&self, event_type: sys::jint) -> bool {
        usize::try_from(event_type).ok().and_then(|i| self.enabled.get(i)).is_some_and(|b| b.load(Ordering::Relaxed))
            && !self.shut_down.load(Ordering::Relaxed)
    }

    /// Sets the flag; true if it changed.
    pub fn set_enabled(&self, event_type: sys::jint, on: bool) -> bool {
        match usize::try_from(event_type).ok().and_then(|i| self.enabled.get(i)) {
            Some(flag) => flag.swap(on, Ordering::Relaxed) != on,
            None => false,
        }
    }

    /// The current thread's JNI environment, if it is attached.
    pub fn current_jni(&self) -> Option<jvmti::Jni> {
        let mut env: *mut std::ffi::c_void = std::ptr::null_mut();
        let rc = crate::invocation::original_get_env(self.vm.raw(), &mut env, sys::JNI_VERSION_1_8 as sys::jint);
        // SAFETY: GetEnv returned this thread's live JNIEnv.
        (rc == sys::JNI_OK as sys::jint && !env.is_null()).then(|| unsafe { jvmti::Jni::from_raw(env.cast()) })
    }
}

/// Sends `event` to the agent's NotifyEvent, with the requested bit when asked for.
pub fn deliver(event: &mut JVMPI_Event, requested: bool) {
    if requested {
        event.event_type |= JVMPI_REQUESTED_EVENT;
    }
    if let Some(notify) = crate::interface::notify_event() {
        // SAFETY: the agent installed this function to receive events; the event and the data it points to
        // live until it returns, as the specification promises.
        unsafe { notify(event) };
    }
}
