//! One upload window of cpu=samples as a neutral profile: full stacks per thread, named and numbered.

use crate::capabilities::cpu_samples::WindowStack;
use crate::context::Context;
use hprof_format::profiles::{Frame, Label, Profile, Sample, ValueType};
use rustc_hash::FxHashMap;

/// What a window's samples measure: CPU time (cpu=samples) or wall-clock time (cpu=wall).
fn kind(ctx: &Context) -> &'static str {
    if ctx.options.sampler == crate::options::SamplerKind::Wall { "wall" } else { "cpu" }
}

/// The window from `start` to `end` (Unix nanoseconds): samples and CPU (or wall) time, samples × interval.
pub fn cpu(ctx: &Context, stacks: Vec<WindowStack>, start: u64, end: u64) -> Profile {
    let period = ctx.options.interval_ms as i64 * 1_000_000;
    let kind = kind(ctx);
    let mut frames: FxHashMap<u32, Frame> = FxHashMap::default();
    let mut threads: FxHashMap<u32, Vec<Label>> = FxHashMap::default();
    let samples = stacks
        .into_iter()
        .map(|(thread, stack, count)| Sample {
            stack: stack.iter().map(|&i| frames.entry(i).or_insert_with(|| frame(ctx, i)).clone()).collect(),
            values: vec![count as i64, count as i64 * period],
            labels: threads.entry(thread).or_insert_with(|| thread_labels(ctx, thread)).clone(),
        })
        .collect();
    Profile {
        sample_types: vec![ValueType::new("samples", "count"), ValueType::new(kind, "nanoseconds")],
        period_type: Some(ValueType::new(kind, "nanoseconds")),
        period,
        time_nanos: start,
        duration_nanos: end.saturating_sub(start),
        samples,
    }
}

fn frame(ctx: &Context, index: u32) -> Frame {
    let Some(stored) = ctx.traces().frame(index) else {
        return Frame { function: "<unknown>".into(), system_name: String::new(), file: String::new(), line: 0 };
    };
    Frame::of(&stored.frame)
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
