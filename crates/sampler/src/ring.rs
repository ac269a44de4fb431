//! A preallocated, lock-free ring of stack samples, filled by the SIGPROF handler on any thread and
//! drained by the resolver thread.
//!
//! The handler may not lock or allocate, so each slot carries a sequence number (Dmitry Vyukov's bounded
//! queue): a producer claims a slot with one compare-and-swap and lets the stack walker write straight
//! into it; the consumer sees the slot once its sequence says it is complete. When the ring is full the
//! sample is dropped and counted, never waited for.

use crate::native::{MAX_KERNEL_FRAMES, MAX_NATIVE_FRAMES};

/// Native frames kept per sample between its Java frames (`cstack`, see `NativeUnwinder::unwind_between`),
/// segment end markers included.
pub const MAX_BETWEEN_FRAMES: usize = 64;
use crate::registers::Registers;
use jvmti::sys::ASGCT_CallFrame;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Frames kept per sample: deep enough for the full stacks of flame graphs.
pub const MAX_FRAMES: usize = 1024;

pub struct Slot {
    seq: AtomicUsize,
    data: UnsafeCell<SlotData>,
}

pub struct SlotData {
    pub thread_serial: u32,
    /// The virtual thread mounted on the interrupted (carrier) thread, with `UNMOUNTING`, or 0.
    pub mounted: u32,
    /// The kernel's id of the interrupted thread.
    pub tid: i32,
    /// The interrupted registers (see `registers`).
    pub registers: Registers,
    /// Frames written, or one of AsyncGetCallTrace's negative failure codes.
    pub num_frames: i32,
    pub frames: [ASGCT_CallFrame; MAX_FRAMES],
    /// Native frames on top of the Java ones (`cstack`): the interrupted pc, then return addresses.
    pub num_native: u32,
    pub native: [u64; MAX_NATIVE_FRAMES],
    /// Native frames between the Java ones (`cstack`): segments, innermost first, each ended by
    /// `SEGMENT_END`; the k-th belongs under the k-th native method below the top Java frame.
    pub num_between: u32,
    pub between: [u64; MAX_BETWEEN_FRAMES],
    /// Kernel frames on top of the native ones (`cstack`, from the perf clock's call chain), innermost first.
    pub num_kernel: u32,
    pub kernel: [u64; MAX_KERNEL_FRAMES],
}

pub struct SampleRing {
    slots: Box<[Slot]>,
    mask: usize,
    enqueue: AtomicUsize,
    dequeue: AtomicUsize,
    dropped: AtomicU64,
}

// Slots are handed out exclusively through the sequence protocol.
// SAFETY: the ring owns its slots (no pointers into other memory), and a slot's data is touched only by
// the one producer that claimed it (until commit) or the one consumer that took its position (until it
// releases it): the sequence protocol hands each out exclusively, with Acquire/Release on `seq`.
unsafe impl Sync for SampleRing {}
// SAFETY: as for Sync.
unsafe impl Send for SampleRing {}

/// A claimed slot; `commit` publishes it.
pub struct Claim<'a> {
    slot: &'a Slot,
    pos: usize,
}

impl Claim<'_> {
    /// The claimed slot's data, to fill before `commit`.
    pub fn data(&mut self) -> &mut SlotData {
        // SAFETY: the sequence protocol handed this slot to this claim alone (no other producer gets its
        // position, and the consumer reads it only after `commit`, which consumes the claim); `&mut self` makes
        // the borrow unique for as long as it lives.
        unsafe { &mut *self.slot.data.get() }
    }

    pub fn commit(self) {
        self.slot.seq.store(self.pos + 1, Ordering::Release);
    }
}

impl SampleRing {
    /// `capacity` is rounded up to a power of two. Allocates everything now.
    pub fn new(capacity: usize) -> SampleRing {
        let capacity = capacity.next_power_of_two();
        let slots = (0..capacity)
            .map(|i| Slot {
                seq: AtomicUsize::new(i),
                data: UnsafeCell::new(SlotData {
                    thread_serial: 0,
                    mounted: 0,
                    tid: 0,
                    registers: Registers::default(),
                    num_frames: 0,
                    frames: [ASGCT_CallFrame { lineno: 0, method_id: std::ptr::null_mut() }; MAX_FRAMES],
                    num_native: 0,
                    native: [0; MAX_NATIVE_FRAMES],
                    num_between: 0,
                    between: [0; MAX_BETWEEN_FRAMES],
                    num_kernel: 0,
                    kernel: [0; MAX_KERNEL_FRAMES],
                }),
            })
            .collect();
        SampleRing {
            slots,
            mask: capacity - 1,
            enqueue: AtomicUsize::new(0),
            dequeue: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
        }
    }

