//! `SLEEP:` lines. HotSpot raises no JVMTI event for `Thread.sleep`; `jvmti::jvm_sleep` redirects the
//! binding of the native that sleeps to a wrapper that tells us of each sleep, and we write HPROF's
//! `SLEEP: timeout=…, thread …` line. Virtual threads park instead of reaching it, so they print no SLEEP lines.

use crate::context::{Context, current};
use crate::panic_guard::guard;
use jvmti::Jni;
use std::ffi::c_void;

/// NativeMethodBind: redirects the binding to `JVM_Sleep` to the wrapper.
pub fn on_native_method_bind(ctx: &Context, address: *mut c_void, new_address: *mut *mut c_void) {
    // SAFETY: `address` and `new_address` are the NativeMethodBind event's own arguments, passed on unchanged
    // while the event runs.
    unsafe { jvmti::jvm_sleep::redirect_sleep(address, new_address, ctx.jvmti_version().major >= 21, report) };
}

/// Writes the SLEEP line; never lets a panic or an error reach the sleeping thread.
fn report(jni: Jni, timeout_ms: i64) {
    guard(
        || {
            let Some(ctx) = current() else { return };
            if !ctx.is_live() {
                return;
            }
            let serial = match ctx.jvmti.current_thread() {
                Ok(thread) => {
                    let serial = ctx.thread_serial(thread);
                    jni.delete_local_ref(thread);
                    serial
                }
                Err(_) => 0,
            };
            ctx.output.sleep(timeout_ms, serial);
        },
        (),
    )
}
