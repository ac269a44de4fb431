//! A per-thread CPU clock from the kernel's perf events (the task-clock software event), raising SIGPROF
//! on the thread every `period` of its CPU time.
//!
//! Preferred over POSIX CPU timers because those are only checked on the scheduler tick (4 ms at
//! HZ=250): their samples land on ticks, which skews shares as soon as threads compete for a CPU. The
//! task-clock event is driven by a high-resolution timer that runs only while the thread runs. Some
//! sandboxes forbid perf_event_open; the caller then falls back to POSIX timers.
//!
//! Two ways to get a signal per period. The kernel signals an overflow only when it writes a record to the
//! event's ring buffer or when a refresh count runs out. *Continuous* (preferred): a two-page ring buffer
//! mapped read-only, which the kernel overwrites and nobody reads, and the clock runs on by itself — no
//! system call per sample. *Refresh*, where the mapping is refused (locked-memory limits): each overflow
//! stops the clock and the handler re-arms it (two system calls, each restarting a high-resolution
//! timer — on a virtual machine a trap to the hypervisor).

use std::io;

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;
/// `perf_event_attr` size as of Linux 4.1 (PERF_ATTR_SIZE_VER5); newer kernels accept it.
const ATTR_SIZE: u32 = 112;
const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_EXCLUDE_KERNEL: u64 = 1 << 5;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
/// Kernel frames only in call chains: the user part is the native unwinder's.
const FLAG_EXCLUDE_CALLCHAIN_USER: u64 = 1 << 22;
const PERF_SAMPLE_CALLCHAIN: u64 = 1 << 5;
const PERF_RECORD_SAMPLE: u32 = 9;
/// Call chain entries at and above this are context markers (PERF_CONTEXT_KERNEL, _USER, …), not addresses.
const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;
/// Where `data_head`, `data_offset` and `data_size` are in the ring's control page (perf_event_mmap_page).
const DATA_HEAD_AT: usize = 1024;
const DATA_OFFSET_AT: usize = 1040;
const DATA_SIZE_AT: usize = 1048;

const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;
const IOC_REFRESH: libc::c_ulong = 0x2402;
const IOC_RESET: libc::c_ulong = 0x2403;
/// `_IOW('$', 4, u64)`: a new sample period.
const IOC_PERIOD: libc::c_ulong = 0x4008_2404;

const F_SETSIG: libc::c_int = 10;
const F_SETOWN_EX: libc::c_int = 15;
const F_OWNER_TID: libc::c_int = 0;

/// `si_code` of a perf overflow signal: POLL_IN while the refresh count lasts, POLL_HUP when it is used up.
pub const POLL_IN: libc::c_int = 1;
pub const POLL_HUP: libc::c_int = 6;

#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved: u16,
}

#[repr(C)]
struct FOwnerEx {
    type_: libc::c_int,
    pid: libc::pid_t,
}

/// The ring buffer's size in the continuous mode: the control page and one data page.
const RING_BYTES: usize = 2 * 4096;

/// A thread's clock: its descriptor and, in the continuous mode, the ring buffer's mapping.
#[derive(Debug, Clone, Copy)]
pub struct PerfClock {
    pub fd: i32,
    /// The mapping's address, or 0 in the refresh mode.
    pub ring: usize,
}

impl PerfClock {
    pub fn continuous(&self) -> bool {
        self.ring != 0
    }

    /// Stops the clock for good and releases it.
    pub fn close(self) {
        // SAFETY: `ring` is 0 or the RING_BYTES mapping `open_for_thread` made for this descriptor (the fields
        // are only filled there and from the slot that stored them, inside this module), and `close` consumes the
        // clock, so neither is released twice through it.
        unsafe {
            if self.ring != 0 {
                libc::munmap(self.ring as *mut libc::c_void, RING_BYTES);
            }
            libc::close(self.fd);
        }
    }
}

/// `HPROF_PERF_REFRESH=1` forces the refresh mode, to test it where the mapping would be granted.
fn refresh_forced() -> bool {
    static FORCED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FORCED.get_or_init(|| std::env::var_os("HPROF_PERF_REFRESH").is_some())
}

