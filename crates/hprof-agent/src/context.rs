//! The context every capability works in: the session's JVM handles, options, writer, identifier counter
//! and shared tables, and a narrow handle on what only the agent can do. The agent builds one per session
//! and the hub hands it to every event handler, so that capabilities, the tables, the writer, sampling,
//! the socket reader and the worker depend on this module and never on the agent.

mod tables;

use crate::classes::ClassTable;
use crate::commands::{ControlCommand, DumpReason};
use crate::ids::ObjectIds;
use crate::methods::MethodCache;
use crate::options::Options;
use crate::output::Output;
use crate::threads::ThreadTable;
use crate::traces::{RawFrame, TraceTable};
use jvmti::{Event, HubError, Jni, Jvmti, JvmtiVersion, Vm, sys};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};
use std::time::Instant;

/// How the agent was loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadKind {
    /// -agentlib / -agentpath / -Xrun, before the VM starts.
    Startup,
    /// Into a running VM (Agent_OnAttach).
    Attach,
}

/// How this session of the agent began: how it was loaded, its number among the JVM's sessions (1: the
/// first), and the option string it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    pub kind: LoadKind,
    pub session: u32,
    pub option_string: String,
}

/// What a module may ask of the agent beyond the shared tables: the acts that need every capability or
/// the hub, which only the agent knows. The agent implements it; [`Context`]'s methods of the same names
/// forward to it.
pub trait AgentControl: Sync {
    /// Carries out a front-end command; false if nothing acted on it.
    fn command(&self, jni: Option<Jni>, command: &ControlCommand) -> bool;
    /// Turns a capability's events on or off at run time (counted per subscriber by the hub).
    fn switch_events(&self, capability: &str, events: &[Event], on: bool) -> Result<(), HubError>;
    /// Writes every capability's report as a checkpoint (see [`crate::worker`]).
    fn checkpoint(&self, jni: Jni);
    /// Writes every capability's section of a dump, in HPROF's order.
    fn dump(&self, jni: Option<Jni>, reason: DumpReason);
    /// Ends the session before the JVM ends; false if it had ended already.
    fn end_session(&self, jni: Jni) -> bool;
}

/// The current session's context (see [`current`]). Contexts are never freed: a callback still running on
/// another thread may hold an ended session's.
static CURRENT: AtomicPtr<Context> = AtomicPtr::new(std::ptr::null_mut());

/// The running session's context, for code the JVM calls without one (agent threads' bodies, natives
/// bound into Java, hooked JVM functions). `None` before the first session has started.
pub fn current() -> Option<&'static Context> {
    // SAFETY: the pointer is null or was set by `make_current` from a `&'static Context`.
    unsafe { CURRENT.load(Ordering::Acquire).as_ref() }
}

pub struct Context {
    vm: Vm,
    pub jvmti: Jvmti,
    jvmti_version: JvmtiVersion,
    pub options: Options,
    pub output: Output,
    ids: ObjectIds,
    threads: ThreadTable,
    classes: ClassTable,
    methods: MethodCache,
    traces: TraceTable,
    started: Instant,
    load_kind: LoadKind,
    /// 1 for the first session in this JVM, 2 for the next attach after it ended, …
    session: u32,
    /// The option string the session started with (for `status`).
    option_string: String,
    /// depth=, changeable at run time by the front end's CONTROL command.
    depth: AtomicU32,
    dead: AtomicBool,
    /// Set as VMDeath begins (before the exit dump), when the collector has already stopped.
    exiting: AtomicBool,
    control: OnceLock<&'static dyn AgentControl>,
}

impl Context {
    pub fn new(
        vm: Vm,
        jvmti: Jvmti,
        jvmti_version: JvmtiVersion,
        options: Options,
        output: Output,
        loaded: Loaded,
    ) -> Context {
        let Loaded { kind: load_kind, session, option_string } = loaded;
        Context {
            vm,
            jvmti,
            jvmti_version,
            traces: TraceTable::new(options.lineno),
            depth: AtomicU32::new(options.depth),
            options,
            output,
            ids: ObjectIds::default(),
            threads: ThreadTable::new(),
            classes: ClassTable::default(),
            methods: MethodCache::default(),
            started: Instant::now(),
            load_kind,
            session,
            option_string,
            dead: AtomicBool::new(false),
            exiting: AtomicBool::new(false),
            control: OnceLock::new(),
        }
    }

    /// Makes this the session [`current`] returns, with `control` as its agent.
    pub fn make_current(&'static self, control: &'static dyn AgentControl) {
        let _ = self.control.set(control);
        CURRENT.store(self as *const Context as *mut Context, Ordering::Release);
    }

    /// The JVM, to attach a thread of the agent's own.
    pub fn vm(&self) -> Vm {
        self.vm
    }

    /// How the agent was loaded.
    pub fn load_kind(&self) -> LoadKind {
        self.load_kind
    }

    /// The class table (serials from 100001).
    pub fn classes(&self) -> &ClassTable {
        &self.classes
    }

    /// The trace table (serials from 300001) and its frames.
    pub fn traces(&self) -> &TraceTable {
        &self.traces
    }

    /// The JVMTI version the JVM reports.
    pub fn jvmti_version(&self) -> JvmtiVersion {
        self.jvmti_version
    }

