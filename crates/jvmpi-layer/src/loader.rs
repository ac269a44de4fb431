//! `-agentpath:libjvmpi.so=/abs/libagent.so[=options]`: the layer loads the JVMPI agent itself and calls
//! its `JVM_OnLoad` with the (wrapped) JavaVM and the options after the second `=`, as `-Xrun` would.

use jvmti::sys;
use std::ffi::{CStr, CString, c_char, c_void};

type JvmOnLoad = unsafe extern "C" fn(*mut sys::JavaVM, *mut c_char, *mut c_void) -> sys::jint;

pub fn load_agent(vm: *mut sys::JavaVM, spec: &str) -> Result<(), String> {
    let (path, options) = match spec.split_once('=') {
        Some((p, o)) => (p, Some(o)),
        None => (spec, None),
    };
    let c_path = CString::new(path).map_err(|_| format!("agent path {path:?} contains a NUL byte"))?;
    // SAFETY: dlopen with a NUL-terminated path; the library stays loaded for the life of the process.
    let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
    if handle.is_null() {
        // SAFETY: dlerror returns a NUL-terminated message or null.
        let why = unsafe { libc::dlerror() };
        // SAFETY: a non-null dlerror message is NUL-terminated and stays valid until the next dl call.
        let why = if why.is_null() { "unknown error".into() } else { unsafe { CStr::from_ptr(why) }.to_string_lossy() };
        return Err(format!("cannot load JVMPI agent {path}: {why}"));
    }
    // SAFETY: dlsym on a live handle with a NUL-terminated name.
    let sym = unsafe { libc::dlsym(handle, c"JVM_OnLoad".as_ptr()) };
    if sym.is_null() {
        return Err(format!("{path} has no JVM_OnLoad: it is not a JVMPI agent"));
    }
    // SAFETY: JVM_OnLoad has this signature in every JVMPI agent (jni.h).
    let on_load: JvmOnLoad = unsafe { std::mem::transmute::<*mut c_void, JvmOnLoad>(sym) };
    // The options outlive the call: agents may keep the pointer, as they could with the JVM's own string.
    let c_options = match options {
        Some(o) => CString::new(o).map_err(|_| "agent options contain a NUL byte".to_string())?.into_raw(),
        None => std::ptr::null_mut(),
    };
    // SAFETY: calling the agent's entry point as the JVM would.
    let rc = unsafe { on_load(vm, c_options, std::ptr::null_mut()) };
    if rc != sys::JNI_OK as sys::jint {
        return Err(format!("the JVMPI agent {path} failed to load (JVM_OnLoad returned {rc})"));
    }
    Ok(())
}
