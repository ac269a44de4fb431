//! MONITOR_DUMP: the Java monitors that threads own, wait to enter or wait on, with their owners and
//! waiters (JVMTI GetOwnedMonitorInfo, GetCurrentContendedMonitor, GetObjectMonitorUsage), and every known
//! thread's stack trace and status. Threads are named by their JNIEnv, so only threads the layer has seen
//! (every thread that started after it, and those that caused an event) appear; others count as null.
//! Raw monitors the agent created and uses are written as JVMPI_MONITOR_RAW records (`monitors.rs` keeps
//! their owners and waiters).

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

/// The object a thread waits on in Object.wait: newer JDKs (25) no longer give it as the contended monitor,
/// so it is taken from the wait frame (`this` of java.lang.Object's Java-level wait method). That needs
/// local variable access: without it (`local_access`), a monitor only waited on is left out of the dump.
fn waited_on(layer: &Layer, thread: sys::jthread) -> Option<sys::jobject> {
    if !crate::local_access::held() {
        return None;
    }
    let state = layer.jvmti.thread_state(thread).ok()?;
    if state.0 & sys::JVMTI_THREAD_STATE_IN_OBJECT_WAIT == 0 {
        return None;
    }
    let mut frames = [sys::jvmtiFrameInfo { method: std::ptr::null_mut(), location: 0 }; 4];
    let n = layer.jvmti.stack_trace(thread, 0, &mut frames).ok()?;
    let depth = frames[..n].iter().position(|f| {
        !layer.jvmti.is_method_native(f.method).unwrap_or(true)
            && layer.jvmti.method_name(f.method).is_ok_and(|m| m.name.starts_with("wait"))
            && layer
                .jvmti
                .method_declaring_class(f.method)
                .and_then(|c| layer.jvmti.class_signature(c))
                .is_ok_and(|s| s == "Ljava/lang/Object;")
    })?;
    let env = layer.jvmti.raw();
    let mut this: sys::jobject = std::ptr::null_mut();
    // Another thread's locals can be read only while it is suspended; it stays in its wait meanwhile.
    let suspended_here = layer.jvmti.suspend_thread(thread).is_ok();
    // SAFETY: GetLocalInstance of a Java frame of a suspended thread, with an out-parameter.
    let rc = unsafe {
        match (**env).GetLocalInstance {
            Some(f) => f(env, thread, depth as sys::jint, &mut this),
            None => sys::JVMTI_ERROR_NOT_AVAILABLE,
        }
    };
    if suspended_here {
        let _ = layer.jvmti.resume_thread(thread);
    }
    (rc == sys::JVMTI_ERROR_NONE && !this.is_null()).then_some(this)
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
        match layer.jvmti.current_contended_monitor(r.jthread()) {
            Ok(m) if !m.is_null() => mine.push(m),
            _ => mine.extend(waited_on(layer, r.jthread())),
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
    crate::monitors::write_dump_records(&mut out);
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
