//! The classes of one dump and their layouts, gathered before the heap walk (heap callbacks may not call
//! JVMTI or JNI, so everything they need about a class must be known beforehand).
//!
//! The walk reports a field by its JVMTI index, which the JVMTI specification defines over the class and
//! its superclasses: first the fields of every interface the class implements (directly or through its
//! superclasses and superinterfaces), then those of java.lang.Object, …, down to the class's own, each
//! class's fields in GetClassFields order, statics included. An INSTANCE DUMP lists the instance field
//! values in another order: the class's own fields, then its superclass's, up to Object. A layout maps the
//! one to the other.

use crate::capabilities::heap_dump::ids::{DumpIds, tag_object};
use crate::classes::ClassRecord;
use crate::context::Context;
use hotspot::heap::FieldOffsets;
use hprof_format::ID_SIZE;
use hprof_format::binary::HeapWriter;
use hprof_format::tags::BasicType;
use jvmti::{FieldInfo, Jni, Jvmti, JvmtiError, sys};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

/// What the objects of a class look like in a dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassKind {
    Instance,
    ObjectArray,
    PrimitiveArray(BasicType),
}

/// A field as a CLASS DUMP declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDecl {
    pub name: Arc<str>,
    pub ty: BasicType,
}

/// One instance field value in an INSTANCE DUMP: where it starts among the values, its type, its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueSlot {
    pub offset: u32,
    pub ty: BasicType,
    pub name: Arc<str>,
}

const NO_SLOT: u32 = u32::MAX;

/// Writes a value of `slot`'s type into an instance's values (hprof-format places it).
#[inline]
pub fn store_value(values: &mut [u8], slot: &ValueSlot, bits: u64) {
    put_value(values, slot.offset, slot.ty, bits);
}

/// Writes a value of type `ty` at `at` into an instance's values, big-endian, at its size in the file.
#[inline]
pub fn put_value(values: &mut [u8], at: u32, ty: BasicType, bits: u64) {
    const VALUES: HeapWriter = HeapWriter { id_size: ID_SIZE };
    VALUES.place_value(values, at, ty, bits);
}

/// Where in an instance's values its reference fields go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReferenceOffsets<'a> {
    base: u32,
    offsets: &'a [u32],
}

impl ReferenceOffsets<'_> {
    /// Where the reference field reported with JVMTI index `index` goes.
    #[inline]
    pub fn get(&self, index: i32) -> Option<u32> {
        let i = (index as u32).checked_sub(self.base)?;
        self.offsets.get(i as usize).copied().filter(|&o| o != NO_SLOT)
    }
}

/// Entries of an [`IndexTable`] at most (4 bytes each).
const MAX_INDEX_TABLE: u64 = 1 << 22;

/// Class indexes by class identifier.
#[derive(Debug, Default)]
pub struct IndexTable {
    base: u64,
    table: Vec<u32>,
}

impl IndexTable {
    #[inline]
    pub fn get(&self, class_id: u64) -> Option<u32> {
        let i = class_id.wrapping_sub(self.base);
        self.table.get(usize::try_from(i).ok()?).copied().filter(|&k| k != u32::MAX)
    }
}

/// A primitive value to read from an object's memory: its offset in the object, where it goes (a byte
/// offset in the instance values, or the index of a static), its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prim {
    pub vm: u32,
    pub at: u32,
    pub ty: BasicType,
}

