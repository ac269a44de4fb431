//! The dump records of single objects (JVMPI_GC_INSTANCE_DUMP, _OBJ_ARRAY_DUMP, _PRIM_ARRAY_DUMP,
//! _CLASS_DUMP), with field and element values read through JNI, which may read any field, private or not.
//! At JVMPI_DUMP_LEVEL_1 primitive fields, primitive statics and primitive array elements are left out.

use crate::abi::*;
use crate::dump_buf::DumpBuf;
use crate::layer::{Layer, deliver};
use jvmti::{Jni, sys};
use rustc_hash::{FxHashMap, FxHashSet};

/// A field to dump: its ID and the first character of its signature.
#[derive(Clone, Copy)]
struct Field {
    id: sys::jfieldID,
    kind: u8,
}

/// A class's instance fields (the class's own first, then its superclass's, …) and its statics.
struct Layout {
    instance: Vec<Field>,
    statics: Vec<Field>,
}

/// Caches each class's layout for the length of one dump.
#[derive(Default)]
pub struct RecordWriter {
    layouts: FxHashMap<i64, Layout>,
    /// The ID of java.lang.Class, to tell class objects (CLASS_DUMP) from other instances.
    class_class: Option<jobjectID>,
    /// The tags of the loaded classes (GetLoadedClasses).
    loaded: Option<FxHashSet<i64>>,
}

fn is_reference(kind: u8) -> bool {
    kind == b'L' || kind == b'['
}

/// Calls a JNI function by name from the thread's table.
macro_rules! jni {
    ($jni:expr, $f:ident $(, $arg:expr)*) => {{
        let env = $jni.raw();
        // SAFETY: the calling thread's JNIEnv; the arguments are what the JNI function takes, with IDs
        // obtained for the object's own class.
        unsafe { (**env).$f.expect(stringify!($f))(env $(, $arg)*) }
    }};
}

impl RecordWriter {
    fn layout(&mut self, layer: &Layer, jni: Jni, class: sys::jclass) -> &Layout {
        let tag = crate::ids::tag_of_id(crate::classes::class_id(layer, class));
        self.layouts.entry(tag).or_insert_with(|| {
            let statics = fields_of(layer, class, true);
            let mut instance = Vec::new();
            let mut c = jni!(jni, NewLocalRef, class);
            while !c.is_null() {
                instance.extend(fields_of(layer, c, false));
                let sup = jni.superclass(c);
                jni.delete_local_ref(c);
                c = sup;
            }
            Layout { instance, statics }
        })
    }

    fn is_class_object(&mut self, layer: &Layer, jni: Jni, class: sys::jclass) -> bool {
        let class_class = *self.class_class.get_or_insert_with(|| match jni.find_class(c"java/lang/Class") {
            Ok(c) => {
                let id = crate::classes::class_id(layer, c);
                jni.delete_local_ref(c);
                id
            }
            Err(_) => {
                jni.exception_clear();
                std::ptr::null_mut()
            }
        });
        !class_class.is_null() && crate::classes::class_id(layer, class) == class_class
    }

    /// Whether `object` is a java.lang.Class that stands for no loaded class: the mirrors of primitive types
    /// (int.class…) and, with class data sharing, the archived mirrors of classes not loaded yet. HotSpot's
    /// JVMTI must not be asked about them (it crashes); dumps leave them out as VM-internal.
    pub fn is_unloaded_mirror(&mut self, layer: &Layer, jni: Jni, object: sys::jobject) -> bool {
        let class = jni.object_class(object);
        let is_class = self.is_class_object(layer, jni, class);
        jni.delete_local_ref(class);
        if !is_class {
            return false;
        }
        let loaded = self.loaded.get_or_insert_with(|| {
            let mut tags = FxHashSet::default();
            for c in layer.jvmti.loaded_classes().unwrap_or_default() {
                tags.insert(crate::ids::tag_of_id(crate::classes::class_id(layer, c)));
                jni.delete_local_ref(c);
            }
            tags
        });
        !loaded.contains(&crate::ids::existing_tag(layer, object))
    }

