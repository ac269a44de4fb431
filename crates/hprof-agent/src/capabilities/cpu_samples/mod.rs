//! cpu=samples: which methods use the CPU, from periodic stack samples.
//!
//! Two samplers feed one [`Profile`]: the default `async` one (per-thread CPU-time timers and
//! AsyncGetCallTrace, see `signal`), and HPROF's own `safepoint` one. Reports are cumulative: every dump —
//! at exit, on Ctrl-\, or on the front end's request — covers the run so far (the front end can clear the
//! counts with its CONTROL command).

pub mod agent_work;
mod asgct;
mod async_sampler;
mod cost;
mod perf_clock;
mod profile;
mod ring;
mod safepoint_sampler;
mod signal;

use crate::agent::Agent;
use crate::hub::{Capability, ControlCommand, DumpReason};
use crate::log;
use crate::options::{Options, SamplerKind};
use crate::threads::ThreadRecord;
use async_sampler::AsyncSampler;
use jvmti::{Event, EventHandler, Interest, Jni, Jvmti, sys};
use profile::Profile;
use safepoint_sampler::SafepointSampler;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

enum Sampler {
    Async(AsyncSampler),
    Safepoint(SafepointSampler),
}

pub struct CpuSamples {
    sampler: Sampler,
    profile: Arc<Mutex<Profile>>,
    /// Wakes the background thread early when it must stop.
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread_running: AtomicBool,
    interval_ms: u32,
    collapsed: Option<String>,
    flamegraph: Option<String>,
    /// Whether the JIT was told directly to record debug information between safepoints (else enabling
    /// CompiledMethodLoad events does it, at the cost of building an inline map for every compiled method).
    debug_non_safepoints_set: bool,
}

/// Compiled frames map a pc to its inlined methods and line only where the JIT recorded debug information,
/// which by default is at safepoints: samples inside inlined code would land on the caller. HotSpot records
/// it everywhere with `-XX:+DebugNonSafepoints`, which the agent sets itself (as async-profiler does) unless
/// the user chose a value; it costs compilation time, not time per sample.
fn request_debug_non_safepoints() -> bool {
    hotspot::VmStructs::get().is_some_and(|vm| vm.set_default_bool_flag("DebugNonSafepoints", true) == Ok(true))
}

impl CpuSamples {
    pub fn new(options: &Options) -> Result<CpuSamples, String> {
        let sampler = match options.sampler {
            SamplerKind::Async => Sampler::Async(AsyncSampler::new(options.interval_ms, options.clock)?),
            SamplerKind::Safepoint => Sampler::Safepoint(SafepointSampler::default()),
        };
        let keep_stacks = options.collapsed.is_some() || options.flamegraph.is_some();
        Ok(CpuSamples {
            sampler,
            profile: Arc::new(Mutex::new(Profile::new(keep_stacks))),
            stop: Arc::default(),
            thread_running: AtomicBool::new(false),
            interval_ms: options.interval_ms,
            collapsed: options.collapsed.clone(),
            flamegraph: options.flamegraph.clone(),
            debug_non_safepoints_set: matches!(options.sampler, SamplerKind::Async) && request_debug_non_safepoints(),
        })
    }

    fn lock_profile(&self) -> std::sync::MutexGuard<'_, Profile> {
        self.profile.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Brings pending async samples into the profile.
    fn drain(&self, agent: &Agent, jni: Option<Jni>) {
        if let Sampler::Async(s) = &self.sampler {
            let mut profile = self.lock_profile();
            s.drain(agent, jni, &mut profile);
            // The front end may have changed the depth since the last drain.
            s.set_walk_frames(self.max_frames(agent));
        }
    }

    /// The background thread: the resolver for `async`, the sampler itself for `safepoint`.
    fn background(&self, agent: &'static Agent, jni: Jni) {
        let (lock, wake) = &*self.stop;
        let period = match &self.sampler {
            Sampler::Async(s) => s.drain_interval(),
            Sampler::Safepoint(_) => Duration::from_millis(self.interval_ms as u64),
        };
        let mut stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
        while !*stopped {
            stopped = wake.wait_timeout(stopped, period).unwrap_or_else(|e| e.into_inner()).0;
            if *stopped {
                break;
            }
            drop(stopped);
            jni.with_local_frame(64, || match &self.sampler {
                Sampler::Async(_) => self.drain(agent, Some(jni)),
                Sampler::Safepoint(s) => s.sample_once(agent, jni, self.max_frames(agent), &self.profile),
            });
            stopped = lock.lock().unwrap_or_else(|e| e.into_inner());
        }
        if let Some(shared) = signal::installed() {
            cost::SamplerCost::add(&shared.cost.resolver_ns, cost::thread_cpu_ns());
        }
        self.thread_running.store(false, Ordering::Release);
    }

    /// Creates the jmethodIDs of a class's methods, which AsyncGetCallTrace cannot do in a signal handler.
    fn create_method_ids(&self, agent: &Agent, class: sys::jclass) {
        let start = cost::monotonic_ns();
        let _ = agent.jvmti.class_methods(class);
        if let Some(shared) = signal::installed() {
            cost::SamplerCost::add(&shared.cost.method_ids_ns, cost::monotonic_ns().saturating_sub(start));
        }
    }

    fn max_frames(&self, agent: &Agent) -> usize {
        if self.collapsed.is_some() || self.flamegraph.is_some() { ring::MAX_FRAMES } else { agent.depth().max(1) }
    }

