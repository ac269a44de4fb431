//! The SIGPROF handler and the per-thread CPU clocks that raise it. All of the sampling engine's
//! signal-handler code is in this file.
//!
//! Each Java thread gets a clock on its own CPU time that sends SIGPROF to that very thread: a perf
//! task-clock event (see `perf_clock`) or, where perf events are forbidden, a POSIX timer on
//! CLOCK_THREAD_CPUTIME_ID with SIGEV_THREAD_ID. Only threads that burn CPU are sampled, wherever they
//! are — no safepoint bias. The signal identifies the thread's slot in a fixed arena (the timer's value,
//! or the perf descriptor through a table), so the handler knows the thread's JNIEnv and serial without
//! locks, allocation or thread-locals. It copies the interrupted registers (pc, sp, fp) and, when a consumer
//! asked for frames, walks the stack with AsyncGetCallTrace, straight into a claimed ring slot.
//!
//! Async-signal safety, which every change here must keep: the handler only loads and stores atomics,
//! makes system calls (gettid, ioctl, timer_settime, clock_gettime through the vDSO), reads the kernel's
//! ucontext and calls AsyncGetCallTrace (made for signal handlers) and, for a thread armed by its kernel id,
//! the JVM's GetEnv (a thread-local read, as async-profiler relies on). It takes no lock, allocates nothing
//! (the ring and the slot arena are allocated at install), never waits (a full ring drops the sample and
//! counts it), and restores errno.

use crate::clocks::monotonic_ns;
use crate::cost::SamplerCost;
use crate::native::{NativeUnwinder, StackBounds};
use crate::perf_clock::{self, PerfClock};
use crate::registers::Registers;
use crate::ring::{MAX_FRAMES, SampleRing};
use jvmti::sys::JNIEnv;
use jvmti::{AsyncGetCallTrace, Jni, Vm};
use std::ffi::c_void;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicIsize, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Per-thread state the handler reads. Lives in a fixed arena for the process's lifetime, so a late
/// signal never touches freed memory.
pub(crate) struct ThreadSlot {
    in_use: AtomicBool,
    /// The OS thread the slot belongs to; the handler checks it against gettid().
    tid: AtomicI32,
    thread_serial: AtomicU32,
    /// The thread's JNIEnv, which AsyncGetCallTrace needs; null for a thread armed by its kernel id from
    /// another thread, whose handler asks the JVM (`env_of_current_thread`).
    env: AtomicPtr<JNIEnv>,
    /// Per-thread on/off (the front end's CONTROL command).
    enabled: AtomicBool,
    /// The POSIX timer (`timer_t` as an integer), or [`NO_TIMER`]. Not a null pointer for "none": glibc's
    /// `timer_t` is the kernel's timer id, and the process's first timer is id 0.
    timer: AtomicIsize,
    /// The perf task-clock descriptor, or -1 when a POSIX timer is used.
    perf_fd: AtomicI32,
    /// The perf clock's ring buffer mapping in the continuous mode, else 0 (see `perf_clock`).
    perf_ring: AtomicUsize,
    /// Samples since the period was last jittered (continuous perf clocks; only the slot's thread).
    since_jitter: AtomicU32,
    /// The sampling interval in ns, and the state of the generator that jitters it (see `next_period`).
    period_ns: AtomicU64,
    jitter: AtomicU64,
    /// Non-zero while the thread runs the agent's own work inside a JVM callback (see `agent_work`), where
    /// the walker cannot see Java frames: such samples are labelled as the agent's cost.
    pub(crate) agent_work: AtomicI32,
    /// Where the kernel call chains of the slot's perf clock were last read up to (see `kernel_callchain`).
    perf_tail: AtomicU64,
    /// The thread's stack, for the native unwinder (0, 0: unknown, read through the kernel).
    stack_low: AtomicUsize,
    stack_high: AtomicUsize,
    /// The serial of the virtual thread mounted on this (carrier) thread, or 0, with [`UNMOUNTING`] once it
    /// is about to unmount: its samples are the virtual thread's. Written on the carrier by the mount and
    /// unmount events (see [`Shared::set_mounted`]).
    mounted: AtomicU32,
}

/// The flag of a slot's `mounted` serial while its virtual thread unmounts.
pub const UNMOUNTING: u32 = 1 << 31;

/// Samples between two changes of a continuous perf clock's period.
const JITTER_EVERY: u32 = 4;

