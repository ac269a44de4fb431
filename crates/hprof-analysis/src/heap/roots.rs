//! GC roots: what the graph keeps of them, and their kinds' names.

use hprof_format::binary::HeapRecord;

/// A GC root.
#[derive(Debug, Clone, Copy)]
pub struct Root {
    pub node: u32,
    /// The sub-record tag (hprof_format::tags::heap).
    pub kind: u8,
    pub thread_serial: u32,
}

pub fn root_kind_name(kind: u8) -> &'static str {
    use hprof_format::tags::heap as h;
    match kind {
        h::ROOT_UNKNOWN => "unknown",
        h::ROOT_JNI_GLOBAL => "JNI global",
        h::ROOT_JNI_LOCAL => "JNI local",
        h::ROOT_JAVA_FRAME => "Java frame",
        h::ROOT_NATIVE_STACK => "native stack",
        h::ROOT_STICKY_CLASS => "system class",
        h::ROOT_THREAD_BLOCK => "thread block",
        h::ROOT_MONITOR_USED => "busy monitor",
        h::ROOT_THREAD_OBJECT => "thread",
        h::ROOT_INTERNED_STRING => "interned string",
        h::ROOT_FINALIZING => "finalizing",
        h::ROOT_DEBUGGER => "debugger",
        h::ROOT_REFERENCE_CLEANUP => "reference cleanup",
        h::ROOT_VM_INTERNAL => "VM internal",
        h::ROOT_JNI_MONITOR => "JNI monitor",
        _ => "root",
    }
}

pub(super) fn hprof_kind(r: &HeapRecord<'_>) -> u8 {
    use HeapRecord::*;
    use hprof_format::tags::heap as h;
    match r {
        RootUnknown { .. } => h::ROOT_UNKNOWN,
        RootJniGlobal { .. } => h::ROOT_JNI_GLOBAL,
        RootJniLocal { .. } => h::ROOT_JNI_LOCAL,
        RootJavaFrame { .. } => h::ROOT_JAVA_FRAME,
        RootNativeStack { .. } => h::ROOT_NATIVE_STACK,
        RootStickyClass { .. } => h::ROOT_STICKY_CLASS,
        RootThreadBlock { .. } => h::ROOT_THREAD_BLOCK,
        RootMonitorUsed { .. } => h::ROOT_MONITOR_USED,
        RootThreadObject { .. } => h::ROOT_THREAD_OBJECT,
        RootInternedString { .. } => h::ROOT_INTERNED_STRING,
        RootFinalizing { .. } => h::ROOT_FINALIZING,
        RootDebugger { .. } => h::ROOT_DEBUGGER,
        RootReferenceCleanup { .. } => h::ROOT_REFERENCE_CLEANUP,
        RootVmInternal { .. } => h::ROOT_VM_INTERNAL,
        RootJniMonitor { .. } => h::ROOT_JNI_MONITOR,
        _ => 0,
    }
}
