use crate::env::{Jvmti, jvmti_call};
use crate::error::Result;
use jvmti_sys as sys;

/// The JVMTI events the agent uses, as a closed set so that subscriptions can be kept in arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Event {
    VmInit,
    VmDeath,
    ThreadStart,
    ThreadEnd,
    ClassLoad,
    ClassPrepare,
    MethodEntry,
    MethodExit,
    CompiledMethodLoad,
    CompiledMethodUnload,
    DynamicCodeGenerated,
    DataDumpRequest,
    MonitorWait,
    MonitorWaited,
    MonitorContendedEnter,
    MonitorContendedEntered,
    GarbageCollectionStart,
    GarbageCollectionFinish,
    ObjectFree,
    VmObjectAlloc,
    SampledObjectAlloc,
    NativeMethodBind,
    ClassFileLoadHook,
}

impl Event {
    pub const ALL: [Event; 23] = [
        Event::VmInit,
        Event::VmDeath,
        Event::ThreadStart,
        Event::ThreadEnd,
        Event::ClassLoad,
        Event::ClassPrepare,
        Event::MethodEntry,
        Event::MethodExit,
        Event::CompiledMethodLoad,
        Event::CompiledMethodUnload,
        Event::DynamicCodeGenerated,
        Event::DataDumpRequest,
        Event::MonitorWait,
        Event::MonitorWaited,
        Event::MonitorContendedEnter,
        Event::MonitorContendedEntered,
        Event::GarbageCollectionStart,
        Event::GarbageCollectionFinish,
        Event::ObjectFree,
        Event::VmObjectAlloc,
        Event::SampledObjectAlloc,
        Event::NativeMethodBind,
        Event::ClassFileLoadHook,
    ];
    pub const COUNT: usize = Event::ALL.len();

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn raw(self) -> sys::jvmtiEvent {
        match self {
            Event::VmInit => sys::JVMTI_EVENT_VM_INIT,
            Event::VmDeath => sys::JVMTI_EVENT_VM_DEATH,
            Event::ThreadStart => sys::JVMTI_EVENT_THREAD_START,
            Event::ThreadEnd => sys::JVMTI_EVENT_THREAD_END,
            Event::ClassLoad => sys::JVMTI_EVENT_CLASS_LOAD,
            Event::ClassPrepare => sys::JVMTI_EVENT_CLASS_PREPARE,
            Event::MethodEntry => sys::JVMTI_EVENT_METHOD_ENTRY,
            Event::MethodExit => sys::JVMTI_EVENT_METHOD_EXIT,
            Event::CompiledMethodLoad => sys::JVMTI_EVENT_COMPILED_METHOD_LOAD,
            Event::CompiledMethodUnload => sys::JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
            Event::DynamicCodeGenerated => sys::JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
            Event::DataDumpRequest => sys::JVMTI_EVENT_DATA_DUMP_REQUEST,
            Event::MonitorWait => sys::JVMTI_EVENT_MONITOR_WAIT,
            Event::MonitorWaited => sys::JVMTI_EVENT_MONITOR_WAITED,
            Event::MonitorContendedEnter => sys::JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
            Event::MonitorContendedEntered => sys::JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
            Event::GarbageCollectionStart => sys::JVMTI_EVENT_GARBAGE_COLLECTION_START,
            Event::GarbageCollectionFinish => sys::JVMTI_EVENT_GARBAGE_COLLECTION_FINISH,
            Event::ObjectFree => sys::JVMTI_EVENT_OBJECT_FREE,
            Event::VmObjectAlloc => sys::JVMTI_EVENT_VM_OBJECT_ALLOC,
            Event::SampledObjectAlloc => sys::JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
            Event::NativeMethodBind => sys::JVMTI_EVENT_NATIVE_METHOD_BIND,
            Event::ClassFileLoadHook => sys::JVMTI_EVENT_CLASS_FILE_LOAD_HOOK,
        }
    }

    /// Sets the capability this event needs, if any.
    pub fn require_capability(self, caps: &mut sys::jvmtiCapabilities) {
        match self {
            Event::MethodEntry => caps.set_can_generate_method_entry_events(1),
            Event::MethodExit => caps.set_can_generate_method_exit_events(1),
            Event::CompiledMethodLoad | Event::CompiledMethodUnload => {
                caps.set_can_generate_compiled_method_load_events(1)
            }
            Event::MonitorWait
            | Event::MonitorWaited
            | Event::MonitorContendedEnter
            | Event::MonitorContendedEntered => caps.set_can_generate_monitor_events(1),
            Event::GarbageCollectionStart | Event::GarbageCollectionFinish => {
                caps.set_can_generate_garbage_collection_events(1)
            }
            Event::ObjectFree => caps.set_can_generate_object_free_events(1),
            Event::VmObjectAlloc => caps.set_can_generate_vm_object_alloc_events(1),
            Event::SampledObjectAlloc => caps.set_can_generate_sampled_object_alloc_events(1),
            Event::NativeMethodBind => caps.set_can_generate_native_method_bind_events(1),
            _ => {}
        }
    }
}

impl Jvmti {
    /// Enables or disables an event, for all threads (`thread` null) or one.
    pub fn set_event_enabled(self, event: Event, enabled: bool, thread: sys::jthread) -> Result<()> {
        let mode = if enabled { sys::JVMTI_ENABLE } else { sys::JVMTI_DISABLE };
        jvmti_call!(self, SetEventNotificationMode, mode, event.raw(), thread)
    }

    /// Asks the JVM to replay CompiledMethodLoad / DynamicCodeGenerated for code that already exists.
    pub fn generate_events(self, event: Event) -> Result<()> {
        jvmti_call!(self, GenerateEvents, event.raw())
    }
}
