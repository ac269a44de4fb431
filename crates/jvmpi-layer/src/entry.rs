//! `Agent_OnLoad`: the layer starts, wraps the JVM's invocation interface so that `-Xrun` agents find JVMPI
//! through `GetEnv`, and, when given an agent library as its option, loads that agent itself.

use crate::guard::{guard, install_panic_hook};
use jvmti::{Vm, sys};
use std::ffi::{CStr, c_char, c_void};

/// # Safety
/// Called by the JVM with its JavaVM and the option string after `=`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn Agent_OnLoad(vm: *mut sys::JavaVM, options: *mut c_char, _reserved: *mut c_void) -> sys::jint {
    guard(
        || {
            install_panic_hook();
            let options = if options.is_null() {
                String::new()
            } else {
                // SAFETY: the JVM passes a NUL-terminated option string.
                unsafe { CStr::from_ptr(options) }.to_string_lossy().into_owned()
            };
            match start(vm, &options) {
                Ok(()) => sys::JNI_OK as sys::jint,
                Err(e) => {
                    crate::log::error(&e);
                    sys::JNI_ERR
                }
            }
        },
        sys::JNI_ERR,
    )
}

fn start(raw_vm: *mut sys::JavaVM, options: &str) -> Result<(), String> {
    let options = crate::options::parse(options)?;
    // SAFETY: the JavaVM handed to Agent_OnLoad.
    let vm = unsafe { Vm::from_raw(raw_vm) };
    let jvmti = vm
        .jvmti(sys::JVMTI_VERSION_1_2)
        .map_err(|e| format!("cannot get a JVMTI environment ({e:?}); the JVM is too old or not HotSpot"))?;
    let layer = crate::layer::init(vm, jvmti);
    layer.register_interface(crate::interface::table());
    // The callbacks through the jvmti crate's event hub, which asks for the capabilities its events need.
    crate::callbacks::install(layer)?;
    crate::local_access::begin(layer, &options);
    // Every allocation, from the first one of each thread started from now on (see alloc.rs on priming).
    jvmti
        .set_heap_sampling_interval(0)
        .map_err(|e| format!("SetHeapSamplingInterval(0) failed: {e}; OBJECT_ALLOC needs JDK 11 or newer"))?;
    // SAFETY: the JVM's JavaVM, in Agent_OnLoad, before -Xrun libraries are initialised.
    unsafe { crate::invocation::wrap(raw_vm) };
    if let Some(agent) = &options.agent {
        crate::loader::load_agent(raw_vm, agent)?;
        // Still in the OnLoad phase: capabilities can be added for what the agent enabled.
        crate::local_access::settle(layer);
    }
    Ok(())
}