impl ThreadSlot {
    fn perf_clock(&self, fd: i32) -> PerfClock {
        PerfClock { fd, ring: self.perf_ring.load(Ordering::Acquire) }
    }
}

/// A slot's `timer` when it has none.
const NO_TIMER: isize = -1;

fn timer_of(stored: isize) -> Option<libc::timer_t> {
    (stored != NO_TIMER).then_some(stored as libc::timer_t)
}

/// Descriptors up to this number can be perf clocks (the handler's fd → slot table).
const FD_TABLE: usize = 1 << 16;

/// Everything the handler needs, reachable from one static pointer.
pub struct Shared {
    pub ring: SampleRing,
    slots: Box<[ThreadSlot]>,
    asgct: AsyncGetCallTrace,
    /// The JVM, for the JNIEnv of threads armed by their kernel id (`None` if it could not be found).
    vm: Option<Vm>,
    /// Slot index + 1 by perf descriptor; 0 = not ours.
    fd_slots: Box<[AtomicU32]>,
    /// Whether to try perf events for the next thread (cleared after the first refusal).
    use_perf: AtomicBool,
    /// Sampling as a whole: off before setup finishes and after VMDeath.
    pub running: AtomicBool,
    /// What the handler costs (see `cost`), added up only with `HPROF_CPU_STATS=1`: the handler then reads
    /// the clock four times per sample.
    pub cost: SamplerCost,
    pub measuring: bool,
    /// Frames to walk per sample, the most any consumer wants (0: no walk, registers only); only a report's
    /// depth unless full stacks are wanted (flame graphs), since the walk's cost grows with every frame.
    walk_frames: AtomicUsize,
    /// `HPROF_SAMPLER_DRY=1`, for benchmarks: the clocks run and signal as usual but the handler takes no
    /// stack, so that the platform's cost of a sample (timer interrupt, signal delivery, re-arming) can be
    /// told from the walk's.
    dry: bool,
    /// The native unwinder (`cstack`), once a consumer asked for native frames.
    native: OnceLock<NativeUnwinder>,
    native_on: AtomicBool,
    /// Kernel frames from the perf clocks' call chains (`cstack`), for clocks opened from now on.
    kernel_stacks: AtomicBool,
}

/// Which kind of clock a thread got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockKind {
    PerfTaskClock,
    PosixTimer,
}

thread_local! {
    /// The calling thread's slot and kernel id, once it armed its own clock (`usize::MAX`: none), so that
    /// the mount events find the carrier's slot without a search.
    static CURRENT_SLOT: std::cell::Cell<(usize, i32)> = const { std::cell::Cell::new((usize::MAX, 0)) };
}

static SHARED: AtomicPtr<Shared> = AtomicPtr::new(std::ptr::null_mut());
static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(std::ptr::null_mut());

/// The handler's shared state, once installed.
pub fn installed() -> Option<&'static Shared> {
    // SAFETY: SHARED is null or points to a leaked, never freed `Shared`.
    unsafe { SHARED.load(Ordering::Acquire).as_ref() }
}

