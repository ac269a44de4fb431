//! cpu=times and cpu=old: exact call counts and each method's own CPU time, by probes inserted into every
//! method's bytecode (HPROF's BCI), not by JVMTI MethodEntry/MethodExit, which keep the JVM interpreting.
//!
//! - `java_probes` (the default): `java.lang.HprofCpuTimes` whose `enter(int)`/`exit(int)` count in Java
//!   (per-thread trees in Java arrays, inlined by the JIT: no JNI transition per call), read at each dump.
//! - `probe_class` (`HPROF_CPU_TIMES_PROBES=jni`, the first design, kept for comparison): the same class
//!   with native `enter`/`exit` that record in `recorder`'s per-thread trees.
//! - the `classfile` crate rewrites each class in ClassFileLoadHook; classes loaded before VMInit are
//!   retransformed then. `method_table` names the methods by the ids their probes pass.
//! - `recorder`: the JNI probes' per-thread trees of calls with self time; `clock`: the ticks and the CPU
//!   clock.
//! - `report`: CPU TIME rows per trace, or cpu=old's caller/callee lines.

mod boot_natives;
mod clock;
mod java_probes;
mod method_table;
mod probe_class;
mod recorder;
mod report;

use crate::context::{Context, current};
use crate::hub::{Capability, ControlCommand, DumpReason};
use crate::log;
use crate::options::{CpuMode, Options};
use jvmti::{CapabilityFlag, EventHandler, Jni, sys};
use method_table::{MethodEntry, MethodTable};
use recorder::{Registry, Settings, Snapshot};
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// What the probes reach without a `self`: they are plain native functions.
struct Shared {
    /// The probes count in Java (`java_probes`), not through JNI into `recorder`.
    java: bool,
    methods: MethodTable,
    registry: Registry,
    settings: Settings,
    /// The probe class is defined and bound: from now on classes get probes.
    ready: AtomicBool,
    /// The probes record; false once a session ended before the JVM (`hprof attach PID stop`), when
    /// frames still running the instrumented code call them on.
    recording: AtomicBool,
    thread_serials: bool,
    /// Methods and classes left without probes, and why: on stderr at the first dump, and in the reports,
    /// each in the first report written after it was found.
    notes: Mutex<Vec<String>>,
    native_methods: AtomicU64,
    notes_printed: AtomicBool,
    notes_reported: AtomicUsize,
}

static SHARED: OnceLock<Shared> = OnceLock::new();

pub struct CpuTimes {
    old: bool,
    cutoff: f64,
}

/// A session ran cpu=times or cpu=old in this process already (a second one is refused before it starts).
pub fn ran_in_this_jvm() -> bool {
    SHARED.get().is_some()
}

impl CpuTimes {
    pub fn new(options: &Options) -> CpuTimes {
        let java = std::env::var("HPROF_CPU_TIMES_PROBES").map_or(true, |v| v != "jni");
        // A CPU clock read (a system call, ~2 µs on a VM) every 0.5 ms of a thread's time, give or take
        // half: segments of 2 ms mixing a 3 ms and a 1 ms method skewed their shares by 7 points.
        let segment_us = std::env::var("HPROF_SEGMENT_US").ok().and_then(|v| v.parse::<u64>().ok()).unwrap_or(500);
        let settings = if java {
            Settings { segment_ticks: segment_us * 1000, probe_ticks: 0, initial_rate: 1.0 }
        } else {
            let per_ms = clock::ticks_per_ms();
            Settings {
                segment_ticks: per_ms * segment_us / 1000,
                probe_ticks: recorder::measure_probe_ticks(),
                initial_rate: 1e6 / per_ms as f64,
            }
        };
        let _ = SHARED.set(Shared {
            java,
            methods: MethodTable::default(),
            registry: Registry::default(),
            settings,
            ready: AtomicBool::new(false),
            recording: AtomicBool::new(true),
            thread_serials: options.thread,
            notes: Mutex::new(Vec::new()),
            native_methods: AtomicU64::new(0),
            notes_printed: AtomicBool::new(false),
            notes_reported: AtomicUsize::new(0),
        });
        CpuTimes { old: options.cpu == Some(CpuMode::Old), cutoff: options.cutoff }
    }
}

