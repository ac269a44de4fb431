//! The JVMTI callbacks, each turned into the JVMPI event it stands for and delivered on the thread where
//! it happened.

use crate::abi::*;
use crate::guard::guard;
use crate::layer::{Layer, deliver, layer};
use jvmti::{
    CapabilityFlag, ClassFileLoadHookArgs, CompiledMethodLoadArgs, Event, EventHandler, EventHost, EventHub,
    EventHubBuilder, Jni, Jvmti, MethodExitArgs, Need, SampledObjectAllocArgs, VmObjectAllocArgs, sys,
};
use std::sync::atomic::Ordering;

/// The layer's subscription to the jvmti crate's event hub.
pub struct JvmpiEvents;

pub static HANDLER: JvmpiEvents = JvmpiEvents;

/// Where the hub's trampolines find the hub and the layer.
pub struct Host;

impl EventHost for Host {
    type Context = Layer;

    fn hub() -> Option<(&'static EventHub<Layer>, &'static Layer)> {
        Some((crate::event_hub::get()?.0, layer()?))
    }
}

/// Subscribes to every JVMTI event JVMPI may need (on at start: VMInit, VMDeath, thread start and end;
/// the rest when the agent enables a JVMPI event), asks for the capabilities (all but local variable access,
/// which `local_access` decides), and installs the callbacks.
pub fn install(layer: &Layer) -> Result<(), String> {
    let mut builder = EventHubBuilder::new();
    let later = |e: Event| e.off().if_available();
    let id = builder.subscribe(
        &HANDLER,
        [
            Event::VmInit.on(),
            Event::VmDeath.on(),
            Event::ThreadStart.on(),
            Event::ThreadEnd.on(),
            later(Event::ClassPrepare),
            later(Event::ClassFileLoadHook),
            later(Event::SampledObjectAlloc),
            later(Event::VmObjectAlloc),
            later(Event::ObjectFree),
            later(Event::MethodEntry),
            later(Event::MethodExit),
            later(Event::CompiledMethodLoad),
            later(Event::CompiledMethodUnload),
            later(Event::MonitorContendedEnter),
            later(Event::MonitorContendedEntered),
            later(Event::MonitorWait),
            later(Event::MonitorWaited),
            later(Event::GarbageCollectionStart),
            later(Event::GarbageCollectionFinish),
            later(Event::DataDumpRequest),
        ],
    );
    builder.need(CapabilityFlag::CanTagObjects, Need::Required);
    for cap in [
        CapabilityFlag::CanGetSourceFileName,
        CapabilityFlag::CanGetLineNumbers,
        CapabilityFlag::CanSuspend,
        CapabilityFlag::CanGetThreadCpuTime,
        CapabilityFlag::CanGetCurrentThreadCpuTime,
        CapabilityFlag::CanGetMonitorInfo,
        CapabilityFlag::CanGetOwnedMonitorInfo,
        CapabilityFlag::CanGetCurrentContendedMonitor,
        CapabilityFlag::CanGenerateAllClassHookEvents,
    ] {
        builder.need(cap, Need::IfAvailable);
    }
    let hub = builder.build();
    hub.request_capabilities(layer.jvmti).map_err(|e| format!("JVMTI capabilities: {e}"))?;
    if !hub.available(Event::SampledObjectAlloc) {
        return Err("this JVM cannot report every allocation (JVMTI SampledObjectAlloc); JVMPI needs it".into());
    }
    crate::event_hub::set(hub, id)?;
    let (hub, _) = crate::event_hub::get().ok_or("no hub")?;
    hub.install::<Host>(layer.jvmti).map_err(|e| format!("installing the JVMTI callbacks: {e}"))
}

