//! MONITOR DUMP: a snapshot of every thread (its stack and state) and of every monitor that is owned or
//! waited on, with its owner, entry count and the threads waiting to enter it or to be notified.
//!
//! Stacks and states come from one GetAllStackTraces (one safepoint). Monitors come from each live
//! thread's owned monitors (GetOwnedMonitorInfo) and the one it is blocked or waiting on
//! (GetCurrentContendedMonitor), which also finds monitors nobody owns at the moment.

use super::{class_of, status};
use crate::context::Context;
use crate::traces::RawFrame;
use hprof_format::serial_base;
use hprof_format::text::{DumpedMonitor, DumpedThread, MonitorDump, ThreadStatus};
use jvmti::{Jni, sys};
use std::collections::HashSet;

pub fn take(ctx: &Context, jni: Jni) -> MonitorDump {
    // Every reference JVMTI hands out here is local: the frame frees them all.
    jni.with_local_frame(64, || take_in_frame(ctx, jni))
}

fn take_in_frame(ctx: &Context, jni: Jni) -> MonitorDump {
    let depth = ctx.depth() as i32;
    let stacks = ctx.jvmti.all_stack_traces(depth).unwrap_or_default();
    let mut threads = Vec::with_capacity(stacks.len());
    let mut live = HashSet::new();
    for info in &stacks {
        let serial = thread_serial(ctx, info.thread);
        if serial == 0 {
            continue;
        }
        let raw: Vec<RawFrame> = info.frames.iter().map(RawFrame::from_jvmti).collect();
        let trace_serial = ctx.intern_stack(Some(jni), serial, &raw);
        threads.push(DumpedThread { serial, trace_serial, status: status::from_jvmti(info.state) });
        live.insert(serial);
    }
    // Threads seen earlier that have ended, as HPROF listed them.
    for record in ctx.thread_records() {
        if !live.contains(&record.serial) {
            threads.push(DumpedThread {
                serial: record.serial,
                trace_serial: serial_base::TRACE,
                status: ThreadStatus::TERMINATED,
            });
        }
    }
    threads.sort_by_key(|t| t.serial);

    let mut objects: Vec<sys::jobject> = Vec::new();
    for info in &stacks {
        let owned = ctx.jvmti.owned_monitor_info(info.thread).unwrap_or_default();
        let contended = ctx.jvmti.current_contended_monitor(info.thread).ok().filter(|m| !m.is_null());
        for object in owned.into_iter().chain(contended) {
            if objects.iter().any(|&seen| jni.is_same_object(seen, object)) {
                jni.delete_local_ref(object);
            } else {
                objects.push(object);
            }
        }
    }
    let monitors = objects.iter().filter_map(|&o| describe_monitor(ctx, jni, o)).collect();
    MonitorDump { threads, monitors }
}

fn describe_monitor(ctx: &Context, jni: Jni, object: sys::jobject) -> Option<DumpedMonitor> {
    let usage = ctx.jvmti.object_monitor_usage(object).ok()?;
    let class_name = class_of(ctx, jni, object).map(|c| c.name.clone()).unwrap_or_else(|| "<unknown class>".into());
    let owner = (!usage.owner.is_null()).then(|| thread_serial(ctx, usage.owner));
    // Up to JDK 22 `waiters` also lists the threads in Object.wait; they are reported as waiting to be
    // notified only.
    let waiting_to_enter = usage
        .waiters
        .iter()
        .filter(|&&t| !usage.notify_waiters.iter().any(|&n| jni.is_same_object(t, n)))
        .map(|&t| thread_serial(ctx, t))
        .collect();
    let waiting_to_be_notified = usage.notify_waiters.iter().map(|&t| thread_serial(ctx, t)).collect();
    Some(DumpedMonitor { class_name, owner, entry_count: usage.entry_count, waiting_to_enter, waiting_to_be_notified })
}

/// A thread's serial, registering a thread the agent has not seen start yet.
fn thread_serial(ctx: &Context, thread: sys::jthread) -> u32 {
    ctx.register_thread(thread, false).map(|(r, _)| r.serial).unwrap_or(0)
}