fn shared() -> Option<&'static Shared> {
    SHARED.get()
}

fn note(s: &Shared, text: String) {
    s.notes.lock().unwrap_or_else(|e| e.into_inner()).push(text);
}

fn thread_serial(s: &Shared) -> u32 {
    if !s.thread_serials {
        return 0;
    }
    let Some(a) = current() else { return 0 };
    match a.jvmti.current_thread() {
        Ok(t) => a.thread_serial(t),
        Err(_) => 0,
    }
}

/// `java.lang.HprofCpuTimes.enter(int)`. Found by the JVM's native lookup, which searches the agent
/// libraries for boot classes' natives: binding it with RegisterNatives from VMInit (no Java caller)
/// makes JDK 17+ print a warning about re-registering a platform native method.
#[unsafe(no_mangle)]
pub extern "system" fn Java_java_lang_HprofCpuTimes_enter(_env: *mut sys::JNIEnv, _class: sys::jclass, id: sys::jint) {
    probe(id, recorder::enter)
}

/// `java.lang.HprofCpuTimes.exit(int)`, found like `enter`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_java_lang_HprofCpuTimes_exit(_env: *mut sys::JNIEnv, _class: sys::jclass, id: sys::jint) {
    probe(id, recorder::exit)
}

/// What both probes do with method `id`, while recording (not for the linking calls), behind the panic
/// guard every entry from the JVM has.
#[inline(always)]
fn probe(id: sys::jint, step: impl FnOnce(&mut recorder::ThreadProfile, u32)) {
    crate::panic_guard::guard(
        || {
            if let Some(s) = shared()
                && id != LINKING_CALL
                && s.recording.load(Ordering::Relaxed)
            {
                recorder::with_profile(&s.registry, &s.settings, || thread_serial(s), |p| step(p, id as u32));
            }
        },
        (),
    )
}

const PROBES: classfile::Probes =
    classfile::Probes { class: probe_class::CLASS_NAME, enter: probe_class::ENTER, exit: probe_class::EXIT };

/// The id the linking calls pass; the probes ignore it.
const LINKING_CALL: sys::jint = -1;

/// Defines the probe class and calls each native once, so that both are bound before any method has a
/// probe. They bind by name on first call, and the JVM's lookup runs Java code (`ClassLoader.findNative`):
/// were that code to carry probes already, as it does after an attach retransforms the loaded classes,
/// the first probe's lookup would call a probe, whose lookup calls a probe … until StackOverflowError.
fn install_probes(jni: Jni, s: &Shared) -> Result<(), String> {
    let name = CString::new(probe_class::CLASS_NAME).expect("no NUL");
    let bytes = if s.java { java_probes::CLASS_BYTES.to_vec() } else { probe_class::bytes() };
    let class = jni
        .define_class(&name, std::ptr::null_mut(), &bytes)
        .map_err(|e| format!("cannot define {}: {e}", probe_class::CLASS_NAME))?;
    if s.java {
        // Only the two natives need binding; enter and exit are bytecode.
        let linked = java_probes::link(jni, class).or_else(|first| {
            boot_natives::load_into_boot_loader(jni).map_err(|e| format!("{first}; and {e}"))?;
            java_probes::link(jni, class)
        });
        let started = linked.and_then(|()| java_probes::start(jni, class, s.settings.segment_ticks));
        jni.delete_local_ref(class);
        return started.map_err(|e| format!("cannot start {}: {e}", probe_class::CLASS_NAME));
    }
    let signature = CString::new(probe_class::SIGNATURE).expect("no NUL");
    let link = || {
        [probe_class::ENTER, probe_class::EXIT].iter().try_for_each(|m| {
            let method = CString::new(*m).expect("no NUL");
            let id = jni.static_method_id(class, &method, &signature).map_err(|e| format!("{m}: {e}"))?;
            jni.call_static_void(class, id, &[sys::jvalue { i: LINKING_CALL }]).map_err(|e| format!("{m}: {e}"))
        })
    };
    // At the JVM's start the lookup finds them in the start-up agents; after an attach it does not.
    let linked = link().or_else(|first| {
        boot_natives::load_into_boot_loader(jni).map_err(|e| format!("{first}; and {e}"))?;
        link()
    });
    jni.delete_local_ref(class);
    linked.map_err(|e| format!("cannot bind {}'s natives: {e}", probe_class::CLASS_NAME))
}