#[derive(Debug)]
pub struct DumpClass {
    pub record: Arc<ClassRecord>,
    /// The record's object identifier, at hand (every instance record names it).
    object_id: u64,
    pub kind: ClassKind,
    /// java.lang.Object for arrays and interfaces, as HotSpot writes them; 0 for Object.
    pub super_id: u64,
    pub loader_id: u64,
    /// The class's own instance fields, in INSTANCE DUMP order.
    pub fields: Vec<FieldDecl>,
    pub statics: Vec<FieldDecl>,
    /// Every instance field value of the class and its superclasses, in INSTANCE DUMP order.
    pub values: Vec<ValueSlot>,
    /// Bytes of an INSTANCE DUMP's values (references count 8).
    pub instance_size: u32,
    /// False when GetClassFields failed (a class not yet prepared): its objects are resolved after the walk.
    pub fields_known: bool,
    index_base: u32,
    /// JVMTI field index - `index_base` → index into `values` (NO_SLOT for statics).
    instance_slots: Vec<u32>,
    /// JVMTI field index - `index_base` → offset in the values of a reference field (NO_SLOT: none).
    ref_offsets: Vec<u32>,
    static_base: u32,
    /// JVMTI field index - `static_base` → index into `statics` (NO_SLOT for instance fields).
    static_slots: Vec<u32>,
    /// The jfieldIDs of `values` and of `statics`, in their orders.
    value_fields: Vec<usize>,
    static_fields: Vec<usize>,
    /// The primitive instance values and statics, where [`ClassPlan::locate`] found them.
    pub prims: Vec<Prim>,
    pub static_prims: Vec<Prim>,
    /// References HotSpot's dumper writes as statics after the class's own (`<resolved_references>`,
    /// `<init_lock>`): what only its metadata and an injected field hold (see `super::held`).
    pub vm_statics: Vec<(&'static str, u64)>,
}

impl DumpClass {
    /// A class with no fields, for tests of the writers.
    #[cfg(test)]
    pub fn bare(object_id: u64, name: &str, kind: ClassKind) -> DumpClass {
        let record = ClassRecord {
            serial: hprof_format::serial_base::CLASS + 1,
            object_id,
            signature: String::new(),
            name: name.into(),
            unloaded: Default::default(),
        };
        DumpClass::empty(Arc::new(record), kind)
    }

    /// The class of `record`, of `kind`, before its fields are laid out: no superclass, loader or field.
    fn empty(record: Arc<ClassRecord>, kind: ClassKind) -> DumpClass {
        DumpClass {
            object_id: record.object_id,
            record,
            kind,
            super_id: 0,
            loader_id: 0,
            fields: Vec::new(),
            statics: Vec::new(),
            values: Vec::new(),
            instance_size: 0,
            fields_known: true,
            index_base: 0,
            instance_slots: Vec::new(),
            ref_offsets: Vec::new(),
            static_base: 0,
            static_slots: Vec::new(),
            value_fields: Vec::new(),
            static_fields: Vec::new(),
            prims: Vec::new(),
            static_prims: Vec::new(),
            vm_statics: Vec::new(),
        }
    }

    pub fn id(&self) -> u64 {
        self.object_id
    }

    pub fn name(&self) -> &str {
        &self.record.name
    }

    /// The value slot of an instance field reported with JVMTI index `index`.
    pub fn instance_slot(&self, index: i32) -> Option<&ValueSlot> {
        let i = (index as u32).checked_sub(self.index_base)?;
        let slot = *self.instance_slots.get(i as usize)?;
        self.values.get(slot as usize)
    }

    /// Where in the values reference fields go, by JVMTI field index.
    pub fn reference_offsets(&self) -> ReferenceOffsets<'_> {
        ReferenceOffsets { base: self.index_base, offsets: &self.ref_offsets }
    }

    /// The position in `statics` of a static field reported with JVMTI index `index`.
    pub fn static_slot(&self, index: i32) -> Option<usize> {
        let i = (index as u32).checked_sub(self.static_base)?;
        let slot = *self.static_slots.get(i as usize)?;
        (slot != NO_SLOT).then_some(slot as usize)
    }
}

/// What JVMTI and JNI say about one class, before layouts are computed.
#[derive(Debug)]
struct RawClass {
    record: Arc<ClassRecord>,
    /// Declared fields, statics included; `None` if the class is not prepared yet.
    fields: Option<Vec<FieldInfo>>,
    super_id: u64,
    interfaces: Vec<u64>,
    loader_id: u64,
    is_interface: bool,
}