impl Shared {
    /// Creates the arena and ring and installs the handler. Called once; the memory is never freed.
    pub fn install(
        asgct: AsyncGetCallTrace,
        vm: Option<Vm>,
        max_threads: usize,
        ring_slots: usize,
        use_perf: bool,
    ) -> Result<&'static Shared, String> {
        if let Some(s) = installed() {
            return Ok(s);
        }
        let slots = (0..max_threads)
            .map(|_| ThreadSlot {
                in_use: AtomicBool::new(false),
                tid: AtomicI32::new(0),
                thread_serial: AtomicU32::new(0),
                env: AtomicPtr::new(std::ptr::null_mut()),
                enabled: AtomicBool::new(false),
                timer: AtomicIsize::new(NO_TIMER),
                perf_fd: AtomicI32::new(-1),
                perf_ring: AtomicUsize::new(0),
                since_jitter: AtomicU32::new(0),
                agent_work: AtomicI32::new(0),
                period_ns: AtomicU64::new(0),
                jitter: AtomicU64::new(0),
                perf_tail: AtomicU64::new(0),
                stack_low: AtomicUsize::new(0),
                stack_high: AtomicUsize::new(0),
                mounted: AtomicU32::new(0),
            })
            .collect();
        let shared: &'static Shared = Box::leak(Box::new(Shared {
            ring: SampleRing::new(ring_slots),
            slots,
            asgct,
            vm,
            fd_slots: (0..FD_TABLE).map(|_| AtomicU32::new(0)).collect(),
            use_perf: AtomicBool::new(use_perf),
            running: AtomicBool::new(false),
            cost: SamplerCost::default(),
            measuring: std::env::var_os("HPROF_CPU_STATS").is_some(),
            dry: std::env::var_os("HPROF_SAMPLER_DRY").is_some(),
            walk_frames: AtomicUsize::new(MAX_FRAMES),
            native: OnceLock::new(),
            native_on: AtomicBool::new(false),
            kernel_stacks: AtomicBool::new(false),
        }));
        SHARED.store(shared as *const Shared as *mut Shared, Ordering::Release);
        // SAFETY: a zeroed sigaction is a valid empty one, filled with our handler's address and flags; `previous`
        // is leaked, so the pointer PREVIOUS keeps stays valid for `chain` in any later signal. Installed from
        // ordinary (not signal) context during setup.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigprof as *const () as usize;
            // SA_RESTART: a sample must not make the program's blocking calls fail with EINTR.
            action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            let previous: &'static mut libc::sigaction = Box::leak(Box::new(std::mem::zeroed()));
            if libc::sigaction(libc::SIGPROF, &action, previous) != 0 {
                return Err(format!("cannot install the SIGPROF handler: {}", std::io::Error::last_os_error()));
            }
            PREVIOUS.store(previous, Ordering::Release);
        }
        Ok(shared)
    }

    /// Turns native frames on (`cstack`): prepares the unwinder (reads every loaded object's unwind tables)
    /// and returns it, so that the caller can tell it where Java code lies and refresh its objects. Not in a
    /// signal handler.
    pub fn enable_native(&self) -> &NativeUnwinder {
        let native = self.native.get_or_init(NativeUnwinder::new);
        self.native_on.store(true, Ordering::Release);
        native
    }

    /// Asks the perf clocks opened from now on for kernel call chains, if this process may have them
    /// (`perf_event_paranoid` ≤ 1 or CAP_PERFMON) and clocks are perf clocks; else says why not.
    pub fn enable_kernel_stacks(&self) -> Result<(), String> {
        if !self.use_perf.load(Ordering::Relaxed) {
            return Err(
                "the CPU clocks are POSIX timers (clock=posix, or perf events refused), which have no call chains"
                    .into(),
            );
        }
        perf_clock::kernel_stacks_allowed().map_err(|e| {
            let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
            format!(
                "perf events may not watch the kernel ({e}; /proc/sys/kernel/perf_event_paranoid is {}, kernel call \
                 chains need 1 or less, or CAP_PERFMON)",
                paranoid.trim()
            )
        })?;
        self.kernel_stacks.store(true, Ordering::Release);
        Ok(())
    }

    /// Turns native frames off again (a later session without them); the unwinder stays for the next one.
    pub fn disable_native(&self) {
        self.native_on.store(false, Ordering::Release);
    }

    /// The native unwinder, if native frames were turned on.
    pub fn native(&self) -> Option<&NativeUnwinder> {
        self.native.get()
    }

    /// How many frames the handler walks from now on (0, registers only, to [`MAX_FRAMES`]).
    pub fn set_walk_frames(&self, frames: usize) {
        self.walk_frames.store(frames.min(MAX_FRAMES), Ordering::Relaxed);
    }

    fn slot_index(&self, ptr: *const ThreadSlot) -> Option<usize> {
        let base = self.slots.as_ptr() as usize;
        let p = ptr as usize;
        let size = std::mem::size_of::<ThreadSlot>();
        if p < base || p >= base + self.slots.len() * size || !(p - base).is_multiple_of(size) {
            return None;
        }
        Some((p - base) / size)
    }

    /// Arms a CPU clock for thread `tid` of this process (the calling thread or any other: perf clocks and
    /// POSIX CPU timers can watch and signal another thread). `env` is the thread's JNIEnv (when called on the thread itself), or
    /// `None` to have the handler ask the JVM for it. Returns the slot index (to disarm it later), the kind of clock, and
    /// why perf events were refused if this was the first refusal.
    pub fn start_thread(
        &self,
        tid: i32,
        env: Option<Jni>,
        thread_serial: u32,
        interval_ms: u32,
        enabled: bool,
    ) -> Result<(usize, ClockKind, Option<String>), String> {
        let index = self
            .slots
            .iter()
            .position(|s| s.in_use.compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed).is_ok())
            .ok_or("too many live threads for the sampler's thread table")?;
        let slot = &self.slots[index];
        slot.tid.store(tid, Ordering::Relaxed);
        slot.thread_serial.store(thread_serial, Ordering::Relaxed);
        slot.mounted.store(0, Ordering::Relaxed);
        if tid == crate::current_tid() {
            CURRENT_SLOT.set((index, tid));
        }
        slot.env.store(env.map_or(std::ptr::null_mut(), Jni::raw), Ordering::Relaxed);
        slot.perf_fd.store(-1, Ordering::Relaxed);
        slot.perf_ring.store(0, Ordering::Relaxed);
        let bounds =
            if tid == crate::current_tid() { crate::native::current_stack_bounds() } else { StackBounds::default() };
        slot.stack_low.store(bounds.low, Ordering::Relaxed);
        slot.stack_high.store(bounds.high, Ordering::Relaxed);
        let period_ns = interval_ms as u64 * 1_000_000;
        slot.period_ns.store(period_ns, Ordering::Relaxed);
        // Any non-zero seed; the thread id keeps threads' sequences apart.
        slot.jitter.store(0x9E37_79B9_7F4A_7C15 ^ tid as u64, Ordering::Relaxed);
        slot.enabled.store(enabled, Ordering::Release);
        let mut refused = None;
        if self.use_perf.load(Ordering::Relaxed) {
            slot.perf_tail.store(0, Ordering::Relaxed);
            let kernel_stacks = self.kernel_stacks.load(Ordering::Acquire) && self.native_on.load(Ordering::Acquire);
            match perf_clock::open_for_thread(tid, period_ns, libc::SIGPROF, enabled, kernel_stacks) {
                Ok(clock) if (clock.fd as usize) < FD_TABLE => {
                    slot.perf_ring.store(clock.ring, Ordering::Release);
                    slot.perf_fd.store(clock.fd, Ordering::Release);
                    self.fd_slots[clock.fd as usize].store(index as u32 + 1, Ordering::Release);
                    SamplerCost::add(&self.cost.perf_clocks, 1);
                    return Ok((index, ClockKind::PerfTaskClock, None));
                }
                Ok(clock) => clock.close(),
                Err(e) => {
                    if self.use_perf.swap(false, Ordering::Relaxed) {
                        refused = Some(e.to_string());
                    }
                }
            }
        }
        match Self::posix_timer(slot, tid, if enabled { period_ns } else { 0 }) {
            Ok(timer) => {
                slot.timer.store(timer as isize, Ordering::Release);
                SamplerCost::add(&self.cost.posix_timers, 1);
                Ok((index, ClockKind::PosixTimer, refused))
            }
            Err(e) => {
                self.release(index);
                Err(e)
            }
        }
    }

    /// A POSIX CPU timer on thread `tid`'s CPU clock, signalling that thread, armed for `period_ns` (0:
    /// created disarmed).
    fn posix_timer(slot: &ThreadSlot, tid: i32, period_ns: u64) -> Result<libc::timer_t, String> {
        let mut timer: libc::timer_t = std::ptr::null_mut();
        let clock = if tid == crate::current_tid() { libc::CLOCK_THREAD_CPUTIME_ID } else { thread_cpu_clock(tid) };
        // SAFETY: a zeroed sigevent filled for SIGEV_THREAD_ID; the slot it points to is never freed; the
        // timer is deleted again if arming fails.
        unsafe {
            let mut sev: libc::sigevent = std::mem::zeroed();
            sev.sigev_notify = libc::SIGEV_THREAD_ID;
            sev.sigev_signo = libc::SIGPROF;
            sev.sigev_value = libc::sigval { sival_ptr: slot as *const ThreadSlot as *mut c_void };
            sev.sigev_notify_thread_id = tid;
            if libc::timer_create(clock, &mut sev, &mut timer) != 0 {
                return Err(format!("timer_create: {}", std::io::Error::last_os_error()));
            }
            let period = timespec_of(period_ns);
            let spec = libc::itimerspec { it_interval: period, it_value: period };
            if period_ns != 0 && libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()) != 0 {
                let e = std::io::Error::last_os_error();
                libc::timer_delete(timer);
                return Err(format!("timer_settime: {e}"));
            }
        }
        Ok(timer)
    }

    /// Deletes the slot's timer and frees the slot. Safe from any thread.
    pub fn stop(&self, index: usize) {
        let slot = &self.slots[index];
        slot.enabled.store(false, Ordering::Release);
        if let Some(timer) = timer_of(slot.timer.swap(NO_TIMER, Ordering::AcqRel)) {
            // SAFETY: the timer was created by `posix_timer` and the swap took it out of the slot, so it is deleted
            // once; a signal it queued before finds the slot without it and is harmless.
            unsafe { libc::timer_delete(timer) };
        }
        let fd = slot.perf_fd.swap(-1, Ordering::AcqRel);
        if fd >= 0 {
            // Unmap first: a signal still in flight for this descriptor is then not taken for ours.
            self.fd_slots[fd as usize].store(0, Ordering::Release);
            PerfClock { fd, ring: slot.perf_ring.swap(0, Ordering::AcqRel) }.close();
        }
        self.release(index);
    }

    fn release(&self, index: usize) {
        let slot = &self.slots[index];
        slot.enabled.store(false, Ordering::Release);
        slot.env.store(std::ptr::null_mut(), Ordering::Release);
        // A signal already queued for the old thread finds a different tid and is ignored.
        slot.tid.store(0, Ordering::Release);
        slot.agent_work.store(0, Ordering::Release);
        slot.stack_low.store(0, Ordering::Release);
        slot.stack_high.store(0, Ordering::Release);
        slot.mounted.store(0, Ordering::Release);
        slot.in_use.store(false, Ordering::Release);
    }

    /// On a carrier thread: from now on its samples belong to the virtual thread `serial`. Called by the
    /// virtual-thread mount events, which run on the carrier; a thread without a clock of its own is left
    /// alone. Not in a signal handler (it reads a thread-local).
    pub fn set_mounted(&self, serial: u32) {
        self.update_current_slot(|_| serial & !UNMOUNTING);
    }

    /// On a carrier thread: the mounted virtual thread is about to unmount. Its frames stay on the carrier
    /// until it has yielded, so ticks keep its serial, flagged: the consumer tells by the frames whose they
    /// are (see [`Tick::mounted`](crate::Tick)).
    pub fn set_unmounting(&self) {
        self.update_current_slot(|m| if m == 0 { 0 } else { m | UNMOUNTING });
    }

    fn update_current_slot(&self, f: impl FnOnce(u32) -> u32) {
        let (index, tid) = CURRENT_SLOT.get();
        let Some(slot) = self.slots.get(index) else { return };
        // The slot may have been freed and reused since this thread was armed: only its own.
        if slot.in_use.load(Ordering::Acquire) && slot.tid.load(Ordering::Acquire) == tid {
            // Only this thread writes its slot's `mounted` (besides `clear_mounted` when mounts stop).
            slot.mounted.store(f(slot.mounted.load(Ordering::Relaxed)), Ordering::Release);
        }
    }

    /// Forgets every mount (mounts are no longer followed): samples go to the carriers again.
    pub fn clear_mounted(&self) {
        for slot in self.slots.iter() {
            slot.mounted.store(0, Ordering::Release);
        }
    }

    /// The calling thread's slot, if it has a clock.
    pub(crate) fn current_thread_slot(&self) -> Option<&ThreadSlot> {
        let tid = crate::current_tid();
        self.slots.iter().find(|s| s.in_use.load(Ordering::Acquire) && s.tid.load(Ordering::Acquire) == tid)
    }

    /// Switches one thread's sampling. Off stops its clock (no signals at all, not merely no samples); on
    /// starts it again. The handler checks `enabled` again after re-arming, so that a switch racing with a
    /// sample cannot leave the clock running (see `take_sample`).
    pub fn set_enabled(&self, index: usize, on: bool) {
        let slot = &self.slots[index];
        slot.enabled.store(on, Ordering::SeqCst);
        let period = if on { slot.period_ns.load(Ordering::Relaxed) } else { 0 };
        let fd = slot.perf_fd.load(Ordering::Acquire);
        if fd >= 0 {
            if on {
                perf_clock::start(slot.perf_clock(fd), period);
            } else {
                perf_clock::stop(fd)
            }
        }
        if let Some(timer) = timer_of(slot.timer.load(Ordering::Acquire)) {
            let spec = libc::itimerspec { it_interval: timespec_of(period), it_value: timespec_of(period) };
            // SAFETY: the timer is the slot's own (created by `posix_timer`, deleted only by `stop` after the swap
            // that removes it from the slot); `spec` lives across the call; a stale id at worst makes the call fail.
            unsafe { libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()) };
        }
    }
}

