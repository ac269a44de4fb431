//! The heap walk: one JVMTI FollowReferences pass that names objects as it meets them and streams their
//! records to the sink, holding no more than one object's values at a time.
//!
//! FollowReferences reports the roots first, then visits each reachable object once, reporting all of
//! that object's references (with field or array indexes), primitive field values and array contents one
//! after the other before moving to the next object. So the walk keeps only the object being visited:
//! when a callback names another referrer, the previous object is complete and its record is written.
//! Objects are named by their addresses (`hotspot::heap::ObjectAddresses`) or, where those cannot be trusted, by tags
//! ([`super::ids`]); the walk reports each callback's raw objects to the identify stage through
//! [`identity::Identify`], which turns them into identifiers either way.
//!
//! Heap callbacks ([`callbacks`]) run inside a VM operation on the VM thread: no JNI, no JVMTI, no
//! lock a Java thread could hold. Everything they need was gathered before ([`ClassPlan`], [`ThreadRoots`]).

mod array_sizes;
pub(super) mod callbacks;
mod enter;
pub(super) mod heap_sink;
pub(super) mod identity;
pub(super) mod late;

use super::naming::Naming;
use super::plan::layout::{ClassPlan, ReferenceOffsets, store_value};
use super::plan::threads::{SeenFrame, ThreadRoots};
use array_sizes::ArraySizes;
use callbacks::{ABORT, HeapVisitor, VISIT, basic_type, primitive_array_name, primitive_bits};
use heap_sink::{ClassValues, HeapSink, Root};
use hotspot::heap::ObjectAddresses;
use hprof_format::ID_SIZE;
use hprof_format::tags::BasicType;
use identity::{Identify, Owner, Reported, Seen};
use jvmti::heap_walk::{HeapReference, PrimitiveArray, PrimitiveField, ReferenceInfo, TagSlot};
use jvmti::{Jvmti, sys};
use late::{LateObjects, LateValueKind};
use rustc_hash::{FxHashMap, FxHashSet};
use std::io;

/// The object whose references are being reported.
#[derive(Debug)]
pub(super) enum Current<'a> {
    None,
    Instance {
        id: u64,
        class: u32,
        size: u64,
        refs: ReferenceOffsets<'a>,
    },
    ObjectArray,
    /// An object array whose length its tag does not carry (never expected): elements are kept.
    UnsizedArray {
        id: u64,
        class: u32,
        elements: Vec<(u32, u64)>,
    },
    Class {
        class: u32,
    },
    /// Of a class the plan does not know: values go to [`LateObjects`].
    Late,
    /// Written already (primitive arrays) or not to be written.
    Done,
}

/// Counts for messages and tests.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WalkStats {
    pub objects: u64,
    pub roots: u64,
    /// Values the layout could not place (index out of range or type differs): expected to stay 0.
    pub mismatches: u64,
}

pub struct Walk<'a, I> {
    pub(super) plan: &'a ClassPlan,
    threads: &'a ThreadRoots,
    /// Who the callbacks' objects are.
    identify: I,
    /// Objects are named by their addresses; `None`: by tags.
    pub(super) addresses: Option<ObjectAddresses>,
    /// Primitive values are read from memory (with addresses), not reported by the JVM.
    pub(super) read_fields: bool,
    pub(super) sink: &'a mut dyn HeapSink,
    pub(super) late: &'a mut LateObjects,
    pub(super) current_id: u64,
    /// The object being visited, as [`Identify::referrer`] found it (its callbacks come one after the other).
    pub(super) current_owner: Owner,
    pub(super) current: Current<'a>,
    pub(super) values: Vec<u8>,
    pub(super) class_values: ClassValues,
    /// With addresses, for a sink that prints sizes: the sizes of objects reported, until visited.
    pub(super) pending_sizes: Option<FxHashMap<u64, u32>>,
    /// The sink prints sizes (text): objects the per-class sizes miss are sized one by one.
    pub(super) wants_sizes: bool,
    monitors: FxHashSet<u64>,
    /// Lengths of object arrays their tags cannot carry, or (with addresses) of a class the plan lacks.
    pub(super) side_lengths: &'a mut FxHashMap<u64, u32>,
    /// Per class: its instances' size in the VM, learned from the walk.
    pub(super) instance_sizes: Vec<u32>,
    pub(super) array_sizes: ArraySizes,
    /// Per class: CLASS DUMP written.
    pub emitted: Vec<bool>,
    /// Frames holding roots, for the threads' traces.
    pub seen_frames: Vec<SeenFrame>,
    /// Thread objects reported as roots, and their serials: their records wait for the traces.
    pub thread_objects: Vec<(u64, u32)>,
    next_jni_global: u64,
    pub error: Option<io::Error>,
    /// What made object addresses untrustworthy: the walk stops, to be made again with tags.
    pub failed: Option<String>,
    /// For tests of that: `HPROF_HEAP_DUMP_TEST_FAIL=n` fails the n-th callback of a walk by address.
    fail_countdown: u64,
    /// [`Walk::start`] is still to run.
    pub(super) starting: bool,
    /// With addresses, where no sizes are wanted: the short path for members ([`Walk::member`]).
    pub(super) members_by_address: Option<ObjectAddresses>,
    pub panicked: bool,
    pub stats: WalkStats,
}