/// The classes of one dump, found by the identifier their class objects are tagged with.
#[derive(Debug, Default)]
pub struct ClassPlan {
    pub classes: Vec<DumpClass>,
    by_id: FxHashMap<u64, u32>,
    raw: FxHashMap<u64, RawClass>,
    pub object_class_id: u64,
    /// The index of java.lang.Class: objects of this class are class objects.
    pub class_class: Option<u32>,
    /// Set once [`ClassPlan::locate`] has found every primitive field (late classes are located too).
    located: Option<FieldOffsets>,
    /// Classes of the plan laid out again after the walk (not prepared when the plan was made): their
    /// field names are written again with the late classes'.
    pub relaid: Vec<u32>,
    /// Objects only class objects' own fields hold ([`super::held`]).
    pub held: super::held::HeldByClasses,
    /// Local references to every class loaded when the plan was made (its one GetLoadedClasses), for
    /// [`super::held`] to read the same classes; dropped by [`ClassPlan::release_loaded`].
    loaded: Vec<sys::jclass>,
}

const ACC_STATIC: i32 = 0x0008;
const ACC_INTERFACE: i32 = 0x0200;

impl ClassPlan {
    /// Registers every loaded class (array classes included, which get no ClassPrepare event), tags each
    /// class object in the dump's environment with its LOAD CLASS identifier, tags class loaders, and
    /// computes the layouts.
    pub fn build(ctx: &Context, jni: Jni, dump_env: Jvmti, ids: &mut DumpIds) -> Result<ClassPlan, String> {
        let loaded = ctx.jvmti.loaded_classes().map_err(|e| format!("GetLoadedClasses failed: {e}"))?;
        let mut plan = ClassPlan::default();
        let mut order = Vec::with_capacity(loaded.len());
        for &class in &loaded {
            if let Some(raw) = jni.with_local_frame(16, || gather(ctx, jni, dump_env, ids, class, false)) {
                order.push(raw.record.object_id);
                plan.raw.insert(raw.record.object_id, raw);
            }
        }
        plan.loaded = loaded;
        plan.object_class_id = plan
            .raw
            .values()
            .find(|r| r.record.signature == "Ljava/lang/Object;")
            .map(|r| r.record.object_id)
            .unwrap_or(0);
        for id in order {
            plan.add_layout(id);
        }
        plan.class_class =
            plan.classes.iter().position(|c| c.record.signature == "Ljava/lang/Class;").map(|i| i as u32);
        Ok(plan)
    }

    /// Adds a class met only during the walk (loaded after the plan was made). Returns its index.
    pub fn add_late(
        &mut self,
        ctx: &Context,
        jni: Jni,
        dump_env: Jvmti,
        ids: &mut DumpIds,
        class: sys::jclass,
    ) -> Option<u32> {
        let raw = jni.with_local_frame(16, || gather(ctx, jni, dump_env, ids, class, true))?;
        let id = raw.record.object_id;
        let existing = self.by_id.get(&id).copied();
        if let Some(i) = existing
            && self.classes[i as usize].fields_known
        {
            return Some(i);
        }
        // Its superclass and interfaces may be late too.
        let mut missing: Vec<sys::jclass> = Vec::new();
        let sup = jni.superclass(class);
        if !sup.is_null() {
            missing.push(sup);
        }
        missing.extend(ctx.jvmti.implemented_interfaces(class).unwrap_or_default());
        for c in missing {
            // Absent, or present but not prepared when the plan was made (javac loads a superclass long
            // before it links it): its fields, which number the late class's, are read now.
            if let Some(r) = ctx.class_record(c)
                && self.raw.get(&r.object_id).is_none_or(|raw| raw.fields.is_none())
            {
                self.add_late(ctx, jni, dump_env, ids, c);
            }
            jni.delete_local_ref(c);
        }
        self.raw.insert(id, raw);
        match existing {
            // Known, but not prepared when the plan was made: its fields can be read now.
            Some(i) => {
                self.classes[i as usize] = self.layout_located(id);
                self.relaid.push(i);
                Some(i)
            }
            None => Some(self.add_layout(id)),
        }
    }

    /// Every class loaded when the plan was made, planned or not (a class whose record could not be made
    /// still has a class object), as JNI local references valid until [`ClassPlan::release_loaded`].
    pub fn loaded(&self) -> &[sys::jclass] {
        &self.loaded
    }

    /// Deletes the local references of [`ClassPlan::loaded`], once nothing before the walk needs them.
    pub fn release_loaded(&mut self, jni: Jni) {
        for class in self.loaded.drain(..) {
            jni.delete_local_ref(class);
        }
    }

    /// The identifier of java.lang.Class's class object (0: unknown).
    pub fn class_class_id(&self) -> u64 {
        self.class_class.map_or(0, |c| self.get(c).id())
    }

