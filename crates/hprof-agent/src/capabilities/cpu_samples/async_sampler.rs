//! sampler=async: CPU-time timers per thread and AsyncGetCallTrace (see `signal`), and the resolver thread
//! that turns the ring's raw walks into traces.

use super::asgct;
use super::profile::Profile;
use super::signal::Shared;
use crate::agent::Agent;
use crate::log;
use crate::options::CpuClock;
use crate::threads::ThreadRecord;
use crate::traces::RawFrame;
use jvmti::{Jni, sys};
use rustc_hash::FxHashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Threads alive at once that can be sampled.
const MAX_THREADS: usize = 8192;
/// Samples buffered between two drains (each slot holds a full stack).
const RING_SLOTS: usize = 512;
/// Bounds on how often the resolver drains the ring (see `drain_interval`).
const DRAIN_AT_MOST_EVERY: Duration = Duration::from_millis(10);
const DRAIN_AT_LEAST_EVERY: Duration = Duration::from_millis(200);

pub struct AsyncSampler {
    shared: &'static Shared,
    interval_ms: u32,
    /// Thread serial → slot index of its timer.
    slots: Mutex<FxHashMap<u32, usize>>,
    /// Serials the front end switched off, and whether new threads start switched on.
    disabled: Mutex<Vec<u32>>,
    all_on: AtomicBool,
    stopping: AtomicBool,
    warned: AtomicBool,
}

impl AsyncSampler {
    pub fn new(interval_ms: u32, clock: CpuClock) -> Result<AsyncSampler, String> {
        let asgct =
            asgct::find().ok_or("AsyncGetCallTrace is not in this JVM (not HotSpot?); use sampler=safepoint")?;
        // HPROF_NO_PERF_EVENTS=1 too, for scripts that predate clock=.
        let perf = clock == CpuClock::Perf && std::env::var_os("HPROF_NO_PERF_EVENTS").is_none();
        let shared = Shared::install(asgct, MAX_THREADS, RING_SLOTS, perf)?;
        Ok(AsyncSampler {
            shared,
            interval_ms,
            slots: Mutex::default(),
            disabled: Mutex::default(),
            all_on: AtomicBool::new(true),
            stopping: AtomicBool::new(false),
            warned: AtomicBool::new(false),
        })
    }

    pub fn start(&self) {
        self.shared.running.store(true, Ordering::Release);
    }

    fn enabled_for(&self, serial: u32) -> bool {
        self.all_on.load(Ordering::Relaxed)
            && !self.disabled.lock().unwrap_or_else(|e| e.into_inner()).contains(&serial)
    }

    /// On the thread itself: arm its CPU-time timer.
    pub fn thread_started(&self, jni: Jni, record: &ThreadRecord) {
        if self.stopping.load(Ordering::Relaxed) {
            return;
        }
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if slots.contains_key(&record.serial) {
            return;
        }
        match self.shared.start_current_thread(
            jni.raw(),
            record.serial,
            self.interval_ms,
            self.enabled_for(record.serial),
        ) {
            Ok((index, kind, perf_refused)) => {
                slots.insert(record.serial, index);
                if let Some(why) = perf_refused {
                    log::warning(&format!(
                        "cpu=samples: perf events unavailable ({why}); using POSIX CPU timers, whose samples land \
                         on scheduler ticks and are less exact when threads compete for CPUs"
                    ));
                }
                let _ = kind;
            }
            Err(e) => {
                if !self.warned.swap(true, Ordering::Relaxed) {
                    log::warning(&format!("cpu=samples: thread \"{}\" is not sampled: {e}", record.name));
                }
            }
        }
    }

    pub fn thread_ended(&self, record: &ThreadRecord) {
        if let Some(index) = self.slots.lock().unwrap_or_else(|e| e.into_inner()).remove(&record.serial) {
            self.shared.stop(index);
        }
    }

    /// Stops every timer; no sample is taken after this returns.
    pub fn stop_all(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        self.shared.running.store(false, Ordering::Release);
        for (_, index) in self.slots.lock().unwrap_or_else(|e| e.into_inner()).drain() {
            self.shared.stop(index);
        }
    }

    /// Switches sampling for one thread (by serial) or all.
    pub fn set_sampling(&self, serial: Option<u32>, on: bool) {
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let mut disabled = self.disabled.lock().unwrap_or_else(|e| e.into_inner());
        match serial {
            Some(s) => {
                disabled.retain(|&d| d != s);
                if !on {
                    disabled.push(s);
                }
                if let Some(&i) = slots.get(&s) {
                    self.shared.set_enabled(i, on && self.all_on.load(Ordering::Relaxed));
                }
            }
            None => {
                self.all_on.store(on, Ordering::Relaxed);
                disabled.clear();
                for &i in slots.values() {
                    self.shared.set_enabled(i, on);
                }
            }
        }
    }

    /// How many frames each sample walks from now on.
    pub fn set_walk_frames(&self, frames: usize) {
        self.shared.set_walk_frames(frames);
    }

    /// Moves the ring's samples into the profile.
    pub fn drain(&self, agent: &Agent, jni: Option<Jni>, profile: &mut Profile) {
        let mut frames: Vec<u32> = Vec::with_capacity(64);
        self.shared.ring.drain(|sample| {
            frames.clear();
            if sample.num_frames <= 0 {
                frames.push(agent.traces.pseudo_frame(asgct::failure_label(sample.num_frames)));
            } else {
                let walked = sample.num_frames as usize;
                for f in &sample.frames[..walked] {
                    let raw = RawFrame::new(f.method_id as sys::jmethodID, f.lineno);
                    frames.push(profile.frame(agent, jni, raw));
                }
                if walked >= super::ring::MAX_FRAMES {
                    frames.push(agent.traces.pseudo_frame(super::profile::TRUNCATED));
                }
            }
            profile.add(agent, sample.thread_serial, &frames);
        });
    }

    pub fn dropped(&self) -> u64 {
        self.shared.ring.dropped()
    }

    /// How often the resolver drains the ring: seldom, since each wake-up costs it tens of microseconds
    /// whether or not there is work, but often enough that the ring fills to a quarter at most even if every
    /// CPU ran Java code at the shortest jittered period (half the interval).
    pub fn drain_interval(&self) -> Duration {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
        let fastest_per_second = cpus * 2 * 1000 / self.interval_ms.max(1) as u64;
        let quarter_ring_ms = (RING_SLOTS as u64 / 4) * 1000 / fastest_per_second.max(1);
        Duration::from_millis(quarter_ring_ms).clamp(DRAIN_AT_MOST_EVERY, DRAIN_AT_LEAST_EVERY)
    }
}
