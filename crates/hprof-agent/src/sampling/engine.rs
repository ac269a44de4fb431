//! The engine's thread-facing side: arming and disarming each thread's CPU clock (see `signal`), the
//! consumers that registered for ticks, and the resolver thread that drains the ring and hands every tick
//! to each consumer.

use super::jvm_threads::JvmThreads;
use super::switches::ThreadSwitches;
use crate::agent_thread::StopSwitch;
use crate::clocks;
use crate::context::Context;
use crate::log;
use crate::options::CpuClock;
use jvmti::{Jni, sys};
use rustc_hash::FxHashMap;
use sampler::{ClockKind, SamplerCost, Shared, TickBatch};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Threads alive at once that can be sampled.
const MAX_THREADS: usize = 8192;
/// Samples buffered between two drains (each slot holds a full stack).
const RING_SLOTS: usize = 512;
/// Bounds on how often the resolver drains the ring (see `drain_interval`).
const DRAIN_AT_MOST_EVERY: Duration = Duration::from_millis(10);
const DRAIN_AT_LEAST_EVERY: Duration = Duration::from_millis(200);

/// A module that wants ticks. Consumers know nothing of timers or signals; the engine knows nothing of
/// what they make of the ticks.
pub trait TickConsumer: Send + Sync {
    /// Frames each tick should carry for this consumer (0: registers only). Asked before every drain, so
    /// that a depth changed by the front end applies from then on; the handler walks the most any consumer
    /// wants.
    fn frames_wanted(&self, ctx: &Context) -> usize;
    /// The ticks taken since the last drain, oldest first. Called on the resolver thread or on a thread
    /// writing a report, never from the signal handler, one drain at a time.
    fn on_ticks(&self, ctx: &Context, jni: Option<Jni>, ticks: &TickBatch);
}

pub struct Engine {
    shared: &'static Shared,
    interval_ms: u32,
    /// Thread serial → slot index of its clock.
    slots: Mutex<FxHashMap<u32, usize>>,
    /// Which threads the front end wants sampled; a new thread's clock starts as they say.
    switches: ThreadSwitches,
    stopping: AtomicBool,
    warned: AtomicBool,
    consumers: Mutex<Vec<Arc<dyn TickConsumer>>>,
    /// Held while draining: the ring has one reader at a time; the batch is reused.
    drain: Mutex<TickBatch>,
    /// The resolver thread.
    resolver: StopSwitch,
    /// `cstack=y`: the JVM's own threads are sampled too (for their native frames).
    jvm_threads_on: AtomicBool,
    jvm_threads: JvmThreads,
}

static ENGINE: OnceLock<Engine> = OnceLock::new();

/// The engine, once a consumer has installed it.
pub fn installed() -> Option<&'static Engine> {
    ENGINE.get()
}

