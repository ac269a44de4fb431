//! HEAP_DUMP: every live object, with the roots first at levels 1 and 2, in the specification's format.
//!
//! IterateThroughHeap tags every object that has no ID yet (the tag is its ID); FollowReferences, stopped
//! at the roots, reports the roots with their threads and frames; then each object is read through JNI
//! (`object_records`). The event carries the stack traces of the threads the roots' frame numbers refer to.

use crate::abi::*;
use crate::dump_buf::DumpBuf;
use crate::layer::{Layer, deliver};
use crate::object_records::RecordWriter;
use jvmti::{Jni, sys};
use rustc_hash::FxHashMap;

/// Deepest frame kept in a thread's trace.
const TRACE_DEPTH: usize = 1024;

struct Root {
    kind: u8,
    object: i64,
    thread_tag: i64,
    depth: i32,
}

pub fn request(layer: &Layer, jni: Jni, arg: *mut std::ffi::c_void) -> sys::jint {
    let level = if arg.is_null() {
        JVMPI_DUMP_LEVEL_2
    } else {
        // SAFETY: the argument of a HEAP_DUMP request is a JVMPI_HeapDumpArg.
        unsafe { (*arg.cast::<JVMPI_HeapDumpArg>()).heap_dump_level }
    };
    if !(JVMPI_DUMP_LEVEL_0..=JVMPI_DUMP_LEVEL_2).contains(&level) {
        return JVMPI_FAIL;
    }
    // Tag the classes and known threads first, so that the walk can name them; every class the dump
    // names is defined (CLASS_LOAD) before the dump arrives, array classes included.
    for c in layer.jvmti.loaded_classes().unwrap_or_default() {
        crate::classes::class_id(layer, c);
        crate::classes::ensure_announced(layer, jni, c);
        jni.delete_local_ref(c);
    }
    let threads = crate::threads::all();
    let thread_by_tag: FxHashMap<i64, usize> =
        threads.iter().map(|r| (crate::ids::tag_of_id(crate::ids::id_of(layer, r.jthread())), r.env)).collect();
    let tags = all_object_tags(layer);
    let mut out = DumpBuf::default();
    let mut traces = Vec::new();
    let mut frames: Vec<Vec<JVMPI_CallFrame>> = Vec::new();
    let mut writer = RecordWriter::default();
    if level == JVMPI_DUMP_LEVEL_0 {
        for_each_object(layer, jni, &tags, |object| {
            if writer.is_unloaded_mirror(layer, jni, object) {
                return;
            }
            let class = jni.object_class(object);
            let kind = crate::classes::alloc_kind(layer, jni, class);
            jni.delete_local_ref(class);
            out.u1(kind.is_array as u8);
            out.id(crate::ids::id_of(layer, object));
        });
    } else {
        for root in roots(layer) {
            write_root(&root, &thread_by_tag, &mut out);
        }
        for_each_object(layer, jni, &tags, |object| {
            if !writer.is_unloaded_mirror(layer, jni, object) {
                writer.write(layer, jni, object, level, &mut out)
            }
        });
        for r in &threads {
            frames.push(crate::monitor_dump::trace_of(layer, jni, r.jthread(), TRACE_DEPTH));
        }
        for (r, f) in threads.iter().zip(frames.iter_mut()) {
            traces.push(JVMPI_CallTrace {
                env_id: r.env as *mut sys::JNIEnv,
                num_frames: f.len() as i32,
                frames: f.as_mut_ptr(),
            });
        }
    }
    let (begin, end) = out.range();
    let mut ev = JVMPI_Event::new(JVMPI_EVENT_HEAP_DUMP, jni.raw());
    ev.u.heap_dump =
        HeapDump { dump_level: level, begin, end, num_traces: traces.len() as i32, traces: traces.as_mut_ptr() };
    deliver(&mut ev, true);
    JVMPI_SUCCESS
}

/// Every object's tag, tagging the untagged.
fn all_object_tags(layer: &Layer) -> Vec<i64> {
    unsafe extern "C" fn visit(
        _class_tag: sys::jlong,
        _size: sys::jlong,
        tag_ptr: *mut sys::jlong,
        _length: sys::jint,
        user_data: *mut std::ffi::c_void,
    ) -> sys::jint {
        crate::guard::guard(
            || {
                // SAFETY: JVMTI passes the object's tag slot and our Vec as user data, on this thread.
                unsafe {
                    if *tag_ptr == 0 {
                        *tag_ptr = crate::ids::fresh_tag();
                    }
                    (*user_data.cast::<Vec<i64>>()).push(*tag_ptr);
                }
            },
            (),
        );
        0
    }
    let mut tags: Vec<i64> = Vec::new();
    // SAFETY: an all-None callback table is valid.
    let mut cb: sys::jvmtiHeapCallbacks = unsafe { std::mem::zeroed() };
    cb.heap_iteration_callback = Some(visit);
    // SAFETY: `visit` only touches the tag slot and the Vec passed as user data.
    let _ =
        unsafe { layer.jvmti.iterate_through_heap(0, std::ptr::null_mut(), &cb, (&mut tags as *mut Vec<i64>).cast()) };
    tags
}

