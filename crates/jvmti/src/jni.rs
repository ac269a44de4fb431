use crate::error::JniError;
use jvmti_sys as sys;
use std::ffi::{CStr, CString};

/// A JNI environment, valid on the thread it was given to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jni(*mut sys::JNIEnv);

pub type JniResult<T> = std::result::Result<T, JniError>;

macro_rules! jni_fn {
    ($env:expr, $name:ident) => {
        // JNI's table has no empty slots in any version we run on; a missing one is a broken JVM.
        $env.table().$name.expect(concat!("JNI function ", stringify!($name)))
    };
}

impl Jni {
    /// # Safety
    /// `raw` must be the JNIEnv of the current thread.
    pub unsafe fn from_raw(raw: *mut sys::JNIEnv) -> Jni {
        Jni(raw)
    }

    pub fn raw(self) -> *mut sys::JNIEnv {
        self.0
    }

    pub(crate) fn table(self) -> &'static sys::JNINativeInterface_ {
        // SAFETY: a `Jni` holds the current thread's JNIEnv (made only by the unsafe `from_raw`), valid while
        // the thread is attached, which outlives every use of a Jni handle; the function table it points to
        // is HotSpot's process-wide static one.
        unsafe { &**self.0 }
    }

    /// Clears a pending exception and reports it as an error naming `what`.
    fn check(self, what: &str) -> JniResult<()> {
        // SAFETY: JNI ExceptionCheck and ExceptionClear through this thread's env (see `Jni`); both may be called
        // with an exception pending.
        unsafe {
            if jni_fn!(self, ExceptionCheck)(self.0) != 0 {
                jni_fn!(self, ExceptionClear)(self.0);
                return Err(JniError::Exception(what.to_owned()));
            }
        }
        Ok(())
    }

    pub(crate) fn check_exception(self, what: &str) -> JniResult<()> {
        self.check(what)
    }

    pub fn exception_pending(self) -> bool {
        // SAFETY: JNI ExceptionCheck through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, ExceptionCheck)(self.0) != 0 }
    }

    pub fn exception_clear(self) {
        // SAFETY: JNI ExceptionClear through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, ExceptionClear)(self.0) }
    }

    pub fn find_class(self, name: &CStr) -> JniResult<sys::jclass> {
        // SAFETY: JNI FindClass through this thread's env (see `Jni`), with the caller's references and IDs.
        let c = unsafe { jni_fn!(self, FindClass)(self.0, name.as_ptr()) };
        self.check(&format!("FindClass({})", name.to_string_lossy()))?;
        if c.is_null() {
            return Err(JniError::NotFound(name.to_string_lossy().into_owned()));
        }
        Ok(c)
    }

    /// An ID JNI looked up, with JNI's exception as the error and a null as [`JniError::NotFound`].
    fn found<T>(self, id: *mut T, call: &str, what: &str, name: &CStr, sig: &CStr) -> JniResult<*mut T> {
        self.check(call)?;
        if id.is_null() {
            return Err(JniError::NotFound(format!("{what}{} {}", name.to_string_lossy(), sig.to_string_lossy())));
        }
        Ok(id)
    }

    pub fn method_id(self, class: sys::jclass, name: &CStr, sig: &CStr) -> JniResult<sys::jmethodID> {
        // SAFETY: JNI GetMethodID through this thread's env (see `Jni`), with the caller's references and IDs.
        let m = unsafe { jni_fn!(self, GetMethodID)(self.0, class, name.as_ptr(), sig.as_ptr()) };
        self.found(m, "GetMethodID", "method ", name, sig)
    }

    pub fn field_id(self, class: sys::jclass, name: &CStr, sig: &CStr) -> JniResult<sys::jfieldID> {
        // SAFETY: JNI GetFieldID through this thread's env (see `Jni`), with the caller's references and IDs.
        let f = unsafe { jni_fn!(self, GetFieldID)(self.0, class, name.as_ptr(), sig.as_ptr()) };
        self.found(f, "GetFieldID", "field ", name, sig)
    }

    /// A `long` instance field (reading a field runs no Java code).
    pub fn long_field(self, obj: sys::jobject, field: sys::jfieldID) -> i64 {
        // SAFETY: JNI GetLongField through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, GetLongField)(self.0, obj, field) }
    }

    /// A reference instance field, as a local reference (reading a field runs no Java code).
    pub fn object_field(self, obj: sys::jobject, field: sys::jfieldID) -> sys::jobject {
        // SAFETY: JNI GetObjectField through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, GetObjectField)(self.0, obj, field) }
    }

    pub fn static_method_id(self, class: sys::jclass, name: &CStr, sig: &CStr) -> JniResult<sys::jmethodID> {
        // SAFETY: JNI GetStaticMethodID through this thread's env (see `Jni`), with the caller's references and IDs.
        let m = unsafe { jni_fn!(self, GetStaticMethodID)(self.0, class, name.as_ptr(), sig.as_ptr()) };
        self.found(m, "GetStaticMethodID", "static method ", name, sig)
    }

    pub fn static_field_id(self, class: sys::jclass, name: &CStr, sig: &CStr) -> JniResult<sys::jfieldID> {
        // SAFETY: JNI GetStaticFieldID through this thread's env (see `Jni`), with the caller's references and IDs.
        let f = unsafe { jni_fn!(self, GetStaticFieldID)(self.0, class, name.as_ptr(), sig.as_ptr()) };
        self.found(f, "GetStaticFieldID", "static field ", name, sig)
    }

    /// The value of the static reference field `name` (of type `sig`) of an initialized class.
    pub fn static_object_field(self, class: sys::jclass, name: &CStr, sig: &CStr) -> JniResult<sys::jobject> {
        let f = self.static_field_id(class, name, sig)?;
        // SAFETY: JNI GetStaticObjectField through this thread's env (see `Jni`), with the caller's references and IDs.
        let v = unsafe { jni_fn!(self, GetStaticObjectField)(self.0, class, f) };
        self.check("GetStaticObjectField")?;
        Ok(v)
    }

    pub fn new_object(self, class: sys::jclass, ctor: sys::jmethodID, args: &[sys::jvalue]) -> JniResult<sys::jobject> {
        // SAFETY: JNI NewObjectA through this thread's env (see `Jni`), with the caller's references and IDs.
        let o = unsafe { jni_fn!(self, NewObjectA)(self.0, class, ctor, args.as_ptr()) };
        self.check("NewObject")?;
        Ok(o)
    }

    pub fn call_static_void(self, class: sys::jclass, method: sys::jmethodID, args: &[sys::jvalue]) -> JniResult<()> {
        // SAFETY: JNI CallStaticVoidMethodA through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, CallStaticVoidMethodA)(self.0, class, method, args.as_ptr()) };
        self.check("CallStaticVoidMethod")
    }

    pub fn call_static_long(self, class: sys::jclass, method: sys::jmethodID, args: &[sys::jvalue]) -> JniResult<i64> {
        // SAFETY: JNI CallStaticLongMethodA through this thread's env (see `Jni`), with the caller's references and IDs.
        let v = unsafe { jni_fn!(self, CallStaticLongMethodA)(self.0, class, method, args.as_ptr()) };
        self.check("CallStaticLongMethod")?;
        Ok(v)
    }

    pub fn call_static_int(self, class: sys::jclass, method: sys::jmethodID, args: &[sys::jvalue]) -> JniResult<i32> {
        // SAFETY: JNI CallStaticIntMethodA through this thread's env (see `Jni`), with the caller's references and IDs.
        let v = unsafe { jni_fn!(self, CallStaticIntMethodA)(self.0, class, method, args.as_ptr()) };
        self.check("CallStaticIntMethod")?;
        Ok(v)
    }

    pub fn call_static_object(
        self,
        class: sys::jclass,
        method: sys::jmethodID,
        args: &[sys::jvalue],
    ) -> JniResult<sys::jobject> {
        // SAFETY: JNI CallStaticObjectMethodA through this thread's env (see `Jni`), with the caller's references and IDs.
        let v = unsafe { jni_fn!(self, CallStaticObjectMethodA)(self.0, class, method, args.as_ptr()) };
        self.check("CallStaticObjectMethod")?;
        Ok(v)
    }

    pub fn call_object(
        self,
        obj: sys::jobject,
        method: sys::jmethodID,
        args: &[sys::jvalue],
    ) -> JniResult<sys::jobject> {
        // SAFETY: JNI CallObjectMethodA through this thread's env (see `Jni`), with the caller's references and IDs.
        let v = unsafe { jni_fn!(self, CallObjectMethodA)(self.0, obj, method, args.as_ptr()) };
        self.check("CallObjectMethod")?;
        Ok(v)
    }

    pub fn call_void(self, obj: sys::jobject, method: sys::jmethodID, args: &[sys::jvalue]) -> JniResult<()> {
        // SAFETY: JNI CallVoidMethodA through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, CallVoidMethodA)(self.0, obj, method, args.as_ptr()) };
        self.check("CallVoidMethod")
    }

    pub fn call_int(self, obj: sys::jobject, method: sys::jmethodID, args: &[sys::jvalue]) -> JniResult<i32> {
        // SAFETY: JNI CallIntMethodA through this thread's env (see `Jni`), with the caller's references and IDs.
        let v = unsafe { jni_fn!(self, CallIntMethodA)(self.0, obj, method, args.as_ptr()) };
        self.check("CallIntMethod")?;
        Ok(v)
    }

    pub fn call_long(self, obj: sys::jobject, method: sys::jmethodID, args: &[sys::jvalue]) -> JniResult<i64> {
        // SAFETY: JNI CallLongMethodA through this thread's env (see `Jni`), with the caller's references and IDs.
        let v = unsafe { jni_fn!(self, CallLongMethodA)(self.0, obj, method, args.as_ptr()) };
        self.check("CallLongMethod")?;
        Ok(v)
    }

    pub fn new_string(self, s: &str) -> JniResult<sys::jstring> {
        let c = CString::new(s.replace('\0', "")).unwrap_or_default();
        // SAFETY: JNI NewStringUTF through this thread's env (see `Jni`), with the caller's references and IDs.
        let o = unsafe { jni_fn!(self, NewStringUTF)(self.0, c.as_ptr()) };
        self.check("NewStringUTF")?;
        Ok(o)
    }

    /// Copies a Java string out as Rust UTF-8.
    pub fn string_value(self, s: sys::jstring) -> JniResult<String> {
        if s.is_null() {
            return Ok(String::new());
        }
        // SAFETY: JNI's string functions through this thread's env, on the caller's live jstring; `chars` is
        // checked for null, read as the NUL-terminated modified UTF-8 JNI returns, and released once.
        unsafe {
            let chars = jni_fn!(self, GetStringUTFChars)(self.0, s, std::ptr::null_mut());
            self.check("GetStringUTFChars")?;
            if chars.is_null() {
                return Err(JniError::Code(sys::JNI_ENOMEM));
            }
            let out = crate::env::decode_modified_utf8(CStr::from_ptr(chars).to_bytes());
            jni_fn!(self, ReleaseStringUTFChars)(self.0, s, chars);
            Ok(out)
        }
    }

    pub fn object_class(self, obj: sys::jobject) -> sys::jclass {
        // SAFETY: JNI GetObjectClass through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, GetObjectClass)(self.0, obj) }
    }

    pub fn superclass(self, class: sys::jclass) -> sys::jclass {
        // SAFETY: JNI GetSuperclass through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, GetSuperclass)(self.0, class) }
    }

    pub fn is_same_object(self, a: sys::jobject, b: sys::jobject) -> bool {
        // SAFETY: JNI IsSameObject through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, IsSameObject)(self.0, a, b) != 0 }
    }

    pub fn new_global_ref(self, obj: sys::jobject) -> sys::jobject {
        // SAFETY: JNI NewGlobalRef through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, NewGlobalRef)(self.0, obj) }
    }

    pub fn delete_global_ref(self, obj: sys::jobject) {
        if !obj.is_null() {
            // SAFETY: JNI DeleteGlobalRef through this thread's env (see `Jni`), with the caller's references and IDs.
            unsafe { jni_fn!(self, DeleteGlobalRef)(self.0, obj) }
        }
    }

    pub fn new_weak_global_ref(self, obj: sys::jobject) -> sys::jweak {
        // SAFETY: JNI NewWeakGlobalRef through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, NewWeakGlobalRef)(self.0, obj) }
    }

    pub fn delete_weak_global_ref(self, obj: sys::jweak) {
        if !obj.is_null() {
            // SAFETY: JNI DeleteWeakGlobalRef through this thread's env (see `Jni`), with the caller's references and IDs.
            unsafe { jni_fn!(self, DeleteWeakGlobalRef)(self.0, obj) }
        }
    }

    pub fn delete_local_ref(self, obj: sys::jobject) {
        if !obj.is_null() {
            // SAFETY: JNI DeleteLocalRef through this thread's env (see `Jni`), with the caller's references and IDs.
            unsafe { jni_fn!(self, DeleteLocalRef)(self.0, obj) }
        }
    }

    /// Runs `f` inside a local frame so that the local references it creates are freed on return.
    pub fn with_local_frame<T>(self, capacity: i32, f: impl FnOnce() -> T) -> T {
        // SAFETY: JNI PushLocalFrame through this thread's env (see `Jni`), with the caller's references and IDs.
        let pushed = unsafe { jni_fn!(self, PushLocalFrame)(self.0, capacity) } == 0;
        let out = f();
        if pushed {
            // SAFETY: JNI PopLocalFrame through this thread's env (see `Jni`), with the caller's references and IDs.
            unsafe { jni_fn!(self, PopLocalFrame)(self.0, std::ptr::null_mut()) };
        } else {
            self.exception_clear();
        }
        out
    }

    /// A new `byte[len]` (a local reference), or the error that stopped it (e.g. OutOfMemoryError).
    pub fn new_byte_array(self, len: i32) -> JniResult<sys::jbyteArray> {
        // SAFETY: JNI NewByteArray through this thread's env (see `Jni`), with the caller's references and IDs.
        let array = unsafe { jni_fn!(self, NewByteArray)(self.0, len) };
        self.check("NewByteArray")?;
        Ok(array)
    }

    /// A new array of `len` references of class `element_class`, all null (a local reference).
    pub fn new_object_array(self, len: i32, element_class: sys::jclass) -> JniResult<sys::jobjectArray> {
        // SAFETY: JNI NewObjectArray through this thread's env (see `Jni`), with the caller's references and IDs.
        let array = unsafe { jni_fn!(self, NewObjectArray)(self.0, len, element_class, std::ptr::null_mut()) };
        self.check("NewObjectArray")?;
        Ok(array)
    }

    pub fn set_object_array_element(self, array: sys::jobjectArray, index: i32, value: sys::jobject) -> JniResult<()> {
        // SAFETY: JNI SetObjectArrayElement through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, SetObjectArrayElement)(self.0, array, index, value) };
        self.check("SetObjectArrayElement")
    }

    /// A new `int[]` holding `values` (a local reference).
    pub fn new_int_array(self, values: &[i32]) -> JniResult<sys::jintArray> {
        let len = values.len() as i32;
        // SAFETY: JNI NewIntArray through this thread's env (see `Jni`), with the caller's references and IDs.
        let array = unsafe { jni_fn!(self, NewIntArray)(self.0, len) };
        self.check("NewIntArray")?;
        // SAFETY: JNI SetIntArrayRegion through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, SetIntArrayRegion)(self.0, array, 0, len, values.as_ptr()) };
        self.check("SetIntArrayRegion")?;
        Ok(array)
    }

    /// Element `index` of an object array (a local reference; null for a null element).
    pub fn object_array_element(self, array: sys::jobjectArray, index: i32) -> JniResult<sys::jobject> {
        // SAFETY: JNI GetObjectArrayElement through this thread's env (see `Jni`), with the caller's references.
        let element = unsafe { jni_fn!(self, GetObjectArrayElement)(self.0, array, index) };
        self.check("GetObjectArrayElement")?;
        Ok(element)
    }

    /// The whole of a `long[]` (`array` must be one), copied out.
    pub fn long_array(self, array: sys::jlongArray) -> JniResult<Vec<i64>> {
        let len = self.array_length(array).max(0);
        let mut out = vec![0i64; len as usize];
        // SAFETY: JNI GetLongArrayRegion through this thread's env (see `Jni`), into a buffer of `len` longs.
        unsafe { jni_fn!(self, GetLongArrayRegion)(self.0, array, 0, len, out.as_mut_ptr()) };
        self.check("GetLongArrayRegion")?;
        Ok(out)
    }

    pub fn array_length(self, array: sys::jarray) -> i32 {
        // SAFETY: JNI GetArrayLength through this thread's env (see `Jni`), with the caller's references and IDs.
        unsafe { jni_fn!(self, GetArrayLength)(self.0, array) }
    }
}
