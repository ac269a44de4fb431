//! The JVMPI ABI of JDK 1.4, mirrored from `include/jvmpi.h`: event numbers, constants, the event structure
//! with its union, and the interface's function table in its original order. `crates/jvmpi-layer/tests/abi_layout.rs`
//! compiles a C program against the header and compares every size and offset with these.

#![allow(non_camel_case_types, non_snake_case)]

use jvmti_sys::{JNIEnv, jboolean, jint, jlong, jmethodID, jobject};
use std::ffi::{c_char, c_int, c_uchar, c_uint, c_void};

pub type jobjectID = *mut c_void;
pub type JVMPI_RawMonitor = *mut c_void;

pub const JVMPI_VERSION_1: jint = 0x1000_0001;
pub const JVMPI_VERSION_1_1: jint = 0x1000_0002;
pub const JVMPI_VERSION_1_2: jint = 0x1000_0003;

pub const JVMPI_EVENT_METHOD_ENTRY: jint = 1;
pub const JVMPI_EVENT_METHOD_ENTRY2: jint = 2;
pub const JVMPI_EVENT_METHOD_EXIT: jint = 3;
pub const JVMPI_EVENT_OBJECT_ALLOC: jint = 4;
pub const JVMPI_EVENT_OBJECT_FREE: jint = 5;
pub const JVMPI_EVENT_OBJECT_MOVE: jint = 6;
pub const JVMPI_EVENT_COMPILED_METHOD_LOAD: jint = 7;
pub const JVMPI_EVENT_COMPILED_METHOD_UNLOAD: jint = 8;
pub const JVMPI_EVENT_INSTRUCTION_START: jint = 9;
pub const JVMPI_EVENT_THREAD_START: jint = 33;
pub const JVMPI_EVENT_THREAD_END: jint = 34;
pub const JVMPI_EVENT_CLASS_LOAD_HOOK: jint = 35;
pub const JVMPI_EVENT_HEAP_DUMP: jint = 37;
pub const JVMPI_EVENT_JNI_GLOBALREF_ALLOC: jint = 38;
pub const JVMPI_EVENT_JNI_GLOBALREF_FREE: jint = 39;
pub const JVMPI_EVENT_JNI_WEAK_GLOBALREF_ALLOC: jint = 40;
pub const JVMPI_EVENT_JNI_WEAK_GLOBALREF_FREE: jint = 41;
pub const JVMPI_EVENT_CLASS_LOAD: jint = 42;
pub const JVMPI_EVENT_CLASS_UNLOAD: jint = 43;
pub const JVMPI_EVENT_DATA_DUMP_REQUEST: jint = 44;
pub const JVMPI_EVENT_DATA_RESET_REQUEST: jint = 45;
pub const JVMPI_EVENT_JVM_INIT_DONE: jint = 46;
pub const JVMPI_EVENT_JVM_SHUT_DOWN: jint = 47;
pub const JVMPI_EVENT_ARENA_NEW: jint = 48;
pub const JVMPI_EVENT_ARENA_DELETE: jint = 49;
pub const JVMPI_EVENT_OBJECT_DUMP: jint = 50;
pub const JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER: jint = 51;
pub const JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED: jint = 52;
pub const JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT: jint = 53;
pub const JVMPI_EVENT_MONITOR_CONTENDED_ENTER: jint = 54;
pub const JVMPI_EVENT_MONITOR_CONTENDED_ENTERED: jint = 55;
pub const JVMPI_EVENT_MONITOR_CONTENDED_EXIT: jint = 56;
pub const JVMPI_EVENT_MONITOR_WAIT: jint = 57;
pub const JVMPI_EVENT_MONITOR_WAITED: jint = 58;
pub const JVMPI_EVENT_MONITOR_DUMP: jint = 59;
pub const JVMPI_EVENT_GC_START: jint = 60;
pub const JVMPI_EVENT_GC_FINISH: jint = 61;
pub const JVMPI_MAX_EVENT_TYPE_VAL: jint = 61;

pub const JVMPI_REQUESTED_EVENT: jint = 0x1000_0000;

