//! Every JVMTI event of JDK 17–25, from one table.
//!
//! The table below is the only place an event is described: its JVMTI constant, its slot in
//! `jvmtiEventCallbacks`, the capability it needs, whether JVMTI lets it be enabled for one thread, and its
//! arguments as the JVM passes them. From it `jvmti_events!` generates the [`Event`] enum, the
//! [`EventHandler`] trait (one method per event, with every argument), the `extern "C"` trampolines and the
//! callback table that points at them (see [`crate::hub`], which dispatches to subscribers).
//!
//! Argument types are what a handler receives: the JVM's own, except `Jni`, which wraps its `JNIEnv*`
//! ([`EventArg`] maps each to the raw type of the C callback).

use crate::capabilities::CapabilityFlag;
use crate::env::{Jvmti, jvmti_call};
use crate::error::Result;
use crate::hub::EventHost;
use crate::jni::Jni;
use jvmti_sys as sys;
use std::ffi::{CStr, c_char, c_uchar, c_void};

/// A handler's view of one argument of a JVMTI callback: `Raw` is the C type in the callback's signature.
pub trait EventArg: Copy {
    type Raw;
    /// # Safety
    /// `raw` must be what the JVM passed for this argument, used on the thread of the event.
    unsafe fn from_raw(raw: Self::Raw) -> Self;
}

macro_rules! passed_as_is {
    ($($t:ty),* $(,)?) => {
        $(impl EventArg for $t {
            type Raw = $t;
            unsafe fn from_raw(raw: $t) -> $t {
                raw
            }
        })*
    };
}

// jclass and jthread are jobject; jlocation is jlong.
passed_as_is!(
    sys::jobject,
    sys::jmethodID,
    sys::jfieldID,
    sys::jint,
    sys::jlong,
    sys::jboolean,
    c_char,
    sys::jvalue,
    *const c_char,
    *const c_void,
    *mut c_void,
    *mut *mut c_void,
    *const c_uchar,
    *mut sys::jint,
    *mut *mut c_uchar,
    *const sys::jvmtiAddrLocationMap,
);

impl EventArg for Jni {
    type Raw = *mut sys::JNIEnv;
    unsafe fn from_raw(raw: *mut sys::JNIEnv) -> Jni {
        // SAFETY: the JVM passes the JNIEnv of the thread the event runs on.
        unsafe { Jni::from_raw(raw) }
    }
}

/// Generates the event enum, the handler trait, the trampolines and the callback table from the table of
/// events below. Each row: the variant, `= JVMTI constant`, the `jvmtiEventCallbacks` field, the handler
/// method, the capability the event needs, whether it can be enabled per thread, and its arguments — which
/// a handler receives one by one, or, for an event with more than four (`=> Name`), as one struct `Name`.
/// An event's argument struct, for the events that have one.
macro_rules! event_args {
    ([] $variant:ident, $($arg:ident: $ty:ty),*) => {};
    ([$args:ident] $variant:ident, $($arg:ident: $ty:ty),*) => {
        #[doc = concat!("The arguments of ", stringify!($variant), ", as JVMTI passes them (see [`Event::", stringify!($variant), "`]).")]
        #[derive(Clone, Copy)]
        pub struct $args {
            $(pub $arg: $ty,)*
        }
    };
}