    /// Gives each class the statics HotSpot's dumper would add to it, from what `held` holds as such; what
    /// belongs to no class of the plan is written as a root after all.
    pub fn add_vm_statics(&mut self) {
        for (class_id, statics) in std::mem::take(&mut self.held.statics) {
            match self.by_id.get(&class_id) {
                Some(&i) => self.classes[i as usize].vm_statics = statics,
                None => statics.iter().for_each(|(_, id)| _ = self.held.in_statics.remove(id)),
            }
        }
    }

    pub fn index_of(&self, class_id: u64) -> Option<u32> {
        self.by_id.get(&class_id).copied()
    }

    /// The classes' indexes by identifier as a table, for the walk's many look-ups: the identifiers come
    /// from one counter and are dense. `None` if they are too spread out.
    pub fn index_table(&self) -> Option<IndexTable> {
        let lo = self.by_id.keys().copied().min()?;
        let hi = self.by_id.keys().copied().max()?;
        if hi - lo >= MAX_INDEX_TABLE {
            return None;
        }
        let mut table = vec![u32::MAX; (hi - lo + 1) as usize];
        for (&id, &index) in &self.by_id {
            table[(id - lo) as usize] = index;
        }
        Some(IndexTable { base: lo, table })
    }

    pub fn get(&self, index: u32) -> &DumpClass {
        &self.classes[index as usize]
    }

    pub fn len(&self) -> usize {
        self.classes.len()
    }

    /// Finds every primitive field's place in its objects (instance values) and class object (statics).
    /// False if some field's cannot be found: the dump then has the JVM report primitive values.
    pub fn locate(&mut self, offsets: FieldOffsets) -> bool {
        let mut all = true;
        for class in &mut self.classes {
            all &= locate_class(class, &offsets);
        }
        self.located = all.then_some(offsets);
        all
    }

    fn layout_located(&self, id: u64) -> DumpClass {
        let mut class = self.layout(id);
        if let Some(offsets) = self.located {
            // A late class whose fields cannot be located keeps its primitive values at zero.
            locate_class(&mut class, &offsets);
        }
        class
    }

    fn add_layout(&mut self, id: u64) -> u32 {
        if let Some(&i) = self.by_id.get(&id) {
            return i;
        }
        let class = self.layout_located(id);
        let index = self.classes.len() as u32;
        self.classes.push(class);
        self.by_id.insert(id, index);
        index
    }

    fn field_count(&self, id: u64) -> u32 {
        self.raw.get(&id).and_then(|r| r.fields.as_ref()).map_or(0, |f| f.len() as u32)
    }

    /// Fields of `id` and all its superclasses (statics included): where `id`'s subclasses start counting.
    fn chain_field_count(&self, mut id: u64) -> u32 {
        let mut n = 0;
        while let Some(r) = self.raw.get(&id) {
            n += self.field_count(id);
            id = r.super_id;
        }
        n
    }

    /// Every interface `id` implements: its own, their superinterfaces, and its superclasses'.
    fn all_interfaces(&self, id: u64, out: &mut FxHashSet<u64>) {
        let mut stack: Vec<u64> = Vec::new();
        let mut class = id;
        while let Some(r) = self.raw.get(&class) {
            stack.extend(&r.interfaces);
            class = if r.is_interface { 0 } else { r.super_id };
        }
        while let Some(i) = stack.pop() {
            if out.insert(i)
                && let Some(r) = self.raw.get(&i)
            {
                stack.extend(&r.interfaces);
            }
        }
    }

