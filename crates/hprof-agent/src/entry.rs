//! The functions the JVM looks up in libhprof.so. Each catches panics: one must never unwind into the JVM.

use crate::agent::{start, start_session};
use crate::context::LoadKind;
use crate::panic_guard::guard;
use jvmti::{Vm, sys};
use std::ffi::{CStr, c_char, c_void};

fn option_string<'a>(options: *const c_char) -> Option<std::borrow::Cow<'a, str>> {
    // SAFETY: the JVM passes a NUL-terminated option string (checked for null) that lives for the call.
    (!options.is_null()).then(|| unsafe { CStr::from_ptr(options) }.to_string_lossy())
}

/// Called for `-agentlib:hprof[=options]`, `-agentpath:…` and `-Xrunhprof[:options]`.
///
/// # Safety
/// Called by the JVM only, with its `JavaVM` and a NUL-terminated option string (or null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn Agent_OnLoad(vm: *mut sys::JavaVM, options: *mut c_char, _reserved: *mut c_void) -> sys::jint {
    guard(
        || {
            // SAFETY: the JVM calls Agent_OnLoad with its own, valid JavaVM.
            let vm = unsafe { Vm::from_raw(vm) };
            start(vm, option_string(options).as_deref(), LoadKind::Startup)
        },
        sys::JNI_ERR,
    )
}

/// Called when the library is loaded into a running VM (`hprof attach`, `jcmd JVMTI.agent_load`), and
/// again at every later attach of the same library: see [`crate::attach`].
///
/// # Safety
/// As for [`Agent_OnLoad`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn Agent_OnAttach(
    vm: *mut sys::JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> sys::jint {
    guard(
        || {
            // SAFETY: the JVM calls Agent_OnAttach with its own, valid JavaVM.
            let vm = unsafe { Vm::from_raw(vm) };
            crate::attach::on_attach(vm, option_string(options).as_deref(), |vm, options| {
                start_session(vm, Some(options), LoadKind::Attach)
            })
        },
        sys::JNI_ERR,
    )
}

/// Called as the VM unloads the library; output was closed at VMDeath, this only makes sure.
///
/// # Safety
/// Called by the JVM only.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn Agent_OnUnload(_vm: *mut sys::JavaVM) {
    guard(
        || {
            if let Some(a) = crate::context::current() {
                a.output.close();
            }
        },
        (),
    )
}
