//! The agent: startup from the option string, the shared tables, the core reactions to JVM events
//! (threads, classes, dumps), and the hand-over to the capabilities.

use crate::capabilities;
use crate::classes::ClassTable;
use crate::hub::{Capability, ControlCommand, DumpReason, EventHub};
use crate::ids::{ObjectIds, main_tag};
use crate::log;
use crate::methods::MethodCache;
use crate::options::{Options, Parsed};
use crate::output::Output;
use crate::threads::ThreadTable;
use crate::traces::RawFrame;
use crate::traces::TraceTable;
use jvmti::{Event, Jni, Jvmti, JvmtiVersion, Vm, sys};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

static AGENT: OnceLock<Agent> = OnceLock::new();

/// The running agent, once Agent_OnLoad/OnAttach has succeeded.
pub fn agent() -> Option<&'static Agent> {
    AGENT.get()
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
    capabilities: Vec<Box<dyn Capability>>,
    hub: EventHub,
    dump_lock: Mutex<()>,
    dead: AtomicBool,
    /// Set as VMDeath begins (before the exit dump), when the collector has already stopped.
    exiting: AtomicBool,
    /// depth=, changeable at run time by the front end's CONTROL command.
    depth: AtomicU32,
}

/// The events the agent itself always handles.
const CORE_EVENTS: [Event; 7] = [
    Event::VmInit,
    Event::VmDeath,
    Event::ThreadStart,
    Event::ThreadEnd,
    Event::ClassPrepare,
    Event::DataDumpRequest,
    Event::ObjectFree,
];

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
    match start_inner(vm, option_string, kind) {
        Ok(()) => sys::JNI_OK as sys::jint,
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

fn start_inner(vm: Vm, option_string: Option<&str>, kind: LoadKind) -> Result<(), String> {
    let options = match Options::parse_for_vm(option_string, &vm_input_arguments()).map_err(|e| e.0)? {
        Parsed::Help => {
            use std::io::Write;
            let _ = std::io::stdout().write_all(crate::help::HELP.as_bytes());
            let _ = std::io::stdout().flush();
            // HPROF exits after printing its help; the JVM has not started, so there is nothing to unwind.
            unsafe { libc::exit(0) }
        }
        Parsed::Run(o) => *o,
    };
    if AGENT.get().is_some() {
        return Err("hprof is already loaded in this JVM; load it once".into());
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

    let capabilities = capabilities::build(&options)?;
    add_jvmti_capabilities(jvmti, &capabilities)?;
    let output = Output::open(&options)?;
    let hub = EventHub::new(&capabilities);
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
        capabilities,
        hub,
        dump_lock: Mutex::new(()),
        dead: AtomicBool::new(false),
        exiting: AtomicBool::new(false),
        depth: AtomicU32::new(0),
    };
    agent.depth.store(agent.options.depth, Ordering::Relaxed);
    if AGENT.set(agent).is_err() {
        return Err("hprof is already loaded in this JVM; load it once".into());
    }
    let agent = AGENT.get().expect("just set");

    jvmti.set_event_callbacks(&EventHub::callbacks()).map_err(|e| format!("SetEventCallbacks failed: {e}"))?;
    for c in &agent.capabilities {
        c.on_load(agent)?;
    }
    for event in Event::ALL {
        if CORE_EVENTS.contains(&event) || agent.hub.has_subscribers(event) {
            jvmti
                .set_event_enabled(event, true, std::ptr::null_mut())
                .map_err(|e| format!("cannot enable JVMTI event {event:?}: {e}"))?;
        }
    }
    unsafe { libc::atexit(flush_at_exit) };

    if kind == LoadKind::Attach {
        // The VM is already running: do now what VMInit would have done.
        let jni = vm.jni().ok_or("Agent_OnAttach: the attaching thread has no JNI environment")?;
        let current = jvmti.current_thread().map_err(|e| format!("GetCurrentThread: {e}"))?;
        agent.on_vm_init(jni, current);
    }
    Ok(())
}

/// Adds the JVMTI capabilities the core and the chosen capabilities need, naming any the JVM lacks.
fn add_jvmti_capabilities(jvmti: Jvmti, capabilities: &[Box<dyn Capability>]) -> Result<(), String> {
    let mut caps: sys::jvmtiCapabilities = unsafe { std::mem::zeroed() };
    caps.set_can_tag_objects(1);
    caps.set_can_generate_object_free_events(1);
    // Frames print as Class.method(File.java:line): traces need both.
    caps.set_can_get_line_numbers(1);
    caps.set_can_get_source_file_name(1);
    for c in capabilities {
        for e in c.events() {
            e.require_capability(&mut caps);
        }
        c.add_jvmti_capabilities(&mut caps);
    }
    jvmti.add_capabilities(&caps).map_err(|e| {
        let potential = jvmti.potential_capabilities().ok();
        let missing = potential.map(|p| describe_missing(&caps, &p)).unwrap_or_default();
        format!("the JVM refused the JVMTI capabilities hprof needs ({e}){missing}")
    })
}

fn describe_missing(wanted: &sys::jvmtiCapabilities, potential: &sys::jvmtiCapabilities) -> String {
    let checks: [(&str, u32, u32); 6] = [
        ("can_tag_objects", wanted.can_tag_objects(), potential.can_tag_objects()),
        (
            "can_generate_sampled_object_alloc_events",
            wanted.can_generate_sampled_object_alloc_events(),
            potential.can_generate_sampled_object_alloc_events(),
        ),
        (
            "can_generate_vm_object_alloc_events",
            wanted.can_generate_vm_object_alloc_events(),
            potential.can_generate_vm_object_alloc_events(),
        ),
        ("can_generate_monitor_events", wanted.can_generate_monitor_events(), potential.can_generate_monitor_events()),
        (
            "can_generate_compiled_method_load_events",
            wanted.can_generate_compiled_method_load_events(),
            potential.can_generate_compiled_method_load_events(),
        ),
        (
            "can_generate_garbage_collection_events",
            wanted.can_generate_garbage_collection_events(),
            potential.can_generate_garbage_collection_events(),
        ),
    ];
    let missing: Vec<&str> = checks.iter().filter(|(_, w, p)| *w != 0 && *p == 0).map(|(n, _, _)| *n).collect();
    if missing.is_empty() { String::new() } else { format!(": unavailable: {}", missing.join(", ")) }
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

impl Agent {
    pub fn capabilities(&self) -> &[Box<dyn Capability>] {
        &self.capabilities
    }

    pub fn hub(&self) -> &EventHub {
        &self.hub
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
        for c in &self.capabilities {
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
        let reports: Vec<_> = self.capabilities.iter().filter_map(|c| c.checkpoint(self, jni)).collect();
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
        for c in self.hub.subscribers(self, Event::VmInit) {
            c.on_vm_init(self, jni);
        }
        if self.options.net.is_some() {
            crate::net::start(self, jni);
        }
        crate::worker::start(self, jni);
        for (thread, record, own) in existing {
            for c in self.hub.subscribers(self, Event::ThreadStart) {
                c.on_thread_start(self, jni, thread, &record, own);
            }
            jni.delete_local_ref(thread);
        }
    }

    pub(crate) fn on_vm_death(&self, jni: Jni) {
        self.exiting.store(true, Ordering::Relaxed);
        for c in self.hub.subscribers(self, Event::VmDeath) {
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
            for c in self.hub.subscribers(self, Event::ThreadStart) {
                c.on_thread_start(self, jni, thread, &record, true);
            }
        }
    }

    pub(crate) fn on_thread_end(&self, jni: Jni, thread: sys::jthread) {
        let Some(record) = self.threads.of(self, thread) else { return };
        for c in self.hub.subscribers(self, Event::ThreadEnd) {
            c.on_thread_end(self, jni, thread, &record);
        }
        self.threads.mark_ended(self, &record);
    }

    pub(crate) fn on_class_prepare(&self, jni: Jni, thread: sys::jthread, class: sys::jclass) {
        self.classes.register(self, class);
        for c in self.hub.subscribers(self, Event::ClassPrepare) {
            c.on_class_prepare(self, jni, thread, class);
        }
    }

    pub(crate) fn on_object_free(&self, tag: i64) {
        if main_tag::is_class(tag) {
            self.classes.on_class_freed(self, tag);
            return;
        }
        for c in self.hub.subscribers(self, Event::ObjectFree) {
            c.on_object_free(self, tag);
        }
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
        let mut sections: Vec<(u32, &'static str, &dyn Capability)> = self
            .capabilities
            .iter()
            .filter_map(|c| c.dump_section().map(|(rank, label)| (rank, label, c.as_ref())))
            .collect();
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