/// The CPU clock of another thread of this process: the kernel's encoding of a per-thread scheduler clock
/// (`MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)`), which glibc's `pthread_getcpuclockid` also returns.
fn thread_cpu_clock(tid: i32) -> libc::clockid_t {
    ((!tid) << 3) | 6
}

/// Reads `si_value.sival_ptr` of a timer signal. x86_64/aarch64 Linux layout: three ints and padding,
/// then for timers `si_tid`, `si_overrun` and the value (offset 24).
unsafe fn timer_value(info: *const libc::siginfo_t) -> *const c_void {
    // SAFETY: the caller passes the kernel's siginfo of a timer signal (SI_TIMER), whose union holds
    // `si_tid`, `si_overrun` and then the sigval at offset 24 on x86_64 and aarch64 Linux; the read stays
    // inside the 128-byte siginfo_t.
    unsafe { *((info as *const u8).add(24) as *const *const c_void) }
}

extern "C" fn on_sigprof(sig: libc::c_int, info: *mut libc::siginfo_t, ucontext: *mut c_void) {
    // SAFETY: runs as the SIGPROF handler with the kernel's `info` and `ucontext`. Everything below is
    // async-signal-safe: errno is read through its thread-local location and restored, SHARED is a leaked
    // `Shared` or null, `take_sample` keeps to atomics and system calls (see the module comment), `monotonic_ns`
    // is clock_gettime, and `chain` only calls the previous handler with the same arguments.
    unsafe {
        let errno = *libc::__errno_location();
        let shared = SHARED.load(Ordering::Acquire).as_ref();
        let measuring = shared.is_some_and(|s| s.measuring);
        let start = if measuring { monotonic_ns() } else { 0 };
        if take_sample(info, ucontext) {
            if let (Some(shared), true) = (shared, measuring) {
                SamplerCost::add(&shared.cost.handler_ns, monotonic_ns().saturating_sub(start));
                SamplerCost::add(&shared.cost.handler_calls, 1);
            }
        } else {
            chain(sig, info, ucontext);
        }
        *libc::__errno_location() = errno;
    }
}

