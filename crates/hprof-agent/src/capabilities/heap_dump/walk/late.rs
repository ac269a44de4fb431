//! Objects the walk cannot place because the plan does not know their class: the class objects of the
//! primitive types (int.class, …, which no class list contains), and anything of a class loaded between
//! the plan and the walk. Their values are kept as reported (and, where the walk reads primitive values
//! from memory rather than having them reported, a copy of their bytes); after the walk, when JVMTI and
//! JNI may be called again, their classes are looked up and their records written.

use super::heap_sink::{ClassValues, HeapSink};
use crate::capabilities::heap_dump::ids::DumpIds;
use crate::capabilities::heap_dump::naming::field_offsets::{bits_in, copy_values};
use crate::capabilities::heap_dump::plan::layout::{ClassKind, ClassPlan, store_value};
use crate::context::Context;
use hotspot::heap::ObjectAddresses;
use hprof_format::tags::BasicType;
use jvmti::{Jni, Jvmti};
use rustc_hash::{FxHashMap, FxHashSet};
use std::io;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LateValueKind {
    Field,
    Static,
    Element,
    Constant,
    Loader,
    Signers,
    Domain,
}

#[derive(Debug, Clone, Copy)]
struct LateValue {
    kind: LateValueKind,
    index: i32,
    ty: BasicType,
    bits: u64,
}

#[derive(Debug, Clone)]
struct LateObject {
    id: u64,
    /// The class object's identifier (for a class object itself: unused).
    class_id: u64,
    is_class: bool,
    values: std::ops::Range<usize>,
}

#[derive(Debug, Default)]
pub struct LateObjects {
    /// Class objects first met untagged.
    pub mirrors: Vec<u64>,
    objects: Vec<LateObject>,
    values: Vec<LateValue>,
    open: Option<usize>,
    /// Copies of objects' bytes, by identifier, for the primitive values their classes locate.
    raw: FxHashMap<u64, Box<[u8]>>,
    /// Sizes in the VM, by identifier, of the objects whose records a sink that prints sizes gets from
    /// here or that the fast lanes of the walk do not size: late objects, class objects of no loaded
    /// class, objects named before the walk.
    pub sizes: FxHashMap<u64, u64>,
}

/// Objects larger than this are not copied (a late object's primitive values then stay zero).
const MAX_COPY: u64 = 1 << 20;

/// What the lookup after the walk found.
#[derive(Debug, Default)]
pub struct Resolved {
    /// Class object identifier (as the walk tagged it) → class index in the plan.
    classes: FxHashMap<u64, u32>,
    /// Class objects written as instances of java.lang.Class: those of no loaded class, and the walk's
    /// identifiers of classes loaded while it ran.
    plain_mirrors: Vec<u64>,
}

impl LateObjects {
    pub fn begin(&mut self, id: u64, class_id: u64, is_class: bool) {
        let at = self.values.len();
        self.objects.push(LateObject { id, class_id, is_class, values: at..at });
        self.open = Some(self.objects.len() - 1);
    }

    /// The class object of the open (non-class) object.
    pub fn set_class(&mut self, class_id: u64) {
        if let Some(o) = self.open.map(|i| &mut self.objects[i])
            && !o.is_class
        {
            o.class_id = class_id;
        }
    }

    pub fn value(&mut self, kind: LateValueKind, index: i32, ty: BasicType, bits: u64) {
        if let Some(i) = self.open {
            self.values.push(LateValue { kind, index, ty, bits });
            self.objects[i].values.end = self.values.len();
        }
    }

    pub fn end(&mut self) {
        self.open = None;
    }

    /// The size in the VM of object `id`, where the walk noted it (0: not noted).
    pub fn size(&self, id: u64) -> u64 {
        self.sizes.get(&id).copied().unwrap_or(0)
    }

    /// Keeps a copy of the `size` bytes of the object `id` at `addr`, once (read without faulting; not
    /// kept if not readable, the object's primitive values then stay zero).
    pub fn copy(&mut self, addresses: &ObjectAddresses, id: u64, addr: u64, size: u64) {
        if size <= MAX_COPY
            && !self.raw.contains_key(&id)
            && let Some(bytes) = addresses.copy(addr, size)
        {
            self.raw.insert(id, bytes);
        }
    }

