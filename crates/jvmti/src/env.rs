use crate::error::{JvmtiError, Result};
use jvmti_sys as sys;
use std::ffi::{CStr, c_char, c_void};

/// A JVMTI environment. Cheap to copy; valid until the VM dies or the environment is disposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jvmti(pub(crate) *mut sys::jvmtiEnv);

// SAFETY: a jvmtiEnv may be used from any thread attached to the VM (JVMTI spec, "Environment Local
// Storage"), and its functions synchronise themselves.
unsafe impl Send for Jvmti {}
// SAFETY: as for Send.
unsafe impl Sync for Jvmti {}

/// Calls a function from the JVMTI table, turning an empty slot into `NOT_AVAILABLE` and a non-zero
/// return into `Err`.
macro_rules! jvmti_call {
    ($env:expr, $name:ident $(, $arg:expr)* $(,)?) => {{
        let env: $crate::env::Jvmti = $env;
        // SAFETY: a `Jvmti` holds the environment the JVM gave us (made only by the unsafe `from_raw`), whose
        // function table lives as long as the VM; an empty slot becomes NOT_AVAILABLE instead of a call. The
        // arguments are the wrapper's, typed by the function's signature; JVMTI checks the phase and the handles'
        // kinds and answers with an error code.
        #[allow(unused_unsafe)]
        let code = unsafe {
            match (**env.raw()).$name {
                Some(f) => f(env.raw() $(, $arg)*),
                None => jvmti_sys::JVMTI_ERROR_NOT_AVAILABLE,
            }
        };
        if code == jvmti_sys::JVMTI_ERROR_NONE { Ok(()) } else { Err($crate::error::JvmtiError(code)) }
    }};
}
pub(crate) use jvmti_call;

/// The version a JVM reports, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct JvmtiVersion {
    pub major: u32,
    pub minor: u32,
    pub micro: u32,
}

impl std::fmt::Display for JvmtiVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.micro)
    }
}

impl Jvmti {
    /// Wraps a raw environment pointer received from the JVM.
    ///
    /// # Safety
    /// `raw` must be a live jvmtiEnv.
    pub unsafe fn from_raw(raw: *mut sys::jvmtiEnv) -> Jvmti {
        Jvmti(raw)
    }

    pub fn raw(self) -> *mut sys::jvmtiEnv {
        self.0
    }

    pub fn version(self) -> Result<JvmtiVersion> {
        let mut v: sys::jint = 0;
        jvmti_call!(self, GetVersionNumber, &mut v)?;
        let v = v as u32;
        Ok(JvmtiVersion {
            major: (v & sys::JVMTI_VERSION_MASK_MAJOR) >> sys::JVMTI_VERSION_SHIFT_MAJOR,
            minor: (v & sys::JVMTI_VERSION_MASK_MINOR) >> sys::JVMTI_VERSION_SHIFT_MINOR,
            micro: (v & sys::JVMTI_VERSION_MASK_MICRO) >> sys::JVMTI_VERSION_SHIFT_MICRO,
        })
    }

    pub fn potential_capabilities(self) -> Result<sys::jvmtiCapabilities> {
        // SAFETY: a plain C struct of integers and pointers, for which all zeroes is valid; JVMTI fills it.
        let mut caps: sys::jvmtiCapabilities = unsafe { std::mem::zeroed() };
        jvmti_call!(self, GetPotentialCapabilities, &mut caps)?;
        Ok(caps)
    }

    pub fn add_capabilities(self, caps: &sys::jvmtiCapabilities) -> Result<()> {
        jvmti_call!(self, AddCapabilities, caps)
    }

    pub fn capabilities(self) -> Result<sys::jvmtiCapabilities> {
        // SAFETY: a plain C struct of integers and pointers, for which all zeroes is valid; JVMTI fills it.
        let mut caps: sys::jvmtiCapabilities = unsafe { std::mem::zeroed() };
        jvmti_call!(self, GetCapabilities, &mut caps)?;
        Ok(caps)
    }

    /// Gives capabilities back, so that another environment may take the solo ones.
    pub fn relinquish_capabilities(self, caps: &sys::jvmtiCapabilities) -> Result<()> {
        jvmti_call!(self, RelinquishCapabilities, caps)
    }

    pub fn dispose(self) -> Result<()> {
        jvmti_call!(self, DisposeEnvironment)
    }

    /// Frees memory the JVMTI implementation allocated for a result.
    ///
    /// # Safety
    /// `ptr` must come from this environment's `Allocate` (i.e. be a JVMTI out-parameter), or be null.
    pub unsafe fn deallocate<T>(self, ptr: *mut T) {
        if !ptr.is_null() {
            let _ = jvmti_call!(self, Deallocate, ptr as *mut u8);
        }
    }