pub const JVMPI_SUCCESS: jint = 0;
pub const JVMPI_NOT_AVAILABLE: jint = 1;
pub const JVMPI_FAIL: jint = -1;

pub const JVMPI_THREAD_RUNNABLE: jint = 1;
pub const JVMPI_THREAD_MONITOR_WAIT: jint = 2;
pub const JVMPI_THREAD_CONDVAR_WAIT: jint = 3;
pub const JVMPI_THREAD_SUSPENDED: jint = 0x8000;
pub const JVMPI_THREAD_INTERRUPTED: jint = 0x4000;

pub const JVMPI_MINIMUM_PRIORITY: jint = 1;
pub const JVMPI_MAXIMUM_PRIORITY: jint = 10;
pub const JVMPI_NORMAL_PRIORITY: jint = 5;

pub const JVMPI_NORMAL_OBJECT: jint = 0;
pub const JVMPI_CLASS: jint = 2;
pub const JVMPI_BOOLEAN: jint = 4;
pub const JVMPI_CHAR: jint = 5;
pub const JVMPI_FLOAT: jint = 6;
pub const JVMPI_DOUBLE: jint = 7;
pub const JVMPI_BYTE: jint = 8;
pub const JVMPI_SHORT: jint = 9;
pub const JVMPI_INT: jint = 10;
pub const JVMPI_LONG: jint = 11;

pub const JVMPI_MONITOR_JAVA: u8 = 0x01;
pub const JVMPI_MONITOR_RAW: u8 = 0x02;

pub const JVMPI_GC_ROOT_UNKNOWN: u8 = 0xff;
pub const JVMPI_GC_ROOT_JNI_GLOBAL: u8 = 0x01;
pub const JVMPI_GC_ROOT_JNI_LOCAL: u8 = 0x02;
pub const JVMPI_GC_ROOT_JAVA_FRAME: u8 = 0x03;
pub const JVMPI_GC_ROOT_NATIVE_STACK: u8 = 0x04;
pub const JVMPI_GC_ROOT_STICKY_CLASS: u8 = 0x05;
pub const JVMPI_GC_ROOT_THREAD_BLOCK: u8 = 0x06;
pub const JVMPI_GC_ROOT_MONITOR_USED: u8 = 0x07;
pub const JVMPI_GC_ROOT_THREAD_OBJ: u8 = 0x08;
pub const JVMPI_GC_CLASS_DUMP: u8 = 0x20;
pub const JVMPI_GC_INSTANCE_DUMP: u8 = 0x21;
pub const JVMPI_GC_OBJ_ARRAY_DUMP: u8 = 0x22;
pub const JVMPI_GC_PRIM_ARRAY_DUMP: u8 = 0x23;

