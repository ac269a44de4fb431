//! The samples so far: counts per trace (for CPU SAMPLES) and per full stack (for flame graphs), and the
//! conversion of a raw walk into frame indexes of the agent's trace table.

use super::filters::Filters;
use crate::context::Context;
use crate::traces::RawFrame;
use hprof_format::flame::WeightedStack;
use hprof_format::model::{CpuReport, CpuReportKind, CpuRow};
use jvmti::Jni;
use rustc_hash::FxHashMap;

/// The root frame of a stack cut at the walk's limit ([`crate::sampling::MAX_FRAMES`] frames), as
/// async-profiler marks it: the frames below are unknown, so the stack must not pass for a whole one.
pub const TRUNCATED: &str = "[truncated]";

/// Samples per (thread serial, full stack) since the last window.
type WindowTable = FxHashMap<(u32, Box<[u32]>), u64>;

/// One stack of an upload window: (thread serial, frames top first, samples).
pub type WindowStack = (u32, Box<[u32]>, u64);

/// One entry of the timeline: (ms since the session started, trace serial, samples).
pub type TimedSample = (u32, u32, u32);

/// One sample, as a sampler hands it over.
pub struct Sample<'a> {
    pub thread_serial: u32,
    /// Frame indexes, top first.
    pub frames: &'a [u32],
    /// How many of the top frames are native ones (`cstack`).
    pub native: usize,
    /// The Java frames alone, when native ones lie between them too (`cstack`): what TRACEs show unless
    /// `cstack=y`. `None`: `frames` after the top `native`.
    pub java_only: Option<&'a [u32]>,
    /// A pseudo-frame below the stack, kept whatever `depth=` cuts: cpu=wall's thread state.
    pub root: Option<u32>,
    /// How many samples this one stands for (cpu=wall samples some threads for others beyond its cap).
    pub weight: u64,
    /// When it was taken, in ms since the session started.
    pub time_ms: u32,
}

#[derive(Default)]
pub struct Profile {
    by_trace: FxHashMap<u32, u64>,
    /// Full stacks, top frame first, as frame indexes; kept only when a flame graph or folded file is wanted.
    stacks: FxHashMap<Box<[u32]>, u64>,
    keep_stacks: bool,
    /// Full stacks per thread since the last upload window was taken (otlp=, pyroscope=): the window's delta.
    window: Option<WindowTable>,
    total: u64,
    /// (method, bci) → frame index, so that a hot frame is resolved once.
    frame_cache: FxHashMap<RawFrame, u32>,
    /// threads=, include=, exclude=.
    filters: Filters,
    /// Samples with their times, not yet written (format=b keeps a timeline).
    timeline: Option<Vec<TimedSample>>,
}

impl Profile {
    pub fn new(keep_stacks: bool) -> Profile {
        Profile { keep_stacks, ..Profile::default() }
    }

    pub fn with_filters(mut self, filters: Filters) -> Profile {
        self.filters = filters;
        self
    }

    /// Keeps every sample's time and trace until [`Profile::take_timeline`].
    pub fn keep_timeline(&mut self) {
        self.timeline = Some(Vec::new());
    }

    /// The samples' times since the last call, in order of time; samples of one trace at one time (a wall
    /// tick's threads that share a trace) merged into one entry.
    pub fn take_timeline(&mut self) -> Vec<TimedSample> {
        let mut t = self.timeline.as_mut().map(std::mem::take).unwrap_or_default();
        t.sort_unstable_by_key(|&(ms, trace, _)| (ms, trace));
        t.dedup_by(|later, kept| {
            let same = (later.0, later.1) == (kept.0, kept.1);
            if same {
                kept.2 = kept.2.saturating_add(later.2);
            }
            same
        });
        t
    }

    /// Whether samples of this thread count (`threads=`); its name is looked up once.
    pub fn keeps_thread(&mut self, ctx: &Context, thread_serial: u32) -> bool {
        self.filters.keeps_thread(thread_serial, || ctx.thread_by_serial(thread_serial).map(|t| t.name.clone()))
    }

    /// Counts full stacks per thread for upload windows as well.
    pub fn keep_windows(&mut self) {
        self.window = Some(FxHashMap::default());
    }

    /// The samples since the last call, as (thread serial, frames top first, count); empties the window.
    pub fn take_window(&mut self) -> Vec<WindowStack> {
        let Some(w) = self.window.as_mut() else { return Vec::new() };
        std::mem::take(w).into_iter().map(|((thread, frames), n)| (thread, frames, n)).collect()
    }

    /// The frame index of a raw frame, resolving it on first sight.
    pub fn frame(&mut self, ctx: &Context, jni: Option<Jni>, raw: RawFrame) -> u32 {
        if let Some(&i) = self.frame_cache.get(&raw) {
            return i;
        }
        let i = ctx.frame_index(jni, raw).unwrap_or_else(|| ctx.traces().pseudo_frame("<unknown method>"));
        self.frame_cache.insert(raw, i);
        i
    }

