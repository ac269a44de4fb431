//! How one object refers to another: the field, array index or static that holds the reference.

use super::graph::HeapGraph;
use super::references::read_id;
use crate::dump::Dump;
use hprof_format::binary::heap::ids as array_ids;
use hprof_format::binary::{HeapRecord, HeapRecords};
use hprof_format::tags::BasicType;

impl HeapGraph {
    /// How `from` refers to `to`: a field name, `[index]`, or `static name`. Needs offsets.
    pub fn edge_label(&self, dump: &Dump, from: u32, to: u32) -> Option<String> {
        let offsets = self.offsets.as_ref()?;
        let target = self.ids.get(to);
        let at = offsets[from as usize] as usize;
        let data = dump.data();
        let (_, r) = HeapRecords::new(data.get(at..)?, at as u64, dump.id_size()).next()?.ok()?;
        let idn = dump.id_size() as usize;
        match r {
            HeapRecord::InstanceDump { class_id, values, .. } => {
                if class_id == target {
                    return Some("<class>".into());
                }
                let ci = self.classes.find(class_id)?;
                self.classes.field_blocks(ci, values.len()).find_map(|(c, base)| {
                    c.own_fields
                        .iter()
                        .find(|(_, t, off)| {
                            *t == BasicType::Object && read_id(values, base + *off as usize, idn) == Some(target)
                        })
                        .map(|(name, _, _)| name.clone())
                })
            }
            HeapRecord::ObjectArrayDump { elements, class_id, .. } => {
                if class_id == target {
                    return Some("<class>".into());
                }
                array_ids(elements, idn as u32).position(|e| e == target).map(|i| format!("[{i}]"))
            }
            HeapRecord::ClassDump(cd) => {
                let c = self.classes.get(cd.class_id)?;
                if let Some((name, _)) = c.statics.iter().find(|(_, v)| v.object_id() == Some(target)) {
                    return Some(format!("static {name}"));
                }
                Some(
                    match target {
                        t if t == cd.super_id => "<super>",
                        t if t == cd.loader_id => "<classloader>",
                        _ => "<constant pool>",
                    }
                    .into(),
                )
            }
            _ => None,
        }
    }
}