/// Opens a task-clock event on thread `tid` of this process (the caller or another) that sends `signal` to
/// that thread every `period_ns` of its CPU time, running if `armed` (else see [`start`]). Closing it stops
/// the clock.
/// With `kernel_stacks`, each overflow's record carries the kernel's call chain (kernel frames only), which
/// [`kernel_callchain`] reads in the handler.
pub fn open_for_thread(
    tid: i32,
    period_ns: u64,
    signal: libc::c_int,
    armed: bool,
    kernel_stacks: bool,
) -> io::Result<PerfClock> {
    // Kernel time counts as the thread's CPU time too; where the kernel part may not be watched
    // (perf_event_paranoid), fall back to user time only.
    let fd = open(tid, period_ns, 0, kernel_stacks)
        .or_else(|_| open(tid, period_ns, FLAG_EXCLUDE_KERNEL | FLAG_EXCLUDE_HV, false))?;
    let ring = if refresh_forced() {
        0
    } else {
        // SAFETY: a fresh read-only shared mapping of the perf descriptor we just opened; the kernel picks the
        // address.
        let m = unsafe { libc::mmap(std::ptr::null_mut(), RING_BYTES, libc::PROT_READ, libc::MAP_SHARED, fd, 0) };
        if m == libc::MAP_FAILED { 0 } else { m as usize }
    };
    let clock = PerfClock { fd, ring };
    // SAFETY: fcntl/ioctl on the descriptor just opened, with arguments of the types they expect.
    let set_up = unsafe {
        let owner = FOwnerEx { type_: F_OWNER_TID, pid: tid };
        libc::fcntl(fd, libc::F_SETFL, libc::O_ASYNC) == 0
            && libc::fcntl(fd, F_SETSIG, signal) == 0
            && libc::fcntl(fd, F_SETOWN_EX, &owner) == 0
            && libc::ioctl(fd, IOC_RESET, 0) == 0
    };
    if !set_up || (armed && !start(clock, period_ns)) {
        let e = io::Error::last_os_error();
        clock.close();
        return Err(e);
    }
    Ok(clock)
}

/// `tid`: the thread to watch (perf's `pid` argument takes a thread id).
fn open(tid: i32, period_ns: u64, extra_flags: u64, kernel_stacks: bool) -> io::Result<i32> {
    let (sample_type, chain_flags) =
        if kernel_stacks { (PERF_SAMPLE_CALLCHAIN, FLAG_EXCLUDE_CALLCHAIN_USER) } else { (0, 0) };
    let attr = PerfEventAttr {
        type_: PERF_TYPE_SOFTWARE,
        size: ATTR_SIZE,
        config: PERF_COUNT_SW_TASK_CLOCK,
        sample_period: period_ns,
        sample_type,
        flags: FLAG_DISABLED | extra_flags | chain_flags,
        wakeup_events: 1,
        ..Default::default()
    };
    // SAFETY: `attr` is a fully initialised perf_event_attr (ATTR_SIZE says which version) that outlives the
    // call; the other arguments are plain integers.
    let fd = unsafe {
        libc::syscall(libc::SYS_perf_event_open, &attr as *const PerfEventAttr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC)
    };
    if fd < 0 { Err(io::Error::last_os_error()) } else { Ok(fd as i32) }
}

/// Starts the clock with a first period of `period_ns`: for good in the continuous mode, for one period in
/// the refresh mode. Async-signal-safe (two system calls).
pub fn start(clock: PerfClock, period_ns: u64) -> bool {
    // IOC_ENABLE's argument is a flag (0: this event alone); IOC_REFRESH's the number of overflows.
    let (command, argument) = if clock.continuous() { (IOC_ENABLE, 0) } else { (IOC_REFRESH, 1) };
    // SAFETY: ioctls on a perf descriptor with the argument types the kernel expects (a pointer to a u64
    // that lives across the call, an integer); system calls, so async-signal-safe.
    unsafe {
        libc::ioctl(clock.fd, IOC_PERIOD, &period_ns as *const u64) == 0
            && libc::ioctl(clock.fd, command, argument) == 0
    }
}

