use crate::env::Jvmti;
use crate::error::JniError;
use crate::jni::Jni;
use jvmti_sys as sys;
use std::ffi::{CStr, c_void};

/// The `JavaVM` handle: the one pointer that is valid everywhere, from which environments are obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vm(*mut sys::JavaVM);

// SAFETY: the JavaVM is one per process and its invocation functions may be called from any thread.
unsafe impl Send for Vm {}
// SAFETY: as for Send.
unsafe impl Sync for Vm {}

impl Vm {
    /// # Safety
    /// `raw` must be the JavaVM passed to `Agent_OnLoad`/`Agent_OnAttach`.
    pub unsafe fn from_raw(raw: *mut sys::JavaVM) -> Vm {
        Vm(raw)
    }

    pub fn raw(self) -> *mut sys::JavaVM {
        self.0
    }

    /// A new JVMTI environment. Each call creates a separate environment with its own capabilities,
    /// callbacks and tag map.
    pub fn jvmti(self, version: u32) -> Result<Jvmti, JniError> {
        let mut env: *mut c_void = std::ptr::null_mut();
        // SAFETY: a `Vm` holds the JavaVM the JVM passed to the agent (made only by the unsafe `from_raw`), whose
        // invocation table lives as long as the process; `env` is a live out-parameter.
        let rc = unsafe { (**self.0).GetEnv.expect("GetEnv")(self.0, &mut env, version as sys::jint) };
        if rc != sys::JNI_OK as sys::jint || env.is_null() {
            return Err(JniError::Code(rc));
        }
        // SAFETY: GetEnv succeeded with a JVMTI version, so `env` is a JVMTI environment.
        Ok(unsafe { Jvmti::from_raw(env as *mut sys::jvmtiEnv) })
    }

    /// The current thread's JNI environment, if it is attached. Async-signal-safe.
    pub fn jni(self) -> Option<Jni> {
        let mut env: *mut c_void = std::ptr::null_mut();
        // SAFETY: as in `jvmti`. No panic on a missing slot: a signal handler asks this too.
        let get_env = unsafe { (**self.0).GetEnv }?;
        // SAFETY: as in `jvmti`; GetEnv reads the JVM's thread-local current thread and takes no lock, so it may
        // be called from a signal handler (as async-profiler does).
        let rc = unsafe { get_env(self.0, &mut env, sys::JNI_VERSION_1_8 as sys::jint) };
        // SAFETY: GetEnv with a JNI version answers the calling thread's own JNIEnv.
        (rc == sys::JNI_OK as sys::jint && !env.is_null()).then(|| unsafe { Jni::from_raw(env as *mut sys::JNIEnv) })
    }

    /// Attaches the calling native thread as a daemon so that it can call JNI/JVMTI.
    pub fn attach_daemon(self, name: &CStr) -> Result<Jni, JniError> {
        let mut env: *mut c_void = std::ptr::null_mut();
        let mut args = sys::JavaVMAttachArgs {
            version: sys::JNI_VERSION_1_8 as sys::jint,
            name: name.as_ptr() as *mut _,
            group: std::ptr::null_mut(),
        };
        // SAFETY: the process's JavaVM (see `jvmti`); `env` and `args` are live for the call, and `name` outlives
        // it (the JVM copies it).
        let rc = unsafe {
            (**self.0).AttachCurrentThreadAsDaemon.expect("AttachCurrentThreadAsDaemon")(
                self.0,
                &mut env,
                &mut args as *mut _ as *mut c_void,
            )
        };
        if rc != sys::JNI_OK as sys::jint {
            return Err(JniError::Code(rc));
        }
        // SAFETY: AttachCurrentThreadAsDaemon succeeded, so `env` is the calling thread's JNIEnv.
        Ok(unsafe { Jni::from_raw(env as *mut sys::JNIEnv) })
    }

    /// Detaches the calling thread. Its JNIEnv is freed.
    ///
    /// # Safety
    /// No `Jni` of the calling thread (nor any local reference it made) may be used afterwards: `Jni` is `Copy`,
    /// so the compiler cannot see a copy outliving the detach.
    pub unsafe fn detach(self) {
        // SAFETY: the process's JavaVM; the caller promises the thread's JNIEnv is not used after this.
        unsafe {
            let _ = (**self.0).DetachCurrentThread.expect("DetachCurrentThread")(self.0);
        }
    }
}
