//! What OBJECT_ALLOC keeps per allocating thread, so that an allocation takes no lock and no JVMTI tag:
//! a block of object IDs, the kind of each class it allocated (by the class object's address), and the
//! addresses of its last sampled objects (to drop the VM's second report of the same object).
//!
//! Addresses name objects only between two collections, and only under a collector that moves objects
//! inside its pauses (G1, Parallel, Serial): everything here belongs to one collection epoch (`gc.rs`)
//! and is forgotten when it moves. Under ZGC and Shenandoah [`addresses_stable`] is false and the layer
//! tags every object instead.

use crate::classes::AllocKind;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::sync::OnceLock;

/// IDs a thread takes from the shared counter at once.
const ID_BLOCK: i64 = 1024;
/// Sampled objects a thread remembers for VMObjectAlloc's second report.
const RECENT: usize = 32;

#[derive(Default)]
pub struct AllocThread {
    next_id: i64,
    end_id: i64,
    epoch: u64,
    /// Class object address → (kind, whether CLASS_LOAD was on when it was computed).
    kinds: FxHashMap<u64, (AllocKind, bool)>,
    recent: [(u64, i64); RECENT],
    next_recent: usize,
}

impl AllocThread {
    /// Forgets what belongs to an earlier collection epoch.
    pub fn enter_epoch(&mut self, epoch: u64) {
        if self.epoch != epoch {
            self.epoch = epoch;
            self.kinds.clear();
            self.recent = [(0, 0); RECENT];
        }
    }

    /// A fresh object ID, from this thread's block of the shared tag counter.
    pub fn fresh_id(&mut self) -> i64 {
        if self.next_id == self.end_id {
            self.next_id = crate::ids::fresh_tags(ID_BLOCK);
            self.end_id = self.next_id + ID_BLOCK;
        }
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// The cached kind of the class at `address`, if it was computed with CLASS_LOAD as it is now.
    pub fn kind(&self, address: u64, class_load_on: bool) -> Option<AllocKind> {
        self.kinds.get(&address).filter(|(_, on)| *on == class_load_on).map(|(k, _)| *k)
    }

    pub fn remember_kind(&mut self, address: u64, kind: AllocKind, class_load_on: bool) {
        self.kinds.insert(address, (kind, class_load_on));
    }

    /// Notes an object the heap sampler reported.
    pub fn remember_sampled(&mut self, address: u64, size: i64) {
        self.recent[self.next_recent] = (address, size);
        self.next_recent = (self.next_recent + 1) % RECENT;
    }

    /// Whether the object at `address` was reported by the sampler just before (in this epoch).
    pub fn was_sampled(&self, address: u64, size: i64) -> bool {
        self.recent.iter().any(|&(a, s)| a == address && s == size)
    }
}

thread_local! {
    static THREAD: RefCell<AllocThread> = RefCell::new(AllocThread::default());
}

/// Runs `f` with this thread's state; `None` when the thread is exiting or already inside `with` (an
/// allocation the agent made while handling another's event).
pub fn with<R>(f: impl FnOnce(&mut AllocThread) -> R) -> Option<R> {
    THREAD.try_with(|t| t.try_borrow_mut().ok().map(|mut t| f(&mut t))).ok().flatten()
}

/// Whether the collector moves objects only inside its pauses, so that an address read between two
/// pauses names one object.
pub fn addresses_stable() -> bool {
    static STABLE: OnceLock<bool> = OnceLock::new();
    *STABLE.get_or_init(|| {
        hotspot::VmStructs::get()
            .is_some_and(|vm| ["UseG1GC", "UseParallelGC", "UseSerialGC"].iter().any(|f| vm.bool_flag(f) == Ok(true)))
    })
}
