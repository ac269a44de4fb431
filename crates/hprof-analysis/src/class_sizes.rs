//! Instance and mirror sizes of a dump's classes under one layout: the dump's fields plus what it leaves
//! out ([`crate::injected`]), placed by [`crate::field_layout`]. `java.lang.Class` mirrors are sized as
//! the VM's class histogram sizes them: the `java.lang.Class` instance (with its injected fields) and the
//! class's static fields behind it.

use crate::dump::Dump;
use crate::field_layout::{InstanceLayout, OwnFields, lay_out, mirror_size};
use crate::injected::{Contended, Jdk, Slot, contended, injected_fields};
use crate::layout::Layout;
use hprof_format::binary::ClassDump;
use hprof_format::tags::BasicType;
use rustc_hash::FxHashMap;

/// The dump's classes, indexed for sizing under any layout.
pub struct ClassShapes<'a> {
    by_id: FxHashMap<u64, &'a ClassDump>,
    /// class id → its static fields as (primitive sizes, reference count), HotSpot's fake statics left out.
    statics: FxHashMap<u64, (Vec<u32>, u32)>,
    names: FxHashMap<u64, String>,
    pub jdk: Jdk,
    class_class: Option<u64>,
    dump: &'a Dump,
}

/// Sizes under one layout.
#[derive(Debug, Clone, Default)]
pub struct ClassSizes {
    /// class id → instance size.
    pub instance: FxHashMap<u64, u64>,
    /// class id → size of its `java.lang.Class` mirror.
    pub mirror: FxHashMap<u64, u64>,
    /// Size of a mirror without statics (array classes, primitive types).
    pub bare_mirror: u64,
}

impl<'a> ClassShapes<'a> {
    pub fn new(dump: &'a Dump, dumps: &'a [ClassDump]) -> ClassShapes<'a> {
        let by_id: FxHashMap<u64, &ClassDump> = dumps.iter().map(|c| (c.class_id, c)).collect();
        let names: FxHashMap<u64, String> =
            by_id.keys().map(|&id| (id, dump.class_name(id).unwrap_or_default())).collect();
        let by_name = |n: &str| names.iter().find(|(_, v)| v.as_str() == n).map(|(k, _)| *k);
        let class_class = by_name("java.lang.Class");
        let fields_of = |n: &str| -> Option<Vec<String>> {
            let c = by_id.get(&by_name(n)?)?;
            Some(c.fields.iter().map(|f| dump.string(f.name_id).unwrap_or_default()).collect())
        };
        let jdk = Jdk::detect(&fields_of).unwrap_or(Jdk::Jdk17);
        let statics = by_id
            .values()
            .map(|cd| {
                let mut prims = Vec::new();
                let mut refs = 0;
                for s in &cd.statics {
                    // HotSpot adds <resolved_references> and <init_lock>: not fields of the mirror.
                    if dump.string(s.name_id).is_some_and(|n| n.starts_with('<')) {
                        continue;
                    }
                    match s.ty {
                        BasicType::Object => refs += 1,
                        t => prims.push(t.size(8)),
                    }
                }
                (cd.class_id, (prims, refs))
            })
            .collect();
        ClassShapes { by_id, statics, names, jdk, class_class, dump }
    }

    pub fn name(&self, id: u64) -> &str {
        self.names.get(&id).map_or("", |s| s.as_str())
    }

    /// Lays out every class under `layout`.
    pub fn sizes(&self, layout: &Layout) -> ClassSizes {
        let header = layout.object_header() as u32;
        let ref_size = layout.ref_size() as u32;
        let hotspot = layout.id_size == 8;
        let mut done: FxHashMap<u64, InstanceLayout> = FxHashMap::default();
        let mut chain: Vec<u64> = Vec::new();
        for &id in self.by_id.keys() {
            // The class and its superclasses not laid out yet, bottom up.
            chain.clear();
            let mut cur = id;
            while !done.contains_key(&cur)
                && self.by_id.contains_key(&cur)
                && !chain.contains(&cur)
                && chain.len() < 1000
            {
                chain.push(cur);
                cur = self.by_id[&cur].super_id;
            }
            for &c in chain.iter().rev() {
                let cd = self.by_id[&c];
                let own = self.own_fields(cd, hotspot);
                let l = lay_out(header, ref_size, done.get(&cd.super_id), &own);
                done.insert(c, l);
            }
        }
        let instance: FxHashMap<u64, u64> = done.iter().map(|(k, l)| (*k, l.instance_size(layout.alignment))).collect();
        let bare_mirror =
            self.class_class.and_then(|c| instance.get(&c).copied()).unwrap_or(layout.instance_size(0, 0));
        let mirror = self
            .statics
            .iter()
            .map(|(id, (prims, refs))| (*id, mirror_size(bare_mirror, prims, *refs, ref_size, layout.alignment)))
            .collect();
        ClassSizes { instance, mirror, bare_mirror }
    }

    fn own_fields(&self, cd: &ClassDump, hotspot: bool) -> OwnFields {
        let mut own = OwnFields::default();
        let name = self.name(cd.class_id);
        let special = hotspot
            && (!injected_fields(name, self.jdk).is_empty() || !matches!(contended(name, self.jdk), Contended::No));
        let group_of = |field: u64| -> Option<usize> {
            let Contended::Fields(groups) = contended(name, self.jdk) else { return None };
            let f = self.dump.string(field)?;
            groups.iter().position(|g| g.contains(&f.as_str()))
        };
        if special && matches!(contended(name, self.jdk), Contended::Class) {
            own.contended_class = true;
        }
        for f in &cd.fields {
            let group = if special { group_of(f.name_id) } else { None };
            if let Some(g) = group {
                while own.contended_groups.len() <= g {
                    own.contended_groups.push((Vec::new(), 0));
                }
                match f.ty {
                    BasicType::Object => own.contended_groups[g].1 += 1,
                    t => own.contended_groups[g].0.push(t.size(8)),
                }
                continue;
            }
            match f.ty {
                BasicType::Object => own.references += 1,
                t => own.primitives.push(t.size(8)),
            }
        }
        if special {
            for s in injected_fields(name, self.jdk) {
                match s {
                    Slot::Reference => own.references += 1,
                    Slot::Bytes(n) => own.primitives.push(*n),
                }
            }
        }
        own
    }
}