/// Gives probes to the classes loaded before the hook was live.
fn retransform_loaded(ctx: &Context, jni: Jni, s: &Shared) {
    retransform_loaded_classes(ctx, jni, &mut |name, e| {
        note(s, format!("class {name}: the JVM refused to retransform it ({e})"));
    });
}

/// Makes the agent's natives for boot classes findable after an attach (alloc_probe's too).
pub(crate) fn load_agent_into_boot_loader(jni: Jni) -> Result<(), String> {
    boot_natives::load_into_boot_loader(jni)
}

/// Retransforms every modifiable loaded class, a batch at a time; a batch the JVM refuses is retried class
/// by class so that one class cannot keep the others out (`refused` hears of each such class).
pub(crate) fn retransform_loaded_classes(ctx: &Context, jni: Jni, refused: &mut dyn FnMut(&str, String)) {
    let Ok(classes) = ctx.jvmti.loaded_classes() else { return };
    let mut modifiable = Vec::new();
    for c in classes {
        if ctx.jvmti.is_modifiable_class(c) {
            modifiable.push(c);
        } else {
            jni.delete_local_ref(c);
        }
    }
    for batch in modifiable.chunks(64) {
        if ctx.jvmti.retransform_classes(batch).is_err() {
            for &c in batch {
                if let Err(e) = ctx.jvmti.retransform_classes(&[c]) {
                    let name = ctx.jvmti.class_signature(c).unwrap_or_default();
                    refused(&name, e.to_string());
                }
            }
        }
    }
    for c in modifiable {
        jni.delete_local_ref(c);
    }
}

/// Its classes arrive through the agent's chain of class rewriters (`Capability::on_class_file_load`).
impl EventHandler<Context> for CpuTimes {}

