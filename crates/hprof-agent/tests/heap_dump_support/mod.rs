//! Reads binary heap dumps with hprof_format's reader into plain maps, and checks the structural invariants
//! every dump must keep. Shared by the heap dump tests.

#![allow(dead_code)]

pub mod graph;

use hprof_format::binary::heap::ids as array_ids;
use hprof_format::binary::{ClassDump, HeapRecord, HeapRecords, Record, Records, parse_header};
use hprof_format::tags::BasicType;
use std::collections::{BTreeMap, HashMap, HashSet};

pub struct Instance {
    pub class_id: u64,
    pub values: Vec<u8>,
}

pub struct ObjectArray {
    pub class_id: u64,
    pub elements: Vec<u64>,
}

pub struct PrimitiveArray {
    pub ty: BasicType,
    pub length: u32,
    pub data: Vec<u8>,
}

/// A root sub-record: its kind name, the object, and the thread serial and frame where it has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootRec {
    pub kind: &'static str,
    pub id: u64,
    pub thread: Option<u32>,
    pub frame: Option<u32>,
    pub trace: Option<u32>,
}

/// One heap dump: the sub-records between the previous HEAP DUMP END (or the file's start) and its END.
#[derive(Default)]
pub struct Dump {
    pub classes: HashMap<u64, ClassDump>,
    pub instances: HashMap<u64, Instance>,
    pub object_arrays: HashMap<u64, ObjectArray>,
    pub primitive_arrays: HashMap<u64, PrimitiveArray>,
    pub roots: Vec<RootRec>,
    pub segments: usize,
    /// Segment bodies over 1 MiB that hold more than one sub-record (must stay 0).
    pub oversized_segments: usize,
    pub duplicate_ids: Vec<u64>,
}

pub struct HeapFile {
    pub version: String,
    pub strings: HashMap<u64, String>,
    /// LOAD CLASS: class object id → (serial, name).
    pub load_classes: HashMap<u64, (u32, String)>,
    /// START THREAD: serial → object id.
    pub threads: HashMap<u32, u64>,
    /// START THREAD: serial → thread name.
    pub thread_names: HashMap<u32, String>,
    /// STACK TRACE: serial → frame ids.
    pub traces: HashMap<u32, Vec<u64>>,
    /// STACK FRAME: id → method name.
    pub frames: HashMap<u64, String>,
    pub dumps: Vec<Dump>,
    /// Records after the last HEAP DUMP END that belong to an unfinished dump.
    pub unfinished_segments: usize,
}

fn root(kind: &'static str, id: u64, thread: Option<u32>, frame: Option<u32>, trace: Option<u32>) -> RootRec {
    RootRec { kind, id, thread, frame, trace }
}

impl HeapFile {
    /// Parses a whole file, panicking with the reader's message (which names the offset) on any error.
    pub fn parse(data: &[u8]) -> HeapFile {
        let header = parse_header(data).expect("header");
        assert_eq!(header.id_size, 8, "identifiers must be 8 bytes");
        let mut f = HeapFile {
            version: header.version.clone(),
            strings: HashMap::new(),
            load_classes: HashMap::new(),
            threads: HashMap::new(),
            thread_names: HashMap::new(),
            traces: HashMap::new(),
            frames: HashMap::new(),
            dumps: Vec::new(),
            unfinished_segments: 0,
        };
        let mut current = Dump::default();
        let mut seen: HashSet<u64> = HashSet::new();
        let mut in_dump = false;
        for raw in Records::new(data, &header) {
            let raw = raw.unwrap_or_else(|e| panic!("record: {e}"));
            let rec = Record::decode(&raw, 8).unwrap_or_else(|e| panic!("decode: {e}"));
            match rec {
                Record::Utf8 { id, text } => {
                    f.strings.insert(id, String::from_utf8_lossy(text).into_owned());
                }
                Record::LoadClass { serial, class_id, name_id, .. } => {
                    let name = f.strings.get(&name_id).cloned().unwrap_or_else(|| panic!("LOAD CLASS name {name_id}"));
                    f.load_classes.insert(class_id, (serial, name));
                }
                Record::StartThread { serial, object_id, name_id, .. } => {
                    f.threads.insert(serial, object_id);
                    f.thread_names.insert(serial, f.strings.get(&name_id).cloned().unwrap_or_default());
                }
                Record::Trace { serial, frame_ids, .. } => {
                    f.traces.insert(serial, frame_ids);
                }
                Record::Frame { id, method_name_id, .. } => {
                    f.frames.insert(id, f.strings.get(&method_name_id).cloned().unwrap_or_default());
                }
                Record::HeapDump { body, .. } => {
                    in_dump = true;
                    current.segments += 1;
                    let mut count = 0;
                    for sub in HeapRecords::new(body, raw.body_offset(), 8) {
                        let (_, sub) = sub.unwrap_or_else(|e| panic!("sub-record: {e}"));
                        count += 1;
                        add(&mut current, &mut seen, sub);
                    }
                    if body.len() > (1 << 20) && count > 1 {
                        current.oversized_segments += 1;
                    }
                }
                Record::HeapDumpEnd => {
                    f.dumps.push(std::mem::take(&mut current));
                    seen.clear();
                    in_dump = false;
                }
                _ => {}
            }
        }
        if in_dump {
            f.unfinished_segments = current.segments;
        }
        f
    }

