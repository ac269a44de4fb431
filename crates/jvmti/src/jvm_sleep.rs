//! `Thread.sleep` observed through the JVM's own function. HotSpot raises no JVMTI event for a sleep, so
//! when the JVM binds the native method that sleeps, NativeMethodBind lets [`redirect_sleep`] put a wrapper
//! in its place: the wrapper tells the observer and calls the JVM's function. No bytecode is changed and
//! nothing else is slowed down.
//!
//! The native that sleeps is `Thread.sleep(J)V` on JDK 17, `Thread.sleep0(J)V` on JDK 21 and
//! `Thread.sleepNanos0(J)V` on JDK 25, bound to HotSpot's exported `JVM_Sleep` (milliseconds up to JDK 20,
//! nanoseconds in JDK 21) or `JVM_SleepNanos` (nanoseconds, JDK 22+). The binding happens while
//! `java.lang.Thread` is initialised, in the primordial phase, when JVMTI cannot name methods yet: it is
//! recognised by that address.

use crate::jni::Jni;
use jvmti_sys as sys;
use std::ffi::c_void;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Told of each sleep, on the sleeping thread, before it sleeps: its JNIEnv and the timeout in milliseconds.
pub type SleepObserver = fn(Jni, i64);

type SleepFn = unsafe extern "system" fn(*mut sys::JNIEnv, sys::jclass, sys::jlong);

static ORIGINAL_MILLIS: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static ORIGINAL_NANOS: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static OBSERVER: OnceLock<SleepObserver> = OnceLock::new();

/// In a NativeMethodBind event: if `address` is `JVM_Sleep` or `JVM_SleepNanos`, binds the native to a
/// wrapper that tells `observer` of every sleep (the first observer given stays). `jdk21_or_later`: JVM_Sleep
/// takes nanoseconds. Returns whether the binding was redirected.
///
/// # Safety
/// `new_address` must be null or NativeMethodBind's out-parameter, writable for the event's duration, and
/// `address` the address the event is binding.
pub unsafe fn redirect_sleep(
    address: *mut c_void,
    new_address: *mut *mut c_void,
    jdk21_or_later: bool,
    observer: SleepObserver,
) -> bool {
    if address.is_null() || new_address.is_null() {
        return false;
    }
    let (sleep, sleep_nanos_fn) = jvm_sleep_functions();
    if address != sleep && address != sleep_nanos_fn {
        return false;
    }
    let (original, wrapper): (&AtomicPtr<c_void>, SleepFn) = if address == sleep_nanos_fn || jdk21_or_later {
        (&ORIGINAL_NANOS, sleep_nanos)
    } else {
        (&ORIGINAL_MILLIS, sleep_millis)
    };
    let _ = OBSERVER.set(observer);
    original.store(address, Ordering::Release);
    // SAFETY: `new_address` is NativeMethodBind's out-parameter, non-null (checked above) and writable for
    // the duration of the event (the caller's contract); the wrapper has the signature of the function it
    // replaces.
    unsafe { *new_address = wrapper as *mut c_void };
    true
}

/// HotSpot's `JVM_Sleep` and `JVM_SleepNanos`, looked up once in the loaded libjvm (never matching where absent).
fn jvm_sleep_functions() -> (*mut c_void, *mut c_void) {
    static ADDRESSES: OnceLock<(usize, usize)> = OnceLock::new();
    let &(sleep, nanos) = ADDRESSES.get_or_init(|| {
        let address = |name| hotspot::libjvm_symbol(name).map_or(0, |p| p as usize);
        (address(c"JVM_Sleep"), address(c"JVM_SleepNanos"))
    });
    let never_matches_if_absent = |a: usize| if a == 0 { usize::MAX } else { a } as *mut c_void;
    (never_matches_if_absent(sleep), never_matches_if_absent(nanos))
}

unsafe extern "system" fn sleep_millis(env: *mut sys::JNIEnv, class: sys::jclass, millis: sys::jlong) {
    observe(env, millis);
    // SAFETY: the JVM calls this in place of JVM_Sleep with that function's arguments.
    unsafe { call(&ORIGINAL_MILLIS, env, class, millis) }
}

unsafe extern "system" fn sleep_nanos(env: *mut sys::JNIEnv, class: sys::jclass, nanos: sys::jlong) {
    observe(env, nanos / 1_000_000);
    // SAFETY: the JVM calls this in place of JVM_Sleep/JVM_SleepNanos with that function's arguments.
    unsafe { call(&ORIGINAL_NANOS, env, class, nanos) }
}

fn observe(env: *mut sys::JNIEnv, timeout_ms: i64) {
    if let (Some(observer), false) = (OBSERVER.get(), env.is_null()) {
        // SAFETY: `env` is the sleeping thread's JNIEnv (non-null), passed by the JVM to the native method,
        // and we are on that thread.
        observer(unsafe { Jni::from_raw(env) }, timeout_ms);
    }
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
