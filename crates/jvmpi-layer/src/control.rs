//! EnableEvent, DisableEvent and RequestEvent: which JVMTI events each JVMPI event needs, switched on and
//! off at run time with a count per JVMTI event (METHOD_ENTRY and METHOD_ENTRY2 share MethodEntry, for one).

use crate::abi::*;
use crate::layer::{Layer, layer};
use jvmti::sys;
use std::sync::atomic::{AtomicU32, Ordering};

/// Where each JVMPI event comes from. `None`: JVMTI cannot provide it (JVMPI_NOT_AVAILABLE).
/// Events the layer always listens to (VMInit, VMDeath, ThreadStart, ThreadEnd) need nothing more.
fn sources(event_type: sys::jint) -> Option<&'static [sys::jvmtiEvent]> {
    Some(match event_type {
        JVMPI_EVENT_METHOD_ENTRY | JVMPI_EVENT_METHOD_ENTRY2 => &[sys::JVMTI_EVENT_METHOD_ENTRY],
        JVMPI_EVENT_METHOD_EXIT => &[sys::JVMTI_EVENT_METHOD_EXIT],
        JVMPI_EVENT_OBJECT_ALLOC => &[sys::JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, sys::JVMTI_EVENT_VM_OBJECT_ALLOC],
        JVMPI_EVENT_OBJECT_FREE | JVMPI_EVENT_CLASS_UNLOAD => &[sys::JVMTI_EVENT_OBJECT_FREE],
        // IDs are tags and never move: enabling succeeds and no event is ever due.
        JVMPI_EVENT_OBJECT_MOVE => &[],
        JVMPI_EVENT_COMPILED_METHOD_LOAD => &[sys::JVMTI_EVENT_COMPILED_METHOD_LOAD],
        JVMPI_EVENT_COMPILED_METHOD_UNLOAD => &[sys::JVMTI_EVENT_COMPILED_METHOD_UNLOAD],
        JVMPI_EVENT_THREAD_START | JVMPI_EVENT_THREAD_END => &[],
        JVMPI_EVENT_CLASS_LOAD_HOOK => &[sys::JVMTI_EVENT_CLASS_FILE_LOAD_HOOK],
        JVMPI_EVENT_CLASS_LOAD => &[sys::JVMTI_EVENT_CLASS_PREPARE],
        JVMPI_EVENT_DATA_DUMP_REQUEST => &[sys::JVMTI_EVENT_DATA_DUMP_REQUEST],
        JVMPI_EVENT_JVM_INIT_DONE | JVMPI_EVENT_JVM_SHUT_DOWN => &[],
        JVMPI_EVENT_MONITOR_CONTENDED_ENTER => &[sys::JVMTI_EVENT_MONITOR_CONTENDED_ENTER],
        JVMPI_EVENT_MONITOR_CONTENDED_ENTERED => &[sys::JVMTI_EVENT_MONITOR_CONTENDED_ENTERED],
        JVMPI_EVENT_MONITOR_WAIT => &[sys::JVMTI_EVENT_MONITOR_WAIT],
        JVMPI_EVENT_MONITOR_WAITED => &[sys::JVMTI_EVENT_MONITOR_WAIT, sys::JVMTI_EVENT_MONITOR_WAITED],
        JVMPI_EVENT_GC_START => &[sys::JVMTI_EVENT_GARBAGE_COLLECTION_START],
        // The layer's wrappers of the JNI functions (jni_refs.rs).
        JVMPI_EVENT_JNI_GLOBALREF_ALLOC
        | JVMPI_EVENT_JNI_GLOBALREF_FREE
        | JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC
        | JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE => &[],
        // Sent by the layer's own raw monitors (monitors.rs).
        JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER
        | JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED
        | JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT => &[],
        JVMPI_EVENT_GC_FINISH => &[sys::JVMTI_EVENT_GARBAGE_COLLECTION_FINISH],
        _ => return None,
    })
}

/// JVMTI event numbers run from 50 to 88.
const JVMTI_EVENT_SLOTS: usize = 96;
static JVMTI_USERS: [AtomicU32; JVMTI_EVENT_SLOTS] = [const { AtomicU32::new(0) }; JVMTI_EVENT_SLOTS];

fn set_jvmti_event(layer: &Layer, event: sys::jvmtiEvent, on: bool) -> bool {
    let Some(users) = JVMTI_USERS.get(event as usize) else { return false };
    let switch = if on {
        users.fetch_add(1, Ordering::SeqCst) == 0
    } else {
        users.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok_and(|was| was == 1)
    };
    if !switch {
        return true;
    }
    set_mode(layer, event, on)
}