    /// The record of one object; `level` is JVMPI_DUMP_LEVEL_1 or _2.
    pub fn write(&mut self, layer: &Layer, jni: Jni, object: sys::jobject, level: sys::jint, out: &mut DumpBuf) {
        let class = jni.object_class(object);
        let prims = level >= JVMPI_DUMP_LEVEL_2;
        let kind = crate::classes::alloc_kind(layer, jni, class);
        let id = crate::ids::id_of(layer, object);
        if self.is_class_object(layer, jni, class) {
            self.write_class(layer, jni, object, prims, out);
        } else if kind.is_array == JVMPI_NORMAL_OBJECT {
            out.u1(JVMPI_GC_INSTANCE_DUMP);
            out.id(id);
            out.id(crate::classes::class_id(layer, class));
            let at = out.len();
            out.u4(0);
            let fields = self.layout(layer, jni, class).instance.clone();
            for f in fields.iter().filter(|f| prims || is_reference(f.kind)) {
                write_field(layer, jni, object, *f, false, out);
            }
            let n = (out.len() - at - 4) as u32;
            out.patch_u4(at, n);
        } else if kind.is_array == JVMPI_CLASS {
            let n = jni.array_length(object);
            out.u1(JVMPI_GC_OBJ_ARRAY_DUMP);
            out.id(id);
            out.u4(n as u32);
            out.id(kind.class_id);
            for i in 0..n {
                let e = jni!(jni, GetObjectArrayElement, object, i);
                out.id(crate::ids::id_of(layer, e));
                if !e.is_null() {
                    jni.delete_local_ref(e);
                }
            }
        } else {
            let n = jni.array_length(object);
            out.u1(JVMPI_GC_PRIM_ARRAY_DUMP);
            out.id(id);
            out.u4(n as u32);
            out.u1(kind.is_array as u8);
            if prims {
                write_prim_elements(jni, object, kind.is_array, n, out);
            }
        }
        jni.delete_local_ref(class);
    }

    fn write_class(&mut self, layer: &Layer, jni: Jni, class: sys::jclass, prims: bool, out: &mut DumpBuf) {
        out.u1(JVMPI_GC_CLASS_DUMP);
        out.id(crate::classes::class_id(layer, class));
        let sup = jni.superclass(class);
        out.id(crate::ids::id_of(layer, sup));
        let loader = layer.jvmti.class_loader(class).unwrap_or(std::ptr::null_mut());
        out.id(crate::ids::id_of(layer, loader));
        out.id(std::ptr::null_mut::<u8>()); // signers
        out.id(std::ptr::null_mut::<u8>()); // protection domain
        out.id(std::ptr::null_mut::<u8>()); // class name String: "may be NULL"
        out.id(std::ptr::null_mut::<u8>()); // reserved
        let layout = self.layout(layer, jni, class);
        let (instance, statics) = (layout.instance.clone(), layout.statics.clone());
        // The instance size: the bytes of an instance dump's field values at level 2.
        out.u4(instance.iter().map(|f| value_size(f.kind)).sum::<usize>() as u32);
        for i in layer.jvmti.implemented_interfaces(class).unwrap_or_default() {
            out.id(crate::classes::class_id(layer, i));
            jni.delete_local_ref(i);
        }
        out.u2(0); // constant pool entries: JVMTI gives no resolved values
        for f in statics.iter().filter(|f| prims || is_reference(f.kind)) {
            write_field(layer, jni, class, *f, true, out);
        }
        for o in [sup, loader] {
            if !o.is_null() {
                jni.delete_local_ref(o);
            }
        }
    }
}

fn fields_of(layer: &Layer, class: sys::jclass, statics: bool) -> Vec<Field> {
    layer
        .jvmti
        .field_infos(class)
        .unwrap_or_default()
        .into_iter()
        .filter(|f| f.is_static() == statics)
        .map(|f| Field { id: f.field, kind: f.signature.bytes().next().unwrap_or(b'L') })
        .collect()
}

fn value_size(kind: u8) -> usize {
    match kind {
        b'Z' | b'B' => 1,
        b'C' | b'S' => 2,
        b'I' | b'F' => 4,
        b'J' | b'D' => 8,
        _ => std::mem::size_of::<usize>(),
    }
}