/// Runs `f` with the layer and the thread's JNI, for an event on a Java thread.
fn on_thread(jni: Jni, f: impl FnOnce(&'static Layer, Jni)) {
    guard(
        || {
            if let Some(l) = layer()
                && !jni.raw().is_null()
            {
                f(l, jni)
            }
        },
        (),
    )
}

/// Runs `f` with the layer, for an event JVMTI may send on a thread without a JNIEnv.
fn on_any_thread(f: impl FnOnce(&'static Layer)) {
    guard(
        || {
            if let Some(l) = layer() {
                f(l)
            }
        },
        (),
    )
}

/// Fills and delivers one event; `env` is its env_id (null: the event belongs to no thread).
fn fill_and_deliver(event_type: sys::jint, env: *mut sys::JNIEnv, fill: impl FnOnce(&mut JVMPI_Event)) {
    let mut ev = JVMPI_Event::new(event_type, env);
    fill(&mut ev);
    deliver(&mut ev, false);
}

/// An event not tied to a thread's definition, sent if the agent enabled it.
fn send(l: &Layer, event_type: sys::jint, env: *mut sys::JNIEnv, fill: impl FnOnce(&mut JVMPI_Event)) {
    if l.is_enabled(event_type) {
        fill_and_deliver(event_type, env, fill);
    }
}

/// A simple per-thread event: the thread is defined first, then the event is filled and sent.
fn send_simple(l: &Layer, jni: Jni, thread: sys::jthread, event_type: sys::jint, fill: impl FnOnce(&mut JVMPI_Event)) {
    if l.is_enabled(event_type) && crate::threads::ensure_started(l, jni, thread) {
        fill_and_deliver(event_type, jni.raw(), fill);
    }
}

/// The env_id of an event JVMTI sends without a JNIEnv: the current thread's, or null.
fn current_env(l: &Layer) -> *mut sys::JNIEnv {
    l.current_jni().map(|j| j.raw()).unwrap_or(std::ptr::null_mut())
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

/// MONITOR_CONTENDED_ENTER and _ENTERED.
fn monitor_event(jni: Jni, thread: sys::jthread, object: sys::jobject, event_type: sys::jint) {
    on_thread(jni, |l, jni| {
        if l.is_enabled(event_type) {
            let id = crate::ids::id_of(l, object);
            send_simple(l, jni, thread, event_type, |ev| ev.u.monitor = Monitor { object: id });
        }
    })
}

/// Each JVMTI event turned into the JVMPI event it stands for.
impl EventHandler<Layer> for JvmpiEvents {
    fn vm_init(&self, _: &Layer, _: Jvmti, jni: Jni, thread: sys::jthread) {
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

    fn vm_death(&self, _: &Layer, _: Jvmti, jni: Jni) {
        on_thread(jni, |l, jni| {
            send_simple(l, jni, std::ptr::null_mut(), JVMPI_EVENT_JVM_SHUT_DOWN, |_| {});
            l.shut_down.store(true, Ordering::Release);
        })
    }

    fn thread_start(&self, _: &Layer, _: Jvmti, jni: Jni, thread: sys::jthread) {
        on_thread(jni, |l, jni| {
            // The record names the thread by its JNIEnv in dumps and thread functions, whatever the agent enabled.
            crate::threads::current(l, jni, thread);
            crate::threads::ensure_started(l, jni, thread);
        })
    }

    fn thread_end(&self, _: &Layer, _: Jvmti, jni: Jni, thread: sys::jthread) {
        on_thread(jni, |l, jni| crate::threads::end(l, jni, thread))
    }

    fn class_prepare(&self, _: &Layer, _: Jvmti, jni: Jni, thread: sys::jthread, class: sys::jclass) {
        on_thread(jni, |l, jni| {
            if l.is_enabled(JVMPI_EVENT_CLASS_LOAD) && crate::threads::ensure_started(l, jni, thread) {
                crate::classes::ensure_announced(l, jni, class);
            }
        })
    }

    /// CLASS_LOAD_HOOK: the agent may replace the class file; its new bytes must come from `malloc_f`, which
    /// allocates through JVMTI as ClassFileLoadHook requires.
    fn class_file_load_hook(&self, _: &Layer, _: Jvmti, args: ClassFileLoadHookArgs) {
        let ClassFileLoadHookArgs { jni, class_data_len, class_data, new_class_data_len, new_class_data, .. } = args;
        on_any_thread(|l| {
            if !l.is_enabled(JVMPI_EVENT_CLASS_LOAD_HOOK) {
                return;
            }
            let mut ev = JVMPI_Event::new(JVMPI_EVENT_CLASS_LOAD_HOOK, jni.raw());
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
        })
    }

    fn sampled_object_alloc(&self, _: &Layer, _: Jvmti, args: SampledObjectAllocArgs) {
        let SampledObjectAllocArgs { jni, thread, object, class, size } = args;
        on_thread(jni, |l, jni| crate::alloc::on_alloc(l, jni, thread, object, class, size, true))
    }

    fn vm_object_alloc(&self, _: &Layer, _: Jvmti, args: VmObjectAllocArgs) {
        let VmObjectAllocArgs { jni, thread, object, class, size } = args;
        on_thread(jni, |l, jni| crate::alloc::on_alloc(l, jni, thread, object, class, size, false))
    }

    /// A tagged object died: CLASS_UNLOAD for a class, OBJECT_FREE otherwise. JVMTI sends this on a VM
    /// service thread without a JNIEnv, so env_id is null.
    fn object_free(&self, _: &Layer, _: Jvmti, tag: sys::jlong) {
        on_any_thread(|l| {
            let id = crate::ids::as_id(tag);
            if crate::classes::take_class_tag(tag) {
                send(l, JVMPI_EVENT_CLASS_UNLOAD, std::ptr::null_mut(), |ev| {
                    ev.u.class_unload = ClassUnload { class_id: id }
                });
            } else {
                send(l, JVMPI_EVENT_OBJECT_FREE, std::ptr::null_mut(), |ev| ev.u.obj_free = ObjFree { obj_id: id });
            }
        })
    }

    fn method_entry(&self, _: &Layer, _: Jvmti, jni: Jni, thread: sys::jthread, method: sys::jmethodID) {
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

    fn method_exit(&self, _: &Layer, _: Jvmti, args: MethodExitArgs) {
        let MethodExitArgs { jni, thread, method, .. } = args;
        on_thread(jni, |l, jni| {
            send_simple(l, jni, thread, JVMPI_EVENT_METHOD_EXIT, |ev| ev.u.method = Method { method_id: method })
        })
    }

    /// COMPILED_METHOD_LOAD, with the line table built from JVMTI's address → bytecode-index map.
    fn compiled_method_load(&self, _: &Layer, _: Jvmti, args: CompiledMethodLoadArgs) {
        let CompiledMethodLoadArgs { method, code_size, code_addr, map_length, map, .. } = args;
        on_any_thread(|l| {
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
            fill_and_deliver(JVMPI_EVENT_COMPILED_METHOD_LOAD, current_env(l), |ev| {
                ev.u.compiled_method_load = CompiledMethodLoad {
                    method_id: method,
                    code_addr: code_addr as *mut _,
                    code_size,
                    lineno_table_size: table.len() as i32,
                    lineno_table: table.as_mut_ptr(),
                }
            });
        })
    }

    fn compiled_method_unload(&self, _: &Layer, _: Jvmti, method: sys::jmethodID, _: *const std::ffi::c_void) {
        on_any_thread(|l| {
            send(l, JVMPI_EVENT_COMPILED_METHOD_UNLOAD, current_env(l), |ev| {
                ev.u.compiled_method_unload = CompiledMethodUnload { method_id: method }
            })
        })
    }

    fn monitor_contended_enter(&self, _: &Layer, _: Jvmti, jni: Jni, thread: sys::jthread, object: sys::jobject) {
        monitor_event(jni, thread, object, JVMPI_EVENT_MONITOR_CONTENDED_ENTER)
    }

    fn monitor_contended_entered(&self, _: &Layer, _: Jvmti, jni: Jni, thread: sys::jthread, object: sys::jobject) {
        monitor_event(jni, thread, object, JVMPI_EVENT_MONITOR_CONTENDED_ENTERED)
    }

    fn monitor_wait(
        &self,
        _: &Layer,
        _: Jvmti,
        jni: Jni,
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
    fn monitor_waited(
        &self,
        _: &Layer,
        _: Jvmti,
        jni: Jni,
        thread: sys::jthread,
        object: sys::jobject,
        _timed_out: sys::jboolean,
    ) {
        on_thread(jni, |l, jni| {
            if !l.is_enabled(JVMPI_EVENT_MONITOR_WAITED) {
                return;
            }
            let began =
                crate::threads::current(l, jni, thread).map(|r| r.wait_began.load(Ordering::Relaxed)).unwrap_or(0);
            let now = l.jvmti.time_nanos().unwrap_or(began);
            let waited_ms = if began > 0 { (now - began).max(0) / 1_000_000 } else { 0 };
            let id = crate::ids::id_of(l, object);
            send_simple(l, jni, thread, JVMPI_EVENT_MONITOR_WAITED, |ev| {
                ev.u.monitor_wait = MonitorWait { object: id, timeout: waited_ms }
            });
        })
    }

    fn garbage_collection_start(&self, _: &Layer, _: Jvmti) {
        guard(crate::gc::on_start, ())
    }

    fn garbage_collection_finish(&self, _: &Layer, _: Jvmti) {
        guard(crate::gc::on_finish, ())
    }

    /// Ctrl-\ (SIGQUIT): JVMTI's DataDumpRequest, on the JVM's signal thread.
    fn data_dump_request(&self, _: &Layer, _: Jvmti) {
        on_any_thread(|l| {
            if !l.is_enabled(JVMPI_EVENT_DATA_DUMP_REQUEST) {
                return;
            }
            let jni = l.current_jni();
            if let Some(j) = jni {
                crate::threads::ensure_started(l, j, std::ptr::null_mut());
            }
            fill_and_deliver(
                JVMPI_EVENT_DATA_DUMP_REQUEST,
                jni.map(|j| j.raw()).unwrap_or(std::ptr::null_mut()),
                |_| {},
            );
        })
    }
}
