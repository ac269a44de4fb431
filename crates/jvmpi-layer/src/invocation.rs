//! Answers `GetEnv(…, JVMPI_VERSION_1*)` on the JVM's own `JavaVM`.
//!
//! HotSpot calls `Agent_OnLoad` of `-agentpath` libraries (us) before it calls `JVM_OnLoad` of `-Xrun`
//! libraries (the JVMPI agent), and hands both the same `JavaVM`, a struct whose only member points at the
//! invocation function table. We point that member at a copy of the table whose `GetEnv` returns our
//! `JVMPI_Interface` for the three JVMPI versions and forwards every other version (JNI, JVMTI) to the
//! JVM's own `GetEnv`, which would print "JVMPI … no longer supported" and fail for JVMPI.

use crate::abi::{JVMPI_VERSION_1, JVMPI_VERSION_1_1, JVMPI_VERSION_1_2};
use crate::guard::guard;
use crate::jvm_get_env::{self, original_get_env};
use jvmti::sys;
use std::ffi::c_void;
use std::sync::OnceLock;

struct Wrapped(Box<sys::JNIInvokeInterface_>);

// SAFETY: the table is written once, before any other thread can read it, and never changed after.
unsafe impl Send for Wrapped {}
// SAFETY: as for Send.
unsafe impl Sync for Wrapped {}

static WRAPPED: OnceLock<Wrapped> = OnceLock::new();

/// Gives `vm` a table whose GetEnv knows JVMPI. Idempotent.
///
/// # Safety
/// `vm` must be the JavaVM passed to `Agent_OnLoad`, before other threads use it.
pub unsafe fn wrap(vm: *mut sys::JavaVM) {
    // SAFETY: a JavaVM is `*const JNIInvokeInterface_` (jni.h's JavaVM_ has that one member) and is writable.
    let current = unsafe { *vm };
    let wrapped = WRAPPED.get_or_init(|| {
        // SAFETY: `current` is the JVM's own function table, valid for the life of the VM.
        unsafe { jvm_get_env::remember(current) };
        // SAFETY: as above.
        let mut wrapped = Box::new(unsafe { *current });
        wrapped.GetEnv = Some(get_env);
        Wrapped(wrapped)
    });
    if !std::ptr::eq(current, &*wrapped.0) {
        // SAFETY: as above; the boxed table lives in a static for the rest of the process.
        unsafe { *vm = &*wrapped.0 as *const _ };
    }
}

unsafe extern "C" fn get_env(vm: *mut sys::JavaVM, penv: *mut *mut c_void, version: sys::jint) -> sys::jint {
    guard(
        || {
            if matches!(version, JVMPI_VERSION_1 | JVMPI_VERSION_1_1 | JVMPI_VERSION_1_2) {
                if penv.is_null() {
                    return sys::JNI_ERR;
                }
                match crate::interface::for_version(version) {
                    Some(iface) => {
                        // SAFETY: `penv` is the caller's out-parameter, checked non-null.
                        unsafe { *penv = iface.cast() };
                        sys::JNI_OK as sys::jint
                    }
                    None => sys::JNI_EVERSION,
                }
            } else {
                original_get_env(vm, penv, version)
            }
        },
        sys::JNI_ERR,
    )
}