fn write_field(layer: &Layer, jni: Jni, target: sys::jobject, f: Field, is_static: bool, out: &mut DumpBuf) {
    macro_rules! get {
        ($inst:ident, $stat:ident) => {
            if is_static { jni!(jni, $stat, target, f.id) } else { jni!(jni, $inst, target, f.id) }
        };
    }
    match f.kind {
        b'Z' => out.u1(get!(GetBooleanField, GetStaticBooleanField)),
        b'B' => out.u1(get!(GetByteField, GetStaticByteField) as u8),
        b'C' => out.u2(get!(GetCharField, GetStaticCharField)),
        b'S' => out.u2(get!(GetShortField, GetStaticShortField) as u16),
        b'I' => out.u4(get!(GetIntField, GetStaticIntField) as u32),
        b'F' => out.u4(get!(GetFloatField, GetStaticFloatField).to_bits()),
        b'J' => out.u8(get!(GetLongField, GetStaticLongField) as u64),
        b'D' => out.u8(get!(GetDoubleField, GetStaticDoubleField).to_bits()),
        _ => {
            let v = get!(GetObjectField, GetStaticObjectField);
            out.id(crate::ids::id_of(layer, v));
            if !v.is_null() {
                jni.delete_local_ref(v);
            }
        }
    }
}

fn write_prim_elements(jni: Jni, array: sys::jobject, ty: sys::jint, n: i32, out: &mut DumpBuf) {
    let n = n.max(0) as usize;
    macro_rules! region {
        ($f:ident, $t:ty, $put:expr) => {{
            let mut v: Vec<$t> = vec![Default::default(); n];
            jni!(jni, $f, array, 0, n as i32, v.as_mut_ptr());
            for x in v {
                $put(out, x);
            }
        }};
    }
    match ty {
        JVMPI_BOOLEAN => region!(GetBooleanArrayRegion, u8, |o: &mut DumpBuf, x| o.u1(x)),
        JVMPI_BYTE => region!(GetByteArrayRegion, i8, |o: &mut DumpBuf, x: i8| o.u1(x as u8)),
        JVMPI_CHAR => region!(GetCharArrayRegion, u16, |o: &mut DumpBuf, x| o.u2(x)),
        JVMPI_SHORT => region!(GetShortArrayRegion, i16, |o: &mut DumpBuf, x: i16| o.u2(x as u16)),
        JVMPI_INT => region!(GetIntArrayRegion, i32, |o: &mut DumpBuf, x: i32| o.u4(x as u32)),
        JVMPI_FLOAT => region!(GetFloatArrayRegion, f32, |o: &mut DumpBuf, x: f32| o.u4(x.to_bits())),
        JVMPI_LONG => region!(GetLongArrayRegion, i64, |o: &mut DumpBuf, x: i64| o.u8(x as u64)),
        JVMPI_DOUBLE => region!(GetDoubleArrayRegion, f64, |o: &mut DumpBuf, x: f64| o.u8(x.to_bits())),
        _ => {}
    }
}

/// OBJECT_DUMP: one object's record at JVMPI_DUMP_LEVEL_2.
pub fn request_object_dump(layer: &Layer, jni: Jni, id: jobjectID) -> sys::jint {
    let object = crate::ids::object_of(layer, id);
    if object.is_null() {
        return JVMPI_FAIL;
    }
    let mut out = DumpBuf::default();
    let mut writer = RecordWriter::default();
    if writer.is_unloaded_mirror(layer, jni, object) {
        jni.delete_local_ref(object);
        return JVMPI_FAIL;
    }
    writer.write(layer, jni, object, JVMPI_DUMP_LEVEL_2, &mut out);
    jni.delete_local_ref(object);
    let mut ev = JVMPI_Event::new(JVMPI_EVENT_OBJECT_DUMP, jni.raw());
    ev.u.object_dump = ObjectDump { data_len: out.len() as i32, data: out.bytes.as_mut_ptr().cast() };
    deliver(&mut ev, true);
    JVMPI_SUCCESS
}
