//! What the walk asks of the identify stage (`heap_dump/identify/`), and what it gets back: the walk
//! reports a callback's raw objects (tag slots, class tags, sizes, lengths), [`Identify`] turns them into
//! the dump's identifiers. The walk is generic over it, so that the calls, made several times for each of
//! millions of callbacks, are inlined as if the code were one; only this file is shared, and the identify
//! stage imports it, never the reverse.

use super::array_sizes::ArraySizes;
use super::late::LateObjects;
use crate::capabilities::heap_dump::naming::Name;
use hotspot::heap::ObjectAddresses;
use jvmti::heap_walk::TagSlot;
use rustc_hash::FxHashMap;

/// An object of a callback: its identifier (0: none), its tag, its address (with addresses), and what it
/// was named before the walk, if it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub id: u64,
    pub tag: i64,
    pub addr: u64,
    pub name: Option<Name>,
}

impl Owner {
    pub const NONE: Owner = Owner { id: 0, tag: 0, addr: 0, name: None };
}

/// What an object turns out to be, from its first report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerKind {
    /// A class object: of class `index` of the plan, or of a class the plan lacks.
    ClassObject(Option<u32>),
    /// An object of class `class` of the plan, whose class object is at `mirror` (with addresses).
    Object { class: u32, mirror: u64 },
    /// An object of a class the plan lacks, whose class object has identifier `class_id` (0: unknown).
    LateObject { class_id: u64, mirror: u64 },
    /// Nothing can be said (the object must be the current one already).
    Unknown,
}

/// A reported referee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Referee {
    pub id: u64,
    /// Whether the VM should be asked to visit it.
    pub visit: bool,
    pub name: Option<Name>,
    pub addr: u64,
}

/// A referee as JVMTI reports it.
#[derive(Clone, Copy)]
pub struct Reported<'t> {
    pub class_tag: i64,
    pub size: i64,
    pub tag: TagSlot<'t>,
    /// An array's length (-1: no array).
    pub length: i32,
}

/// What the identify stage found on the walk's first callback.
#[derive(Debug, Clone, Copy)]
pub struct Started {
    /// The addresses, with the heap's committed pieces read (`None`: objects are named by tags).
    pub addresses: Option<ObjectAddresses>,
    /// Class objects are told by the class word in their headers.
    pub class_objects_by_word: bool,
}

/// The identify stage, as the walk calls it. A method returning `Err` says why object addresses cannot be
/// trusted: the walk stops, to be made again with tags.
pub trait Identify {
    /// On the walk's first callback, inside its safepoint (again on the next ones while a test failure
    /// counts down): reads where the heap is committed and finds the objects named before the walk.
    fn start(&mut self, callback: &TagSlot<'_>, seen: &mut Seen<'_>) -> Result<Started, String>;

    /// The referee's identifier, and whether the VM should visit it.
    fn referee(&mut self, r: Reported<'_>, seen: &mut Seen<'_>) -> Result<Referee, String>;

    /// The referrer of a reference (a root's has id 0); `current` is the object being visited.
    fn referrer(&mut self, referrer: Option<TagSlot<'_>>, tag: TagSlot<'_>, current: &Owner) -> Result<Owner, String>;

    /// The object of a primitive field or array report.
    fn owner(&mut self, slot: TagSlot<'_>, current: &Owner) -> Result<Owner, String>;

    /// What the referrer of a reference of `kind` to `referee` is, as far as this report tells.
    fn referrer_kind(
        &mut self,
        owner: &Owner,
        kind: u32,
        referrer_class_tag: i64,
        referee: &Referee,
        callback: &TagSlot<'_>,
    ) -> OwnerKind;

    /// What the object of a primitive field or array report is, as far as it tells.
    fn owner_kind(&mut self, owner: &Owner, class_tag: i64, callback: &TagSlot<'_>) -> OwnerKind;

    /// The plan's index of the class whose class object has tag `class_tag`.
    fn class_index(&mut self, class_tag: i64) -> Option<u32>;

    /// The identifier a tag carries (a thread's, for its stack roots).
    fn id_of_tag(&self, tag: i64) -> u64;

    /// Whether the untagged object at `addr` is plainly new: neither named before the walk nor a class
    /// object (the walk's short path for members takes only those).
    fn is_plain(&self, addr: u64, addresses: &ObjectAddresses, callback: &TagSlot<'_>) -> bool;
}

/// What identifying objects teaches the walk, for the records: sizes it would not otherwise know, class
/// objects the plan lacks, array lengths their tags cannot carry. Borrowed from the walk for one call.
pub struct Seen<'w> {
    pub(super) late: &'w mut LateObjects,
    pub(super) instance_sizes: &'w mut [u32],
    pub(super) array_sizes: &'w mut ArraySizes,
    pub(super) pending_sizes: &'w mut Option<FxHashMap<u64, u32>>,
    pub(super) side_lengths: &'w mut FxHashMap<u64, u32>,
    pub(super) wants_sizes: bool,
    /// Primitive values are read from memory: a late class object's bytes are copied.
    pub(super) read_fields: bool,
}

impl Seen<'_> {
    /// The size of an object that the per-class and per-address sizes miss, for a sink that prints sizes.
    #[inline]
    pub fn object_size(&mut self, id: u64, size: i64) {
        if self.wants_sizes {
            self.late.sizes.insert(id, size.max(0) as u64);
        }
    }

    /// The size of every instance of class `class`.
    #[inline]
    pub fn instance_size(&mut self, class: u32, size: i64) {
        self.instance_sizes[class as usize] = size as u32;
    }

    /// An object array's size for its length (to estimate others').
    #[inline]
    pub fn array(&mut self, size: i64, length: i32) {
        self.array_sizes.observe(size as u64, length as u64);
    }

    /// The size an object at `addr` was reported with, until it is visited (with addresses).
    #[inline]
    pub fn reported_size(&mut self, addr: u64, size: i64) {
        if let Some(sizes) = self.pending_sizes {
            sizes.insert(addr, size as u32);
        }
    }

    /// The length of object array `id`, which its tag cannot carry.
    pub fn side_length(&mut self, id: u64, length: i32) {
        self.side_lengths.insert(id, length as u32);
    }

    /// A class object the plan lacks, looked for among the loaded classes after the walk; with addresses
    /// (`copy`), a copy of its bytes is kept for its primitive values.
    pub fn late_class_object(&mut self, id: u64, size: i64, copy: Option<(&ObjectAddresses, u64)>) {
        self.late.mirrors.push(id);
        self.object_size(id, size);
        if let (true, Some((a, addr))) = (self.read_fields, copy) {
            self.late.copy(a, id, addr, size as u64);
        }
    }

    /// Class objects the plan has no class for (primitive types'), named before the walk.
    pub fn late_class_objects(&mut self, ids: impl IntoIterator<Item = u64>) {
        self.late.mirrors.extend(ids);
    }
}
