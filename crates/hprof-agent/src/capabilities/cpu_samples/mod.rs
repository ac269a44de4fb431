//! cpu=samples: which methods use the CPU, from periodic stack samples.
//!
//! Two samplers feed one `Profile`: the default `async` one, a consumer of the shared sampling engine
//! (per-thread CPU clocks and AsyncGetCallTrace, see `crate::sampling`), and HPROF's own `safepoint` one. Reports are cumulative: every dump —
//! at exit, on Ctrl-\, or on the front end's request — covers the run so far (the front end can clear the
//! counts with its CONTROL command).

mod profile;
mod safepoint_sampler;

use crate::agent_thread::StopSwitch;
use crate::context::Context;
use crate::hub::{Capability, ControlCommand, DumpReason};
use crate::log;
use crate::options::{Options, SamplerKind};
use crate::output::Checkpoint;
use crate::sampling::{self, Engine, Frames, NativeNames, TickBatch, TickConsumer};
use crate::traces::RawFrame;
use jvmti::{EventHandler, Jni, sys};
use profile::Profile;
pub use profile::WindowStack;
use safepoint_sampler::SafepointSampler;
use std::sync::{Arc, Mutex};
use std::time::Duration;

enum Sampler {
    Async(&'static Engine),
    Safepoint(SafepointSampler),
}

pub struct CpuSamples {
    sampler: Sampler,
    profile: Arc<Mutex<Profile>>,
    /// The safepoint sampler's thread.
    sampler_thread: StopSwitch,
    interval_ms: u32,
    collapsed: Option<String>,
    flamegraph: Option<String>,
    /// Names of the native frames ticks carry (`cstack`).
    native_names: Mutex<NativeNames>,
}

impl CpuSamples {
    /// With `sampler=async`, registers itself as a consumer of the sampling engine (installing it).
    pub fn new(options: &Options) -> Result<Arc<CpuSamples>, String> {
        let sampler = match options.sampler {
            SamplerKind::Async => Sampler::Async(Engine::install(options.interval_ms, options.clock)?),
            SamplerKind::Safepoint => Sampler::Safepoint(SafepointSampler::default()),
        };
        let keep_stacks = options.collapsed.is_some() || options.flamegraph.is_some();
        let mut profile = Profile::new(keep_stacks);
        if options.continuous.enabled() {
            profile.keep_windows();
        }
        let me = Arc::new(CpuSamples {
            sampler,
            profile: Arc::new(Mutex::new(profile)),
            sampler_thread: StopSwitch::default(),
            interval_ms: options.interval_ms,
            collapsed: options.collapsed.clone(),
            flamegraph: options.flamegraph.clone(),
            native_names: Mutex::default(),
        });
        if let Sampler::Async(engine) = &me.sampler {
            if options.native_frames() {
                // The JVM's own threads have no Java frames: sampled only when TRACEs hold native ones too,
                // so that by default CPU SAMPLES and the flame graph count the same samples.
                engine.enable_native(options.native_frames_in_traces());
            } else {
                engine.disable_native();
            }
            engine.register(me.clone());
        }
        Ok(me)
    }

    fn lock_profile(&self) -> std::sync::MutexGuard<'_, Profile> {
        self.profile.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Brings pending async samples into the profile (the engine hands them to every consumer).
    fn drain(&self, ctx: &Context, jni: Option<Jni>) {
        if let Sampler::Async(engine) = &self.sampler {
            engine.drain(ctx, jni);
        }
    }

    /// The safepoint sampler's thread.
    fn background(&self, ctx: &'static Context, jni: Jni) {
        let Sampler::Safepoint(sampler) = &self.sampler else { return };
        let period = Duration::from_millis(self.interval_ms as u64);
        while !self.sampler_thread.wait(period) {
            jni.with_local_frame(64, || sampler.sample_once(ctx, jni, self.max_frames(ctx), &self.profile));
        }
        self.sampler_thread.finished();
    }

    fn max_frames(&self, ctx: &Context) -> usize {
        let full = self.collapsed.is_some() || self.flamegraph.is_some() || ctx.options.continuous.enabled();
        if full { sampling::MAX_FRAMES } else { ctx.depth().max(1) }
    }

    /// The upload window's samples since the last call (the profile's `take_window`), pending ones included.
    pub fn take_window(&self, ctx: &Context, jni: Option<Jni>) -> Vec<WindowStack> {
        self.drain(ctx, jni);
        self.lock_profile().take_window()
    }

    fn write_report(&self, ctx: &Context, jni: Option<Jni>, cutoff: f64) {
        self.drain(ctx, jni);
        let report = self.lock_profile().report(ctx, cutoff);
        ctx.reports().cpu(&report);
        if let Sampler::Async(engine) = &self.sampler
            && engine.dropped() > 0
        {
            log::warning(&format!("cpu=samples: {} samples dropped (sample buffer full)", engine.dropped()));
        }
    }

