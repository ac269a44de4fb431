//! A JVMTI environment without a JVM, for unit tests: a function table whose few filled slots record
//! what they were asked (event modes, capabilities) and answer from a configurable potential set.

use crate::capabilities::{CapabilityFlag, no_capabilities};
use crate::env::Jvmti;
use crate::events::Event;
use jvmti_sys as sys;
use std::sync::Mutex;

/// The environment: `table` must stay first, as a `jvmtiEnv*` points at the table pointer.
#[repr(C)]
pub struct FakeEnv {
    table: *const sys::jvmtiInterface_1_,
    potential: sys::jvmtiCapabilities,
    /// (event, enabled, for one thread) for every SetEventNotificationMode, in order.
    pub modes: Mutex<Vec<(Event, bool, bool)>>,
    pub added: Mutex<sys::jvmtiCapabilities>,
}

impl FakeEnv {
    /// An environment that can offer `potential`; leaked, as a `Jvmti` is `'static` in spirit.
    pub fn new(potential: &[CapabilityFlag]) -> &'static FakeEnv {
        // SAFETY: the table is nullable function pointers and raw pointers; zero means "absent".
        let mut table: sys::jvmtiInterface_1_ = unsafe { std::mem::zeroed() };
        // SAFETY: SetEventNotificationMode is declared variadic (a trailing `...` for extension events);
        // callers here pass exactly the four named arguments, which the System V and AAPCS64 conventions
        // place in the same registers for a variadic and a fixed-argument callee.
        table.SetEventNotificationMode = Some(unsafe {
            std::mem::transmute::<
                unsafe extern "C" fn(
                    *mut sys::jvmtiEnv,
                    sys::jvmtiEventMode,
                    sys::jvmtiEvent,
                    sys::jthread,
                ) -> sys::jvmtiError,
                unsafe extern "C" fn(
                    *mut sys::jvmtiEnv,
                    sys::jvmtiEventMode,
                    sys::jvmtiEvent,
                    sys::jthread,
                    ...
                ) -> sys::jvmtiError,
            >(set_event_notification_mode)
        });
        table.GetPotentialCapabilities = Some(get_potential_capabilities);
        table.AddCapabilities = Some(add_capabilities);
        table.SetEventCallbacks = Some(set_event_callbacks);
        let mut caps = no_capabilities();
        for flag in potential {
            flag.set(&mut caps);
        }
        Box::leak(Box::new(FakeEnv {
            table: Box::leak(Box::new(table)),
            potential: caps,
            modes: Mutex::new(Vec::new()),
            added: Mutex::new(no_capabilities()),
        }))
    }

    pub fn jvmti(&'static self) -> Jvmti {
        // SAFETY: `self` starts with the table pointer, which is what a jvmtiEnv* points at.
        unsafe { Jvmti::from_raw(self as *const FakeEnv as *mut sys::jvmtiEnv) }
    }

    /// Takes the recorded SetEventNotificationMode calls.
    pub fn take_modes(&self) -> Vec<(Event, bool, bool)> {
        std::mem::take(&mut *self.modes.lock().unwrap())
    }
}

fn fake(env: *mut sys::jvmtiEnv) -> &'static FakeEnv {
    // SAFETY: only FakeEnv::jvmti hands these environments out.
    unsafe { &*(env as *const FakeEnv) }
}

unsafe extern "C" fn set_event_notification_mode(
    env: *mut sys::jvmtiEnv,
    mode: sys::jvmtiEventMode,
    event: sys::jvmtiEvent,
    thread: sys::jthread,
) -> sys::jvmtiError {
    let Some(event) = Event::from_raw(event) else { return sys::JVMTI_ERROR_INVALID_EVENT_TYPE };
    fake(env).modes.lock().unwrap().push((event, mode == sys::JVMTI_ENABLE, !thread.is_null()));
    sys::JVMTI_ERROR_NONE
}

unsafe extern "C" fn get_potential_capabilities(
    env: *mut sys::jvmtiEnv,
    caps: *mut sys::jvmtiCapabilities,
) -> sys::jvmtiError {
    // SAFETY: the caller passes a writable capabilities struct.
    unsafe { *caps = fake(env).potential };
    sys::JVMTI_ERROR_NONE
}

unsafe extern "C" fn add_capabilities(env: *mut sys::jvmtiEnv, caps: *const sys::jvmtiCapabilities) -> sys::jvmtiError {
    // SAFETY: the caller passes a readable capabilities struct.
    let caps = unsafe { &*caps };
    let env = fake(env);
    if CapabilityFlag::ALL.iter().any(|c| c.is_set(caps) && !c.is_set(&env.potential)) {
        return sys::JVMTI_ERROR_NOT_AVAILABLE;
    }
    *env.added.lock().unwrap() = *caps;
    sys::JVMTI_ERROR_NONE
}

unsafe extern "C" fn set_event_callbacks(
    _env: *mut sys::jvmtiEnv,
    _callbacks: *const sys::jvmtiEventCallbacks,
    _size: sys::jint,
) -> sys::jvmtiError {
    sys::JVMTI_ERROR_NONE
}