    pub fn thread_serial(&self, name: &str) -> Option<u32> {
        self.thread_names.iter().find(|(_, n)| n.as_str() == name).map(|(s, _)| *s)
    }

    /// The method of frame `frame` (0 = top) of trace `trace`.
    pub fn frame_method(&self, trace: u32, frame: u32) -> Option<&str> {
        let id = self.traces.get(&trace)?.get(frame as usize)?;
        self.frames.get(id).map(String::as_str)
    }

    pub fn class_name(&self, id: u64) -> Option<&str> {
        self.load_classes.get(&id).map(|(_, n)| n.as_str())
    }
}

fn add(d: &mut Dump, seen: &mut HashSet<u64>, sub: HeapRecord<'_>) {
    if !sub.is_root()
        && let Some(id) = sub.object_id()
        && !seen.insert(id)
    {
        d.duplicate_ids.push(id);
    }
    match sub {
        HeapRecord::RootUnknown { id } => d.roots.push(root("unknown", id, None, None, None)),
        HeapRecord::RootJniGlobal { id, .. } => d.roots.push(root("jni global", id, None, None, None)),
        HeapRecord::RootJniLocal { id, thread_serial, frame } => {
            d.roots.push(root("jni local", id, Some(thread_serial), Some(frame), None))
        }
        HeapRecord::RootJavaFrame { id, thread_serial, frame } => {
            d.roots.push(root("java frame", id, Some(thread_serial), Some(frame), None))
        }
        HeapRecord::RootNativeStack { id, thread_serial } => {
            d.roots.push(root("native stack", id, Some(thread_serial), None, None))
        }
        HeapRecord::RootStickyClass { id } => d.roots.push(root("sticky class", id, None, None, None)),
        HeapRecord::RootThreadBlock { id, thread_serial } => {
            d.roots.push(root("thread block", id, Some(thread_serial), None, None))
        }
        HeapRecord::RootMonitorUsed { id } => d.roots.push(root("monitor used", id, None, None, None)),
        HeapRecord::RootThreadObject { id, thread_serial, trace_serial } => {
            d.roots.push(root("thread object", id, Some(thread_serial), None, Some(trace_serial)))
        }
        HeapRecord::ClassDump(c) => {
            d.classes.insert(c.class_id, *c);
        }
        HeapRecord::InstanceDump { id, class_id, values, .. } => {
            d.instances.insert(id, Instance { class_id, values: values.to_vec() });
        }
        HeapRecord::ObjectArrayDump { id, class_id, elements, .. } => {
            d.object_arrays.insert(id, ObjectArray { class_id, elements: array_ids(elements, 8).collect() });
        }
        HeapRecord::PrimitiveArrayDump { id, length, element_type, data, .. } => {
            d.primitive_arrays.insert(id, PrimitiveArray { ty: element_type, length, data: data.to_vec() });
        }
        other => panic!("unexpected sub-record {other:?}"),
    }
}

fn primitive_array_name(ty: BasicType) -> String {
    format!("{}[]", ty.java_name())
}

impl Dump {
    /// The only instance of class `name`.
    pub fn only_instance(&self, file: &HeapFile, name: &str) -> u64 {
        let found: Vec<u64> = self
            .instances
            .iter()
            .filter(|(_, i)| file.class_name(i.class_id) == Some(name))
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(found.len(), 1, "instances of {name}");
        found[0]
    }

