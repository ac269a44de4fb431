//! What only the classes' constant pools hold. Each linked class keeps the objects its constant pool has
//! resolved in an `Object[]` of its own (its "resolved references", `ConstantPoolCache::_resolved_references`):
//! Strings, MethodHandle and MethodType constants, and the call sites of its `invokedynamic` instructions
//! — through which the instances of its non-capturing lambdas, their method handles, MemberNames and
//! LambdaForms are live. JVMTI's heap walk reports a constant pool's Strings, never that array, so the
//! walk would not meet the rest; the JVM's histogram and its own dumper (which writes the array as a
//! static field `<resolved_references>`) count it all.
//!
//! So, before the walk, each class's array is held by a JNI global reference, like what class objects'
//! fields hold ([`super::held`]); the walk goes on from there, and the class's CLASS DUMP refers to the
//! array as HotSpot's does, by a static `<resolved_references>` (ROOT UNKNOWN should the class's
//! identifier be unknown).
//!
//! How the array is reached, without its address (which tag-named dumps — ZGC, Shenandoah,
//! `HPROF_HEAP_DUMP_TAGS` — cannot use: ZGC's slots hold coloured pointers, Shenandoah's may hold
//! forwarded copies): from one of the class's `jmethodID`s through its metadata to the handle slot HotSpot
//! keeps the array in (`hotspot::heap::PoolHandles`), then `NewGlobalRef` of that slot as if it were a JNI
//! global handle — which JNI resolves with the very load (`NativeAccess<>::oop_load`) HotSpot's own
//! `OopHandle::resolve` makes of it, collector barriers included (`hotspot::jni_handles`). Nothing here
//! reads an object. Each class is checked before its array is taken: the chain must close two cycles in
//! the metadata, and the class object reached the same way must be the very class we hold (`IsSameObject`);
//! the first class that fails ends the route (any doubt: no arrays). The classes are held by JNI
//! references throughout, so none can unload meanwhile. A class without methods has no code to have
//! resolved anything, so its array (if any) holds nulls; it is skipped. So is a class loaded but not yet
//! linked, which JVMTI gives no methods: only one loaded from the CDS archive can have its array already
//! (3 of 296 on the heap-dump benchmark, JDK 17, all reached by the walk anyway).
//!
//! One route for both namings: the earlier address search (a heap iteration over every `Object[]` matching
//! addresses read from the mirrors) cost 88–117 ms on 7M objects; this costs a few JNI calls per class.
//! Under `-Xcheck:jni` checked JNI would end the VM on a handle not in its own storages: no arrays there,
//! and verbose output says so. Classes with methods but not one array from them all (a JVM whose
//! `jmethodID`s no longer lead to a `Method*`, say) mean objects missing from the dump: a warning says so.

use super::held::{ForClass, HeldByClasses};
use super::{DumpVm, Skipped};
use crate::capabilities::heap_dump::ids::DumpIds;
use crate::context::Context;
use hotspot::VmStructs;
use hotspot::heap::PoolHandles;
use hotspot::jni_handles::{ForeignHandles, checked_jni};
use jvmti::{Jni, sys};

/// Holds the resolved-references array of each of `classes` (the plan's loaded classes) in `held`, named in
/// `ids`: how many, or why none (a [`Skipped::Missing`] when the route failed where it should have led).
pub fn hold(
    vm: DumpVm<'_>,
    ids: &mut DumpIds,
    held: &mut HeldByClasses,
    classes: &[sys::jclass],
) -> Result<usize, Skipped> {
    let jni = vm.jni;
    let structs = VmStructs::get().ok_or("HotSpot's structure tables are not readable")?;
    if checked_jni(structs) {
        return Err(Skipped::Limit("JNI calls are checked (-Xcheck:jni), which refuses the handles this needs".into()));
    }
    let route = PoolHandles::find(structs)?;
    let object_array = jni.find_class(c"[Ljava/lang/Object;").map_err(|e| e.to_string())?;
    let result = hold_with(vm, ids, held, classes, route, object_array);
    jni.delete_local_ref(object_array);
    result
}

