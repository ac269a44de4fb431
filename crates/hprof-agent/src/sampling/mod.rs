//! The sampling engine: a shared service that interrupts each Java thread after every interval of its own
//! CPU time and hands the tick — thread, interrupted registers (pc, sp, fp) and, when asked, the
//! AsyncGetCallTrace frames — to every registered consumer, in the manner of async-profiler's engines.
//! cpu=samples is one consumer (stacks), cpu=flat another (program counters).
//!
//! The signal side — the SIGPROF handler, the per-thread clocks it re-arms, the lock-free ring it fills,
//! register reading and the AsyncGetCallTrace call — is the `sampler` crate, all of the agent's
//! signal-handler code behind safe APIs. Here: `engine` (arming threads, consumers, the resolver thread),
//! `switches` (which threads the front end wants sampled, for this engine and sampler=safepoint alike),
//! `asgct` (the walker's failure codes, named) and `agent_work` (labels for the agent's own work).
//! [`SamplingService`] is the capability that feeds the engine the JVM events it needs; `capabilities::build`
//! adds it once when any consumer is present.

pub use sampler::agent_work;
mod asgct;
mod engine;
mod jvm_threads;
pub mod mounts;
mod native_names;
mod switches;

pub use asgct::failure_label;
pub use engine::{Engine, TickConsumer, installed};
pub use native_names::NativeNames;
pub use sampler::{Frames, Tick, TickBatch};
pub use sampler::{MAX_FRAMES, Registers};
pub use switches::ThreadSwitches;

use crate::context::{Context, LoadKind};
use crate::hub::Capability;
use crate::threads::ThreadRecord;
use jvmti::{Event, EventHandler, Interest, Jni, Jvmti, sys};

/// Compiled frames map a pc to its inlined methods and line only where the JIT recorded debug information,
/// which by default is at safepoints: samples inside inlined code would land on the caller. HotSpot records
/// it everywhere with `-XX:+DebugNonSafepoints`, which the agent sets itself (as async-profiler does) unless
/// the user chose a value; it costs compilation time, not time per sample.
fn request_debug_non_safepoints() -> bool {
    hotspot::VmStructs::get().is_some_and(|vm| vm.set_default_bool_flag("DebugNonSafepoints", true) == Ok(true))
}

/// The engine's JVM side: arms each thread's clock as it starts, creates the jmethodIDs AsyncGetCallTrace
/// needs, starts ticking at VMInit and stops at VMDeath.
pub struct SamplingService {
    engine: &'static Engine,
    /// Whether the JIT was told directly to record debug information between safepoints (else enabling
    /// CompiledMethodLoad events does it, at the cost of building an inline map for every compiled method).
    debug_non_safepoints_set: bool,
}

impl SamplingService {
    pub fn new(engine: &'static Engine) -> SamplingService {
        SamplingService { engine, debug_non_safepoints_set: request_debug_non_safepoints() }
    }
}

impl EventHandler<Context> for SamplingService {
    fn class_prepare(&self, ctx: &Context, _: Jvmti, _jni: Jni, _thread: sys::jthread, class: sys::jclass) {
        crate::agent_cost::timed_more(crate::agent_cost::Part::ClassPrepare, || {
            self.engine.create_method_ids(ctx, class)
        });
    }
}

impl Capability for SamplingService {
    fn name(&self) -> &'static str {
        "sampling"
    }

    fn events(&self) -> Vec<Interest> {
        // AsyncGetCallTrace refuses to walk unless ClassLoad events are on, and needs jmethodIDs to exist
        // before a signal arrives.
        let mut events = vec![Event::ClassLoad, Event::ClassPrepare];
        // Where the flag could not be set, CompiledMethodLoad events turn DebugNonSafepoints on.
        if !self.debug_non_safepoints_set {
            events.extend([Event::CompiledMethodLoad, Event::DynamicCodeGenerated]);
        }
        events.into_iter().map(Event::on).collect()
    }

    fn on_vm_init(&self, ctx: &Context, jni: Jni) {
        // Classes loaded before our events: create their jmethodIDs now.
        if let Ok(classes) = ctx.jvmti.loaded_classes() {
            for class in classes {
                self.engine.create_method_ids(ctx, class);
                jni.delete_local_ref(class);
            }
        }
        self.engine.start(ctx, jni);
    }

    fn on_thread_start(&self, ctx: &Context, jni: Jni, thread: sys::jthread, record: &ThreadRecord, own: bool) {
        // A thread's clock is armed from the thread itself where we can (its JNIEnv is then known without
        // asking the JVM in the handler). Threads that predate VMInit (Reference Handler, Signal Dispatcher,
        // …) never run an event on themselves; they are idle JVM threads and are not sampled.
        if own {
            self.engine.thread_started(jni, record.serial, &record.name);
        } else if ctx.load_kind() == LoadKind::Attach {
            // Attached to a running JVM: its threads, busy ones included, will run no event on themselves.
            match crate::threads::os_tid_of(ctx, jni, thread) {
                Some(tid) => {
                    record.os_tid.store(tid, std::sync::atomic::Ordering::Relaxed);
                    self.engine.arm_thread_by_tid(tid, record.serial, &record.name);
                }
                None => crate::log::warning(&format!(
                    "sampling: thread \"{}\" was running before hprof attached and cannot be found in HotSpot's \
                     structures; it is not sampled",
                    record.name
                )),
            }
        }
    }

    fn on_thread_end(&self, _agent: &Context, _jni: Jni, _thread: sys::jthread, record: &ThreadRecord) {
        self.engine.thread_ended(record.serial);
    }

    fn on_vm_death(&self, _agent: &Context, _jni: Jni) {
        self.engine.stop_all();
    }
}
