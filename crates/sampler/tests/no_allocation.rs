//! The handler's path through the ring allocates nothing: claiming, filling and committing a slot, and a
//! full ring dropping a sample, under a global allocator that counts every allocation of this thread.

use sampler::{Registers, SampleRing};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator unchanged; the counter is a const-initialised thread-local Cell,
// which needs no allocation itself.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's layout, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: memory `alloc` got from System with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

#[test]
fn claiming_filling_committing_and_dropping_allocate_nothing() {
    let ring = SampleRing::new(4);
    let before = allocations();
    for i in 0..6 {
        if let Some(mut claim) = ring.claim() {
            let data = claim.data();
            data.thread_serial = i;
            data.registers = Registers { pc: 1, sp: 2, fp: 3 };
            data.num_frames = 0;
            claim.commit();
        }
    }
    let after = allocations();
    assert_eq!(ring.dropped(), 2, "a full ring drops and counts");
    assert_eq!(after - before, 0, "the producer's path allocated");
    // The counter does count: a Vec allocates.
    let v: Vec<u64> = Vec::with_capacity(8);
    assert!(allocations() > after, "{}", v.capacity());
}
