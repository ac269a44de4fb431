//! Which counted objects are still alive, for SITES' live figures.
//!
//! Each counted object gets a JNI weak global reference, kept with its site and size. The garbage
//! collector clears the reference when the object dies; after each collection a background thread checks
//! the references made since the last one — most objects die young — takes the dead ones off their sites'
//! live figures and deletes their references. Survivors are checked again only every few collections and
//! before every report (after a forced collection, so that "live" is exact then).
//!
//! This replaces tagging every object through JVMTI (SetTag + ObjectFree), which on javac cost more than
//! the program itself: a weak reference is one slot in the JVM's weak handle storage, where a tag is a
//! hash-table entry that needs the object's identity hash, a weak handle of its own and a lock, plus an
//! ObjectFree event per dead object. Memory per tracked object: 16 bytes here and 8 in the JVM.
//!
//! Each thread also keeps its sites' allocated figures since the last check in its records
//! ([`Liveness::track`]), under the lock it takes anyway for the record: threads that allocate at the same
//! sites never write the same counters. The checker (or a report, [`Liveness::flush_counts`]) adds them to
//! the site table, always before it takes off the dead among the records that came with them.
//!
//! Objects the VM allocates itself are reported twice — by SampledObjectAlloc and again by VMObjectAlloc
//! — so each thread remembers its last few sampled objects ([`Liveness::already_tracked`]). The checker
//! never deletes a reference such a list still names: it takes dead ones out of the lists first, under
//! each thread's lock, which the lookup holds too.

use super::site_table::SiteTable;
use super::weight::{Weight, Weighting};
use jvmti::{Jni, sys};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Sampled objects each thread remembers for VMObjectAlloc's double reports.
const RECENT: usize = 8;
/// Survivors are rechecked every this many collections (and before every report).
const SURVIVOR_SCAN_EVERY: u64 = 8;

#[derive(Debug, Clone, Copy)]
struct Record {
    weak: usize,
    site: u32,
    /// The size in 8-byte words.
    words: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct Recent {
    /// 0: empty.
    weak: usize,
    words: u32,
}

#[derive(Default)]
struct Young {
    records: Vec<Record>,
    /// Each site's allocations since the last check, not yet in the site table.
    pending: FxHashMap<u32, Weight>,
    recent: [Recent; RECENT],
    next_recent: usize,
}

/// One thread's records since the last check.
#[derive(Default)]
pub struct ThreadRecords {
    young: Mutex<Young>,
}

impl ThreadRecords {
    fn lock(&self) -> MutexGuard<'_, Young> {
        self.young.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Young {
    fn count(&mut self, site: u32, w: Weight) {
        let p = self.pending.entry(site).or_insert(Weight { count_units: 0, bytes: 0 });
        p.count_units += w.count_units;
        p.bytes += w.bytes;
    }

    /// Adds the pending figures to the site table.
    fn flush(&mut self, sites: &SiteTable) {
        for (site, w) in self.pending.drain() {
            sites.record_alloc(site, w);
        }
    }
}

#[derive(Default)]
struct Checker {
    survivors: Vec<Record>,
    collections_seen: u64,
    last_survivor_scan: u64,
}

#[derive(Default)]
struct CheckerSignals {
    /// Collections finished so far.
    collections: u64,
    stopped: bool,
    /// The checker thread is in its loop.
    running: bool,
}

#[derive(Default)]
pub struct Liveness {
    threads: Mutex<Vec<Arc<ThreadRecords>>>,
    /// Held by whoever checks: the background thread, or a report.
    checker: Mutex<Checker>,
    /// What the checker thread waits for, and the condition it waits on.
    signals: (Mutex<CheckerSignals>, Condvar),
    untracked: AtomicU64,
}

/// What one check found, for the verbose log.
#[derive(Debug, Default, Clone, Copy)]
pub struct CheckStats {
    pub checked: usize,
    pub dead: usize,
}

impl Liveness {
    /// This thread's records, registered on first use (`slot` is kept in the thread's `AllocThread`).
    fn records_of<'t>(&self, slot: &'t mut Option<Arc<ThreadRecords>>) -> &'t ThreadRecords {
        slot.get_or_insert_with(|| {
            let records = Arc::new(ThreadRecords::default());
            self.threads.lock().unwrap_or_else(|e| e.into_inner()).push(records.clone());
            records
        })
    }

