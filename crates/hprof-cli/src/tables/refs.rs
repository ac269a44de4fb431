//! The `references` and `roots` tables, in one pass over the heap dump's sub-records in file order.
//! Every reference the file holds is a row, the weak `referent` and references to GC roots included
//! (the dominator tree leaves those out; see `objects`), but not an instance's pointer to its class,
//! which is `objects.class_id`.

use super::writer::{Cell, TableWriter, Ty};
use hprof_analysis::Dump;
use hprof_analysis::heap::{HeapGraph, root_kind_name};
use hprof_format::binary::heap::ids as array_ids;
use hprof_format::binary::{HeapRecord, HeapRecords, Value};
use hprof_format::tags::BasicType;
use hprof_format::tags::heap as tag;
use std::path::Path;

pub const REFERENCES: &[(&str, Ty, bool)] = &[
    ("from_id", Ty::Int, false),
    ("to_id", Ty::Int, false),
    ("kind", Ty::Str, false),
    ("field", Ty::Str, true),
    ("array_index", Ty::Int, true),
];

pub const ROOTS: &[(&str, Ty, bool)] =
    &[("kind", Ty::Str, false), ("object", Ty::Int, false), ("thread_serial", Ty::Int, true), ("frame", Ty::Int, true)];

/// A root record's kind (an HPROF sub-record tag), thread serial and frame number.
fn root_of(r: &HeapRecord<'_>) -> Option<(u8, Option<u32>, Option<u32>)> {
    use HeapRecord::*;
    Some(match *r {
        RootUnknown { .. } => (tag::ROOT_UNKNOWN, None, None),
        RootJniGlobal { .. } => (tag::ROOT_JNI_GLOBAL, None, None),
        RootJniLocal { thread_serial, frame, .. } => (tag::ROOT_JNI_LOCAL, Some(thread_serial), Some(frame)),
        RootJavaFrame { thread_serial, frame, .. } => (tag::ROOT_JAVA_FRAME, Some(thread_serial), Some(frame)),
        RootNativeStack { thread_serial, .. } => (tag::ROOT_NATIVE_STACK, Some(thread_serial), None),
        RootStickyClass { .. } => (tag::ROOT_STICKY_CLASS, None, None),
        RootThreadBlock { thread_serial, .. } => (tag::ROOT_THREAD_BLOCK, Some(thread_serial), None),
        RootMonitorUsed { .. } => (tag::ROOT_MONITOR_USED, None, None),
        RootThreadObject { thread_serial, .. } => (tag::ROOT_THREAD_OBJECT, Some(thread_serial), None),
        RootInternedString { .. } => (tag::ROOT_INTERNED_STRING, None, None),
        RootFinalizing { .. } => (tag::ROOT_FINALIZING, None, None),
        RootDebugger { .. } => (tag::ROOT_DEBUGGER, None, None),
        RootReferenceCleanup { .. } => (tag::ROOT_REFERENCE_CLEANUP, None, None),
        RootVmInternal { .. } => (tag::ROOT_VM_INTERNAL, None, None),
        RootJniMonitor { .. } => (tag::ROOT_JNI_MONITOR, None, None),
        _ => return None,
    })
}

struct Refs {
    w: TableWriter,
}

impl Refs {
    fn add(&mut self, from: u64, to: u64, kind: &str, field: Option<&str>, index: Option<i64>) -> Result<(), String> {
        if to == 0 {
            return Ok(());
        }
        self.w.row(&[
            Cell::I(Some(from as i64)),
            Cell::I(Some(to as i64)),
            Cell::S(Some(kind)),
            Cell::S(field),
            Cell::I(index),
        ])
    }
}

fn read_id(b: &[u8], idn: usize) -> Option<u64> {
    b.get(..idn).map(|b| b.iter().fold(0u64, |acc, &x| (acc << 8) | x as u64))
}

/// Writes both tables; returns (references, roots).
pub fn write_references_and_roots(dump: &Dump, g: &HeapGraph, dir: &Path) -> Result<(u64, u64), String> {
    let mut refs = Refs { w: TableWriter::create(dir, "references", REFERENCES)? };
    let mut roots = TableWriter::create(dir, "roots", ROOTS)?;
    let idn = dump.id_size() as usize;
    let data = dump.data();
    let segments = dump.heap_dump().map(|h| h.segments.clone()).unwrap_or_default();
    for (s, e) in segments {
        for r in HeapRecords::new(&data[s..e], s as u64, dump.id_size()) {
            // Damage ends the pass where the graph's own pass ended; the command reports it.
            let Ok((_, r)) = r else { break };
            if let Some((kind, thread, frame)) = root_of(&r) {
                roots.row(&[
                    Cell::S(Some(root_kind_name(kind))),
                    Cell::I(r.object_id().map(|id| id as i64)),
                    Cell::I(thread.filter(|&t| t != 0).map(i64::from)),
                    Cell::I(frame.map(|f| f as i32 as i64)),
                ])?;
                continue;
            }
            match r {
                HeapRecord::InstanceDump { id, class_id, values, .. } => {
                    let Some(ci) = g.classes.find(class_id) else { continue };
                    for (c, base) in g.classes.field_blocks(ci, values.len()) {
                        for (name, ty, off) in &c.own_fields {
                            if *ty != BasicType::Object {
                                continue;
                            }
                            if let Some(to) = values.get(base + *off as usize..).and_then(|b| read_id(b, idn)) {
                                refs.add(id, to, "field", Some(name.as_str()), None)?;
                            }
                        }
                    }
                }
                HeapRecord::ObjectArrayDump { id, elements, .. } => {
                    for (i, to) in array_ids(elements, idn as u32).enumerate() {
                        refs.add(id, to, "element", None, Some(i as i64))?;
                    }
                }
                HeapRecord::ClassDump(cd) => {
                    let from = cd.class_id;
                    refs.add(from, cd.super_id, "super", None, None)?;
                    refs.add(from, cd.loader_id, "loader", None, None)?;
                    refs.add(from, cd.signers_id, "signers", None, None)?;
                    refs.add(from, cd.protection_domain_id, "protection_domain", None, None)?;
                    let statics = g.classes.get(from).map(|c| &c.statics[..]).unwrap_or(&[]);
                    for (name, v) in statics {
                        if let Value::Object(to) = v {
                            refs.add(from, *to, "static", Some(name.as_str()), None)?;
                        }
                    }
                    for (i, v) in &cd.constant_pool {
                        if let Value::Object(to) = v {
                            refs.add(from, *to, "constant_pool", None, Some(*i as i64))?;
                        }
                    }
                }
                _ => {}
            }
        }
        dump.source.release(s, e);
    }
    Ok((refs.w.close()?, roots.close()?))
}
