//! What the agent needs to know about the JVM's garbage collector, read from HotSpot's flag table.

use hotspot::VmStructs;
use std::sync::OnceLock;

/// Whether the collector moves objects and processes references while the program runs (ZGC,
/// Shenandoah) rather than only inside pauses. Such collectors stop their threads before VMDeath, so a
/// collection can no longer be forced at exit; and an object's address can change between two pauses.
/// Unknown (no structure tables) counts as concurrent, the cautious answer.
pub fn is_concurrent() -> bool {
    static CONCURRENT: OnceLock<bool> = OnceLock::new();
    *CONCURRENT.get_or_init(|| {
        VmStructs::get()
            .is_none_or(|vm| ["UseZGC", "UseShenandoahGC"].iter().any(|flag| vm.bool_flag(flag) != Ok(false)))
    })
}
