//! What the walk does when a callback names an object other than the one it was visiting: the previous
//! object's record is finished (in [`walk`](super)) and the new one's begun, from what the object turned out
//! to be ([`OwnerKind`]): a class object (its statics read), an instance (its primitive values read from
//! memory when the walk reads fields), an object array (its header written), or an object of a class the
//! plan lacks, kept for after the walk ([`super::late`]).

use super::identity::{Identify, Owner, OwnerKind};
use super::{Current, Walk};
use crate::capabilities::heap_dump::ids::array_length;
use crate::capabilities::heap_dump::naming::field_offsets;
use crate::capabilities::heap_dump::plan::layout::ClassKind;
use hotspot::heap::Shape;
use hprof_format::ID_SIZE;
use jvmti::heap_walk::TagSlot;

impl<'a, I: Identify> Walk<'a, I> {
    /// Whether `owner` is the object being visited already.
    #[inline]
    pub(super) fn is_current(&self, owner: &Owner) -> bool {
        owner.id == self.current_id && !matches!(self.current, Current::None)
    }

    /// Makes `owner`, of `kind`, the current object, writing the previous one. `tag_slot` is its tag slot in
    /// this callback.
    pub(super) fn enter(
        &mut self,
        owner: Owner,
        kind: OwnerKind,
        tag_slot: Option<TagSlot<'_>>,
        callback: &TagSlot<'_>,
    ) {
        self.finish_current();
        self.current_id = owner.id;
        self.current_owner = owner;
        if owner.id == 0 {
            self.current = Current::Done;
            self.stats.mismatches += 1;
            return;
        }
        let id = owner.id;
        let plan = self.plan;
        self.current = match kind {
            // A class the plan could not read (not prepared then) is read again after the walk.
            OwnerKind::ClassObject(Some(c)) if plan.get(c).fields_known => {
                let dc = plan.get(c);
                self.class_values.reset(dc);
                if let (true, Some(a)) = (self.read_fields, self.addresses.as_ref()) {
                    for p in &dc.static_prims {
                        let (at, size) = (owner.addr + p.vm as u64, p.ty.size(ID_SIZE));
                        let Some(field) = a.bytes(at, size as u64, callback) else {
                            self.failed.get_or_insert(format!("a static field at {at:#x} is not in the heap"));
                            break;
                        };
                        let mut le = [0u8; 8];
                        le[..field.len()].copy_from_slice(field);
                        self.class_values.statics[p.at as usize] = u64::from_le_bytes(le);
                    }
                }
                Current::Class { class: c }
            }
            OwnerKind::ClassObject(c) => {
                self.late.begin(id, 0, true);
                self.keep_late_size(&owner);
                if self.addresses.is_some() {
                    if c.is_none() && owner.tag == 0 {
                        // Tagged with its address, to be found again after the walk.
                        if let Some(slot) = tag_slot {
                            slot.set(owner.addr as i64);
                        }
                    }
                    self.copy_late(&owner, None, callback);
                }
                Current::Late
            }
            OwnerKind::Object { class: c, mirror } => {
                self.stats.objects += 1;
                let dc = plan.get(c);
                match dc.kind {
                    ClassKind::Instance if dc.fields_known => {
                        self.values.clear();
                        self.values.resize(dc.instance_size as usize, 0);
                        if let (true, Some(a)) = (self.read_fields, self.addresses.as_ref())
                            && !field_offsets::read_values(a, owner.addr, &dc.prims, &mut self.values, callback)
                        {
                            self.failed.get_or_insert(format!("the object at {:#x} is not in the heap", owner.addr));
                        }
                        let size = self.size_of(&owner).unwrap_or(self.instance_sizes[c as usize] as u64);
                        Current::Instance { id, class: c, size, refs: dc.reference_offsets() }
                    }
                    ClassKind::ObjectArray => self.begin_array(&owner, c, callback),
                    ClassKind::PrimitiveArray(_) => {
                        self.size_of(&owner);
                        Current::Done
                    }
                    ClassKind::Instance => {
                        self.late.begin(id, dc.id(), false);
                        self.keep_late_size(&owner);
                        self.copy_late(&owner, Some(mirror), callback);
                        Current::Late
                    }
                }
            }
            OwnerKind::LateObject { class_id, mirror } => {
                self.stats.objects += 1;
                self.late.begin(id, class_id, false);
                self.keep_late_size(&owner);
                self.copy_late(&owner, Some(mirror), callback);
                Current::Late
            }
            OwnerKind::Unknown => {
                self.stats.mismatches += 1;
                Current::Done
            }
        };
    }

    fn begin_array(&mut self, owner: &Owner, class: u32, callback: &TagSlot<'_>) -> Current<'a> {
        let id = owner.id;
        let length = match self.addresses.as_ref() {
            // Its length in the header was checked when it was reported as a referee.
            Some(a) => a.array_length(owner.addr, callback).map(|n| n.max(0) as u32),
            None => array_length(owner.tag).or_else(|| self.side_lengths.get(&id).copied()),
        };
        let Some(length) = length else {
            return Current::UnsizedArray { id, class, elements: Vec::new() };
        };
        let size = self.size_of(owner).unwrap_or_else(|| self.array_sizes.estimate(length));
        if let Err(e) = self.sink.object_array_begin(id, self.plan.get(class), size, length) {
            self.error.get_or_insert(e);
        }
        Current::ObjectArray
    }

    /// The size the walk saw `owner` reported with, where the sink wants sizes and objects are named by
    /// address (with tags, sizes are learned per class).
    fn size_of(&mut self, owner: &Owner) -> Option<u64> {
        let by_address = self.pending_sizes.as_mut().and_then(|s| s.remove(&owner.addr)).map(u64::from);
        by_address.or_else(|| self.late.sizes.get(&owner.id).copied())
    }

    /// Keeps a late object's size (noted when it was reported) for its record after the walk.
    fn keep_late_size(&mut self, owner: &Owner) {
        if let Some(size) = self.size_of(owner) {
            self.late.sizes.insert(owner.id, size);
        }
    }

    /// With addresses: keeps what a late object's record will need after the walk — a copy of its bytes
    /// (for the primitive values read from memory), or an array's length. `mirror` is its class object
    /// (`None`: it is a class object itself).
    fn copy_late(&mut self, owner: &Owner, mirror: Option<u64>, callback: &TagSlot<'_>) {
        let (Some(a), true) = (self.addresses, owner.addr != 0) else { return };
        let Some(sizes) = a.heap().sizes else { return };
        match mirror {
            None if self.read_fields => {
                let size = sizes.class_object_size(a.heap(), owner.addr);
                self.late.copy(&a, owner.id, owner.addr, size);
            }
            None => {}
            Some(mirror) => match sizes.shape(a.heap(), mirror) {
                Some(Shape::Instance(size)) if self.read_fields => self.late.copy(&a, owner.id, owner.addr, size),
                Some(Shape::Array) => {
                    if let Some(length) = a.array_length(owner.addr, callback) {
                        self.side_lengths.insert(owner.id, length.max(0) as u32);
                    }
                }
                _ => {}
            },
        }
    }
}