    /// Copies a JVMTI-allocated modified-UTF-8 string and frees it. Null gives `None`.
    ///
    /// # Safety
    /// `ptr` must be null or a NUL-terminated string allocated by this environment.
    pub(crate) unsafe fn take_string(self, ptr: *mut c_char) -> Option<String> {
        if ptr.is_null() {
            return None;
        }
        // SAFETY: the caller guarantees a NUL-terminated string from this environment, not yet freed.
        let s = unsafe { decode_modified_utf8(CStr::from_ptr(ptr).to_bytes()) };
        // SAFETY: the string came from this environment's Allocate and is no longer read.
        unsafe { self.deallocate(ptr) };
        Some(s)
    }

    /// Copies a JVMTI-allocated array into a Vec and frees it.
    ///
    /// # Safety
    /// `ptr` must be null or point to `len` elements allocated by this environment.
    pub(crate) unsafe fn take_array<T: Copy>(self, ptr: *mut T, len: sys::jint) -> Vec<T> {
        if ptr.is_null() {
            return Vec::new();
        }
        // SAFETY: the caller guarantees `len` initialised elements at `ptr`, allocated by this environment.
        let v = unsafe { std::slice::from_raw_parts(ptr, len.max(0) as usize) }.to_vec();
        // SAFETY: the array came from this environment's Allocate and was copied out above.
        unsafe { self.deallocate(ptr) };
        v
    }

    pub fn set_event_callbacks(self, callbacks: &sys::jvmtiEventCallbacks) -> Result<()> {
        jvmti_call!(self, SetEventCallbacks, callbacks, std::mem::size_of::<sys::jvmtiEventCallbacks>() as sys::jint)
    }

    pub fn set_environment_local_storage(self, data: *const c_void) -> Result<()> {
        jvmti_call!(self, SetEnvironmentLocalStorage, data)
    }

    pub fn phase(self) -> Result<sys::jvmtiPhase> {
        let mut phase: sys::jvmtiPhase = 0;
        jvmti_call!(self, GetPhase, &mut phase)?;
        Ok(phase)
    }

    /// `GetSystemProperty`, e.g. `java.vm.version`.
    pub fn system_property(self, name: &CStr) -> Result<String> {
        let mut value: *mut c_char = std::ptr::null_mut();
        jvmti_call!(self, GetSystemProperty, name.as_ptr(), &mut value)?;
        // SAFETY: the JVMTI call succeeded, so `value` is null or a string this environment allocated for us.
        Ok(unsafe { self.take_string(value) }.unwrap_or_default())
    }

    /// `GetTime` in nanoseconds, and `GetCurrentThreadCpuTime`.
    pub fn time_nanos(self) -> Result<i64> {
        let mut t: sys::jlong = 0;
        jvmti_call!(self, GetTime, &mut t)?;
        Ok(t)
    }

    pub fn current_thread_cpu_time(self) -> Result<i64> {
        let mut t: sys::jlong = 0;
        jvmti_call!(self, GetCurrentThreadCpuTime, &mut t)?;
        Ok(t)
    }

    pub fn error_name(self, err: JvmtiError) -> String {
        err.to_string()
    }
}

/// Decodes the JVM's modified UTF-8 (NUL as C0 80, supplementary characters as surrogate pairs) into a
/// Rust string, replacing anything malformed.
pub fn decode_modified_utf8(bytes: &[u8]) -> String {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return s.to_owned();
    }
    let mut units: Vec<u16> = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            units.push(b as u16);
            i += 1;
        } else if b & 0xE0 == 0xC0 && i + 1 < bytes.len() {
            units.push((((b & 0x1F) as u16) << 6) | (bytes[i + 1] & 0x3F) as u16);
            i += 2;
        } else if b & 0xF0 == 0xE0 && i + 2 < bytes.len() {
            units.push(
                (((b & 0x0F) as u16) << 12) | (((bytes[i + 1] & 0x3F) as u16) << 6) | (bytes[i + 2] & 0x3F) as u16,
            );
            i += 3;
        } else {
            units.push(0xFFFD);
            i += 1;
        }
    }
    String::from_utf16_lossy(&units)
}

#[cfg(test)]
mod tests {
    use super::decode_modified_utf8;

    #[test]
    fn decodes_modified_utf8_nul_and_surrogates() {
        assert_eq!(decode_modified_utf8(b"abc"), "abc");
        assert_eq!(decode_modified_utf8(&[0x61, 0xC0, 0x80, 0x62]), "a\0b");
        // U+1F600 as a CESU-8 surrogate pair.
        assert_eq!(decode_modified_utf8(&[0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]), "\u{1F600}");
    }
}
