//! The profiles a file holds (CPU samples, allocation sites, lock times), kept as interned stacks so that the flame
//! graph, callers and diff answers are computed per request, filtered by thread, without reading the file.

use hprof_analysis::Dump;
use hprof_analysis::stacks::{StackKind, frame_label, stacks};
use rustc_hash::FxHashMap;
use serde_json::{Value, json};

/// One profile type of the file.
pub struct Profile {
    /// `cpu`, `alloc` or `lock`: the name the API and the page use.
    pub kind: &'static str,
    pub title: &'static str,
    pub unit: &'static str,
    /// Frame labels; a stack holds indexes into this.
    pub names: Vec<String>,
    pub stacks: Vec<Stack>,
}

pub struct Stack {
    /// Root first.
    pub frames: Vec<u32>,
    pub weight: u64,
    /// The thread serial of the trace (0 when traces are not per thread).
    pub thread: u32,
}

/// A merged call tree: node 0 is the root (all stacks).
pub struct Tree {
    pub name: Vec<u32>,
    pub value: Vec<u64>,
    /// The second profile's value (diffs only).
    pub base: Vec<u64>,
    pub children: Vec<Vec<u32>>,
}

const ROOT_NAME: u32 = u32::MAX;

impl Tree {
    fn new() -> Tree {
        Tree { name: vec![ROOT_NAME], value: vec![0], base: vec![0], children: vec![Vec::new()] }
    }

    fn child(&mut self, at: u32, name: u32, index: &mut FxHashMap<(u32, u32), u32>) -> u32 {
        *index.entry((at, name)).or_insert_with(|| {
            let id = self.name.len() as u32;
            self.name.push(name);
            self.value.push(0);
            self.base.push(0);
            self.children.push(Vec::new());
            self.children[at as usize].push(id);
            id
        })
    }

    /// Adds each path (frames from the root) with its weight; `second` adds to `base` instead.
    fn add<'a>(&mut self, paths: impl Iterator<Item = (&'a [u32], u64)>, second: bool) {
        let mut index = FxHashMap::default();
        // Rebuild the (parent, name) index from what is there already (the second pass of a diff).
        for (p, kids) in self.children.iter().enumerate() {
            for &k in kids {
                index.insert((p as u32, self.name[k as usize]), k);
            }
        }
        for (path, w) in paths {
            let mut at = 0u32;
            self.bump(at, w, second);
            for &f in path {
                at = self.child(at, f, &mut index);
                self.bump(at, w, second);
            }
        }
    }

    fn bump(&mut self, at: u32, w: u64, second: bool) {
        if second { self.base[at as usize] += w } else { self.value[at as usize] += w }
    }

    /// The tree as nested JSON `{n, v, b?, c}`, leaving out nodes below `min` in both values.
    pub fn to_json(&self, names: &dyn Fn(u32) -> String, min: u64, diff: bool) -> Value {
        self.node_json(0, names, min, diff)
    }

    fn node_json(&self, at: u32, names: &dyn Fn(u32) -> String, min: u64, diff: bool) -> Value {
        let i = at as usize;
        let mut kids: Vec<u32> = self.children[i]
            .iter()
            .copied()
            .filter(|&k| self.value[k as usize].max(self.base[k as usize]) >= min.max(1))
            .collect();
        kids.sort_by(|&a, &b| names(self.name[a as usize]).cmp(&names(self.name[b as usize])));
        let n = if self.name[i] == ROOT_NAME { "all".to_owned() } else { names(self.name[i]) };
        let c: Vec<Value> = kids.iter().map(|&k| self.node_json(k, names, min, diff)).collect();
        if diff {
            json!({"n": n, "v": self.value[i], "b": self.base[i], "c": c})
        } else {
            json!({"n": n, "v": self.value[i], "c": c})
        }
    }
}

impl Profile {
    fn selected(&self, thread: Option<u32>) -> impl Iterator<Item = &Stack> {
        self.stacks.iter().filter(move |s| thread.is_none_or(|t| s.thread == t))
    }

    pub fn total(&self, thread: Option<u32>) -> u64 {
        self.selected(thread).map(|s| s.weight).sum()
    }

    /// The merged call tree of the stacks of `thread` (all threads for `None`).
    pub fn tree(&self, thread: Option<u32>) -> Tree {
        let mut t = Tree::new();
        t.add(self.selected(thread).map(|s| (s.frames.as_slice(), s.weight)), false);
        t
    }

