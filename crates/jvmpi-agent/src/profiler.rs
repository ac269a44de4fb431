//! [`Profiler`]: the JVMPI functions, safe.

use jvmpi_sys::*;
use std::sync::Mutex;

/// The JVMPI interface the VM (libjvmpi.so) gave the agent. Cheap to copy, usable from any thread.
#[derive(Clone, Copy)]
pub struct Profiler(*mut JVMPI_Interface);

// SAFETY: the interface is a table of functions the VM allows from any thread.
unsafe impl Send for Profiler {}
// SAFETY: as for Send.
unsafe impl Sync for Profiler {}

/// The events an agent can enable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum EventType {
    MethodEntry = JVMPI_EVENT_METHOD_ENTRY,
    MethodExit = JVMPI_EVENT_METHOD_EXIT,
    ObjectAlloc = JVMPI_EVENT_OBJECT_ALLOC,
    ObjectFree = JVMPI_EVENT_OBJECT_FREE,
    ThreadStart = JVMPI_EVENT_THREAD_START,
    ThreadEnd = JVMPI_EVENT_THREAD_END,
    ClassLoad = JVMPI_EVENT_CLASS_LOAD,
    ClassUnload = JVMPI_EVENT_CLASS_UNLOAD,
    DataDumpRequest = JVMPI_EVENT_DATA_DUMP_REQUEST,
    JvmInitDone = JVMPI_EVENT_JVM_INIT_DONE,
    JvmShutDown = JVMPI_EVENT_JVM_SHUT_DOWN,
    MonitorContendedEnter = JVMPI_EVENT_MONITOR_CONTENDED_ENTER,
    MonitorContendedEntered = JVMPI_EVENT_MONITOR_CONTENDED_ENTERED,
    MonitorWait = JVMPI_EVENT_MONITOR_WAIT,
    MonitorWaited = JVMPI_EVENT_MONITOR_WAITED,
    GcStart = JVMPI_EVENT_GC_START,
    GcFinish = JVMPI_EVENT_GC_FINISH,
}

/// Why a call failed: JVMPI_FAIL or JVMPI_NOT_AVAILABLE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    Failed,
    NotAvailable,
}

fn result(rc: i32) -> Result<(), Failure> {
    match rc {
        JVMPI_SUCCESS => Ok(()),
        JVMPI_NOT_AVAILABLE => Err(Failure::NotAvailable),
        _ => Err(Failure::Failed),
    }
}

/// Events enabled in `on_load`'s setup, switched on once the handler is installed.
static PENDING: Mutex<Vec<EventType>> = Mutex::new(Vec::new());

impl Profiler {
    /// `GetEnv(vm, JVMPI_VERSION_1_2)`, falling back to `VERSION_1`.
    ///
    /// # Safety
    /// `vm` must be a live JavaVM.
    pub unsafe fn from_vm(vm: *mut jvmti_sys::JavaVM) -> Result<Profiler, i32> {
        let mut env: *mut std::ffi::c_void = std::ptr::null_mut();
        let mut rc = jvmti_sys::JNI_ERR;
        for version in [JVMPI_VERSION_1_2, JVMPI_VERSION_1] {
            // SAFETY: GetEnv on a live JavaVM with an out-parameter.
            rc = unsafe { (**vm).GetEnv.map(|f| f(vm, &mut env, version)).unwrap_or(jvmti_sys::JNI_ERR) };
            if rc == jvmti_sys::JNI_OK as i32 && !env.is_null() {
                return Ok(Profiler(env.cast()));
            }
        }
        Err(rc)
    }

    fn table(self) -> &'static JVMPI_Interface {
        // SAFETY: the interface lives as long as the VM.
        unsafe { &*self.0 }
    }

    pub(crate) fn set_notify(self, f: NotifyEventFn) {
        // SAFETY: writing NotifyEvent is what JVM_OnLoad is for.
        unsafe { (*self.0).NotifyEvent = Some(f) };
    }

    /// Enables an event. Before the handler is installed (inside `on_load`'s setup), the event is switched
    /// on right after installation, so that no event reaches a missing handler.
    pub fn enable(self, event: EventType) -> Result<(), Failure> {
        if self.table().NotifyEvent.is_none() {
            PENDING.lock().unwrap_or_else(|e| e.into_inner()).push(event);
            return Ok(());
        }
        // SAFETY: a JVMPI function with its documented arguments.
        result(unsafe { self.table().EnableEvent.expect("EnableEvent")(event as i32, std::ptr::null_mut()) })
    }

    pub(crate) fn enable_pending(self) {
        for e in std::mem::take(&mut *PENDING.lock().unwrap_or_else(|e| e.into_inner())) {
            let _ = self.enable(e);
        }
    }

    pub fn disable(self, event: EventType) -> Result<(), Failure> {
        // SAFETY: as above.
        result(unsafe { self.table().DisableEvent.expect("DisableEvent")(event as i32, std::ptr::null_mut()) })
    }

    /// Asks for a class's CLASS_LOAD, sent on this thread before this returns.
    pub fn request_class_load(self, class: jobjectID) -> Result<(), Failure> {
        // SAFETY: as above; the argument of a CLASS_LOAD request is a class ID.
        result(unsafe { self.table().RequestEvent.expect("RequestEvent")(JVMPI_EVENT_CLASS_LOAD, class) })
    }

    /// Asks for a HEAP_DUMP at `level` (0, 1 or 2), sent on this thread before this returns.
    pub fn request_heap_dump(self, level: i32) -> Result<(), Failure> {
        let mut arg = JVMPI_HeapDumpArg { heap_dump_level: level };
        // SAFETY: as above, with a JVMPI_HeapDumpArg.
        result(unsafe {
            self.table().RequestEvent.expect("RequestEvent")(
                JVMPI_EVENT_HEAP_DUMP,
                (&mut arg as *mut JVMPI_HeapDumpArg).cast(),
            )
        })
    }

    pub fn request_monitor_dump(self) -> Result<(), Failure> {
        // SAFETY: as above.
        result(unsafe {
            self.table().RequestEvent.expect("RequestEvent")(JVMPI_EVENT_MONITOR_DUMP, std::ptr::null_mut())
        })
    }

    pub fn request_object_dump(self, object: jobjectID) -> Result<(), Failure> {
        // SAFETY: as above, with an object ID.
        result(unsafe { self.table().RequestEvent.expect("RequestEvent")(JVMPI_EVENT_OBJECT_DUMP, object) })
    }

    pub fn run_gc(self) {
        // SAFETY: as above.
        unsafe { self.table().RunGC.expect("RunGC")() }
    }

    /// The calling thread's CPU time in nanoseconds.
    pub fn current_thread_cpu_time(self) -> i64 {
        // SAFETY: as above.
        unsafe { self.table().GetCurrentThreadCpuTime.expect("GetCurrentThreadCpuTime")() }
    }

    /// The thread's storage word (a thread is named by its JNIEnv, the events' `env`).
    pub fn thread_local_storage(self, env: *mut jvmti_sys::JNIEnv) -> usize {
        // SAFETY: as above.
        unsafe { self.table().GetThreadLocalStorage.expect("GetThreadLocalStorage")(env) as usize }
    }

    pub fn set_thread_local_storage(self, env: *mut jvmti_sys::JNIEnv, value: usize) {
        // SAFETY: as above.
        unsafe { self.table().SetThreadLocalStorage.expect("SetThreadLocalStorage")(env, value as *mut _) }
    }
}
