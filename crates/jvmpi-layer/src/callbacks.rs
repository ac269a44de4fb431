//! The JVMTI callbacks, each turned into the JVMPI event it stands for and delivered on the thread where
//! it happened.

use crate::abi::*;
use crate::guard::guard;
use crate::layer::{Layer, deliver, layer};
use jvmti::{Jni, sys};
use std::sync::atomic::Ordering;

/// The callback table, and the events the layer always needs (VMInit, VMDeath, thread start and end).
pub fn install(layer: &Layer) -> Result<(), String> {
    // SAFETY: an all-None callback table is valid.
    let mut cb: sys::jvmtiEventCallbacks = unsafe { std::mem::zeroed() };
    cb.VMInit = Some(vm_init);
    cb.VMDeath = Some(vm_death);
    cb.ThreadStart = Some(thread_start);
    cb.ThreadEnd = Some(thread_end);
    cb.ClassPrepare = Some(class_prepare);
    cb.ClassFileLoadHook = Some(class_file_load_hook);
    cb.SampledObjectAlloc = Some(sampled_object_alloc);
    cb.VMObjectAlloc = Some(vm_object_alloc);
    cb.ObjectFree = Some(object_free);
    cb.MethodEntry = Some(method_entry);
    cb.MethodExit = Some(method_exit);
    cb.CompiledMethodLoad = Some(compiled_method_load);
    cb.CompiledMethodUnload = Some(compiled_method_unload);
    cb.MonitorContendedEnter = Some(monitor_contended_enter);
    cb.MonitorContendedEntered = Some(monitor_contended_entered);
    cb.MonitorWait = Some(monitor_wait);
    cb.MonitorWaited = Some(monitor_waited);
    cb.GarbageCollectionStart = Some(gc_start);
    cb.GarbageCollectionFinish = Some(gc_finish);
    cb.DataDumpRequest = Some(data_dump_request);
    layer.jvmti.set_event_callbacks(&cb).map_err(|e| format!("SetEventCallbacks failed: {e}"))?;
    for e in [jvmti::Event::VmInit, jvmti::Event::VmDeath, jvmti::Event::ThreadStart, jvmti::Event::ThreadEnd] {
        layer.jvmti.set_event_enabled(e, true, std::ptr::null_mut()).map_err(|err| format!("{e:?}: {err}"))?;
    }
    Ok(())
}