/// Returns false if the signal is not ours. Async-signal-safe: atomics, syscalls, the walker.
unsafe fn take_sample(info: *mut libc::siginfo_t, ucontext: *mut c_void) -> bool {
    // SAFETY: SHARED is null or a leaked `Shared` that is never freed.
    let Some(shared) = (unsafe { SHARED.load(Ordering::Acquire).as_ref() }) else { return false };
    if info.is_null() {
        return false;
    }
    // SAFETY: `info` is the kernel's siginfo for this signal, checked for null above.
    let code = unsafe { (*info).si_code };
    if code == libc::SI_TIMER {
        // SAFETY: `si_code` is SI_TIMER, so the value is the one `posix_timer` put there (a slot pointer, checked
        // by `slot_index` before use).
        let ptr = unsafe { timer_value(info) } as *const ThreadSlot;
        let Some(index) = shared.slot_index(ptr) else { return false };
        // SAFETY: `index` is a valid slot index and `ucontext` the kernel's for this signal.
        unsafe { sample_into_ring(shared, index, ucontext) };
        // Re-arm the slot's timer with a fresh jittered period (a stale signal for a reused slot only
        // jitters the new owner's next sample).
        let slot = &shared.slots[index];
        if let Some(timer) = timer_of(slot.timer.load(Ordering::Acquire)) {
            let on = slot.enabled.load(Ordering::SeqCst);
            let (value, interval) =
                if on { (next_period(slot), slot.period_ns.load(Ordering::Relaxed)) } else { (0, 0) };
            let spec = libc::itimerspec { it_interval: timespec_of(interval), it_value: timespec_of(value) };
            // SAFETY: the slot's own timer and a stack `spec`; timer_settime is async-signal-safe (a system call).
            unsafe { libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()) };
            // Switched off meanwhile, after set_enabled's own timer_settime: stop it again.
            if on && !slot.enabled.load(Ordering::SeqCst) {
                let zero = libc::itimerspec { it_interval: timespec_of(0), it_value: timespec_of(0) };
                // SAFETY: as above.
                unsafe { libc::timer_settime(timer, 0, &zero, std::ptr::null_mut()) };
            }
        }
        return true;
    }
    if code == perf_clock::POLL_IN || code == perf_clock::POLL_HUP {
        // SAFETY: `si_code` is POLL_IN/POLL_HUP, an I/O signal whose siginfo carries `si_fd`.
        let fd = unsafe { perf_clock::signal_fd(info) };
        if fd < 0 || fd as usize >= FD_TABLE {
            return false;
        }
        let mapped = shared.fd_slots[fd as usize].load(Ordering::Acquire);
        if mapped == 0 {
            return false;
        }
        // SAFETY: `mapped - 1` is a slot index the table was filled with, `ucontext` the kernel's.
        unsafe { sample_into_ring(shared, mapped as usize - 1, ucontext) };
        let slot = &shared.slots[mapped as usize - 1];
        let clock = slot.perf_clock(fd);
        if clock.continuous() {
            // Continuous: the clock runs on. A new random period every few samples keeps the samples from
            // locking onto the program's rhythm at a fraction of the cost of one per sample (a period
            // change restarts the kernel's timer). A clock switched off stays off.
            let samples = slot.since_jitter.load(Ordering::Relaxed) + 1;
            if samples >= JITTER_EVERY {
                perf_clock::set_period(fd, next_period(slot));
            }
            slot.since_jitter.store(samples % JITTER_EVERY, Ordering::Relaxed);
        } else if code == perf_clock::POLL_HUP
            && shared.running.load(Ordering::Acquire)
            && slot.enabled.load(Ordering::SeqCst)
        {
            // Refresh: the clock stopped itself at this overflow; arm it for the next period, unless
            // sampling is off (for the thread: set_enabled starts it again when it is switched on).
            perf_clock::start(clock, next_period(slot));
            if !slot.enabled.load(Ordering::SeqCst) {
                perf_clock::stop(fd);
            }
        }
        return true;
    }
    false
}