    /// Counts one sample, unless the filters drop it. Its first `native` frames are native ones (`cstack`):
    /// whole stacks keep them; HPROF's TRACEs only with `cstack=y`. A sample with native frames only (a
    /// thread of the JVM's own) then is not in CPU SAMPLES at all.
    pub fn add(&mut self, ctx: &Context, s: Sample) {
        if !self.keeps_thread(ctx, s.thread_serial)
            || !self.filters.keeps_stack(s.frames, |i| {
                ctx.traces().frame(i).map(|f| f.frame.qualified_method()).unwrap_or_default()
            })
        {
            return;
        }
        let traced = if ctx.options.native_frames_in_traces() {
            s.frames
        } else {
            s.java_only.unwrap_or(&s.frames[s.native.min(s.frames.len())..])
        };
        let mut serial = None;
        if !traced.is_empty() || s.root.is_some() {
            let depth = ctx.depth().min(traced.len());
            let trace = match s.root {
                None => ctx.intern_trace(s.thread_serial, &traced[..depth]),
                Some(root) => ctx.intern_trace(s.thread_serial, &[&traced[..depth], &[root]].concat()),
            };
            *self.by_trace.entry(trace).or_default() += s.weight;
            self.total += s.weight;
            serial = Some(trace);
        }
        let full = || -> Box<[u32]> {
            match s.root {
                None => s.frames.into(),
                Some(root) => [s.frames, &[root]].concat().into(),
            }
        };
        if self.keep_stacks {
            *self.stacks.entry(full()).or_default() += s.weight;
        }
        if let Some(w) = self.window.as_mut() {
            *w.entry((s.thread_serial, full())).or_default() += s.weight;
        }
        if let (Some(t), Some(serial)) = (self.timeline.as_mut(), serial) {
            t.push((s.time_ms, serial, s.weight.min(u32::MAX as u64) as u32));
        }
    }

    pub fn clear(&mut self) {
        self.by_trace.clear();
        self.stacks.clear();
        self.total = 0;
    }

    /// CPU SAMPLES: traces by count, largest first (ties by serial, for stable output).
    pub fn report(&self, ctx: &Context, cutoff: f64) -> CpuReport {
        let mut rows: Vec<CpuRow> = self
            .by_trace
            .iter()
            .map(|(&serial, &count)| CpuRow {
                weight: count,
                count,
                trace_serial: serial,
                top_method: ctx.traces().top_method(serial),
            })
            .collect();
        CpuRow::rank(&mut rows);
        CpuReport { kind: CpuReportKind::Samples, total: self.total, cutoff, rows, note: None }
    }

