//! The agent: startup from the option string, the shared tables, the core reactions to JVM events
//! (threads, classes, dumps), and the hand-over to the capabilities.

use crate::capabilities;
use crate::capabilities::Registered;
use crate::classes::{ClassEnv, ClassRecord, ClassTable};
use crate::hub::{AgentHost, CORE_EVENTS, Capability, ClassFileChain, ControlCommand, Core, DumpReason};
use crate::ids::ObjectIds;
use crate::log;
use crate::methods::{MethodCache, MethodEnv};
use crate::options::{Options, Parsed};
use crate::output::{Output, ReportTables};
use crate::threads::{ThreadEnv, ThreadTable};
use crate::traces::RawFrame;
use crate::traces::{TraceEnv, TraceTable};
use jvmti::{
    CapabilityFlag, Event, EventHub, EventHubBuilder, HubError, Jni, Jvmti, JvmtiVersion, Need, SubscriberId, Vm, sys,
};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};
use std::time::Instant;

/// The current session's agent. A session that ends (`duration=`, `hprof attach PID stop`) leaves its
/// agent in place, stopped; a later attach starts a new one here (see `attach`). An agent is never freed:
/// a callback still running on another thread may hold it.
static AGENT: AtomicPtr<Agent> = AtomicPtr::new(std::ptr::null_mut());
/// Serialises starting sessions (Agent_OnLoad/OnAttach) and ending them; counts the sessions started.
static SESSIONS: Mutex<u32> = Mutex::new(0);

/// The running agent, once Agent_OnLoad/OnAttach has succeeded.
pub fn agent() -> Option<&'static Agent> {
    // SAFETY: the pointer is null or comes from Box::leak, and agents are never freed.
    unsafe { AGENT.load(Ordering::Acquire).as_ref() }
}

pub struct Agent {
    pub vm: Vm,
    pub jvmti: Jvmti,
    pub jvmti_version: JvmtiVersion,
    pub options: Options,
    pub output: Output,
    pub ids: ObjectIds,
    pub threads: ThreadTable,
    pub classes: ClassTable,
    pub methods: MethodCache,
    pub traces: TraceTable,
    pub started: Instant,
    pub load_kind: LoadKind,
    /// 1 for the first session in this JVM, 2 for the next attach after it ended, …
    pub session: u32,
    /// The option string the session started with (for `status`).
    pub option_string: String,
    capabilities: Vec<(SubscriberId, &'static dyn Capability)>,
    hub: EventHub<Agent>,
    dump_lock: Mutex<()>,
    dead: AtomicBool,
    /// Set as VMDeath begins (before the exit dump), when the collector has already stopped.
    exiting: AtomicBool,
    /// depth=, changeable at run time by the front end's CONTROL command.
    depth: AtomicU32,
}

/// How the agent was loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadKind {
    /// -agentlib / -agentpath / -Xrun, before the VM starts.
    Startup,
    /// Into a running VM (Agent_OnAttach).
    Attach,
}

/// Agent_OnLoad / Agent_OnAttach: returns JNI_OK or JNI_ERR (after printing why).
pub fn start(vm: Vm, option_string: Option<&str>, kind: LoadKind) -> sys::jint {
    crate::panic_guard::install_panic_hook();
    match start_session(vm, option_string, kind) {
        Ok(_) => sys::JNI_OK as sys::jint,
        Err(msg) => {
            log::error(&msg);
            sys::JNI_ERR
        }
    }
}

