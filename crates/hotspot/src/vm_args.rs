//! The VM's own input arguments (`-Xprof` and the like, which the launcher passed on and the JVM kept),
//! read from HotSpot's exported statics. They live in libjvm's data and the C heap, are set while the JVM
//! parses its options (before it loads agents) and are never changed or freed afterwards.

use crate::structs::VmStructs;
use std::ffi::{CStr, c_char};

/// The VM's input arguments (`-Xprof`, `-Xint`, `-XX:…`, as `RuntimeMXBean.getInputArguments` lists them),
/// from `Arguments::_jvm_flags_array` and `_jvm_args_array`.
pub fn vm_input_arguments(vm: &VmStructs) -> Result<Vec<String>, String> {
    let mut all = Vec::new();
    for (array, count) in [("_jvm_flags_array", "_num_jvm_flags"), ("_jvm_args_array", "_num_jvm_args")] {
        let array_at = vm.static_address("Arguments", array)?;
        let count_at = vm.static_address("Arguments", count)?;
        // SAFETY: statics of libjvm (a char** and an int), mapped for the process's lifetime.
        let (strings, n) = unsafe { (*(array_at as *const *const *const c_char), *(count_at as *const i32)) };
        if strings.is_null() || !(0..=100_000).contains(&n) {
            continue;
        }
        for i in 0..n as usize {
            // SAFETY: the JVM's array holds `n` C strings (or nulls), never freed while it runs.
            let s = unsafe { *strings.add(i) };
            if !s.is_null() {
                // SAFETY: a NUL-terminated string the JVM copied from its command line.
                all.push(unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned());
            }
        }
    }
    Ok(all)
}