impl Engine {
    /// Installs the engine (and its signal handler) on first use; later calls return the same engine, whose
    /// interval and clock are the first caller's.
    pub fn install(interval_ms: u32, clock: CpuClock) -> Result<&'static Engine, String> {
        if let Some(e) = ENGINE.get() {
            return Ok(e);
        }
        let asgct = jvmti::AsyncGetCallTrace::find()
            .ok_or("AsyncGetCallTrace is not in this JVM (not HotSpot?); use sampler=safepoint")?;
        // HPROF_NO_PERF_EVENTS=1 too, for scripts that predate clock=.
        let perf = clock == CpuClock::Perf && std::env::var_os("HPROF_NO_PERF_EVENTS").is_none();
        let shared = Shared::install(asgct, jvmti::Vm::created(), MAX_THREADS, RING_SLOTS, perf)?;
        let engine = Engine {
            shared,
            interval_ms,
            slots: Mutex::default(),
            switches: ThreadSwitches::default(),
            stopping: AtomicBool::new(false),
            warned: AtomicBool::new(false),
            consumers: Mutex::default(),
            drain: Mutex::default(),
            resolver: StopSwitch::default(),
            jvm_threads_on: AtomicBool::new(false),
            jvm_threads: JvmThreads::default(),
        };
        Ok(ENGINE.get_or_init(|| engine))
    }

    /// Turns native frames on (`cstack`) for every tick from now on: prepares the unwinder with the loaded
    /// objects and tells it where HotSpot keeps Java code (where native frames end). `jvm_threads`: sample
    /// the JVM's own threads (GC, compiler) as well, found by name on the resolver's ticks.
    pub fn enable_native(&self, jvm_threads: bool) {
        let native = self.shared.enable_native();
        match hotspot::VmStructs::get()
            .ok_or("the JVM exports no structure tables".to_string())
            .and_then(|vm| vm.code_cache_bounds_at())
        {
            Ok((low_at, high_at)) => native.java_code.set(low_at, high_at),
            Err(e) => log::warning(&format!(
                "cstack: cannot find the JVM's code cache ({e}); native frames run on into Java code"
            )),
        }
        // Where native code calls Java (JNI callbacks): the native frames between two Java frames.
        match hotspot::VmStructs::get().map(|vm| vm.static_address("StubRoutines", "_call_stub_return_address")) {
            Some(Ok(at)) => native.call_stub.set(at),
            Some(Err(e)) => log::verbose(true, &format!("cstack: no native frames between Java frames ({e})")),
            None => {}
        }
        let kernel = self.shared.enable_kernel_stacks();
        if let Err(why) = &kernel {
            log::warning(&format!("cstack: no kernel frames: {why}"));
        }
        // The symbol tables (libjvm's alone is megabytes) are read ahead, off the path of the first report
        // or checkpoint, which would otherwise wait for them.
        let objects: Vec<native_symbols::LoadedObject> = native
            .objects()
            .into_iter()
            .map(|o| native_symbols::LoadedObject { path: o.path, base: o.base, range: o.range })
            .collect();
        let preload = std::thread::Builder::new().name("HPROF symbols".into()).spawn(move || {
            if kernel.is_ok() {
                native_symbols::KernelSymbols::shared();
            }
            native_symbols::preload(&objects);
        });
        if let Err(e) = preload {
            log::warning(&format!("cstack: symbols are read on first use ({e})"));
        }
        if jvm_threads {
            self.jvm_threads_on.store(true, Ordering::Release);
        }
    }

    /// Turns native frames off (a session without them, after one with them).
    pub fn disable_native(&self) {
        self.shared.disable_native();
        self.jvm_threads_on.store(false, Ordering::Release);
    }

    /// Makes a stopped engine ready for the next session (an attach after `duration=` or `stop` ended the
    /// last): no consumers until the new ones register, every thread switched on, and a resolver to start.
    /// The clocks keep the first session's interval and kind.
    pub fn begin_session(&self) {
        self.consumers.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.switches.reset();
        self.resolver.reset();
        self.stopping.store(false, Ordering::Relaxed);
    }

    /// Whether any consumer registered this session.
    pub fn has_consumers(&self) -> bool {
        !self.consumers.lock().unwrap_or_else(|e| e.into_inner()).is_empty()
    }

    pub fn interval_ms(&self) -> u32 {
        self.interval_ms
    }

    /// Adds a consumer; it gets every tick taken from now on.
    pub fn register(&self, consumer: Arc<dyn TickConsumer>) {
        self.consumers.lock().unwrap_or_else(|e| e.into_inner()).push(consumer);
    }

    /// Starts taking ticks and the resolver thread (at VMInit, once the consumers are registered).
    pub fn start(&'static self, ctx: &Context, jni: Jni) {
        self.update_walk_frames(ctx);
        self.shared.running.store(true, Ordering::Release);
        if !self.resolver.start() {
            return;
        }
        if let Err(e) = crate::agent_thread::spawn(ctx, jni, "HPROF cpu sampler", move |ctx, jni| {
            self.resolve_until_stopped(ctx, jni)
        }) {
            self.resolver.finished();
            log::error(&format!("sampling: {e}"));
        }
    }

    /// On the thread itself: arms its CPU clock.
    pub fn thread_started(&self, jni: Jni, serial: u32, name: &str) {
        self.arm(sampler::current_tid(), Some(jni), serial, name);
    }

    /// From any thread: arms the CPU clock of the thread whose kernel id is `tid` (for threads that existed
    /// before the agent could see them start, e.g. after an attach). Its JNIEnv is asked of the JVM in the
    /// handler. Returns false if the thread could not be armed (or was already).
    pub fn arm_thread_by_tid(&self, tid: i32, serial: u32, name: &str) -> bool {
        self.arm(tid, None, serial, name)
    }

    fn arm(&self, tid: i32, env: Option<Jni>, serial: u32, name: &str) -> bool {
        if self.stopping.load(Ordering::Relaxed) {
            return false;
        }
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if slots.contains_key(&serial) {
            return false;
        }
        match self.shared.start_thread(tid, env, serial, self.interval_ms, self.switches.is_on(serial)) {
            Ok((index, kind, perf_refused)) => {
                slots.insert(serial, index);
                if let Some(why) = perf_refused {
                    log::warning(&format!(
                        "sampling: perf events unavailable ({why}); using POSIX CPU timers, whose samples land \
                         on scheduler ticks and are less exact when threads compete for CPUs"
                    ));
                }
                let _: ClockKind = kind;
                true
            }
            Err(e) => {
                if !self.warned.swap(true, Ordering::Relaxed) {
                    log::warning(&format!("sampling: thread \"{name}\" is not sampled: {e}"));
                }
                false
            }
        }
    }

    /// On a carrier thread: its ticks belong to virtual thread `serial` from now on.
    pub fn set_mounted(&self, serial: u32) {
        self.shared.set_mounted(serial);
    }

    /// On a carrier thread: its virtual thread is unmounting (its ticks are its own while its frames are
    /// on the carrier).
    pub fn set_unmounting(&self) {
        self.shared.set_unmounting();
    }

    /// Every carrier's ticks are its own again (mounts are no longer followed).
    pub fn clear_mounted(&self) {
        self.shared.clear_mounted();
    }

    pub fn thread_ended(&self, serial: u32) {
        if let Some(index) = self.slots.lock().unwrap_or_else(|e| e.into_inner()).remove(&serial) {
            self.shared.stop(index);
        }
    }

    /// Stops every clock and the resolver; no tick is taken after this returns. Ticks still in the ring are
    /// handed out by the next `drain`.
    pub fn stop_all(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        self.shared.running.store(false, Ordering::Release);
        for (_, index) in self.slots.lock().unwrap_or_else(|e| e.into_inner()).drain() {
            self.shared.stop(index);
        }
        self.resolver.stop();
        if self.shared.measuring {
            log::verbose(true, &self.shared.cost.summary());
        }
    }

    /// Switches ticks for one thread (by serial) or all. Off stops the thread's clock, for every consumer.
    pub fn set_sampling(&self, serial: Option<u32>, on: bool) {
        // Held throughout, so that a thread armed meanwhile starts as the switches now say.
        let slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        self.switches.set(serial, on);
        match serial {
            Some(s) => {
                if let Some(&i) = slots.get(&s) {
                    self.shared.set_enabled(i, self.switches.is_on(s));
                }
            }
            None => {
                for &i in slots.values() {
                    self.shared.set_enabled(i, on);
                }
            }
        }
    }

    fn update_walk_frames(&self, ctx: &Context) {
        let consumers = self.consumers.lock().unwrap_or_else(|e| e.into_inner());
        let frames = consumers.iter().map(|c| c.frames_wanted(ctx)).max().unwrap_or(0);
        self.shared.set_walk_frames(frames);
    }

    /// Hands the ring's ticks to every consumer. Any thread may call it (a report drains first, so that it
    /// is up to date); drains take turns.
    pub fn drain(&self, ctx: &Context, jni: Option<Jni>) {
        // Objects loaded since the last drain (a dlopen): unwind tables for the next ticks, names for these.
        if let Some(native) = self.shared.native() {
            native.refresh();
        }
        let mut batch = self.drain.lock().unwrap_or_else(|e| e.into_inner());
        batch.clear();
        self.shared.ring.drain(|sample| batch.push(sample));
        let consumers: Vec<Arc<dyn TickConsumer>> = self.consumers.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if !batch.is_empty() {
            for c in &consumers {
                c.on_ticks(ctx, jni, &batch);
            }
        }
        drop(batch);
        // The front end may have changed the depth since the last drain.
        self.update_walk_frames(ctx);
    }

    /// Ticks lost because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.shared.ring.dropped()
    }

    /// Creates the jmethodIDs of a class's methods, which AsyncGetCallTrace cannot do in a signal handler.
    /// Consumers that want frames call it for each prepared class (and for the classes loaded before VMInit).
    pub fn create_method_ids(&self, ctx: &Context, class: sys::jclass) {
        let start = clocks::monotonic_ns();
        let _ = ctx.jvmti.class_methods(class);
        SamplerCost::add(&self.shared.cost.method_ids_ns, clocks::monotonic_ns().saturating_sub(start));
    }

    /// The resolver thread: drains at `drain_interval` until `stop_all`.
    fn resolve_until_stopped(&self, ctx: &'static Context, jni: Jni) {
        let period = self.drain_interval();
        while !self.resolver.wait(period) {
            if self.jvm_threads_on.load(Ordering::Acquire) {
                self.jvm_threads.scan(
                    ctx,
                    |tid, serial, name| self.arm_thread_by_tid(tid, serial, name),
                    |serial| self.thread_ended(serial),
                );
            }
            jni.with_local_frame(64, || self.drain(ctx, Some(jni)));
        }
        SamplerCost::add(&self.shared.cost.resolver_ns, clocks::thread_cpu_ns());
        self.resolver.finished();
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