    /// Claims a slot for writing; `None` (and a dropped sample) when the ring is full.
    /// Async-signal-safe: atomics only.
    pub fn claim(&self) -> Option<Claim<'_>> {
        let mut pos = self.enqueue.load(Ordering::Relaxed);
        loop {
            let slot = &self.slots[pos & self.mask];
            let seq = slot.seq.load(Ordering::Acquire);
            let diff = seq as isize - pos as isize;
            if diff == 0 {
                match self.enqueue.compare_exchange_weak(pos, pos + 1, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => return Some(Claim { slot, pos }),
                    Err(now) => pos = now,
                }
            } else if diff < 0 {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return None;
            } else {
                pos = self.enqueue.load(Ordering::Relaxed);
            }
        }
    }

    /// Hands each complete sample to `f`, oldest first. Callers normally take turns (the engine drains under
    /// a lock); should two drain at once, each position still goes to one of them alone.
    pub fn drain(&self, mut f: impl FnMut(&SlotData)) -> usize {
        let mut n = 0;
        loop {
            let pos = self.dequeue.load(Ordering::Relaxed);
            let slot = &self.slots[pos & self.mask];
            if slot.seq.load(Ordering::Acquire) != pos + 1 {
                return n;
            }
            // Take the position before reading: a second drainer then cannot read the slot while the
            // producer that gets it back after our release writes into it.
            if self.dequeue.compare_exchange(pos, pos + 1, Ordering::Relaxed, Ordering::Relaxed).is_err() {
                continue;
            }
            // SAFETY: the slot is complete (its producer committed with Release, seen by our Acquire) and the
            // position is ours alone until the store below hands the slot back to producers.
            f(unsafe { &*slot.data.get() });
            slot.seq.store(pos + self.mask + 1, Ordering::Release);
            n += 1;
        }
    }

    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn full_ring_drops_and_drain_returns_in_order() {
        let ring = SampleRing::new(4);
        for i in 0..6 {
            if let Some(mut c) = ring.claim() {
                c.data().thread_serial = i;
                c.commit();
            }
        }
        assert_eq!(ring.dropped(), 2);
        let mut seen = Vec::new();
        ring.drain(|d| seen.push(d.thread_serial));
        assert_eq!(seen, vec![0, 1, 2, 3]);
        assert!(ring.claim().is_some(), "drained slots are reusable");
    }

    #[test]
    fn concurrent_producers_lose_nothing_when_drained() {
        let ring = Arc::new(SampleRing::new(1 << 12));
        let producers: Vec<_> = (0..4)
            .map(|t| {
                let ring = ring.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        let mut c = ring.claim().expect("room");
                        c.data().thread_serial = t;
                        c.commit();
                    }
                })
            })
            .collect();
        for p in producers {
            p.join().unwrap();
        }
        let mut counts = [0; 4];
        ring.drain(|d| counts[d.thread_serial as usize] += 1);
        assert_eq!(counts, [1000; 4]);
    }

    /// Producers racing a consumer that drains as they go: every sample is either drained or counted as
    /// dropped, none is seen twice, and each producer's samples come out in the order it pushed them.
    #[test]
    fn racing_drain_sees_every_sample_once_or_counts_it_dropped() {
        const PER_PRODUCER: u32 = 20_000;
        let ring = Arc::new(SampleRing::new(64));
        let producers: Vec<_> = (0..3)
            .map(|t| {
                let ring = ring.clone();
                std::thread::spawn(move || {
                    for i in 0..PER_PRODUCER {
                        if let Some(mut c) = ring.claim() {
                            c.data().thread_serial = t;
                            c.data().tid = i as i32;
                            c.commit();
                        }
                    }
                })
            })
            .collect();
        let mut last = [-1i32; 3];
        let mut drained = 0u64;
        let mut drain = |last: &mut [i32; 3]| {
            ring.drain(|d| {
                let t = d.thread_serial as usize;
                assert!(d.tid > last[t], "producer {t}: {} after {}", d.tid, last[t]);
                last[t] = d.tid;
                drained += 1;
            })
        };
        while producers.iter().any(|p| !p.is_finished()) {
            drain(&mut last);
        }
        for p in producers {
            p.join().unwrap();
        }
        drain(&mut last);
        assert_eq!(drained + ring.dropped(), 3 * PER_PRODUCER as u64);
        assert!(drained > 0);
    }
}
