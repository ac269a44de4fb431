//! The class table: each class's name, fields, field blocks and sizes under the dump's layout.

use super::primitives::{PRIMITIVES, type_slot};
use crate::class_sizes::{ClassShapes, ClassSizes};
use crate::dump::Dump;
use crate::layout::Layout;
use hprof_format::binary::{ClassDump, Value};
use hprof_format::tags::BasicType;
use rustc_hash::FxHashMap;

/// A class as the analysis sees it.
#[derive(Debug, Clone)]
pub struct ClassInfo {
    /// The class object's id; 0 for the primitive array pseudo-classes.
    pub id: u64,
    /// Java source form: `java.lang.String`, `int[]`.
    pub name: String,
    pub super_id: u64,
    pub loader_id: u64,
    /// Shallow size of one instance under the dump's layout (0 for array classes: their sizes vary).
    pub instance_size: u64,
    /// Bytes of field values in an INSTANCE DUMP (own and inherited fields).
    pub field_bytes: u64,
    /// The class's own instance fields as (name, type, offset in its own block of the values). An
    /// instance's values hold its class's block first, then each superclass's: walk them with
    /// [`ClassTable::field_blocks`]. Lists are not flattened per class, so a deep hierarchy with many
    /// fields costs memory linear in the file, not in classes × inherited fields.
    pub own_fields: Vec<(String, BasicType, u32)>,
    /// Offsets (in its own block) of its own reference fields that retain (the weak `referent` of
    /// java.lang.ref.Reference is left out).
    pub own_strong_offsets: Vec<u32>,
    /// Bytes of its own block.
    pub own_bytes: u32,
    /// The nearest superclass that declares instance fields (a class index), `NO_CLASS` at the top. The
    /// links never form a cycle (a hostile file's superclass cycle is cut where it closes).
    pub fields_super: u32,
    /// Static fields as (name, value).
    pub statics: Vec<(String, Value)>,
    pub constant_pool_refs: Vec<u64>,
    pub signers_id: u64,
    pub protection_domain_id: u64,
    /// Shallow size of the class object itself: header and static fields.
    pub class_object_size: u64,
    /// The array classes whose element type this class is (`Foo[]` for `Foo`): the VM's element class
    /// holds them, so the graph gets an edge from each class to them.
    pub array_class_ids: Vec<u64>,
}

/// All classes of a dump, plus pseudo-classes for primitive arrays and for objects of unknown class.
#[derive(Debug, Clone)]
pub struct ClassTable {
    pub classes: Vec<ClassInfo>,
    by_id: FxHashMap<u64, u32>,
    prim_array: [u32; 12],
    /// The class of class objects (`java.lang.Class`).
    pub class_class: u32,
    /// Objects whose class has no CLASS DUMP.
    pub unknown_class: u32,
    /// A `java.lang.Class` instance without statics (HotSpot dumps the primitive types' mirrors as such
    /// instances).
    pub bare_mirror: u64,
}

impl ClassTable {
    /// The classes of `dumps`, sized by `sizes` (see [`ClassSizes`]).
    pub fn build_sized(dump: &Dump, dumps: Vec<ClassDump>, layout: Layout, sizes: &ClassSizes) -> ClassTable {
        let mut classes = Vec::with_capacity(dumps.len() + 10);
        let mut by_id = FxHashMap::default();
        let name_of = |id: u64| dump.class_name(id).unwrap_or_else(|| format!("<class 0x{id:x}>"));
        let string = |id: u64| dump.string(id).unwrap_or_else(|| format!("<field 0x{id:x}>"));
        let mut sorted: Vec<&ClassDump> = dumps.iter().collect();
        sorted.sort_by_key(|c| c.class_id);
        sorted.dedup_by_key(|c| c.class_id);
        for c in &sorted {
            by_id.insert(c.class_id, classes.len() as u32);
            let name = name_of(c.class_id);
            let is_reference = name == "java.lang.ref.Reference";
            let mut own_fields = Vec::with_capacity(c.fields.len());
            let mut own_strong = Vec::new();
            let mut off = 0u32;
            for f in &c.fields {
                let fname = string(f.name_id);
                if f.ty == BasicType::Object && !(is_reference && fname == "referent") {
                    own_strong.push(off);
                }
                own_fields.push((fname, f.ty, off));
                off = off.saturating_add(f.ty.size(layout.id_size));
            }
            let own_refs = c.fields.iter().filter(|f| f.ty == BasicType::Object).count() as u64;
            let statics: Vec<(String, Value)> = c.statics.iter().map(|s| (string(s.name_id), s.value)).collect();
            let static_bytes: u64 = c
                .statics
                .iter()
                .map(|s| if s.ty == BasicType::Object { layout.ref_size() } else { s.ty.size(layout.id_size) as u64 })
                .sum();
            classes.push(ClassInfo {
                id: c.class_id,
                // Set below, once the whole hierarchy is known.
                instance_size: own_refs,
                field_bytes: 0,
                own_fields,
                own_strong_offsets: own_strong,
                own_bytes: off,
                fields_super: NO_CLASS,
                name,
                super_id: c.super_id,
                loader_id: c.loader_id,
                statics,
                constant_pool_refs: c.constant_pool.iter().filter_map(|(_, v)| v.object_id()).collect(),
                signers_id: c.signers_id,
                protection_domain_id: c.protection_domain_id,
                class_object_size: sizes
                    .mirror
                    .get(&c.class_id)
                    .copied()
                    .unwrap_or_else(|| layout.align(layout.instance_size(0, 0) + static_bytes)),
                array_class_ids: Vec::new(),
            });
        }
        link_superclasses(&mut classes, &by_id, layout, sizes);
        let pseudo = |classes: &mut Vec<ClassInfo>, name: String| {
            classes.push(ClassInfo {
                id: 0,
                name,
                super_id: 0,
                loader_id: 0,
                instance_size: 0,
                field_bytes: 0,
                own_fields: Vec::new(),
                own_strong_offsets: Vec::new(),
                own_bytes: 0,
                fields_super: NO_CLASS,
                statics: Vec::new(),
                constant_pool_refs: Vec::new(),
                signers_id: 0,
                protection_domain_id: 0,
                class_object_size: 0,
                array_class_ids: Vec::new(),
            });
            (classes.len() - 1) as u32
        };
        {
            let mut by_name: FxHashMap<(&str, u64), usize> = FxHashMap::default();
            for (i, c) in classes.iter().enumerate() {
                by_name.insert((c.name.as_str(), c.loader_id), i);
            }
            let links: Vec<(usize, u64)> = classes
                .iter()
                .filter_map(|c| {
                    let elem = c.name.strip_suffix("[]")?;
                    by_name.get(&(elem, c.loader_id)).map(|&e| (e, c.id))
                })
                .collect();
            for (e, a) in links {
                classes[e].array_class_ids.push(a);
            }
        }
        let mut prim_array = [u32::MAX; 12];
        for t in PRIMITIVES {
            prim_array[type_slot(t)] = pseudo(&mut classes, format!("{}[]", t.java_name()));
        }
        let class_class = match classes.iter().position(|c| c.name == "java.lang.Class") {
            Some(i) => i as u32,
            None => pseudo(&mut classes, "java.lang.Class".into()),
        };
        let unknown_class = pseudo(&mut classes, "<unknown class>".into());
        ClassTable { classes, by_id, prim_array, class_class, unknown_class, bare_mirror: sizes.bare_mirror }
    }

