//! How one dump names its objects: by address where that has been verified (read through
//! `hotspot::heap`), else by tag ([`ids`](super::ids)).
//!
//! Tags cost the JVM a tag map entry per object and several look-ups in it per reported reference; an
//! address costs nothing. Addresses are used when the JVM is a HotSpot with a verified collector
//! ([`java_heap`]), the identifiers the agent hands out (classes, threads) lie below the heap so that
//! no address can equal one, and the probe walk ([`probe`]) has found the callback layout as
//! expected (once per JVM: the layout cannot change while it runs).
//! With addresses, primitive values are read from the objects' memory where every field's place could be
//! found and the probe confirmed one of each kind ([`field_offsets`], decoded by
//! `hotspot::heap::FieldOffsets`), else the JVM reports them.
//! `HPROF_HEAP_DUMP_TAGS` in the environment forces tags (for tests and diagnosis).

pub(super) mod field_offsets;
mod probe;

use super::ids::{Kind, Named};
use super::plan::layout::ClassPlan;
use crate::collector::{self, Collector};
use crate::context::Context;
use hotspot::VmStructs;
use hotspot::heap::{FieldOffsets, JavaHeap, ObjectAddresses};
use jvmti::{Jni, Jvmti};
use rustc_hash::FxHashMap;
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
    pub fn choose(ctx: &Context, jni: Jni, env: Jvmti) -> Naming {
        match addresses(ctx, jni, env) {
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
fn addresses(ctx: &Context, jni: Jni, env: Jvmti) -> Result<(ObjectAddresses, Option<FieldOffsets>), String> {
    if std::env::var_os("HPROF_HEAP_DUMP_TAGS").is_some() {
        return Err("HPROF_HEAP_DUMP_TAGS is set".into());
    }
    let heap = java_heap()?;
    let next_id = ctx.ids().reserve(0);
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

// The objects named before the walk ([`Named`]) are found again by address inside it ([`NamedMap::resolve`]).

/// What a named object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Name {
    /// A class object of the plan: its identifier and its index in the plan.
    Class { id: u64, index: u32 },
    /// A class object the plan has no class for (a primitive type's).
    PrimitiveClass { id: u64 },
    /// A thread object, class loader or held monitor.
    Object { id: u64 },
}

impl Name {
    pub fn id(self) -> u64 {
        match self {
            Name::Class { id, .. } | Name::PrimitiveClass { id } | Name::Object { id } => id,
        }
    }
}

/// Bits of [`NamedMap`]'s filter, in u64 words (8 KiB).
const FILTER_WORDS: usize = 1 << 10;

/// The named objects by address, behind a bit filter that turns away almost every other address (the
/// walk asks about every object it meets) without a hash look-up, and a small cache of the last found
/// (each object's first report names its class object).
#[derive(Debug, Default)]
pub struct NamedMap {
    names: FxHashMap<u64, Name>,
    filter: Vec<u64>,
    recent: Vec<(u64, Name)>,
}

/// Entries of [`NamedMap`]'s cache.
const RECENT: usize = 64;

impl NamedMap {
    /// Each object `named` holds, by its address. Only inside the walk, where objects do not move: a JNI weak global
    /// reference points to the slot holding its object's address (the low two bits tag its kind), as the
    /// probe walk checks.
    pub fn resolve(named: &Named, plan: &ClassPlan) -> NamedMap {
        let mut by_address = NamedMap {
            names: FxHashMap::default(),
            filter: vec![0; FILTER_WORDS],
            recent: vec![(0, Name::Object { id: 0 }); RECENT],
        };
        by_address.names.reserve(named.held().size_hint().0);
        for (object, id, kind) in named.held() {
            // SAFETY: `object` is a weak global reference this dump holds; inside the walk's safepoint the
            // object it names cannot move.
            let addr = unsafe { hotspot::heap::handle_target(object as *const std::ffi::c_void) };
            if addr == 0 {
                continue;
            }
            let name = match kind {
                Kind::Class => match plan.index_of(id) {
                    Some(index) => Name::Class { id, index },
                    None => Name::Object { id },
                },
                Kind::PrimitiveClass => Name::PrimitiveClass { id },
                Kind::Object | Kind::ObjectArray { .. } => Name::Object { id },
            };
            by_address.insert(addr, name);
        }
        by_address
    }

    fn bit(addr: u64) -> (usize, u64) {
        let i = (addr >> 3) as usize & (FILTER_WORDS * 64 - 1);
        (i / 64, 1 << (i % 64))
    }

    fn insert(&mut self, addr: u64, name: Name) {
        let (word, bit) = Self::bit(addr);
        self.filter[word] |= bit;
        self.names.insert(addr, name);
    }

    /// Whether `addr` may be named (the filter only): false for almost every object.
    #[inline(always)]
    pub fn may_hold(&self, addr: u64) -> bool {
        let (word, bit) = Self::bit(addr);
        self.filter.get(word).is_some_and(|w| w & bit != 0)
    }

    #[inline(always)]
    pub fn get(&mut self, addr: u64) -> Option<Name> {
        let (word, bit) = Self::bit(addr);
        if self.filter.get(word).is_none_or(|w| w & bit == 0) {
            return None;
        }
        let slot = (addr >> 3) as usize % RECENT;
        if let Some(&(a, name)) = self.recent.get(slot)
            && a == addr
        {
            return Some(name);
        }
        let name = self.names.get(&addr).copied()?;
        self.recent[slot] = (addr, name);
        Some(name)
    }

    /// The address of some class object, if any was named.
    pub fn some_class_object(&self) -> Option<u64> {
        self.names.iter().find(|(_, n)| matches!(n, Name::Class { .. })).map(|(&a, _)| a)
    }
}
