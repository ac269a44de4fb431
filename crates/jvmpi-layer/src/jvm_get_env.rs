//! The JVM's own `GetEnv`, kept when `invocation` wraps the invocation interface: the layer gets its JNI
//! environments through it, and the wrapper forwards every version that is not JVMPI to it.

use jvmti::sys;
use std::ffi::c_void;
use std::sync::OnceLock;

struct Original(*const sys::JNIInvokeInterface_);

// SAFETY: written once, before any other thread can read it, and never changed after.
unsafe impl Send for Original {}
// SAFETY: as for Send.
unsafe impl Sync for Original {}

static ORIGINAL: OnceLock<Original> = OnceLock::new();

/// Keeps the JVM's invocation table, the first time only.
///
/// # Safety
/// `table` must be the JVM's own invocation function table, valid for the life of the VM.
pub unsafe fn remember(table: *const sys::JNIInvokeInterface_) {
    let _ = ORIGINAL.set(Original(table));
}

/// The JVM's own GetEnv, for everything that is not JVMPI.
pub fn original_get_env(vm: *mut sys::JavaVM, penv: *mut *mut c_void, version: sys::jint) -> sys::jint {
    let Some(t) = ORIGINAL.get() else { return sys::JNI_ERR };
    // SAFETY: `t.0` is the JVM's table; its GetEnv takes exactly these arguments.
    unsafe {
        match (*t.0).GetEnv {
            Some(f) => f(vm, penv, version),
            None => sys::JNI_ERR,
        }
    }
}