    fn stop_background(&self) {
        let (lock, wake) = &*self.stop;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        // The thread finishes its current round; wait briefly so that it does not race the final report.
        for _ in 0..200 {
            if !self.thread_running.load(Ordering::Acquire) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn write_report(&self, agent: &Agent, jni: Option<Jni>, cutoff: f64) {
        self.drain(agent, jni);
        let report = self.lock_profile().report(agent, cutoff);
        agent.output.cpu(agent, &report);
        if let Sampler::Async(s) = &self.sampler
            && s.dropped() > 0
        {
            log::warning(&format!("cpu=samples: {} samples dropped (sample buffer full)", s.dropped()));
        }
    }

    fn write_stack_files(&self, agent: &Agent) {
        if self.collapsed.is_none() && self.flamegraph.is_none() {
            return;
        }
        let stacks = self.lock_profile().weighted_stacks(agent);
        if let Some(path) = &self.collapsed {
            let written = std::fs::File::create(path).and_then(|f| {
                let mut w = std::io::BufWriter::new(f);
                hprof_format::flame::write_collapsed(&mut w, &stacks)?;
                std::io::Write::flush(&mut w)
            });
            if let Err(e) = written {
                log::error(&format!("cannot write collapsed stacks to {path}: {e}"));
            }
        }
        if let Some(path) = &self.flamegraph
            && let Err(e) = hprof_format::flame::write_flamegraph(
                std::path::Path::new(path),
                &stacks,
                "CPU samples (hprof-rs)",
                "samples",
            )
        {
            log::error(&format!("cannot write flame graph to {path}: {e}"));
        }
    }
}

impl EventHandler<Agent> for Arc<CpuSamples> {
    fn class_prepare(&self, agent: &Agent, _: Jvmti, _jni: Jni, _thread: sys::jthread, class: sys::jclass) {
        self.create_method_ids(agent, class);
    }
}

impl Capability for Arc<CpuSamples> {
    fn name(&self) -> &'static str {
        "cpu=samples"
    }

    fn events(&self) -> Vec<Interest> {
        let mut events = Vec::new();
        if let Sampler::Async(_) = self.sampler {
            // AsyncGetCallTrace refuses to walk unless ClassLoad events are on, and needs jmethodIDs to
            // exist before a signal arrives.
            events.extend([Event::ClassLoad, Event::ClassPrepare]);
            // Where the flag could not be set, CompiledMethodLoad events turn DebugNonSafepoints on.
            if !self.debug_non_safepoints_set {
                events.extend([Event::CompiledMethodLoad, Event::DynamicCodeGenerated]);
            }
        }
        events.into_iter().map(Event::on).collect()
    }

    fn on_vm_init(&self, agent: &Agent, jni: Jni) {
        if let Sampler::Async(s) = &self.sampler {
            // Classes loaded before our events: create their jmethodIDs now.
            if let Ok(classes) = agent.jvmti.loaded_classes() {
                for class in classes {
                    self.create_method_ids(agent, class);
                    jni.delete_local_ref(class);
                }
            }
            s.set_walk_frames(self.max_frames(agent));
            s.start();
        }
        let me = self.clone();
        self.thread_running.store(true, Ordering::Release);
        if let Err(e) =
            crate::agent_thread::spawn(agent, jni, "HPROF cpu sampler", move |agent, jni| me.background(agent, jni))
        {
            self.thread_running.store(false, Ordering::Release);
            log::error(&format!("cpu=samples: {e}"));
        }
    }

    fn on_thread_start(
        &self,
        _agent: &Agent,
        jni: Jni,
        _thread: sys::jthread,
        record: &ThreadRecord,
        on_own_thread: bool,
    ) {
        // A timer on a thread's CPU clock can only be armed from that thread. Threads that predate VMInit
        // (Reference Handler, Signal Dispatcher, …) never run an event on themselves; they are idle JVM
        // threads and are not sampled.
        if let (Sampler::Async(s), true) = (&self.sampler, on_own_thread) {
            s.thread_started(jni, record);
        }
    }

    fn on_thread_end(&self, _agent: &Agent, _jni: Jni, _thread: sys::jthread, record: &ThreadRecord) {
        if let Sampler::Async(s) = &self.sampler {
            s.thread_ended(record);
        }
    }

    fn on_vm_death(&self, _agent: &Agent, _jni: Jni) {
        if let Sampler::Async(s) = &self.sampler {
            s.stop_all();
        }
        self.stop_background();
        if let Some(shared) = signal::installed().filter(|s| s.measuring) {
            log::verbose(true, &shared.cost.summary());
        }
    }

    fn dump_section(&self) -> Option<(u32, &'static str)> {
        Some((40, "CPU usage by sampling running threads"))
    }

    fn write_dump(&self, agent: &Agent, jni: Option<Jni>, _reason: DumpReason) {
        self.write_report(agent, jni, agent.options.cutoff);
        self.write_stack_files(agent);
    }

    fn handle_command(&self, agent: &Agent, jni: Option<Jni>, command: &ControlCommand) -> bool {
        match command {
            ControlCommand::CpuSamples { cutoff } => {
                self.write_report(agent, jni, *cutoff as f64);
                true
            }
            ControlCommand::ClearCpuSamples => {
                self.drain(agent, jni);
                self.lock_profile().clear();
                true
            }
            ControlCommand::CpuSampling { thread_object_id, on } => {
                let serial = match thread_object_id {
                    None => None,
                    Some(id) => match agent.threads.all().iter().find(|t| t.object_id == *id) {
                        Some(t) => Some(t.serial),
                        None => return false,
                    },
                };
                match &self.sampler {
                    Sampler::Async(s) => s.set_sampling(serial, *on),
                    Sampler::Safepoint(s) => s.set_sampling(serial, *on),
                }
                true
            }
            _ => false,
        }
    }
}