/// Resolves tags to objects in batches (each a JNI local frame) and calls `f` on each live one.
fn for_each_object(layer: &Layer, jni: Jni, tags: &[i64], mut f: impl FnMut(sys::jobject)) {
    for chunk in tags.chunks(4096) {
        jni.with_local_frame(chunk.len() as i32 + 64, || {
            for (object, _) in layer.jvmti.objects_with_tags(chunk).unwrap_or_default() {
                jni.with_local_frame(64, || f(object));
            }
        });
    }
}

/// The roots, from FollowReferences stopped at the first step.
fn roots(layer: &Layer) -> Vec<Root> {
    unsafe extern "C" fn visit(
        kind: sys::jvmtiHeapReferenceKind,
        info: *const sys::jvmtiHeapReferenceInfo,
        _class_tag: sys::jlong,
        _referrer_class_tag: sys::jlong,
        _size: sys::jlong,
        tag_ptr: *mut sys::jlong,
        _referrer_tag_ptr: *mut sys::jlong,
        _length: sys::jint,
        user_data: *mut std::ffi::c_void,
    ) -> sys::jint {
        crate::guard::guard(|| record_root(kind, info, tag_ptr, user_data), ());
        0
    }
    fn record_root(
        kind: sys::jvmtiHeapReferenceKind,
        info: *const sys::jvmtiHeapReferenceInfo,
        tag_ptr: *mut sys::jlong,
        user_data: *mut std::ffi::c_void,
    ) {
        let root_kind = match kind {
            sys::JVMTI_HEAP_REFERENCE_JNI_GLOBAL => JVMPI_GC_ROOT_JNI_GLOBAL,
            sys::JVMTI_HEAP_REFERENCE_SYSTEM_CLASS => JVMPI_GC_ROOT_STICKY_CLASS,
            sys::JVMTI_HEAP_REFERENCE_MONITOR => JVMPI_GC_ROOT_MONITOR_USED,
            sys::JVMTI_HEAP_REFERENCE_STACK_LOCAL => JVMPI_GC_ROOT_JAVA_FRAME,
            sys::JVMTI_HEAP_REFERENCE_JNI_LOCAL => JVMPI_GC_ROOT_JNI_LOCAL,
            sys::JVMTI_HEAP_REFERENCE_THREAD => JVMPI_GC_ROOT_THREAD_BLOCK,
            sys::JVMTI_HEAP_REFERENCE_OTHER => JVMPI_GC_ROOT_UNKNOWN,
            _ => return, // not a root: and we do not follow references
        };
        // SAFETY: JVMTI passes the referee's tag slot, the kind's info and our Vec, on this thread.
        unsafe {
            if *tag_ptr == 0 {
                *tag_ptr = crate::ids::fresh_tag();
            }
            let (thread_tag, depth) = match kind {
                sys::JVMTI_HEAP_REFERENCE_STACK_LOCAL => ((*info).stack_local.thread_tag, (*info).stack_local.depth),
                sys::JVMTI_HEAP_REFERENCE_JNI_LOCAL => ((*info).jni_local.thread_tag, (*info).jni_local.depth),
                sys::JVMTI_HEAP_REFERENCE_THREAD => (*tag_ptr, -1),
                _ => (0, -1),
            };
            (*user_data.cast::<Vec<Root>>()).push(Root { kind: root_kind, object: *tag_ptr, thread_tag, depth });
        }
    }
    let mut roots: Vec<Root> = Vec::new();
    // SAFETY: an all-None callback table is valid.
    let mut cb: sys::jvmtiHeapCallbacks = unsafe { std::mem::zeroed() };
    cb.heap_reference_callback = Some(visit);
    // SAFETY: `visit` only touches the tag slot and the Vec passed as user data.
    let _ = unsafe {
        layer.jvmti.follow_references(
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &cb,
            (&mut roots as *mut Vec<Root>).cast(),
        )
    };
    roots
}

fn write_root(root: &Root, thread_by_tag: &FxHashMap<i64, usize>, out: &mut DumpBuf) {
    let id = crate::ids::as_id(root.object);
    let env = thread_by_tag.get(&root.thread_tag).copied().unwrap_or(0) as *mut u8;
    out.u1(root.kind);
    out.id(id);
    match root.kind {
        JVMPI_GC_ROOT_JNI_GLOBAL => out.id(std::ptr::null_mut::<u8>()), // the reference itself is not known
        JVMPI_GC_ROOT_JNI_LOCAL | JVMPI_GC_ROOT_JAVA_FRAME => {
            out.id(env);
            out.u4(root.depth as u32);
        }
        JVMPI_GC_ROOT_THREAD_BLOCK => out.id(env),
        _ => {}
    }
}
