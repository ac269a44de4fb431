//! Time blocked entering monitors, per (trace, lock class): MonitorContendedEnter starts a thread's clock,
//! MonitorContendedEntered for the same thread (see [`super::thread_key`]) stops it.
//!
//! Time is kept in nanoseconds and printed in milliseconds. (The original summed milliseconds but divided
//! them as if nanoseconds, so it printed nothing until about 16 minutes of contention had piled up.)

use super::class_of;
use super::lock_stacks::LockStacks;
use crate::context::Context;
use crate::traces::RawFrame;
use hprof_format::model::{MonitorTimeReport, MonitorTimeRow};
use jvmti::{Jni, sys};
use rustc_hash::FxHashMap;
use std::sync::Mutex;
use std::time::Instant;

/// A thread blocked on a monitor: when it started and what it will be charged to.
#[derive(Clone, Copy)]
struct Blocked {
    since: Instant,
    row: RowKey,
    /// Its full stack in the lock flame graph, when one is drawn.
    lock_stack: Option<u32>,
}

/// A row of the lock profile: the trace the thread was on and the class of the monitor.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct RowKey {
    pub trace_serial: u32,
    pub class_serial: u32,
}

#[derive(Default, Clone, Copy)]
pub(super) struct Totals {
    pub nanos: u64,
    pub count: u64,
}

#[derive(Default)]
struct State {
    /// Finished contended entries.
    rows: FxHashMap<RowKey, Totals>,
    /// Those finished since the last upload window was taken (otlp=, pyroscope=).
    window: FxHashMap<RowKey, Totals>,
    /// Threads blocked right now, by thread key: a dump counts them too, so that a deadlock shows.
    blocked: FxHashMap<u64, Blocked>,
}

pub struct Contention {
    state: Mutex<State>,
    lock_stacks: Option<LockStacks>,
}

