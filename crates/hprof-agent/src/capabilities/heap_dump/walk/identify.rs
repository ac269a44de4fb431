//! Who the objects of a heap callback are: the referee of a reference, the referrer, the object of a
//! field or array report, and of which class — by tag ([`ids`]) or by address
//! (`hotspot::heap::ObjectAddresses`).
//!
//! By tag, every object is tagged on its first report, and JVMTI hands the classes' tags along. By address
//! nothing is tagged (an empty tag map is what makes the walk fast, see [`naming`](super::super::naming)):
//! an address is looked up among the objects named before the walk, and an object's class is the class object its first
//! report — always its reference to its class — points to. Class objects are told by the class word in
//! their headers (with compact headers, which have none, java.lang.Class keeps its tag and JVMTI's class
//! tags tell). A class object the plan lacks (a class loaded since, or one CDS archived but not loaded) is
//! tagged with its address when first reported, so that it can be found again after the walk.

use super::Walk;
#[cfg(doc)]
use crate::capabilities::heap_dump::ids;
use crate::capabilities::heap_dump::naming::Name;
use crate::capabilities::heap_dump::plan::layout::ClassKind;
use jvmti::heap_walk::TagSlot;
use jvmti::sys;

/// An object of a callback: its identifier (0: none), its tag, its address (with addresses), and what it
/// was named before the walk, if it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub id: u64,
    pub tag: i64,
    pub addr: u64,
    pub name: Option<Name>,
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