    /// Counts an allocation of `object` at `site` (weighing `w`) and starts watching it. `sampled`: it came
    /// from SampledObjectAlloc (and may be reported again by VMObjectAlloc). `t`: the current thread's
    /// records slot, if it can be had; without it the allocation goes straight to the site table.
    #[allow(clippy::too_many_arguments)]
    pub fn track(
        &self,
        t: Option<&mut Option<Arc<ThreadRecords>>>,
        jni: Jni,
        object: sys::jobject,
        sites: &SiteTable,
        site: u32,
        w: Weight,
        words: u32,
        sampled: bool,
    ) {
        let Some(t) = t else {
            sites.record_alloc(site, w);
            // Without a reference the object stays live forever; rare (a nested allocation, thread exit).
            self.untracked.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let weak = jni.new_weak_global_ref(object) as usize;
        let mut young = self.records_of(t).lock();
        young.count(site, w);
        if weak == 0 {
            self.untracked.fetch_add(1, Ordering::Relaxed);
            return;
        }
        young.records.push(Record { weak, site, words });
        if sampled {
            let i = young.next_recent;
            young.recent[i] = Recent { weak, words };
            young.next_recent = (i + 1) % RECENT;
        }
    }

    /// Adds every thread's pending allocated figures to the site table (before a snapshot of it).
    pub fn flush_counts(&self, sites: &SiteTable) {
        let threads = self.threads.lock().unwrap_or_else(|e| e.into_inner()).clone();
        for t in threads {
            t.lock().flush(sites);
        }
    }

    /// Whether `object` (a VMObjectAlloc report) is one this thread's sampler reported just before.
    pub fn already_tracked(
        &self,
        t: Option<&mut Option<Arc<ThreadRecords>>>,
        jni: Jni,
        object: sys::jobject,
        words: u32,
    ) -> bool {
        let Some(t) = t else { return false };
        self.records_of(t)
            .lock()
            .recent
            .iter()
            .any(|r| r.weak != 0 && r.words == words && jni.is_same_object(object, r.weak as sys::jobject))
    }

    /// Called at the end of every garbage collection (on the VM thread: only wakes the checker).
    pub fn on_gc_finish(&self) {
        let (state, wake) = &self.signals;
        state.lock().unwrap_or_else(|e| e.into_inner()).collections += 1;
        wake.notify_all();
    }

    /// The checker thread's body: one check after each collection, until [`Liveness::stop`].
    pub fn run_checker(&self, jni: Jni, sites: &SiteTable, weighting: Weighting) {
        let (state, wake) = &self.signals;
        let mut seen = 0;
        state.lock().unwrap_or_else(|e| e.into_inner()).running = true;
        loop {
            {
                let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
                while s.collections == seen && !s.stopped {
                    s = wake.wait(s).unwrap_or_else(|e| e.into_inner());
                }
                if s.stopped {
                    s.running = false;
                    wake.notify_all();
                    return;
                }
                seen = s.collections;
            }
            self.check(jni, sites, weighting, false);
        }
    }

    /// Ends the checker thread and waits (briefly) until it has: at exit the JVM waits for threads still
    /// in native code, and a checker asleep in a wait would cost every run 300 ms.
    pub fn stop(&self) {
        let (state, wake) = &self.signals;
        let mut s = state.lock().unwrap_or_else(|e| e.into_inner());
        s.stopped = true;
        wake.notify_all();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while s.running {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            s = wake.wait_timeout(s, left).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Takes the dead among the young records (and, when `everything` or every few collections, among the
    /// survivors) off their sites' live figures.
    pub fn check(&self, jni: Jni, sites: &SiteTable, weighting: Weighting, everything: bool) -> CheckStats {
        let mut checker = self.checker.lock().unwrap_or_else(|e| e.into_inner());
        checker.collections_seen += 1;
        let threads: Vec<Arc<ThreadRecords>> = {
            let mut all = self.threads.lock().unwrap_or_else(|e| e.into_inner());
            // A thread that has ended and left nothing behind is forgotten.
            all.retain(|t| Arc::strong_count(t) > 1 || !t.lock().records.is_empty() || !t.lock().pending.is_empty());
            all.clone()
        };
        let mut young = Vec::with_capacity(threads.len());
        let mut recent = FxHashSet::default();
        for t in &threads {
            let mut y = t.lock();
            // The records' allocations reach the site table before any of them is taken off as dead.
            y.flush(sites);
            young.push(std::mem::take(&mut y.records));
            recent.extend(y.recent.iter().filter(|r| r.weak != 0).map(|r| r.weak));
        }
        // A weak reference is a slot of the JVM's weak handle storage (the handle without its tag bits). A
        // collector that clears references only inside its pauses has stored null there when the object
        // died, so the slot can be read directly; a concurrent one may leave colour bits, so JNI decides.
        let read_slots = !crate::collector::is_concurrent();
        let is_dead = |r: &Record| {
            if read_slots {
                // SAFETY: every record holds a live weak global reference (null ones are never recorded; a record's
                // reference is deleted only when the record is dropped below).
                unsafe { hotspot::jni_handles::slot_word(r.weak as *const std::ffi::c_void) == 0 }
            } else {
                jni.is_same_object(r.weak as sys::jobject, std::ptr::null_mut())
            }
        };
        let mut stats = CheckStats::default();
        let dead = std::cell::Cell::new(0);
        // Dead references a thread's recent list names: deleted only once the lists have let go of them.
        let mut named = FxHashSet::default();
        let mut release = |r: &Record| {
            sites.record_free(r.site, weighting.of(r.words as u64 * 8));
            if recent.contains(&r.weak) {
                named.insert(r.weak);
            } else {
                jni.delete_weak_global_ref(r.weak as sys::jweak);
            }
            dead.set(dead.get() + 1);
        };
        let mut survivors = std::mem::take(&mut checker.survivors);
        if everything || checker.collections_seen - checker.last_survivor_scan >= SURVIVOR_SCAN_EVERY {
            stats.checked += survivors.len();
            // In place: no second copy of what may be millions of records.
            survivors.retain(|r| {
                let died = is_dead(r);
                if died {
                    release(r);
                }
                !died
            });
            checker.last_survivor_scan = checker.collections_seen;
        }
        for records in young {
            stats.checked += records.len();
            for r in records {
                if is_dead(&r) {
                    release(&r);
                } else {
                    survivors.push(r);
                }
            }
        }
        checker.survivors = survivors;
        stats.dead = dead.get();
        if !named.is_empty() {
            for t in &threads {
                for r in t.lock().recent.iter_mut() {
                    if named.contains(&r.weak) {
                        *r = Recent::default();
                    }
                }
            }
            for weak in named {
                jni.delete_weak_global_ref(weak as sys::jweak);
            }
        }
        stats
    }

    /// Objects that could not be tracked (no weak reference): they stay in the live figures.
    pub fn untracked(&self) -> u64 {
        self.untracked.load(Ordering::Relaxed)
    }
}