impl<'a, I: Identify> Walk<'a, I> {
    pub fn new(
        plan: &'a ClassPlan,
        threads: &'a ThreadRoots,
        identify: I,
        naming: &Naming,
        side_lengths: &'a mut FxHashMap<u64, u32>,
        sink: &'a mut dyn HeapSink,
        late: &'a mut LateObjects,
    ) -> Walk<'a, I> {
        let wants_sizes = sink.wants_sizes();
        Walk {
            plan,
            threads,
            identify,
            addresses: naming.addresses(),
            read_fields: naming.reads_fields(),
            sink,
            late,
            current_id: 0,
            current_owner: Owner::NONE,
            current: Current::None,
            values: Vec::new(),
            class_values: ClassValues::default(),
            pending_sizes: (naming.addresses().is_some() && wants_sizes).then(FxHashMap::default),
            wants_sizes,
            monitors: FxHashSet::default(),
            side_lengths,
            instance_sizes: vec![0; plan.len()],
            array_sizes: ArraySizes::default(),
            emitted: vec![false; plan.len()],
            seen_frames: Vec::new(),
            thread_objects: Vec::new(),
            next_jni_global: 1,
            error: None,
            failed: None,
            fail_countdown: naming.addresses().map_or(0, |_| test_failure()),
            starting: true,
            members_by_address: naming.addresses().filter(|_| !wants_sizes),
            panicked: false,
            stats: WalkStats::default(),
        }
    }

    /// Writes the monitor roots found before the walk, then walks the heap from the roots.
    pub fn run(&mut self, dump_env: Jvmti) -> Result<(), String> {
        for &id in &self.threads.monitors {
            self.monitors.insert(id);
            self.emit_root(&Root::MonitorUsed { id });
        }
        // Each primitive field reported costs the JVM two tag look-ups: read from memory where possible.
        let result = dump_env.walk_references(std::ptr::null_mut(), !self.read_fields, self);
        self.finish_current();
        if self.error.is_some() {
            // The caller takes the I/O error from `error`.
            return Err("cannot write the heap dump".into());
        }
        if let Some(why) = &self.failed {
            return Err(format!("object addresses failed a check: {why}"));
        }
        if self.panicked {
            return Err("the heap walk stopped after an internal error".into());
        }
        result.map_err(|e| format!("FollowReferences failed: {e}"))
    }

    fn mismatch(&mut self, class: u32, what: &str, index: i32) {
        self.stats.mismatches += 1;
        if self.stats.mismatches <= 20 && std::env::var_os("HPROF_HEAP_DUMP_STATS").is_some() {
            eprintln!("mismatch: {} {what} index {index}", self.plan.get(class).name());
        }
    }

    /// The identify stage, with what it learns for the walk's tables.
    #[inline(always)]
    fn identify(&mut self) -> (&mut I, Seen<'_>) {
        let seen = Seen {
            late: &mut *self.late,
            instance_sizes: &mut self.instance_sizes,
            array_sizes: &mut self.array_sizes,
            pending_sizes: &mut self.pending_sizes,
            side_lengths: &mut *self.side_lengths,
            wants_sizes: self.wants_sizes,
            read_fields: self.read_fields,
        };
        (&mut self.identify, seen)
    }

    /// Stops the walk: object addresses cannot be trusted.
    pub(super) fn fail(&mut self, why: String) {
        self.failed.get_or_insert(why);
    }

    /// `Ok`'s value; an `Err` fails the walk.
    #[inline(always)]
    fn checked<T>(&mut self, result: Result<T, String>) -> Option<T> {
        result.map_err(|why| self.fail(why)).ok()
    }

    fn emit_root(&mut self, root: &Root<'_>) {
        self.stats.roots += 1;
        if let Err(e) = self.sink.root(root) {
            self.error.get_or_insert(e);
        }
    }

    /// A stack root's thread, by its tag or (objects named by address) its Java thread id.
    fn thread_of(&self, thread_tag: i64, thread_id: i64) -> u32 {
        if thread_tag != 0 {
            return self.threads.get(self.identify.id_of_tag(thread_tag)).map_or(0, |t| t.serial);
        }
        self.threads.serial_of_tid(thread_id).unwrap_or(0)
    }

    /// False once the walk is to stop.
    #[inline(always)]
    fn ready(&mut self, callback: &TagSlot<'_>) -> bool {
        if self.starting {
            self.start(callback);
        }
        self.error.is_none() && self.failed.is_none()
    }

    /// On the walk's first callback, inside the safepoint: the objects named before the walk are found by
    /// address. (Runs again on every callback while a test failure counts down.)
    #[cold]
    fn start(&mut self, callback: &TagSlot<'_>) {
        let (identify, mut seen) = self.identify();
        let started = identify.start(callback, &mut seen);
        let Some(started) = self.checked(started) else { return };
        self.addresses = started.addresses;
        if self.members_by_address.is_some() {
            self.members_by_address = started.addresses;
        }
        // The short path tells class objects by their class word; without one it never applies.
        if !started.class_objects_by_word {
            self.members_by_address = None;
        }
        if self.fail_countdown != 0 {
            self.fail_countdown -= 1;
            if self.fail_countdown == 0 {
                self.fail("HPROF_HEAP_DUMP_TEST_FAIL is set".into());
            }
        }
        self.starting = self.fail_countdown != 0;
    }

    fn root(&mut self, kind: u32, info: ReferenceInfo<'_>, id: u64) {
        match kind {
            // Held for the walk by the dump itself: see `held`.
            // Its class's CLASS DUMP refers to it (`<resolved_references>`, `<init_lock>`): no root.
            sys::JVMTI_HEAP_REFERENCE_JNI_GLOBAL if self.plan.held.in_statics.contains(&id) => {}
            sys::JVMTI_HEAP_REFERENCE_JNI_GLOBAL if self.plan.held.ids.contains(&id) => {
                self.emit_root(&Root::Unknown { id })
            }
            sys::JVMTI_HEAP_REFERENCE_JNI_GLOBAL => {
                let ref_serial = self.next_jni_global;
                self.next_jni_global += 1;
                self.emit_root(&Root::JniGlobal { id, ref_serial, trace: hprof_format::serial_base::TRACE });
            }
            sys::JVMTI_HEAP_REFERENCE_SYSTEM_CLASS => {
                let plan = self.plan;
                let name = plan.index_of(id).map_or("<unknown class>", |c| plan.get(c).name());
                self.emit_root(&Root::StickyClass { id, name });
            }
            sys::JVMTI_HEAP_REFERENCE_MONITOR => {
                if self.monitors.insert(id) {
                    self.emit_root(&Root::MonitorUsed { id });
                }
            }
            sys::JVMTI_HEAP_REFERENCE_STACK_LOCAL if info.stack_local().is_some() => {
                let Some(local) = info.stack_local() else { return };
                let thread = self.thread_of(local.thread_tag, local.thread_id);
                self.seen_frames.push(SeenFrame {
                    thread,
                    depth: local.depth,
                    method: local.method as usize,
                    location: local.location,
                });
                self.emit_root(&Root::JavaFrame { id, thread, frame: local.depth });
            }
            sys::JVMTI_HEAP_REFERENCE_JNI_LOCAL if info.jni_local().is_some() => {
                let Some(local) = info.jni_local() else { return };
                let thread = self.thread_of(local.thread_tag, local.thread_id);
                // A JNI local of a thread with no Java frame lives on its native stack.
                if local.method.is_null() {
                    self.emit_root(&Root::NativeStack { id, thread });
                } else {
                    let method = local.method as usize;
                    self.seen_frames.push(SeenFrame { thread, depth: local.depth, method, location: -1 });
                    self.emit_root(&Root::JniLocal { id, thread, frame: local.depth });
                }
            }
            sys::JVMTI_HEAP_REFERENCE_THREAD => match self.threads.get(id) {
                // ROOT THREAD OBJECT names the thread's trace, settled after the walk.
                Some(t) => {
                    let thread = t.serial;
                    self.thread_objects.push((id, thread));
                    self.emit_root(&Root::ThreadBlock { id, thread });
                }
                // The agent's own threads are kept out of the profile (no START THREAD): their thread
                // objects are still objects, held by the VM.
                None => self.emit_root(&Root::Unknown { id }),
            },
            _ => self.emit_root(&Root::Unknown { id }),
        }
    }

    /// Writes the current object's record.
    pub fn finish_current(&mut self) {
        let result = match std::mem::replace(&mut self.current, Current::None) {
            Current::Instance { id, class, size, .. } => {
                self.sink.instance(id, self.plan.get(class), size, &self.values)
            }
            Current::ObjectArray => self.sink.object_array_end(),
            Current::UnsizedArray { id, class, elements } => {
                self.stats.mismatches += 1;
                let length = elements.last().map_or(0, |e| e.0 + 1);
                let dc = self.plan.get(class);
                (|| {
                    self.sink.object_array_begin(id, dc, self.array_sizes.estimate(length), length)?;
                    for (i, e) in elements {
                        self.sink.object_array_element(i, e)?;
                    }
                    self.sink.object_array_end()
                })()
            }
            Current::Class { class } => {
                self.emitted[class as usize] = true;
                self.sink.class_dump(class, self.plan.get(class), &self.class_values)
            }
            Current::Late => {
                self.late.end();
                Ok(())
            }
            Current::None | Current::Done => Ok(()),
        };
        if let Err(e) = result {
            self.error.get_or_insert(e);
        }
    }

    fn class_reference(&mut self, class: u32, kind: u32, index: i32, id: u64) {
        let v = &mut self.class_values;
        match kind {
            sys::JVMTI_HEAP_REFERENCE_STATIC_FIELD => {
                let dc = self.plan.get(class);
                match dc.static_slot(index) {
                    Some(i) if dc.statics[i].ty == BasicType::Object => v.statics[i] = id,
                    _ => self.mismatch(class, "ref static", index),
                }
            }
            sys::JVMTI_HEAP_REFERENCE_CONSTANT_POOL => v.constants.push((index.clamp(0, u16::MAX as i32) as u16, id)),
            sys::JVMTI_HEAP_REFERENCE_CLASS_LOADER => v.loader = id,
            sys::JVMTI_HEAP_REFERENCE_SIGNERS => v.signers = id,
            sys::JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN => v.domain = id,
            _ => {}
        }
    }

    fn late_reference(&mut self, kind: u32, index: i32, id: u64) {
        let value_kind = match kind {
            sys::JVMTI_HEAP_REFERENCE_CLASS => {
                self.late.set_class(id);
                return;
            }
            sys::JVMTI_HEAP_REFERENCE_FIELD => LateValueKind::Field,
            sys::JVMTI_HEAP_REFERENCE_STATIC_FIELD => LateValueKind::Static,
            sys::JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT => LateValueKind::Element,
            sys::JVMTI_HEAP_REFERENCE_CONSTANT_POOL => LateValueKind::Constant,
            sys::JVMTI_HEAP_REFERENCE_CLASS_LOADER => LateValueKind::Loader,
            sys::JVMTI_HEAP_REFERENCE_SIGNERS => LateValueKind::Signers,
            sys::JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN => LateValueKind::Domain,
            _ => return,
        };
        self.late.value(value_kind, index, BasicType::Object, id);
    }
}

