//! sampler=safepoint: HPROF's own method. Every interval, take the stacks of all RUNNABLE threads at one
//! safepoint. Kept for comparison and for JVMs without AsyncGetCallTrace. Its known flaws are the reason
//! it is not the default: a thread blocked in native code (e.g. in accept()) is RUNNABLE and collects
//! samples although it uses no CPU, and every stack is seen only at a safepoint.

use super::profile::{Profile, Sample};
use crate::context::Context;
use crate::sampling::ThreadSwitches;
use crate::traces::RawFrame;
use jvmti::{Jni, sys};
use std::sync::Mutex;

#[derive(Default)]
pub struct SafepointSampler {
    /// Which threads the front end wants sampled.
    switches: ThreadSwitches,
}

impl SafepointSampler {
    pub fn set_sampling(&self, serial: Option<u32>, on: bool) {
        self.switches.set(serial, on);
    }

    /// One round: all RUNNABLE Java threads except the agent's own.
    pub fn sample_once(&self, ctx: &Context, jni: Jni, max_frames: usize, profile: &Mutex<Profile>) {
        if !self.switches.all_on() {
            return;
        }
        let Ok(threads) = ctx.jvmti.all_threads() else { return };
        let mut runnable = Vec::new();
        let mut serials = Vec::new();
        for &t in &threads {
            let Some(record) = ctx.thread_record(t) else { continue };
            let state = ctx.jvmti.thread_state(t).unwrap_or(jvmti::ThreadState(0));
            if state.runnable() && self.switches.is_on(record.serial) {
                runnable.push(t);
                serials.push(record.serial);
            }
        }
        if !runnable.is_empty()
            && let Ok(stacks) = ctx.jvmti.thread_list_stack_traces(&runnable, max_frames as i32)
        {
            let mut profile = profile.lock().unwrap_or_else(|e| e.into_inner());
            for (stack, &serial) in stacks.iter().zip(&serials) {
                // A thread that stopped being RUNNABLE between the two calls is not counted.
                if stack.state & sys::JVMTI_THREAD_STATE_RUNNABLE == 0 || stack.frames.is_empty() {
                    continue;
                }
                let mut frames: Vec<u32> =
                    stack.frames.iter().map(|f| profile.frame(ctx, Some(jni), RawFrame::from_jvmti(f))).collect();
                if frames.len() >= max_frames && max_frames >= crate::sampling::MAX_FRAMES {
                    frames.push(ctx.traces().pseudo_frame(super::profile::TRUNCATED));
                }
                profile.add(
                    ctx,
                    Sample {
                        thread_serial: serial,
                        frames: &frames,
                        native: 0,
                        java_only: None,
                        root: None,
                        weight: 1,
                        time_ms: ctx.elapsed_ms(),
                    },
                );
            }
        }
        for t in threads {
            jni.delete_local_ref(t);
        }
    }
}
