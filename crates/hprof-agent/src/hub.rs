//! The event hub: one JVMTI callback table for the whole agent, fanning each event out to the
//! capabilities that subscribed to it. A capability (CPU samples, allocation sites, heap dump, monitors…)
//! implements [`Capability`] and lists its events; it never touches the callback table itself.

use crate::agent::{Agent, agent};
use crate::panic_guard::guard;
use crate::threads::ThreadRecord;
use jvmti::{Event, Jni, sys};
use std::ffi::{CStr, c_char, c_void};

/// Why a dump is being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpReason {
    /// The VM is exiting (doe=y).
    Exit,
    /// Ctrl-\ / SIGQUIT (JVMTI DataDumpRequest).
    DataDumpRequest,
    /// A command from the front end over the socket.
    Command,
}

/// A request from the front end (the `net=` socket commands of HPROF's protocol, decoded). The agent core
/// handles FORCE GC, EXIT and DUMP TRACES itself; each capability handles the commands about its data and
/// ignores the rest.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlCommand {
    /// DUMP HEAP (0x02): write a heap dump now.
    DumpHeap,
    /// ALLOC SITES (0x03): write the sites now. Flags: 0x1 incremental, 0x2 sort by allocated bytes,
    /// 0x4 force a GC first.
    AllocSites { flags: u16, cutoff: f32 },
    /// HEAP SUMMARY (0x04).
    HeapSummary,
    /// CPU SAMPLES (0x07): write the samples so far.
    CpuSamples { cutoff: f32 },
    /// CONTROL 0x1 / 0x2: allocation tracking on or off.
    AllocTracking(bool),
    /// CONTROL 0x3 / 0x4: CPU sampling on or off, for one thread (its object id in our output) or all.
    CpuSampling { thread_object_id: Option<u64>, on: bool },
    /// CONTROL 0x5: forget the CPU samples so far.
    ClearCpuSamples,
    /// CONTROL: forget the allocation sites so far.
    ResetSites,
}

/// One profiling capability. Every method has an empty default; a capability overrides the events it
/// lists in [`Capability::events`]. Callbacks run on the thread the JVM reports the event on.
#[allow(unused_variables)]
pub trait Capability: Send + Sync {
    fn name(&self) -> &'static str;

    /// The events this capability wants delivered.
    fn events(&self) -> Vec<Event>;

    /// JVMTI capabilities it needs beyond those its events imply.
    fn add_jvmti_capabilities(&self, caps: &mut sys::jvmtiCapabilities) {}

    /// After the callbacks are set, still in Agent_OnLoad: e.g. set the heap sampling interval.
    fn on_load(&self, agent: &Agent) -> Result<(), String> {
        Ok(())
    }

    fn on_vm_init(&self, agent: &Agent, jni: Jni) {}
    /// Before the final dump: stop sampling, drain buffers.
    fn on_vm_death(&self, agent: &Agent, jni: Jni) {}
    fn on_thread_start(
        &self,
        agent: &Agent,
        jni: Jni,
        thread: sys::jthread,
        record: &ThreadRecord,
        on_own_thread: bool,
    ) {
    }
    fn on_thread_end(&self, agent: &Agent, jni: Jni, thread: sys::jthread, record: &ThreadRecord) {}
    fn on_class_load(&self, agent: &Agent, jni: Jni, thread: sys::jthread, class: sys::jclass) {}
    fn on_class_prepare(&self, agent: &Agent, jni: Jni, thread: sys::jthread, class: sys::jclass) {}
    fn on_method_entry(&self, agent: &Agent, jni: Jni, thread: sys::jthread, method: sys::jmethodID) {}
    fn on_method_exit(&self, agent: &Agent, jni: Jni, thread: sys::jthread, method: sys::jmethodID) {}
    fn on_compiled_method_load(&self, agent: &Agent, method: sys::jmethodID, code_addr: *const c_void, code_size: i32) {
    }
    fn on_compiled_method_unload(&self, agent: &Agent, method: sys::jmethodID, code_addr: *const c_void) {}
    fn on_dynamic_code_generated(&self, agent: &Agent, name: &CStr, address: *const c_void, length: i32) {}
    fn on_monitor_wait(&self, agent: &Agent, jni: Jni, thread: sys::jthread, object: sys::jobject, timeout_ms: i64) {}
    fn on_monitor_waited(&self, agent: &Agent, jni: Jni, thread: sys::jthread, object: sys::jobject, timed_out: bool) {}
    fn on_monitor_contended_enter(&self, agent: &Agent, jni: Jni, thread: sys::jthread, object: sys::jobject) {}
    fn on_monitor_contended_entered(&self, agent: &Agent, jni: Jni, thread: sys::jthread, object: sys::jobject) {}
    /// GC start/finish run with the VM stopped: only raw monitors and async-safe work are allowed.
    fn on_gc_start(&self, agent: &Agent) {}
    fn on_gc_finish(&self, agent: &Agent) {}
    /// A tagged object was freed. Called for tags that are not class tags.
    fn on_object_free(&self, agent: &Agent, tag: i64) {}
    #[allow(clippy::too_many_arguments)]
    fn on_vm_object_alloc(
        &self,
        agent: &Agent,
        jni: Jni,
        thread: sys::jthread,
        object: sys::jobject,
        class: sys::jclass,
        size: i64,
    ) {
    }
    #[allow(clippy::too_many_arguments)]
    fn on_sampled_object_alloc(
        &self,
        agent: &Agent,
        jni: Jni,
        thread: sys::jthread,
        object: sys::jobject,
        class: sys::jclass,
        size: i64,
    ) {
    }

