//! MONITOR_DUMP: the Java monitors that threads own, wait to enter or wait on, with their owners and
//! waiters (JVMTI GetOwnedMonitorInfo, GetCurrentContendedMonitor, GetObjectMonitorUsage), and every known
//! thread's stack trace and status. Threads are named by their JNIEnv, so only threads the layer has seen
//! (every thread that started after it, and those that caused an event) appear; others count as null.
//! JVMTI cannot tell who owns a raw monitor, so no JVMPI_MONITOR_RAW records are written.

use crate::abi::*;
use crate::dump_buf::DumpBuf;
use crate::layer::{Layer, deliver};
use crate::threads::ThreadRecord;
use jvmti::{Jni, sys};
use std::sync::Arc;

const TRACE_DEPTH: usize = 1024;

/// A thread's stack as JVMPI call frames, top first.
pub fn trace_of(layer: &Layer, _jni: Jni, thread: sys::jthread, depth: usize) -> Vec<JVMPI_CallFrame> {
    let mut frames = vec![sys::jvmtiFrameInfo { method: std::ptr::null_mut(), location: 0 }; depth];
    let n = layer.jvmti.stack_trace(thread, 0, &mut frames).unwrap_or(0);
    frames[..n]
        .iter()
        .map(|f| JVMPI_CallFrame {
            lineno: layer.jvmti.line_number_table(f.method).ok().and_then(|t| t.line_of(f.location)).unwrap_or(-1),
            method_id: f.method,
        })
        .collect()
}

fn env_of(jni: Jni, threads: &[Arc<ThreadRecord>], thread: sys::jthread) -> *mut u8 {
    if thread.is_null() {
        return std::ptr::null_mut();
    }
    threads.iter().find(|r| jni.is_same_object(r.jthread(), thread)).map(|r| r.env).unwrap_or(0) as *mut u8
}

pub fn request(layer: &Layer, jni: Jni) -> sys::jint {
    let threads = crate::threads::all();
    let mut monitors: Vec<sys::jobject> = Vec::new();
    for r in &threads {
        let mut mine = layer.jvmti.owned_monitor_info(r.jthread()).unwrap_or_default();
        if let Ok(m) = layer.jvmti.current_contended_monitor(r.jthread())
            && !m.is_null()
        {
            mine.push(m);
        }
        for m in mine {
            if monitors.iter().any(|&known| jni.is_same_object(known, m)) {
                jni.delete_local_ref(m);
            } else {
                monitors.push(m);
            }
        }
    }
    let mut out = DumpBuf::default();
    for &m in &monitors {
        let Ok(usage) = layer.jvmti.object_monitor_usage(m) else { continue };
        out.u1(JVMPI_MONITOR_JAVA);
        out.id(crate::ids::id_of(layer, m));
        out.id(env_of(jni, &threads, usage.owner));
        out.u4(usage.entry_count.max(0) as u32);
        for list in [&usage.waiters, &usage.notify_waiters] {
            out.u4(list.len() as u32);
            for &t in list.iter() {
                out.id(env_of(jni, &threads, t));
            }
        }
        jni.delete_local_ref(m);
    }
    let mut frames: Vec<Vec<JVMPI_CallFrame>> =
        threads.iter().map(|r| trace_of(layer, jni, r.jthread(), TRACE_DEPTH)).collect();
    let mut traces: Vec<JVMPI_CallTrace> = threads
        .iter()
        .zip(frames.iter_mut())
        .map(|(r, f)| JVMPI_CallTrace {
            env_id: r.env as *mut sys::JNIEnv,
            num_frames: f.len() as i32,
            frames: f.as_mut_ptr(),
        })
        .collect();
    let mut status: Vec<sys::jint> =
        threads.iter().map(|r| crate::threads::status(r.env as *mut sys::JNIEnv)).collect();
    let (begin, end) = out.range();
    let mut ev = JVMPI_Event::new(JVMPI_EVENT_MONITOR_DUMP, jni.raw());
    ev.u.monitor_dump = MonitorDump {
        begin,
        end,
        num_traces: traces.len() as i32,
        traces: traces.as_mut_ptr(),
        threads_status: status.as_mut_ptr(),
    };
    deliver(&mut ev, true);
    JVMPI_SUCCESS
}
