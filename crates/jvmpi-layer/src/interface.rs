//! The `JVMPI_Interface` handed to the agent, and its functions: thin `extern "C"` entries, each inside a
//! panic guard, calling the module that does the work.

use crate::abi::*;
use crate::guard::guard;
use crate::layer::layer;
use jvmti::sys::{JNIEnv, jboolean, jint, jlong, jmethodID, jobject};
use std::cell::UnsafeCell;
use std::ffi::{CStr, c_char, c_void};

struct InterfaceCell(UnsafeCell<JVMPI_Interface>);

// SAFETY: the agent writes NotifyEvent once, in JVM_OnLoad, before it enables events; we write `version`
// in GetEnv before handing the pointer out. Reads of NotifyEvent are volatile.
unsafe impl Sync for InterfaceCell {}

static INTERFACE: InterfaceCell = InterfaceCell(UnsafeCell::new(JVMPI_Interface {
    version: JVMPI_VERSION_1_2,
    NotifyEvent: None,
    EnableEvent: Some(enable_event),
    DisableEvent: Some(disable_event),
    RequestEvent: Some(request_event),
    GetCallTrace: Some(get_call_trace),
    ProfilerExit: Some(profiler_exit),
    RawMonitorCreate: Some(raw_monitor_create),
    RawMonitorEnter: Some(raw_monitor_enter),
    RawMonitorExit: Some(raw_monitor_exit),
    RawMonitorWait: Some(raw_monitor_wait),
    RawMonitorNotifyAll: Some(raw_monitor_notify_all),
    RawMonitorDestroy: Some(raw_monitor_destroy),
    GetCurrentThreadCpuTime: Some(get_current_thread_cpu_time),
    SuspendThread: Some(suspend_thread),
    ResumeThread: Some(resume_thread),
    GetThreadStatus: Some(get_thread_status),
    ThreadHasRun: Some(thread_has_run),
    CreateSystemThread: Some(create_system_thread),
    SetThreadLocalStorage: Some(set_thread_local_storage),
    GetThreadLocalStorage: Some(get_thread_local_storage),
    DisableGC: Some(disable_gc),
    EnableGC: Some(enable_gc),
    RunGC: Some(run_gc),
    GetThreadObject: Some(get_thread_object),
    GetMethodClass: Some(get_method_class),
    jobjectID2jobject: Some(jobject_id_to_jobject),
    jobject2jobjectID: Some(jobject_to_jobject_id),
    SuspendThreadList: Some(suspend_thread_list),
    ResumeThreadList: Some(resume_thread_list),
}));

/// The interface for `GetEnv(…, version)`, with `version` recorded in it; `None` before the layer is up.
pub fn for_version(version: jint) -> Option<*mut JVMPI_Interface> {
    layer()?;
    let p = INTERFACE.0.get();
    // SAFETY: see InterfaceCell; the version is written before the pointer is returned.
    unsafe { std::ptr::addr_of_mut!((*p).version).write_volatile(version) };
    Some(p)
}

/// The interface table itself, for the layer to find the agent's `NotifyEvent` in (see `Layer::deliver`).
pub fn table() -> *mut JVMPI_Interface {
    INTERFACE.0.get()
}

unsafe extern "C" fn enable_event(event_type: jint, arg: *mut c_void) -> jint {
    guard(|| crate::control::enable(event_type, arg), JVMPI_FAIL)
}

unsafe extern "C" fn disable_event(event_type: jint, arg: *mut c_void) -> jint {
    guard(|| crate::control::disable(event_type, arg), JVMPI_FAIL)
}

unsafe extern "C" fn request_event(event_type: jint, arg: *mut c_void) -> jint {
    guard(|| crate::control::request(event_type, arg), JVMPI_FAIL)
}

unsafe extern "C" fn get_call_trace(trace: *mut JVMPI_CallTrace, depth: jint) {
    guard(|| crate::calltrace::fill(trace, depth), ())
}

unsafe extern "C" fn profiler_exit(code: jint) {
    // Flush C stdio first: an agent that printed its report with printf expects to see it.
    // SAFETY: exit runs the process's atexit handlers and ends it, as ProfilerExit specifies.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::exit(code)
    }
}

unsafe extern "C" fn raw_monitor_create(name: *mut c_char) -> JVMPI_RawMonitor {
    guard(
        || {
            let name = if name.is_null() {
                "JVMPI raw monitor".to_owned()
            } else {
                // SAFETY: the agent passes a NUL-terminated name.
                unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
            };
            crate::monitors::create(&name)
        },
        std::ptr::null_mut(),
    )
}

