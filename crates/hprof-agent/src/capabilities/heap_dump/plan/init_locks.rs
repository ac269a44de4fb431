//! What only a class object's injected `init_lock` field holds: the `int[0]` HotSpot gives each class from
//! its linking until its initialization ends (`hotspot::init_lock`). JVMTI's walk does not report injected
//! fields, so before the walk each class's lock is read through JNI with the field ID HotSpot would give
//! that field, and held by a JNI global reference, like what the declared fields of class objects hold
//! ([`super::held`]); the class's CLASS DUMP refers to it as HotSpot's does, by a static `<init_lock>`.
//!
//! Every step is checked before the next: the symbol table that gives the offset is checked against the
//! structure tables; the field IDs of `java.lang.Class`'s declared fields must all be encoded as assumed
//! (`offset << 2 | 2`), none at the lock's offset (but JDK 17's `componentType`, which shares it); each
//! value read must be an `int[0]` — the first that is not ends the reading (the dump then leaves the locks
//! out, and verbose output says why). Under `-Xcheck:jni` only JDK 17's shared slot can be read: checked
//! JNI accepts `componentType`'s own ID, not one of our making.

use super::held::{ForClass, HeldByClasses};
use crate::capabilities::heap_dump::ids::{DumpIds, tag_object};
use crate::context::Context;
use hotspot::VmStructs;
use hotspot::init_lock::InitLock;
use jvmti::{Jni, Jvmti, sys};
use std::sync::OnceLock;

/// Holds the init lock of each of `classes` (the plan's loaded classes) in `held`, named in `ids`: how
/// many, or why none.
pub fn hold(
    ctx: &Context,
    jni: Jni,
    env: Jvmti,
    ids: &mut DumpIds,
    held: &mut HeldByClasses,
    classes: &[sys::jclass],
) -> Result<usize, String> {
    let vm = VmStructs::get().ok_or("HotSpot's structure tables are not readable")?;
    static FOUND: OnceLock<Result<InitLock, String>> = OnceLock::new();
    let lock = FOUND.get_or_init(|| InitLock::find(vm)).clone()?;
    lock.unwatched()?;
    let class_class = jni.find_class(c"java/lang/Class").map_err(|e| e.to_string())?;
    let checked = check_encoding(ctx, &lock, class_class);
    jni.delete_local_ref(class_class);
    let union = checked?;
    // Checked JNI refuses an ID of our making, not the declared field's own (JDK 17's componentType).
    if union.is_none() {
        lock.usable(vm)?;
    }
    let int_array = jni.find_class(c"[I").map_err(|e| e.to_string())?;
    let field = union.unwrap_or(lock.field_id() as sys::jfieldID);
    let mut count = 0;
    let mut result = Ok(());
    for &class in classes {
        let read = jni.with_local_frame(4, || {
            // A field ID of our making: HotSpot's own encoding of the field's offset, checked above, read
            // where JNI neither checks IDs nor posts field accesses (`InitLock::usable`).
            let value = jni.object_field(class, field);
            if value.is_null() {
                return Ok(());
            }
            let class_of = jni.object_class(value);
            if !jni.is_same_object(class_of, int_array) || jni.array_length(value) != 0 {
                // In JDK 17 an array class's component type, in the field the lock shares.
                if union.is_some() && jni.is_same_object(class_of, jni.object_class(class)) {
                    return Ok(());
                }
                return Err("a class object's init_lock field holds no int[0]".to_string());
            }
            let id = tag_object(jni, env, ids, value);
            if id != 0 {
                held.hold_for_class(jni, env, ids, ForClass { class, object: value, id, name: "<init_lock>" });
                count += 1;
            }
            Ok(())
        });
        if read.is_err() {
            result = read;
            break;
        }
    }
    jni.delete_local_ref(int_array);
    result.map(|()| count)
}

/// The declared instance fields of `java.lang.Class` have IDs encoded as [`InitLock::field_id`] encodes
/// the lock's, and none of them lies at the lock's offset — but `componentType` in JDK 17, where the lock
/// and an array class's component type share one slot (javaClasses.cpp: "Init lock is a C union with
/// component_mirror"): then that field's own ID.
fn check_encoding(ctx: &Context, lock: &InitLock, class_class: sys::jclass) -> Result<Option<sys::jfieldID>, String> {
    let fields = ctx.jvmti.field_infos(class_class).map_err(|e| format!("GetClassFields(Class): {e:?}"))?;
    let mut instance_fields = 0;
    let mut union = None;
    for f in fields.iter().filter(|f| !f.is_static()) {
        let id = f.field as usize;
        if id & 3 != 2 {
            return Err(format!("java.lang.Class.{} has the field ID {id:#x}", f.name));
        }
        if (id >> 2) as u32 == lock.offset() {
            if f.name != "componentType" {
                return Err(format!("java.lang.Class.{} lies where init_lock does", f.name));
            }
            union = Some(f.field);
        }
        instance_fields += 1;
    }
    if instance_fields == 0 {
        return Err("java.lang.Class has no instance fields to check field IDs on".into());
    }
    Ok(union)
}
