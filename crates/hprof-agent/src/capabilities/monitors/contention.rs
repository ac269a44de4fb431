//! Time blocked entering monitors, per (trace, lock class): MonitorContendedEnter starts the clock on the
//! blocked thread, MonitorContendedEntered on the same thread stops it.
//!
//! Time is kept in nanoseconds and printed in milliseconds. (The original summed milliseconds but divided
//! them as if nanoseconds, so it printed nothing until about 16 minutes of contention had piled up.)

use super::class_of;
use super::lock_stacks::LockStacks;
use crate::agent::Agent;
use crate::traces::RawFrame;
use hprof_format::model::{MonitorTimeReport, MonitorTimeRow};
use jvmti::{Jni, sys};
use rustc_hash::FxHashMap;
use std::cell::Cell;
use std::sync::Mutex;
use std::time::Instant;

/// A thread blocked on a monitor: when it started and what it will be charged to.
#[derive(Clone, Copy)]
struct Blocked {
    since: Instant,
    key: RowKey,
    /// Its full stack in the lock flame graph, when one is drawn.
    lock_stack: Option<u32>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct RowKey {
    trace_serial: u32,
    class_serial: u32,
}

#[derive(Default, Clone, Copy)]
struct Totals {
    nanos: u64,
    count: u64,
}

thread_local! {
    /// Enter and Entered arrive on the blocked thread itself, so its pending wait lives with it. (A virtual
    /// thread that unmounts while blocked, possible from JDK 24, is charged to the carrier it entered on.)
    static BLOCKED: Cell<Option<Blocked>> = const { Cell::new(None) };
}

pub struct Contention {
    rows: Mutex<FxHashMap<RowKey, Totals>>,
    lock_stacks: Option<LockStacks>,
}

impl Contention {
    pub fn new(lock_stacks: Option<LockStacks>) -> Contention {
        Contention { rows: Mutex::default(), lock_stacks }
    }

    /// MonitorContendedEnter: the current thread is about to block on `object`.
    pub fn on_enter(&self, agent: &Agent, jni: Jni, thread: sys::jthread, object: sys::jobject) {
        let class_serial = class_of(agent, jni, object).map(|c| c.serial).unwrap_or(0);
        let raw = self.current_stack(agent);
        let depth = agent.depth().min(raw.len());
        let thread_serial = agent.trace_thread_serial(agent.threads.serial_of(agent, thread));
        let trace_serial = agent.traces.intern_raw(agent, Some(jni), thread_serial, &raw[..depth]);
        let lock_stack = self.lock_stacks.as_ref().map(|s| s.intern(agent, jni, class_serial, &raw));
        // The clock starts after our own work, so that the stack walk is not charged to the lock.
        let key = RowKey { trace_serial, class_serial };
        BLOCKED.set(Some(Blocked { since: Instant::now(), key, lock_stack }));
    }

    /// MonitorContendedEntered: the current thread owns the monitor it blocked on.
    pub fn on_entered(&self) {
        let Some(blocked) = BLOCKED.take() else { return };
        let nanos = blocked.since.elapsed().as_nanos().min(u64::MAX as u128) as u64;
        {
            let mut rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
            let t = rows.entry(blocked.key).or_default();
            t.nanos += nanos;
            t.count += 1;
        }
        if let (Some(stacks), Some(id)) = (&self.lock_stacks, blocked.lock_stack) {
            stacks.add(id, nanos);
        }
    }

    /// The current thread's stack, top first: depth= frames, or the full stack for the lock flame graph.
    fn current_stack(&self, agent: &Agent) -> Vec<RawFrame> {
        let frames = match &self.lock_stacks {
            Some(_) => agent.depth().max(LockStacks::MAX_FRAMES),
            None => agent.depth(),
        };
        let mut buf = vec![unsafe { std::mem::zeroed::<sys::jvmtiFrameInfo>() }; frames];
        let n = agent.jvmti.stack_trace(std::ptr::null_mut(), 0, &mut buf).unwrap_or(0);
        buf[..n].iter().map(RawFrame::from_jvmti).collect()
    }

    /// MONITOR TIME so far: rows by blocked time, largest first.
    pub fn report(&self, agent: &Agent) -> MonitorTimeReport {
        let totals: Vec<(RowKey, Totals)> =
            self.rows.lock().unwrap_or_else(|e| e.into_inner()).iter().map(|(k, t)| (*k, *t)).collect();
        let mut rows: Vec<MonitorTimeRow> = totals
            .into_iter()
            .map(|(k, t)| MonitorTimeRow {
                nanos: t.nanos,
                count: t.count,
                trace_serial: k.trace_serial,
                monitor_class: agent
                    .classes
                    .by_serial(k.class_serial)
                    .map(|c| c.name.clone())
                    .unwrap_or_else(|| "<unknown class>".into()),
            })
            .collect();
        rows.sort_by(|a, b| b.nanos.cmp(&a.nanos).then(a.trace_serial.cmp(&b.trace_serial)));
        MonitorTimeReport { total_nanos: rows.iter().map(|r| r.nanos).sum(), cutoff: agent.options.cutoff, rows }
    }

    /// Writes the lock flame graph and/or collapsed stacks, if asked for.
    pub fn write_lock_stacks(&self, agent: &Agent) {
        if let Some(stacks) = &self.lock_stacks {
            stacks.write_files(agent);
        }
    }
}