    /// Each frame's total (stacks that contain it, counted once) and self weight, biggest total first.
    pub fn methods(&self, thread: Option<u32>) -> Vec<(u32, u64, u64)> {
        let mut per: FxHashMap<u32, (u64, u64)> = FxHashMap::default();
        for s in self.selected(thread) {
            let mut seen: Vec<u32> = Vec::new();
            for &f in &s.frames {
                if !seen.contains(&f) {
                    seen.push(f);
                    per.entry(f).or_default().0 += s.weight;
                }
            }
            if let Some(&leaf) = s.frames.last() {
                per.entry(leaf).or_default().1 += s.weight;
            }
        }
        let mut v: Vec<_> = per.into_iter().map(|(f, (t, s))| (f, t, s)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
        v
    }

    /// The callers of `frame` (each stack up to its first `frame`, read from the frame to the root) and
    /// its callees (each stack from there on), as two trees.
    pub fn callers(&self, frame: u32, thread: Option<u32>) -> (Tree, Tree) {
        let mut up = Vec::new();
        let mut down = Vec::new();
        for s in self.selected(thread) {
            if let Some(at) = s.frames.iter().position(|&f| f == frame) {
                let mut callers: Vec<u32> = s.frames[..at].to_vec();
                callers.reverse();
                up.push((callers, s.weight));
                down.push((s.frames[at + 1..].to_vec(), s.weight));
            }
        }
        let mut a = Tree::new();
        a.add(up.iter().map(|(p, w)| (p.as_slice(), *w)), false);
        let mut b = Tree::new();
        b.add(down.iter().map(|(p, w)| (p.as_slice(), *w)), false);
        (a, b)
    }

    pub fn frame(&self, name: &str) -> Option<u32> {
        self.names.iter().position(|n| n == name).map(|i| i as u32)
    }

    /// The threads the stacks belong to, with their weights.
    pub fn threads(&self) -> Vec<(u32, u64)> {
        let mut per: FxHashMap<u32, u64> = FxHashMap::default();
        for s in &self.stacks {
            *per.entry(s.thread).or_default() += s.weight;
        }
        let mut v: Vec<_> = per.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// A differential tree: `value` from `new`, `base` from `old`, both by frame name.
pub fn diff_tree(new: &Profile, old: &Profile, thread: Option<u32>) -> (Tree, Vec<String>) {
    let mut names = new.names.clone();
    let mut by_name: FxHashMap<String, u32> = names.iter().enumerate().map(|(i, n)| (n.clone(), i as u32)).collect();
    let old_paths: Vec<(Vec<u32>, u64)> = old
        .selected(thread)
        .map(|s| {
            let frames = s
                .frames
                .iter()
                .map(|&f| {
                    let n = &old.names[f as usize];
                    *by_name.entry(n.clone()).or_insert_with(|| {
                        names.push(n.clone());
                        names.len() as u32 - 1
                    })
                })
                .collect();
            (frames, s.weight)
        })
        .collect();
    let mut t = new.tree(thread);
    t.add(old_paths.iter().map(|(p, w)| (p.as_slice(), *w)), true);
    (t, names)
}

/// Every profile type the file has.
pub fn profiles(d: &Dump) -> Vec<Profile> {
    let mut out = Vec::new();
    for (kind, sk, title) in [
        ("cpu", StackKind::CpuSamples, "CPU samples"),
        ("alloc", StackKind::AllocSites, "Allocation sites (live bytes)"),
        ("lock", StackKind::Locks, "Locks: blocked entering monitors [lock:…] and in Object.wait [wait:…]"),
    ] {
        let resolved = stacks(d, sk);
        if resolved.is_empty() {
            continue;
        }
        let mut names = Vec::new();
        let mut index: FxHashMap<String, u32> = FxHashMap::default();
        let stacks = resolved
            .iter()
            .map(|s| {
                let frames = s
                    .frames
                    .iter()
                    .map(|f| {
                        let label = frame_label(f);
                        *index.entry(label.clone()).or_insert_with(|| {
                            names.push(label);
                            names.len() as u32 - 1
                        })
                    })
                    .collect();
                let thread = d.traces.get(&s.trace_serial).map_or(0, |t| t.thread_serial);
                Stack { frames, weight: s.weight, thread }
            })
            .collect();
        out.push(Profile { kind, title, unit: sk.unit(), names, stacks });
    }
    out
}

/// The profile's threads as JSON: serial, name (from the file's threads, `(serial, name)`) and weight.
pub fn threads_json(threads: &[(u32, String)], p: &Profile) -> Value {
    let name = |serial: u32| threads.iter().find(|t| t.0 == serial).map(|t| t.1.clone());
    Value::Array(
        p.threads()
            .into_iter()
            .map(|(serial, w)| json!({"serial": serial, "name": name(serial), "weight": w}))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        let names = ["main", "a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let s = |frames: &[u32], weight, thread| Stack { frames: frames.to_vec(), weight, thread };
        Profile {
            kind: "cpu",
            title: "t",
            unit: "samples",
            names,
            stacks: vec![s(&[0, 1, 2], 5, 1), s(&[0, 1], 3, 1), s(&[0, 3, 2], 2, 2)],
        }
    }

    #[test]
    fn trees_methods_and_callers() {
        let p = profile();
        let t = p.tree(None);
        assert_eq!(t.value[0], 10);
        let j = t.to_json(&|f| p.names[f as usize].clone(), 0, false);
        assert_eq!(j["c"][0]["n"], "main");
        assert_eq!(j["c"][0]["c"][0]["v"], 8);
        assert_eq!(p.total(Some(2)), 2);
        let m = p.methods(None);
        assert_eq!(m[0], (0, 10, 0));
        assert!(m.contains(&(2, 7, 7)));
        let (up, down) = p.callers(2, None);
        let names = |f: u32| p.names[f as usize].clone();
        let up = up.to_json(&names, 0, false);
        assert_eq!(up["v"], 7);
        assert_eq!(up["c"][0]["n"], "a");
        assert_eq!(up["c"][0]["c"][0]["n"], "main");
        assert_eq!(down.value[0], 7);
        assert_eq!(p.threads(), vec![(1, 8), (2, 2)]);
    }

    #[test]
    fn diffs_match_frames_by_name() {
        let new = profile();
        let mut old = profile();
        old.names.swap(1, 3);
        old.stacks.truncate(1);
        let (t, names) = diff_tree(&new, &old, None);
        let j = t.to_json(&|f| names[f as usize].clone(), 0, true);
        assert_eq!(j["v"], 10);
        assert_eq!(j["b"], 5);
        // old's stack [0,1,2] is main > c > b by name.
        let main = &j["c"][0];
        let c = main["c"].as_array().unwrap().iter().find(|n| n["n"] == "c").unwrap();
        assert_eq!(c["b"], 5);
        assert_eq!(c["v"], 2);
    }
}
