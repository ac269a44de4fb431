//! `SLEEP:` lines. HotSpot raises no JVMTI event for `Thread.sleep`, so when the JVM binds the native method
//! that sleeps, NativeMethodBind lets us put a wrapper in its place: the wrapper writes HPROF's
//! `SLEEP: timeout=…, thread …` line and calls the JVM's own function. No bytecode is changed and nothing
//! else is slowed down.
//!
//! The native that sleeps is `Thread.sleep(J)V` on JDK 17, `Thread.sleep0(J)V` on JDK 21 and
//! `Thread.sleepNanos0(J)V` on JDK 25, bound to HotSpot's exported `JVM_Sleep` (milliseconds up to JDK 20,
//! nanoseconds in JDK 21) or `JVM_SleepNanos` (nanoseconds, JDK 22+). The binding happens while `java.lang.Thread` is initialised, in
//! the primordial phase, when JVMTI cannot name methods yet: we recognise it by that address. Virtual threads
//! park instead of reaching it, so they print no SLEEP lines.

use crate::context::{Context, current};
use crate::panic_guard::guard;
use jvmti::{Jni, sys};
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};

type SleepFn = unsafe extern "system" fn(*mut sys::JNIEnv, sys::jclass, sys::jlong);

static ORIGINAL_MILLIS: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static ORIGINAL_NANOS: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// NativeMethodBind: redirects the binding to `JVM_Sleep` to our wrapper.
pub fn on_native_method_bind(ctx: &Context, address: *mut c_void, new_address: *mut *mut c_void) {
    if address.is_null() || new_address.is_null() {
        return;
    }
    let (sleep, sleep_nanos_fn) = jvm_sleep_functions();
    if address != sleep && address != sleep_nanos_fn {
        return;
    }
    let (original, wrapper): (&AtomicPtr<c_void>, SleepFn) =
        if address == sleep_nanos_fn || ctx.jvmti_version().major >= 21 {
            (&ORIGINAL_NANOS, sleep_nanos)
        } else {
            (&ORIGINAL_MILLIS, sleep_millis)
        };
    original.store(address, Ordering::Release);
    // SAFETY: `new_address` is NativeMethodBind's out-parameter, non-null (checked above) and writable for
    // the duration of the event; the wrapper has the signature of the function it replaces.
    unsafe { *new_address = wrapper as *mut c_void };
}

/// HotSpot's `JVM_Sleep` and `JVM_SleepNanos`, looked up once in the loaded libjvm (null where absent).
fn jvm_sleep_functions() -> (*mut c_void, *mut c_void) {
    static ADDRESSES: std::sync::OnceLock<(usize, usize)> = std::sync::OnceLock::new();
    let &(sleep, nanos) = ADDRESSES.get_or_init(|| {
        let address = |name| hotspot::libjvm_symbol(name).map_or(0, |p| p as usize);
        (address(c"JVM_Sleep"), address(c"JVM_SleepNanos"))
    });
    let never_matches_if_absent = |a: usize| if a == 0 { usize::MAX } else { a } as *mut c_void;
    (never_matches_if_absent(sleep), never_matches_if_absent(nanos))
}

unsafe extern "system" fn sleep_millis(env: *mut sys::JNIEnv, class: sys::jclass, millis: sys::jlong) {
    report(env, millis);
    // SAFETY: the JVM calls this in place of JVM_Sleep with that function's arguments.
    unsafe { call(&ORIGINAL_MILLIS, env, class, millis) }
}

unsafe extern "system" fn sleep_nanos(env: *mut sys::JNIEnv, class: sys::jclass, nanos: sys::jlong) {
    report(env, nanos / 1_000_000);
    // SAFETY: the JVM calls this in place of JVM_Sleep/JVM_SleepNanos with that function's arguments.
    unsafe { call(&ORIGINAL_NANOS, env, class, nanos) }
}

unsafe fn call(original: &AtomicPtr<c_void>, env: *mut sys::JNIEnv, class: sys::jclass, arg: sys::jlong) {
    let f = original.load(Ordering::Acquire);
    // Set before the wrapper was handed to the JVM, so never null here.
    if !f.is_null() {
        // SAFETY: a non-null value in `original` is the address of the JVM function the wrapper replaced, which
        // has the SleepFn signature.
        let f: SleepFn = unsafe { std::mem::transmute::<*mut c_void, SleepFn>(f) };
        // SAFETY: the original function, called with the arguments the JVM gave the wrapper, on the same thread.
        unsafe { f(env, class, arg) }
    }
}

/// Writes the SLEEP line; never lets a panic or an error reach the sleeping thread.
fn report(env: *mut sys::JNIEnv, timeout_ms: i64) {
    guard(
        || {
            let Some(ctx) = current() else { return };
            if !ctx.is_live() || env.is_null() {
                return;
            }
            // SAFETY: `env` is the sleeping thread's JNIEnv (checked non-null above), passed by the JVM to the native
            // method, and we are on that thread.
            let jni = unsafe { Jni::from_raw(env) };
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