    fn layout(&self, id: u64) -> DumpClass {
        let raw = &self.raw[&id];
        let record = raw.record.clone();
        let kind = match record.signature.strip_prefix('[') {
            None => ClassKind::Instance,
            Some(_) => match hprof_format::names::array_element_type(&record.signature) {
                Some(BasicType::Object) | None => ClassKind::ObjectArray,
                Some(t) => ClassKind::PrimitiveArray(t),
            },
        };
        let super_id = if kind != ClassKind::Instance || raw.is_interface {
            if id == self.object_class_id { 0 } else { self.object_class_id }
        } else {
            raw.super_id
        };
        let mut class = DumpClass {
            super_id,
            loader_id: raw.loader_id,
            fields_known: raw.fields.is_some() || kind != ClassKind::Instance,
            ..DumpClass::empty(record, kind)
        };
        if kind != ClassKind::Instance {
            return class;
        }
        let mut interfaces = FxHashSet::default();
        self.all_interfaces(id, &mut interfaces);
        let interface_fields: u32 = interfaces.iter().map(|&i| self.field_count(i)).sum();

        // Statics: the class's own fields start after its superclasses' (or, for an interface, after its
        // superinterfaces').
        class.static_base =
            if raw.is_interface { interface_fields } else { interface_fields + self.chain_field_count(raw.super_id) };
        for f in raw.fields.iter().flatten() {
            if f.modifiers & ACC_STATIC != 0 {
                class.static_slots.push(class.statics.len() as u32);
                class.statics.push(FieldDecl { name: f.name.as_str().into(), ty: field_type(&f.signature) });
                class.static_fields.push(f.field as usize);
            } else {
                class.static_slots.push(NO_SLOT);
            }
        }
        if raw.is_interface {
            return class;
        }

        // Instance values: own fields first, then each superclass's; indexes count from Object down.
        class.index_base = interface_fields;
        class.instance_slots = vec![NO_SLOT; self.chain_field_count(id) as usize];
        let mut offset = 0u32;
        let mut s = id;
        while let Some(r) = self.raw.get(&s) {
            let first_index = self.chain_field_count(r.super_id);
            for (k, f) in r.fields.iter().flatten().enumerate() {
                if f.modifiers & ACC_STATIC != 0 {
                    continue;
                }
                let ty = field_type(&f.signature);
                let decl = FieldDecl { name: f.name.as_str().into(), ty };
                class.instance_slots[(first_index as usize) + k] = class.values.len() as u32;
                class.values.push(ValueSlot { offset, ty, name: decl.name.clone() });
                class.value_fields.push(f.field as usize);
                if s == id {
                    class.fields.push(decl);
                }
                offset += ty.size(ID_SIZE);
            }
            s = r.super_id;
        }
        class.instance_size = offset;
        class.ref_offsets = (class.instance_slots.iter())
            .map(|&s| match class.values.get(s as usize) {
                Some(v) if v.ty == BasicType::Object => v.offset,
                _ => NO_SLOT,
            })
            .collect();
        class
    }
}

/// Fills `class.prims` and `class.static_prims`; false (and both empty) if a field's place is unknown.
fn locate_class(class: &mut DumpClass, offsets: &FieldOffsets) -> bool {
    let prims: Option<Vec<Prim>> = (class.values.iter().zip(&class.value_fields))
        .filter(|(slot, _)| slot.ty != BasicType::Object)
        .map(|(slot, &f)| Some(Prim { vm: offsets.instance(f)?, at: slot.offset, ty: slot.ty }))
        .collect();
    let statics: Option<Vec<Prim>> = (class.statics.iter().zip(&class.static_fields).enumerate())
        .filter(|(_, (decl, _))| decl.ty != BasicType::Object)
        .map(|(i, (decl, &f))| Some(Prim { vm: offsets.static_field(f)?, at: i as u32, ty: decl.ty }))
        .collect();
    match (prims, statics) {
        (Some(p), Some(s)) => {
            (class.prims, class.static_prims) = (p, s);
            true
        }
        _ => {
            (class.prims, class.static_prims) = (Vec::new(), Vec::new());
            false
        }
    }
}

fn field_type(signature: &str) -> BasicType {
    signature.bytes().next().and_then(BasicType::from_descriptor).unwrap_or(BasicType::Object)
}

