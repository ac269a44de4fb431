//! The object inspector of the JSON API: an object's fields and values (read back from its record in
//! the file), its outgoing and incoming references, sizes, GC roots, and its path from a GC root —
//! through strong references, or also through the referents of weak and soft references when asked.

use super::groups::Groups;
use super::heap_api::{node, page_of};
use super::pages::query;
use crate::analyze::dominators::Analysed;
use crate::analyze::parse_id;
use crate::analyze::path::path_json;
use hprof_analysis::heap::root_kind_name;
use hprof_analysis::paths::{RootForest, RootPath, Search};
use hprof_format::binary::heap::ids as array_ids;
use hprof_format::binary::{HeapRecord, HeapRecords, Value as HValue};
use hprof_format::tags::BasicType;
use serde_json::{Value, json};

/// The node named by `id=` in the query.
pub fn target(an: &Analysed, q: &str) -> Result<u32, String> {
    let s = query(q, "id").unwrap_or_default();
    parse_id(&s).ok().and_then(|id| an.graph.node(id)).ok_or(format!("no object {s}"))
}

/// A value of `t` at `off` in big-endian `bytes`, as text, and the object id when it is a reference.
fn read_value(bytes: &[u8], off: usize, t: BasicType, idn: usize) -> Option<(String, Option<u64>)> {
    let size = if t == BasicType::Object { idn } else { t.size(idn as u32) as usize };
    let b = bytes.get(off..off + size)?;
    let mut x = 0u64;
    for &c in b {
        x = x << 8 | c as u64;
    }
    Some(match t {
        BasicType::Object => (if x == 0 { "null".into() } else { format!("0x{x:x}") }, (x != 0).then_some(x)),
        BasicType::Boolean => ((x != 0).to_string(), None),
        BasicType::Char => (format!("{:?}", char::from_u32(x as u32).unwrap_or('\u{fffd}')), None),
        BasicType::Float => (f32::from_bits(x as u32).to_string(), None),
        BasicType::Double => (f64::from_bits(x).to_string(), None),
        BasicType::Byte => ((x as u8 as i8).to_string(), None),
        BasicType::Short => ((x as u16 as i16).to_string(), None),
        BasicType::Int => ((x as u32 as i32).to_string(), None),
        BasicType::Long => ((x as i64).to_string(), None),
    })
}

fn hvalue(v: &HValue) -> (String, Option<u64>) {
    match *v {
        HValue::Object(0) => ("null".into(), None),
        HValue::Object(id) => (format!("0x{id:x}"), Some(id)),
        HValue::Boolean(b) => (b.to_string(), None),
        HValue::Char(c) => (format!("{:?}", char::from_u32(c as u32).unwrap_or('\u{fffd}')), None),
        HValue::Float(f) => (f.to_string(), None),
        HValue::Double(f) => (f.to_string(), None),
        HValue::Byte(b) => (b.to_string(), None),
        HValue::Short(s) => (s.to_string(), None),
        HValue::Int(i) => (i.to_string(), None),
        HValue::Long(l) => (l.to_string(), None),
    }
}

/// What `--redact` shows instead of a primitive value.
const REDACTED: &str = "<redacted>";

/// A value as shown: a primitive one replaced by [`REDACTED`] when `redact` (references stay).
fn shown(value: (String, Option<u64>), redact: bool) -> (String, Option<u64>) {
    if redact && value.1.is_none() && value.0 != "null" { (REDACTED.to_owned(), None) } else { value }
}

/// `{name, type, value, ref?}`: `ref` describes the object a reference points to, when it is in the dump.
fn field(an: &Analysed, name: &str, ty: &str, value: (String, Option<u64>)) -> Value {
    let r = value
        .1
        .and_then(|id| an.graph.node(id))
        .map(|w| json!({"id": format!("0x{:x}", an.graph.ids.get(w)), "label": an.graph.describe(w)}));
    json!({"name": name, "type": ty, "value": value.0, "ref": r})
}

/// The object's record in the file (the graph keeps each object's offset for `serve`).
fn record(an: &Analysed, v: u32) -> Option<HeapRecord<'_>> {
    let at = *an.graph.offsets.as_ref()?.get(v as usize)? as usize;
    let data = an.dump.data();
    let (_, r) = HeapRecords::new(data.get(at..)?, at as u64, an.dump.id_size()).next()?.ok()?;
    Some(r)
}