    /// Full stacks, root first, named `Class.method`, for flame graphs and folded files.
    pub fn weighted_stacks(&self, ctx: &Context) -> Vec<WeightedStack> {
        let mut names: FxHashMap<u32, String> = FxHashMap::default();
        self.stacks
            .iter()
            .map(|(frames, &weight)| WeightedStack {
                frames: frames
                    .iter()
                    .rev()
                    .map(|&i| {
                        names
                            .entry(i)
                            .or_insert_with(|| {
                                ctx.traces().frame(i).map(|f| f.frame.qualified_method()).unwrap_or_default()
                            })
                            .clone()
                    })
                    .collect(),
                weight,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hprof_format::model::{Frame, LineNumber};

    fn sample(thread_serial: u32, frames: &[u32]) -> Sample<'_> {
        Sample { thread_serial, frames, native: 0, java_only: None, root: None, weight: 1, time_ms: 0 }
    }

    #[test]
    fn the_timeline_merges_one_traces_samples_at_one_time() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = Context::without_jvm(&format!("cpu=wall,format=b,file={}", dir.path().join("p.hprof").display()));
        let f = ctx.traces().pseudo_frame("[sleeping]");
        let g = ctx.traces().pseudo_frame("[running]");
        let mut profile = Profile::new(false);
        profile.keep_timeline();
        for (ms, frame, weight) in [(20, f, 2), (10, f, 1), (20, g, 1), (20, f, 3)] {
            profile.add(&ctx, Sample { time_ms: ms, weight, ..sample(200001, &[frame]) });
        }
        let t = profile.take_timeline();
        let weights: Vec<(u32, u32)> = t.iter().map(|&(ms, _, w)| (ms, w)).collect();
        assert_eq!(weights.len(), 3, "{t:?}");
        assert!(weights.contains(&(10, 1)) && weights.contains(&(20, 5)) && weights.contains(&(20, 1)), "{t:?}");
        assert!(t.windows(2).all(|w| w[0].0 <= w[1].0), "in order of time");
        assert!(profile.take_timeline().is_empty(), "taken once");
    }

    #[test]
    fn samples_are_cut_to_depth_kept_apart_by_thread_and_ranked_by_count() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cpu-profile.txt");
        let ctx = Context::without_jvm(&format!("cpu=samples,depth=2,thread=y,file={}", path.display()));
        let frame = |method: &str, line| {
            ctx.traces().named_frame(Frame {
                class_name: "com.example.Work".into(),
                method_name: method.into(),
                method_signature: "()V".into(),
                source_file: Some("Work.java".into()),
                line: LineNumber::Line(line),
            })
        };
        let (main, outer, inner) = (frame("main", 5), frame("outer", 12), frame("inner", 30));
        let mut profile = Profile::new(true);
        for _ in 0..3 {
            profile.add(&ctx, sample(200001, &[inner, outer, main]));
        }
        profile.add(&ctx, sample(200001, &[outer, main]));
        // The same stack on another thread is another trace with thread=y.
        profile.add(&ctx, sample(200002, &[inner, outer, main]));

        let report = profile.report(&ctx, ctx.options.cutoff);
        ctx.reports().cpu(&report);
        ctx.output.close();
        let text = std::fs::read_to_string(&path).unwrap();

        let records = &text[text.find("TRACE 300001:").expect("traces written")..];
        let expected = "TRACE 300001: (thread=200001)\n\
                        \tcom.example.Work.inner(Work.java:30)\n\
                        \tcom.example.Work.outer(Work.java:12)\n\
                        TRACE 300002: (thread=200001)\n\
                        \tcom.example.Work.outer(Work.java:12)\n\
                        \tcom.example.Work.main(Work.java:5)\n\
                        TRACE 300003: (thread=200002)\n\
                        \tcom.example.Work.inner(Work.java:30)\n\
                        \tcom.example.Work.outer(Work.java:12)\n\
                        CPU SAMPLES BEGIN (total = 5) ";
        assert!(records.starts_with(expected), "two frames a trace (depth=2), one trace a thread, got:\n{records}");
        let rows: Vec<&str> = records.lines().skip_while(|l| !l.starts_with("CPU SAMPLES BEGIN")).skip(1).collect();
        assert_eq!(
            rows,
            [
                "rank   self  accum   count trace method",
                "   1 60.00% 60.00%       3 300001 com.example.Work.inner",
                "   2 20.00% 80.00%       1 300002 com.example.Work.outer",
                "   3 20.00% 100.00%       1 300003 com.example.Work.inner",
                "CPU SAMPLES END",
            ]
        );

        // Flame graphs keep whole stacks, root first, whatever depth= says.
        let mut stacks: Vec<(String, u64)> =
            profile.weighted_stacks(&ctx).into_iter().map(|s| (s.frames.join(";"), s.weight)).collect();
        stacks.sort();
        assert_eq!(
            stacks,
            [
                ("com.example.Work.main;com.example.Work.outer".to_owned(), 1),
                ("com.example.Work.main;com.example.Work.outer;com.example.Work.inner".to_owned(), 4),
            ]
        );
    }

    /// Native frames (`cstack`) are in whole stacks by default, in TRACEs only with cstack=y; a sample with
    /// native frames only (a JVM thread) is counted in CPU SAMPLES only then.
    #[test]
    fn native_frames_reach_traces_only_with_cstack_y() {
        for (cstack, in_traces) in [("", false), (",cstack=y", true)] {
            let dir = tempfile::tempdir().unwrap();
            let (file, folded) = (dir.path().join("cpu.txt"), dir.path().join("stacks.txt"));
            let ctx = Context::without_jvm(&format!(
                "cpu=samples,depth=8,file={},collapsed={}{cstack}",
                file.display(),
                folded.display()
            ));
            let work = ctx.traces().named_frame(Frame {
                class_name: "Work".into(),
                method_name: "spin".into(),
                method_signature: "()V".into(),
                source_file: None,
                line: LineNumber::Native,
            });
            let spin_in_c = ctx.traces().pseudo_frame("spin_in_c");
            let gc = ctx.traces().pseudo_frame("G1ParScanThreadState::trim_queue");
            let mut profile = Profile::new(true);
            profile.add(&ctx, Sample { native: 1, ..sample(200001, &[spin_in_c, work]) });
            profile.add(&ctx, Sample { native: 1, ..sample(200002, &[gc]) });
            let report = profile.report(&ctx, 0.0);
            let top: Vec<Vec<String>> = report
                .rows
                .iter()
                .map(|r| ctx.traces().frames_of(r.trace_serial).iter().map(|f| f.frame.qualified_method()).collect())
                .collect();
            if in_traces {
                assert_eq!(report.total, 2, "{top:?}");
                assert!(top.contains(&vec!["spin_in_c".to_owned(), "Work.spin".to_owned()]), "{top:?}");
            } else {
                assert_eq!((report.total, top), (1, vec![vec!["Work.spin".to_owned()]]));
            }
            let stacks: Vec<String> = profile.weighted_stacks(&ctx).into_iter().map(|s| s.frames.join(";")).collect();
            assert!(stacks.contains(&"Work.spin;spin_in_c".to_owned()), "whole stacks keep native frames: {stacks:?}");
        }
    }
}