impl Capability for CpuTimes {
    fn name(&self) -> &'static str {
        if self.old { "cpu=old" } else { "cpu=times" }
    }

    fn rewrites_classes(&self) -> bool {
        true
    }

    fn jvmti_capabilities(&self) -> Vec<CapabilityFlag> {
        vec![CapabilityFlag::CanRetransformClasses, CapabilityFlag::CanRetransformAnyClass]
    }

    /// A session ended before the JVM (`hprof attach PID stop`): the classes get their own code back
    /// (retransformed while the hook adds no probes) and the probes still on running frames record no more.
    /// At the JVM's exit nothing is undone.
    fn on_vm_death(&self, ctx: &Context, jni: Jni) {
        let Some(s) = shared() else { return };
        if ctx.is_exiting() || !s.ready.swap(false, Ordering::AcqRel) {
            return;
        }
        retransform_loaded(ctx, jni, s);
        s.recording.store(false, Ordering::Relaxed);
        if s.java {
            java_probes::stop(jni);
        }
    }

    fn on_vm_init(&self, ctx: &Context, jni: Jni) {
        let Some(s) = shared() else { return };
        if let Err(e) = install_probes(jni, s) {
            log::error(&format!("cpu=times: {e}; no method will be timed"));
            return;
        }
        s.ready.store(true, Ordering::Release);
        retransform_loaded(ctx, jni, s);
    }

    fn on_class_file_load(
        &self,
        _agent: &Context,
        _jni: Option<Jni>,
        _class_being_redefined: sys::jclass,
        _loader: sys::jobject,
        name: Option<&CStr>,
        data: &[u8],
    ) -> Option<Vec<u8>> {
        let s = shared()?;
        if !s.ready.load(Ordering::Acquire) {
            return None;
        }

        let mut class_name: Option<Arc<str>> = None;
        let result = classfile::instrument(data, &PROBES, &mut |class, m| {
            let class_name = class_name.get_or_insert_with(|| class.replace('/', ".").into()).clone();
            s.methods.add(MethodEntry {
                class_name,
                name: m.name.clone(),
                descriptor: m.descriptor.clone(),
                source_file: None,
            })
        });
        match result {
            Ok(r) => {
                for (m, why) in &r.skipped {
                    if why == "native" {
                        s.native_methods.fetch_add(1, Ordering::Relaxed);
                    } else {
                        note(s, format!("{}.{}{}: {why}", r.class.replace('/', "."), m.name, m.descriptor));
                    }
                }
                if r.methods.is_empty() {
                    return None;
                }
                if let Some(file) = r.source_file {
                    let file: Arc<str> = file.into();
                    for (_, id) in &r.methods {
                        s.methods.set_source_file(*id, file.clone());
                    }
                }
                Some(r.bytes)
            }
            Err(e) => {
                let name = name.map(|n| n.to_string_lossy().replace('/', ".")).unwrap_or_else(|| "<unnamed>".into());
                if e.message != "a module-info class has no code" && e.message != "the probes' own class" {
                    note(s, format!("class {name}: {e}"));
                }
                None
            }
        }
    }

    fn dump_section(&self) -> Option<(u32, &'static str)> {
        Some((40, "CPU usage by timing methods"))
    }

    fn write_dump(&self, ctx: &Context, jni: Option<Jni>, _reason: DumpReason) {
        let Some(s) = shared() else { return };
        self.print_notes_once(s);
        let note = new_notes(s);
        let threads: Vec<Snapshot> = if s.java { java_probes::snapshots(jni) } else { s.registry.snapshots() };
        if self.old {
            ctx.output.old_prof(&report::old_prof(&s.methods, &threads, note.as_deref()));
        } else {
            let r = report::cpu_time(ctx, &s.methods, &threads, self.cutoff, note);
            ctx.reports().cpu(&r);
        }
    }

    fn handle_command(&self, ctx: &Context, jni: Option<Jni>, command: &ControlCommand) -> bool {
        match command {
            ControlCommand::CpuSamples { .. } => {
                self.write_dump(ctx, jni, DumpReason::Command);
                ctx.output.flush();
                true
            }
            _ => false,
        }
    }
}

/// The report's note: the native methods so far, and the methods not listed in an earlier report.
fn new_notes(s: &Shared) -> Option<String> {
    let notes = s.notes.lock().unwrap_or_else(|e| e.into_inner());
    let from = s.notes_reported.swap(notes.len(), Ordering::Relaxed).min(notes.len());
    report::not_timed(s.native_methods.load(Ordering::Relaxed), &notes[from..])
}

impl CpuTimes {
    fn print_notes_once(&self, s: &Shared) {
        if s.notes_printed.swap(true, Ordering::Relaxed) {
            return;
        }
        let notes = s.notes.lock().unwrap_or_else(|e| e.into_inner());
        let natives = s.native_methods.load(Ordering::Relaxed);
        let mut text = format!(
            "{}: {} methods timed; not timed: {natives} native methods (no bytecode)",
            self.name(),
            s.methods.len()
        );
        if !notes.is_empty() {
            text.push_str(&format!(", and {} more:", notes.len()));
            for n in notes.iter() {
                text.push_str("\n  ");
                text.push_str(n);
            }
        }
        log::warning(&text);
    }
}