fn set_mode(layer: &Layer, event: sys::jvmtiEvent, on: bool) -> bool {
    let mode = if on { sys::JVMTI_ENABLE } else { sys::JVMTI_DISABLE };
    let env = layer.jvmti.raw();
    // SAFETY: the layer's live JVMTI environment; a null thread means every thread.
    let rc = unsafe {
        match (**env).SetEventNotificationMode {
            Some(f) => f(env, mode, event, std::ptr::null_mut()),
            None => sys::JVMTI_ERROR_NOT_AVAILABLE,
        }
    };
    match rc {
        sys::JVMTI_ERROR_NONE => true,
        // An -Xrun agent's JVM_OnLoad runs in JVMTI's start phase, where events cannot be switched; VMInit
        // switches on whatever is wanted by then (`apply_at_vm_init`).
        sys::JVMTI_ERROR_WRONG_PHASE => true,
        _ => {
            crate::log::warning(&format!("SetEventNotificationMode({event}) failed: {}", jvmti::JvmtiError(rc)));
            false
        }
    }
}

/// At VMInit: switches on the JVMTI events of everything enabled during the start phase.
pub fn apply_at_vm_init(layer: &Layer) {
    if (JVMPI_EVENT_JNI_GLOBALREF_ALLOC..=JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE).any(|e| layer.is_enabled(e)) {
        crate::jni_refs::install(layer);
    }
    for (event, users) in JVMTI_USERS.iter().enumerate() {
        if users.load(Ordering::SeqCst) > 0 {
            set_mode(layer, event as sys::jvmtiEvent, true);
        }
    }
}

pub fn enable(event_type: sys::jint, _arg: *mut std::ffi::c_void) -> sys::jint {
    let Some(l) = layer() else { return JVMPI_FAIL };
    let Some(src) = sources(event_type) else { return JVMPI_NOT_AVAILABLE };
    if !l.set_enabled(event_type, true) {
        return JVMPI_SUCCESS; // Already on.
    }
    let mut ok = true;
    for &e in src {
        ok &= set_jvmti_event(l, e, true);
    }
    if !ok {
        crate::log::warning(&format!("event {event_type} could not be enabled: the JVM refused its JVMTI event"));
        l.set_enabled(event_type, false);
        for &e in src {
            set_jvmti_event(l, e, false);
        }
        return JVMPI_FAIL;
    }
    if (JVMPI_EVENT_JNI_GLOBALREF_ALLOC..=JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE).contains(&event_type) {
        // Refused in the OnLoad phase: VMInit installs them then.
        crate::jni_refs::install(l);
    }
    if event_type == JVMPI_EVENT_OBJECT_ALLOC
        && l.live.load(Ordering::Acquire)
        && let Some(jni) = l.current_jni()
    {
        crate::alloc::prime_current_thread(jni);
    }
    JVMPI_SUCCESS
}

pub fn disable(event_type: sys::jint, _arg: *mut std::ffi::c_void) -> sys::jint {
    let Some(l) = layer() else { return JVMPI_FAIL };
    let Some(src) = sources(event_type) else { return JVMPI_NOT_AVAILABLE };
    if l.set_enabled(event_type, false) {
        for &e in src {
            set_jvmti_event(l, e, false);
        }
    }
    JVMPI_SUCCESS
}

/// RequestEvent: the event is sent on the calling thread before this returns, with JVMPI_REQUESTED_EVENT.
pub fn request(event_type: sys::jint, arg: *mut std::ffi::c_void) -> sys::jint {
    let Some(l) = layer() else { return JVMPI_FAIL };
    let Some(jni) = l.current_jni() else { return JVMPI_FAIL };
    match event_type {
        JVMPI_EVENT_CLASS_LOAD => {
            let class = crate::ids::object_of(l, arg.cast());
            if class.is_null() {
                return JVMPI_FAIL;
            }
            crate::classes::send_class_load(l, jni, class, arg.cast(), true);
            jni.delete_local_ref(class);
            JVMPI_SUCCESS
        }
        JVMPI_EVENT_THREAD_START => {
            let thread = crate::ids::object_of(l, arg.cast());
            if thread.is_null() {
                return JVMPI_FAIL;
            }
            let record = crate::threads::by_thread_object(jni, thread);
            jni.delete_local_ref(thread);
            match record {
                Some(r) => {
                    crate::threads::send_start(l, jni, &r, true);
                    JVMPI_SUCCESS
                }
                None => JVMPI_FAIL,
            }
        }
        JVMPI_EVENT_OBJECT_ALLOC => crate::alloc::send_requested(l, jni, arg.cast()),
        JVMPI_EVENT_HEAP_DUMP => crate::heap_dump::request(l, jni, arg),
        JVMPI_EVENT_MONITOR_DUMP => crate::monitor_dump::request(l, jni),
        JVMPI_EVENT_OBJECT_DUMP => crate::object_records::request_object_dump(l, jni, arg.cast()),
        _ => JVMPI_NOT_AVAILABLE,
    }
}