    /// The session's object identifier counter (shared by class, thread and heap-dump records).
    pub fn ids(&self) -> &ObjectIds {
        &self.ids
    }

    /// Every thread registered so far, ended ones included.
    pub fn thread_records(&self) -> Vec<std::sync::Arc<crate::threads::ThreadRecord>> {
        self.threads.all()
    }

    /// The thread of serial `serial`, if one was registered.
    pub fn thread_by_serial(&self, serial: u32) -> Option<std::sync::Arc<crate::threads::ThreadRecord>> {
        self.threads.by_serial(serial)
    }

    /// 1 for the first session in this JVM, 2 for the next attach after it ended, …
    pub fn session(&self) -> u32 {
        self.session
    }

    /// The option string the session started with (for `status`).
    pub fn option_string(&self) -> &str {
        &self.option_string
    }

    /// When the session started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Milliseconds since the session started (a sample's time on the timeline).
    pub fn elapsed_ms(&self) -> u32 {
        self.started.elapsed().as_millis().min(u32::MAX as u128) as u32
    }

    /// The current maximum trace depth (depth=, or what the front end set since).
    pub fn depth(&self) -> usize {
        self.depth.load(Ordering::Relaxed) as usize
    }

    pub fn set_depth(&self, depth: u32) {
        self.depth.store(depth.min(crate::options::MAX_DEPTH), Ordering::Relaxed);
    }

    /// The thread serial a trace should carry: the thread's with thread=y, else 0.
    pub fn trace_thread_serial(&self, thread_serial: u32) -> u32 {
        if self.options.thread { thread_serial } else { 0 }
    }

    /// The trace serial of `thread`'s current stack (null = the calling thread), up to depth= frames, taken
    /// with JVMTI GetStackTrace. 300000 ("no trace") if the stack cannot be taken.
    pub fn trace_of_thread(&self, jni: Option<Jni>, thread: sys::jthread) -> u32 {
        let depth = self.depth();
        let Ok(frames) = self.jvmti.stack_frames(thread, 0, depth) else {
            return hprof_format::serial_base::TRACE;
        };
        let raw: Vec<RawFrame> = frames.iter().map(RawFrame::from_jvmti).collect();
        self.intern_stack(jni, self.thread_serial(thread), &raw)
    }

    /// FORCE GC (0x01).
    pub fn force_gc(&self) {
        let _ = self.jvmti.force_garbage_collection();
    }

    /// DUMP TRACES (0x06): every trace not yet written.
    pub fn dump_traces(&self) {
        self.reports().traces(self.traces.serials());
        self.output.flush();
    }

    /// False once VMDeath has begun.
    pub fn is_live(&self) -> bool {
        !self.dead.load(Ordering::Relaxed)
    }

    /// True once the JVM has begun to exit (VMDeath): no collection can be forced any more.
    pub fn is_exiting(&self) -> bool {
        self.exiting.load(Ordering::Relaxed)
    }

    pub(crate) fn mark_exiting(&self) {
        self.exiting.store(true, Ordering::Relaxed);
    }

    pub(crate) fn mark_dead(&self) {
        self.dead.store(true, Ordering::Relaxed);
    }

    /// See [`AgentControl::command`]; false before the agent is wired.
    pub fn command(&self, jni: Option<Jni>, command: &ControlCommand) -> bool {
        self.control.get().is_some_and(|c| c.command(jni, command))
    }

    /// See [`AgentControl::switch_events`].
    pub fn switch_events(&self, capability: &str, events: &[Event], on: bool) -> Result<(), HubError> {
        self.control.get().map_or(Ok(()), |c| c.switch_events(capability, events, on))
    }

    /// See [`AgentControl::checkpoint`].
    pub fn checkpoint(&self, jni: Jni) {
        if let Some(c) = self.control.get() {
            c.checkpoint(jni);
        }
    }

    /// See [`AgentControl::dump`].
    pub fn dump(&self, jni: Option<Jni>, reason: DumpReason) {
        if let Some(c) = self.control.get() {
            c.dump(jni, reason);
        }
    }

    /// See [`AgentControl::end_session`].
    pub fn end_session(&self, jni: Jni) -> bool {
        self.control.get().is_some_and(|c| c.end_session(jni))
    }
}

#[cfg(test)]
impl Context {
    /// A context with no JVM behind it, for unit tests of report logic: tables filled by hand, the writer
    /// writing where `options` (as on the command line; give `file=`) say. Its JVM handles are null: the
    /// code under test must call neither JVMTI nor JNI.
    pub fn without_jvm(options: &str) -> Context {
        let crate::options::Parsed::Run(options) = Options::parse(Some(options)).expect("test options parse") else {
            panic!("test options asked for help");
        };
        let output = Output::open(&options).expect("test output opens");
        // SAFETY: the null handles are never called through (see above); a call would fault on them at
        // once rather than act on some other memory.
        let (vm, jvmti) = unsafe { (Vm::from_raw(std::ptr::null_mut()), Jvmti::from_raw(std::ptr::null_mut())) };
        let version = JvmtiVersion { major: 21, minor: 0, micro: 0 };
        let loaded = Loaded { kind: LoadKind::Startup, session: 1, option_string: String::new() };
        Context::new(vm, jvmti, version, *options, output, loaded)
    }
}
