//! The agent's one helper thread, "HPROF worker" (a Java daemon thread, so it may call JNI and JVMTI): it
//! writes a checkpoint of the reports every second, so that a JVM killed with SIGKILL leaves a readable
//! profile up to its last second, and it runs the jobs nobody should wait for on their own thread (giving
//! a heap dump's tags back, a forced collection that a dying JVM may never run).

use crate::context::Context;
use crate::log;
use jvmti::Jni;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How often the reports are checkpointed (and everything buffered written out).
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

type Job = Box<dyn FnOnce(&'static Context, Jni) + Send>;

/// The current session's worker. A session started by a later attach (see `attach`) gets a worker of its
/// own; the ended session's worker finds its sender dropped and ends.
static JOBS: Mutex<Option<Sender<Job>>> = Mutex::new(None);

/// Starts the worker (at VMInit, or as an attached session starts).
pub fn start(ctx: &Context, jni: Jni) {
    let (send, receive) = channel::<Job>();
    *JOBS.lock().unwrap_or_else(|e| e.into_inner()) = Some(send);
    if let Err(e) = crate::agent_thread::spawn(ctx, jni, "HPROF worker", move |ctx, jni| run(ctx, jni, receive)) {
        log::warning(&format!("{e}; the profile is written at exit only"));
    }
}

fn run(ctx: &'static Context, jni: Jni, jobs: Receiver<Job>) {
    let mut next_checkpoint = Instant::now() + CHECKPOINT_EVERY;
    while ctx.is_live() {
        match jobs.recv_timeout(next_checkpoint.saturating_duration_since(Instant::now())) {
            Ok(job) => jni.with_local_frame(64, || job(ctx, jni)),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if Instant::now() >= next_checkpoint {
            jni.with_local_frame(64, || ctx.checkpoint(jni));
            next_checkpoint = Instant::now() + CHECKPOINT_EVERY;
        }
    }
}

/// Lets the worker go once the session has ended: dropping the sender wakes it from its wait at once.
/// At exit this matters: the JVM's last safepoint waits up to 300 ms for any Java thread still in native
/// code (HotSpot's `VM_Exit::wait_for_threads_in_native_to_block`), and a worker asleep in its one-second
/// wait is one.
pub fn stop() {
    drop(JOBS.lock().unwrap_or_else(|e| e.into_inner()).take());
}

/// Hands `job` to the worker; false (and `job` dropped) if there is none yet, or no more.
pub fn submit(job: impl FnOnce(&'static Context, Jni) + Send + 'static) -> bool {
    let jobs = JOBS.lock().unwrap_or_else(|e| e.into_inner());
    jobs.as_ref().is_some_and(|j| j.send(Box::new(job)).is_ok())
}

/// Forces a garbage collection and waits for it — unless the JVM begins to exit meanwhile: a collector
/// stops its threads before VMDeath, and ZGC or Shenandoah never answer a collection asked for after that
/// (a report waiting for one held the exit up for ever). True if the collection ran.
pub fn collect_garbage(ctx: &Context) -> bool {
    let done = Arc::new((Mutex::new(false), Condvar::new()));
    let signal = done.clone();
    let submitted = submit(move |ctx, _| {
        let _ = ctx.jvmti.force_garbage_collection();
        let (lock, wake) = &*signal;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
    });
    if !submitted {
        // Before VMInit or after VMDeath: no collector is running concurrently that could hang it.
        if ctx.is_exiting() {
            return false;
        }
        ctx.force_gc();
        return true;
    }
    let (lock, wake) = &*done;
    let mut collected = lock.lock().unwrap_or_else(|e| e.into_inner());
    while !*collected {
        if ctx.is_exiting() {
            return false;
        }
        collected = wake.wait_timeout(collected, Duration::from_millis(50)).unwrap_or_else(|e| e.into_inner()).0;
    }
    true
}
