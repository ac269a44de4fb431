//! The objects a dump tags before its walk, remembered for a walk that names everything else by address.
//!
//! Objects a dump names before its walk — class objects (their LOAD CLASS identifiers), thread objects
//! (THREAD START's), class loaders and held monitors (identifiers of the dump's own), the primitive types'
//! class objects — found again in a walk that names everything else by address.
//!
//! Such a walk keeps the dump's tag map empty: JVMTI looks tags up several times per reported reference,
//! and an empty map answers at once (JDK 21 and 25 check for that first; JDK 17 finds empty buckets). So
//! these objects are tagged while the dump is prepared (tags find them again, as the class plan and the
//! threads expect), remembered here by JNI weak global references (strong ones would be roots in the
//! dump), and untagged just before the walk. The walk's first callback, inside the safepoint, reads each
//! reference's object address (`naming::NamedMap::resolve`); from then on an address says which of them an
//! object is. The objects are all strongly held elsewhere (classes, live threads, loaders, held locks).

use jvmti::{Jni, Jvmti, sys};

/// What kind of object a held reference names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Class,
    PrimitiveClass,
    Object,
    /// An object array, whose tag carries its length too (see [`super`]).
    ObjectArray {
        tag: i64,
    },
}

/// The objects named before the walk, by JNI weak global reference.
#[derive(Debug, Default)]
pub struct Named {
    held: Vec<(sys::jobject, u64, Kind)>,
}

impl Named {
    /// Each object's JNI weak global reference, identifier and kind.
    pub fn held(&self) -> impl Iterator<Item = (sys::jobject, u64, Kind)> + '_ {
        self.held.iter().copied()
    }

    /// Remembers a tagged class object, thread object, loader or monitor.
    pub fn object(&mut self, jni: Jni, object: sys::jobject, id: u64, is_class: bool) {
        self.hold(jni, object, id, if is_class { Kind::Class } else { Kind::Object });
    }

    /// Remembers a tagged object array (its tag carries its length).
    pub fn object_array(&mut self, jni: Jni, object: sys::jobject, id: u64, tag: i64) {
        self.hold(jni, object, id, Kind::ObjectArray { tag });
    }

    /// Remembers a primitive type's class object (never tagged).
    pub fn primitive_class(&mut self, jni: Jni, object: sys::jobject, id: u64) {
        self.hold(jni, object, id, Kind::PrimitiveClass);
    }

    fn hold(&mut self, jni: Jni, object: sys::jobject, id: u64, kind: Kind) {
        let weak = jni.new_weak_global_ref(object);
        if !weak.is_null() {
            self.held.push((weak, id, kind));
        }
    }

    /// Remembers the primitive types' class objects (`int.class`, …), which no class list holds, under
    /// identifiers from `next_id`.
    pub fn primitive_classes(&mut self, jni: Jni, mut next_id: impl FnMut() -> u64) {
        const WRAPPERS: [&std::ffi::CStr; 9] = [
            c"java/lang/Boolean",
            c"java/lang/Byte",
            c"java/lang/Character",
            c"java/lang/Short",
            c"java/lang/Integer",
            c"java/lang/Long",
            c"java/lang/Float",
            c"java/lang/Double",
            c"java/lang/Void",
        ];
        for wrapper in WRAPPERS {
            let Ok(class) = jni.find_class(wrapper) else { continue };
            if let Ok(primitive) = jni.static_object_field(class, c"TYPE", c"Ljava/lang/Class;") {
                self.primitive_class(jni, primitive, next_id());
                jni.delete_local_ref(primitive);
            }
            jni.delete_local_ref(class);
        }
    }

    pub fn primitive_class_ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.held.iter().filter(|h| h.2 == Kind::PrimitiveClass).map(|h| h.1)
    }

    /// Takes the tags off before a walk by address, but the one of the object named `keep`.
    pub fn untag(&self, env: Jvmti, keep: u64) {
        for &(object, id, kind) in &self.held {
            if kind != Kind::PrimitiveClass && id != keep {
                let _ = env.set_tag(object, 0);
            }
        }
    }

    /// Puts the tags back, for a walk by tag after all.
    pub fn retag(&self, env: Jvmti) {
        for &(object, id, kind) in &self.held {
            match kind {
                Kind::PrimitiveClass => {}
                Kind::ObjectArray { tag } => _ = env.set_tag(object, tag),
                Kind::Class | Kind::Object => _ = env.set_tag(object, id as i64),
            }
        }
    }

    /// Drops the references.
    pub fn release(&mut self, jni: Jni) {
        for (object, _, _) in self.held.drain(..) {
            jni.delete_weak_global_ref(object);
        }
    }
}