/// A handler method: the arguments one by one, or as the event's struct.
macro_rules! handler_method {
    ([] $(#[$doc:meta])* $method:ident($($arg:ident: $ty:ty),*)) => {
        $(#[$doc])*
        fn $method(&self, cx: &C, jvmti: Jvmti, $($arg: $ty),*) {}
    };
    ([$args:ident] $(#[$doc:meta])* $method:ident($($arg:ident: $ty:ty),*)) => {
        $(#[$doc])*
        fn $method(&self, cx: &C, jvmti: Jvmti, args: $args) {}
    };
}

/// A handler method's call, its arguments one by one or as the event's struct.
macro_rules! dispatch {
    ([] $handler:expr, $method:ident, $cx:ident, $jvmti:ident, $($arg:ident),*) => {
        $handler.$method($cx, $jvmti, $($arg),*)
    };
    ([$args:ident] $handler:expr, $method:ident, $cx:ident, $jvmti:ident, $($arg:ident),*) => {
        $handler.$method($cx, $jvmti, $args { $($arg),* })
    };
}

macro_rules! jvmti_events {
    ($(
        $(#[$doc:meta])*
        $variant:ident = $raw:ident, $field:ident, $method:ident,
            needs: $cap:expr, per_thread: $per_thread:literal,
            ($($arg:ident: $ty:ty),* $(,)?) $(=> $args:ident)?;
    )*) => {
        $(event_args!([$($args)?] $variant, $($arg: $ty),*);)*

        /// A JVMTI event.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum Event {
            $($(#[$doc])* $variant,)*
        }

        impl Event {
            pub const ALL: &'static [Event] = &[$(Event::$variant,)*];
            pub const COUNT: usize = Event::ALL.len();

            /// Its position in [`Event::ALL`], for per-event arrays.
            pub fn index(self) -> usize {
                self as usize
            }

            pub fn raw(self) -> sys::jvmtiEvent {
                match self {
                    $(Event::$variant => sys::$raw,)*
                }
            }

            pub fn from_raw(raw: sys::jvmtiEvent) -> Option<Event> {
                match raw {
                    $(sys::$raw => Some(Event::$variant),)*
                    _ => None,
                }
            }

            /// The name JVMTI gives it (its `jvmtiEventCallbacks` field), for messages.
            pub fn name(self) -> &'static str {
                match self {
                    $(Event::$variant => stringify!($field),)*
                }
            }

            /// The capability without which the JVM refuses to enable it, if any.
            pub fn required_capability(self) -> Option<CapabilityFlag> {
                #[allow(unused_imports)]
                use CapabilityFlag::*;
                match self {
                    $(Event::$variant => $cap,)*
                }
            }

            /// Whether SetEventNotificationMode accepts a thread for it (HotSpot's thread-filtered events);
            /// the others are on or off for the whole VM.
            pub fn per_thread(self) -> bool {
                match self {
                    $(Event::$variant => $per_thread,)*
                }
            }
        }

        /// A subscriber to JVMTI events: one method per event, called with the subscriber's context `C`,
        /// the JVMTI environment the event came through and the event's arguments exactly as JVMTI passes
        /// them (gathered in one struct for the events with more than four, such as [`SampledObjectAllocArgs`]).
        /// Every method does nothing by default; implement the ones for the events you subscribe to.
        ///
        /// Methods run on the thread JVMTI reports the event on, in the JVM's callback: they must follow the
        /// JVMTI rules for that event (no JNI in GarbageCollectionStart/Finish or ObjectFree, for one).
        /// Pointer arguments are valid for the duration of the call; an impl that reads them needs
        /// `#[allow(clippy::not_unsafe_ptr_arg_deref)]` (the JVM, not a caller, vouches for them).
        #[allow(unused_variables)]
        pub trait EventHandler<C: ?Sized>: Send + Sync {
            $(
                handler_method!([$($args)?] $(#[$doc])* $method($($arg: $ty),*));
            )*
        }

        /// The `extern "C"` functions JVMTI calls, one per event, generic over the host that finds the hub.
        mod trampolines {
            use super::*;
            $(
                pub(super) unsafe extern "C" fn $method<H: EventHost>(
                    env: *mut sys::jvmtiEnv,
                    $($arg: <$ty as EventArg>::Raw),*
                ) {
                    let dispatch = move || {
                        let Some((hub, cx)) = H::hub() else { return };
                        // SAFETY: JVMTI passes the environment the callbacks were set on.
                        let jvmti = unsafe { Jvmti::from_raw(env) };
                        // SAFETY: these are the event's arguments as the JVM passed them, on its thread.
                        $(let $arg = unsafe { <$ty as EventArg>::from_raw($arg) };)*
                        for s in hub.subscriptions(Event::$variant) {
                            if s.wants() {
                                dispatch!([$($args)?] s.handler(), $method, cx, jvmti, $($arg),*);
                            }
                        }
                    };
                    // A panic must not unwind into the JVM, which would abort it.
                    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(dispatch)).is_err() {
                        H::panicked(Event::$variant);
                    }
                }
            )*
        }

        /// The callback table for host `H`: every event points at its trampoline. Only enabled events are
        /// delivered, so setting them all costs nothing.
        pub fn event_callbacks<H: EventHost>() -> sys::jvmtiEventCallbacks {
            // SAFETY: the table is plain function pointers; all zeroes means "no callback".
            let mut cb: sys::jvmtiEventCallbacks = unsafe { std::mem::zeroed() };
            $(cb.$field = Some(trampolines::$method::<H>);)*
            cb
        }
    };
}

jvmti_events! {
    /// The VM is initialised; the live phase begins.
    VmInit = JVMTI_EVENT_VM_INIT, VMInit, vm_init, needs: None, per_thread: false,
        (jni: Jni, thread: sys::jthread);
    /// The VM is about to end; no event follows.
    VmDeath = JVMTI_EVENT_VM_DEATH, VMDeath, vm_death, needs: None, per_thread: false,
        (jni: Jni);
    /// A thread runs its first Java code (on that thread).
    ThreadStart = JVMTI_EVENT_THREAD_START, ThreadStart, thread_start, needs: None, per_thread: false,
        (jni: Jni, thread: sys::jthread);
    /// A thread is about to end (on that thread).
    ThreadEnd = JVMTI_EVENT_THREAD_END, ThreadEnd, thread_end, needs: None, per_thread: true,
        (jni: Jni, thread: sys::jthread);
    /// A class file is about to be defined (or redefined): a handler may replace its bytes by storing a
    /// buffer from JVMTI's Allocate in `*new_class_data` and its length in `*new_class_data_len` (see
    /// [`Jvmti::replace_class_file`] and [`class_file_bytes`]). `class_being_redefined` is null for a new class.
    ClassFileLoadHook = JVMTI_EVENT_CLASS_FILE_LOAD_HOOK, ClassFileLoadHook, class_file_load_hook,
        needs: None, per_thread: false,
        (jni: Jni, class_being_redefined: sys::jclass, loader: sys::jobject, name: *const c_char,
         protection_domain: sys::jobject, class_data_len: sys::jint, class_data: *const c_uchar,
         new_class_data_len: *mut sys::jint, new_class_data: *mut *mut c_uchar) => ClassFileLoadHookArgs;
    /// A class is first loaded (not yet linked).
    ClassLoad = JVMTI_EVENT_CLASS_LOAD, ClassLoad, class_load, needs: None, per_thread: true,
        (jni: Jni, thread: sys::jthread, class: sys::jclass);
    /// A class is prepared: its fields and methods can be read.
    ClassPrepare = JVMTI_EVENT_CLASS_PREPARE, ClassPrepare, class_prepare, needs: None, per_thread: true,
        (jni: Jni, thread: sys::jthread, class: sys::jclass);
    /// The start phase begins (JNI usable, VM not yet initialised).
    VmStart = JVMTI_EVENT_VM_START, VMStart, vm_start, needs: None, per_thread: false,
        (jni: Jni);
    /// An exception was thrown (`catch_method` null if nothing catches it).
    Exception = JVMTI_EVENT_EXCEPTION, Exception, exception,
        needs: Some(CanGenerateExceptionEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, method: sys::jmethodID, location: sys::jlocation,
         exception: sys::jobject, catch_method: sys::jmethodID, catch_location: sys::jlocation) => ExceptionArgs;
    /// A thrown exception is caught.
    ExceptionCatch = JVMTI_EVENT_EXCEPTION_CATCH, ExceptionCatch, exception_catch,
        needs: Some(CanGenerateExceptionEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, method: sys::jmethodID, location: sys::jlocation,
         exception: sys::jobject) => ExceptionCatchArgs;
    /// A thread is about to execute a new instruction.
    SingleStep = JVMTI_EVENT_SINGLE_STEP, SingleStep, single_step,
        needs: Some(CanGenerateSingleStepEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, method: sys::jmethodID, location: sys::jlocation);
    /// A frame requested with NotifyFramePop returns.
    FramePop = JVMTI_EVENT_FRAME_POP, FramePop, frame_pop,
        needs: Some(CanGenerateFramePopEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, method: sys::jmethodID, was_popped_by_exception: sys::jboolean);
    /// A breakpoint set with SetBreakpoint is reached.
    Breakpoint = JVMTI_EVENT_BREAKPOINT, Breakpoint, breakpoint,
        needs: Some(CanGenerateBreakpointEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, method: sys::jmethodID, location: sys::jlocation);
    /// A watched field is read.
    FieldAccess = JVMTI_EVENT_FIELD_ACCESS, FieldAccess, field_access,
        needs: Some(CanGenerateFieldAccessEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, method: sys::jmethodID, location: sys::jlocation,
         field_class: sys::jclass, object: sys::jobject, field: sys::jfieldID) => FieldAccessArgs;
    /// A watched field is written.
    FieldModification = JVMTI_EVENT_FIELD_MODIFICATION, FieldModification, field_modification,
        needs: Some(CanGenerateFieldModificationEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, method: sys::jmethodID, location: sys::jlocation,
         field_class: sys::jclass, object: sys::jobject, field: sys::jfieldID, signature_type: c_char,
         new_value: sys::jvalue) => FieldModificationArgs;
    /// A Java or native method is entered (interpreted mode: slow).
    MethodEntry = JVMTI_EVENT_METHOD_ENTRY, MethodEntry, method_entry,
        needs: Some(CanGenerateMethodEntryEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, method: sys::jmethodID);
    /// A method returns or is popped by an exception.
    MethodExit = JVMTI_EVENT_METHOD_EXIT, MethodExit, method_exit,
        needs: Some(CanGenerateMethodExitEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, method: sys::jmethodID, was_popped_by_exception: sys::jboolean,
         return_value: sys::jvalue) => MethodExitArgs;
    /// A native method is bound to `address`; a handler may store another function (same signature) in
    /// `*new_address`. `jni` and `thread` are null when it happens in the primordial phase.
    NativeMethodBind = JVMTI_EVENT_NATIVE_METHOD_BIND, NativeMethodBind, native_method_bind,
        needs: Some(CanGenerateNativeMethodBindEvents), per_thread: false,
        (jni: Jni, thread: sys::jthread, method: sys::jmethodID, address: *mut c_void,
         new_address: *mut *mut c_void) => NativeMethodBindArgs;
    /// A method was compiled and loaded at `code_addr..code_addr+code_size` (also replayed by
    /// GenerateEvents). `compile_info` is a chain of `jvmtiCompiledMethodLoadRecordHeader` or null.
    CompiledMethodLoad = JVMTI_EVENT_COMPILED_METHOD_LOAD, CompiledMethodLoad, compiled_method_load,
        needs: Some(CanGenerateCompiledMethodLoadEvents), per_thread: false,
        (method: sys::jmethodID, code_size: sys::jint, code_addr: *const c_void, map_length: sys::jint,
         map: *const sys::jvmtiAddrLocationMap, compile_info: *const c_void) => CompiledMethodLoadArgs;
    /// A compiled method was unloaded from `code_addr`.
    CompiledMethodUnload = JVMTI_EVENT_COMPILED_METHOD_UNLOAD, CompiledMethodUnload, compiled_method_unload,
        needs: Some(CanGenerateCompiledMethodLoadEvents), per_thread: false,
        (method: sys::jmethodID, code_addr: *const c_void);
    /// The VM generated code that is no method (interpreter, stubs) at `address..address+length`; `name`
    /// is a C string (see [`event_str`]).
    DynamicCodeGenerated = JVMTI_EVENT_DYNAMIC_CODE_GENERATED, DynamicCodeGenerated, dynamic_code_generated,
        needs: None, per_thread: false,
        (name: *const c_char, address: *const c_void, length: sys::jint);
    /// The user asked for a data dump (Ctrl-\ / SIGQUIT).
    DataDumpRequest = JVMTI_EVENT_DATA_DUMP_REQUEST, DataDumpRequest, data_dump_request,
        needs: None, per_thread: false,
        ();
    /// A thread is about to wait on `object` (Object.wait); `timeout` in ms, 0 for none.
    MonitorWait = JVMTI_EVENT_MONITOR_WAIT, MonitorWait, monitor_wait,
        needs: Some(CanGenerateMonitorEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, object: sys::jobject, timeout: sys::jlong);
    /// A thread finished waiting on `object`.
    MonitorWaited = JVMTI_EVENT_MONITOR_WAITED, MonitorWaited, monitor_waited,
        needs: Some(CanGenerateMonitorEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, object: sys::jobject, timed_out: sys::jboolean);
    /// A thread is about to block on a monitor another thread holds.
    MonitorContendedEnter = JVMTI_EVENT_MONITOR_CONTENDED_ENTER, MonitorContendedEnter, monitor_contended_enter,
        needs: Some(CanGenerateMonitorEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, object: sys::jobject);
    /// A thread entered a monitor after blocking on it.
    MonitorContendedEntered = JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, MonitorContendedEntered,
        monitor_contended_entered, needs: Some(CanGenerateMonitorEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, object: sys::jobject);
    /// The VM ran out of a resource (`flags`: JVMTI_RESOURCE_EXHAUSTED_*).
    ResourceExhausted = JVMTI_EVENT_RESOURCE_EXHAUSTED, ResourceExhausted, resource_exhausted,
        needs: None, per_thread: false,
        (jni: Jni, flags: sys::jint, reserved: *const c_void, description: *const c_char);
    /// A full collection starts. Runs with the VM stopped: raw monitors and async-safe work only.
    GarbageCollectionStart = JVMTI_EVENT_GARBAGE_COLLECTION_START, GarbageCollectionStart, garbage_collection_start,
        needs: Some(CanGenerateGarbageCollectionEvents), per_thread: false,
        ();
    /// A full collection finished. Same restrictions as the start.
    GarbageCollectionFinish = JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, GarbageCollectionFinish,
        garbage_collection_finish, needs: Some(CanGenerateGarbageCollectionEvents), per_thread: false,
        ();
    /// A tagged object was freed. No JNI, no JVMTI except raw monitors and a few others.
    ObjectFree = JVMTI_EVENT_OBJECT_FREE, ObjectFree, object_free,
        needs: Some(CanGenerateObjectFreeEvents), per_thread: false,
        (tag: sys::jlong);
    /// The VM allocated an object that bytecode-instrumented allocation cannot see (reflection, JNI…).
    VmObjectAlloc = JVMTI_EVENT_VM_OBJECT_ALLOC, VMObjectAlloc, vm_object_alloc,
        needs: Some(CanGenerateVmObjectAllocEvents), per_thread: false,
        (jni: Jni, thread: sys::jthread, object: sys::jobject, class: sys::jclass, size: sys::jlong) => VmObjectAllocArgs;
    /// A sampled allocation (SetHeapSamplingInterval), after the object is initialised.
    SampledObjectAlloc = JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, SampledObjectAlloc, sampled_object_alloc,
        needs: Some(CanGenerateSampledObjectAllocEvents), per_thread: true,
        (jni: Jni, thread: sys::jthread, object: sys::jobject, class: sys::jclass, size: sys::jlong) => SampledObjectAllocArgs;
    /// A virtual thread starts (JDK 21+; needs can_support_virtual_threads).
    VirtualThreadStart = JVMTI_EVENT_VIRTUAL_THREAD_START, VirtualThreadStart, virtual_thread_start,
        needs: Some(CanSupportVirtualThreads), per_thread: false,
        (jni: Jni, virtual_thread: sys::jthread);
    /// A virtual thread ends (JDK 21+).
    VirtualThreadEnd = JVMTI_EVENT_VIRTUAL_THREAD_END, VirtualThreadEnd, virtual_thread_end,
        needs: Some(CanSupportVirtualThreads), per_thread: false,
        (jni: Jni, virtual_thread: sys::jthread);
}

/// A C string argument of an event (a class or code blob name), empty if null.
///
/// # Safety
/// `s` must be null or the NUL-terminated string the JVM passed, used only during the event.
pub unsafe fn event_str<'a>(s: *const c_char) -> &'a CStr {
    // SAFETY: per the contract, non-null means a NUL-terminated string alive for the event.
    if s.is_null() { c"" } else { unsafe { CStr::from_ptr(s) } }
}

/// A ClassFileLoadHook's class file: its name, the bytes the JVM is defining, and the way to replace them.
pub struct ClassFileLoad<'event> {
    jvmti: Jvmti,
    name: Option<&'event CStr>,
    bytes: &'event [u8],
    new_class_data_len: *mut sys::jint,
    new_class_data: *mut *mut c_uchar,
}

impl<'event> ClassFileLoad<'event> {
    /// The event's class file, or `None` when the JVM passed no bytes or no out-parameters.
    ///
    /// # Safety
    /// The arguments must be the ClassFileLoadHook's own, and the value used only during the event.
    pub unsafe fn from_event(
        jvmti: Jvmti,
        name: *const c_char,
        class_data_len: sys::jint,
        class_data: *const c_uchar,
        new_class_data_len: *mut sys::jint,
        new_class_data: *mut *mut c_uchar,
    ) -> Option<ClassFileLoad<'event>> {
        if class_data.is_null() || class_data_len <= 0 || new_class_data.is_null() || new_class_data_len.is_null() {
            return None;
        }
        // SAFETY: a non-null name is a NUL-terminated string the JVM keeps alive for the event (caller's contract).
        let name = (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) });
        // SAFETY: the JVM passes `class_data_len` readable bytes for the duration of the event (caller's contract).
        let bytes = unsafe { class_file_bytes(class_data, class_data_len) };
        Some(ClassFileLoad { jvmti, name, bytes, new_class_data_len, new_class_data })
    }

    /// The class's name (`None`: the JVM gave none, as for a hidden class).
    pub fn name(&self) -> Option<&'event CStr> {
        self.name
    }

    /// The class file the JVM is defining.
    pub fn bytes(&self) -> &'event [u8] {
        self.bytes
    }

    /// Has the JVM define `bytes` instead.
    pub fn replace(&self, bytes: &[u8]) -> Result<()> {
        // SAFETY: the out-parameters are the event's, checked non-null in `from_event`, during the event.
        unsafe { self.jvmti.replace_class_file(bytes, self.new_class_data_len, self.new_class_data) }
    }
}

