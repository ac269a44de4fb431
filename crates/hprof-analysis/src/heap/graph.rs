//! The object graph as flat arrays, and what can be asked of it.

use super::class_table::ClassTable;
use super::histogram::HistoRow;
use super::object_ids::ObjectIds;
use super::record_counts::SubRecordCounts;
use super::roots::Root;
use crate::layout::{Layout, LayoutChoice};
use hprof_format::binary::FormatError;

/// The heap as flat arrays: node `i` is the object with the i-th smallest id.
///
/// References to GC roots are left out: a root is reached from the super-root directly, so an edge into
/// it changes neither the dominator of any object (every path through it has a shortcut through the same
/// objects) nor any shortest path from the roots. On HotSpot dumps this drops every instance's reference
/// to its class when the class is a system class, about a third of all references.
pub struct HeapGraph {
    pub layout: Layout,
    pub layout_choice: LayoutChoice,
    pub classes: ClassTable,
    pub ids: ObjectIds,
    pub class_of: Vec<u32>,
    /// Shallow size, saturating at 4 GiB.
    pub shallow: Vec<u32>,
    /// Outgoing references of node i: `out_edges[out_start[i]..out_start[i + 1]]`.
    pub out_start: Vec<u32>,
    pub out_edges: Vec<u32>,
    pub roots: Vec<Root>,
    /// Each node's sub-record offset in the file, when asked for.
    pub offsets: Option<Vec<u64>>,
    /// References to ids that are not in the dump (normal in jcmd dumps).
    pub dangling: u64,
    pub counts: SubRecordCounts,
    pub damage: Option<FormatError>,
}

impl HeapGraph {
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    pub fn node(&self, id: u64) -> Option<u32> {
        self.ids.find(id)
    }

    /// The objects `v` references (empty once the references were released).
    pub fn refs(&self, v: u32) -> &[u32] {
        let v = v as usize;
        let (Some(&s), Some(&e)) = (self.out_start.get(v), self.out_start.get(v + 1)) else { return &[] };
        self.out_edges.get(s as usize..e as usize).unwrap_or(&[])
    }

    pub fn class_name(&self, v: u32) -> &str {
        &self.classes.classes[self.class_of[v as usize] as usize].name
    }

    /// `java.lang.String@0x7f00a1b8`, or for a class object `class java.lang.String@0x…`.
    pub fn describe(&self, v: u32) -> String {
        let id = self.ids.get(v);
        let class = (self.class_of[v as usize] == self.classes.class_class).then(|| self.classes.get(id)).flatten();
        if let Some(c) = class {
            return format!("class {}@0x{id:x}", c.name);
        }
        format!("{}@0x{id:x}", self.class_name(v))
    }

    /// The class histogram from the graph (same figures as the streaming [`histogram()`](super::histogram::histogram())).
    pub fn histogram(&self) -> Vec<HistoRow> {
        let mut per = vec![(0u64, 0u64); self.classes.classes.len()];
        for v in 0..self.len() {
            let e = &mut per[self.class_of[v] as usize];
            e.0 += 1;
            e.1 += self.shallow[v] as u64;
        }
        let mut rows: Vec<HistoRow> = per
            .iter()
            .enumerate()
            .filter(|(_, e)| e.0 > 0)
            .map(|(i, e)| HistoRow {
                class_name: self.classes.classes[i].name.clone(),
                class_id: self.classes.classes[i].id,
                instances: e.0,
                shallow_bytes: e.1,
            })
            .collect();
        rows.sort_by(|a, b| b.shallow_bytes.cmp(&a.shallow_bytes).then_with(|| a.class_name.cmp(&b.class_name)));
        rows
    }
}