fn hold_with(
    vm: DumpVm<'_>,
    ids: &mut DumpIds,
    held: &mut HeldByClasses,
    classes: &[sys::jclass],
    route: PoolHandles,
    object_array: sys::jclass,
) -> Result<usize, Skipped> {
    let DumpVm { ctx, jni, env } = vm;
    let handles = calibrate(jni, object_array)?;
    let (mut count, mut with_methods, mut reached) = (0, 0, 0);
    for &class in classes {
        let found = jni.with_local_frame(8, || array_of(ctx, jni, &route, &handles, class, object_array))?;
        with_methods += (found != Found::NoMethods) as usize;
        reached += matches!(found, Found::NoArray | Found::Array(_)) as usize;
        if let Found::Array(array) = found {
            // Its tag carries its length, for a walk by tags (see `naming::ids`).
            let length = jni.array_length(array).max(0) as u32;
            let (tag, id) = ids.object_array(length).unwrap_or_else(|| ids.plain());
            if env.set_tag(array, tag).is_ok() {
                ids.tagged_array(jni, array, id, tag);
                held.hold_for_class(
                    jni,
                    env,
                    ids,
                    ForClass { class, object: array, id, name: "<resolved_references>" },
                );
                count += 1;
            }
            jni.delete_global_ref(array);
        }
    }
    // Every linked class whose code ran has resolved something (its Strings at least): none at all means
    // the route led nowhere.
    if count == 0 && with_methods > 0 {
        return Err(Skipped::Missing(format!(
            "not one resolved-references array from {with_methods} classes with methods ({reached} of them \
             reached through their metadata): this JVM's class metadata is not what the agent reads"
        )));
    }
    Ok(count)
}

/// What a class's metadata led to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// Not prepared (or an array or primitive class): no methods, no constant pool cache.
    NoMethods,
    /// Its first method's metadata did not lead to the class's slots.
    Unreached,
    /// Its slots, but no array in them.
    NoArray,
    /// Its array, as a global reference.
    Array(sys::jobject),
}

/// How this JVM tags global references, read off a global and a weak global reference made for it.
fn calibrate(jni: Jni, object: sys::jobject) -> Result<ForeignHandles, String> {
    let global = jni.new_global_ref(object);
    let weak = jni.new_weak_global_ref(object);
    let handles = ForeignHandles::calibrate(global as *const _, weak as *const _);
    jni.delete_global_ref(global);
    jni.delete_weak_global_ref(weak);
    handles
}

/// `class`'s resolved-references array, as a global reference, or why none; `Err` if the metadata is not
/// what we believe.
fn array_of(
    ctx: &Context,
    jni: Jni,
    route: &PoolHandles,
    handles: &ForeignHandles,
    class: sys::jclass,
    object_array: sys::jclass,
) -> Result<Found, String> {
    let Some(&method) = ctx.jvmti.class_methods(class).ok().as_deref().and_then(<[_]>::first) else {
        return Ok(Found::NoMethods);
    };
    let Some(slots) = route.slots(method as u64).filter(|_| !test_unreached()) else { return Ok(Found::Unreached) };
    // SAFETY: `slots.mirror` is the class object's slot in the metadata of `class`, which the caller's
    // reference keeps loaded; the chain to it closed both cycles.
    let mirror = unsafe { global_ref_of_slot(jni, handles, slots.mirror) };
    let same = !mirror.is_null() && jni.is_same_object(mirror, class);
    jni.delete_global_ref(mirror);
    if !same {
        return Err("a class's metadata led to another class object".into());
    }
    let Some(slot) = slots.resolved else { return Ok(Found::NoArray) };
    // SAFETY: as for the mirror: a slot of the same, checked metadata of a class kept loaded.
    let array = unsafe { global_ref_of_slot(jni, handles, slot) };
    if array.is_null() {
        return Ok(Found::NoArray);
    }
    let class_of = jni.object_class(array);
    let is_object_array = jni.is_same_object(class_of, object_array);
    jni.delete_local_ref(class_of);
    if !is_object_array {
        jni.delete_global_ref(array);
        return Err("a class's resolved references are not an Object[]".into());
    }
    Ok(Found::Array(array))
}

/// For tests of a JVM whose metadata the route cannot follow: `HPROF_HEAP_DUMP_TEST_NO_POOLS` set makes
/// no class's metadata lead to its slots.
fn test_unreached() -> bool {
    static SET: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SET.get_or_init(|| std::env::var_os("HPROF_HEAP_DUMP_TEST_NO_POOLS").is_some())
}

/// A global reference to the object in HotSpot's `oop` slot `slot`, made by JNI's own resolution of a
/// global handle (see `hotspot::jni_handles`); null if the slot is null.
///
/// # Safety
/// `slot` must be an `oop` slot HotSpot resolves as an `OopHandle` (`NativeAccess<>::oop_load`), of
/// metadata that stays alive during the call; JNI calls must not be checked (`-Xcheck:jni`).
unsafe fn global_ref_of_slot(jni: Jni, handles: &ForeignHandles, slot: u64) -> sys::jobject {
    match handles.global(slot) {
        Some(handle) => jni.new_global_ref(handle as sys::jobject),
        None => std::ptr::null_mut(),
    }
}
