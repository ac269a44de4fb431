//! Marks where a thread runs the agent's own work inside a JVM callback — allocation tracking, mostly — so
//! that CPU samples landing there say so. AsyncGetCallTrace cannot see Java frames from inside a JVMTI event
//! and would report "[not walkable, not Java]"; with the mark the sample reads "[hprof: tracking
//! allocations]", which tells the user what the profiler itself costs.
//!
//! The mark is an atomic in the thread's sampler slot, which the signal handler already reads; finding the
//! slot is cached per thread (outside the handler, so thread-locals are fine here).

use crate::signal;
use std::cell::Cell;
use std::sync::atomic::{AtomicI32, Ordering};

/// The code a sample carries (in place of AsyncGetCallTrace's failure code) while allocations are tracked.
pub const TRACKING_ALLOCATIONS: i32 = -100;

/// Allocations a thread without a sampler slot makes before it looks for one again.
const RETRY_AFTER: u32 = 4096;

thread_local! {
    /// The thread's mark (null: none found yet) and how many calls until the next lookup.
    static MARK: Cell<(*const AtomicI32, u32)> = const { Cell::new((std::ptr::null(), 0)) };
}

/// Holds the mark for as long as it lives.
pub struct AgentWork(Option<&'static AtomicI32>);

impl AgentWork {
    pub fn begin(code: i32) -> AgentWork {
        let Some(shared) = signal::installed() else { return AgentWork(None) };
        let mark = MARK
            .try_with(|m| {
                let (found, wait) = m.get();
                if !found.is_null() {
                    return Some(found);
                }
                if wait > 0 {
                    m.set((found, wait - 1));
                    return None;
                }
                let slot = shared.current_thread_slot().map(|s| &s.agent_work as *const AtomicI32);
                m.set((slot.unwrap_or(std::ptr::null()), if slot.is_some() { 0 } else { RETRY_AFTER }));
                slot
            })
            .ok()
            .flatten()
            // SAFETY: slots live in an arena that is never freed.
            .map(|p| unsafe { &*p });
        if let Some(m) = mark {
            m.store(code, Ordering::Relaxed);
        }
        AgentWork(mark)
    }
}

impl Drop for AgentWork {
    fn drop(&mut self) {
        if let Some(m) = self.0 {
            m.store(0, Ordering::Relaxed);
        }
    }
}