/// Runs `f` with the layer and the thread's JNI, for a callback on a Java thread.
fn on_thread(jni: *mut sys::JNIEnv, f: impl FnOnce(&'static Layer, Jni)) {
    guard(
        || {
            if let Some(l) = layer()
                && !jni.is_null()
            {
                // SAFETY: the JVM passes the current thread's JNIEnv to its callbacks.
                f(l, unsafe { Jni::from_raw(jni) })
            }
        },
        (),
    )
}

/// A simple per-thread event: the thread is defined first, then the event is filled and sent.
fn send_simple(l: &Layer, jni: Jni, thread: sys::jthread, event_type: sys::jint, fill: impl FnOnce(&mut JVMPI_Event)) {
    if !l.is_enabled(event_type) {
        return;
    }
    if !crate::threads::ensure_started(l, jni, thread) {
        return;
    }
    let mut ev = JVMPI_Event::new(event_type, jni.raw());
    fill(&mut ev);
    deliver(&mut ev, false);
}

unsafe extern "C" fn vm_init(_env: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv, thread: sys::jthread) {
    on_thread(jni, |l, jni| {
        l.live.store(true, Ordering::Release);
        crate::control::apply_at_vm_init(l);
        crate::heap_figures::init();
        crate::threads::current(l, jni, thread);
        crate::threads::ensure_started(l, jni, thread);
        crate::classes::announce_loaded(l, jni);
        if l.is_enabled(JVMPI_EVENT_OBJECT_ALLOC) {
            crate::alloc::prime_current_thread(jni);
        }
        send_simple(l, jni, thread, JVMPI_EVENT_JVM_INIT_DONE, |_| {});
    })
}

unsafe extern "C" fn vm_death(_env: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv) {
    on_thread(jni, |l, jni| {
        send_simple(l, jni, std::ptr::null_mut(), JVMPI_EVENT_JVM_SHUT_DOWN, |_| {});
        l.shut_down.store(true, Ordering::Release);
    })
}

unsafe extern "C" fn thread_start(_env: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv, thread: sys::jthread) {
    on_thread(jni, |l, jni| {
        // The record names the thread by its JNIEnv in dumps and thread functions, whatever the agent enabled.
        crate::threads::current(l, jni, thread);
        crate::threads::ensure_started(l, jni, thread);
    })
}

unsafe extern "C" fn thread_end(_env: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv, thread: sys::jthread) {
    on_thread(jni, |l, jni| crate::threads::end(l, jni, thread))
}

unsafe extern "C" fn class_prepare(
    _env: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    class: sys::jclass,
) {
    on_thread(jni, |l, jni| {
        if l.is_enabled(JVMPI_EVENT_CLASS_LOAD) && crate::threads::ensure_started(l, jni, thread) {
            crate::classes::ensure_announced(l, jni, class);
        }
    })
}

/// CLASS_LOAD_HOOK: the agent may replace the class file; its new bytes must come from `malloc_f`, which
/// allocates through JVMTI as ClassFileLoadHook requires.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn class_file_load_hook(
    _env: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    _class_being_redefined: sys::jclass,
    _loader: sys::jobject,
    _name: *const std::ffi::c_char,
    _protection_domain: sys::jobject,
    class_data_len: sys::jint,
    class_data: *const std::ffi::c_uchar,
    new_class_data_len: *mut sys::jint,
    new_class_data: *mut *mut std::ffi::c_uchar,
) {
    guard(
        || {
            let Some(l) = layer() else { return };
            if !l.is_enabled(JVMPI_EVENT_CLASS_LOAD_HOOK) {
                return;
            }
            let mut ev = JVMPI_Event::new(JVMPI_EVENT_CLASS_LOAD_HOOK, jni);
            ev.u.class_load_hook = ClassLoadHook {
                class_data: class_data as *mut _,
                class_data_len,
                new_class_data: class_data as *mut _,
                new_class_data_len: class_data_len,
                malloc_f: Some(jvmti_malloc),
            };
            deliver(&mut ev, false);
            // SAFETY: reading back the fields the agent may have changed.
            let hook = unsafe { ev.u.class_load_hook };
            if !std::ptr::eq(hook.new_class_data, class_data) && !hook.new_class_data.is_null() {
                // SAFETY: JVMTI's out-parameters; the buffer came from malloc_f, i.e. JVMTI Allocate.
                unsafe {
                    *new_class_data_len = hook.new_class_data_len;
                    *new_class_data = hook.new_class_data;
                }
            }
        },
        (),
    )
}

unsafe extern "C" fn jvmti_malloc(size: std::ffi::c_uint) -> *mut std::ffi::c_void {
    guard(
        || {
            let Some(l) = layer() else { return std::ptr::null_mut() };
            let env = l.jvmti.raw();
            let mut mem: *mut std::ffi::c_uchar = std::ptr::null_mut();
            // SAFETY: JVMTI Allocate with an out-parameter.
            let rc = unsafe {
                match (**env).Allocate {
                    Some(f) => f(env, size as sys::jlong, &mut mem),
                    None => sys::JVMTI_ERROR_NOT_AVAILABLE,
                }
            };
            if rc == sys::JVMTI_ERROR_NONE { mem.cast() } else { std::ptr::null_mut() }
        },
        std::ptr::null_mut(),
    )
}

unsafe extern "C" fn sampled_object_alloc(
    _env: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    object: sys::jobject,
    class: sys::jclass,
    size: sys::jlong,
) {
    on_thread(jni, |l, jni| crate::alloc::on_alloc(l, jni, thread, object, class, size, true))
}

unsafe extern "C" fn vm_object_alloc(
    _env: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    object: sys::jobject,
    class: sys::jclass,
    size: sys::jlong,
) {
    on_thread(jni, |l, jni| crate::alloc::on_alloc(l, jni, thread, object, class, size, false))
}