/// The text of a `char[]` (UTF-16) or `byte[]` (Latin-1 or UTF-16, as compact strings store them).
fn text_of(t: BasicType, data: &[u8], coder_utf16: bool) -> Option<String> {
    let units: Vec<u16> = match t {
        BasicType::Char => data.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect(),
        BasicType::Byte if coder_utf16 => data.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect(),
        BasicType::Byte => data.iter().map(|&b| b as u16).collect(),
        _ => return None,
    };
    Some(String::from_utf16_lossy(&units))
}

/// A `java.lang.String`'s text, from its `value` array (and `coder` on JDK 9+).
fn string_value(an: &Analysed, fields: &[Value]) -> Option<String> {
    let value = fields.iter().find(|f| f["name"] == "value")?;
    let id = parse_id(value["value"].as_str()?).ok()?;
    let coder =
        fields.iter().find(|f| f["name"] == "coder").and_then(|f| f["value"].as_str()).is_some_and(|c| c == "1");
    match record(an, an.graph.node(id)?)? {
        HeapRecord::PrimitiveArrayDump { element_type, data, .. } => {
            let t = text_of(element_type, data, coder)?;
            Some(t.chars().take(1000).collect())
        }
        _ => None,
    }
}

/// `/api/object?id=&offset&limit`: the object with its fields (or elements, or statics), references
/// out (first page, labelled by field) and the number of references in.
/// With `redact`, no primitive value, String text or array content is in the answer.
pub fn object(an: &Analysed, q: &str, redact: bool) -> Result<Value, String> {
    let v = target(an, q)?;
    let (offset, limit) = page_of(q);
    let g = &an.graph;
    let idn = an.dump.id_size() as usize;
    let mut out = json!({"object": node(an, v)});
    let roots: Vec<Value> = g
        .roots
        .iter()
        .filter(|r| r.node == v)
        .map(|r| json!({"kind": root_kind_name(r.kind), "thread_serial": r.thread_serial}))
        .collect();
    out["roots"] = Value::Array(roots);
    match record(an, v) {
        Some(HeapRecord::InstanceDump { values, class_id, .. }) => {
            out["kind"] = "instance".into();
            let mut fields = Vec::new();
            if let Some(ci) = g.classes.find(class_id) {
                for (c, base) in g.classes.field_blocks(ci, values.len()) {
                    for (name, t, off) in &c.own_fields {
                        if let Some(val) = read_value(values, base + *off as usize, *t, idn) {
                            let mut f = field(an, name, t.java_name(), shown(val, redact));
                            f["declared_by"] = c.name.clone().into();
                            fields.push(f);
                        }
                    }
                }
            }
            if g.class_name(v) == "java.lang.String" && !redact {
                out["string"] = string_value(an, &fields).into();
            }
            out["fields"] = Value::Array(fields);
        }
        Some(HeapRecord::ObjectArrayDump { elements, length, .. }) => {
            out["kind"] = "object array".into();
            out["length"] = length.into();
            let els: Vec<Value> = array_ids(elements, idn as u32)
                .enumerate()
                .skip(offset)
                .take(limit)
                .map(|(i, id)| {
                    let val = if id == 0 { ("null".into(), None) } else { (format!("0x{id:x}"), Some(id)) };
                    field(an, &format!("[{i}]"), "Object", val)
                })
                .collect();
            out["elements"] = Value::Array(els);
        }
        Some(HeapRecord::PrimitiveArrayDump { element_type, data, length, .. }) => {
            out["kind"] = "primitive array".into();
            out["length"] = length.into();
            let size = element_type.size(idn as u32) as usize;
            let els: Vec<Value> = (offset..(length as usize).min(offset + limit))
                .filter_map(|i| {
                    read_value(data, i * size, element_type, idn)
                        .map(|val| field(an, &format!("[{i}]"), element_type.java_name(), shown(val, redact)))
                })
                .collect();
            out["elements"] = Value::Array(els);
            if !redact {
                out["string"] =
                    text_of(element_type, data, false).map(|t| t.chars().take(1000).collect::<String>()).into();
            }
        }
        Some(HeapRecord::ClassDump(cd)) => {
            out["kind"] = "class".into();
            if let Some(c) = g.classes.get(cd.class_id) {
                out["class_name"] = c.name.clone().into();
                out["statics"] = c
                    .statics
                    .iter()
                    .map(|(name, val)| field(an, name, "static", shown(hvalue(val), redact)))
                    .collect::<Vec<_>>()
                    .into();
                out["super"] = (cd.super_id != 0).then(|| format!("0x{:x}", cd.super_id)).into();
                out["loader"] = (cd.loader_id != 0).then(|| format!("0x{:x}", cd.loader_id)).into();
            }
        }
        _ => out["kind"] = "object".into(),
    }
    let refs = g.refs(v);
    out["outgoing_total"] = refs.len().into();
    out["outgoing"] = refs
        .iter()
        .take(100)
        .map(|&w| {
            let mut n = node(an, w);
            n["field"] = g.edge_label(&an.dump, v, w).into();
            n
        })
        .collect::<Vec<_>>()
        .into();
    Ok(out)
}

