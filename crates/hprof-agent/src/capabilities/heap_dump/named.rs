//! Objects a dump names before its walk — class objects (their LOAD CLASS identifiers), thread objects
//! (THREAD START's), class loaders and held monitors (identifiers of the dump's own), the primitive types'
//! class objects — found again in a walk that names everything else by address.
//!
//! Such a walk keeps the dump's tag map empty: JVMTI looks tags up several times per reported reference,
//! and an empty map answers at once (JDK 21 and 25 check for that first; JDK 17 finds empty buckets). So
//! these objects are tagged while the dump is prepared (tags find them again, as the class plan and the
//! threads expect), remembered here by JNI weak global references (strong ones would be roots in the
//! dump), and untagged just before the walk. The walk's first callback, inside the safepoint, reads each
//! reference's object address ([`Named::resolve`]); from then on an address says which of them an object
//! is. The objects are all strongly held elsewhere (classes, live threads, loaders, held locks).

use super::layout::ClassPlan;
use jvmti::{Jni, Jvmti, sys};
use rustc_hash::FxHashMap;

/// What a named object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Name {
    /// A class object of the plan: its identifier and its index in the plan.
    Class { id: u64, index: u32 },
    /// A class object the plan has no class for (a primitive type's).
    PrimitiveClass { id: u64 },
    /// A thread object, class loader or held monitor.
    Object { id: u64 },
}

impl Name {
    pub fn id(self) -> u64 {
        match self {
            Name::Class { id, .. } | Name::PrimitiveClass { id } | Name::Object { id } => id,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Class,
    PrimitiveClass,
    Object,
}

/// The objects named before the walk, by JNI weak global reference.
#[derive(Debug, Default)]
pub struct Named {
    held: Vec<(sys::jobject, u64, Kind)>,
}

impl Named {
    /// Remembers a tagged class object, thread object, loader or monitor.
    pub fn object(&mut self, jni: Jni, object: sys::jobject, id: u64, is_class: bool) {
        self.hold(jni, object, id, if is_class { Kind::Class } else { Kind::Object });
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
            if kind != Kind::PrimitiveClass {
                let _ = env.set_tag(object, id as i64);
            }
        }
    }

    /// Each object's address and name. Only inside the walk, where objects do not move: a JNI weak global
    /// reference points to the slot holding its object's address (the low two bits tag its kind), as the
    /// probe walk checks.
    pub fn resolve(&self, plan: &ClassPlan) -> NamedMap {
        let mut by_address = NamedMap {
            names: FxHashMap::default(),
            filter: vec![0; FILTER_WORDS],
            recent: vec![(0, Name::Object { id: 0 }); RECENT],
        };
        by_address.names.reserve(self.held.len());
        for &(object, id, kind) in &self.held {
            // SAFETY: `object` is a weak global reference this dump holds; inside the walk's safepoint the
            // object it names cannot move.
            let addr = unsafe { hotspot::heap::handle_target(object as *const std::ffi::c_void) };
            if addr == 0 {
                continue;
            }
            let name = match kind {
                Kind::Class => match plan.index_of(id) {
                    Some(index) => Name::Class { id, index },
                    None => Name::Object { id },
                },
                Kind::PrimitiveClass => Name::PrimitiveClass { id },
                Kind::Object => Name::Object { id },
            };
            by_address.insert(addr, name);
        }
        by_address
    }

    /// Drops the references.
    pub fn release(&mut self, jni: Jni) {
        for (object, _, _) in self.held.drain(..) {
            jni.delete_weak_global_ref(object);
        }
    }
}

/// Bits of [`NamedMap`]'s filter, in u64 words (8 KiB).
const FILTER_WORDS: usize = 1 << 10;

/// The named objects by address, behind a bit filter that turns away almost every other address (the
/// walk asks about every object it meets) without a hash look-up, and a small cache of the last found
/// (each object's first report names its class object).
#[derive(Debug, Default)]
pub struct NamedMap {
    names: FxHashMap<u64, Name>,
    filter: Vec<u64>,
    recent: Vec<(u64, Name)>,
}

/// Entries of [`NamedMap`]'s cache.
const RECENT: usize = 64;

impl NamedMap {
    fn bit(addr: u64) -> (usize, u64) {
        let i = (addr >> 3) as usize & (FILTER_WORDS * 64 - 1);
        (i / 64, 1 << (i % 64))
    }

    fn insert(&mut self, addr: u64, name: Name) {
        let (word, bit) = Self::bit(addr);
        self.filter[word] |= bit;
        self.names.insert(addr, name);
    }

    /// Whether `addr` may be named (the filter only): false for almost every object.
    #[inline(always)]
    pub fn may_hold(&self, addr: u64) -> bool {
        let (word, bit) = Self::bit(addr);
        self.filter.get(word).is_some_and(|w| w & bit != 0)
    }

    #[inline(always)]
    pub fn get(&mut self, addr: u64) -> Option<Name> {
        let (word, bit) = Self::bit(addr);
        if self.filter.get(word).is_none_or(|w| w & bit == 0) {
            return None;
        }
        let slot = (addr >> 3) as usize % RECENT;
        if let Some(&(a, name)) = self.recent.get(slot)
            && a == addr
        {
            return Some(name);
        }
        let name = self.names.get(&addr).copied()?;
        self.recent[slot] = (addr, name);
        Some(name)
    }

    /// The address of some class object, if any was named.
    pub fn some_class_object(&self) -> Option<u64> {
        self.names.iter().find(|(_, n)| matches!(n, Name::Class { .. })).map(|(&a, _)| a)
    }
}
