//! JNI_GLOBALREF_ALLOC / _FREE and JNI_WEAK_GLOBALREF_ALLOC / _FREE: JVMTI has no such events, but it lets
//! an agent replace the JNI function table (SetJNIFunctionTable). The layer wraps NewGlobalRef,
//! DeleteGlobalRef, NewWeakGlobalRef and DeleteWeakGlobalRef, for every thread, once the agent enables one
//! of these events; each wrapper calls the JVM's own function and sends the event on the calling thread.
//! The layer's own references (its thread records) are not reported.

use crate::abi::*;
use crate::layer::{Layer, deliver, layer};
use jvmti::sys;
use std::cell::Cell;
use std::sync::OnceLock;

/// The JVM's own functions, from GetJNIFunctionTable.
struct Original(sys::JNINativeInterface_);

// SAFETY: a table of function pointers, written once.
unsafe impl Send for Original {}
// SAFETY: as for Send.
unsafe impl Sync for Original {}

static ORIGINAL: OnceLock<Original> = OnceLock::new();

thread_local! {
    /// Set while the layer makes or drops references of its own.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` without reporting the JNI references it makes or drops.
pub fn quietly<T>(f: impl FnOnce() -> T) -> T {
    let before = QUIET.try_with(|q| q.replace(true)).unwrap_or(false);
    let out = f();
    let _ = QUIET.try_with(|q| q.set(before));
    out
}

fn reporting(l: &Layer, event_type: sys::jint) -> bool {
    l.is_enabled(event_type) && !QUIET.try_with(|q| q.get()).unwrap_or(true)
}

/// Installs the wrappers (once). False where JVMTI refuses (the OnLoad phase: VMInit tries again).
pub fn install(l: &Layer) -> bool {
    if ORIGINAL.get().is_some() {
        return true;
    }
    let env = l.jvmti.raw();
    let mut table: *mut sys::jniNativeInterface = std::ptr::null_mut();
    // SAFETY: GetJNIFunctionTable with an out-parameter; the copy it returns is ours.
    let rc =
        unsafe { (**env).GetJNIFunctionTable.map(|f| f(env, &mut table)).unwrap_or(sys::JVMTI_ERROR_NOT_AVAILABLE) };
    if rc != sys::JVMTI_ERROR_NONE || table.is_null() {
        return false;
    }
    // SAFETY: a valid table JVMTI allocated for us.
    let original = unsafe { *table };
    let mut wrapped = original;
    wrapped.NewGlobalRef = Some(new_global_ref);
    wrapped.DeleteGlobalRef = Some(delete_global_ref);
    wrapped.NewWeakGlobalRef = Some(new_weak_global_ref);
    wrapped.DeleteWeakGlobalRef = Some(delete_weak_global_ref);
    if ORIGINAL.set(Original(original)).is_err() {
        return true;
    }
    // SAFETY: SetJNIFunctionTable copies the table; ours only needs to live for the call.
    let rc = unsafe { (**env).SetJNIFunctionTable.map(|f| f(env, &wrapped)).unwrap_or(sys::JVMTI_ERROR_NOT_AVAILABLE) };
    // SAFETY: the copy from GetJNIFunctionTable is JVMTI memory we own.
    unsafe { l.jvmti.deallocate(table) };
    rc == sys::JVMTI_ERROR_NONE
}

/// The JVM's table; the wrappers are installed only after it is stored, so it is always there for them.
fn original() -> &'static sys::JNINativeInterface_ {
    match ORIGINAL.get() {
        Some(o) => &o.0,
        // Unreachable (see above); aborting is the only answer that does not unwind into the JVM.
        None => std::process::abort(),
    }
}

fn send_alloc(env: *mut sys::JNIEnv, event_type: sys::jint, obj: sys::jobject, r: sys::jobject) {
    crate::guard::guard(
        || {
            let Some(l) = layer() else { return };
            if r.is_null() || !reporting(l, event_type) {
                return;
            }
            let mut ev = JVMPI_Event::new(event_type, env);
            ev.u.jni_globalref_alloc = JniGlobalrefAlloc { obj_id: crate::ids::id_of(l, obj), ref_id: r };
            deliver(&mut ev, false);
        },
        (),
    )
}

fn send_free(env: *mut sys::JNIEnv, event_type: sys::jint, r: sys::jobject) {
    crate::guard::guard(
        || {
            let Some(l) = layer() else { return };
            if r.is_null() || !reporting(l, event_type) {
                return;
            }
            let mut ev = JVMPI_Event::new(event_type, env);
            ev.u.jni_globalref_free = JniGlobalrefFree { ref_id: r };
            deliver(&mut ev, false);
        },
        (),
    )
}

unsafe extern "C" fn new_global_ref(env: *mut sys::JNIEnv, obj: sys::jobject) -> sys::jobject {
    // SAFETY: the JVM's own NewGlobalRef with the caller's arguments.
    let r = unsafe { original().NewGlobalRef.unwrap_or_else(|| std::process::abort())(env, obj) };
    send_alloc(env, JVMPI_EVENT_JNI_GLOBALREF_ALLOC, obj, r);
    r
}

unsafe extern "C" fn delete_global_ref(env: *mut sys::JNIEnv, r: sys::jobject) {
    send_free(env, JVMPI_EVENT_JNI_GLOBALREF_FREE, r);
    // SAFETY: the JVM's own DeleteGlobalRef with the caller's arguments.
    unsafe { original().DeleteGlobalRef.unwrap_or_else(|| std::process::abort())(env, r) }
}

unsafe extern "C" fn new_weak_global_ref(env: *mut sys::JNIEnv, obj: sys::jobject) -> sys::jweak {
    // SAFETY: the JVM's own NewWeakGlobalRef with the caller's arguments.
    let r = unsafe { original().NewWeakGlobalRef.unwrap_or_else(|| std::process::abort())(env, obj) };
    send_alloc(env, JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC, obj, r);
    r
}

unsafe extern "C" fn delete_weak_global_ref(env: *mut sys::JNIEnv, r: sys::jweak) {
    send_free(env, JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE, r);
    // SAFETY: the JVM's own DeleteWeakGlobalRef with the caller's arguments.
    unsafe { original().DeleteWeakGlobalRef.unwrap_or_else(|| std::process::abort())(env, r) }
}
