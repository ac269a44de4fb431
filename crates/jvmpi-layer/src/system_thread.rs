//! CreateSystemThread: a daemon Java thread (JVMTI RunAgentThread) that runs the agent's function.

use crate::abi::*;
use crate::layer::layer;
use jvmti::sys;
use std::ffi::c_void;

type AgentFn = unsafe extern "C" fn(*mut c_void);

pub fn create(name: &str, priority: sys::jint, f: AgentFn) -> sys::jint {
    let Some(l) = layer() else { return sys::JNI_ERR };
    let Some(jni) = l.current_jni() else { return sys::JNI_ERR };
    let thread = match new_thread_object(jni, name) {
        Some(t) => t,
        None => return sys::JNI_ERR,
    };
    let priority = match priority {
        JVMPI_MAXIMUM_PRIORITY => sys::JVMTI_THREAD_MAX_PRIORITY as i32,
        JVMPI_MINIMUM_PRIORITY => sys::JVMTI_THREAD_MIN_PRIORITY as i32,
        _ => sys::JVMTI_THREAD_NORM_PRIORITY as i32,
    };
    let arg = f as *const c_void;
    let rc = l.jvmti.run_agent_thread(thread, Some(trampoline), arg, priority);
    jni.delete_local_ref(thread);
    if rc.is_ok() { sys::JNI_OK as sys::jint } else { sys::JNI_ERR }
}

fn new_thread_object(jni: jvmti::Jni, name: &str) -> Option<sys::jobject> {
    let class = jni.find_class(c"java/lang/Thread").ok()?;
    let ctor = jni.method_id(class, c"<init>", c"(Ljava/lang/String;)V").ok()?;
    let jname = jni.new_string(name).ok()?;
    let thread = jni.new_object(class, ctor, &[sys::jvalue { l: jname }]).ok();
    jni.delete_local_ref(jname);
    jni.delete_local_ref(class);
    if thread.is_none() {
        jni.exception_clear();
    }
    thread
}

unsafe extern "C" fn trampoline(_jvmti: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv, arg: *mut c_void) {
    crate::guard::guard(
        || {
            if let Some(l) = layer() {
                // SAFETY: the JVM passes this thread's JNIEnv.
                let jni = unsafe { jvmti::Jni::from_raw(jni) };
                crate::threads::ensure_started(l, jni, std::ptr::null_mut());
            }
            // SAFETY: `arg` is the agent's function, passed through RunAgentThread unchanged.
            let f: AgentFn = unsafe { std::mem::transmute::<*mut c_void, AgentFn>(arg) };
            // SAFETY: the agent's thread function, called on the new thread as CreateSystemThread promised; the
            // reference VM passed it no argument.
            unsafe { f(std::ptr::null_mut()) };
        },
        (),
    )
}