impl Contention {
    pub fn new(lock_stacks: Option<LockStacks>) -> Contention {
        Contention { state: Mutex::default(), lock_stacks }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// MonitorContendedEnter: `thread` (the current one, with key `key`) is about to block on `object`.
    pub fn on_enter(&self, ctx: &Context, jni: Jni, thread: sys::jthread, key: u64, object: sys::jobject) {
        let class_serial = class_of(ctx, jni, object).map(|c| c.serial).unwrap_or(0);
        let raw = self.current_stack(ctx);
        let depth = ctx.depth().min(raw.len());
        let trace_serial = ctx.intern_stack(Some(jni), ctx.thread_serial(thread), &raw[..depth]);
        let lock_stack = self.lock_stacks.as_ref().map(|s| s.intern(ctx, jni, class_serial, &raw));
        // The clock starts after our own work, so that the stack walk is not charged to the lock.
        let row = RowKey { trace_serial, class_serial };
        self.lock().blocked.insert(key, Blocked { since: Instant::now(), row, lock_stack });
    }

    /// MonitorContendedEntered: the thread with key `key` owns the monitor it blocked on.
    pub fn on_entered(&self, key: u64) {
        let now = Instant::now();
        let blocked = {
            let mut state = self.lock();
            let Some(blocked) = state.blocked.remove(&key) else { return };
            let nanos = nanos_between(blocked.since, now);
            let State { rows, window, .. } = &mut *state;
            for rows in [rows, window] {
                let t = rows.entry(blocked.row).or_default();
                t.nanos += nanos;
                t.count += 1;
            }
            blocked
        };
        if let (Some(stacks), Some(id)) = (&self.lock_stacks, blocked.lock_stack) {
            stacks.add(id, nanos_between(blocked.since, now));
        }
    }

    /// The current thread's stack, top first: depth= frames, or the full stack for the lock flame graph.
    fn current_stack(&self, ctx: &Context) -> Vec<RawFrame> {
        let depth = ctx.depth();
        if self.lock_stacks.is_none() {
            return stack_of_current_thread(ctx, depth);
        }
        // Most stacks are short: try a small buffer before the largest.
        let first = depth.max(FIRST_TRY_FRAMES);
        let stack = stack_of_current_thread(ctx, first);
        if stack.len() < first || first >= LockStacks::MAX_FRAMES {
            return stack;
        }
        stack_of_current_thread(ctx, depth.max(LockStacks::MAX_FRAMES))
    }

    /// The contended entries finished since the last call, as (trace serial, monitor class serial,
    /// entries, nanoseconds blocked): the lock profile's upload window.
    pub fn take_window(&self) -> Vec<(u32, u32, u64, u64)> {
        let window = std::mem::take(&mut self.lock().window);
        window.into_iter().map(|(k, t)| (k.trace_serial, k.class_serial, t.count, t.nanos)).collect()
    }

    /// MONITOR TIME so far, waits still in progress included: rows by blocked time, largest first.
    pub fn report(&self, ctx: &Context) -> MonitorTimeReport {
        let now = Instant::now();
        let totals: FxHashMap<RowKey, Totals> = {
            let state = self.lock();
            let mut totals = state.rows.clone();
            for b in state.blocked.values() {
                let t = totals.entry(b.row).or_default();
                t.nanos += nanos_between(b.since, now);
                t.count += 1;
            }
            totals
        };
        report_of(ctx, totals)
    }

    /// Writes the lock flame graph and/or collapsed stacks, if asked for, waits in progress included.
    pub fn write_lock_stacks(&self, ctx: &Context) {
        let Some(stacks) = &self.lock_stacks else { return };
        let now = Instant::now();
        let in_progress: Vec<(u32, u64)> =
            self.lock().blocked.values().filter_map(|b| Some((b.lock_stack?, nanos_between(b.since, now)))).collect();
        stacks.write_files(ctx, &in_progress);
    }
}

/// Rows by time, largest first, with their monitors' class names.
pub(super) fn report_of(ctx: &Context, totals: FxHashMap<RowKey, Totals>) -> MonitorTimeReport {
    let mut rows: Vec<MonitorTimeRow> = totals
        .into_iter()
        .map(|(k, t)| MonitorTimeRow {
            nanos: t.nanos,
            count: t.count,
            trace_serial: k.trace_serial,
            monitor_class: ctx
                .classes()
                .by_serial(k.class_serial)
                .map(|c| c.name.clone())
                .unwrap_or_else(|| "<unknown class>".into()),
        })
        .collect();
    rows.sort_by(|a, b| {
        b.nanos.cmp(&a.nanos).then(a.trace_serial.cmp(&b.trace_serial)).then(a.monitor_class.cmp(&b.monitor_class))
    });
    MonitorTimeReport { total_nanos: rows.iter().map(|r| r.nanos).sum(), cutoff: ctx.options.cutoff, rows }
}

/// The trace serial of the current thread's stack, `depth=` frames deep.
pub(super) fn trace_of_current_thread(ctx: &Context, jni: Jni, thread: sys::jthread) -> u32 {
    let raw = stack_of_current_thread(ctx, ctx.depth());
    ctx.intern_stack(Some(jni), ctx.thread_serial(thread), &raw)
}

/// Frames a full-stack walk asks for first.
const FIRST_TRY_FRAMES: usize = 128;

fn stack_of_current_thread(ctx: &Context, frames: usize) -> Vec<RawFrame> {
    let frames = ctx.jvmti.stack_frames(std::ptr::null_mut(), 0, frames).unwrap_or_default();
    frames.iter().map(RawFrame::from_jvmti).collect()
}

pub(super) fn nanos_between(earlier: Instant, later: Instant) -> u64 {
    later.saturating_duration_since(earlier).as_nanos().min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Context;
    use hprof_format::model::{Frame, LineNumber};
    use std::time::Duration;

    /// A context writing text to a file of its own, with two lock classes and two traces in its tables.
    struct Fixture {
        ctx: Context,
        path: std::path::PathBuf,
        _dir: tempfile::TempDir,
        account: u32,
        object: u32,
        transfer: u32,
        audit: u32,
    }

    fn fixture(name: &str) -> Fixture {
        fixture_in(name, "a")
    }

    fn fixture_in(name: &str, format: &str) -> Fixture {
        let _dir = tempfile::tempdir().unwrap();
        let path = _dir.path().join(format!("contention-{name}.txt"));
        let ctx = Context::without_jvm(&format!("monitor=y,cutoff=0.01,format={format},file={}", path.display()));
        let account = ctx.classes().append("Lcom/example/Account;".into(), ctx.ids().next()).serial;
        let object = ctx.classes().append("Ljava/lang/Object;".into(), ctx.ids().next()).serial;
        let frame = |class: &str, method: &str, line| Frame {
            class_name: class.into(),
            method_name: method.into(),
            method_signature: "()V".into(),
            source_file: Some("Bank.java".into()),
            line: LineNumber::Line(line),
        };
        let run = ctx.traces().named_frame(frame("com.example.Bank", "run", 10));
        let transfer = ctx.traces().named_frame(frame("com.example.Bank", "transfer", 42));
        let audit = ctx.traces().named_frame(frame("com.example.Bank", "audit", 77));
        let transfer = ctx.traces().intern(0, &[transfer, run]);
        let audit = ctx.traces().intern(0, &[audit, run]);
        Fixture { ctx, path, _dir, account, object, transfer, audit }
    }

    fn finished(c: &Contention, trace_serial: u32, class_serial: u32, millis: u64, count: u64) {
        let totals = Totals { nanos: millis * 1_000_000, count };
        c.lock().rows.insert(RowKey { trace_serial, class_serial }, totals);
    }

    #[test]
    fn monitor_time_ranks_rows_names_lock_classes_and_writes_their_traces_first() {
        let f = fixture("report");
        let contention = Contention::new(None);
        finished(&contention, f.audit, f.object, 100, 1);
        finished(&contention, f.transfer, f.account, 300, 3);
        // A class the table never numbered, and a row below cutoff=0.01 (1 ms of 401).
        finished(&contention, f.audit, 0, 1, 1);

        let report = contention.report(&f.ctx);
        f.ctx.reports().monitor_time(&report);
        f.ctx.output.close();
        let text = std::fs::read_to_string(&f.path).unwrap();

        // The header's explanation of the records also says "TRACE": the records begin at the first serial.
        let first = format!("TRACE {}:", f.transfer);
        let section = &text[text.find(&first).expect("traces written")..];
        let expected = format!(
            "TRACE {transfer}:\n\
             \tcom.example.Bank.transfer(Bank.java:42)\n\
             \tcom.example.Bank.run(Bank.java:10)\n\
             TRACE {audit}:\n\
             \tcom.example.Bank.audit(Bank.java:77)\n\
             \tcom.example.Bank.run(Bank.java:10)\n",
            transfer = f.transfer,
            audit = f.audit,
        );
        assert!(section.starts_with(&expected), "traces of the ranked rows first, got:\n{section}");
        let monitor_time = &section[section.find("MONITOR TIME BEGIN").expect("MONITOR TIME written")..];
        let lines: Vec<&str> = monitor_time.lines().collect();
        assert!(lines[0].starts_with("MONITOR TIME BEGIN (total = 401 ms) "), "{monitor_time}");
        assert_eq!(lines[1], "rank   self  accum   count trace monitor");
        assert_eq!(lines[2], format!("   1 74.81% 74.81%       3 {} com.example.Account (Java)", f.transfer));
        assert_eq!(lines[3], format!("   2 24.94% 99.75%       1 {} java.lang.Object (Java)", f.audit));
        assert_eq!(lines[4], "MONITOR TIME END", "the 1 ms row is below the cutoff:\n{monitor_time}");
        assert_eq!(report.rows[2].monitor_class, "<unknown class>");
    }

    /// The same contention and waits written as text (MONITOR TIME) and binary (MONITOR TIMES).
    fn written_both_ways() -> (String, Vec<u8>, Fixture) {
        let mut out = Vec::new();
        for format in ["a", "b"] {
            let f = fixture_in("both", format);
            let contention = Contention::new(None);
            finished(&contention, f.transfer, f.account, 300, 3);
            finished(&contention, f.audit, f.object, 100, 1);
            let waits = super::super::waits::Waits::default();
            waits.add_finished(RowKey { trace_serial: f.audit, class_serial: f.object }, 250_000_000, 2);
            let enters = contention.report(&f.ctx);
            f.ctx.reports().monitor_time(&enters);
            f.ctx.reports().monitor_times(&enters, &waits.report(&f.ctx));
            f.ctx.output.close();
            out.push((std::fs::read(&f.path).unwrap(), f));
        }
        let (binary, f) = out.pop().unwrap();
        let (text, _) = out.pop().unwrap();
        (String::from_utf8(text).unwrap(), binary, f)
    }

    #[test]
    fn the_binary_record_holds_monitor_times_rows_and_the_waits() {
        use hprof_format::binary::{MonitorKind, Record, Records, parse_header};
        let (text, binary, f) = written_both_ways();
        let h = parse_header(&binary).unwrap();
        let mut strings = FxHashMap::default();
        let mut rows = Vec::new();
        for raw in Records::new(&binary, &h) {
            match Record::decode(&raw.unwrap(), h.id_size).unwrap() {
                Record::Utf8 { id, text } => {
                    strings.insert(id, String::from_utf8_lossy(text).into_owned());
                }
                Record::MonitorTimes { rows: r } => rows = r,
                _ => {}
            }
        }
        let named: Vec<(MonitorKind, u32, &str, u64, u64)> = rows
            .iter()
            .map(|r| (r.kind, r.trace_serial, strings[&r.class_name_id].as_str(), r.count, r.nanos))
            .collect();
        assert_eq!(
            named,
            [
                (MonitorKind::Enter, f.transfer, "com.example.Account", 3, 300_000_000),
                (MonitorKind::Enter, f.audit, "java.lang.Object", 1, 100_000_000),
                (MonitorKind::Wait, f.audit, "java.lang.Object", 2, 250_000_000),
            ]
        );
        // The text's MONITOR TIME: the same enter rows, ranks, counts and traces, its total their sum.
        let section = &text[text.find("MONITOR TIME BEGIN").unwrap()..];
        assert!(section.starts_with("MONITOR TIME BEGIN (total = 400 ms) "), "{section}");
        for (kind, trace, class, count, _) in &named {
            let line = format!("{count:>7} {trace} {class} (Java)");
            let listed = section.lines().take_while(|l| *l != "MONITOR TIME END").any(|l| l.ends_with(&line));
            assert_eq!(listed, *kind == MonitorKind::Enter, "{line:?} in\n{section}");
        }
    }

    #[test]
    fn a_thread_still_blocked_counts_in_the_report() {
        let f = fixture("blocked");
        let contention = Contention::new(None);
        finished(&contention, f.transfer, f.account, 300, 3);
        let row = RowKey { trace_serial: f.transfer, class_serial: f.account };
        let since = Instant::now() - Duration::from_millis(200);
        contention.lock().blocked.insert(7, Blocked { since, row, lock_stack: None });

        let report = contention.report(&f.ctx);
        f.ctx.output.close();
        assert_eq!(report.rows.len(), 1);
        assert_eq!(report.rows[0].count, 4, "three finished entries and the one in progress");
        assert!(report.rows[0].nanos >= 500_000_000, "300 ms finished + at least 200 ms in progress");

        // Once it enters, the wait is a finished one and nothing is counted twice.
        contention.on_entered(7);
        let report = contention.report(&f.ctx);
        assert_eq!(report.rows[0].count, 4);
        assert!(contention.lock().blocked.is_empty());
    }
}
