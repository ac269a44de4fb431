//! Virtual threads (JDK 21+) in CPU samples: a carrier's CPU time while a virtual thread is mounted on it
//! is the virtual thread's. HotSpot's JVMTI extension events VirtualThreadMount and VirtualThreadUnmount run
//! on the carrier at each mount and unmount (a virtual thread's first mount and last unmount are its
//! VirtualThreadStart and VirtualThreadEnd instead); each writes the virtual thread's serial into the
//! carrier's sampler slot (one atomic, see `sampler::Shared::set_mounted`), which the signal handler reads
//! to credit the sample. Names stay off the signal path: a serial is a thread record, registered here.

use super::Engine;
use crate::context::{self, Context};
use crate::log;
use jvmti::sys;

const MOUNT: &str = "com.sun.hotspot.events.VirtualThreadMount";
const UNMOUNT: &str = "com.sun.hotspot.events.VirtualThreadUnmount";

/// Starts following mounts, if this JVM has the events (JDK 21+, with can_support_virtual_threads granted).
/// Returns whether it does.
pub fn follow(ctx: &Context) -> bool {
    let jvmti = ctx.jvmti;
    let (Ok(Some(mount)), Ok(Some(unmount))) =
        (jvmti.extension_event_index(MOUNT), jvmti.extension_event_index(UNMOUNT))
    else {
        return false;
    };
    let set = jvmti
        .set_extension_event_callback(mount, Some(on_mount))
        .and_then(|()| jvmti.set_extension_event_callback(unmount, Some(on_unmount)));
    if let Err(e) = set {
        log::warning(&format!(
            "cpu=samples: cannot follow virtual thread mounts ({e}); their CPU time is credited to their carriers"
        ));
        unfollow(ctx);
        return false;
    }
    true
}

/// Stops following mounts (the session ends): samples go to the carriers again.
pub fn unfollow(ctx: &Context) {
    for id in [MOUNT, UNMOUNT] {
        if let Ok(Some(index)) = ctx.jvmti.extension_event_index(id) {
            let _ = ctx.jvmti.set_extension_event_callback(index, None);
        }
    }
    if let Some(engine) = super::installed() {
        engine.clear_mounted();
    }
}

/// A virtual thread is now mounted on the calling (carrier) thread: registers it if it is new (one that
/// started before the agent saw it) and credits the carrier's samples to it.
pub fn mounted(ctx: &Context, engine: &Engine, thread: sys::jthread) {
    // The current thread is the virtual thread once mounted: its record is found without naming it.
    let record = ctx.thread_record(std::ptr::null_mut()).or_else(|| ctx.register_thread(thread, false).map(|r| r.0));
    if let Some(record) = record {
        engine.set_mounted(record.serial);
    }
}

unsafe extern "C" fn on_mount(_: *mut sys::jvmtiEnv, _jni: *mut sys::JNIEnv, thread: sys::jthread) {
    crate::panic_guard::guard(
        || {
            if let (Some(ctx), Some(engine)) = (context::current(), super::installed()) {
                mounted(ctx, engine, thread);
            }
        },
        (),
    )
}

unsafe extern "C" fn on_unmount(_: *mut sys::jvmtiEnv, _jni: *mut sys::JNIEnv, _thread: sys::jthread) {
    crate::panic_guard::guard(
        || {
            if let Some(engine) = super::installed() {
                engine.set_unmounting();
            }
        },
        (),
    )
}

/// Whether a frame's class and method are where a carrier enters a virtual thread's continuation: a mounted
/// virtual thread's stack ends there (AsyncGetCallTrace walks on into the carrier's frames).
pub fn is_continuation_entry(class: &str, method: &str) -> bool {
    class == "jdk.internal.vm.Continuation" && matches!(method, "enterSpecial" | "enter" | "enter0" | "run")
}
