//! Whose a tick is when virtual threads run (JDK 21+, sampler=async): the signal handler records which
//! virtual thread was mounted on the interrupted carrier (see `sampling::mounts`); here the tick's frames
//! settle it. AsyncGetCallTrace walks a carrier's whole stack: the mounted virtual thread's frames, then
//! `Continuation.enterSpecial`, then the carrier's own (`Continuation.run`, `VirtualThread.runContinuation`,
//! ForkJoinPool…). A virtual thread's sample keeps only its own frames; a carrier's sample never holds a
//! virtual thread's.

use crate::context::Context;
use rustc_hash::FxHashMap;
use sampler::Mounted;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// The pseudo-frame standing for a virtual thread's frames on a carrier in the instants between its mount
/// and the mount event (whose it is cannot be known then): the carrier's CPU, switching threads.
pub const SWITCHING: &str = "[virtual thread switching]";

#[derive(Default)]
pub struct VirtualTicks {
    /// Whether mounts are followed (sampling::mounts): only then are carriers' stacks cut.
    following: AtomicBool,
    /// Frame index → whether it is `Continuation.enterSpecial`, where a carrier enters a virtual thread.
    entries: Mutex<FxHashMap<u32, bool>>,
}

/// What to do with a tick's Java frames (top first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The carrier's, whole.
    Carrier,
    /// The virtual thread's: its frames above the continuation's entry (all of them if there is none).
    Virtual { serial: u32, keep: usize },
    /// The carrier's, but the frames above the entry are an unknown virtual thread's: they become
    /// [`SWITCHING`].
    CarrierSwitching { entry: usize },
}

impl VirtualTicks {
    pub fn set_following(&self, on: bool) {
        self.following.store(on, Ordering::Release);
    }

    /// Whose a tick is, given what was mounted and the position of the continuation's entry among its Java
    /// frames (`None`: no entry, or no frames walked).
    pub fn owner(&self, mounted: Option<Mounted>, entry: Option<usize>, walked: usize) -> Owner {
        if !self.following.load(Ordering::Acquire) {
            return Owner::Carrier;
        }
        match (mounted, entry) {
            (Some(m), Some(at)) => Owner::Virtual { serial: m.serial, keep: at },
            // Unmounting and no entry: the continuation has yielded, the carrier runs its own code.
            (Some(m), None) if !m.unmounting || walked == 0 => Owner::Virtual { serial: m.serial, keep: walked },
            (None, Some(at)) => Owner::CarrierSwitching { entry: at },
            _ => Owner::Carrier,
        }
    }

    /// Whether frame `index` is `Continuation.enterSpecial` (looked up once per frame).
    pub fn is_entry(&self, ctx: &Context, index: u32) -> bool {
        if !self.following.load(Ordering::Relaxed) {
            return false;
        }
        *self.entries.lock().unwrap_or_else(|e| e.into_inner()).entry(index).or_insert_with(|| {
            ctx.traces().frame(index).is_some_and(|f| {
                f.frame.class_name == "jdk.internal.vm.Continuation" && f.frame.method_name == "enterSpecial"
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn following() -> VirtualTicks {
        let v = VirtualTicks::default();
        v.set_following(true);
        v
    }

    #[test]
    fn a_mounted_virtual_thread_keeps_its_frames_above_the_entry() {
        let m = Some(Mounted { serial: 7, unmounting: false });
        assert_eq!(following().owner(m, Some(3), 9), Owner::Virtual { serial: 7, keep: 3 });
        assert_eq!(following().owner(m, None, 0), Owner::Virtual { serial: 7, keep: 0 });
    }

    #[test]
    fn an_unmounting_virtual_thread_owns_the_tick_only_while_its_frames_are_on_the_carrier() {
        let m = Some(Mounted { serial: 7, unmounting: true });
        assert_eq!(following().owner(m, Some(5), 9), Owner::Virtual { serial: 7, keep: 5 });
        assert_eq!(following().owner(m, None, 6), Owner::Carrier);
    }

    #[test]
    fn a_carrier_never_keeps_a_virtual_threads_frames() {
        assert_eq!(following().owner(None, Some(2), 9), Owner::CarrierSwitching { entry: 2 });
        assert_eq!(following().owner(None, None, 9), Owner::Carrier);
    }

    #[test]
    fn without_mount_events_ticks_stay_the_carriers() {
        let m = Some(Mounted { serial: 7, unmounting: false });
        assert_eq!(VirtualTicks::default().owner(m, Some(2), 9), Owner::Carrier);
    }
}