    /// Finds the classes of the late objects among the loaded classes (by their class objects' tags) and
    /// adds them to the plan. A class object that is no loaded class (a primitive type's, or one whose
    /// loading never completed, on which JVMTI class functions are not safe) is an instance of
    /// java.lang.Class.
    pub fn resolve(
        &self,
        ctx: &Context,
        jni: Jni,
        dump_env: Jvmti,
        plan: &mut ClassPlan,
        ids: &mut DumpIds,
    ) -> Resolved {
        let mut wanted: FxHashSet<u64> = self.mirrors.iter().copied().collect();
        for o in &self.objects {
            let class = if o.is_class { o.id } else { o.class_id };
            let known = plan.index_of(class).is_some_and(|i| plan.get(i).fields_known);
            if class != 0 && !known {
                wanted.insert(class);
            }
        }
        let mut resolved = Resolved::default();
        if wanted.is_empty() {
            return resolved;
        }
        for class in ctx.jvmti.loaded_classes().unwrap_or_default() {
            // Tagged by the walk, or (untagged for a walk by address) by its LOAD CLASS identifier.
            let id = match dump_env.tag(class) {
                Ok(t) if t != 0 => ids.id_of(t),
                _ => ctx.jvmti.tag(class).ok().and_then(|t| ctx.classes().by_tag(t)).map_or(0, |r| r.object_id),
            };
            if wanted.remove(&id)
                && let Some(index) = plan.add_late(ctx, jni, dump_env, ids, class)
            {
                resolved.classes.insert(id, index);
                // A class object first met in the walk got an identifier there, which references to it
                // carry; its CLASS DUMP has the one of its LOAD CLASS. The walk's stays an object too.
                if plan.get(index).id() != id {
                    resolved.plain_mirrors.push(id);
                }
            }
            jni.delete_local_ref(class);
        }
        resolved.plain_mirrors.extend(self.mirrors.iter().copied().filter(|id| wanted.contains(id)));
        // Class objects visited (and so kept as late objects) but of no loaded class.
        let listed: FxHashSet<u64> = self.mirrors.iter().copied().collect();
        resolved.plain_mirrors.extend(
            self.objects
                .iter()
                .filter(|o| o.is_class && wanted.contains(&o.id) && !listed.contains(&o.id))
                .map(|o| o.id),
        );
        resolved
    }

    /// Writes the late objects' records. Returns the class indexes whose CLASS DUMP it wrote.
    pub fn write(
        &self,
        resolved: &Resolved,
        plan: &ClassPlan,
        side_lengths: &FxHashMap<u64, u32>,
        sink: &mut dyn HeapSink,
    ) -> io::Result<(Vec<u32>, u64)> {
        let class_of = |id: u64| resolved.classes.get(&id).copied().or_else(|| plan.index_of(id));
        let mut written_classes = Vec::new();
        let mut unplaced = 0u64;
        let mut class_values = ClassValues::default();
        let mut values = Vec::new();
        for o in &self.objects {
            let vals = &self.values[o.values.clone()];
            if o.is_class {
                let Some(k) = class_of(o.id) else {
                    // No loaded class (CDS maps in class objects of classes not loaded yet): an instance of
                    // java.lang.Class, written with the plain mirrors below.
                    continue;
                };
                let dc = plan.get(k);
                class_values.reset(dc);
                for v in vals {
                    match v.kind {
                        LateValueKind::Static => match dc.static_slot(v.index) {
                            Some(i) if dc.statics[i].ty == v.ty => class_values.statics[i] = v.bits,
                            _ => unplaced += 1,
                        },
                        LateValueKind::Constant => class_values.constants.push((v.index as u16, v.bits)),
                        LateValueKind::Loader => class_values.loader = v.bits,
                        LateValueKind::Signers => class_values.signers = v.bits,
                        LateValueKind::Domain => class_values.domain = v.bits,
                        _ => {}
                    }
                }
                if let Some(raw) = self.raw.get(&o.id) {
                    for p in &dc.static_prims {
                        class_values.statics[p.at as usize] = bits_in(raw, p).unwrap_or(0);
                    }
                }
                sink.class_dump(k, dc, &class_values)?;
                written_classes.push(k);
                continue;
            }
            let Some(k) = class_of(o.class_id) else {
                unplaced += 1;
                continue;
            };
            let dc = plan.get(k);
            match dc.kind {
                ClassKind::Instance => {
                    values.clear();
                    values.resize(dc.instance_size as usize, 0);
                    for v in vals.iter().filter(|v| v.kind == LateValueKind::Field) {
                        match dc.instance_slot(v.index) {
                            Some(slot) if slot.ty == v.ty => store_value(&mut values, slot, v.bits),
                            _ => unplaced += 1,
                        }
                    }
                    if let Some(raw) = self.raw.get(&o.id) {
                        copy_values(raw, &dc.prims, &mut values);
                    }
                    sink.instance(o.id, dc, self.size(o.id), &values)?;
                }
                ClassKind::ObjectArray => {
                    let elements = vals.iter().filter(|v| v.kind == LateValueKind::Element);
                    let longest = elements.clone().map(|v| v.index as u32 + 1).max().unwrap_or(0);
                    let length = side_lengths.get(&o.id).copied().unwrap_or(longest);
                    sink.object_array_begin(o.id, dc, self.size(o.id), length)?;
                    for v in elements {
                        sink.object_array_element(v.index as u32, v.bits)?;
                    }
                    sink.object_array_end()?;
                }
                // Primitive arrays are written during the walk whatever their class.
                ClassKind::PrimitiveArray(_) => {}
            }
        }
        if let Some(class_class) = plan.class_class {
            let dc = plan.get(class_class);
            let zeros = vec![0u8; dc.instance_size as usize];
            for &id in &resolved.plain_mirrors {
                // As HotSpot dumps the class objects of the primitive types.
                sink.instance(id, dc, self.size(id), &zeros)?;
            }
        }
        Ok((written_classes, unplaced))
    }
}
