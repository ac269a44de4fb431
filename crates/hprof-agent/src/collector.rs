//! Which garbage collector the JVM runs, read from HotSpot's flag table, and what the agent needs to know
//! about it.

use hotspot::VmStructs;
use std::sync::OnceLock;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collector {
    Serial,
    Parallel,
    G1,
    Z,
    Shenandoah,
    Epsilon,
}

/// Each collector's `-XX:+Use…GC` flag. A JVM built without a collector has no flag for it.
const FLAGS: [(&str, Collector); 6] = [
    ("UseSerialGC", Collector::Serial),
    ("UseParallelGC", Collector::Parallel),
    ("UseG1GC", Collector::G1),
    ("UseZGC", Collector::Z),
    ("UseShenandoahGC", Collector::Shenandoah),
    ("UseEpsilonGC", Collector::Epsilon),
];

impl Collector {
    pub fn name(self) -> &'static str {
        match self {
            Collector::Serial => "Serial",
            Collector::Parallel => "Parallel",
            Collector::G1 => "G1",
            Collector::Z => "ZGC",
            Collector::Shenandoah => "Shenandoah",
            Collector::Epsilon => "Epsilon",
        }
    }

    /// Whether it moves objects and processes references while the program runs (ZGC, Shenandoah) rather
    /// than only inside pauses. Such collectors stop their threads before VMDeath, so a collection can no
    /// longer be forced at exit; and an object's address can change between two pauses.
    pub fn is_concurrent(self) -> bool {
        matches!(self, Collector::Z | Collector::Shenandoah)
    }
}

/// The running JVM's collector; `None` without structure tables or when no known collector's flag is set.
pub fn current() -> Option<Collector> {
    static CURRENT: OnceLock<Option<Collector>> = OnceLock::new();
    *CURRENT.get_or_init(|| {
        let vm = VmStructs::get()?;
        FLAGS.iter().find(|(flag, _)| vm.bool_flag(flag) == Ok(true)).map(|&(_, gc)| gc)
    })
}

/// Whether the collector is concurrent ([`Collector::is_concurrent`]); an unknown one counts as concurrent,
/// the cautious answer.
pub fn is_concurrent() -> bool {
    current().is_none_or(Collector::is_concurrent)
}
