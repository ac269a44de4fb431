//! [`Event`]: a JVMPI_Event decoded by its type, borrowing the VM's data for the length of the call.

use jvmpi_sys::*;
use std::ffi::{CStr, c_char};

/// What an allocated object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    Instance,
    /// An array of references; the event's class is the element class.
    ObjectArray,
    /// An array of a primitive type, named by its JVMPI type code (JVMPI_INT…).
    PrimitiveArray(i32),
}

/// A method of a CLASS_LOAD.
#[derive(Debug, Clone, Copy)]
pub struct Method<'a> {
    pub name: &'a str,
    pub signature: &'a str,
    /// First and last source lines; -1 for native and abstract methods.
    pub lines: (i32, i32),
    pub id: jvmti_sys::jmethodID,
}

/// A field of a CLASS_LOAD.
#[derive(Debug, Clone, Copy)]
pub struct Field<'a> {
    pub name: &'a str,
    pub signature: &'a str,
}

/// JVMPI_EVENT_CLASS_LOAD's data.
#[derive(Debug, Clone)]
pub struct ClassLoad<'a> {
    pub name: &'a str,
    pub source_name: &'a str,
    pub num_interfaces: i32,
    pub methods: Vec<Method<'a>>,
    pub statics: Vec<Field<'a>>,
    pub instances: Vec<Field<'a>>,
    pub class_id: jobjectID,
}

/// An event; `env` is the thread it happened on (null for GC and OBJECT_FREE).
#[derive(Debug, Clone)]
pub enum Event<'a> {
    ClassLoad {
        env: *mut jvmti_sys::JNIEnv,
        class: ClassLoad<'a>,
    },
    ClassUnload {
        class_id: jobjectID,
    },
    ObjectAlloc {
        env: *mut jvmti_sys::JNIEnv,
        class_id: jobjectID,
        kind: ObjectKind,
        size: i32,
        object: jobjectID,
    },
    ObjectFree {
        object: jobjectID,
    },
    ThreadStart {
        env: *mut jvmti_sys::JNIEnv,
        name: &'a str,
        group: &'a str,
        thread_id: jobjectID,
    },
    ThreadEnd {
        env: *mut jvmti_sys::JNIEnv,
    },
    MethodEntry {
        env: *mut jvmti_sys::JNIEnv,
        method: jvmti_sys::jmethodID,
    },
    MethodExit {
        env: *mut jvmti_sys::JNIEnv,
        method: jvmti_sys::jmethodID,
    },
    GcStart,
    GcFinish {
        used_objects: i64,
        used_object_space: i64,
        total_object_space: i64,
    },
    JvmInitDone {
        env: *mut jvmti_sys::JNIEnv,
    },
    JvmShutDown {
        env: *mut jvmti_sys::JNIEnv,
    },
    DataDumpRequest,
    MonitorContendedEnter {
        env: *mut jvmti_sys::JNIEnv,
        object: jobjectID,
    },
    MonitorContendedEntered {
        env: *mut jvmti_sys::JNIEnv,
        object: jobjectID,
    },
    MonitorWait {
        env: *mut jvmti_sys::JNIEnv,
        object: jobjectID,
        millis: i64,
    },
    MonitorWaited {
        env: *mut jvmti_sys::JNIEnv,
        object: jobjectID,
        millis: i64,
    },
    /// The dump buffer, in the specification's format.
    HeapDump {
        level: i32,
        data: &'a [u8],
    },
    MonitorDump {
        data: &'a [u8],
    },
    ObjectDump {
        data: &'a [u8],
    },
    /// Any other event, by its JVMPI number.
    Other {
        event_type: i32,
    },
}

/// # Safety
/// `p` must be null or a NUL-terminated string that outlives `'a`.
unsafe fn text<'a>(p: *const c_char) -> &'a str {
    // SAFETY: non-null, and the caller guarantees a NUL-terminated string that outlives 'a.
    if p.is_null() { "" } else { unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("?") }
}

/// # Safety
/// `p` must point to `n` elements (or `n` be 0) that outlive `'a`.
unsafe fn slice<'a, T>(p: *const T, n: i32) -> &'a [T] {
    // SAFETY: non-null with n > 0, and the caller guarantees n elements that outlive 'a.
    if p.is_null() || n <= 0 { &[] } else { unsafe { std::slice::from_raw_parts(p, n as usize) } }
}

/// # Safety
/// `begin..end` must be one buffer that outlives `'a`.
unsafe fn bytes<'a>(begin: *const c_char, end: *const c_char) -> &'a [u8] {
    if begin.is_null() || end < begin {
        return &[];
    }
    // SAFETY: the caller guarantees one buffer from `begin` to `end` (end >= begin checked) that outlives 'a.
    unsafe { std::slice::from_raw_parts(begin.cast(), end.offset_from(begin) as usize) }
}

