//! Functions libjvm exports beside the JNI and JVMTI tables, found by name in the loaded libjvm: the
//! process's JavaVM (`JNI_GetCreatedJavaVMs`) and HotSpot's signal-safe stack walker (`AsyncGetCallTrace`,
//! in no header).

use crate::vm::Vm;
use jvmti_sys as sys;
use std::ffi::c_void;

impl Vm {
    /// The process's JavaVM, from `JNI_GetCreatedJavaVMs` (`None` if there is none yet), for code that was
    /// not handed one (a signal handler finding the JNIEnv of a thread armed from another thread).
    pub fn created() -> Option<Vm> {
        let sym = hotspot::libjvm_symbol(c"JNI_GetCreatedJavaVMs")?;
        type GetCreatedVms = unsafe extern "C" fn(*mut *mut sys::JavaVM, sys::jsize, *mut sys::jsize) -> sys::jint;
        // SAFETY: the symbol is JNI's exported JNI_GetCreatedJavaVMs, whose signature this is.
        let get: GetCreatedVms = unsafe { std::mem::transmute::<*const c_void, GetCreatedVms>(sym) };
        let mut vm: *mut sys::JavaVM = std::ptr::null_mut();
        let mut count: sys::jsize = 0;
        // SAFETY: room for one JavaVM pointer, as the length says.
        if unsafe { get(&mut vm, 1, &mut count) } != 0 || count < 1 || vm.is_null() {
            return None;
        }
        // SAFETY: the JVM's own answer: the one JavaVM of this process.
        Some(unsafe { Vm::from_raw(vm) })
    }
}

/// HotSpot's `AsyncGetCallTrace`, which walks the Java frames of the thread a signal interrupted.
#[derive(Debug, Clone, Copy)]
pub struct AsyncGetCallTrace(sys::AsyncGetCallTraceFn);

impl AsyncGetCallTrace {
    /// Looks the walker up in the loaded libjvm (`None`: not HotSpot).
    pub fn find() -> Option<AsyncGetCallTrace> {
        let sym = hotspot::libjvm_symbol(c"AsyncGetCallTrace")?;
        // SAFETY: the symbol is HotSpot's AsyncGetCallTrace, whose signature this is.
        Some(AsyncGetCallTrace(unsafe { std::mem::transmute::<*const c_void, sys::AsyncGetCallTraceFn>(sym) }))
    }

    /// Walks up to `frames.len()` frames of the interrupted thread into `frames`; the number written, or one
    /// of the negative `ASGCT_*` failure codes. Async-signal-safe.
    ///
    /// # Safety
    /// To be called from a signal handler on the interrupted thread, with that thread's JNIEnv and the
    /// `ucontext` the kernel passed to the handler.
    pub unsafe fn walk(
        self,
        env: *mut sys::JNIEnv,
        frames: &mut [sys::ASGCT_CallFrame],
        ucontext: *mut c_void,
    ) -> sys::jint {
        let mut trace = sys::ASGCT_CallTrace { env_id: env, num_frames: 0, frames: frames.as_mut_ptr() };
        let depth = frames.len().min(i32::MAX as usize) as sys::jint;
        // SAFETY: the caller keeps the contract above; `frames` has room for `depth` frames.
        unsafe { (self.0)(&mut trace, depth, ucontext) };
        trace.num_frames
    }
}
