//! Agent threads: Java daemon threads (JVMTI RunAgentThread) whose body is Rust. Being Java threads, they
//! can call JNI and every JVMTI function, which a plain native thread could not without attaching.

use crate::context::{Context, current};
use jvmti::{Jni, sys};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Starts `body` on a new daemon thread named `name`, which must begin with "HPROF " so that the profile
/// leaves it out (see [`crate::threads::is_agent_thread`]).
pub fn spawn(
    ctx: &Context,
    jni: Jni,
    name: &str,
    body: impl FnOnce(&'static Context, Jni) + Send + 'static,
) -> Result<(), String> {
    debug_assert!(crate::threads::is_agent_thread(name), "agent thread {name} must be named HPROF …");
    let thread_class = jni.find_class(c"java/lang/Thread").map_err(|e| format!("agent thread {name}: {e}"))?;
    let ctor = jni
        .method_id(thread_class, c"<init>", c"(Ljava/lang/String;)V")
        .map_err(|e| format!("agent thread {name}: {e}"))?;
    let jname = jni.new_string(name).map_err(|e| format!("agent thread {name}: {e}"))?;
    let thread = jni
        .new_object(thread_class, ctor, &[sys::jvalue { l: jname }])
        .map_err(|e| format!("agent thread {name}: {e}"))?;
    let started = ctx.jvmti.spawn_agent_thread(thread, sys::JVMTI_THREAD_NORM_PRIORITY as i32, move |jni| {
        if let Some(a) = current() {
            body(a, jni)
        }
    });
    jni.delete_local_ref(jname);
    jni.delete_local_ref(thread);
    jni.delete_local_ref(thread_class);
    started.map_err(|e| format!("cannot start agent thread {name}: {e}"))
}

/// How an agent thread that works in rounds (a sampler, the engine's resolver, the flat profile's ticker)
/// is told to stop: it waits on the switch between rounds, and [`StopSwitch::stop`] wakes it and gives its
/// last round a moment to finish, so that the round does not race the final report.
#[derive(Debug, Default)]
pub struct StopSwitch {
    stopped: Mutex<bool>,
    wake: Condvar,
    running: AtomicBool,
}

impl StopSwitch {
    /// How long [`StopSwitch::stop`] waits for the round in progress.
    const LAST_ROUND: Duration = Duration::from_secs(1);

    /// Marks the thread as running, before it is spawned; false if it already was.
    pub fn start(&self) -> bool {
        !self.running.swap(true, Ordering::AcqRel)
    }

    /// The thread's last act (or its spawning's failure).
    /// Whether the thread is running (between `start` and `finished`).
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    pub fn finished(&self) {
        self.running.store(false, Ordering::Release);
    }

    /// Between rounds: waits up to `timeout`, or less if asked to stop. True once asked to stop.
    pub fn wait(&self, timeout: Duration) -> bool {
        let stopped = self.stopped.lock().unwrap_or_else(|e| e.into_inner());
        if *stopped {
            return true;
        }
        *self.wake.wait_timeout(stopped, timeout).unwrap_or_else(|e| e.into_inner()).0
    }

    /// Asks the thread to stop and waits briefly for its round in progress.
    pub fn stop(&self) {
        *self.stopped.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.wake.notify_all();
        let deadline = std::time::Instant::now() + Self::LAST_ROUND;
        while self.running.load(Ordering::Acquire) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Ready for a thread of a later session.
    pub fn reset(&self) {
        *self.stopped.lock().unwrap_or_else(|e| e.into_inner()) = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn stop_wakes_a_waiting_round_and_waits_for_its_end() {
        let switch = Arc::new(StopSwitch::default());
        assert!(switch.start());
        assert!(!switch.start(), "already running");
        let rounds = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let thread = {
            let (switch, rounds) = (switch.clone(), rounds.clone());
            std::thread::spawn(move || {
                while !switch.wait(Duration::from_millis(1)) {
                    rounds.fetch_add(1, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(50));
                switch.finished();
            })
        };
        while rounds.load(Ordering::Relaxed) < 3 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let asked = Instant::now();
        switch.stop();
        assert!(asked.elapsed() >= Duration::from_millis(50), "stop returned before the thread's last act");
        let after = rounds.load(Ordering::Relaxed);
        thread.join().unwrap();
        assert_eq!(rounds.load(Ordering::Relaxed), after, "no round after stop");
        assert!(switch.wait(Duration::from_secs(60)), "a stopped switch does not wait");
        switch.reset();
        assert!(!switch.wait(Duration::from_millis(1)), "reset: waits again");
        assert!(switch.start(), "finished: can start again");
    }
}
