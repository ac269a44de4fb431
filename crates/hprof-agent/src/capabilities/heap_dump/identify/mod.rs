//! The identify stage: who the objects of a heap callback are — the referee of a reference, the referrer,
//! the object of a field or array report, and of which class — by tag ([`ids`]) or by address
//! (`hotspot::heap::ObjectAddresses`). The walk reports raw objects through [`Identify`], the interface
//! it defines; [`Identifier`] answers with the dump's identifiers.
//!
//! By tag, every object is tagged on its first report, and JVMTI hands the classes' tags along. By address
//! nothing is tagged (an empty tag map is what makes the walk fast, see [`naming`](super::naming)):
//! an address is looked up among the objects named before the walk, and an object's class is the class
//! object its first report — always its reference to its class — points to. Class objects are told by the
//! class word in their headers (with compact headers, which have none, java.lang.Class keeps its tag and
//! JVMTI's class tags tell). A class object the plan lacks (a class loaded since, or one CDS archived but
//! not loaded) is tagged with its address when first reported, so that it can be found again after the
//! walk.

#[cfg(doc)]
use super::ids;
use super::ids::DumpIds;
use super::naming::{Name, NamedMap, Naming};
use super::plan::layout::{ClassKind, ClassPlan, IndexTable};
use super::walk::identity::{Identify, Owner, OwnerKind, Referee, Reported, Seen, Started};
use hotspot::heap::ObjectAddresses;
use jvmti::heap_walk::TagSlot;
use jvmti::sys;
use rustc_hash::FxHashSet;

/// Identifies the objects of one walk.
pub struct Identifier<'a> {
    plan: &'a ClassPlan,
    ids: &'a mut DumpIds,
    /// Objects are named by their addresses; `None`: by tags.
    addresses: Option<ObjectAddresses>,
    /// The heap's committed pieces were read in this walk's safepoint.
    committed_read: bool,
    /// With addresses: the objects named before the walk, by address (resolved on its first callback).
    named: Option<NamedMap>,
    /// Identifiers from here on were handed out by the walk (before it: class loaders and monitors).
    walk_ids_from: u64,
    /// Objects tagged before the walk that the VM has been asked to visit.
    visit_requested: FxHashSet<u64>,
    /// The last few of those, direct-mapped: class objects are met again for every object of their class.
    recent_requested: [u64; 64],
    last_class: (i64, Option<u32>),
    class_table: Option<IndexTable>,
    /// The tag of java.lang.Class's class object (0: unknown): JVMTI's class tag of any class object,
    /// where the class words in the headers cannot tell.
    class_class_tag: i64,
    /// The class word of class objects (0: unknown), read from a named one.
    class_class_word: u64,
}

