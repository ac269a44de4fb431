//! The live `WAIT:` / `WAITED:` lines: a thread called Object.wait (MonitorWait), and how long it waited
//! when it returned (MonitorWaited). Both events arrive on the waiting thread.

use super::class_of;
use crate::context::Context;
use jvmti::{Jni, sys};
use rustc_hash::FxHashMap;
use std::sync::Mutex;
use std::time::Instant;

/// When each thread in Object.wait started waiting, by thread key.
#[derive(Default)]
pub struct Waits {
    started: Mutex<FxHashMap<u64, Instant>>,
}

impl Waits {
    pub fn on_wait(
        &self,
        ctx: &Context,
        jni: Jni,
        thread: sys::jthread,
        key: u64,
        object: sys::jobject,
        timeout_ms: i64,
    ) {
        let (signature, serial) = describe(ctx, jni, thread, object);
        ctx.output.monitor_wait(&signature, timeout_ms, serial);
        self.started.lock().unwrap_or_else(|e| e.into_inner()).insert(key, Instant::now());
    }

    pub fn on_waited(&self, ctx: &Context, jni: Jni, thread: sys::jthread, key: u64, object: sys::jobject) {
        let started = self.started.lock().unwrap_or_else(|e| e.into_inner()).remove(&key);
        let waited_ms = started.map(|t| t.elapsed().as_millis() as u64).unwrap_or(0);
        let (signature, serial) = describe(ctx, jni, thread, object);
        ctx.output.monitor_waited(&signature, waited_ms, serial);
    }
}

/// The JVM signature of the object's class (as HPROF printed it) and the thread's serial (0 if unknown).
fn describe(ctx: &Context, jni: Jni, thread: sys::jthread, object: sys::jobject) -> (String, u32) {
    let signature = class_of(ctx, jni, object).map(|c| c.signature.clone()).unwrap_or_else(|| "<unknown>".into());
    (signature, ctx.thread_serial(thread))
}