    fn write_stack_files(&self, ctx: &Context) {
        if self.collapsed.is_none() && self.flamegraph.is_none() {
            return;
        }
        let stacks = self.lock_profile().weighted_stacks(ctx);
        if let Some(path) = &self.collapsed {
            let written = private_files::write_file(std::path::Path::new(path), |w| {
                hprof_format::flame::write_collapsed(w, &stacks)
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

/// The engine's ticks, as stacks: each walked tick becomes one sample of its trace.
impl TickConsumer for CpuSamples {
    fn frames_wanted(&self, ctx: &Context) -> usize {
        self.max_frames(ctx)
    }

    fn on_ticks(&self, ctx: &Context, jni: Option<Jni>, ticks: &TickBatch) {
        let mut profile = self.lock_profile();
        let mut names = self.native_names.lock().unwrap_or_else(|e| e.into_inner());
        let mut frames: Vec<u32> = Vec::with_capacity(64);
        for tick in ticks.iter() {
            frames.clear();
            names.push_kernel_frames(ctx, tick.kernel, &mut frames);
            names.push_frames(ctx, tick.native, &mut frames);
            let native = frames.len();
            match tick.frames {
                Frames::Walked(walked) => {
                    for f in walked {
                        let raw = RawFrame::new(f.method_id as sys::jmethodID, f.lineno);
                        frames.push(profile.frame(ctx, jni, raw));
                    }
                    if walked.len() >= sampling::MAX_FRAMES {
                        frames.push(ctx.traces().pseudo_frame(profile::TRUNCATED));
                    }
                }
                // A thread of the JVM's own: its native frames are the whole stack.
                Frames::Failed(sampler::NOT_A_JAVA_THREAD) if native > 0 => {}
                Frames::Failed(code) => frames.push(ctx.traces().pseudo_frame(sampling::failure_label(code))),
                // Taken before this consumer's first drain set the depth: no stack to count.
                Frames::NotWalked => continue,
            }
            profile.add_with_native(ctx, tick.thread_serial, &frames, native);
        }
    }
}

/// The sampling engine's own service subscribes to the JVMTI events sampler=async needs.
impl EventHandler<Context> for Arc<CpuSamples> {}

impl Capability for Arc<CpuSamples> {
    fn name(&self) -> &'static str {
        "cpu=samples"
    }

    fn on_vm_init(&self, ctx: &Context, jni: Jni) {
        if let Sampler::Async(_) = &self.sampler {
            return;
        }
        let me = self.clone();
        if !self.sampler_thread.start() {
            return;
        }
        if let Err(e) =
            crate::agent_thread::spawn(ctx, jni, "HPROF cpu sampler", move |ctx, jni| me.background(ctx, jni))
        {
            self.sampler_thread.finished();
            log::error(&format!("cpu=samples: {e}"));
        }
    }

    fn on_vm_death(&self, _agent: &Context, _jni: Jni) {
        self.sampler_thread.stop();
    }

    fn dump_section(&self) -> Option<(u32, &'static str)> {
        Some((40, "CPU usage by sampling running threads"))
    }

    fn write_dump(&self, ctx: &Context, jni: Option<Jni>, _reason: DumpReason) {
        self.write_report(ctx, jni, ctx.options.cutoff);
        self.write_stack_files(ctx);
    }

    fn checkpoint(&self, ctx: &Context, jni: Jni) -> Option<Checkpoint> {
        self.drain(ctx, Some(jni));
        Some(Checkpoint::Cpu(self.lock_profile().report(ctx, ctx.options.cutoff)))
    }

    fn handle_command(&self, ctx: &Context, jni: Option<Jni>, command: &ControlCommand) -> bool {
        match command {
            ControlCommand::CpuSamples { cutoff } => {
                self.write_report(ctx, jni, *cutoff as f64);
                true
            }
            ControlCommand::ClearCpuSamples => {
                self.drain(ctx, jni);
                self.lock_profile().clear();
                true
            }
            ControlCommand::CpuSampling { thread_object_id, on } => {
                let serial = match thread_object_id {
                    None => None,
                    Some(id) => match ctx.thread_records().iter().find(|t| t.object_id == *id) {
                        Some(t) => Some(t.serial),
                        None => return false,
                    },
                };
                match &self.sampler {
                    Sampler::Async(engine) => engine.set_sampling(serial, *on),
                    Sampler::Safepoint(s) => s.set_sampling(serial, *on),
                }
                true
            }
            _ => false,
        }
    }
}
