//! The layer's state: the JVM handles, which JVMPI events the agent enabled, and delivery to the agent's
//! `NotifyEvent`.

use crate::abi::{JVMPI_Event, JVMPI_Interface, JVMPI_MAX_EVENT_TYPE_VAL, JVMPI_REQUESTED_EVENT};
use jvmti::{Jvmti, Vm, sys};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};

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
    /// The `JVMPI_Interface` handed to the agent (registered by `interface` at start), whose `NotifyEvent` the
    /// agent fills in; held here so that delivery does not reach up into the module of the agent's functions.
    interface: AtomicPtr<JVMPI_Interface>,
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
        interface: AtomicPtr::new(std::ptr::null_mut()),
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

    /// Where `deliver` finds the agent's `NotifyEvent`: the interface table, which lives for the process.
    pub fn register_interface(&self, interface: *mut JVMPI_Interface) {
        self.interface.store(interface, Ordering::Release);
    }

    /// The agent's event handler, once it has set one.
    fn notify_event(&self) -> Option<crate::abi::NotifyEventFn> {
        let p = self.interface.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` is the static interface table; a volatile read of a field the agent may have written from
        // another thread during JVM_OnLoad.
        unsafe { std::ptr::addr_of!((*p).NotifyEvent).read_volatile() }
    }

    /// The current thread's JNI environment, if it is attached.
    pub fn current_jni(&self) -> Option<jvmti::Jni> {
        let mut env: *mut std::ffi::c_void = std::ptr::null_mut();
        let rc = crate::jvm_get_env::original_get_env(self.vm.raw(), &mut env, sys::JNI_VERSION_1_8 as sys::jint);
        // SAFETY: GetEnv returned this thread's live JNIEnv.
        (rc == sys::JNI_OK as sys::jint && !env.is_null()).then(|| unsafe { jvmti::Jni::from_raw(env.cast()) })
    }
}

/// Sends `event` to the agent's NotifyEvent, with the requested bit when asked for.
pub fn deliver(event: &mut JVMPI_Event, requested: bool) {
    if requested {
        event.event_type |= JVMPI_REQUESTED_EVENT;
    }
    if let Some(notify) = layer().and_then(Layer::notify_event) {
        // SAFETY: the agent installed this function to receive events; the event and the data it points to
        // live until it returns, as the specification promises.
        unsafe { notify(event) };
    }
}
