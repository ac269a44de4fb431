//! Android heap dumps (`JAVA PROFILE 1.0.3`), written here from the format's definition: HEAP DUMP INFO
//! switching heaps, the Android root kinds (interned string, debugger, VM internal, JNI monitor, unknown),
//! `String`s as windows (`offset`, `count`) into `char[]`s, 4-byte ids. Every heap command reads them, and
//! `waste`, `loaders`, `threads` and `diff --objects` find what was put there.

use hprof_format::binary::{Body, FrameRecord, RecordWriter};
use hprof_format::tags::{BasicType, heap as sub};
use jvm_harness::{hprof_json, scratch};
use serde_json::Value;
use std::path::Path;

const OBJECT: u64 = 0x100;
const STRING: u64 = 0x110;
const HASHMAP: u64 = 0x120;
const CLASS_LOADER: u64 = 0x130;
const PATH_LOADER: u64 = 0x140;
const HOLDER: u64 = 0x150;
const THREAD: u64 = 0x160;
const OBJECT_ARRAY: u64 = 0x170;
const LOADER: u64 = 0x5000;
const THREAD_OBJ: u64 = 0x6000;
const LOCAL: u64 = 0x7000;
const ITEMS: u64 = 0x9000;

/// Names (string id, text) the file defines.
const NAMES: [(u64, &str); 20] = [
    (1, "java/lang/Object"),
    (2, "java/lang/String"),
    (3, "java/util/HashMap"),
    (4, "java/lang/ClassLoader"),
    (5, "dalvik/system/PathClassLoader"),
    (6, "com/example/Holder"),
    (7, "java/lang/Thread"),
    (8, "[Ljava/lang/Object;"),
    (10, "value"),
    (11, "offset"),
    (12, "count"),
    (13, "hashCode"),
    (14, "table"),
    (15, "size"),
    (16, "parent"),
    (17, "name"),
    (18, "items"),
    (20, "zygote"),
    (21, "app"),
    (22, "run"),
];

