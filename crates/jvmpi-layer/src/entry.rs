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
    // SAFETY: the JavaVM handed to Agent_OnLoad.
    let vm = unsafe { Vm::from_raw(raw_vm) };
    let jvmti = vm
        .jvmti(sys::JVMTI_VERSION_1_2)
        .map_err(|e| format!("cannot get a JVMTI environment ({e:?}); the JVM is too old or not HotSpot"))?;
    add_capabilities(jvmti)?;
    // Every allocation, from the first one of each thread started from now on (see alloc.rs on priming).
    jvmti
        .set_heap_sampling_interval(0)
        .map_err(|e| format!("SetHeapSamplingInterval(0) failed: {e}; OBJECT_ALLOC needs JDK 11 or newer"))?;
    let layer = crate::layer::init(vm, jvmti);
    crate::callbacks::install(layer)?;
    // SAFETY: the JVM's JavaVM, in Agent_OnLoad, before -Xrun libraries are initialised.
    unsafe { crate::invocation::wrap(raw_vm) };
    if !options.is_empty() {
        crate::loader::load_agent(raw_vm, options)?;
    }
    Ok(())
}

/// Everything JVMPI may be asked for; some capabilities can be added only now, before the agent (in `-Xrun`
/// form) has said what it wants. A capability the JVM lacks leaves its events unavailable.
fn add_capabilities(jvmti: jvmti::Jvmti) -> Result<(), String> {
    let potential = jvmti.potential_capabilities().map_err(|e| format!("GetPotentialCapabilities: {e}"))?;
    // SAFETY: an all-zero capability set is valid.
    let mut caps: sys::jvmtiCapabilities = unsafe { std::mem::zeroed() };
    caps.set_can_tag_objects(potential.can_tag_objects());
    caps.set_can_generate_object_free_events(potential.can_generate_object_free_events());
    caps.set_can_generate_sampled_object_alloc_events(potential.can_generate_sampled_object_alloc_events());
    caps.set_can_generate_vm_object_alloc_events(potential.can_generate_vm_object_alloc_events());
    caps.set_can_generate_method_entry_events(potential.can_generate_method_entry_events());
    caps.set_can_generate_method_exit_events(potential.can_generate_method_exit_events());
    caps.set_can_access_local_variables(potential.can_access_local_variables());
    caps.set_can_generate_compiled_method_load_events(potential.can_generate_compiled_method_load_events());
    caps.set_can_generate_monitor_events(potential.can_generate_monitor_events());
    caps.set_can_generate_garbage_collection_events(potential.can_generate_garbage_collection_events());
    caps.set_can_get_source_file_name(potential.can_get_source_file_name());
    caps.set_can_get_line_numbers(potential.can_get_line_numbers());
    caps.set_can_suspend(potential.can_suspend());
    caps.set_can_get_thread_cpu_time(potential.can_get_thread_cpu_time());
    caps.set_can_get_current_thread_cpu_time(potential.can_get_current_thread_cpu_time());
    caps.set_can_get_monitor_info(potential.can_get_monitor_info());
    caps.set_can_get_owned_monitor_info(potential.can_get_owned_monitor_info());
    caps.set_can_get_current_contended_monitor(potential.can_get_current_contended_monitor());
    caps.set_can_generate_all_class_hook_events(potential.can_generate_all_class_hook_events());
    jvmti.add_capabilities(&caps).map_err(|e| format!("AddCapabilities: {e}"))?;
    if potential.can_tag_objects() == 0 || potential.can_generate_sampled_object_alloc_events() == 0 {
        return Err("this JVM cannot tag objects or report every allocation (JVMTI); JVMPI needs both".into());
    }
    Ok(())
}
