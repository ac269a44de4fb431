//! `AsyncGetCallTrace`: HotSpot's unofficial, signal-safe stack walker. It is in no header; the symbol is
//! exported by libjvm and found with `dlsym(RTLD_DEFAULT, "AsyncGetCallTrace")`.
use crate::{JNIEnv, jint, jmethodID};

/// One frame. `lineno` holds the bytecode index for Java frames, -3 for native methods.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct ASGCT_CallFrame {
    pub lineno: jint,
    pub method_id: jmethodID,
}

/// The request and result. On failure `num_frames` is one of the negative `ASGCT_*` codes.
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct ASGCT_CallTrace {
    pub env_id: *mut JNIEnv,
    pub num_frames: jint,
    pub frames: *mut ASGCT_CallFrame,
}

pub type AsyncGetCallTraceFn =
    unsafe extern "C" fn(trace: *mut ASGCT_CallTrace, depth: jint, ucontext: *mut core::ffi::c_void);

/// Failure codes left in `num_frames` (HotSpot's `forte.cpp`).
pub const ASGCT_NO_JAVA_FRAME: jint = 0;
pub const ASGCT_NO_CLASS_LOAD: jint = -1;
pub const ASGCT_GC_ACTIVE: jint = -2;
pub const ASGCT_UNKNOWN_NOT_JAVA: jint = -3;
pub const ASGCT_NOT_WALKABLE_NOT_JAVA: jint = -4;
pub const ASGCT_UNKNOWN_JAVA: jint = -5;
pub const ASGCT_NOT_WALKABLE_JAVA: jint = -6;
pub const ASGCT_UNKNOWN_STATE: jint = -7;
pub const ASGCT_THREAD_EXIT: jint = -8;
pub const ASGCT_DEOPT: jint = -9;
pub const ASGCT_SAFEPOINT: jint = -10;
