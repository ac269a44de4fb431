//! Object.wait: the live `WAIT:` / `WAITED:` lines (MonitorWait, MonitorWaited; both events arrive on the
//! waiting thread), and the time waited per (trace, monitor class) for the lock profile's wait rows.

use super::class_of;
use super::contention::{RowKey, Totals, nanos_between, report_of, trace_of_current_thread};
use crate::context::Context;
use hprof_format::model::MonitorTimeReport;
use jvmti::{Jni, sys};
use rustc_hash::FxHashMap;
use std::sync::Mutex;
use std::time::Instant;

#[derive(Default)]
struct State {
    /// Threads in Object.wait now, by thread key: since when, and the row they will be charged to.
    started: FxHashMap<u64, (Instant, RowKey)>,
    /// Finished waits. Waits in progress are left out: an idle thread waits for work all its life.
    rows: FxHashMap<RowKey, Totals>,
}

#[derive(Default)]
pub struct Waits {
    state: Mutex<State>,
}

impl Waits {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn on_wait(
        &self,
        ctx: &Context,
        jni: Jni,
        thread: sys::jthread,
        key: u64,
        object: sys::jobject,
        timeout_ms: i64,
    ) {
        let class = class_of(ctx, jni, object);
        let signature = class.as_ref().map(|c| c.signature.clone()).unwrap_or_else(|| "<unknown>".into());
        let serial = ctx.thread_serial(thread);
        ctx.output.monitor_wait(&signature, timeout_ms, serial);
        let row = RowKey {
            trace_serial: trace_of_current_thread(ctx, jni, thread),
            class_serial: class.map(|c| c.serial).unwrap_or(0),
        };
        // The clock starts after our own work, as for contended entries.
        self.lock().started.insert(key, (Instant::now(), row));
    }

    pub fn on_waited(&self, ctx: &Context, jni: Jni, thread: sys::jthread, key: u64, object: sys::jobject) {
        let now = Instant::now();
        let waited = {
            let mut state = self.lock();
            let started = state.started.remove(&key);
            started.map(|(since, row)| {
                let nanos = nanos_between(since, now);
                let t = state.rows.entry(row).or_default();
                t.nanos += nanos;
                t.count += 1;
                nanos
            })
        };
        let waited_ms = waited.unwrap_or(0) / 1_000_000;
        let (signature, serial) = describe(ctx, jni, thread, object);
        ctx.output.monitor_waited(&signature, waited_ms, serial);
    }

    /// A finished wait's totals, as `on_waited` adds them (tests without a JVM).
    #[cfg(test)]
    pub(super) fn add_finished(&self, row: RowKey, nanos: u64, count: u64) {
        let mut state = self.lock();
        let t = state.rows.entry(row).or_default();
        t.nanos += nanos;
        t.count += count;
    }

    /// The finished waits so far, by time, largest first.
    pub fn report(&self, ctx: &Context) -> MonitorTimeReport {
        let rows = self.lock().rows.clone();
        report_of(ctx, rows)
    }
}

/// The JVM signature of the object's class (as HPROF printed it) and the thread's serial (0 if unknown).
fn describe(ctx: &Context, jni: Jni, thread: sys::jthread, object: sys::jobject) -> (String, u32) {
    let signature = class_of(ctx, jni, object).map(|c| c.signature.clone()).unwrap_or_else(|| "<unknown>".into());
    (signature, ctx.thread_serial(thread))
}