unsafe extern "C" fn raw_monitor_enter(m: JVMPI_RawMonitor) {
    guard(|| crate::monitors::enter(m), ())
}

unsafe extern "C" fn raw_monitor_exit(m: JVMPI_RawMonitor) {
    guard(|| crate::monitors::exit(m), ())
}

unsafe extern "C" fn raw_monitor_wait(m: JVMPI_RawMonitor, ms: jlong) {
    guard(|| crate::monitors::wait(m, ms), ())
}

unsafe extern "C" fn raw_monitor_notify_all(m: JVMPI_RawMonitor) {
    guard(|| crate::monitors::notify_all(m), ())
}

unsafe extern "C" fn raw_monitor_destroy(m: JVMPI_RawMonitor) {
    guard(|| crate::monitors::destroy(m), ())
}

unsafe extern "C" fn get_current_thread_cpu_time() -> jlong {
    guard(|| layer().and_then(|l| l.jvmti.current_thread_cpu_time().ok()).unwrap_or(0), 0)
}

unsafe extern "C" fn suspend_thread(env: *mut JNIEnv) {
    guard(
        || {
            let _ = crate::threads::suspend(env);
        },
        (),
    )
}

unsafe extern "C" fn resume_thread(env: *mut JNIEnv) {
    guard(
        || {
            let _ = crate::threads::resume(env);
        },
        (),
    )
}

unsafe extern "C" fn suspend_thread_list(count: jint, list: *mut *mut JNIEnv, results: *mut jint) {
    guard(|| crate::threads::for_each_in_list(count, list, results, crate::threads::suspend), ())
}

unsafe extern "C" fn resume_thread_list(count: jint, list: *mut *mut JNIEnv, results: *mut jint) {
    guard(|| crate::threads::for_each_in_list(count, list, results, crate::threads::resume), ())
}

unsafe extern "C" fn get_thread_status(env: *mut JNIEnv) -> jint {
    guard(|| crate::threads::status(env), JVMPI_THREAD_RUNNABLE)
}

unsafe extern "C" fn thread_has_run(env: *mut JNIEnv) -> jboolean {
    guard(|| crate::threads::has_run(env) as jboolean, 0)
}

unsafe extern "C" fn create_system_thread(
    name: *mut c_char,
    priority: jint,
    f: Option<unsafe extern "C" fn(*mut c_void)>,
) -> jint {
    guard(
        || {
            let name = if name.is_null() {
                "JVMPI agent thread".to_owned()
            } else {
                // SAFETY: the agent passes a NUL-terminated name.
                unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned()
            };
            match f {
                Some(f) => crate::system_thread::create(&name, priority, f),
                None => jvmti::sys::JNI_ERR,
            }
        },
        jvmti::sys::JNI_ERR,
    )
}

unsafe extern "C" fn set_thread_local_storage(env: *mut JNIEnv, ptr: *mut c_void) {
    guard(|| crate::threads::set_local_storage(env, ptr), ())
}

unsafe extern "C" fn get_thread_local_storage(env: *mut JNIEnv) -> *mut c_void {
    guard(|| crate::threads::local_storage(env), std::ptr::null_mut())
}

unsafe extern "C" fn disable_gc() {
    guard(crate::gc::disable, ())
}

unsafe extern "C" fn enable_gc() {
    guard(crate::gc::enable, ())
}

unsafe extern "C" fn run_gc() {
    guard(crate::gc::run, ())
}

unsafe extern "C" fn get_thread_object(env: *mut JNIEnv) -> jobjectID {
    guard(|| crate::threads::thread_object_id(env), std::ptr::null_mut())
}

unsafe extern "C" fn get_method_class(method: jmethodID) -> jobjectID {
    guard(
        || {
            let Some(l) = layer() else { return std::ptr::null_mut() };
            match l.jvmti.method_declaring_class(method) {
                Ok(class) => crate::ids::id_of(l, class),
                Err(_) => std::ptr::null_mut(),
            }
        },
        std::ptr::null_mut(),
    )
}

unsafe extern "C" fn jobject_id_to_jobject(id: jobjectID) -> jobject {
    guard(|| layer().map(|l| crate::ids::object_of(l, id)).unwrap_or(std::ptr::null_mut()), std::ptr::null_mut())
}

unsafe extern "C" fn jobject_to_jobject_id(obj: jobject) -> jobjectID {
    guard(
        || match layer() {
            Some(l) if !obj.is_null() => crate::ids::id_of(l, obj),
            _ => std::ptr::null_mut(),
        },
        std::ptr::null_mut(),
    )
}
