//! Everything heap=sites keeps per allocating thread, behind one thread-local: the frame walker's state,
//! the cache of sites by stack, and the thread's records of objects to watch.

use super::liveness::ThreadRecords;
use super::thread_cache::StackCache;
use hotspot::WalkerThread;
use std::cell::RefCell;
use std::sync::Arc;

#[derive(Default)]
pub struct AllocThread {
    /// `None` until first needed, and when the stack's bounds are unknown.
    pub walker: Option<WalkerThread>,
    walker_tried: bool,
    pub stacks: StackCache,
    pub records: Option<Arc<ThreadRecords>>,
}

impl AllocThread {
    /// The walker's state for this thread, set up on first use.
    pub fn walker(&mut self) -> Option<&mut WalkerThread> {
        if !self.walker_tried {
            self.walker_tried = true;
            self.walker = WalkerThread::for_current_thread();
        }
        self.walker.as_mut()
    }
}

thread_local! {
    static THREAD: RefCell<AllocThread> = RefCell::new(AllocThread::default());
}

/// Runs `f` with this thread's state; `None` when the thread is exiting or already inside `with` (an
/// allocation made while an allocation is being recorded).
pub fn with<R>(f: impl FnOnce(&mut AllocThread) -> R) -> Option<R> {
    THREAD.try_with(|t| t.try_borrow_mut().ok().map(|mut t| f(&mut t))).ok().flatten()
}