/// A dump whose Holder class keeps `extra` Holder instances in its static `items` array.
fn android_dump(extra: u64) -> Vec<u8> {
    let idn = 4;
    let mut w = RecordWriter::new(Vec::new(), "JAVA PROFILE 1.0.3", idn, 0).unwrap();
    for (id, s) in NAMES {
        w.utf8(id, s).unwrap();
    }
    w.utf8(23, "()V").unwrap();
    w.utf8(24, "Holder.java").unwrap();
    let classes = [OBJECT, STRING, HASHMAP, CLASS_LOADER, PATH_LOADER, HOLDER, THREAD, OBJECT_ARRAY];
    for (i, &c) in classes.iter().enumerate() {
        w.load_class(i as u32 + 1, c, 0, i as u64 + 1).unwrap();
    }
    for (id, line) in [(0x10, 12), (0x11, 34)] {
        let f = FrameRecord {
            frame_id: id,
            method_name_id: 22,
            signature_id: 23,
            source_file_id: 24,
            class_serial: 6,
            line,
        };
        w.frame(&f).unwrap();
    }
    w.trace(1, 1, &[0x10, 0x11]).unwrap();

    let mut b = Body::new(idn);
    // The zygote heap: the classes (as Android dumps them, with their statics).
    b.u1(sub::HEAP_DUMP_INFO).u4(u32::from(b'Z')).id(20);
    let class = |b: &mut Body, id: u64, sup: u64, loader: u64, statics: &[(u64, u64)], fields: &[(u64, BasicType)]| {
        b.u1(sub::CLASS_DUMP).id(id).u4(0).id(sup).id(loader).id(0).id(0).id(0).id(0);
        let size: u32 = fields.iter().map(|(_, t)| t.size(idn)).sum();
        b.u4(size).u2(0).u2(statics.len() as u16);
        for &(name, v) in statics {
            b.id(name).u1(BasicType::Object as u8).id(v);
        }
        b.u2(fields.len() as u16);
        for &(name, t) in fields {
            b.id(name).u1(t as u8);
        }
    };
    use BasicType::{Int, Object};
    class(&mut b, OBJECT, 0, 0, &[], &[]);
    class(&mut b, STRING, OBJECT, 0, &[], &[(10, Object), (11, Int), (12, Int), (13, Int)]);
    class(&mut b, HASHMAP, OBJECT, 0, &[], &[(14, Object), (15, Int)]);
    class(&mut b, CLASS_LOADER, OBJECT, 0, &[], &[(16, Object)]);
    class(&mut b, PATH_LOADER, CLASS_LOADER, 0, &[], &[]);
    class(&mut b, HOLDER, OBJECT, LOADER, &[(18, ITEMS)], &[]);
    class(&mut b, THREAD, OBJECT, 0, &[], &[(17, Object)]);
    class(&mut b, OBJECT_ARRAY, OBJECT, 0, &[], &[]);
    for c in classes {
        b.u1(sub::ROOT_STICKY_CLASS).id(c);
    }
    // The app heap, in a segment of its own: the objects.
    let cut = b.len();
    b.u1(sub::HEAP_DUMP_INFO).u4(u32::from(b'A')).id(21);
    let chars = |b: &mut Body, id: u64, s: &str| {
        b.u1(sub::PRIMITIVE_ARRAY_DUMP).id(id).u4(0).u4(s.len() as u32).u1(BasicType::Char as u8);
        for c in s.encode_utf16() {
            b.u2(c);
        }
    };
    let string = |b: &mut Body, id: u64, value: u64, offset: u32, count: u32| {
        b.u1(sub::INSTANCE_DUMP).id(id).u4(0).id(STRING).u4(16).id(value).u4(offset).u4(count).u4(0);
    };
    // Three Strings "dup!", each with an array of its own; two windows "ab" and "cd" into one array.
    for i in 0..3 {
        chars(&mut b, 0x2100 + i * 0x10, "dup!");
        string(&mut b, 0x2000 + i * 0x10, 0x2100 + i * 0x10, 0, 4);
        b.u1(sub::ROOT_INTERNED_STRING).id(0x2000 + i * 0x10);
    }
    chars(&mut b, 0x2300, "abcd");
    string(&mut b, 0x2200, 0x2300, 0, 2);
    string(&mut b, 0x2210, 0x2300, 2, 2);
    b.u1(sub::ROOT_DEBUGGER).id(0x2200);
    b.u1(sub::ROOT_VM_INTERNAL).id(0x2210);
    // An empty HashMap (no table yet), held by a JNI monitor root.
    b.u1(sub::INSTANCE_DUMP).id(0x3000).u4(0).id(HASHMAP).u4(8).id(0).u4(0);
    b.u1(sub::ROOT_JNI_MONITOR).id(0x3000).u4(1).u4(0);
    // The app's loader (parent: the boot loader), held by an unknown root.
    b.u1(sub::INSTANCE_DUMP).id(LOADER).u4(0).id(PATH_LOADER).u4(4).id(0);
    b.u1(sub::ROOT_UNKNOWN).id(LOADER);
    // Holder.items: `extra` Holders.
    b.u1(sub::OBJECT_ARRAY_DUMP).id(ITEMS).u4(0).u4(extra as u32).id(OBJECT_ARRAY);
    for i in 0..extra {
        b.id(0xA000 + i * 0x10);
    }
    for i in 0..extra {
        b.u1(sub::INSTANCE_DUMP).id(0xA000 + i * 0x10).u4(0).id(HOLDER).u4(0);
    }
    // Thread 1 "main", whose frame 1 holds a char[1000] (Android writes no stack serial: 0xFFFFFFFF).
    chars(&mut b, 0x6100, "main");
    string(&mut b, 0x6200, 0x6100, 0, 4);
    b.u1(sub::INSTANCE_DUMP).id(THREAD_OBJ).u4(0).id(THREAD).u4(4).id(0x6200);
    b.u1(sub::ROOT_THREAD_OBJECT).id(THREAD_OBJ).u4(1).u4(u32::MAX);
    chars(&mut b, LOCAL, &"x".repeat(1000));
    b.u1(sub::ROOT_JAVA_FRAME).id(LOCAL).u4(1).u4(1);
    // Android cuts the heap into small segments; HEAP DUMP INFO resets at each.
    let bytes = b.as_slice();
    w.heap_dump_segment(&bytes[..cut]).unwrap();
    w.heap_dump_segment(&bytes[cut..]).unwrap();
    w.heap_dump_end().unwrap();
    w.into_inner()
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_str().unwrap().to_owned()
}