/// The class file bytes a ClassFileLoadHook received.
///
/// # Safety
/// `data` and `len` must be the event's `class_data` and `class_data_len`, used only during the event.
pub unsafe fn class_file_bytes<'a>(data: *const c_uchar, len: sys::jint) -> &'a [u8] {
    if data.is_null() || len <= 0 {
        return &[];
    }
    // SAFETY: JVMTI passes `len` readable bytes at `data` for the duration of the event.
    unsafe { std::slice::from_raw_parts(data, len as usize) }
}

impl Jvmti {
    /// Enables or disables an event, for all threads (`thread` null) or one. A hub's subscribers use
    /// [`crate::EventHub::enable`] instead, which counts who wants what.
    pub fn set_event_enabled(self, event: Event, enabled: bool, thread: sys::jthread) -> Result<()> {
        let mode = if enabled { sys::JVMTI_ENABLE } else { sys::JVMTI_DISABLE };
        jvmti_call!(self, SetEventNotificationMode, mode, event.raw(), thread)
    }

    /// Replaces the class file a ClassFileLoadHook is defining with `bytes`, copied into JVMTI memory as
    /// the event requires.
    ///
    /// # Safety
    /// `new_class_data_len` and `new_class_data` must be the event's out-parameters, during the event.
    pub unsafe fn replace_class_file(
        self,
        bytes: &[u8],
        new_class_data_len: *mut sys::jint,
        new_class_data: *mut *mut c_uchar,
    ) -> Result<()> {
        let len = sys::jint::try_from(bytes.len()).map_err(|_| crate::JvmtiError(sys::JVMTI_ERROR_ILLEGAL_ARGUMENT))?;
        let buf = self.allocate_copy(bytes)?;
        // SAFETY: the out-parameters are the event's (caller's contract).
        unsafe {
            *new_class_data_len = len;
            *new_class_data = buf;
        }
        Ok(())
    }

