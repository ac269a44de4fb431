//! How one dump names its objects: by address where that has been verified (read through
//! `hotspot::heap`), else by tag ([`super::ids`]).
//!
//! Tags cost the JVM a tag map entry per object and several look-ups in it per reported reference; an
//! address costs nothing. Addresses are used when the JVM is a HotSpot with a verified collector
//! ([`java_heap`]), the identifiers the agent hands out (classes, threads) lie below the heap so that
//! no address can equal one, and the probe walk ([`super::probe`]) has found the callback layout as
//! expected (once per JVM: the layout cannot change while it runs).
//! With addresses, primitive values are read from the objects' memory where every field's place could be
//! found and the probe confirmed one of each kind ([`super::field_offsets`], decoded by `hotspot::heap::FieldOffsets`), else the JVM reports them.
//! `HPROF_HEAP_DUMP_TAGS` in the environment forces tags (for tests and diagnosis).

use super::layout::ClassPlan;
use super::probe;
use crate::agent::Agent;
use crate::collector::{self, Collector};
use hotspot::VmStructs;
use hotspot::heap::{FieldOffsets, JavaHeap, ObjectAddresses};
use jvmti::{Jni, Jvmti};
use std::fmt;
use std::sync::OnceLock;

/// Identifiers the agent may still hand out during a dump (late classes, threads), kept below the heap.
const ID_HEADROOM: u64 = 1 << 24;

// One per dump: the committed pieces the addresses carry inline (to stay `Copy` for the walk) cost nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Naming {
    /// Addresses; field offsets, if they passed the probe; whether primitive values are read from memory
    /// (the plan's classes are located with them).
    Addresses(ObjectAddresses, Option<FieldOffsets>, bool),
    /// Tags, and why not addresses.
    Tags(String),
}

impl Naming {
    /// Chooses before the dump's classes are gathered (which tags objects accordingly).
    pub fn choose(agent: &Agent, jni: Jni, env: Jvmti) -> Naming {
        match addresses(agent, jni, env) {
            Ok((a, offsets)) => Naming::Addresses(a, offsets, false),
            Err(why) => Naming::Tags(why),
        }
    }

    /// With field offsets, finds the plan's primitive fields: their values are then read from memory.
    pub fn locate(&mut self, plan: &mut ClassPlan) {
        if let Naming::Addresses(_, Some(offsets), reads) = self {
            *reads = plan.locate(*offsets);
        }
    }

    pub fn addresses(&self) -> Option<ObjectAddresses> {
        match self {
            Naming::Addresses(a, ..) => Some(*a),
            Naming::Tags(_) => None,
        }
    }

    pub fn reads_fields(&self) -> bool {
        matches!(self, Naming::Addresses(_, _, true))
    }
}

/// Addresses, and field offsets if they passed the probe too.
fn addresses(agent: &Agent, jni: Jni, env: Jvmti) -> Result<(ObjectAddresses, Option<FieldOffsets>), String> {
    if std::env::var_os("HPROF_HEAP_DUMP_TAGS").is_some() {
        return Err("HPROF_HEAP_DUMP_TAGS is set".into());
    }
    let heap = java_heap()?;
    let next_id = agent.ids.reserve(0);
    if next_id.saturating_add(ID_HEADROOM) > heap.start {
        return Err(format!("the agent's identifiers reach {next_id:#x}, the heap starts at {:#x}", heap.start));
    }
    let addresses = ObjectAddresses::new(heap);
    let offsets = VmStructs::get().and_then(FieldOffsets::find);
    // The layouts cannot change while the JVM runs: one probe's verdict, pass or fail, holds for every dump
    // (a probe walk costs JDK 17 a pass over the whole heap to reset its marks).
    let verdict = match PROBED.get() {
        Some(verdict) => verdict.clone(),
        None => {
            let verdict = probe::check(jni, env, addresses, offsets)?;
            PROBED.get_or_init(|| verdict).clone()
        }
    };
    let fields_hold = verdict?;
    Ok((addresses, offsets.filter(|_| fields_hold)))
}

/// The heap of the running JVM, if its collector is one verified to hand the heap walk plain, unmoving
/// object addresses: Serial, Parallel and G1 stop the world for the walk's VM operation and move nothing
/// in it. ZGC and Shenandoah (coloured or forwarded pointers, concurrent relocation) and any other are
/// refused, and the dump then names objects by tags.
fn java_heap() -> Result<JavaHeap, String> {
    let vm = VmStructs::get().ok_or("the JVM exports no HotSpot structure tables")?;
    match collector::current() {
        Some(Collector::Serial | Collector::Parallel | Collector::G1) => JavaHeap::find(vm),
        other => {
            let gc = other.map_or("the collector", Collector::name);
            Err(format!("{gc} is not a collector verified with object addresses"))
        }
    }
}

/// The first probe walk's verdict: whether the field offsets held too, or what did not hold.
static PROBED: OnceLock<Result<bool, String>> = OnceLock::new();

impl fmt::Display for Naming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Naming::Addresses(_, _, true) => write!(f, "object addresses, fields read from memory"),
            Naming::Addresses(..) => write!(f, "object addresses"),
            Naming::Tags(why) => write!(f, "tags ({why})"),
        }
    }
}
