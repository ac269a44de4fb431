//! JVMPI agents in safe Rust.
//!
//! The same event model as the C interface (`include/jvmpi.h`), typed: an agent implements [`Handler`],
//! receives each [`Event`] on the thread where it happened, and calls back through [`Profiler`]. It runs
//! through libjvmpi.so like any JVMPI agent: a cdylib that exports `JVM_OnLoad` (see [`on_load`]), loaded
//! with `java -agentpath:libjvmpi.so -Xrun<name>` or `-agentpath:libjvmpi.so=/abs/lib<name>.so`.
//! `examples/profiler_hook.rs` is the Dr. Dobb's ProfilerHook written this way.

// Object IDs and JNIEnv thread IDs are opaque values the VM resolves, not pointers this crate dereferences.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

mod event;
mod profiler;

pub use event::{ClassLoad, Event, Field, Method, ObjectKind};
pub use jvmpi_sys as sys;
pub use jvmti_sys::{JNIEnv, JavaVM, jint};
pub use profiler::{EventType, Failure, Profiler};

use std::ffi::{CStr, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

/// What an agent does with events. Called concurrently from many threads.
pub trait Handler: Send + Sync + 'static {
    /// `requested`: the event answers a [`Profiler`] request (JVMPI_REQUESTED_EVENT was set).
    fn on_event(&self, profiler: Profiler, event: &Event<'_>, requested: bool);
}

struct Installed {
    profiler: Profiler,
    handler: Box<dyn Handler>,
}

static INSTALLED: OnceLock<Installed> = OnceLock::new();

/// The body of an agent's `JVM_OnLoad`: gets JVMPI from `vm`, calls `setup` with the profiler and the
/// options (to enable events and build the handler), installs the handler, and returns what `JVM_OnLoad`
/// must return. A panic becomes `JNI_ERR`.
///
/// # Safety
/// `vm` and `options` must be `JVM_OnLoad`'s arguments.
pub unsafe fn on_load<H: Handler>(
    vm: *mut jvmti_sys::JavaVM,
    options: *const c_char,
    setup: impl FnOnce(Profiler, &str) -> Result<H, String>,
) -> jvmti_sys::jint {
    let run = || {
        // SAFETY: the caller passes JVM_OnLoad's JavaVM.
        let profiler = match unsafe { Profiler::from_vm(vm) } {
            Ok(p) => p,
            Err(rc) => {
                eprintln!("JVMPI agent: GetEnv(JVMPI_VERSION_1) failed ({rc}): run with -agentpath:libjvmpi.so");
                return jvmti_sys::JNI_ERR;
            }
        };
        let options = if options.is_null() {
            String::new()
        } else {
            // SAFETY: JVM_OnLoad's option string is NUL-terminated.
            unsafe { CStr::from_ptr(options) }.to_string_lossy().into_owned()
        };
        // Install first: events enabled in `setup` may arrive before it returns.
        let handler = match setup(profiler, &options) {
            Ok(h) => h,
            Err(e) => {
                eprintln!("JVMPI agent: {e}");
                return jvmti_sys::JNI_ERR;
            }
        };
        if INSTALLED.set(Installed { profiler, handler: Box::new(handler) }).is_err() {
            eprintln!("JVMPI agent: only one agent per VM");
            return jvmti_sys::JNI_ERR;
        }
        profiler.set_notify(notify);
        profiler.enable_pending();
        jvmti_sys::JNI_OK as jvmti_sys::jint
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or(jvmti_sys::JNI_ERR)
}

unsafe extern "C" fn notify(raw: *mut sys::JVMPI_Event) {
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let Some(installed) = INSTALLED.get() else { return };
        if raw.is_null() {
            return;
        }
        // SAFETY: the VM passes an event valid until we return.
        let raw = unsafe { &*raw };
        let requested = raw.event_type & sys::JVMPI_REQUESTED_EVENT != 0;
        // SAFETY: as above; the event's data matches its type.
        let event = unsafe { Event::decode(raw) };
        installed.handler.on_event(installed.profiler, &event, requested);
    }));
}

/// For `JVM_OnLoad`'s unused third argument.
pub type Reserved = *mut c_void;