/// The JVM's own input arguments (for `-Xprof`): from HotSpot's tables, else the process's command line.
fn vm_input_arguments() -> Vec<String> {
    if let Some(args) = hotspot::VmStructs::get().and_then(|vm| hotspot::vm_input_arguments(vm).ok()) {
        return args;
    }
    std::fs::read("/proc/self/cmdline")
        .map(|b| b.split(|&c| c == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect())
        .unwrap_or_default()
}

/// Starts a session: parses the options, takes a JVMTI environment of its own and switches on what the
/// options ask for. In a running JVM (`kind` Attach) it also does what VMInit would have done.
pub fn start_session(vm: Vm, option_string: Option<&str>, kind: LoadKind) -> Result<&'static Agent, String> {
    let options = match Options::parse_for_vm(option_string, &vm_input_arguments()).map_err(|e| e.0)? {
        // Exiting after the help is HPROF's way at startup; a running JVM must go on.
        Parsed::Help if kind == LoadKind::Attach => {
            return Err("help lists the options only at startup: java -agentpath:/path/to/libhprof.so=help".into());
        }
        Parsed::Help => {
            use std::io::Write;
            let _ = std::io::stdout().write_all(crate::help::HELP.as_bytes());
            let _ = std::io::stdout().flush();
            // HPROF exits after printing its help; the JVM has not started, so there is nothing to unwind.
            // SAFETY: exit runs the C atexit handlers and ends the process; we are in Agent_OnLoad, before the JVM
            // has started any Java thread, so no Rust state is left half-updated for anyone.
            unsafe { libc::exit(0) }
        }
        Parsed::Run(o) => *o,
    };
    if options.cpu.is_some_and(|c| matches!(c, crate::options::CpuMode::Times | crate::options::CpuMode::Old))
        && capabilities::cpu_times::ran_in_this_jvm()
    {
        // Its tables belong to the process: the probes' natives reach them without a session.
        return Err("cpu=times or cpu=old ran in this JVM in an earlier session; it runs once per JVM".into());
    }
    let mut sessions = SESSIONS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(running) = agent().filter(|a| a.is_live()) {
        return Err(format!(
            "hprof already profiles this JVM (session {}: {}); end it first with `hprof attach PID stop`",
            running.session, running.option_string
        ));
    }
    for w in &options.warnings {
        log::warning(w);
    }
    let jvmti = vm
        .jvmti(sys::JVMTI_VERSION_1_2)
        .map_err(|e| format!("this JVM offers no JVMTI environment ({e}); hprof needs JDK 17 or newer"))?;
    let jvmti_version = jvmti.version().map_err(|e| format!("GetVersionNumber failed: {e}"))?;
    if jvmti_version.major < 11 {
        return Err(format!(
            "this JVM's JVMTI is version {jvmti_version}; hprof-rs needs JDK 11 or newer (17+ tested)"
        ));
    }

    let (hub, capabilities) = subscribe(capabilities::build(&options)?, kind);
    hub.request_capabilities(jvmti).map_err(|e| e.to_string())?;
    let output = Output::open(&options)?;
    let agent = Agent {
        vm,
        jvmti,
        jvmti_version,
        traces: TraceTable::new(options.lineno),
        options,
        output,
        ids: ObjectIds::default(),
        threads: ThreadTable::new(),
        classes: ClassTable::default(),
        methods: MethodCache::default(),
        started: Instant::now(),
        load_kind: kind,
        session: *sessions + 1,
        option_string: option_string.unwrap_or("").to_owned(),
        capabilities,
        hub,
        dump_lock: Mutex::new(()),
        dead: AtomicBool::new(false),
        exiting: AtomicBool::new(false),
        depth: AtomicU32::new(0),
    };
    agent.depth.store(agent.options.depth, Ordering::Relaxed);
    *sessions += 1;
    let agent: &'static Agent = Box::leak(Box::new(agent));
    AGENT.store(agent as *const Agent as *mut Agent, Ordering::Release);

    for (_, c) in &agent.capabilities {
        c.on_load(agent)?;
    }
    agent.hub.install::<AgentHost>(jvmti).map_err(|e| format!("cannot set up JVMTI events: {e}"))?;
    if agent.session == 1 {
        // SAFETY: flush_at_exit is an extern "C" fn that catches panics; registered once per process.
        unsafe { libc::atexit(flush_at_exit) };
    }

    if kind == LoadKind::Attach {
        // The VM is already running: do now what VMInit would have done.
        let jni = vm.jni().ok_or("Agent_OnAttach: the attaching thread has no JNI environment")?;
        let current = jvmti.current_thread().map_err(|e| format!("GetCurrentThread: {e}"))?;
        agent.on_vm_init(jni, current);
    }
    Ok(agent)
}

