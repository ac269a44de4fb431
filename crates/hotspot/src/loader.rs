//! What the dynamic loader knows about an address: which loaded library (the JVM's own included) holds it.
//! The one `dladdr` of the workspace.

use std::ffi::{CStr, c_void};

/// The loader's record of the library holding `address`, if any.
fn dladdr(address: usize) -> Option<libc::Dl_info> {
    // SAFETY: Dl_info is plain C data (pointers and integers), for which all zeros is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the dynamic loader's tables and fills `info`; any address may be asked about.
    let found = unsafe { libc::dladdr(address as *const c_void, &mut info) } != 0;
    (found && !info.dli_fname.is_null()).then_some(info)
}

/// Whether `address` lies in a loaded library: native code, as opposed to memory nobody told the loader about.
pub fn in_library(address: usize) -> bool {
    dladdr(address).is_some()
}

/// The path of the loaded library holding `address` (for a function of the caller's own library, that
/// library's file).
pub fn library_path(address: usize) -> Option<String> {
    let info = dladdr(address)?;
    // SAFETY: dli_fname is non-null (checked by `dladdr`) and a NUL-terminated string owned by the dynamic
    // loader, valid while the library stays loaded; it is copied at once.
    Some(unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libc_functions_are_in_a_library_and_heap_memory_is_not() {
        let getpid = libc::getpid as *const () as usize;
        assert!(in_library(getpid));
        assert!(library_path(getpid).is_some_and(|p| p.contains("libc")), "{:?}", library_path(getpid));
        let heap = Box::new(0u64);
        assert!(!in_library(&*heap as *const u64 as usize));
    }
}
