//! The profile types of an upload window, one per capability: cpu=samples' `cpu` (cpu=wall's `wall`),
//! heap=sites' `alloc`, monitor=y's `lock`. Each is a [`WindowSource`] that turns what its
//! capability counted since the last window into a neutral profile, named and numbered.

use crate::capabilities::alloc_sites::AllocSites;
use crate::capabilities::cpu_samples::CpuSamples;
use crate::capabilities::monitors::Monitors;
use crate::context::Context;
use crate::options::{Options, SamplerKind};
use hprof_format::profiles::{Frame, Label, Profile, Sample, ValueType};
use jvmti::Jni;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// One profile type of every window.
pub trait WindowSource: Send + Sync {
    /// Its name in Pyroscope's `<service>.<type>`: "cpu", "alloc", "lock".
    fn kind(&self) -> &'static str;

    /// What was counted since the last call; the caller sets the window's time and duration.
    fn take(&self, ctx: &Context, jni: Option<Jni>) -> Profile;
}

/// cpu=samples: samples and CPU time (samples × interval), full stacks per thread; with cpu=wall, wall-clock
/// time instead, as profile type `wall`.
pub struct Cpu {
    samples: Arc<CpuSamples>,
    kind: &'static str,
}

impl Cpu {
    pub fn new(samples: Arc<CpuSamples>, options: &Options) -> Cpu {
        let kind = if options.sampler == SamplerKind::Wall { "wall" } else { "cpu" };
        Cpu { samples, kind }
    }
}

impl WindowSource for Cpu {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn take(&self, ctx: &Context, jni: Option<Jni>) -> Profile {
        let (kind, period) = (self.kind, ctx.options.interval_ms as i64 * 1_000_000);
        let mut frames = Frames::new(ctx);
        let mut threads: FxHashMap<u32, Vec<Label>> = FxHashMap::default();
        let samples = self
            .samples
            .take_window(ctx, jni)
            .into_iter()
            .map(|(thread, stack, count)| Sample {
                stack: stack.iter().map(|&i| frames.get(i)).collect(),
                values: vec![count as i64, count as i64 * period],
                labels: threads.entry(thread).or_insert_with(|| thread_labels(ctx, thread)).clone(),
            })
            .collect();
        Profile {
            sample_types: vec![ValueType::new("samples", "count"), ValueType::new(kind, "nanoseconds")],
            period_type: Some(ValueType::new(kind, "nanoseconds")),
            period,
            samples,
            ..Profile::default()
        }
    }
}

/// heap=sites: objects and bytes allocated in the window, and live now, per site; the allocated class is
/// the leaf frame (as async-profiler shows it), the site's trace (depth= frames) below it.
pub struct Alloc(pub &'static AllocSites);

impl WindowSource for Alloc {
    fn kind(&self) -> &'static str {
        "alloc"
    }

    fn take(&self, ctx: &Context, _: Option<Jni>) -> Profile {
        let mut frames = Frames::new(ctx);
        let samples = self
            .0
            .take_window()
            .into_iter()
            .map(|s| Sample {
                stack: frames.under_class(s.class_serial, s.trace_serial),
                values: vec![s.alloc_objects as i64, s.alloc_bytes as i64, s.live_objects as i64, s.live_bytes as i64],
                labels: Vec::new(),
            })
            .collect();
        Profile {
            sample_types: vec![
                ValueType::new("alloc_objects", "count"),
                ValueType::new("alloc_space", "bytes"),
                ValueType::new("inuse_objects", "count"),
                ValueType::new("inuse_space", "bytes"),
            ],
            // As Go's heap profiles: one sample per `alloc_interval=` bytes on average (0: every object).
            period_type: Some(ValueType::new("space", "bytes")),
            period: self.0.interval_bytes(),
            samples,
            ..Profile::default()
        }
    }
}

/// monitor=y: contended monitor entries in the window and the time blocked in them, per trace; the
/// monitor's class is the leaf frame.
pub struct Lock(pub &'static Monitors);

impl WindowSource for Lock {
    fn kind(&self) -> &'static str {
        "lock"
    }

    fn take(&self, ctx: &Context, _: Option<Jni>) -> Profile {
        let mut frames = Frames::new(ctx);
        let samples = self
            .0
            .take_window()
            .into_iter()
            .map(|(trace, class, count, nanos)| Sample {
                stack: frames.under_class(class, trace),
                values: vec![count as i64, nanos as i64],
                labels: Vec::new(),
            })
            .collect();
        hprof_format::profiles::lock_profile(samples)
    }
}

/// Profile frames of the trace table's frames, each made once per window.
struct Frames<'c> {
    ctx: &'c Context,
    made: FxHashMap<u32, Frame>,
}

impl<'c> Frames<'c> {
    fn new(ctx: &'c Context) -> Frames<'c> {
        Frames { ctx, made: FxHashMap::default() }
    }

    fn get(&mut self, index: u32) -> Frame {
        let ctx = self.ctx;
        self.made
            .entry(index)
            .or_insert_with(|| match ctx.traces().frame(index) {
                Some(stored) => Frame::of(&stored.frame),
                None => named("<unknown>"),
            })
            .clone()
    }

    /// The class of serial `class` as the leaf frame, then trace `trace`'s frames.
    fn under_class(&mut self, class: u32, trace: u32) -> Vec<Frame> {
        let ctx = self.ctx;
        let class = ctx.classes().by_serial(class).map_or_else(|| "<unknown class>".to_owned(), |c| c.name.clone());
        let mut stack = vec![named(&class)];
        if let Some(t) = ctx.traces().trace(trace) {
            stack.extend(t.frames.iter().map(|&i| self.get(i)));
        }
        stack
    }
}

/// A frame that is only a name (a class).
fn named(name: &str) -> Frame {
    Frame { function: name.to_owned(), system_name: name.to_owned(), file: String::new(), line: 0 }
}

fn thread_labels(ctx: &Context, serial: u32) -> Vec<Label> {
    match ctx.thread_by_serial(serial) {
        Some(t) => {
            let tid = t.os_tid.load(std::sync::atomic::Ordering::Relaxed);
            vec![
                Label::str("thread.name", &t.name),
                Label::num("thread.id", if tid > 0 { tid as i64 } else { serial as i64 }),
            ]
        }
        None => Vec::new(),
    }
}
