//! Shared by heap=sites and the JVMPI layer's OBJECT_ALLOC (both sample every allocation through SampledObjectAlloc).
//!
//! Makes the JVM's allocation sampler honour our interval on the threads that existed before we set it.
//!
//! HotSpot picks each thread's next sample point when the thread is created. The main thread exists before
//! Agent_OnLoad, so its first sample point was drawn with the default interval (512 KiB on average, up to
//! about 9 MiB): until it is reached, the TLAB fast path allocates without telling anyone — on a small
//! program that lost 15% of all allocations. The first sample resets the draw to our interval, so at VMInit
//! we allocate small garbage arrays (small, so they come from the TLAB and the TLAB's sample end is reset
//! with them) until the sampler reports one, and do not count those.

use crate::Jni;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set only while some thread primes, so that every other allocation pays one relaxed load, not a
/// thread-local access.
static ANY_PRIMING: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Set while this thread primes its sampler; cleared by the allocation callback when it fires.
    static PRIMING: Cell<bool> = const { Cell::new(false) };
}

/// Bytes per priming array: well below any TLAB's refill waste limit, so it is a TLAB allocation.
const ARRAY_BYTES: i32 = 256;
/// HotSpot's largest possible first draw at 512 KiB is about 9.4 MB; stop well past it.
const MAX_ARRAYS: usize = (32 << 20) / ARRAY_BYTES as usize;

/// Allocates on the current thread until the sampler takes a sample; true if it did.
pub fn prime_current_thread(jni: Jni) -> bool {
    PRIMING.with(|p| p.set(true));
    ANY_PRIMING.store(true, Ordering::Relaxed);
    let mut sampled = false;
    for _ in 0..MAX_ARRAYS {
        match jni.new_byte_array(ARRAY_BYTES) {
            Ok(array) => jni.delete_local_ref(array),
            Err(_) => break,
        }
        if !PRIMING.with(|p| p.get()) {
            sampled = true;
            break;
        }
    }
    PRIMING.with(|p| p.set(false));
    ANY_PRIMING.store(false, Ordering::Relaxed);
    sampled
}

/// Called first thing in the allocation callback: true if this allocation was ours, for priming.
pub fn consume_priming_sample() -> bool {
    ANY_PRIMING.load(Ordering::Relaxed) && PRIMING.try_with(|p| p.replace(false)).unwrap_or(false)
}