impl<'a> Identifier<'a> {
    pub fn new(plan: &'a ClassPlan, ids: &'a mut DumpIds, naming: &Naming) -> Identifier<'a> {
        Identifier {
            plan,
            walk_ids_from: ids.next_id(),
            ids,
            addresses: naming.addresses(),
            committed_read: false,
            named: None,
            visit_requested: FxHashSet::default(),
            recent_requested: [0; 64],
            last_class: (0, None),
            // Classes come by tag only in a walk by tags (by address, from the class word).
            class_table: naming.addresses().is_none().then(|| plan.index_table()).flatten(),
            class_class_tag: plan.class_class_id() as i64,
            class_class_word: 0,
        }
    }

    /// The referee's address, checked: inside the heap, an array's length as JVMTI reports it.
    fn checked_object(&self, a: &ObjectAddresses, tag: TagSlot<'_>, length: i32) -> Result<u64, String> {
        let Some(addr) = a.object(&tag) else {
            return Err(format!("a referee at {:#x} is no object", hotspot::heap::raw_object(&tag)));
        };
        if length >= 0 && a.array_length(addr, &tag) != Some(length) {
            return Err(format!("the array at {addr:#x} does not hold its length {length} in its header"));
        }
        Ok(addr)
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

    fn referee_by_address(
        &mut self,
        a: ObjectAddresses,
        r: Reported<'_>,
        seen: &mut Seen<'_>,
    ) -> Result<Referee, String> {
        let Reported { class_tag, size, tag: slot, length } = r;
        let addr = self.checked_object(&a, slot, length)?;
        let tag = slot.get();
        let name = self.name_of(addr);
        if let Some(name) = name {
            let visit = self.first_request(name.id());
            if visit {
                seen.object_size(name.id(), size);
            }
            return Ok(Referee { id: name.id(), visit, name: Some(name), addr });
        }
        if tag != 0 {
            // A class object the plan lacks, tagged when first reported.
            return Ok(Referee { id: tag as u64, visit: self.first_request(tag as u64), name: None, addr });
        }
        if self.is_class_object(addr, class_tag, &slot) {
            // A class object the plan lacks: looked for among the loaded classes after the walk, by the tag
            // set here. Tagged on its first report, not when visited: a class object with no references of
            // its own is never visited as a referrer, yet its instances name it as their class, and after the
            // walk (a collection may have moved it) only a tag finds it again.
            let first = self.first_request(addr);
            if first {
                slot.set(addr as i64);
                seen.late_class_object(addr, size, Some((&a, addr)));
            }
            return Ok(Referee { id: addr, visit: first, name: None, addr });
        }
        seen.reported_size(addr, size);
        Ok(Referee { id: addr, visit: true, name: None, addr })
    }

    fn referee_by_tag(&mut self, r: Reported<'_>, seen: &mut Seen<'_>) -> Referee {
        let Reported { class_tag, size, tag: slot, length } = r;
        let tag = slot.get();
        if tag != 0 {
            let id = self.ids.id_of(tag);
            // Objects the walk tagged have been asked for already.
            let walked = self.ids.is_reserved(id) && id >= self.walk_ids_from;
            let visit = !walked && self.first_request(id);
            if visit {
                // Tagged before the walk (threads, class loaders, monitors, class objects): sized here.
                match self.class_index(class_tag).map(|c| (c, self.plan.get(c).kind)) {
                    Some((c, ClassKind::Instance)) if Some(c) != self.plan.class_class => seen.instance_size(c, size),
                    Some((c, _)) if Some(c) == self.plan.class_class && self.plan.index_of(id).is_none() => {
                        // A class object the plan lacks, tagged by an abandoned walk by address: looked for
                        // after the walk like one met untagged (it may never be visited as a referrer).
                        seen.late_class_object(id, size, None);
                    }
                    _ => seen.object_size(id, size),
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
                seen.side_length(t.1, length);
                t
            }
            None => self.ids.plain(),
        };
        slot.set(new_tag);
        match (class, kind) {
            (Some(c), Some(ClassKind::Instance)) => {
                if Some(c) == self.plan.class_class {
                    // A class object the plan does not know: a primitive type's, or a class loaded since.
                    seen.late_class_object(id, size, None);
                } else {
                    seen.instance_size(c, size);
                    if !self.plan.get(c).fields_known {
                        // Written after the walk, once its class is read (CDS maps in objects of classes
                        // not linked yet).
                        seen.object_size(id, size);
                    }
                }
            }
            (_, Some(ClassKind::ObjectArray)) => seen.array(size, length),
            // Of a class the plan lacks: written after the walk, with this size.
            (None, _) => seen.object_size(id, size),
            _ => {}
        }
        Referee { id, visit: true, name: None, addr: 0 }
    }

    #[inline(always)]
    fn by_address(&mut self, addr: u64, tag: i64, current: &Owner) -> Owner {
        if addr == current.addr && tag == current.tag {
            return *current;
        }
        let name = self.name_of(addr);
        let id = name.map_or(if tag != 0 { tag as u64 } else { addr }, Name::id);
        Owner { id, tag, addr, name }
    }

    fn tagged(&self, tag: i64) -> Owner {
        Owner { id: if tag == 0 { 0 } else { self.ids.id_of(tag) }, tag, addr: 0, name: None }
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
}

impl Identify for Identifier<'_> {
    fn start(&mut self, callback: &TagSlot<'_>, seen: &mut Seen<'_>) -> Result<Started, String> {
        if !self.committed_read
            && let Some(a) = &mut self.addresses
        {
            // Where the heap is committed, read where it cannot change: every address is checked against it.
            self.committed_read = true;
            a.refresh_committed(callback)?;
        }
        if self.named.is_none()
            && let Some(a) = self.addresses
            && let Some(named) = &self.ids.named
        {
            let map = NamedMap::resolve(named, self.plan);
            if let Some(mirror) = map.some_class_object()
                && let Some(word) = a.class_word(mirror, callback)
            {
                self.class_class_word = word;
            }
            self.named = Some(map);
            seen.late_class_objects(named.primitive_class_ids());
        }
        Ok(Started { addresses: self.addresses, class_objects_by_word: self.class_class_word != 0 })
    }

    #[inline(always)]
    fn referee(&mut self, r: Reported<'_>, seen: &mut Seen<'_>) -> Result<Referee, String> {
        match self.addresses {
            Some(a) => self.referee_by_address(a, r, seen),
            None => Ok(self.referee_by_tag(r, seen)),
        }
    }

    #[inline(always)]
    fn referrer(&mut self, referrer: Option<TagSlot<'_>>, tag: TagSlot<'_>, current: &Owner) -> Result<Owner, String> {
        let referrer_value = referrer.map_or(0, TagSlot::get);
        let Some(a) = self.addresses.as_ref() else {
            return Ok(self.tagged(referrer_value));
        };
        if referrer.is_none() {
            return Ok(Owner::NONE);
        }
        let Some(addr) = a.referrer(referrer.as_ref(), &tag) else {
            return Err("a referrer is no object".into());
        };
        Ok(self.by_address(addr, referrer_value, current))
    }

    #[inline(always)]
    fn owner(&mut self, slot: TagSlot<'_>, current: &Owner) -> Result<Owner, String> {
        let tag = slot.get();
        let Some(a) = self.addresses.as_ref() else {
            return Ok(self.tagged(tag));
        };
        let Some(addr) = a.object(&slot) else {
            return Err("an object with values is no object".into());
        };
        Ok(self.by_address(addr, tag, current))
    }

    fn referrer_kind(
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

    fn owner_kind(&mut self, owner: &Owner, class_tag: i64, callback: &TagSlot<'_>) -> OwnerKind {
        match (self.addresses, owner.name) {
            (None, _) => self.kind_by_tag(owner, class_tag),
            (Some(_), Some(Name::Class { index, .. })) => OwnerKind::ClassObject(Some(index)),
            (Some(_), _) if self.is_class_object(owner.addr, class_tag, callback) => OwnerKind::ClassObject(None),
            (Some(_), _) => OwnerKind::Unknown,
        }
    }

    #[inline]
    fn class_index(&mut self, class_tag: i64) -> Option<u32> {
        if class_tag == 0 {
            return None;
        }
        if self.last_class.0 != class_tag {
            let id = class_tag as u64;
            let index = match &self.class_table {
                Some(t) => t.get(id),
                None => self.plan.index_of(id),
            };
            self.last_class = (class_tag, index);
        }
        self.last_class.1
    }

    fn id_of_tag(&self, tag: i64) -> u64 {
        self.ids.id_of(tag)
    }

    #[inline(always)]
    fn is_plain(&self, addr: u64, addresses: &ObjectAddresses, callback: &TagSlot<'_>) -> bool {
        self.named.as_ref().is_some_and(|n| !n.may_hold(addr))
            && addresses.class_word(addr, callback) != Some(self.class_class_word)
    }
}
