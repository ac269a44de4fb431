//! The agent: startup from the option string, the wiring of the [`Context`], the hub and the capabilities,
//! the core's reactions to JVM events (threads, classes, dumps) and the session's end. Only the JVM's entry
//! points (`entry`) call into it; everything else reaches the agent through [`AgentControl`].

use crate::agent_cost::{self, Part};
use crate::capabilities;
use crate::capabilities::Registered;
use crate::commands::{ControlCommand, DumpReason};
use crate::context::{AgentControl, Context};
use crate::context::{LoadKind, Loaded};
use crate::hub::{Capability, ClassFileChain};
use crate::ids::main_tag;
use crate::log;
use crate::options::{CpuMode, Options, Parsed};
use crate::output::Output;
use jvmti::{
    CapabilityFlag, Event, EventHandler, EventHost, EventHub, EventHubBuilder, HubError, Jni, Jvmti, Need,
    SubscriberId, Vm, sys,
};
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The current session's agent. A session that ends (`duration=`, `hprof attach PID stop`) leaves its
/// agent in place, stopped; a later attach starts a new one here (see `attach`). An agent is never freed:
/// a callback still running on another thread may hold it.
static AGENT: AtomicPtr<Agent> = AtomicPtr::new(std::ptr::null_mut());
/// Serialises starting sessions (Agent_OnLoad/OnAttach) and ending them; counts the sessions started.
static SESSIONS: Mutex<u32> = Mutex::new(0);

/// The running agent, once Agent_OnLoad/OnAttach has succeeded.
fn agent() -> Option<&'static Agent> {
    // SAFETY: the pointer is null or comes from Box::leak, and agents are never freed.
    unsafe { AGENT.load(Ordering::Acquire).as_ref() }
}