/// The walk's commonest report on a short path: a reference field or array element of the object being
/// visited, to an object named by its address — most of a dump's millions of callbacks. Whatever is not
/// plainly that (a root, the first report of an object, a referee named or tagged before, a class object,
/// an address failing a check, a test failure counting down) goes the general way (`HeapVisitor::reference`,
/// just below), which decides everything again; so this path only ever answers as the general one would.
impl<I: Identify> Walk<'_, I> {
    /// The answer to a member's report, or `None` to take the general path.
    #[inline(always)]
    fn member(&mut self, r: &HeapReference<'_>) -> Option<i32> {
        let (kind, length) = (r.kind, r.length);
        let a = self.members_by_address.as_ref()?;
        let is_field = kind == sys::JVMTI_HEAP_REFERENCE_FIELD;
        // A field of an instance or an element of an object array, before any memory is read.
        let member = match &self.current {
            Current::Instance { .. } => is_field,
            Current::ObjectArray => kind == sys::JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT,
            _ => false,
        };
        if !member {
            return None;
        }
        if self.starting || self.error.is_some() || self.failed.is_some() {
            return None;
        }
        // The referrer: the object being visited (a reference to itself passes one tag pointer twice).
        let referrer_tag = r.referrer_tag.filter(|t| *t != r.tag)?;
        let current = self.current_owner;
        let referrer = hotspot::heap::raw_referrer(&referrer_tag);
        if current.addr == 0 || referrer != current.addr || referrer_tag.get() != current.tag {
            return None;
        }
        // The referee: untagged, checked as `Walk::referee` checks it, neither named nor a class object.
        let addr = a.object(&r.tag)?;
        if r.tag.get() != 0 || (length >= 0 && a.array_length(addr, &r.tag) != Some(length)) {
            return None;
        }
        if !self.identify.is_plain(addr, a, &r.tag) {
            return None;
        }
        let index = r.info.index();
        match (&self.current, is_field) {
            (Current::Instance { refs, .. }, true) => {
                let at = refs.get(index)? as usize;
                self.values.get_mut(at..at + 8)?.copy_from_slice(&addr.to_be_bytes());
            }
            (Current::ObjectArray, false) => {
                if let Err(e) = self.sink.object_array_element(index as u32, addr) {
                    self.error.get_or_insert(e);
                    return Some(ABORT);
                }
            }
            _ => return None,
        }
        Some(VISIT)
    }
}