    /// The blocks of an instance's field values, its class's first: each class that declares fields, with
    /// where its block starts. Stops once a block would start at or past `values_len` (each block holds
    /// at least one byte, so the walk is never longer than the values it reads).
    pub fn field_blocks(&self, class: u32, values_len: usize) -> impl Iterator<Item = (&ClassInfo, usize)> + '_ {
        let mut next = Some((class, 0usize));
        std::iter::from_fn(move || {
            let (ci, base) = next?;
            let c = self.classes.get(ci as usize)?;
            let after = base + c.own_bytes as usize;
            next = (c.fields_super != NO_CLASS && after < values_len).then_some((c.fields_super, after));
            Some((c, base))
        })
        .filter(move |&(c, base)| c.own_bytes > 0 && base < values_len)
    }

    /// The classes of `dumps` with HotSpot's sizes under `layout`.
    pub fn build(dump: &Dump, dumps: Vec<ClassDump>, layout: Layout) -> ClassTable {
        let sizes = ClassShapes::new(dump, &dumps).sizes(&layout);
        ClassTable::build_sized(dump, dumps, layout, &sizes)
    }

    /// The class index of a class object id (or the unknown-class pseudo-class).
    pub fn index_of(&self, class_id: u64) -> u32 {
        self.by_id.get(&class_id).copied().unwrap_or(self.unknown_class)
    }

    /// The class index of a class object id that has a CLASS DUMP.
    pub fn find(&self, class_id: u64) -> Option<u32> {
        self.by_id.get(&class_id).copied()
    }

    pub fn get(&self, class_id: u64) -> Option<&ClassInfo> {
        self.by_id.get(&class_id).map(|&i| &self.classes[i as usize])
    }

    pub fn primitive_array(&self, t: BasicType) -> u32 {
        self.prim_array[type_slot(t)]
    }
}

/// No class (the end of a superclass chain).
pub const NO_CLASS: u32 = u32::MAX;

/// Links each class to its superclass's fields and sums what it inherits (field bytes and references,
/// for its size), in one pass over the hierarchy whatever its depth. A superclass cycle (hostile files)
/// is cut where it closes. `instance_size` holds the class's own reference count on entry.
pub(super) fn link_superclasses(
    classes: &mut [ClassInfo],
    by_id: &FxHashMap<u64, u32>,
    layout: Layout,
    sizes: &ClassSizes,
) {
    const NEW: u8 = 0;
    const OPEN: u8 = 1;
    const DONE: u8 = 2;
    let n = classes.len();
    let mut state = vec![NEW; n];
    let mut refs = vec![0u64; n];
    let mut stack: Vec<usize> = Vec::new();
    for first in 0..n {
        let mut cur = first;
        while state[cur] == NEW {
            state[cur] = OPEN;
            stack.push(cur);
            match by_id.get(&classes[cur].super_id) {
                Some(&s) if classes[cur].super_id != 0 => cur = s as usize,
                _ => break,
            }
        }
        while let Some(c) = stack.pop() {
            let own_refs = classes[c].instance_size;
            let sup = by_id
                .get(&classes[c].super_id)
                .map(|&s| s as usize)
                .filter(|&s| classes[c].super_id != 0 && state[s] == DONE);
            let (bytes, inherited_refs, link) = match sup {
                Some(s) => {
                    let link = if classes[s].own_bytes > 0 { s as u32 } else { classes[s].fields_super };
                    (classes[s].field_bytes, refs[s], link)
                }
                None => (0, 0, NO_CLASS),
            };
            let k = &mut classes[c];
            k.field_bytes = bytes.saturating_add(k.own_bytes as u64);
            refs[c] = inherited_refs + own_refs;
            k.fields_super = link;
            k.instance_size = if k.name.ends_with("[]") {
                0
            } else {
                sizes.instance.get(&k.id).copied().unwrap_or_else(|| layout.instance_size(k.field_bytes, refs[c]))
            };
            state[c] = DONE;
        }
    }
}