pub const JVMPI_DUMP_LEVEL_0: jint = 0;
pub const JVMPI_DUMP_LEVEL_1: jint = 1;
pub const JVMPI_DUMP_LEVEL_2: jint = 2;

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct JVMPI_CallFrame {
    pub lineno: jint,
    pub method_id: jmethodID,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct JVMPI_CallTrace {
    pub env_id: *mut JNIEnv,
    pub num_frames: jint,
    pub frames: *mut JVMPI_CallFrame,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct JVMPI_Field {
    pub field_name: *mut c_char,
    pub field_signature: *mut c_char,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct JVMPI_HeapDumpArg {
    pub heap_dump_level: jint,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct JVMPI_Lineno {
    pub offset: jint,
    pub lineno: jint,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct JVMPI_Method {
    pub method_name: *mut c_char,
    pub method_signature: *mut c_char,
    pub start_lineno: jint,
    pub end_lineno: jint,
    pub method_id: jmethodID,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ClassLoad {
    pub class_name: *mut c_char,
    pub source_name: *mut c_char,
    pub num_interfaces: jint,
    pub num_methods: jint,
    pub methods: *mut JVMPI_Method,
    pub num_static_fields: jint,
    pub statics: *mut JVMPI_Field,
    pub num_instance_fields: jint,
    pub instances: *mut JVMPI_Field,
    pub class_id: jobjectID,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ClassUnload {
    pub class_id: jobjectID,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ClassLoadHook {
    pub class_data: *mut c_uchar,
    pub class_data_len: jint,
    pub new_class_data: *mut c_uchar,
    pub new_class_data_len: jint,
    pub malloc_f: Option<unsafe extern "C" fn(c_uint) -> *mut c_void>,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjAlloc {
    pub arena_id: jint,
    pub class_id: jobjectID,
    pub is_array: jint,
    pub size: jint,
    pub obj_id: jobjectID,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjFree {
    pub obj_id: jobjectID,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjMove {
    pub arena_id: jint,
    pub obj_id: jobjectID,
    pub new_arena_id: jint,
    pub new_obj_id: jobjectID,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct NewArena {
    pub arena_id: jint,
    pub arena_name: *mut c_char,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DeleteArena {
    pub arena_id: jint,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ThreadStart {
    pub thread_name: *mut c_char,
    pub group_name: *mut c_char,
    pub parent_name: *mut c_char,
    pub thread_id: jobjectID,
    pub thread_env_id: *mut JNIEnv,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct HeapDump {
    pub dump_level: c_int,
    pub begin: *mut c_char,
    pub end: *mut c_char,
    pub num_traces: jint,
    pub traces: *mut JVMPI_CallTrace,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct JniGlobalrefAlloc {
    pub obj_id: jobjectID,
    pub ref_id: jobject,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct JniGlobalrefFree {
    pub ref_id: jobject,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Method {
    pub method_id: jmethodID,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MethodEntry2 {
    pub method_id: jmethodID,
    pub obj_id: jobjectID,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CompiledMethodLoad {
    pub method_id: jmethodID,
    pub code_addr: *mut c_void,
    pub code_size: jint,
    pub lineno_table_size: jint,
    pub lineno_table: *mut JVMPI_Lineno,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CompiledMethodUnload {
    pub method_id: jmethodID,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct IfInfo {
    pub is_true: jboolean,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TableswitchInfo {
    pub key: jint,
    pub low: jint,
    pub hi: jint,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct LookupswitchInfo {
    pub chosen_pair_index: jint,
    pub is_default: jboolean,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union InstructionInfo {
    pub if_info: IfInfo,
    pub tableswitch_info: TableswitchInfo,
    pub lookupswitch_info: LookupswitchInfo,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Instruction {
    pub method_id: jmethodID,
    pub offset: jint,
    pub u: InstructionInfo,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MonitorDump {
    pub begin: *mut c_char,
    pub end: *mut c_char,
    pub num_traces: jint,
    pub traces: *mut JVMPI_CallTrace,
    pub threads_status: *mut jint,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RawMonitorEvent {
    pub name: *mut c_char,
    pub id: JVMPI_RawMonitor,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct Monitor {
    pub object: jobjectID,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct MonitorWait {
    pub object: jobjectID,
    pub timeout: jlong,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct GcInfo {
    pub used_objects: jlong,
    pub used_object_space: jlong,
    pub total_object_space: jlong,
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ObjectDump {
    pub data_len: jint,
    pub data: *mut c_char,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub union EventData {
    pub class_load: ClassLoad,
    pub class_unload: ClassUnload,
    pub class_load_hook: ClassLoadHook,
    pub obj_alloc: ObjAlloc,
    pub obj_free: ObjFree,
    pub obj_move: ObjMove,
    pub new_arena: NewArena,
    pub delete_arena: DeleteArena,
    pub thread_start: ThreadStart,
    pub heap_dump: HeapDump,
    pub jni_globalref_alloc: JniGlobalrefAlloc,
    pub jni_globalref_free: JniGlobalrefFree,
    pub method: Method,
    pub method_entry2: MethodEntry2,
    pub compiled_method_load: CompiledMethodLoad,
    pub compiled_method_unload: CompiledMethodUnload,
    pub instruction: Instruction,
    pub monitor_dump: MonitorDump,
    pub raw_monitor: RawMonitorEvent,
    pub monitor: Monitor,
    pub monitor_wait: MonitorWait,
    pub gc_info: GcInfo,
    pub object_dump: ObjectDump,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct JVMPI_Event {
    pub event_type: jint,
    pub env_id: *mut JNIEnv,
    pub u: EventData,
}

impl JVMPI_Event {
    /// An event of `event_type` with all data zeroed (null pointers, zero counts).
    pub fn new(event_type: jint, env_id: *mut JNIEnv) -> JVMPI_Event {
        // SAFETY: every member of the union is plain data for which all-zero bytes are valid (null pointers,
        // zero integers, `None` function pointers).
        let u: EventData = unsafe { std::mem::zeroed() };
        JVMPI_Event { event_type, env_id, u }
    }
}

pub type NotifyEventFn = unsafe extern "C" fn(*mut JVMPI_Event);

#[repr(C)]
pub struct JVMPI_Interface {
    pub version: jint,
    pub NotifyEvent: Option<NotifyEventFn>,
    pub EnableEvent: Option<unsafe extern "C" fn(jint, *mut c_void) -> jint>,
    pub DisableEvent: Option<unsafe extern "C" fn(jint, *mut c_void) -> jint>,
    pub RequestEvent: Option<unsafe extern "C" fn(jint, *mut c_void) -> jint>,
    pub GetCallTrace: Option<unsafe extern "C" fn(*mut JVMPI_CallTrace, jint)>,
    pub ProfilerExit: Option<unsafe extern "C" fn(jint)>,
    pub RawMonitorCreate: Option<unsafe extern "C" fn(*mut c_char) -> JVMPI_RawMonitor>,
    pub RawMonitorEnter: Option<unsafe extern "C" fn(JVMPI_RawMonitor)>,
    pub RawMonitorExit: Option<unsafe extern "C" fn(JVMPI_RawMonitor)>,
    pub RawMonitorWait: Option<unsafe extern "C" fn(JVMPI_RawMonitor, jlong)>,
    pub RawMonitorNotifyAll: Option<unsafe extern "C" fn(JVMPI_RawMonitor)>,
    pub RawMonitorDestroy: Option<unsafe extern "C" fn(JVMPI_RawMonitor)>,
    pub GetCurrentThreadCpuTime: Option<unsafe extern "C" fn() -> jlong>,
    pub SuspendThread: Option<unsafe extern "C" fn(*mut JNIEnv)>,
    pub ResumeThread: Option<unsafe extern "C" fn(*mut JNIEnv)>,
    pub GetThreadStatus: Option<unsafe extern "C" fn(*mut JNIEnv) -> jint>,
    pub ThreadHasRun: Option<unsafe extern "C" fn(*mut JNIEnv) -> jboolean>,
    pub CreateSystemThread:
        Option<unsafe extern "C" fn(*mut c_char, jint, Option<unsafe extern "C" fn(*mut c_void)>) -> jint>,
    pub SetThreadLocalStorage: Option<unsafe extern "C" fn(*mut JNIEnv, *mut c_void)>,
    pub GetThreadLocalStorage: Option<unsafe extern "C" fn(*mut JNIEnv) -> *mut c_void>,
    pub DisableGC: Option<unsafe extern "C" fn()>,
    pub EnableGC: Option<unsafe extern "C" fn()>,
    pub RunGC: Option<unsafe extern "C" fn()>,
    pub GetThreadObject: Option<unsafe extern "C" fn(*mut JNIEnv) -> jobjectID>,
    pub GetMethodClass: Option<unsafe extern "C" fn(jmethodID) -> jobjectID>,
    pub jobjectID2jobject: Option<unsafe extern "C" fn(jobjectID) -> jobject>,
    pub jobject2jobjectID: Option<unsafe extern "C" fn(jobject) -> jobjectID>,
    pub SuspendThreadList: Option<unsafe extern "C" fn(jint, *mut *mut JNIEnv, *mut jint)>,
    pub ResumeThreadList: Option<unsafe extern "C" fn(jint, *mut *mut JNIEnv, *mut jint)>,
}
