//! Class transformation: JVMTI's retransformation functions, the memory a ClassFileLoadHook hands new
//! class bytes back in, and the JNI calls that define a class and bind its native methods.

use crate::env::{Jvmti, jvmti_call};
use crate::error::{JniError, Result};
use crate::jni::{Jni, JniResult};
use jvmti_sys as sys;
use std::ffi::{CStr, c_void};

impl Jvmti {
    /// Whether RetransformClasses may change this class (false for primitives, arrays, hidden classes…).
    pub fn is_modifiable_class(self, class: sys::jclass) -> bool {
        let mut b: sys::jboolean = 0;
        jvmti_call!(self, IsModifiableClass, class, &mut b).is_ok() && b != 0
    }

    /// Runs the ClassFileLoadHook again over already loaded classes.
    pub fn retransform_classes(self, classes: &[sys::jclass]) -> Result<()> {
        jvmti_call!(self, RetransformClasses, classes.len() as sys::jint, classes.as_ptr())
    }

    /// Copies `bytes` into JVMTI-allocated memory, which a ClassFileLoadHook returns as the new class data
    /// (the JVM frees it).
    pub fn allocate_copy(self, bytes: &[u8]) -> Result<*mut u8> {
        let mut mem: *mut u8 = std::ptr::null_mut();
        jvmti_call!(self, Allocate, bytes.len() as sys::jlong, &mut mem)?;
        // SAFETY: Allocate returned `bytes.len()` writable bytes at `mem`; the regions cannot overlap.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), mem, bytes.len()) };
        Ok(mem)
    }
}

macro_rules! jni_call {
    ($env:expr, $name:ident) => {
        $env.table().$name.expect(concat!("JNI function ", stringify!($name)))
    };
}

impl Jni {
    /// DefineClass: `name` in internal form (`java/lang/Foo`); a null `loader` is the boot loader.
    pub fn define_class(self, name: &CStr, loader: sys::jobject, bytes: &[u8]) -> JniResult<sys::jclass> {
        // SAFETY: a JNI call on the current thread's env with a live buffer of `bytes.len()` bytes.
        let c = unsafe {
            jni_call!(self, DefineClass)(
                self.raw(),
                name.as_ptr(),
                loader,
                bytes.as_ptr() as *const sys::jbyte,
                bytes.len() as sys::jsize,
            )
        };
        self.check_exception(&format!("DefineClass({})", name.to_string_lossy()))?;
        if c.is_null() {
            return Err(JniError::NotFound(name.to_string_lossy().into_owned()));
        }
        Ok(c)
    }

    /// RegisterNatives: binds `(name, signature, function)` to the class's native methods.
    pub fn register_natives(self, class: sys::jclass, methods: &[(&CStr, &CStr, *mut c_void)]) -> JniResult<()> {
        let table: Vec<sys::JNINativeMethod> = methods
            .iter()
            .map(|(n, s, f)| sys::JNINativeMethod {
                name: n.as_ptr() as *mut _,
                signature: s.as_ptr() as *mut _,
                fnPtr: *f,
            })
            .collect();
        // SAFETY: the table and its strings outlive the call; the JVM copies what it keeps.
        let rc =
            unsafe { jni_call!(self, RegisterNatives)(self.raw(), class, table.as_ptr(), table.len() as sys::jint) };
        self.check_exception("RegisterNatives")?;
        if rc != 0 { Err(JniError::Code(rc)) } else { Ok(()) }
    }
}