fn find<'a>(list: &'a Value, key: &str, want: &str) -> &'a Value {
    list.as_array().unwrap().iter().find(|x| x[key] == want).unwrap_or_else(|| panic!("no {key} = {want} in {list}"))
}

#[test]
fn android_dumps_are_read_by_every_heap_command() {
    let dir = scratch("android");
    let base = write(dir.path(), "base.hprof", &android_dump(0));
    let grown = write(dir.path(), "grown.hprof", &android_dump(4));

    let h = hprof_json(&["histo", "--json", &grown]);
    assert_eq!(find(&h["classes"], "class", "java.lang.String")["instances"], 6, "{h}");
    assert_eq!(find(&h["classes"], "class", "com.example.Holder")["instances"], 4, "{h}");
    let d = hprof_json(&["dominators", "--json", &grown]);
    assert_eq!(d["unreachable_objects"], 0, "every object hangs off an Android root: {d}");
    let s = hprof_json(&["dominators", "--json", &grown, "--class", "java.lang.String"]);
    let size = |class: &str| {
        let c = hprof_json(&["dominators", "--json", &grown, "--class", class]);
        c["objects"][0]["shallow_bytes"].as_u64().unwrap()
    };
    assert_eq!(s["objects"].as_array().unwrap().len(), 6);

    let w = hprof_json(&["waste", "--json", &grown]);
    let top = w["duplicate_strings"]["top"].as_array().unwrap();
    assert_eq!(top.len(), 1, "the windows \"ab\" and \"cd\" into one array are not duplicates: {w}");
    assert_eq!(top[0]["value"], "dup!");
    assert_eq!(top[0]["strings"], 3);
    assert_eq!(top[0]["arrays"], 3);
    // char[4] under the 32-bit layout is 12 + 8 = 20, aligned 24.
    assert_eq!(top[0]["wasted_bytes"], 2 * (size("java.lang.String") + 24), "{w}");
    let zygote = find(&w["heaps"], "name", "zygote");
    assert_eq!(zygote["objects"], 8, "the classes: {w}");
    let app = find(&w["heaps"], "name", "app");
    assert_eq!(app["objects"], h["total_instances"].as_u64().unwrap() - 8, "{w}");
    let maps = find(&w["collections"], "class", "java.util.HashMap");
    assert_eq!((maps["instances"].as_u64(), maps["empty"].as_u64()), (Some(1), Some(1)), "{w}");

    let l = hprof_json(&["loaders", "--json", &grown]);
    let loader = find(&l["loaders"], "class", "dalvik.system.PathClassLoader");
    assert_eq!(loader["classes"], 1, "{l}");
    assert_eq!(loader["instances"], 4, "{l}");
    assert_eq!(loader["parent"], "0x0", "{l}");

    let t = hprof_json(&["threads", "--json", &grown]);
    let main = find(&t["threads"], "name", "main");
    let frame = &main["frames"][1];
    assert_eq!(frame["method"], "com.example.Holder.run", "{main}");
    assert_eq!(frame["objects"][0]["class"], "char[]", "{main}");
    assert_eq!(frame["objects"][0]["shallow_bytes"], (12 + 2000_u64).div_ceil(8) * 8, "{main}");

    // The array that grew refers to other ids now: too many changed for auto to trust identity here.
    for (how, by) in [("auto", "class and path"), ("path", "class and path"), ("identity", "identity")] {
        let g = hprof_json(&["diff", "--objects", "--json", "--match", how, &base, &grown]);
        assert_eq!(g["matched_by"], by, "{g}");
        assert_eq!(g["new_objects"], 4, "{how}: {g}");
        let group = &g["groups"][0];
        assert_eq!(group["holder"], "java.lang.Object[]@0x9000", "{how}: {g}");
        assert_eq!(find(&group["classes"], "class", "com.example.Holder")["objects"], 4, "{how}: {g}");
        let steps = group["path"]["steps"].as_array().unwrap();
        assert_eq!(steps.last().unwrap()["field"], "static items", "{how}: {g}");
    }
    // A dump against itself: nothing new, and identity holds.
    let same = hprof_json(&["diff", "--objects", "--json", &grown, &grown]);
    assert_eq!((same["matched_by"].as_str(), same["new_objects"].as_u64()), (Some("identity"), Some(0)), "{same}");
}