/// Changes the period of a running clock (counted afresh from now); a stopped clock stays stopped.
/// Async-signal-safe (one system call).
pub fn set_period(fd: i32, period_ns: u64) {
    // SAFETY: as in `start`: a pointer to a live u64, async-signal-safe.
    unsafe {
        libc::ioctl(fd, IOC_PERIOD, &period_ns as *const u64);
    }
}

/// Stops the clock until the next [`start`]: no more signals. Async-signal-safe.
pub fn stop(fd: i32) {
    // SAFETY: an ioctl with an integer argument; at worst it fails on a closed descriptor.
    unsafe {
        libc::ioctl(fd, IOC_DISABLE, 0);
    }
}

/// Whether this process may take kernel call chains (`perf_event_paranoid` ≤ 1, or CAP_PERFMON): opens and
/// closes a task-clock event on the calling thread as [`open_for_thread`] would with kernel stacks. Not in a
/// signal handler.
pub fn kernel_stacks_allowed() -> io::Result<()> {
    let fd = open(0, 10_000_000, 0, true)?;
    // SAFETY: the descriptor was just opened and is closed once.
    unsafe { libc::close(fd) };
    Ok(())
}

/// The kernel frames of the clock's latest overflow record into `out` (innermost first), reading the ring
/// from `tail` (where the last call stopped, advanced here) to the kernel's head. Async-signal-safe: reads of
/// the shared mapping and atomics. Returns 0 in the refresh mode (no ring) or when the ring was overrun.
pub fn kernel_callchain(clock: PerfClock, tail: &std::sync::atomic::AtomicU64, out: &mut [u64]) -> usize {
    use std::sync::atomic::{Ordering, fence};
    if clock.ring == 0 || out.is_empty() {
        return 0;
    }
    let control = clock.ring;
    // SAFETY: the control page of the RING_BYTES mapping, read-only, mapped as long as the clock is open.
    let (head, offset, size) = unsafe {
        (
            std::ptr::read_volatile((control + DATA_HEAD_AT) as *const u64),
            std::ptr::read_volatile((control + DATA_OFFSET_AT) as *const u64),
            std::ptr::read_volatile((control + DATA_SIZE_AT) as *const u64),
        )
    };
    fence(Ordering::Acquire);
    let (offset, size) = if offset == 0 || size == 0 { (4096u64, 4096u64) } else { (offset, size) };
    if offset + size > RING_BYTES as u64 || !size.is_power_of_two() {
        return 0;
    }
    let from = tail.swap(head, Ordering::Relaxed);
    if head < from || head - from > size {
        return 0;
    }
    let word = |at: u64| -> u64 {
        let mut bytes = [0u8; 8];
        for (i, b) in bytes.iter_mut().enumerate() {
            let byte = control + (offset + (at + i as u64) % size) as usize;
            // SAFETY: `% size` keeps the byte inside the data area, which lies inside the mapping (checked above).
            *b = unsafe { std::ptr::read_volatile(byte as *const u8) };
        }
        u64::from_le_bytes(bytes)
    };
    let mut pos = from;
    let mut last_sample = None;
    while pos + 8 <= head {
        let header = word(pos);
        let (kind, len) = (header as u32, header >> 48);
        if len < 8 || pos + len > head {
            break;
        }
        if kind == PERF_RECORD_SAMPLE {
            last_sample = Some((pos, len));
        }
        pos += len;
    }
    let Some((at, len)) = last_sample else { return 0 };
    let entries = word(at + 8).min((len.saturating_sub(16)) / 8);
    let mut n = 0;
    for i in 0..entries {
        let ip = word(at + 16 + 8 * i);
        if ip >= PERF_CONTEXT_MAX {
            continue;
        }
        if n == out.len() {
            break;
        }
        out[n] = ip;
        n += 1;
    }
    n
}

/// Reads `si_fd` of an I/O signal (x86_64/aarch64 layout: `si_band` at 16, `si_fd` at 24).
///
/// # Safety
/// `info` must point to a valid siginfo_t.
pub unsafe fn signal_fd(info: *const libc::siginfo_t) -> i32 {
    // SAFETY: the caller guarantees a valid siginfo_t of an I/O signal; `si_fd` lies at offset 24 on
    // x86_64 and aarch64, inside the 128-byte structure.
    unsafe { *((info as *const u8).add(24) as *const i32) }
}