    /// A native method is being bound to `address`; a capability may redirect it by storing another
    /// function in `*new_address` (with the same signature), and call `address` itself.
    fn on_native_method_bind(
        &self,
        agent: &Agent,
        method: sys::jmethodID,
        address: *mut c_void,
        new_address: *mut *mut c_void,
    ) {
    }

    /// A class is being loaded or retransformed (ClassFileLoadHook): `data` is its class file; returning
    /// new bytes replaces it. `class_being_redefined` is null for a first load; `name` is absent for some
    /// defined-at-run-time classes.
    #[allow(clippy::too_many_arguments)]
    fn on_class_file_load(
        &self,
        agent: &Agent,
        jni: Option<Jni>,
        class_being_redefined: sys::jclass,
        loader: sys::jobject,
        name: Option<&CStr>,
        data: &[u8],
    ) -> Option<Vec<u8>> {
        None
    }

    /// Its position in a dump (HPROF's order: monitors 10, heap 20, sites 30, CPU 40), and the words the
    /// verbose "Dumping …" line uses for it. `None` if it writes nothing at dump time.
    fn dump_section(&self) -> Option<(u32, &'static str)> {
        None
    }

    /// Writes its part of a dump through `agent.output`. `jni` is present when the dumping thread is a
    /// Java thread (always, except for some socket commands handled on a native thread).
    fn write_dump(&self, agent: &Agent, jni: Option<Jni>, reason: DumpReason) {}

    /// Its report so far, for the checkpoint written every second (see [`crate::worker`]).
    fn checkpoint(&self, agent: &Agent, jni: Jni) -> Option<crate::output::Checkpoint> {
        None
    }

    /// Acts on a front-end command that concerns it; returns true if it did.
    fn handle_command(&self, agent: &Agent, jni: Option<Jni>, command: &ControlCommand) -> bool {
        false
    }
}

/// Which capabilities get which event.
pub struct EventHub {
    subscribers: Vec<Vec<usize>>,
}

impl EventHub {
    pub fn new(capabilities: &[Box<dyn Capability>]) -> EventHub {
        let mut subscribers = vec![Vec::new(); Event::COUNT];
        for (i, c) in capabilities.iter().enumerate() {
            for e in c.events() {
                if !subscribers[e.index()].contains(&i) {
                    subscribers[e.index()].push(i);
                }
            }
        }
        EventHub { subscribers }
    }

    pub fn has_subscribers(&self, event: Event) -> bool {
        !self.subscribers[event.index()].is_empty()
    }

    /// The capabilities subscribed to `event`, in registration order.
    pub fn subscribers<'a>(&'a self, agent: &'a Agent, event: Event) -> impl Iterator<Item = &'a dyn Capability> + 'a {
        self.subscribers[event.index()].iter().map(move |&i| agent.capabilities()[i].as_ref())
    }

    /// The callback table: every event the agent might enable points at its trampoline.
    pub fn callbacks() -> sys::jvmtiEventCallbacks {
        let mut cb: sys::jvmtiEventCallbacks = unsafe { std::mem::zeroed() };
        cb.VMInit = Some(vm_init);
        cb.VMDeath = Some(vm_death);
        cb.ThreadStart = Some(thread_start);
        cb.ThreadEnd = Some(thread_end);
        cb.ClassLoad = Some(class_load);
        cb.ClassPrepare = Some(class_prepare);
        cb.MethodEntry = Some(method_entry);
        cb.MethodExit = Some(method_exit);
        cb.CompiledMethodLoad = Some(compiled_method_load);
        cb.CompiledMethodUnload = Some(compiled_method_unload);
        cb.DynamicCodeGenerated = Some(dynamic_code_generated);
        cb.DataDumpRequest = Some(data_dump_request);
        cb.MonitorWait = Some(monitor_wait);
        cb.MonitorWaited = Some(monitor_waited);
        cb.MonitorContendedEnter = Some(monitor_contended_enter);
        cb.MonitorContendedEntered = Some(monitor_contended_entered);
        cb.GarbageCollectionStart = Some(gc_start);
        cb.GarbageCollectionFinish = Some(gc_finish);
        cb.ObjectFree = Some(object_free);
        cb.VMObjectAlloc = Some(vm_object_alloc);
        cb.SampledObjectAlloc = Some(sampled_object_alloc);
        cb.NativeMethodBind = Some(native_method_bind);
        cb.ClassFileLoadHook = Some(class_file_load_hook);
        cb
    }
}

