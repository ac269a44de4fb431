//! GetCallTrace: a thread's stack from JVMTI GetStackTrace, with source lines from the methods' tables.

use crate::abi::*;
use crate::layer::layer;
use jvmti::sys;

pub fn fill(trace: *mut JVMPI_CallTrace, depth: sys::jint) {
    if trace.is_null() {
        return;
    }
    // SAFETY: the agent passes a trace with env_id set and room for `depth` frames.
    let trace = unsafe { &mut *trace };
    trace.num_frames = 0;
    let Some(l) = layer() else { return };
    if depth <= 0 || trace.frames.is_null() {
        return;
    }
    let own = l.current_jni().is_some_and(|j| j.raw() == trace.env_id);
    let thread = if own {
        std::ptr::null_mut()
    } else {
        match crate::threads::by_env(trace.env_id) {
            Some(r) => r.jthread(),
            None => return,
        }
    };
    let mut frames = vec![sys::jvmtiFrameInfo { method: std::ptr::null_mut(), location: 0 }; depth as usize];
    let Ok(n) = l.jvmti.stack_trace(thread, 0, &mut frames) else { return };
    for (i, f) in frames[..n].iter().enumerate() {
        let lineno = l.jvmti.line_number_table(f.method).ok().and_then(|t| t.line_of(f.location)).unwrap_or(-1);
        // SAFETY: i < n <= depth, the size of the agent's buffer.
        unsafe { *trace.frames.add(i) = JVMPI_CallFrame { lineno, method_id: f.method } };
    }
    trace.num_frames = n as sys::jint;
}