/// Subscribes the core, then each capability in the order the options chose them, to the hub.
fn subscribe(
    capabilities: Vec<Registered>,
    kind: LoadKind,
) -> (EventHub<Agent>, Vec<(SubscriberId, &'static dyn Capability)>) {
    let mut hub = EventHubBuilder::new();
    hub.subscribe(&Core, CORE_EVENTS);
    hub.need(CapabilityFlag::CanTagObjects, Need::Required);
    // Frames print as Class.method(File.java:line): traces need both.
    hub.need(CapabilityFlag::CanGetLineNumbers, Need::Required);
    hub.need(CapabilityFlag::CanGetSourceFileName, Need::Required);
    let mut subscribed = Vec::with_capacity(capabilities.len());
    let mut rewriters = Vec::new();
    for Registered { capability, handler } in capabilities {
        for flag in capability.jvmti_capabilities() {
            hub.need(flag, need_of(flag, kind));
        }
        subscribed.push((hub.subscribe(handler, capability.events()), capability));
        if capability.rewrites_classes() {
            rewriters.push(capability);
        }
    }
    if !rewriters.is_empty() {
        hub.subscribe(Box::leak(Box::new(ClassFileChain { rewriters })), [Event::ClassFileLoadHook]);
    }
    (hub.build(), subscribed)
}

/// HotSpot grants the monitor-ownership queries only to agents loaded with the JVM. Their users (the
/// monitor roots of a heap dump, the owners in MONITOR DUMP) already do without when a query fails, so an
/// attached agent takes them only where they are offered.
fn need_of(flag: CapabilityFlag, kind: LoadKind) -> Need {
    let onload_only =
        matches!(flag, CapabilityFlag::CanGetOwnedMonitorInfo | CapabilityFlag::CanGetCurrentContendedMonitor);
    if kind == LoadKind::Attach && onload_only { Need::IfAvailable } else { Need::Required }
}

extern "C" fn flush_at_exit() {
    crate::panic_guard::guard(
        || {
            if let Some(a) = agent() {
                if a.is_live() && !a.is_exiting() {
                    a.exit_without_vm_death();
                }
                a.output.flush_at_exit();
            }
        },
        (),
    )
}

/// How long the process's exit waits for the worker to begin the reports written in place of VMDeath's,
/// and then for them to be written.
const EXIT_REPORTS_START: std::time::Duration = std::time::Duration::from_secs(5);
const EXIT_REPORTS_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

// The shared tables and the writer take what they need through these traits, so that none of them
// depends on the agent.
impl ClassEnv for Agent {
    fn jvmti(&self) -> Jvmti {
        self.jvmti
    }
    fn ids(&self) -> &ObjectIds {
        &self.ids
    }
    fn class_loaded(&self, record: &ClassRecord) {
        self.output.load_class(record);
    }
    fn class_unloaded(&self, serial: u32) {
        self.output.unload_class(serial);
    }
}

impl ThreadEnv for Agent {
    fn jvmti(&self) -> Jvmti {
        self.jvmti
    }
    fn ids(&self) -> &ObjectIds {
        &self.ids
    }
    fn thread_started(&self, thread: &hprof_format::model::ThreadStart) {
        self.output.thread_start(thread);
    }
    fn thread_ended(&self, serial: u32) {
        self.output.thread_end(serial);
    }
}

impl MethodEnv for Agent {
    fn classes(&self) -> &ClassTable {
        &self.classes
    }
}

impl TraceEnv for Agent {
    fn methods(&self) -> &MethodCache {
        &self.methods
    }
}

impl ReportTables for Agent {
    fn traces(&self) -> &TraceTable {
        &self.traces
    }
    fn classes(&self) -> &ClassTable {
        &self.classes
    }
}

impl Agent {
    pub fn capabilities(&self) -> impl Iterator<Item = &'static dyn Capability> + '_ {
        self.capabilities.iter().map(|(_, c)| *c)
    }

    pub fn hub(&self) -> &EventHub<Agent> {
        &self.hub
    }

    /// Turns a capability's events on or off at run time. The hub counts subscribers, so another
    /// capability that wants the same event keeps receiving it.
    pub fn switch_events(&self, capability: &str, events: &[Event], on: bool) -> Result<(), HubError> {
        let Some(&(id, _)) = self.capabilities.iter().find(|(_, c)| c.name() == capability) else {
            return Ok(());
        };
        for &event in events {
            if on {
                self.hub.enable(self.jvmti, id, event)?;
            } else {
                self.hub.disable(self.jvmti, id, event)?;
            }
        }
        Ok(())
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
        // SAFETY: jvmtiFrameInfo is a plain C struct (a method id pointer and a location) for which all zero
        // bytes are valid.
        let mut buf = vec![unsafe { std::mem::zeroed::<sys::jvmtiFrameInfo>() }; depth];
        let Ok(n) = self.jvmti.stack_trace(thread, 0, &mut buf) else {
            return hprof_format::serial_base::TRACE;
        };
        let raw: Vec<RawFrame> = buf[..n].iter().map(RawFrame::from_jvmti).collect();
        let thread_serial = self.trace_thread_serial(self.threads.serial_of(self, thread));
        self.traces.intern_raw(self, jni, thread_serial, &raw)
    }

    /// Carries out a front-end command: the core's own (FORCE GC, DUMP TRACES, depth) here, the rest by
    /// the capabilities that own the data. Returns false if nothing acted on it.
    pub fn command(&self, jni: Option<Jni>, command: &ControlCommand) -> bool {
        let mut handled = false;
        for c in self.capabilities() {
            handled |= c.handle_command(self, jni, command);
        }
        handled
    }

    /// FORCE GC (0x01).
    pub fn force_gc(&self) {
        let _ = self.jvmti.force_garbage_collection();
    }

    /// DUMP TRACES (0x06): every trace not yet written.
    pub fn dump_traces(&self) {
        self.output.traces(self, self.traces.serials());
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

    /// Writes each capability's report as a checkpoint (see [`crate::worker`]) and everything buffered.
    /// Skipped while a dump is being written: it writes the reports itself.
    pub(crate) fn checkpoint(&self, jni: Jni) {
        let _no_dump = match self.dump_lock.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        if !self.is_live() {
            return;
        }
        let reports: Vec<_> = self.capabilities().filter_map(|c| c.checkpoint(self, jni)).collect();
        self.output.checkpoint(self, &reports);
        self.output.flush();
    }

    pub(crate) fn on_vm_init(&self, jni: Jni, current: sys::jthread) {
        // Classes and threads that predate our events.
        if let Ok(classes) = self.jvmti.loaded_classes() {
            for class in classes {
                self.classes.register(self, class);
                jni.delete_local_ref(class);
            }
        }
        let mut existing = Vec::new();
        if let Ok(threads) = self.jvmti.all_threads() {
            for thread in threads {
                let own = jni.is_same_object(thread, current);
                if let Some((record, _)) = self.threads.register(self, thread, own) {
                    existing.push((thread, record, own));
                }
            }
        }
        for c in self.capabilities() {
            c.on_vm_init(self, jni);
        }
        if self.options.net.is_some() {
            crate::net::start(self, jni);
        }
        crate::worker::start(self, jni);
        if let Some(seconds) = self.options.duration_s {
            crate::attach::end_after(self, jni, seconds);
        }
        for (thread, record, own) in existing {
            for c in self.capabilities() {
                c.on_thread_start(self, jni, thread, &record, own);
            }
            jni.delete_local_ref(thread);
        }
    }

    /// Ends the session before the JVM ends: what VMDeath does (samplers stop, the reports are written,
    /// the output closed), and then every event off and every capability given back, so that the JVM runs
    /// on as if the agent had never come, and a later attach can start a session of its own. Returns false
    /// if the session had already ended.
    pub fn end_session(&self, jni: Jni) -> bool {
        let _one_at_a_time = SESSIONS.lock().unwrap_or_else(|e| e.into_inner());
        if !self.is_live() {
            return false;
        }
        for c in self.capabilities() {
            c.on_vm_death(self, jni);
        }
        self.dump(Some(jni), DumpReason::SessionEnd);
        self.dead.store(true, Ordering::Relaxed);
        self.output.close();
        for event in Event::ALL {
            let _ = self.jvmti.set_event_enabled(*event, false, std::ptr::null_mut());
        }
        if let Ok(caps) = self.jvmti.capabilities() {
            let _ = self.jvmti.relinquish_capabilities(&caps);
        }
        true
    }

    pub(crate) fn on_vm_death(&self, jni: Jni) {
        self.exiting.store(true, Ordering::Relaxed);
        for c in self.capabilities() {
            c.on_vm_death(self, jni);
        }
        if self.options.dump_on_exit {
            self.dump(Some(jni), DumpReason::Exit);
        }
        self.dead.store(true, Ordering::Relaxed);
        self.output.close();
    }

    /// The process exits and VMDeath never came: the launcher's DestroyJavaVM could not attach its thread,
    /// which needs a new Thread object (G1 with a full heap), and the launcher went on to `exit()`. The
    /// JVM still runs, so the exit reports are written as VMDeath would, on the worker — a Java thread since
    /// VMInit, where this thread is attached no more and could not attach without the heap either.
    fn exit_without_vm_death(&self) {
        // 0: queued, 1: the worker took it, 2: written.
        let progress = std::sync::Arc::new((Mutex::new(0u8), std::sync::Condvar::new()));
        let report = progress.clone();
        let submitted = crate::worker::submit(move |agent, jni| {
            let (lock, wake) = &*report;
            *lock.lock().unwrap_or_else(|e| e.into_inner()) = 1;
            wake.notify_all();
            agent.on_vm_death(jni);
            *lock.lock().unwrap_or_else(|e| e.into_inner()) = 2;
            wake.notify_all();
        });
        if !submitted {
            return;
        }
        log::warning("the JVM is exiting without its VM death event (its heap is full?); writing the exit reports");
        let (lock, wake) = &*progress;
        let state = lock.lock().unwrap_or_else(|e| e.into_inner());
        // A worker that does not even take the job (stopped at a safepoint the exit holds, or stuck) would
        // hold the exit up for nothing: it gets a few seconds to start, then all the time a dump needs.
        let (state, _) =
            wake.wait_timeout_while(state, EXIT_REPORTS_START, |s| *s == 0).unwrap_or_else(|e| e.into_inner());
        let state = if *state == 1 {
            wake.wait_timeout_while(state, EXIT_REPORTS_WAIT, |s| *s < 2).unwrap_or_else(|e| e.into_inner()).0
        } else {
            state
        };
        if *state < 2 {
            log::error("the exit reports could not be written; the profile ends with its last checkpoint");
        }
    }

    pub(crate) fn on_thread_start(&self, jni: Jni, thread: sys::jthread) {
        let known_tid = self.threads.of(self, thread).map(|r| r.os_tid.load(Ordering::Relaxed) != 0);
        let Some((record, _)) = self.threads.register(self, thread, true) else { return };
        // Listed at VMInit before its own ThreadStart: now it runs on its own thread for the first time.
        if known_tid == Some(false) {
            record.os_tid.store(crate::threads::current_os_tid(), Ordering::Relaxed);
        }
        if known_tid != Some(true) {
            for c in self.capabilities() {
                c.on_thread_start(self, jni, thread, &record, true);
            }
        }
    }

    pub(crate) fn on_thread_end(&self, jni: Jni, thread: sys::jthread) {
        let Some(record) = self.threads.of(self, thread) else { return };
        for c in self.capabilities() {
            c.on_thread_end(self, jni, thread, &record);
        }
        self.threads.mark_ended(self, &record);
    }

    pub(crate) fn on_data_dump_request(&self) {
        let jni = self.vm.jni();
        self.dump(jni, DumpReason::DataDumpRequest);
    }

    /// Writes every capability's section, in HPROF's order, and flushes. One dump at a time.
    pub fn dump(&self, jni: Option<Jni>, reason: DumpReason) {
        let _one_at_a_time = self.dump_lock.lock().unwrap_or_else(|e| e.into_inner());
        if !self.is_live() {
            return;
        }
        let mut sections: Vec<(u32, &'static str, &dyn Capability)> =
            self.capabilities().filter_map(|c| c.dump_section().map(|(rank, label)| (rank, label, c))).collect();
        sections.sort_by_key(|s| s.0);
        if sections.is_empty() {
            self.output.flush();
            return;
        }
        let verbose = self.options.verbose;
        log::verbose(verbose, "Dumping");
        for (_, label, c) in sections {
            log::verbose(verbose, &format!(" {label} ..."));
            c.write_dump(self, jni, reason);
        }
        self.output.flush();
        log::verbose(verbose, " done.\n");
    }
}
