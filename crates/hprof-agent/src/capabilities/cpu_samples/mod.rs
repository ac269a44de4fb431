//! cpu=samples: which methods use the CPU, from periodic stack samples.
//!
//! Two samplers feed one `Profile`: the default `async` one, a consumer of the shared sampling engine
//! (per-thread CPU clocks and AsyncGetCallTrace, see `crate::sampling`), and HPROF's own `safepoint` one. Reports are cumulative: every dump —
//! at exit, on Ctrl-\, or on the front end's request — covers the run so far (the front end can clear the
//! counts with its CONTROL command).

mod between;
mod filters;
mod profile;
mod safepoint_sampler;
mod tick_clock;
mod virtual_ticks;
mod wall_sampler;

use crate::agent_thread::StopSwitch;
use crate::context::Context;
use crate::hub::{Capability, ControlCommand, DumpReason};
use crate::log;
use crate::options::{Options, SamplerKind};
use crate::output::Checkpoint;
use crate::sampling::{self, Engine, Frames, NativeNames, TickBatch, TickConsumer};
use crate::traces::RawFrame;
use filters::Filters;
use jvmti::{Event, EventHandler, Interest, Jni, Jvmti, sys};
use profile::{Profile, Sample};
pub use profile::{TimedSample, WindowStack};
use safepoint_sampler::SafepointSampler;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use virtual_ticks::{Owner, VirtualTicks};
use wall_sampler::WallSampler;

