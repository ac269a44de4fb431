//! Class loaders: what each defined and retains, who its parent is, classes defined by several loaders,
//! and loaders that were closed (undeployed) yet are still held, with the path that holds each.

use super::fields::{ObjectReader, as_int};
use super::root_paths::{LabelledPath, RootForest, labelled};
use crate::dominators::DominatorTree;
use crate::dump::Dump;
use crate::heap::HeapGraph;
use rustc_hash::FxHashMap;

#[derive(Debug, Clone)]
pub struct LoaderInfo {
    /// The loader object's id; 0 for the bootstrap loader.
    pub id: u64,
    pub class: String,
    /// `ClassLoader.name` (JDK 9+), when set.
    pub name: Option<String>,
    /// The parent loader's id (0: the bootstrap loader); `None` when the dump does not say.
    pub parent: Option<u64>,
    pub classes: u64,
    /// Instances of the classes it defined.
    pub instances: u64,
    /// What the loader object retains (its classes and their statics, unless something else holds them).
    pub retained_bytes: u64,
    /// Closed (a `URLClassLoader` after `close()`), i.e. undeployed.
    pub closed: bool,
    /// Why it looks undeployed (closed, or a lifecycle `state` such as Tomcat's `DESTROYED`), if it does.
    pub undeployed: Option<String>,
}

/// A class name that several loaders defined.
#[derive(Debug, Clone)]
pub struct DuplicateClass {
    pub name: String,
    pub loaders: Vec<u64>,
}

/// A loader that looks undeployed but is still reachable, and what keeps it.
#[derive(Debug, Clone)]
pub struct HeldLoader {
    pub loader: u64,
    pub why: String,
    pub path: Option<LabelledPath>,
}

#[derive(Debug, Clone)]
pub struct LoadersReport {
    pub loaders: Vec<LoaderInfo>,
    pub duplicate_classes: Vec<DuplicateClass>,
    pub held: Vec<HeldLoader>,
}

pub fn loaders(dump: &Dump, g: &HeapGraph, tree: &DominatorTree) -> LoadersReport {
    let r = ObjectReader::new(dump, g);
    let classes = &g.classes.classes;
    let class_loader = classes.iter().position(|c| c.name == "java.lang.ClassLoader").map(|i| i as u32);

    // Loader id → (classes defined, instances of them).
    let mut defined: FxHashMap<u64, (u64, u64)> = FxHashMap::default();
    let mut instances_per_class = vec![0u64; classes.len()];
    for &c in &g.class_of {
        instances_per_class[c as usize] += 1;
    }
    for (i, c) in classes.iter().enumerate() {
        if c.id == 0 {
            continue;
        }
        let e = defined.entry(c.loader_id).or_default();
        e.0 += 1;
        e.1 += instances_per_class[i];
    }
    // Loader objects: any instance of a ClassLoader subclass, and whatever a class names as its loader.
    let mut loader_nodes: Vec<u32> = Vec::new();
    if let Some(cl) = class_loader {
        let is_loader: Vec<bool> = (0..classes.len() as u32).map(|c| r.is_subclass(c, cl)).collect();
        loader_nodes.extend((0..g.len() as u32).filter(|&v| is_loader[g.class_of[v as usize] as usize]));
    }
    loader_nodes.extend(defined.keys().filter(|&&id| id != 0).filter_map(|&id| g.node(id)));
    loader_nodes.sort_unstable();
    loader_nodes.dedup();

    let mut out = Vec::with_capacity(loader_nodes.len() + 1);
    if let Some(&(n, inst)) = defined.get(&0) {
        out.push(LoaderInfo {
            id: 0,
            class: "<bootstrap>".into(),
            name: None,
            parent: None,
            classes: n,
            instances: inst,
            retained_bytes: 0,
            closed: false,
            undeployed: None,
        });
    }
    for &v in &loader_nodes {
        let id = g.ids.get(v);
        let (n, inst) = defined.get(&id).copied().unwrap_or_default();
        let parent = match r.field(v, "parent") {
            Some(hprof_format::binary::Value::Object(p)) => Some(p),
            _ => None,
        };
        out.push(LoaderInfo {
            id,
            class: g.class_name(v).to_owned(),
            name: r
                .field_node(v, "name")
                .and_then(|s| r.string_text(s, 200))
                .map(|n| hprof_format::names::printable(&n).into_owned()),
            parent,
            classes: n,
            instances: inst,
            retained_bytes: tree.retained[v as usize],
            closed: is_closed(&r, v),
            undeployed: undeployed(&r, v),
        });
    }
    out.sort_by(|a, b| b.retained_bytes.cmp(&a.retained_bytes).then(b.classes.cmp(&a.classes)).then(a.id.cmp(&b.id)));

    // Class names with several defining loaders (array classes follow their element class: left out).
    let mut by_name: FxHashMap<&str, Vec<u64>> = FxHashMap::default();
    for c in classes.iter().filter(|c| c.id != 0 && !c.name.ends_with("[]")) {
        by_name.entry(c.name.as_str()).or_default().push(c.loader_id);
    }
    let mut duplicate_classes: Vec<DuplicateClass> = by_name
        .into_iter()
        .filter_map(|(name, mut loaders)| {
            loaders.sort_unstable();
            loaders.dedup();
            (loaders.len() > 1).then(|| DuplicateClass { name: name.to_owned(), loaders })
        })
        .collect();
    duplicate_classes.sort_by(|a, b| b.loaders.len().cmp(&a.loaders.len()).then(a.name.cmp(&b.name)));

    let gone: Vec<&LoaderInfo> = out.iter().filter(|l| l.undeployed.is_some()).collect();
    let mut held = Vec::new();
    if !gone.is_empty() {
        let forest = RootForest::new(g);
        for l in gone {
            let Some(v) = g.node(l.id) else { continue };
            if !forest.reachable(v) {
                continue;
            }
            held.push(HeldLoader {
                loader: l.id,
                why: format!("{}, yet reachable from a GC root", l.undeployed.as_deref().unwrap_or("undeployed")),
                path: forest.path(g, v).map(|p| labelled(dump, g, &p)),
            });
        }
    }
    LoadersReport { loaders: out, duplicate_classes, held }
}

/// Lifecycle states after an undeploy (Tomcat's `LifecycleState`, and any loader's enum named alike).
const GONE_STATES: [&str; 5] = ["STOPPING", "STOPPED", "DESTROYING", "DESTROYED", "FAILED"];

/// Why loader `v` looks undeployed: closed, or its `state` field an enum constant in [`GONE_STATES`].
fn undeployed(r: &ObjectReader<'_>, v: u32) -> Option<String> {
    if is_closed(r, v) {
        return Some("closed".into());
    }
    let state = r.field_node(v, "state")?;
    let name = r.field_node(state, "name").and_then(|n| r.string_text(n, 40))?;
    GONE_STATES.contains(&name.as_str()).then(|| format!("state {name}"))
}

/// A `URLClassLoader` after `close()`: its class path (`ucp`) says `closed`. Loaders of other kinds
/// that keep a `closed` flag of their own count too.
fn is_closed(r: &ObjectReader<'_>, v: u32) -> bool {
    let flag = |o: u32| r.field(o, "closed").and_then(as_int).is_some_and(|x| x != 0);
    flag(v) || r.field_node(v, "ucp").is_some_and(flag)
}