/// A tagged object died: CLASS_UNLOAD for a class, OBJECT_FREE otherwise. JVMTI sends this on a VM
/// service thread without a JNIEnv, so env_id is null.
unsafe extern "C" fn object_free(_env: *mut sys::jvmtiEnv, tag: sys::jlong) {
    guard(
        || {
            let Some(l) = layer() else { return };
            if crate::classes::take_class_tag(tag) {
                if l.is_enabled(JVMPI_EVENT_CLASS_UNLOAD) {
                    let mut ev = JVMPI_Event::new(JVMPI_EVENT_CLASS_UNLOAD, std::ptr::null_mut());
                    ev.u.class_unload = ClassUnload { class_id: crate::ids::as_id(tag) };
                    deliver(&mut ev, false);
                }
            } else if l.is_enabled(JVMPI_EVENT_OBJECT_FREE) {
                let mut ev = JVMPI_Event::new(JVMPI_EVENT_OBJECT_FREE, std::ptr::null_mut());
                ev.u.obj_free = ObjFree { obj_id: crate::ids::as_id(tag) };
                deliver(&mut ev, false);
            }
        },
        (),
    )
}

unsafe extern "C" fn method_entry(
    _env: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    method: sys::jmethodID,
) {
    on_thread(jni, |l, jni| {
        send_simple(l, jni, thread, JVMPI_EVENT_METHOD_ENTRY, |ev| ev.u.method = Method { method_id: method });
        if l.is_enabled(JVMPI_EVENT_METHOD_ENTRY2) {
            let receiver = receiver_of(l, method);
            let obj_id = crate::ids::id_of(l, receiver);
            if !receiver.is_null() {
                jni.delete_local_ref(receiver);
            }
            send_simple(l, jni, thread, JVMPI_EVENT_METHOD_ENTRY2, |ev| {
                ev.u.method_entry2 = MethodEntry2 { method_id: method, obj_id }
            });
        }
    })
}

/// `this` of the method just entered on the current thread; null for static and native methods.
fn receiver_of(l: &Layer, method: sys::jmethodID) -> sys::jobject {
    let is_static = l.jvmti.method_modifiers(method).map(|m| m & 0x0008 != 0).unwrap_or(true);
    if is_static {
        return std::ptr::null_mut();
    }
    let env = l.jvmti.raw();
    let mut this: sys::jobject = std::ptr::null_mut();
    // SAFETY: GetLocalInstance on the current thread's top frame, with an out-parameter.
    let rc = unsafe {
        match (**env).GetLocalInstance {
            Some(f) => f(env, std::ptr::null_mut(), 0, &mut this),
            None => sys::JVMTI_ERROR_NOT_AVAILABLE,
        }
    };
    if rc == sys::JVMTI_ERROR_NONE { this } else { std::ptr::null_mut() }
}

unsafe extern "C" fn method_exit(
    _env: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    method: sys::jmethodID,
    _by_exception: sys::jboolean,
    _value: sys::jvalue,
) {
    on_thread(jni, |l, jni| {
        send_simple(l, jni, thread, JVMPI_EVENT_METHOD_EXIT, |ev| ev.u.method = Method { method_id: method })
    })
}

/// COMPILED_METHOD_LOAD, with the line table built from JVMTI's address → bytecode-index map.
unsafe extern "C" fn compiled_method_load(
    _env: *mut sys::jvmtiEnv,
    method: sys::jmethodID,
    code_size: sys::jint,
    code_addr: *const std::ffi::c_void,
    map_length: sys::jint,
    map: *const sys::jvmtiAddrLocationMap,
    _compile_info: *const std::ffi::c_void,
) {
    guard(
        || {
            let Some(l) = layer() else { return };
            if !l.is_enabled(JVMPI_EVENT_COMPILED_METHOD_LOAD) {
                return;
            }
            let lines = l.jvmti.line_number_table(method).unwrap_or_default();
            let mut table: Vec<JVMPI_Lineno> = Vec::new();
            if !map.is_null() && map_length > 0 {
                // SAFETY: JVMTI passes `map_length` entries.
                let entries = unsafe { std::slice::from_raw_parts(map, map_length as usize) };
                for e in entries {
                    if let Some(line) = lines.line_of(e.location) {
                        let offset = (e.start_address as usize).wrapping_sub(code_addr as usize) as i32;
                        table.push(JVMPI_Lineno { offset, lineno: line });
                    }
                }
            }
            let jni = l.current_jni().map(|j| j.raw()).unwrap_or(std::ptr::null_mut());
            let mut ev = JVMPI_Event::new(JVMPI_EVENT_COMPILED_METHOD_LOAD, jni);
            ev.u.compiled_method_load = CompiledMethodLoad {
                method_id: method,
                code_addr: code_addr as *mut _,
                code_size,
                lineno_table_size: table.len() as i32,
                lineno_table: table.as_mut_ptr(),
            };
            deliver(&mut ev, false);
        },
        (),
    )
}

