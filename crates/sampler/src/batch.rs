//! Ticks copied out of the ring ([`TickBatch`]), so that the ring's slots are free again before consumers
//! look at them, and the view each consumer gets of one ([`Tick`]).

use crate::{NOT_WALKED, Registers, SlotData, UNMOUNTING};
use jvmti::sys::ASGCT_CallFrame;

/// What a tick says about the interrupted thread's Java stack.
#[derive(Debug, Clone, Copy)]
pub enum Frames<'a> {
    /// No consumer asked for frames when the tick was taken.
    NotWalked,
    /// AsyncGetCallTrace's failure code (or the agent's own, see `agent_work`).
    Failed(i32),
    /// Top frame first.
    Walked(&'a [ASGCT_CallFrame]),
}

/// One tick: a thread interrupted after an interval of its own CPU time.
#[derive(Debug, Clone, Copy)]
pub struct Tick<'a> {
    pub thread_serial: u32,
    /// The virtual thread mounted on the interrupted (carrier) thread `thread_serial` (JDK 21+), if any.
    pub mounted: Option<Mounted>,
    pub tid: i32,
    pub registers: Registers,
    pub frames: Frames<'a>,
    /// Native frames on top of `frames` (`cstack`), the interrupted pc first; empty without.
    pub native: &'a [u64],
    /// Kernel frames on top of `native` (`cstack` with perf clocks), innermost first; empty without.
    pub kernel: &'a [u64],
    /// Native frames between the Java ones (`cstack`): segments ended by `SEGMENT_END`, innermost first,
    /// the k-th under the k-th native method below the top frame; empty without.
    pub between: &'a [u64],
}

/// A virtual thread mounted on a carrier when it was interrupted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mounted {
    pub serial: u32,
    /// It was unmounting: the tick is its own only if its frames are still on the carrier (above the
    /// continuation's entry); else the carrier's.
    pub unmounting: bool,
}

/// A tick as kept in the batch: its frames are ranges of the batch's shared arrays.
#[derive(Clone, Copy)]
struct StoredTick {
    thread_serial: u32,
    mounted: u32,
    tid: i32,
    registers: Registers,
    /// Frames walked, or the failure code.
    num_frames: i32,
    first_frame: usize,
    native: (usize, usize),
    kernel: (usize, usize),
    between: (usize, usize),
}

/// Ticks copied out of the ring, so that the ring's slots are free again before consumers look at them.
#[derive(Default)]
pub struct TickBatch {
    ticks: Vec<StoredTick>,
    frames: Vec<ASGCT_CallFrame>,
    native: Vec<u64>,
}

// SAFETY: the frames' jmethodIDs are opaque handles, valid on any thread of the JVM; the batch is only
// ever used behind the engine's drain lock.
unsafe impl Send for TickBatch {}

impl TickBatch {
    pub fn clear(&mut self) {
        self.ticks.clear();
        self.frames.clear();
        self.native.clear();
    }

    pub fn push(&mut self, s: &SlotData) {
        let start = self.frames.len();
        if s.num_frames > 0 {
            self.frames.extend_from_slice(&s.frames[..s.num_frames as usize]);
        }
        let native_start = self.native.len();
        let native = (s.num_native as usize).min(s.native.len());
        self.native.extend_from_slice(&s.native[..native]);
        let kernel_start = self.native.len();
        let kernel = (s.num_kernel as usize).min(s.kernel.len());
        self.native.extend_from_slice(&s.kernel[..kernel]);
        let between_start = self.native.len();
        let between = (s.num_between as usize).min(s.between.len());
        self.native.extend_from_slice(&s.between[..between]);
        self.ticks.push(StoredTick {
            thread_serial: s.thread_serial,
            mounted: s.mounted,
            tid: s.tid,
            registers: s.registers,
            num_frames: s.num_frames,
            first_frame: start,
            native: (native_start, native),
            kernel: (kernel_start, kernel),
            between: (between_start, between),
        });
    }

    pub fn len(&self) -> usize {
        self.ticks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ticks.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = Tick<'_>> {
        self.ticks.iter().map(|t| Tick {
            thread_serial: t.thread_serial,
            mounted: (t.mounted != 0)
                .then_some(Mounted { serial: t.mounted & !UNMOUNTING, unmounting: t.mounted & UNMOUNTING != 0 }),
            tid: t.tid,
            registers: t.registers,
            frames: match t.num_frames {
                NOT_WALKED => Frames::NotWalked,
                n if n <= 0 => Frames::Failed(n),
                n => Frames::Walked(&self.frames[t.first_frame..t.first_frame + n as usize]),
            },
            native: &self.native[t.native.0..t.native.0 + t.native.1],
            kernel: &self.native[t.kernel.0..t.kernel.0 + t.kernel.1],
            between: &self.native[t.between.0..t.between.0 + t.between.1],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(serial: u32, num_frames: i32) -> SlotData {
        let mut frames = [ASGCT_CallFrame { lineno: 0, method_id: std::ptr::null_mut() }; crate::MAX_FRAMES];
        for (i, f) in frames.iter_mut().enumerate().take(num_frames.max(0) as usize) {
            f.lineno = i as i32;
        }
        SlotData {
            thread_serial: serial,
            mounted: if serial == 4 { 9 | UNMOUNTING } else { 0 },
            tid: 7,
            registers: Registers { pc: 0x1000, sp: 0x2000, fp: 0x3000 },
            num_frames,
            frames,
            num_kernel: 1,
            kernel: {
                let mut k = [0; crate::native::MAX_KERNEL_FRAMES];
                k[0] = 0xffff_0000 + serial as u64;
                k
            },
            num_between: 0,
            between: [0; crate::ring::MAX_BETWEEN_FRAMES],
            num_native: 2,
            native: {
                let mut n = [0; crate::native::MAX_NATIVE_FRAMES];
                n[..2].copy_from_slice(&[0x10, serial as u64]);
                n
            },
        }
    }

    #[test]
    fn batch_keeps_each_ticks_frames_and_codes() {
        let mut batch = TickBatch::default();
        batch.push(&sample(1, 3));
        batch.push(&sample(2, NOT_WALKED));
        batch.push(&sample(3, -2));
        batch.push(&sample(4, 1));
        let ticks: Vec<Tick> = batch.iter().collect();
        assert_eq!(ticks.len(), 4);
        assert!(matches!(ticks[0].frames, Frames::Walked(f) if f.len() == 3 && f[2].lineno == 2));
        assert!(matches!(ticks[1].frames, Frames::NotWalked));
        assert!(matches!(ticks[2].frames, Frames::Failed(-2)));
        assert!(matches!(ticks[3].frames, Frames::Walked(f) if f.len() == 1 && f[0].lineno == 0));
        assert_eq!(ticks[3].registers.pc, 0x1000);
        assert_eq!(ticks[3].thread_serial, 4);
        assert_eq!(ticks[3].mounted, Some(Mounted { serial: 9, unmounting: true }));
        assert_eq!(ticks[2].mounted, None);
        assert_eq!(ticks[2].native, &[0x10, 3], "each tick keeps its own native frames");
        assert_eq!(ticks[2].kernel, &[0xffff_0003], "and kernel frames");
    }
}