    /// Asks the JVM to replay CompiledMethodLoad / DynamicCodeGenerated for code that already exists.
    pub fn generate_events(self, event: Event) -> Result<()> {
        jvmti_call!(self, GenerateEvents, event.raw())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_round_trips_through_its_jvmti_constant() {
        for &e in Event::ALL {
            assert_eq!(Event::from_raw(e.raw()), Some(e), "{e:?}");
            assert_eq!(Event::ALL[e.index()], e);
        }
    }

    #[test]
    fn the_table_covers_every_event_constant_of_the_bindings() {
        // JVMTI numbers its events 50..=88 with gaps (72, 77-79, 85 reserved).
        let known = (50..=88).filter_map(Event::from_raw).count();
        assert_eq!(known, Event::COUNT);
        assert_eq!(Event::COUNT, 34);
    }

    #[test]
    fn every_slot_of_the_callback_table_is_filled() {
        struct NoHost;
        impl EventHost for NoHost {
            type Context = ();
            fn hub() -> Option<(&'static crate::EventHub<()>, &'static ())> {
                None
            }
        }
        let cb = event_callbacks::<NoHost>();
        // Reserved slots stay empty; every named one is set.
        assert!(cb.VMInit.is_some() && cb.ClassFileLoadHook.is_some() && cb.VirtualThreadEnd.is_some());
        assert!(cb.reserved72.is_none());
        let slots = std::mem::size_of::<sys::jvmtiEventCallbacks>() / std::mem::size_of::<usize>();
        // SAFETY: the table is an array of nullable function pointers.
        let words: &[usize] = unsafe { std::slice::from_raw_parts((&cb as *const _) as *const usize, slots) };
        assert_eq!(words.iter().filter(|w| **w != 0).count(), Event::COUNT);
    }
}