impl<I: Identify> HeapVisitor for Walk<'_, I> {
    fn reference(&mut self, r: HeapReference<'_>) -> i32 {
        if let Some(visit) = self.member(&r) {
            return visit;
        }
        let HeapReference { kind, info, class_tag, referrer_class_tag, size, tag, referrer_tag, length } = r;
        if !self.ready(&tag) {
            return ABORT;
        }
        let (identify, mut seen) = self.identify();
        let referee = identify.referee(Reported { class_tag, size, tag, length }, &mut seen);
        let Some(referee) = self.checked(referee) else { return ABORT };
        let (id, visit) = (referee.id, if referee.visit { VISIT } else { 0 });
        if kind >= sys::JVMTI_HEAP_REFERENCE_JNI_GLOBAL {
            self.root(kind, info, id);
            return if self.error.is_some() { ABORT } else { visit };
        }
        let owner = self.identify.referrer(referrer_tag, tag, &self.current_owner);
        let Some(owner) = self.checked(owner) else { return ABORT };
        if !self.is_current(&owner) {
            let owner_kind = self.identify.referrer_kind(&owner, kind, referrer_class_tag, &referee, &tag);
            self.enter(owner, owner_kind, referrer_tag, &tag);
        }
        let index = info.index();
        match (&mut self.current, kind) {
            (Current::Instance { class, refs, .. }, sys::JVMTI_HEAP_REFERENCE_FIELD) => match refs.get(index) {
                Some(at) => {
                    if let Some(v) = self.values.get_mut(at as usize..at as usize + 8) {
                        v.copy_from_slice(&id.to_be_bytes())
                    }
                }
                None => {
                    let c = *class;
                    self.mismatch(c, "ref field", index);
                }
            },
            (Current::ObjectArray, sys::JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT) => {
                if let Err(e) = self.sink.object_array_element(index as u32, id) {
                    self.error.get_or_insert(e);
                }
            }
            (Current::UnsizedArray { elements, .. }, sys::JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT) => {
                elements.push((index as u32, id));
            }
            (Current::Class { class }, _) => {
                let class = *class;
                self.class_reference(class, kind, index, id);
            }
            (Current::Late, _) => self.late_reference(kind, index, id),
            _ => {}
        }
        if self.error.is_some() { ABORT } else { visit }
    }

    fn primitive_field(&mut self, f: PrimitiveField<'_>) -> i32 {
        let PrimitiveField { kind, info, class_tag, tag, value } = f;
        if !self.ready(&tag) {
            return ABORT;
        }
        let Some((ty, bits)) = value.and_then(primitive_bits) else { return 0 };
        let owner = self.identify.owner(tag, &self.current_owner);
        let Some(owner) = self.checked(owner) else { return ABORT };
        if !self.is_current(&owner) {
            let owner_kind = self.identify.owner_kind(&owner, class_tag, &tag);
            self.enter(owner, owner_kind, Some(tag), &tag);
        }
        let index = info.index();
        match (&self.current, kind) {
            (Current::Instance { class, .. }, sys::JVMTI_HEAP_REFERENCE_FIELD) => {
                match self.plan.get(*class).instance_slot(index) {
                    Some(slot) if slot.ty == ty => store_value(&mut self.values, slot, bits),
                    _ => {
                        let c = *class;
                        self.mismatch(c, "prim field", index);
                    }
                }
            }
            (Current::Class { class }, sys::JVMTI_HEAP_REFERENCE_STATIC_FIELD) => {
                let dc = self.plan.get(*class);
                match dc.static_slot(index) {
                    Some(i) if dc.statics[i].ty == ty => self.class_values.statics[i] = bits,
                    _ => {
                        let c = *class;
                        self.mismatch(c, "prim static", index);
                    }
                }
            }
            (Current::Late, sys::JVMTI_HEAP_REFERENCE_FIELD) => self.late.value(LateValueKind::Field, index, ty, bits),
            (Current::Late, sys::JVMTI_HEAP_REFERENCE_STATIC_FIELD) => {
                self.late.value(LateValueKind::Static, index, ty, bits)
            }
            _ => {}
        }
        0
    }

    fn array_values(&mut self, array: PrimitiveArray<'_>) -> i32 {
        let PrimitiveArray { class_tag, size, tag, count, element_type, elements } = array;
        if !self.ready(&tag) {
            return ABORT;
        }
        let owner = self.identify.owner(tag, &self.current_owner);
        let Some(owner) = self.checked(owner) else { return ABORT };
        if let Some(a) = self.addresses.as_ref()
            && a.array_length(owner.addr, &tag) != Some(count)
        {
            self.fail(format!("primitive array at {:#x} has {count} elements, its header says otherwise", owner.addr));
            return ABORT;
        }
        if !self.is_current(&owner) {
            let owner_kind = self.identify.owner_kind(&owner, class_tag, &tag);
            self.enter(owner, owner_kind, Some(tag), &tag);
        }
        let Some(ty) = basic_type(element_type) else { return 0 };
        let id = owner.id;
        let count = count.max(0) as u32;
        let bytes = count as usize * ty.size(ID_SIZE) as usize;
        let data = elements.get(..bytes).unwrap_or(elements);
        let plan = self.plan;
        let name =
            self.identify.class_index(class_tag).map_or_else(|| primitive_array_name(ty), |c| plan.get(c).name());
        if let Err(e) = self.sink.primitive_array(id, name, size as u64, ty, count, data) {
            self.error.get_or_insert(e);
            return ABORT;
        }
        self.current = Current::Done;
        0
    }

    fn on_panic(&mut self) -> i32 {
        self.panicked = true;
        ABORT
    }
}

/// `HPROF_HEAP_DUMP_TEST_FAIL`'s number (0: unset).
fn test_failure() -> u64 {
    std::env::var("HPROF_HEAP_DUMP_TEST_FAIL").ok().and_then(|v| v.parse().ok()).unwrap_or(0)
}