impl Walk<'_> {
    /// The referee's identifier, and whether the VM should visit it: objects tagged or named before the
    /// walk once, objects the walk tags on their first report, any other object named by address always
    /// (the VM visits an object once however often it is asked). `None`: an address failed its check.
    pub(super) fn referee(&mut self, class_tag: i64, size: i64, tag: TagSlot<'_>, length: i32) -> Option<Referee> {
        if self.addresses.is_none() {
            return Some(self.referee_by_tag(class_tag, size, tag, length));
        }
        let addr = self.checked_object(tag, length)?;
        let slot = tag;
        let tag = slot.get();
        let name = self.name_of(addr);
        if let Some(name) = name {
            let visit = self.first_request(name.id());
            if visit {
                self.note_size(name.id(), size);
            }
            return Some(Referee { id: name.id(), visit, name: Some(name), addr });
        }
        if tag != 0 {
            // A class object the plan lacks, tagged when first reported.
            return Some(Referee { id: tag as u64, visit: self.first_request(tag as u64), name: None, addr });
        }
        if self.is_class_object(addr, class_tag, &slot) {
            // A class object the plan lacks: looked for among the loaded classes after the walk, by the tag
            // set here. Tagged on its first report, not when visited: a class object with no references of
            // its own is never visited as a referrer, yet its instances name it as their class, and after the
            // walk (a collection may have moved it) only a tag finds it again.
            let first = self.first_request(addr);
            if first {
                slot.set(addr as i64);
                self.note_size(addr, size);
                self.late.mirrors.push(addr);
                if self.read_fields
                    && let Some(a) = self.addresses
                {
                    self.late.copy(&a, addr, addr, size as u64);
                }
            }
            return Some(Referee { id: addr, visit: first, name: None, addr });
        }
        if let Some(sizes) = &mut self.pending_sizes {
            sizes.insert(addr, size as u32);
        }
        Some(Referee { id: addr, visit: true, name: None, addr })
    }

    /// The referee's address, checked: inside the heap, an array's length as JVMTI reports it.
    fn checked_object(&mut self, tag: TagSlot<'_>, length: i32) -> Option<u64> {
        let a = self.addresses.as_ref()?;
        let Some(addr) = a.object(&tag) else {
            self.fail(format!("a referee at {:#x} is no object", hotspot::heap::raw_object(&tag)));
            return None;
        };
        if length >= 0 && a.array_length(addr, &tag) != Some(length) {
            self.fail(format!("the array at {addr:#x} does not hold its length {length} in its header"));
            return None;
        }
        Some(addr)
    }

    /// Whether a tagged or named object is reported for the first time (asked to be visited once).
    #[inline(always)]
    fn first_request(&mut self, id: u64) -> bool {
        let recent = (id ^ id >> 6) as usize & 63;
        if self.recent_requested[recent] == id {
            return false;
        }
        self.recent_requested[recent] = id;
        self.visit_requested.insert(id)
    }

    fn referee_by_tag(&mut self, class_tag: i64, size: i64, slot: TagSlot<'_>, length: i32) -> Referee {
        let tag = slot.get();
        if tag != 0 {
            let id = self.ids.id_of(tag);
            // Objects the walk tagged have been asked for already.
            let walked = self.ids.is_reserved(id) && id >= self.walk_ids_from;
            let visit = !walked && self.first_request(id);
            if visit {
                // Tagged before the walk (threads, class loaders, monitors, class objects): sized here.
                match self.class_index(class_tag).map(|c| (c, self.plan.get(c).kind)) {
                    Some((c, ClassKind::Instance)) if Some(c) != self.plan.class_class => {
                        self.instance_sizes[c as usize] = size as u32
                    }
                    Some((c, _)) if Some(c) == self.plan.class_class && self.plan.index_of(id).is_none() => {
                        // A class object the plan lacks, tagged by an abandoned walk by address: looked for
                        // after the walk like one met untagged (it may never be visited as a referrer).
                        self.late.mirrors.push(id);
                        self.note_size(id, size);
                    }
                    _ => self.note_size(id, size),
                }
            }
            return Referee { id, visit, name: None, addr: 0 };
        }
        let class = self.class_index(class_tag);
        let kind = class.map(|c| self.plan.get(c).kind);
        let is_object_array = length >= 0 && !matches!(kind, Some(ClassKind::PrimitiveArray(_)));
        let (new_tag, id) = match is_object_array.then(|| self.ids.object_array(length as u32)) {
            Some(Some(t)) => t,
            Some(None) => {
                let t = self.ids.plain();
                self.side_lengths.insert(t.1, length as u32);
                t
            }
            None => self.ids.plain(),
        };
        slot.set(new_tag);
        match (class, kind) {
            (Some(c), Some(ClassKind::Instance)) => {
                if Some(c) == self.plan.class_class {
                    // A class object the plan does not know: a primitive type's, or a class loaded since.
                    self.late.mirrors.push(id);
                    self.note_size(id, size);
                } else {
                    self.instance_sizes[c as usize] = size as u32;
                    if !self.plan.get(c).fields_known {
                        // Written after the walk, once its class is read (CDS maps in objects of classes
                        // not linked yet).
                        self.note_size(id, size);
                    }
                }
            }
            (_, Some(ClassKind::ObjectArray)) => self.array_sizes.observe(size as u64, length as u64),
            // Of a class the plan lacks: written after the walk, with this size.
            (None, _) => self.note_size(id, size),
            _ => {}
        }
        Referee { id, visit: true, name: None, addr: 0 }
    }

    /// The referrer of a reference (`None`: an address failed its check; a root has id 0).
    pub(super) fn referrer(&mut self, referrer_tag: Option<TagSlot<'_>>, tag: TagSlot<'_>) -> Option<Owner> {
        let referrer_value = referrer_tag.map_or(0, TagSlot::get);
        let Some(a) = self.addresses.as_ref() else {
            return Some(self.tagged(referrer_value));
        };
        if referrer_tag.is_none() {
            return Some(Owner { id: 0, tag: 0, addr: 0, name: None });
        }
        let Some(addr) = a.referrer(referrer_tag.as_ref(), &tag) else {
            self.fail("a referrer is no object".into());
            return None;
        };
        Some(self.by_address(addr, referrer_value))
    }

    /// The object of a primitive field or array report (`None`: its address failed its check).
    pub(super) fn owner(&mut self, slot: TagSlot<'_>) -> Option<Owner> {
        let tag = slot.get();
        let Some(a) = self.addresses.as_ref() else {
            return Some(self.tagged(tag));
        };
        let Some(addr) = a.object(&slot) else {
            self.fail("an object with values is no object".into());
            return None;
        };
        Some(self.by_address(addr, tag))
    }

    #[inline(always)]
    fn by_address(&mut self, addr: u64, tag: i64) -> Owner {
        if addr == self.current_owner.addr && tag == self.current_owner.tag {
            return self.current_owner;
        }
        let name = self.name_of(addr);
        let id = name.map_or(if tag != 0 { tag as u64 } else { addr }, Name::id);
        Owner { id, tag, addr, name }
    }

    fn tagged(&self, tag: i64) -> Owner {
        Owner { id: if tag == 0 { 0 } else { self.ids.id_of(tag) }, tag, addr: 0, name: None }
    }

    /// What the referrer of a reference of `kind` to `referee` is, as far as this report tells.
    pub(super) fn referrer_kind(
        &mut self,
        owner: &Owner,
        kind: u32,
        referrer_class_tag: i64,
        referee: &Referee,
        callback: &TagSlot<'_>,
    ) -> OwnerKind {
        if self.addresses.is_none() {
            return self.kind_by_tag(owner, referrer_class_tag);
        }
        if let Some(Name::Class { index, .. }) = owner.name {
            return OwnerKind::ClassObject(Some(index));
        }
        if self.is_class_object(owner.addr, referrer_class_tag, callback) {
            return OwnerKind::ClassObject(None);
        }
        // Any other object's first report is its reference to its class.
        if kind == sys::JVMTI_HEAP_REFERENCE_CLASS {
            return match referee.name {
                Some(Name::Class { index, .. }) => OwnerKind::Object { class: index, mirror: referee.addr },
                _ => OwnerKind::LateObject { class_id: referee.id, mirror: referee.addr },
            };
        }
        OwnerKind::Unknown
    }

    /// What the object of a primitive field or array report is, as far as it tells.
    pub(super) fn owner_kind(&mut self, owner: &Owner, class_tag: i64, callback: &TagSlot<'_>) -> OwnerKind {
        match (self.addresses, owner.name) {
            (None, _) => self.kind_by_tag(owner, class_tag),
            (Some(_), Some(Name::Class { index, .. })) => OwnerKind::ClassObject(Some(index)),
            (Some(_), _) if self.is_class_object(owner.addr, class_tag, callback) => OwnerKind::ClassObject(None),
            (Some(_), _) => OwnerKind::Unknown,
        }
    }

    fn kind_by_tag(&mut self, owner: &Owner, class_tag: i64) -> OwnerKind {
        let class = self.class_index(class_tag);
        match class {
            Some(_) if class == self.plan.class_class => OwnerKind::ClassObject(self.plan.index_of(owner.id)),
            Some(c) => OwnerKind::Object { class: c, mirror: 0 },
            None => {
                let class_id = if class_tag == 0 { 0 } else { self.ids.id_of(class_tag) };
                OwnerKind::LateObject { class_id, mirror: 0 }
            }
        }
    }

    /// Notes the size of an object that the per-class and per-address sizes miss, for a sink that prints
    /// sizes (text).
    #[inline]
    fn note_size(&mut self, id: u64, size: i64) {
        if self.wants_sizes {
            self.late.sizes.insert(id, size.max(0) as u64);
        }
    }

    /// The object named `addr` before the walk.
    #[inline(always)]
    fn name_of(&mut self, addr: u64) -> Option<Name> {
        self.named.as_mut()?.get(addr)
    }

    /// Whether the object at `addr`, whose class has tag `class_tag`, is a class object: by the class word
    /// in its header, or else by java.lang.Class's tag.
    #[inline]
    fn is_class_object(&self, addr: u64, class_tag: i64, callback: &TagSlot<'_>) -> bool {
        match (self.class_class_word, self.addresses.as_ref()) {
            (0, _) | (_, None) => class_tag != 0 && class_tag == self.class_class_tag,
            (word, Some(a)) => a.class_word(addr, callback) == Some(word),
        }
    }

    /// Stops the walk: object addresses cannot be trusted.
    pub(super) fn fail(&mut self, why: String) {
        self.failed.get_or_insert(why);
    }
}