// The trampolines. Each finds the agent, wraps the JNI pointer and hands over to the agent, which does the
// core bookkeeping and then calls the subscribers. A panic stops at `guard`.

unsafe extern "C" fn vm_init(_: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv, thread: sys::jthread) {
    guard(|| with_agent(|a| a.on_vm_init(unsafe { Jni::from_raw(jni) }, thread)), ())
}

unsafe extern "C" fn vm_death(_: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv) {
    guard(|| with_agent(|a| a.on_vm_death(unsafe { Jni::from_raw(jni) })), ())
}

unsafe extern "C" fn thread_start(_: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv, thread: sys::jthread) {
    guard(|| with_agent(|a| a.on_thread_start(unsafe { Jni::from_raw(jni) }, thread)), ())
}

unsafe extern "C" fn thread_end(_: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv, thread: sys::jthread) {
    guard(|| with_agent(|a| a.on_thread_end(unsafe { Jni::from_raw(jni) }, thread)), ())
}

unsafe extern "C" fn class_load(
    _: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    class: sys::jclass,
) {
    guard(
        || {
            with_agent(|a| {
                let jni = unsafe { Jni::from_raw(jni) };
                for c in a.hub().subscribers(a, Event::ClassLoad) {
                    c.on_class_load(a, jni, thread, class);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn class_prepare(
    _: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    class: sys::jclass,
) {
    guard(|| with_agent(|a| a.on_class_prepare(unsafe { Jni::from_raw(jni) }, thread, class)), ())
}

unsafe extern "C" fn method_entry(
    _: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    method: sys::jmethodID,
) {
    guard(
        || {
            with_agent(|a| {
                let jni = unsafe { Jni::from_raw(jni) };
                for c in a.hub().subscribers(a, Event::MethodEntry) {
                    c.on_method_entry(a, jni, thread, method);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn method_exit(
    _: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    method: sys::jmethodID,
    _popped_by_exception: sys::jboolean,
    _value: sys::jvalue,
) {
    guard(
        || {
            with_agent(|a| {
                let jni = unsafe { Jni::from_raw(jni) };
                for c in a.hub().subscribers(a, Event::MethodExit) {
                    c.on_method_exit(a, jni, thread, method);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn compiled_method_load(
    _: *mut sys::jvmtiEnv,
    method: sys::jmethodID,
    code_size: sys::jint,
    code_addr: *const c_void,
    _map_length: sys::jint,
    _map: *const sys::jvmtiAddrLocationMap,
    _compile_info: *const c_void,
) {
    guard(
        || {
            with_agent(|a| {
                for c in a.hub().subscribers(a, Event::CompiledMethodLoad) {
                    c.on_compiled_method_load(a, method, code_addr, code_size);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn compiled_method_unload(_: *mut sys::jvmtiEnv, method: sys::jmethodID, code_addr: *const c_void) {
    guard(
        || {
            with_agent(|a| {
                for c in a.hub().subscribers(a, Event::CompiledMethodUnload) {
                    c.on_compiled_method_unload(a, method, code_addr);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn dynamic_code_generated(
    _: *mut sys::jvmtiEnv,
    name: *const c_char,
    address: *const c_void,
    length: sys::jint,
) {
    guard(
        || {
            with_agent(|a| {
                let name = if name.is_null() { c"" } else { unsafe { CStr::from_ptr(name) } };
                for c in a.hub().subscribers(a, Event::DynamicCodeGenerated) {
                    c.on_dynamic_code_generated(a, name, address, length);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn data_dump_request(_: *mut sys::jvmtiEnv) {
    guard(|| with_agent(|a| a.on_data_dump_request()), ())
}

unsafe extern "C" fn monitor_wait(
    _: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    object: sys::jobject,
    timeout: sys::jlong,
) {
    guard(
        || {
            with_agent(|a| {
                let jni = unsafe { Jni::from_raw(jni) };
                for c in a.hub().subscribers(a, Event::MonitorWait) {
                    c.on_monitor_wait(a, jni, thread, object, timeout);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn monitor_waited(
    _: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    object: sys::jobject,
    timed_out: sys::jboolean,
) {
    guard(
        || {
            with_agent(|a| {
                let jni = unsafe { Jni::from_raw(jni) };
                for c in a.hub().subscribers(a, Event::MonitorWaited) {
                    c.on_monitor_waited(a, jni, thread, object, timed_out != 0);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn monitor_contended_enter(
    _: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    object: sys::jobject,
) {
    guard(
        || {
            with_agent(|a| {
                let jni = unsafe { Jni::from_raw(jni) };
                for c in a.hub().subscribers(a, Event::MonitorContendedEnter) {
                    c.on_monitor_contended_enter(a, jni, thread, object);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn monitor_contended_entered(
    _: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    object: sys::jobject,
) {
    guard(
        || {
            with_agent(|a| {
                let jni = unsafe { Jni::from_raw(jni) };
                for c in a.hub().subscribers(a, Event::MonitorContendedEntered) {
                    c.on_monitor_contended_entered(a, jni, thread, object);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn gc_start(_: *mut sys::jvmtiEnv) {
    guard(
        || {
            with_agent(|a| {
                for c in a.hub().subscribers(a, Event::GarbageCollectionStart) {
                    c.on_gc_start(a);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn gc_finish(_: *mut sys::jvmtiEnv) {
    guard(
        || {
            with_agent(|a| {
                for c in a.hub().subscribers(a, Event::GarbageCollectionFinish) {
                    c.on_gc_finish(a);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn object_free(_: *mut sys::jvmtiEnv, tag: sys::jlong) {
    guard(|| with_agent(|a| a.on_object_free(tag)), ())
}

unsafe extern "C" fn vm_object_alloc(
    _: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    object: sys::jobject,
    class: sys::jclass,
    size: sys::jlong,
) {
    guard(
        || {
            with_agent(|a| {
                let jni = unsafe { Jni::from_raw(jni) };
                for c in a.hub().subscribers(a, Event::VmObjectAlloc) {
                    c.on_vm_object_alloc(a, jni, thread, object, class, size);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn sampled_object_alloc(
    _: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: sys::jthread,
    object: sys::jobject,
    class: sys::jclass,
    size: sys::jlong,
) {
    guard(
        || {
            with_agent(|a| {
                let jni = unsafe { Jni::from_raw(jni) };
                for c in a.hub().subscribers(a, Event::SampledObjectAlloc) {
                    c.on_sampled_object_alloc(a, jni, thread, object, class, size);
                }
            })
        },
        (),
    )
}

unsafe extern "C" fn native_method_bind(
    _: *mut sys::jvmtiEnv,
    _jni: *mut sys::JNIEnv,
    _thread: sys::jthread,
    method: sys::jmethodID,
    address: *mut c_void,
    new_address: *mut *mut c_void,
) {
    guard(
        || {
            with_agent(|a| {
                for c in a.hub().subscribers(a, Event::NativeMethodBind) {
                    c.on_native_method_bind(a, method, address, new_address);
                }
            })
        },
        (),
    )
}

fn with_agent(f: impl FnOnce(&'static Agent)) {
    if let Some(a) = agent() {
        f(a)
    }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn class_file_load_hook(
    _: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    class_being_redefined: sys::jclass,
    loader: sys::jobject,
    name: *const c_char,
    _protection_domain: sys::jobject,
    class_data_len: sys::jint,
    class_data: *const u8,
    new_class_data_len: *mut sys::jint,
    new_class_data: *mut *mut u8,
) {
    guard(
        || {
            with_agent(|a| {
                if class_data.is_null() || class_data_len <= 0 || new_class_data.is_null() {
                    return;
                }
                let jni = if jni.is_null() { None } else { Some(unsafe { Jni::from_raw(jni) }) };
                // SAFETY: a non-null name is a NUL-terminated string the JVM keeps alive for the call.
                let name = if name.is_null() { None } else { Some(unsafe { CStr::from_ptr(name) }) };
                // SAFETY: the JVM passes `class_data_len` readable bytes for the duration of the call.
                let original = unsafe { std::slice::from_raw_parts(class_data, class_data_len as usize) };
                let mut current: Option<Vec<u8>> = None;
                for c in a.hub().subscribers(a, Event::ClassFileLoadHook) {
                    let data = current.as_deref().unwrap_or(original);
                    if let Some(new) = c.on_class_file_load(a, jni, class_being_redefined, loader, name, data) {
                        current = Some(new);
                    }
                }
                if let Some(bytes) = current
                    && let Ok(mem) = a.jvmti.allocate_copy(&bytes)
                {
                    // SAFETY: both out-pointers are valid for this callback (checked non-null above for the
                    // data pointer; the length pointer comes with it).
                    unsafe {
                        *new_class_data_len = bytes.len() as sys::jint;
                        *new_class_data = mem;
                    }
                }
            })
        },
        (),
    )
}