/// Reads one class: registers it (LOAD CLASS), tags its class object and its loader in the dump's
/// environment, and collects its fields, superclass and interfaces. Runs inside a JNI local frame.
///
/// JVMTI lists the fields of prepared classes only, yet objects of a class that is loaded but not linked
/// exist (CDS maps them in with the class). With `link`, such a class is linked first, as reflection
/// does (no initializer runs).
fn gather(
    ctx: &Context,
    jni: Jni,
    dump_env: Jvmti,
    ids: &mut DumpIds,
    class: sys::jclass,
    link: bool,
) -> Option<RawClass> {
    let record = ctx.class_record(class)?;
    dump_env.set_tag(class, record.object_id as i64).ok()?;
    ids.tagged(jni, class, record.object_id, true);
    let jvmti = ctx.jvmti;
    let fields = match jvmti.field_infos(class) {
        Err(JvmtiError(sys::JVMTI_ERROR_CLASS_NOT_PREPARED)) if link => {
            link_class(jni, class);
            jvmti.field_infos(class).ok()
        }
        r => r.ok(),
    };
    let sup = jni.superclass(class);
    let super_id = if sup.is_null() { 0 } else { ctx.class_record(sup).map_or(0, |r| r.object_id) };
    let interfaces = jvmti
        .implemented_interfaces(class)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|i| ctx.class_record(i).map(|r| r.object_id))
        .collect();
    let loader = jvmti.class_loader(class).unwrap_or(std::ptr::null_mut());
    let loader_id = if loader.is_null() { 0 } else { tag_object(jni, dump_env, ids, loader) };
    let is_interface = jvmti.class_modifiers(class).map(|m| m & ACC_INTERFACE != 0).unwrap_or(false);
    Some(RawClass { record, fields, super_id, interfaces, loader_id, is_interface })
}

/// Links every loaded class that is not linked yet, so that a later dump can read its fields. Objects of
/// such classes exist (the CDS archive maps them in with their classes: 57 classes on JDK 25), and a dump
/// on a full heap cannot link a class then: linking allocates (an OutOfMemoryError), and the dump could
/// not place those objects' values. Returns how many classes it linked.
pub fn link_unprepared(ctx: &Context, jni: Jni) -> usize {
    const READY: u32 = sys::JVMTI_CLASS_STATUS_PREPARED
        | sys::JVMTI_CLASS_STATUS_ARRAY
        | sys::JVMTI_CLASS_STATUS_PRIMITIVE
        | sys::JVMTI_CLASS_STATUS_ERROR;
    let Some(link) = Linker::new(jni) else { return 0 };
    let mut linked = 0;
    for class in ctx.jvmti.loaded_classes().unwrap_or_default() {
        if ctx.jvmti.class_status(class).is_ok_and(|s| s & READY == 0) {
            link.link(jni, class);
            linked += 1;
        }
        jni.delete_local_ref(class);
    }
    link.release(jni);
    linked
}

/// Links a class as reflection does, before it lists fields (no initializer runs): through
/// `Class.getDeclaredFields0(true)`, the native behind `getDeclaredFields` that neither caches its answer
/// in the class's reflection data nor lists the non-public fields (so it allocates little), or where a JDK
/// lacks it, `getDeclaredFields()`.
struct Linker {
    class_class: sys::jclass,
    method: sys::jmethodID,
    public_only: bool,
}

impl Linker {
    fn new(jni: Jni) -> Option<Linker> {
        let class_class = jni.find_class(c"java/lang/Class").ok()?;
        let (method, public_only) =
            match jni.method_id(class_class, c"getDeclaredFields0", c"(Z)[Ljava/lang/reflect/Field;") {
                Ok(m) => (m, true),
                Err(_) => {
                    jni.exception_clear();
                    match jni.method_id(class_class, c"getDeclaredFields", c"()[Ljava/lang/reflect/Field;") {
                        Ok(m) => (m, false),
                        Err(_) => {
                            jni.exception_clear();
                            jni.delete_local_ref(class_class);
                            return None;
                        }
                    }
                }
            };
        Some(Linker { class_class, method, public_only })
    }

    fn link(&self, jni: Jni, class: sys::jclass) {
        let args = [sys::jvalue { z: 1 }];
        let args: &[sys::jvalue] = if self.public_only { &args } else { &[] };
        if let Ok(fields) = jni.call_object(class, self.method, args) {
            jni.delete_local_ref(fields);
        }
        jni.exception_clear();
    }

    fn release(self, jni: Jni) {
        jni.delete_local_ref(self.class_class);
    }
}

/// Links one class (see [`Linker`]).
fn link_class(jni: Jni, class: sys::jclass) {
    if let Some(link) = Linker::new(jni) {
        link.link(jni, class);
        link.release(jni);
    }
}