/// `/api/incoming?id=&offset&limit`: the objects that refer to it (one pass over all references). The
/// graph leaves out references to GC roots, so a root shows none.
pub fn incoming(an: &Analysed, referrers: &Groups, q: &str) -> Result<Value, String> {
    let v = target(an, q)?;
    let (offset, limit) = page_of(q);
    let g = &an.graph;
    let mut from = referrers.get(v as usize).to_vec();
    from.dedup();
    let is_root = g.roots.iter().any(|r| r.node == v);
    Ok(json!({
        "total": from.len(),
        "offset": offset,
        "root": is_root,
        "objects": from.iter().skip(offset).take(limit).map(|&u| {
            let mut n = node(an, u);
            n["field"] = g.edge_label(&an.dump, u, v).into();
            n
        }).collect::<Vec<_>>(),
    }))
}

/// The classes with a `referent` field (java.lang.ref.Reference and its subclasses), by class index,
/// with the offset of the field in their values.
fn referent_offsets(an: &Analysed) -> Vec<Option<usize>> {
    let t = &an.graph.classes;
    (0..t.classes.len() as u32)
        .map(|ci| {
            let c = &t.classes[ci as usize];
            t.field_blocks(ci, c.field_bytes as usize).find_map(|(d, base)| {
                (d.name == "java.lang.ref.Reference")
                    .then(|| d.own_fields.iter().find(|f| f.0 == "referent").map(|f| base + f.2 as usize))
                    .flatten()
            })
        })
        .collect()
}

/// The shortest path from a GC root that may also go through the referents of weak, soft and phantom
/// references (which the graph leaves out); the steps through one are returned too (labelled `referent
/// (weak)`).
fn path_through_weak(an: &Analysed, target: u32) -> Option<(RootPath, Vec<u32>)> {
    let g = &an.graph;
    let offs = referent_offsets(an);
    let idn = an.dump.id_size() as usize;
    let referent = |v: u32| {
        let off = offs[g.class_of[v as usize] as usize]?;
        let id = match record(an, v)? {
            HeapRecord::InstanceDump { values, .. } => read_value(values, off, BasicType::Object, idn)?.1?,
            _ => return None,
        };
        g.node(id)
    };
    let how = Search { until: Some(target), not_through: None };
    let forest = RootForest::search(g, how, |v, add| {
        g.refs(v).iter().for_each(|&w| add(w));
        if let Some(w) = referent(v) {
            add(w);
        }
    });
    let p = forest.path(g, target)?;
    // A step the strong references of the one before do not explain came through the referent.
    let weak_steps = p.nodes.windows(2).filter(|s| !g.refs(s[0]).contains(&s[1])).map(|s| s[1]).collect();
    Some((p, weak_steps))
}

/// `/api/path?id=&weak=1`: the shortest path from a GC root, strong references only (read off `forest`,
/// the same path `hprof path` finds) unless `weak=1`.
pub fn path<'a>(an: &Analysed, forest: impl FnOnce() -> &'a RootForest, q: &str) -> Result<Value, String> {
    let v = target(an, q)?;
    let weak = query(q, "weak").is_some_and(|w| w == "1" || w == "true");
    let (p, weak_steps) = if weak {
        match path_through_weak(an, v) {
            Some((p, w)) => (Some(p), w),
            None => (None, Vec::new()),
        }
    } else {
        (forest().path(&an.graph, v), Vec::new())
    };
    let mut j = p.as_ref().map(|p| path_json(an, p));
    if let Some(steps) = j.as_mut().and_then(|j| j["steps"].as_array_mut()) {
        for s in steps.iter_mut() {
            let id = s["id"].as_str().and_then(|s| parse_id(s).ok()).and_then(|id| an.graph.node(id));
            if id.is_some_and(|w| weak_steps.contains(&w)) {
                s["field"] = "referent (weak)".into();
            }
            if let Some(w) = id {
                s["label"] = an.graph.describe(w).into();
            }
        }
    }
    Ok(json!({"object": node(an, v), "weak": weak, "path": j}))
}
