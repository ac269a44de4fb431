//! Makes the probes' natives findable when the agent was attached to a running JVM.
//!
//! A native method of a boot class is looked up in libjava, then through `ClassLoader.findNative` in the
//! libraries the boot loader loaded, then in the agents given at the JVM's start; an agent loaded by
//! `hprof attach` is not among those (JDK 17: UnsatisfiedLinkError). So the agent's own library is
//! loaded once more, by the boot loader's `NativeLibraries` (the same file, already mapped: the loader
//! only records it), after which `findNative` finds `Java_java_lang_HprofCpuTimes_enter/exit` in it.
//! `jdk.internal.loader.BootLoader.getNativeLibraries().loadLibrary(Class, File)` has this shape on JDK
//! 17, 21 and 25; JNI calls are not held to module boundaries. `System.load` would do the same for the
//! caller's loader, but with no Java caller it is a restricted method on JDK 24+ and warns.

use jvmti::Jni;
use jvmti::sys;
use std::ffi::CString;

/// The path of the library this code is in.
fn own_library() -> Result<String, String> {
    let here = super::Java_java_lang_HprofCpuTimes_enter as *const () as usize;
    hotspot::loader::library_path(here).ok_or_else(|| "dladdr does not know the agent library".into())
}

/// Loads the agent library into the boot loader's native libraries.
pub fn load_into_boot_loader(jni: Jni) -> Result<(), String> {
    let path = own_library()?;
    let c = |s: &str| CString::new(s).expect("no NUL");
    fn err(what: &'static str) -> impl Fn(jvmti::JniError) -> String {
        move |e| format!("{what}: {e}")
    }
    jni.with_local_frame(8, || {
        let boot = jni.find_class(&c("jdk/internal/loader/BootLoader")).map_err(err("BootLoader"))?;
        let get = jni
            .static_method_id(boot, &c("getNativeLibraries"), &c("()Ljdk/internal/loader/NativeLibraries;"))
            .map_err(err("BootLoader.getNativeLibraries"))?;
        let libraries = jni.call_static_object(boot, get, &[]).map_err(err("BootLoader.getNativeLibraries"))?;
        let libraries_class = jni.object_class(libraries);
        let load = jni
            .method_id(
                libraries_class,
                &c("loadLibrary"),
                &c("(Ljava/lang/Class;Ljava/io/File;)Ljdk/internal/loader/NativeLibrary;"),
            )
            .map_err(err("NativeLibraries.loadLibrary"))?;
        let file_class = jni.find_class(&c("java/io/File")).map_err(err("File"))?;
        let file_new = jni.method_id(file_class, &c("<init>"), &c("(Ljava/lang/String;)V")).map_err(err("File"))?;
        let name = jni.new_string(&path).map_err(err("path"))?;
        let file = jni.new_object(file_class, file_new, &[sys::jvalue { l: name }]).map_err(err("File"))?;
        let loaded = jni
            .call_object(libraries, load, &[sys::jvalue { l: std::ptr::null_mut() }, sys::jvalue { l: file }])
            .map_err(err("NativeLibraries.loadLibrary"))?;
        if loaded.is_null() {
            return Err(format!("the boot loader did not load {path}"));
        }
        Ok(())
    })
}