    /// The trace serial of the ROOT THREAD OBJECT of thread `serial`.
    pub fn thread_trace(&self, serial: u32) -> Option<u32> {
        self.roots.iter().find(|r| r.kind == "thread object" && r.thread == Some(serial)).and_then(|r| r.trace)
    }

    /// Instances and arrays per class name, as a heap histogram counts them (class objects excluded).
    pub fn counts(&self, file: &HeapFile) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        let name = |id: u64| file.class_name(id).unwrap_or("<no LOAD CLASS>").to_owned();
        for i in self.instances.values() {
            *out.entry(name(i.class_id)).or_insert(0) += 1;
        }
        for a in self.object_arrays.values() {
            *out.entry(name(a.class_id)).or_insert(0) += 1;
        }
        for a in self.primitive_arrays.values() {
            *out.entry(primitive_array_name(a.ty)).or_insert(0) += 1;
        }
        out
    }

    pub fn class_by_name(&self, file: &HeapFile, name: &str) -> Option<&ClassDump> {
        self.classes.values().find(|c| file.class_name(c.class_id) == Some(name))
    }

    /// The field list of an instance of `class_id`: (name, type, byte offset), own class first.
    pub fn layout(&self, file: &HeapFile, class_id: u64) -> Vec<(String, BasicType, usize)> {
        let mut out = Vec::new();
        let mut offset = 0;
        let mut c = class_id;
        while let Some(cd) = self.classes.get(&c) {
            for f in &cd.fields {
                out.push((file.strings.get(&f.name_id).cloned().unwrap_or_default(), f.ty, offset));
                offset += f.ty.size(8) as usize;
            }
            c = cd.super_id;
        }
        out
    }

    /// A field's raw value (big-endian bytes) in an instance, by name (the first match, own class first).
    pub fn field<'a>(&'a self, file: &HeapFile, object: u64, name: &str) -> Option<(BasicType, &'a [u8])> {
        let inst = self.instances.get(&object)?;
        let (_, ty, offset) = self.layout(file, inst.class_id).into_iter().find(|(n, _, _)| n == name)?;
        Some((ty, &inst.values[offset..offset + ty.size(8) as usize]))
    }

    pub fn field_u64(&self, file: &HeapFile, object: u64, name: &str) -> Option<u64> {
        let (_, b) = self.field(file, object, name)?;
        let mut v = [0u8; 8];
        v[8 - b.len()..].copy_from_slice(b);
        Some(u64::from_be_bytes(v))
    }

    /// A static field's value by name.
    pub fn static_value(&self, file: &HeapFile, class: &str, name: &str) -> Option<hprof_format::binary::Value> {
        let c = self.class_by_name(file, class)?;
        c.statics.iter().find(|s| file.strings.get(&s.name_id).map(String::as_str) == Some(name)).map(|s| s.value)
    }

    pub fn contains(&self, id: u64) -> bool {
        self.instances.contains_key(&id)
            || self.object_arrays.contains_key(&id)
            || self.primitive_arrays.contains_key(&id)
            || self.classes.contains_key(&id)
    }

    /// Checks the invariants every dump keeps; returns the problems found (empty when sound).
    pub fn problems(&self, file: &HeapFile) -> Vec<String> {
        let mut p = Vec::new();
        if !self.duplicate_ids.is_empty() {
            p.push(format!("{} ids dumped twice, e.g. {:x}", self.duplicate_ids.len(), self.duplicate_ids[0]));
        }
        if self.oversized_segments > 0 {
            p.push(format!("{} segments over 1 MiB hold several sub-records", self.oversized_segments));
        }
        for c in self.classes.values() {
            if !file.load_classes.contains_key(&c.class_id) {
                p.push(format!("CLASS DUMP {:x} has no LOAD CLASS", c.class_id));
            }
            if c.super_id != 0 && !self.classes.contains_key(&c.super_id) {
                p.push(format!("superclass {:x} of {:?} has no CLASS DUMP", c.super_id, file.class_name(c.class_id)));
            }
            let size: u32 = self.layout(file, c.class_id).iter().map(|(_, t, _)| t.size(8)).sum();
            if size != c.instance_size {
                p.push(format!(
                    "{:?}: instance size {} but fields sum to {size}",
                    file.class_name(c.class_id),
                    c.instance_size
                ));
            }
            for f in c.fields.iter().map(|f| f.name_id).chain(c.statics.iter().map(|s| s.name_id)) {
                if !file.strings.contains_key(&f) {
                    p.push(format!("{:?}: field name {f} has no STRING", file.class_name(c.class_id)));
                }
            }
        }
        let mut dangling = 0;
        let mut dangling_example = None;
        let mut check_ref = |id: u64, from: &str| {
            if id != 0 && !self.contains(id) {
                dangling += 1;
                dangling_example.get_or_insert_with(|| format!("{id:x} from {from}"));
            }
        };
        for (id, i) in &self.instances {
            let Some(cd) = self.classes.get(&i.class_id) else {
                p.push(format!("instance {id:x}: class {:x} has no CLASS DUMP", i.class_id));
                continue;
            };
            if !file.load_classes.contains_key(&i.class_id) {
                p.push(format!("instance {id:x}: class {:x} has no LOAD CLASS", i.class_id));
            }
            if i.values.len() != cd.instance_size as usize {
                p.push(format!(
                    "instance {id:x} of {:?}: {} value bytes, class says {}",
                    file.class_name(i.class_id),
                    i.values.len(),
                    cd.instance_size
                ));
                continue;
            }
            for (name, ty, offset) in self.layout(file, i.class_id) {
                if ty == BasicType::Object {
                    let v = u64::from_be_bytes(i.values[offset..offset + 8].try_into().unwrap());
                    check_ref(v, &format!("{:?}.{name}", file.class_name(i.class_id)));
                }
            }
        }
        for (id, a) in &self.object_arrays {
            if !self.classes.contains_key(&a.class_id) || !file.load_classes.contains_key(&a.class_id) {
                p.push(format!("object array {id:x}: class {:x} lacks CLASS DUMP or LOAD CLASS", a.class_id));
            }
            for &e in &a.elements {
                check_ref(e, &format!("{:?}[]", file.class_name(a.class_id)));
            }
        }
        for c in self.classes.values() {
            for s in &c.statics {
                if let hprof_format::binary::Value::Object(v) = s.value {
                    check_ref(v, &format!("static of {:?}", file.class_name(c.class_id)));
                }
            }
        }
        if dangling > 0 {
            p.push(format!("{dangling} references to objects not in the dump, e.g. {}", dangling_example.unwrap()));
        }
        // Roots: threads and their frames.
        let thread_objects: HashMap<u32, (u64, u32)> = self
            .roots
            .iter()
            .filter(|r| r.kind == "thread object")
            .map(|r| (r.thread.unwrap(), (r.id, r.trace.unwrap())))
            .collect();
        for (serial, (id, trace)) in &thread_objects {
            if file.threads.get(serial) != Some(id) {
                p.push(format!(
                    "ROOT THREAD OBJECT {id:x} serial {serial}: START THREAD says {:?}",
                    file.threads.get(serial)
                ));
            }
            match file.traces.get(trace) {
                None => p.push(format!("thread {serial}: trace {trace} has no STACK TRACE")),
                Some(frames) => {
                    if let Some(f) = frames.iter().find(|f| !file.frames.contains_key(f)) {
                        p.push(format!("trace {trace}: frame {f} has no STACK FRAME"));
                    }
                }
            }
        }
        for r in self.roots.iter().filter(|r| r.kind == "java frame") {
            let thread = r.thread.unwrap();
            match thread_objects.get(&thread) {
                None => p.push(format!("JAVA FRAME root {:x}: thread {thread} has no ROOT THREAD OBJECT", r.id)),
                Some((_, trace)) => {
                    let depth = file.traces.get(trace).map_or(0, |f| f.len());
                    if r.frame.unwrap() as usize >= depth {
                        p.push(format!(
                            "JAVA FRAME root {:x}: frame {:?} beyond trace {trace} ({depth} frames)",
                            r.id, r.frame
                        ));
                    }
                }
            }
        }
        for r in &self.roots {
            if !self.contains(r.id) {
                p.push(format!("{} root {:x} is not in the dump", r.kind, r.id));
            }
        }
        p
    }
}
