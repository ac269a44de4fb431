//! Objects that only the fields of class objects hold. JVMTI's heap walk reports a class object's statics,
//! constant pool, loader, signers and protection domain, but not the instance fields of `java.lang.Class`
//! itself: a class's `reflectionData` (a SoftReference to its cached Constructors, Methods, Fields), its
//! cached `name`, `packageName`, `annotationData`, `classValueMap`, a hidden class's `classData`. The JVM's
//! histogram and its own heap dump count what those hold; the walk would never meet it. So before the walk
//! those objects are held by JNI global references, and the walk writes the roots it meets through them as
//! ROOT UNKNOWN (they are held by the VM's class data, not by JNI).

use crate::capabilities::heap_dump::ids::{DumpIds, tag_object};
use crate::context::Context;
use jvmti::{Jni, Jvmti, sys};
use rustc_hash::{FxHashMap, FxHashSet};

/// The objects class objects' fields hold, for one dump.
#[derive(Debug, Default)]
pub struct HeldByClasses {
    /// Their identifiers: a JNI global root with one of these is written as ROOT UNKNOWN (unless its class
    /// names it in a static, see `statics`).
    pub ids: FxHashSet<u64>,
    globals: Vec<sys::jobject>,
    /// What the class objects hold as HotSpot's dumper writes it, as statics of their CLASS DUMPs:
    /// class identifier → (`<resolved_references>` or `<init_lock>`, identifier).
    pub statics: FxHashMap<u64, Vec<(&'static str, u64)>>,
    /// The identifiers in `statics`: the class refers to them, they are no roots.
    pub in_statics: FxHashSet<u64>,
}

impl HeldByClasses {
    /// Holds every object the `java.lang.Class` reference fields of `classes` (the plan's loaded classes,
    /// [`ClassPlan::loaded`](super::layout::ClassPlan::loaded)) point to, but class objects, class loaders and modules (the walk reaches those
    /// anyway) and arrays (an array's identifier carries its length, given when the walk meets it).
    pub fn collect(
        ctx: &Context,
        jni: Jni,
        dump_env: Jvmti,
        ids: &mut DumpIds,
        classes: &[sys::jclass],
    ) -> HeldByClasses {
        let mut held = HeldByClasses::default();
        // FindClass clears the exception it fails with.
        let Ok(class_class) = jni.find_class(c"java/lang/Class") else { return held };
        let fields: Vec<sys::jfieldID> = (ctx.jvmti.field_infos(class_class).unwrap_or_default().into_iter())
            .filter(|f| !f.is_static() && f.signature.starts_with('L'))
            .filter(|f| {
                !matches!(f.signature.as_str(), "Ljava/lang/Class;" | "Ljava/lang/ClassLoader;" | "Ljava/lang/Module;")
            })
            .map(|f| f.field)
            .collect();
        jni.delete_local_ref(class_class);
        if fields.is_empty() {
            return held;
        }
        for &class in classes {
            jni.with_local_frame(16, || {
                for &field in &fields {
                    let value = jni.object_field(class, field);
                    if value.is_null() {
                        continue;
                    }
                    let id = tag_object(jni, dump_env, ids, value);
                    if id != 0 && held.ids.insert(id) {
                        held.globals.push(jni.new_global_ref(value));
                    }
                }
            });
        }
        held
    }

    /// Holds `object`, named `id`, for the walk (see `super::resolved`).
    pub fn hold(&mut self, jni: Jni, object: sys::jobject, id: u64) {
        if self.ids.insert(id) {
            self.globals.push(jni.new_global_ref(object));
        }
    }

    /// Holds `object`, named `id`, for the walk, as the static `name` of the class `class_id`.
    pub fn hold_as_static(&mut self, jni: Jni, object: sys::jobject, id: u64, class_id: u64, name: &'static str) {
        self.hold(jni, object, id);
        if self.in_statics.insert(id) {
            self.statics.entry(class_id).or_default().push((name, id));
        }
    }

    /// Holds `held.object` for the walk, as the static `held.name` of `held.class` where the class object is
    /// tagged with its LOAD CLASS identifier (see `super::layout`), else as a plain root.
    pub fn hold_for_class(&mut self, jni: Jni, dump_env: Jvmti, ids: &DumpIds, held: ForClass) {
        let ForClass { class, object, id, name } = held;
        match dump_env.tag(class) {
            Ok(t) if t != 0 => self.hold_as_static(jni, object, id, ids.id_of(t), name),
            _ => self.hold(jni, object, id),
        }
    }

    /// Drops the global references (after the walk).
    pub fn release(&mut self, jni: Jni) {
        for g in self.globals.drain(..) {
            jni.delete_global_ref(g);
        }
    }
}

/// An object held for a class, named `id`, which the class's CLASS DUMP refers to as its static `name`.
#[derive(Debug, Clone, Copy)]
pub struct ForClass {
    pub class: sys::jclass,
    pub object: sys::jobject,
    pub id: u64,
    pub name: &'static str,
}