/// The next sampling period: uniform in [½, 1½) of the interval, so that its mean is the interval but
/// samples cannot lock onto a program's own rhythm. (A fixed period aliases with code that alternates at a
/// commensurate pace: a 3:1 loop with a cycle near the interval came out anywhere from 69% to 81%.)
/// xorshift64 on the slot's own state: async-signal-safe, and only the slot's thread advances it.
fn next_period(slot: &ThreadSlot) -> u64 {
    let base = slot.period_ns.load(Ordering::Relaxed).max(2);
    let mut x = slot.jitter.load(Ordering::Relaxed);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    slot.jitter.store(x, Ordering::Relaxed);
    base / 2 + x % base
}

fn timespec_of(ns: u64) -> libc::timespec {
    libc::timespec { tv_sec: (ns / 1_000_000_000) as libc::time_t, tv_nsec: (ns % 1_000_000_000) as libc::c_long }
}

unsafe fn sample_into_ring(shared: &Shared, index: usize, ucontext: *mut c_void) {
    let slot = &shared.slots[index];
    if !shared.running.load(Ordering::Acquire) || !slot.enabled.load(Ordering::Acquire) {
        return;
    }
    // gettid is a system call, async-signal-safe.
    if slot.tid.load(Ordering::Acquire) != crate::current_tid() {
        return;
    }
    if shared.dry {
        return;
    }
    let depth = shared.walk_frames.load(Ordering::Relaxed).min(MAX_FRAMES) as i32;
    let native = if shared.native_on.load(Ordering::Acquire) { shared.native.get() } else { None };
    let mut env = slot.env.load(Ordering::Acquire);
    if env.is_null() && depth > 0 {
        // GetEnv reads the JVM's thread-local current thread and takes no lock — the same call async-profiler
        // makes from its handler. A thread of the JVM's own (GC, compiler) has none: only native frames.
        match shared.vm.and_then(Vm::jni) {
            Some(jni) => env = jni.raw(),
            None if native.is_some() => {}
            None => return,
        }
    }
    let Some(mut claim) = shared.ring.claim() else { return };
    let data = claim.data();
    data.thread_serial = slot.thread_serial.load(Ordering::Relaxed);
    // A mounted virtual thread's time is its own, not its carrier's (the consumer decides, see `Tick`).
    data.mounted = slot.mounted.load(Ordering::Acquire);
    data.tid = slot.tid.load(Ordering::Relaxed);
    // SAFETY: `ucontext` is the kernel's, passed through from the handler.
    data.registers = unsafe { Registers::from_ucontext(ucontext) };
    data.num_frames = NOT_WALKED;
    data.num_native = 0;
    data.num_between = 0;
    let bounds =
        StackBounds { low: slot.stack_low.load(Ordering::Relaxed), high: slot.stack_high.load(Ordering::Relaxed) };
    // Each part of the handler timed on its own with HPROF_CPU_STATS=1 (two clock reads each).
    let now = || if shared.measuring { monotonic_ns() } else { 0 };
    let timed = |counter: &AtomicU64, start: u64| {
        if shared.measuring {
            SamplerCost::add(counter, monotonic_ns().saturating_sub(start));
        }
    };
    if let (Some(native), true) = (native, depth > 0) {
        let start = now();
        data.num_native = native.unwind(data.registers, bounds, &mut data.native) as u32;
        timed(&shared.cost.native_ns, start);
    }
    data.num_kernel = 0;
    let fd = slot.perf_fd.load(Ordering::Acquire);
    if native.is_some() && depth > 0 && fd >= 0 && shared.kernel_stacks.load(Ordering::Relaxed) {
        let start = now();
        data.num_kernel = perf_clock::kernel_callchain(slot.perf_clock(fd), &slot.perf_tail, &mut data.kernel) as u32;
        timed(&shared.cost.kernel_ns, start);
    }
    if depth > 0 && env.is_null() {
        data.num_frames = NOT_A_JAVA_THREAD;
    } else if depth > 0 {
        let start = if shared.measuring { monotonic_ns() } else { 0 };
        // SAFETY: we are in the signal handler on the interrupted thread, with that thread's JNIEnv and the
        // kernel's context.
        data.num_frames = unsafe { shared.asgct.walk(env, &mut data.frames[..depth as usize], ucontext) };
        if shared.measuring {
            SamplerCost::add(&shared.cost.walk_ns, monotonic_ns().saturating_sub(start));
        }
        // Native methods below the top Java frame called native code that called Java back: its frames lie
        // between theirs (only looked for when there are such methods, since it scans the stack).
        if let Some(native) = native
            && data.num_frames > 1
        {
            let below_top = &data.frames[1..data.num_frames as usize];
            let natives = below_top.iter().filter(|f| f.lineno == NATIVE_METHOD_LINE).count();
            if natives > 0 {
                let start = now();
                data.num_between = native.unwind_between(data.registers.sp, bounds, natives, &mut data.between) as u32;
                timed(&shared.cost.between_ns, start);
            }
        }
    }
    if data.num_frames <= 0 && data.num_frames != NOT_WALKED {
        let work = slot.agent_work.load(Ordering::Relaxed);
        if work != 0 {
            data.num_frames = work;
        }
    }
    claim.commit();
}

/// AsyncGetCallTrace's line number for a native method's frame.
const NATIVE_METHOD_LINE: i32 = -3;

/// `num_frames` of a tick on a thread of the JVM's own (no JNIEnv), which has native frames only.
pub const NOT_A_JAVA_THREAD: i32 = -101;

/// `num_frames` of a tick taken while no consumer wanted frames.
pub const NOT_WALKED: i32 = i32::MIN;

/// Passes a SIGPROF that is not ours to whoever had the signal before us. The default action of SIGPROF
/// would kill the process, so with no previous handler the signal is ignored.
unsafe fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ucontext: *mut c_void) {
    // SAFETY: PREVIOUS is null or the leaked sigaction `install` filled, never freed.
    let Some(prev) = (unsafe { PREVIOUS.load(Ordering::Acquire).as_ref() }) else { return };
    let handler = prev.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        return;
    }
    // SAFETY: `handler` is not SIG_DFL/SIG_IGN, so it is the previous handler's function address; SA_SIGINFO
    // says which of the two signatures it has. It is called in the same signal context it would have had.
    unsafe {
        if prev.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut c_void) = std::mem::transmute(handler);
            f(sig, info, ucontext);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
            f(sig);
        }
    }
}