/// One session: its context, the hub that feeds it events, and the capabilities the options chose.
struct Agent {
    ctx: Context,
    capabilities: Vec<(SubscriberId, &'static dyn Capability)>,
    hub: EventHub<Context>,
    dump_lock: Mutex<()>,
}

/// Agent_OnLoad / Agent_OnAttach: returns JNI_OK or JNI_ERR (after printing why).
pub fn start(vm: Vm, option_string: Option<&str>, kind: LoadKind) -> sys::jint {
    crate::panic_guard::install_panic_hook();
    match agent_cost::timed(Part::Load, || start_session(vm, option_string, kind)) {
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
pub fn start_session(vm: Vm, option_string: Option<&str>, kind: LoadKind) -> Result<&'static Context, String> {
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
            // exit() runs the C atexit handlers and ends the process; we are in Agent_OnLoad, before the JVM has
            // started any Java thread.
            std::process::exit(0)
        }
        Parsed::Run(o) => *o,
    };
    if options.cpu.is_some_and(|c| matches!(c, CpuMode::Times | CpuMode::Old))
        && capabilities::cpu_times::ran_in_this_jvm()
    {
        // Its tables belong to the process: the probes' natives reach them without a session.
        return Err("cpu=times or cpu=old ran in this JVM in an earlier session; it runs once per JVM".into());
    }
    let mut sessions = SESSIONS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(running) = agent().map(|a| &a.ctx).filter(|c| c.is_live()) {
        return Err(format!(
            "hprof already profiles this JVM (session {}: {}); end it first with `hprof attach PID stop`",
            running.session(),
            running.option_string()
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
    // From here on an error would not stop the JVM from starting: errorexit=y makes it end the JVM.
    log::exit_on_error(options.error_exit);
    let session = *sessions + 1;
    let loaded = Loaded { kind, session, option_string: option_string.unwrap_or("").to_owned() };
    let ctx = Context::new(vm, jvmti, jvmti_version, options, output, loaded);
    let agent = Agent { ctx, capabilities, hub, dump_lock: Mutex::new(()) };
    *sessions += 1;
    let agent: &'static Agent = Box::leak(Box::new(agent));
    agent.ctx.make_current(agent);
    AGENT.store(agent as *const Agent as *mut Agent, Ordering::Release);

    let set_up =
        agent.capabilities.iter().try_for_each(|(_, c)| c.on_load(&agent.ctx)).and_then(|()| {
            agent.hub.install::<AgentHost>(jvmti).map_err(|e| format!("cannot set up JVMTI events: {e}"))
        });
    if let Err(e) = set_up {
        // No profile comes: a fresh file waiting to replace an existing one is not left beside it.
        agent.ctx.output.abandon();
        return Err(e);
    }
    if agent.ctx.session() == 1 {
        // SAFETY: flush_at_exit is an extern "C" fn that catches panics; registered once per process.
        unsafe { libc::atexit(flush_at_exit) };
    }

    if kind == LoadKind::Attach {
        // The VM is already running: do now what VMInit would have done.
        let jni = vm.jni().ok_or("Agent_OnAttach: the attaching thread has no JNI environment")?;
        let current = jvmti.current_thread().map_err(|e| format!("GetCurrentThread: {e}"))?;
        agent.on_vm_init(jni, current);
    }
    Ok(&agent.ctx)
}

/// Subscribes the core, then each capability in the order the options chose them, to the hub.
fn subscribe(
    capabilities: Vec<Registered>,
    kind: LoadKind,
) -> (EventHub<Context>, Vec<(SubscriberId, &'static dyn Capability)>) {
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
            log::process_exiting();
            if let Some(a) = agent() {
                if a.ctx.is_live() && !a.ctx.is_exiting() && !log::terminating() {
                    a.exit_without_vm_death();
                }
                a.ctx.output.flush_at_exit();
            }
        },
        (),
    )
}

/// How long the process's exit waits for the worker to begin the reports written in place of VMDeath's,
/// and then for them to be written.
const EXIT_REPORTS_START: std::time::Duration = std::time::Duration::from_secs(5);
const EXIT_REPORTS_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

impl Agent {
    pub fn capabilities(&self) -> impl Iterator<Item = &'static dyn Capability> + '_ {
        self.capabilities.iter().map(|(_, c)| *c)
    }

    pub(crate) fn on_vm_init(&self, jni: Jni, current: sys::jthread) {
        // Classes and threads that predate our events.
        if let Ok(classes) = self.ctx.jvmti.loaded_classes() {
            for class in classes {
                self.ctx.class_record(class);
                jni.delete_local_ref(class);
            }
        }
        let mut existing = Vec::new();
        if let Ok(threads) = self.ctx.jvmti.all_threads() {
            for thread in threads {
                let own = jni.is_same_object(thread, current);
                if let Some((record, _)) = self.ctx.register_thread(thread, own) {
                    existing.push((thread, record, own));
                }
            }
        }
        for c in self.capabilities() {
            c.on_vm_init(&self.ctx, jni);
        }
        if self.ctx.options.net.is_some() {
            crate::net::start(&self.ctx, jni);
        }
        crate::worker::start(&self.ctx, jni);
        if let Some(seconds) = self.ctx.options.duration_s {
            crate::attach::end_after(&self.ctx, jni, seconds);
        }
        for (thread, record, own) in existing {
            for c in self.capabilities() {
                c.on_thread_start(&self.ctx, jni, thread, &record, own);
            }
            jni.delete_local_ref(thread);
        }
    }

    pub(crate) fn on_vm_death(&self, jni: Jni) {
        self.ctx.mark_exiting();
        for c in self.capabilities() {
            c.on_vm_death(&self.ctx, jni);
        }
        if self.ctx.options.dump_on_exit {
            self.dump(Some(jni), DumpReason::Exit);
        }
        self.ctx.mark_dead();
        self.ctx.output.close();
        crate::worker::stop();
    }

    /// The process exits and VMDeath never came: the launcher's DestroyJavaVM could not attach its thread,
    /// which needs a new Thread object (G1 with a full heap), and the launcher went on to `exit()`. The
    /// JVM still runs, so the exit reports are written as VMDeath would, on the worker — a Java thread since
    /// VMInit, where this thread is attached no more and could not attach without the heap either.
    fn exit_without_vm_death(&'static self) {
        // 0: queued, 1: the worker took it, 2: written.
        let progress = std::sync::Arc::new((Mutex::new(0u8), std::sync::Condvar::new()));
        let report = progress.clone();
        let submitted = crate::worker::submit(move |_, jni| {
            let (lock, wake) = &*report;
            *lock.lock().unwrap_or_else(|e| e.into_inner()) = 1;
            wake.notify_all();
            self.on_vm_death(jni);
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
        let known_tid = self.ctx.thread_record(thread).map(|r| r.os_tid.load(Ordering::Relaxed) != 0);
        let Some((record, _)) = self.ctx.register_thread(thread, true) else { return };
        // Listed at VMInit before its own ThreadStart: now it runs on its own thread for the first time.
        if known_tid == Some(false) {
            record.os_tid.store(crate::threads::current_os_tid(), Ordering::Relaxed);
        }
        if known_tid != Some(true) {
            for c in self.capabilities() {
                c.on_thread_start(&self.ctx, jni, thread, &record, true);
            }
        }
    }

    pub(crate) fn on_thread_end(&self, jni: Jni, thread: sys::jthread) {
        let Some(record) = self.ctx.thread_record(thread) else { return };
        for c in self.capabilities() {
            c.on_thread_end(&self.ctx, jni, thread, &record);
        }
        self.ctx.mark_thread_ended(&record);
    }
}

impl AgentControl for Agent {
    /// The core's own commands (FORCE GC, DUMP TRACES, depth) are the context's; the rest are carried
    /// out by the capabilities that own the data.
    fn command(&self, jni: Option<Jni>, command: &ControlCommand) -> bool {
        let mut handled = false;
        for c in self.capabilities() {
            handled |= c.handle_command(&self.ctx, jni, command);
        }
        handled
    }

    /// The hub counts subscribers, so another capability that wants the same event keeps receiving it.
    fn switch_events(&self, capability: &str, events: &[Event], on: bool) -> Result<(), HubError> {
        let Some(&(id, _)) = self.capabilities.iter().find(|(_, c)| c.name() == capability) else {
            return Ok(());
        };
        for &event in events {
            if on {
                self.hub.enable(self.ctx.jvmti, id, event)?;
            } else {
                self.hub.disable(self.ctx.jvmti, id, event)?;
            }
        }
        Ok(())
    }

    /// Skipped while a dump is being written: it writes the reports itself.
    fn checkpoint(&self, jni: Jni) {
        let _no_dump = match self.dump_lock.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        if !self.ctx.is_live() {
            return;
        }
        let reports: Vec<_> = self.capabilities().filter_map(|c| c.checkpoint(&self.ctx, jni)).collect();
        self.ctx.reports().checkpoint(&reports);
        self.ctx.output.flush();
    }

    /// Writes every capability's section, in HPROF's order, and flushes. One dump at a time.
    fn dump(&self, jni: Option<Jni>, reason: DumpReason) {
        let _one_at_a_time = self.dump_lock.lock().unwrap_or_else(|e| e.into_inner());
        if !self.ctx.is_live() {
            return;
        }
        let mut sections: Vec<(u32, &'static str, &dyn Capability)> =
            self.capabilities().filter_map(|c| c.dump_section().map(|(rank, label)| (rank, label, c))).collect();
        sections.sort_by_key(|s| s.0);
        if sections.is_empty() {
            self.ctx.output.flush();
            return;
        }
        let verbose = self.ctx.options.verbose;
        log::verbose(verbose, "Dumping");
        for (_, label, c) in sections {
            log::verbose(verbose, &format!(" {label} ..."));
            c.write_dump(&self.ctx, jni, reason);
        }
        self.ctx.output.flush();
        log::verbose(verbose, " done.\n");
    }

    /// Ends the session before the JVM ends: what VMDeath does (samplers stop, the reports are written,
    /// the output closed), and then every event off and every capability given back, so that the JVM runs
    /// on as if the agent had never come, and a later attach can start a session of its own. Returns false
    /// if the session had already ended.
    fn end_session(&self, jni: Jni) -> bool {
        let _one_at_a_time = SESSIONS.lock().unwrap_or_else(|e| e.into_inner());
        if !self.ctx.is_live() {
            return false;
        }
        for c in self.capabilities() {
            c.on_vm_death(&self.ctx, jni);
        }
        self.dump(Some(jni), DumpReason::SessionEnd);
        self.ctx.mark_dead();
        self.ctx.output.close();
        crate::worker::stop();
        for event in Event::ALL {
            let _ = self.ctx.jvmti.set_event_enabled(*event, false, std::ptr::null_mut());
        }
        if let Ok(caps) = self.ctx.jvmti.capabilities() {
            let _ = self.ctx.jvmti.relinquish_capabilities(&caps);
        }
        true
    }
}

/// The events the agent's core always handles.
const CORE_EVENTS: [Event; 7] = [
    Event::VmInit,
    Event::VmDeath,
    Event::ThreadStart,
    Event::ThreadEnd,
    Event::ClassPrepare,
    Event::DataDumpRequest,
    Event::ObjectFree,
];

/// The core's subscription: the shared tables and dumps. It subscribes first, so that a class or thread
/// is in the shared tables before a capability hears of it.
struct Core;

impl EventHandler<Context> for Core {
    fn vm_init(&self, _: &Context, _: Jvmti, jni: Jni, thread: sys::jthread) {
        if let Some(agent) = agent() {
            agent_cost::timed(Part::VmInit, || agent.on_vm_init(jni, thread));
        }
    }

    fn vm_death(&self, _: &Context, _: Jvmti, jni: Jni) {
        if let Some(agent) = agent() {
            agent_cost::timed(Part::Exit, || agent.on_vm_death(jni));
            if agent_cost::measuring() {
                log::verbose(true, &format!("{}\n", agent_cost::summary()));
            }
        }
    }

    fn thread_start(&self, _: &Context, _: Jvmti, jni: Jni, thread: sys::jthread) {
        if let Some(agent) = agent() {
            agent_cost::timed(Part::ThreadStart, || agent.on_thread_start(jni, thread));
        }
    }

    fn thread_end(&self, _: &Context, _: Jvmti, jni: Jni, thread: sys::jthread) {
        if let Some(agent) = agent() {
            agent.on_thread_end(jni, thread);
        }
    }

    fn class_prepare(&self, ctx: &Context, _: Jvmti, _jni: Jni, _thread: sys::jthread, class: sys::jclass) {
        agent_cost::timed(Part::ClassPrepare, || ctx.class_record(class));
    }

    fn data_dump_request(&self, ctx: &Context, _: Jvmti) {
        ctx.dump(ctx.vm().jni(), DumpReason::DataDumpRequest);
    }

    /// Class tags are the core's; other tags belong to capabilities that subscribe to ObjectFree.
    fn object_free(&self, ctx: &Context, _: Jvmti, tag: sys::jlong) {
        if main_tag::is_class(tag) {
            ctx.class_freed(tag);
        }
    }
}

/// Lets the hub's trampolines find the current session's hub and context.
struct AgentHost;

impl EventHost for AgentHost {
    type Context = Context;

    #[inline]
    fn hub() -> Option<(&'static EventHub<Context>, &'static Context)> {
        agent().map(|a| (&a.hub, &a.ctx))
    }
}
