//! The samples so far: counts per trace (for CPU SAMPLES) and per full stack (for flame graphs), and the
//! conversion of a raw walk into frame indexes of the agent's trace table.

use crate::context::Context;
use crate::traces::RawFrame;
use hprof_format::flame::WeightedStack;
use hprof_format::model::{CpuReport, CpuReportKind, CpuRow};
use jvmti::Jni;
use rustc_hash::FxHashMap;

/// The root frame of a stack cut at the walk's limit ([`crate::sampling::MAX_FRAMES`] frames), as
/// async-profiler marks it: the frames below are unknown, so the stack must not pass for a whole one.
pub const TRUNCATED: &str = "[truncated]";

#[derive(Default)]
pub struct Profile {
    by_trace: FxHashMap<u32, u64>,
    /// Full stacks, top frame first, as frame indexes; kept only when a flame graph or folded file is wanted.
    stacks: FxHashMap<Box<[u32]>, u64>,
    keep_stacks: bool,
    total: u64,
    /// (method, bci) → frame index, so that a hot frame is resolved once.
    frame_cache: FxHashMap<RawFrame, u32>,
}

impl Profile {
    pub fn new(keep_stacks: bool) -> Profile {
        Profile { keep_stacks, ..Profile::default() }
    }

    /// The frame index of a raw frame, resolving it on first sight.
    pub fn frame(&mut self, agent: &Context, jni: Option<Jni>, raw: RawFrame) -> u32 {
        if let Some(&i) = self.frame_cache.get(&raw) {
            return i;
        }
        let i =
            agent.traces.frame_index(agent, jni, raw).unwrap_or_else(|| agent.traces.pseudo_frame("<unknown method>"));
        self.frame_cache.insert(raw, i);
        i
    }

    /// Counts one sample of `frames` (top first) taken on `thread_serial`.
    pub fn add(&mut self, agent: &Context, thread_serial: u32, frames: &[u32]) {
        let depth = agent.depth().min(frames.len());
        let serial = agent.traces.intern(agent.trace_thread_serial(thread_serial), &frames[..depth]);
        *self.by_trace.entry(serial).or_default() += 1;
        if self.keep_stacks {
            *self.stacks.entry(frames.into()).or_default() += 1;
        }
        self.total += 1;
    }

    pub fn clear(&mut self) {
        self.by_trace.clear();
        self.stacks.clear();
        self.total = 0;
    }

    /// CPU SAMPLES: traces by count, largest first (ties by serial, for stable output).
    pub fn report(&self, agent: &Context, cutoff: f64) -> CpuReport {
        let mut rows: Vec<CpuRow> = self
            .by_trace
            .iter()
            .map(|(&serial, &count)| CpuRow {
                weight: count,
                count,
                trace_serial: serial,
                top_method: agent.traces.top_method(serial),
            })
            .collect();
        rows.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.trace_serial.cmp(&b.trace_serial)));
        CpuReport { kind: CpuReportKind::Samples, total: self.total, cutoff, rows, note: None }
    }

    /// Full stacks, root first, named `Class.method`, for flame graphs and folded files.
    pub fn weighted_stacks(&self, agent: &Context) -> Vec<WeightedStack> {
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
                                agent.traces.frame(i).map(|f| f.frame.qualified_method()).unwrap_or_default()
                            })
                            .clone()
                    })
                    .collect(),
                weight,
            })
            .collect()
    }
}
