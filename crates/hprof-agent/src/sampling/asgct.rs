//! HotSpot's AsyncGetCallTrace: found at run time (it is in no header) and its failure codes named.

use jvmti::sys::{self, AsyncGetCallTraceFn};

/// Looks the walker up in the already loaded libjvm.
pub fn find() -> Option<AsyncGetCallTraceFn> {
    let sym = hotspot::libjvm_symbol(c"AsyncGetCallTrace")?;
    // SAFETY: the symbol is HotSpot's AsyncGetCallTrace, whose signature this is.
    Some(unsafe { std::mem::transmute::<*const std::ffi::c_void, AsyncGetCallTraceFn>(sym) })
}

/// The pseudo-frame shown for a sample the walker could not take, so that such samples are counted and
/// visible instead of silently dropped.
pub fn failure_label(code: i32) -> &'static str {
    match code {
        sys::ASGCT_NO_JAVA_FRAME => "[no Java frames]",
        sys::ASGCT_NO_CLASS_LOAD => "[class load events disabled]",
        sys::ASGCT_GC_ACTIVE => "[GC active]",
        sys::ASGCT_UNKNOWN_NOT_JAVA => "[unknown, not Java]",
        sys::ASGCT_NOT_WALKABLE_NOT_JAVA => "[not walkable, not Java]",
        sys::ASGCT_UNKNOWN_JAVA => "[unknown Java]",
        sys::ASGCT_NOT_WALKABLE_JAVA => "[not walkable Java]",
        sys::ASGCT_UNKNOWN_STATE => "[unknown thread state]",
        sys::ASGCT_THREAD_EXIT => "[thread exiting]",
        sys::ASGCT_DEOPT => "[deoptimizing]",
        sys::ASGCT_SAFEPOINT => "[at safepoint]",
        super::agent_work::TRACKING_ALLOCATIONS => "[hprof: tracking allocations]",
        _ => "[stack walk failed]",
    }
}

/// The process's JavaVM, from `JNI_GetCreatedJavaVMs` (null if there is none yet), which the handler needs
/// to find the JNIEnv of a thread armed from another thread.
pub fn java_vm() -> *mut sys::JavaVM {
    let Some(sym) = hotspot::libjvm_symbol(c"JNI_GetCreatedJavaVMs") else { return std::ptr::null_mut() };
    type GetCreatedVms = unsafe extern "C" fn(*mut *mut sys::JavaVM, sys::jsize, *mut sys::jsize) -> sys::jint;
    // SAFETY: the symbol is JNI's exported JNI_GetCreatedJavaVMs, whose signature this is.
    let get: GetCreatedVms = unsafe { std::mem::transmute::<*const std::ffi::c_void, GetCreatedVms>(sym) };
    let mut vm: *mut sys::JavaVM = std::ptr::null_mut();
    let mut count: sys::jsize = 0;
    // SAFETY: room for one JavaVM pointer, as the length says.
    if unsafe { get(&mut vm, 1, &mut count) } != 0 || count < 1 {
        return std::ptr::null_mut();
    }
    vm
}
