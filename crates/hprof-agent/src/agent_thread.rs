//! Agent threads: Java daemon threads (JVMTI RunAgentThread) whose body is Rust. Being Java threads, they
//! can call JNI and every JVMTI function, which a plain native thread could not without attaching.

use crate::context::{Context, current};
use crate::panic_guard::guard;
use jvmti::{Jni, sys};
use std::ffi::c_void;

type Body = Box<dyn FnOnce(&'static Context, Jni) + Send>;

/// Starts `body` on a new daemon thread named `name`, which must begin with "HPROF " so that the profile
/// leaves it out (see [`crate::threads::is_agent_thread`]).
pub fn spawn(
    agent: &Context,
    jni: Jni,
    name: &str,
    body: impl FnOnce(&'static Context, Jni) + Send + 'static,
) -> Result<(), String> {
    debug_assert!(crate::threads::is_agent_thread(name), "agent thread {name} must be named HPROF …");
    let thread_class = jni.find_class(c"java/lang/Thread").map_err(|e| format!("agent thread {name}: {e}"))?;
    let ctor = jni
        .method_id(thread_class, c"<init>", c"(Ljava/lang/String;)V")
        .map_err(|e| format!("agent thread {name}: {e}"))?;
    let jname = jni.new_string(name).map_err(|e| format!("agent thread {name}: {e}"))?;
    let thread = jni
        .new_object(thread_class, ctor, &[sys::jvalue { l: jname }])
        .map_err(|e| format!("agent thread {name}: {e}"))?;
    let boxed: Box<Body> = Box::new(Box::new(body));
    let arg = Box::into_raw(boxed) as *const c_void;
    let started = agent.jvmti.run_agent_thread(thread, Some(trampoline), arg, sys::JVMTI_THREAD_NORM_PRIORITY as i32);
    jni.delete_local_ref(jname);
    jni.delete_local_ref(thread);
    jni.delete_local_ref(thread_class);
    started.map_err(|e| {
        // The thread never started, so the body is still ours to free.
        // SAFETY: `arg` came from Box::into_raw above and RunAgentThread failed, so the trampoline will never
        // see it: this is its only owner.
        drop(unsafe { Box::from_raw(arg as *mut Body) });
        format!("cannot start agent thread {name}: {e}")
    })
}

unsafe extern "C" fn trampoline(_jvmti: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv, arg: *mut c_void) {
    // SAFETY: RunAgentThread passes back the `arg` made by Box::into_raw in `spawn`, once, to this thread.
    let body = unsafe { Box::from_raw(arg as *mut Body) };
    guard(
        move || {
            if let Some(a) = current() {
                // SAFETY: the JVM calls the trampoline on the new agent thread with that thread's JNIEnv, valid for
                // the thread's whole run.
                body(a, unsafe { Jni::from_raw(jni) });
            }
        },
        (),
    )
}
