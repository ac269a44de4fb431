//! What only the classes' constant pools hold. Each linked class keeps the objects its constant pool has
//! resolved in an `Object[]` of its own (its "resolved references", `hotspot::heap::ResolvedReferences`):
//! Strings, MethodHandle and MethodType constants, and the call sites of its `invokedynamic` instructions
//! — through which the instances of its non-capturing lambdas, their method handles, MemberNames and
//! LambdaForms are live. JVMTI's heap walk reports a constant pool's Strings, never that array, so the
//! walk would not meet the rest; the JVM's histogram and its own dumper (which writes the array as a
//! static field `<resolved_references>`) count it all.
//!
//! So, before the walk, each class's array is found and held by a JNI global reference, like what class
//! objects' fields hold ([`super::held`]); the walk writes it as ROOT UNKNOWN and goes on from there. The
//! arrays' addresses are read from the class metadata inside a heap iteration over `Object[]`s (a
//! safepoint, where they cannot move), which tags the arrays at those addresses; their tags then give them
//! back as JNI references. Addresses are needed: only where objects are named by address
//! ([`naming`]: Serial, Parallel, G1, the callback layout checked) are the arrays held.

use super::held::HeldByClasses;
#[cfg(doc)]
use crate::capabilities::heap_dump::naming;
use crate::capabilities::heap_dump::naming::Naming;
use crate::capabilities::heap_dump::naming::ids::DumpIds;
use crate::capabilities::heap_dump::walk::callbacks::ABORT;
use crate::panic_guard::guard;
use hotspot::VmStructs;
use hotspot::heap::{ObjectAddresses, ObjectSizes, ResolvedReferences, handle_target, raw_object};
use jvmti::{HeapCallbacks, Jni, Jvmti, sys};
use rustc_hash::FxHashSet;
use std::ffi::c_void;

/// The tag the search gives the arrays it finds, until they get their identifiers. No identifier's tag
/// is all ones (an object array's would need 2^32 arrays before it).
const FOUND: i64 = -1;

/// Holds every loaded class's resolved-references array in `held`, named in `ids`; returns how many.
pub fn hold(jni: Jni, env: Jvmti, ids: &mut DumpIds, naming: &Naming, held: &mut HeldByClasses) -> usize {
    let Some(addresses) = naming.addresses() else { return 0 };
    let Some(sizes) = addresses.heap.sizes else { return 0 };
    let Some(pools) = VmStructs::get().and_then(ResolvedReferences::find) else { return 0 };
    let Some(classes) = ids.named.as_ref().map(|n| n.class_objects()) else { return 0 };
    let Ok(object_array) = jni.find_class(c"[Ljava/lang/Object;") else {
        jni.exception_clear();
        return 0;
    };
    let mut search = Search { addresses, sizes, pools, classes, arrays: None, found: 0 };
    // SAFETY: a C struct of integers and nullable pointers, for which all-zero bytes are a valid value.
    let mut callbacks: HeapCallbacks = unsafe { std::mem::zeroed() };
    callbacks.heap_iteration_callback = Some(on_object);
    let user_data = &mut search as *mut Search as *const c_void;
    // SAFETY: the callback reads user_data as a Search, alive until IterateThroughHeap returns.
    let _ = unsafe { env.iterate_through_heap(0, object_array, &callbacks, user_data) };
    jni.delete_local_ref(object_array);
    if search.found == 0 {
        return 0;
    }
    let found = env.objects_with_tags(&[FOUND]).unwrap_or_default();
    let count = found.len();
    for (array, _) in found {
        // Its tag carries its length, for a walk by tags after all (see `naming::ids`).
        let length = jni.array_length(array).max(0) as u32;
        let (tag, id) = ids.object_array(length).unwrap_or_else(|| ids.plain());
        if env.set_tag(array, tag).is_ok() {
            ids.tagged_array(jni, array, id, tag);
            held.hold(jni, array, id);
        } else {
            let _ = env.set_tag(array, 0);
        }
        jni.delete_local_ref(array);
    }
    count
}

/// The heap iteration's state.
struct Search {
    addresses: ObjectAddresses,
    sizes: ObjectSizes,
    pools: ResolvedReferences,
    /// The class objects (weak global references of [`Named`](naming::Named)).
    classes: Vec<sys::jobject>,
    /// The arrays' addresses, read on the first callback, inside the iteration's safepoint.
    arrays: Option<FxHashSet<u64>>,
    found: usize,
}

impl Search {
    /// The arrays' addresses: each class's, if it has one. Inside the iteration's safepoint.
    fn read_arrays(&mut self) -> FxHashSet<u64> {
        let mut arrays = FxHashSet::default();
        if self.addresses.heap.refresh_committed().is_err() {
            return arrays;
        }
        for &class in &self.classes {
            // SAFETY: a weak global reference the dump holds; inside this safepoint its object cannot move.
            let mirror = unsafe { handle_target(class as *const c_void) };
            if mirror != 0
                && self.addresses.heap.holds(mirror)
                && let Some(array) = self.pools.array_of(&self.addresses.heap, &self.sizes, mirror)
            {
                arrays.insert(array);
            }
        }
        arrays
    }

    fn object(&mut self, tag_ptr: *mut i64, length: i32) -> i32 {
        if self.arrays.is_none() {
            self.arrays = Some(self.read_arrays());
        }
        let Some(arrays) = &self.arrays else { return ABORT };
        if self.found >= arrays.len() {
            return ABORT;
        }
        // SAFETY: this callback's own tag pointer, read while it runs (hotspot::heap's contract).
        let addr = unsafe { raw_object(tag_ptr) };
        // An address of the set, checked again as an array of this length, untagged (a held monitor is a
        // root already).
        if !arrays.contains(&addr) || !self.addresses.heap.holds(addr) {
            return 0;
        }
        // SAFETY: `holds` placed its header in committed memory, in this safepoint.
        let array_length = unsafe { self.addresses.array_length(addr) };
        // SAFETY: this callback's own tag pointer, valid to read and write while it runs.
        let tag = unsafe { &mut *tag_ptr };
        if array_length == length && *tag == 0 {
            *tag = FOUND;
            self.found += 1;
        }
        0
    }
}

unsafe extern "C" fn on_object(
    _class_tag: sys::jlong,
    _size: sys::jlong,
    tag_ptr: *mut sys::jlong,
    length: sys::jint,
    user_data: *mut c_void,
) -> sys::jint {
    // SAFETY: user_data is the Search handed to IterateThroughHeap with this callback: it outlives the call,
    // and nothing else borrows it meanwhile (callbacks come on the VM thread, one at a time).
    let search = unsafe { &mut *(user_data as *mut Search) };
    guard(|| search.object(tag_ptr, length), ABORT)
}
