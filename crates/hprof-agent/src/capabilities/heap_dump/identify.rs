//! Who the objects of a heap callback are: the referee of a reference, the referrer, the object of a
//! field or array report, named by address ([`super::addresses`]) or by tag ([`super::ids`]).
//!
//! Objects tagged before the walk (class objects, thread objects, class loaders, held monitors) keep the
//! identifiers their tags carry either way. With addresses nothing else is tagged, except a class object
//! the plan does not know (a primitive type's, or a class loaded since), which is tagged with its address
//! so that it can be found again after the walk.

use super::layout::ClassKind;
use super::walk::Walk;

/// An object of a callback: its identifier (0: none), its tag, and (with addresses) its address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owner {
    pub id: u64,
    pub tag: i64,
    pub addr: u64,
}

impl Walk<'_> {
    /// The referee's identifier, and whether the VM should visit it: objects tagged before the walk once,
    /// objects the walk tags on their first report, any other object named by address always (the VM
    /// visits an object once however often it is asked). `None`: an address failed its check.
    pub(super) fn referee(&mut self, class_tag: i64, size: i64, tag_ptr: *mut i64, length: i32) -> Option<(u64, bool)> {
        let tag = unsafe { *tag_ptr };
        if tag != 0 {
            let id = self.ids.id_of(tag);
            if id == self.last_requested || (self.ids.is_reserved(id) && id >= self.walk_ids_from) {
                return Some((id, false));
            }
            self.last_requested = id;
            let first = self.visit_requested.insert(id);
            if first && self.read_fields && self.is_mirror(class_tag) {
                // A class object whose class the plan could not read: its statics are read after the walk.
                if self.plan.index_of(id).is_some_and(|c| !self.plan.get(c).fields_known) {
                    self.copy_late(tag_ptr, id, size);
                }
            }
            return Some((id, first));
        }
        let class = self.class_index(class_tag);
        let kind = class.map(|c| self.plan.get(c).kind);
        let is_object_array = length >= 0 && !matches!(kind, Some(ClassKind::PrimitiveArray(_)));
        let id = match self.addresses {
            Some(a) => {
                let Some(addr) = (unsafe { a.object(tag_ptr) }) else {
                    self.fail(format!("a referee at {:#x} is no object", unsafe { *(tag_ptr as *const u64).sub(2) }));
                    return None;
                };
                if length >= 0 && unsafe { a.array_length(addr) } != length {
                    self.fail(format!("the array at {addr:#x} does not hold its length {length} in its header"));
                    return None;
                }
                // The late objects' writer needs the lengths of arrays of classes the plan lacks.
                if is_object_array && class.is_none() {
                    self.side_lengths.insert(addr, length as u32);
                }
                let late = class.is_none_or(|c| !self.plan.get(c).fields_known || Some(c) == self.plan.class_class);
                if self.read_fields && length < 0 && late {
                    unsafe { self.late.copy(addr, addr, size as u64) };
                }
                addr
            }
            None => {
                let (new_tag, id) = match is_object_array.then(|| self.ids.object_array(length as u32)) {
                    Some(Some(t)) => t,
                    Some(None) => {
                        let t = self.ids.plain();
                        self.side_lengths.insert(t.1, length as u32);
                        t
                    }
                    None => self.ids.plain(),
                };
                unsafe { *tag_ptr = new_tag };
                id
            }
        };
        match (class, kind) {
            (Some(c), Some(ClassKind::Instance)) => {
                if Some(c) == self.plan.class_class {
                    // A class object the plan does not know: a primitive type's, or a class loaded since.
                    if self.addresses.is_some() {
                        unsafe { *tag_ptr = id as i64 };
                        self.visit_requested.insert(id);
                    }
                    self.late.mirrors.push(id);
                } else {
                    self.instance_sizes[c as usize] = size as u32;
                }
            }
            (_, Some(ClassKind::ObjectArray)) => self.array_sizes.observe(size as u64, length as u64),
            _ => {}
        }
        Some((id, true))
    }

    /// The referrer of a reference (`None`: an address failed its check; a root has id 0).
    pub(super) fn referrer(&mut self, referrer_tag_ptr: *mut i64, tag_ptr: *mut i64) -> Option<Owner> {
        let tag = if referrer_tag_ptr.is_null() { 0 } else { unsafe { *referrer_tag_ptr } };
        let Some(a) = self.addresses else {
            return Some(self.tagged(tag));
        };
        if referrer_tag_ptr.is_null() {
            return Some(Owner { id: 0, tag: 0, addr: 0 });
        }
        let Some(addr) = (unsafe { a.referrer(referrer_tag_ptr, tag_ptr) }) else {
            self.fail("a referrer is no object".into());
            return None;
        };
        Some(Owner { id: if tag != 0 { self.ids.id_of(tag) } else { addr }, tag, addr })
    }

    /// The object of a primitive field or array report (`None`: its address failed its check).
    pub(super) fn owner(&mut self, tag_ptr: *mut i64) -> Option<Owner> {
        let tag = unsafe { *tag_ptr };
        let Some(a) = self.addresses else {
            return Some(self.tagged(tag));
        };
        let Some(addr) = (unsafe { a.object(tag_ptr) }) else {
            self.fail("an object with values is no object".into());
            return None;
        };
        Some(Owner { id: if tag != 0 { self.ids.id_of(tag) } else { addr }, tag, addr })
    }

    fn is_mirror(&mut self, class_tag: i64) -> bool {
        let class = self.class_index(class_tag);
        class.is_some() && class == self.plan.class_class
    }

    /// Copies a tagged late object's bytes (its address is read, checked, only here).
    fn copy_late(&mut self, tag_ptr: *mut i64, id: u64, size: i64) {
        if let Some(addr) = self.addresses.and_then(|a| unsafe { a.object(tag_ptr) }) {
            unsafe { self.late.copy(id, addr, size as u64) };
        }
    }

    fn tagged(&self, tag: i64) -> Owner {
        Owner { id: if tag == 0 { 0 } else { self.ids.id_of(tag) }, tag, addr: 0 }
    }

    /// Stops the walk: object addresses cannot be trusted.
    pub(super) fn fail(&mut self, why: String) {
        self.failed.get_or_insert(why);
    }
}