unsafe extern "C" fn compiled_method_unload(
    _env: *mut sys::jvmtiEnv,
    method: sys::jmethodID,
    _code_addr: *const std::ffi::c_void,
) {
    guard(
        || {
            let Some(l) = layer() else { return };
            if l.is_enabled(JVMPI_EVENT_COMPILED_METHOD_UNLOAD) {
                let jni = l.current_jni().map(|j| j.raw()).unwrap_or(std::ptr::null_mut());
                let mut ev = JVMPI_Event::new(JVMPI_EVENT_COMPILED_METHOD_UNLOAD, jni);
                ev.u.compiled_method_unload = CompiledMethodUnload { method_id: method };
                deliver(&mut ev, false);
            }
        },
        (),
    )
}

fn monitor_event(jni: *mut sys::JNIEnv, thread: sys::jthread, object: sys::jobject, event_type: sys::jint) {
    on_thread(jni, |l, jni| {
        if l.is_enabled(event_type) {
            let id = crate::ids::id_of(l, object);
            send_simple(l, jni, thread, event_type, |ev| ev.u.monitor = Monitor { object: id });
        }
    })
}

unsafe extern "C" fn monitor_contended_enter(
    _env: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    object: sys::jobject,
) {
    monitor_event(jni, thread, object, JVMPI_EVENT_MONITOR_CONTENDED_ENTER)
}

unsafe extern "C" fn monitor_contended_entered(
    _env: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    object: sys::jobject,
) {
    monitor_event(jni, thread, object, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED)
}

unsafe extern "C" fn monitor_wait(
    _env: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    object: sys::jobject,
    timeout: sys::jlong,
) {
    on_thread(jni, |l, jni| {
        if let Some(r) = crate::threads::current(l, jni, thread) {
            r.wait_began.store(l.jvmti.time_nanos().unwrap_or(0), Ordering::Relaxed);
        }
        if l.is_enabled(JVMPI_EVENT_MONITOR_WAIT) {
            let id = crate::ids::id_of(l, object);
            send_simple(l, jni, thread, JVMPI_EVENT_MONITOR_WAIT, |ev| {
                ev.u.monitor_wait = MonitorWait { object: id, timeout }
            });
        }
    })
}

/// MONITOR_WAITED's timeout is the time the thread waited, in milliseconds.
unsafe extern "C" fn monitor_waited(
    _env: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    object: sys::jobject,
    _timed_out: sys::jboolean,
) {
    on_thread(jni, |l, jni| {
        if !l.is_enabled(JVMPI_EVENT_MONITOR_WAITED) {
            return;
        }
        let began = crate::threads::current(l, jni, thread).map(|r| r.wait_began.load(Ordering::Relaxed)).unwrap_or(0);
        let now = l.jvmti.time_nanos().unwrap_or(began);
        let waited_ms = if began > 0 { (now - began).max(0) / 1_000_000 } else { 0 };
        let id = crate::ids::id_of(l, object);
        send_simple(l, jni, thread, JVMPI_EVENT_MONITOR_WAITED, |ev| {
            ev.u.monitor_wait = MonitorWait { object: id, timeout: waited_ms }
        });
    })
}

unsafe extern "C" fn gc_start(_env: *mut sys::jvmtiEnv) {
    guard(crate::gc::on_start, ())
}

unsafe extern "C" fn gc_finish(_env: *mut sys::jvmtiEnv) {
    guard(crate::gc::on_finish, ())
}

/// Ctrl-\ (SIGQUIT): JVMTI's DataDumpRequest, on the JVM's signal thread.
unsafe extern "C" fn data_dump_request(_env: *mut sys::jvmtiEnv) {
    guard(
        || {
            let Some(l) = layer() else { return };
            if l.is_enabled(JVMPI_EVENT_DATA_DUMP_REQUEST) {
                let jni = l.current_jni();
                if let Some(j) = jni {
                    crate::threads::ensure_started(l, j, std::ptr::null_mut());
                }
                let mut ev = JVMPI_Event::new(
                    JVMPI_EVENT_DATA_DUMP_REQUEST,
                    jni.map(|j| j.raw()).unwrap_or(std::ptr::null_mut()),
                );
                deliver(&mut ev, false);
            }
        },
        (),
    )
}