enum Sampler {
    Async(&'static Engine),
    Safepoint(SafepointSampler),
    Wall(WallSampler),
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
    /// Whose ticks are when virtual threads run (sampler=async).
    virtual_ticks: VirtualTicks,
}

impl CpuSamples {
    /// With `sampler=async`, registers itself as a consumer of the sampling engine (installing it).
    pub fn new(options: &Options) -> Result<Arc<CpuSamples>, String> {
        let sampler = match options.sampler {
            SamplerKind::Async => Sampler::Async(Engine::install(options.interval_ms, options.clock)?),
            SamplerKind::Safepoint => Sampler::Safepoint(SafepointSampler::default()),
            SamplerKind::Wall => Sampler::Wall(WallSampler::default()),
        };
        let keep_stacks = options.collapsed.is_some() || options.flamegraph.is_some();
        let mut profile = Profile::new(keep_stacks).with_filters(Filters::new(options));
        if options.continuous.enabled() {
            profile.keep_windows();
        }
        if options.format == crate::options::OutputFormat::Binary {
            profile.keep_timeline();
        }
        let me = Arc::new(CpuSamples {
            sampler,
            profile: Arc::new(Mutex::new(profile)),
            sampler_thread: StopSwitch::default(),
            interval_ms: options.interval_ms,
            collapsed: options.collapsed.clone(),
            flamegraph: options.flamegraph.clone(),
            native_names: Mutex::default(),
            virtual_ticks: VirtualTicks::default(),
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

    /// The safepoint or wall sampler's thread.
    fn background(&self, ctx: &'static Context, jni: Jni) {
        let period = Duration::from_millis(self.interval_ms as u64);
        let mut clock = tick_clock::TickClock::new(period, Instant::now());
        loop {
            let wait = match self.sampler {
                Sampler::Wall(_) => clock.until_next(Instant::now()),
                _ => period,
            };
            if self.sampler_thread.wait(wait) {
                break;
            }
            let frames = self.max_frames(ctx);
            jni.with_local_frame(64, || match &self.sampler {
                Sampler::Safepoint(s) => s.sample_once(ctx, jni, frames, &self.profile),
                Sampler::Wall(s) => {
                    let intervals = clock.tick(Instant::now());
                    if intervals > 0 {
                        s.sample_once(ctx, jni, frames, intervals, &self.profile)
                    }
                }
                Sampler::Async(_) => {}
            });
        }
        self.sampler_thread.finished();
    }

    /// The CPU SAMPLES header's note: what the samples count, when it is not CPU time.
    fn mode_note(&self) -> Option<String> {
        matches!(self.sampler, Sampler::Wall(_)).then(|| {
            format!(
                "(wall clock: every live thread every {} ms, running or not, at most {} threads a tick; each \
                 trace's last frame is the thread's state)",
                self.interval_ms,
                wall_sampler::MAX_THREADS_PER_TICK
            )
        })
    }

    /// The report so far, with the samples' times not yet written (format=b) written first.
    fn report(&self, ctx: &Context, cutoff: f64) -> hprof_format::model::CpuReport {
        let mut profile = self.lock_profile();
        let timeline = profile.take_timeline();
        if !timeline.is_empty() {
            ctx.reports().sample_times(&timeline);
        }
        let mut report = profile.report(ctx, cutoff);
        report.note = self.mode_note();
        report
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
        let report = self.report(ctx, cutoff);
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
        let (title, unit) = match self.sampler {
            Sampler::Wall(_) => ("Wall clock (hprof-rs)", "samples"),
            _ => ("CPU samples (hprof-rs)", "samples"),
        };
        if let Some(path) = &self.collapsed {
            let written = private_files::write_file(std::path::Path::new(path), |w| {
                hprof_format::flame::write_collapsed(w, &stacks)
            });
            if let Err(e) = written {
                log::error(&format!("cannot write collapsed stacks to {path}: {e}"));
            }
        }
        if let Some(path) = &self.flamegraph
            && let Err(e) = hprof_format::flame::write_flamegraph(std::path::Path::new(path), &stacks, title, unit)
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
        // Ticks carry no time of their own: they are timed as drained, at most 200 ms late.
        let time_ms = ctx.elapsed_ms();
        let mut profile = self.lock_profile();
        let mut names = self.native_names.lock().unwrap_or_else(|e| e.into_inner());
        let mut frames: Vec<u32> = Vec::with_capacity(64);
        for tick in ticks.iter() {
            frames.clear();
            names.push_kernel_frames(ctx, tick.kernel, &mut frames);
            names.push_frames(ctx, tick.native, &mut frames);
            let native = frames.len();
            let mut entry = None;
            match tick.frames {
                Frames::Walked(walked) => {
                    for f in walked {
                        let raw = RawFrame::new(f.method_id as sys::jmethodID, f.lineno);
                        let index = profile.frame(ctx, jni, raw);
                        if entry.is_none() && self.virtual_ticks.is_entry(ctx, index) {
                            entry = Some(frames.len() - native);
                        }
                        frames.push(index);
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
            let walked = if let Frames::Walked(w) = tick.frames { w.len() } else { 0 };
            let thread_serial = match self.virtual_ticks.owner(tick.mounted, entry, walked) {
                Owner::Carrier => tick.thread_serial,
                Owner::Virtual { serial, keep } => {
                    frames.truncate(native + keep);
                    if keep == 0 && walked > 0 {
                        frames.push(ctx.traces().pseudo_frame(virtual_ticks::SWITCHING));
                    }
                    serial
                }
                Owner::CarrierSwitching { entry } => {
                    frames.splice(native..native + entry, [ctx.traces().pseudo_frame(virtual_ticks::SWITCHING)]);
                    tick.thread_serial
                }
            };
            let carrier_cut = thread_serial == tick.thread_serial && entry.is_some() && tick.mounted.is_none();
            let merged = match tick.frames {
                Frames::Walked(walked) if !tick.between.is_empty() && !carrier_cut => {
                    between::merge(&mut names, ctx, &frames, native, walked, tick.between)
                }
                _ => None,
            };
            let sample = match &merged {
                Some(m) => Sample {
                    thread_serial,
                    frames: m,
                    native,
                    java_only: Some(&frames[native..]),
                    root: None,
                    weight: 1,
                    time_ms,
                },
                None => {
                    Sample { thread_serial, frames: &frames, native, java_only: None, root: None, weight: 1, time_ms }
                }
            };
            profile.add(ctx, sample);
        }
    }
}

/// The sampling engine's own service subscribes to the JVMTI events sampler=async needs; both follow virtual
/// threads: cpu=wall samples them, sampler=async credits a carrier's ticks to the virtual thread it runs
/// (a virtual thread's first mount is its start, its last unmount its end; see `sampling::mounts`).
impl EventHandler<Context> for Arc<CpuSamples> {
    fn virtual_thread_start(&self, ctx: &Context, _: Jvmti, jni: Jni, thread: sys::jthread) {
        match &self.sampler {
            Sampler::Wall(wall) => {
                if let Some((record, _)) = ctx.register_thread(thread, true) {
                    wall.virtual_thread_started(jni, record.serial, thread);
                }
            }
            Sampler::Async(engine) => sampling::mounts::mounted(ctx, engine, thread),
            Sampler::Safepoint(_) => {}
        }
    }

    fn virtual_thread_end(&self, ctx: &Context, _: Jvmti, jni: Jni, thread: sys::jthread) {
        if let Sampler::Async(engine) = &self.sampler {
            engine.set_unmounting();
        }
        let Some(record) = ctx.thread_record(thread) else { return };
        if let Sampler::Wall(wall) = &self.sampler {
            wall.virtual_thread_ended(jni, record.serial);
        }
        if !matches!(self.sampler, Sampler::Safepoint(_)) {
            ctx.mark_thread_ended(&record);
        }
    }
}

impl Capability for Arc<CpuSamples> {
    fn name(&self) -> &'static str {
        "cpu=samples"
    }

    fn events(&self) -> Vec<Interest> {
        match self.sampler {
            // JDK 21+: virtual threads are not in GetAllThreads; without the capability (JDK 17) there are none.
            Sampler::Wall(_) | Sampler::Async(_) => [Event::VirtualThreadStart, Event::VirtualThreadEnd]
                .into_iter()
                .map(|e| e.on().if_available())
                .collect(),
            _ => Vec::new(),
        }
    }

    fn on_vm_init(&self, ctx: &Context, jni: Jni) {
        if let Sampler::Async(_) = &self.sampler {
            self.virtual_ticks.set_following(sampling::mounts::follow(ctx));
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

    fn on_vm_death(&self, ctx: &Context, jni: Jni) {
        if let Sampler::Async(_) = &self.sampler {
            sampling::mounts::unfollow(ctx);
        }
        self.sampler_thread.stop();
        // Only once no tick can be using them (a tick still running after the stop's wait keeps them).
        if let Sampler::Wall(wall) = &self.sampler
            && !self.sampler_thread.is_running()
        {
            wall.release_all(jni);
        }
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
        Some(Checkpoint::Cpu(self.report(ctx, ctx.options.cutoff)))
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
                    Sampler::Wall(s) => s.set_sampling(serial, *on),
                }
                true
            }
            _ => false,
        }
    }
}