impl<'a> Event<'a> {
    /// # Safety
    /// `raw` must be an event the VM is delivering, whose union member matches its type.
    pub(crate) unsafe fn decode(raw: &'a JVMPI_Event) -> Event<'a> {
        let env = raw.env_id;
        let u = &raw.u;
        // SAFETY: (the whole match) each arm reads the union member of its event type, as the VM filled it.
        unsafe {
            match raw.event_type & !JVMPI_REQUESTED_EVENT {
                JVMPI_EVENT_CLASS_LOAD => {
                    let c = &u.class_load;
                    let fields = |p, n| {
                        slice::<JVMPI_Field>(p, n)
                            .iter()
                            .map(|f| Field { name: text(f.field_name), signature: text(f.field_signature) })
                            .collect()
                    };
                    Event::ClassLoad {
                        env,
                        class: ClassLoad {
                            name: text(c.class_name),
                            source_name: text(c.source_name),
                            num_interfaces: c.num_interfaces,
                            methods: slice(c.methods, c.num_methods)
                                .iter()
                                .map(|m| Method {
                                    name: text(m.method_name),
                                    signature: text(m.method_signature),
                                    lines: (m.start_lineno, m.end_lineno),
                                    id: m.method_id,
                                })
                                .collect(),
                            statics: fields(c.statics, c.num_static_fields),
                            instances: fields(c.instances, c.num_instance_fields),
                            class_id: c.class_id,
                        },
                    }
                }
                JVMPI_EVENT_CLASS_UNLOAD => Event::ClassUnload { class_id: u.class_unload.class_id },
                JVMPI_EVENT_OBJECT_ALLOC => {
                    let a = &u.obj_alloc;
                    let kind = match a.is_array {
                        JVMPI_NORMAL_OBJECT => ObjectKind::Instance,
                        JVMPI_CLASS => ObjectKind::ObjectArray,
                        t => ObjectKind::PrimitiveArray(t),
                    };
                    Event::ObjectAlloc { env, class_id: a.class_id, kind, size: a.size, object: a.obj_id }
                }
                JVMPI_EVENT_OBJECT_FREE => Event::ObjectFree { object: u.obj_free.obj_id },
                JVMPI_EVENT_THREAD_START => {
                    let t = &u.thread_start;
                    Event::ThreadStart {
                        env: t.thread_env_id,
                        name: text(t.thread_name),
                        group: text(t.group_name),
                        thread_id: t.thread_id,
                    }
                }
                JVMPI_EVENT_THREAD_END => Event::ThreadEnd { env },
                JVMPI_EVENT_METHOD_ENTRY => Event::MethodEntry { env, method: u.method.method_id },
                JVMPI_EVENT_METHOD_EXIT => Event::MethodExit { env, method: u.method.method_id },
                JVMPI_EVENT_GC_START => Event::GcStart,
                JVMPI_EVENT_GC_FINISH => Event::GcFinish {
                    used_objects: u.gc_info.used_objects,
                    used_object_space: u.gc_info.used_object_space,
                    total_object_space: u.gc_info.total_object_space,
                },
                JVMPI_EVENT_JVM_INIT_DONE => Event::JvmInitDone { env },
                JVMPI_EVENT_JVM_SHUT_DOWN => Event::JvmShutDown { env },
                JVMPI_EVENT_DATA_DUMP_REQUEST => Event::DataDumpRequest,
                JVMPI_EVENT_MONITOR_CONTENDED_ENTER => Event::MonitorContendedEnter { env, object: u.monitor.object },
                JVMPI_EVENT_MONITOR_CONTENDED_ENTERED => {
                    Event::MonitorContendedEntered { env, object: u.monitor.object }
                }
                JVMPI_EVENT_MONITOR_WAIT => {
                    Event::MonitorWait { env, object: u.monitor_wait.object, millis: u.monitor_wait.timeout }
                }
                JVMPI_EVENT_MONITOR_WAITED => {
                    Event::MonitorWaited { env, object: u.monitor_wait.object, millis: u.monitor_wait.timeout }
                }
                JVMPI_EVENT_HEAP_DUMP => {
                    Event::HeapDump { level: u.heap_dump.dump_level, data: bytes(u.heap_dump.begin, u.heap_dump.end) }
                }
                JVMPI_EVENT_MONITOR_DUMP => {
                    Event::MonitorDump { data: bytes(u.monitor_dump.begin, u.monitor_dump.end) }
                }
                JVMPI_EVENT_OBJECT_DUMP => {
                    Event::ObjectDump { data: slice(u.object_dump.data.cast::<u8>(), u.object_dump.data_len) }
                }
                t => Event::Other { event_type: t },
            }
        }
    }
}
