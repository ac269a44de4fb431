//! The profiles a file holds (CPU or wall-clock samples, allocation sites, lock times), kept as interned
//! stacks so that the flame graph, callers and diff answers are computed per request, filtered by thread and
//! by time range (hprof-rs's SAMPLE TIMES records), without reading the file.

use hprof_analysis::Dump;
use hprof_analysis::stacks::{ResolvedStack, StackKind, cpu_stacks_between, frame_label, stacks};
use rustc_hash::FxHashMap;
use serde_json::{Value, json};

/// One profile type of the file.
pub struct Profile {
    /// `cpu`, `wall`, `alloc` or `lock`: the name the API and the page use.
    pub kind: &'static str,
    pub title: &'static str,
    pub unit: &'static str,
    /// Frame labels; a stack holds indexes into this.
    pub names: Vec<String>,
    pub stacks: Vec<Stack>,
    /// When each sample was taken: (ms since the session started, stack index, weight), in time order;
    /// empty without SAMPLE TIMES records.
    pub times: Vec<(u32, u32, u32)>,
}

/// Which samples an answer counts: some threads' (by serial), and those taken in `[from, to)` ms.
#[derive(Clone, Debug, Default)]
pub struct Sel {
    pub threads: Option<Vec<u32>>,
    pub range: Option<(u64, u64)>,
}

impl Sel {
    pub fn thread(t: Option<u32>) -> Sel {
        Sel { threads: t.map(|t| vec![t]), range: None }
    }

    fn has_thread(&self, t: u32) -> bool {
        self.threads.as_ref().is_none_or(|ts| ts.contains(&t))
    }
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
    /// The stacks `sel` picks, with their weight in its time range (all their samples without one).
    fn selected<'a>(&'a self, sel: &'a Sel) -> impl Iterator<Item = (&'a Stack, u64)> + 'a {
        let ranged = sel.range.map(|(from, to)| self.weights_between(from, to));
        self.stacks.iter().enumerate().filter_map(move |(i, s)| {
            let w = ranged.as_ref().map_or(s.weight, |r| r[i]);
            (w > 0 && sel.has_thread(s.thread)).then_some((s, w))
        })
    }

    /// Each stack's weight from the samples taken in `[from, to)` ms.
    fn weights_between(&self, from: u64, to: u64) -> Vec<u64> {
        let mut w = vec![0u64; self.stacks.len()];
        let start = self.times.partition_point(|t| (t.0 as u64) < from);
        for &(ms, stack, weight) in &self.times[start..] {
            if ms as u64 >= to {
                break;
            }
            w[stack as usize] += weight as u64;
        }
        w
    }

    pub fn total(&self, sel: &Sel) -> u64 {
        self.selected(sel).map(|(_, w)| w).sum()
    }

    /// The samples per time bucket (of the threads `sel` picks; its range is ignored): `None` without
    /// sample times. Buckets cover the session from 0 to the last sample, `buckets` of them at most.
    pub fn timeline(&self, sel: &Sel, buckets: usize) -> Option<(u64, u64, Vec<u64>)> {
        let last = self.times.last()?.0 as u64;
        let end = last + 1;
        let width = end.div_ceil(buckets.max(1) as u64).max(1);
        let mut counts = vec![0u64; end.div_ceil(width) as usize];
        for &(ms, stack, weight) in &self.times {
            if sel.has_thread(self.stacks[stack as usize].thread) {
                counts[(ms as u64 / width) as usize] += weight as u64;
            }
        }
        Some((end, width, counts))
    }

    /// The merged call tree of the stacks `sel` picks.
    pub fn tree(&self, sel: &Sel) -> Tree {
        let mut t = Tree::new();
        t.add(self.selected(sel).map(|(s, w)| (s.frames.as_slice(), w)), false);
        t
    }

    /// Each frame's total (stacks that contain it, counted once) and self weight, biggest total first.
    pub fn methods(&self, sel: &Sel) -> Vec<(u32, u64, u64)> {
        let mut per: FxHashMap<u32, (u64, u64)> = FxHashMap::default();
        for (s, w) in self.selected(sel) {
            let mut seen: Vec<u32> = Vec::new();
            for &f in &s.frames {
                if !seen.contains(&f) {
                    seen.push(f);
                    per.entry(f).or_default().0 += w;
                }
            }
            if let Some(&leaf) = s.frames.last() {
                per.entry(leaf).or_default().1 += w;
            }
        }
        let mut v: Vec<_> = per.into_iter().map(|(f, (t, s))| (f, t, s)).collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
        v
    }

    /// The callers of `frame` (each stack up to its first `frame`, read from the frame to the root) and
    /// its callees (each stack from there on), as two trees.
    pub fn callers(&self, frame: u32, sel: &Sel) -> (Tree, Tree) {
        let mut up = Vec::new();
        let mut down = Vec::new();
        for (s, w) in self.selected(sel) {
            if let Some(at) = s.frames.iter().position(|&f| f == frame) {
                let mut callers: Vec<u32> = s.frames[..at].to_vec();
                callers.reverse();
                up.push((callers, w));
                down.push((s.frames[at + 1..].to_vec(), w));
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

/// A differential tree: `value` from `new` (the samples `sel` picks), `base` from `old` (`old_sel`'s), both
/// by frame name.
pub fn diff_tree(new: &Profile, sel: &Sel, old: &Profile, old_sel: &Sel) -> (Tree, Vec<String>) {
    let mut names = new.names.clone();
    let mut by_name: FxHashMap<String, u32> = names.iter().enumerate().map(|(i, n)| (n.clone(), i as u32)).collect();
    let old_paths: Vec<(Vec<u32>, u64)> = old
        .selected(old_sel)
        .map(|(s, w)| {
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
            (frames, w)
        })
        .collect();
    let mut t = new.tree(sel);
    t.add(old_paths.iter().map(|(p, w)| (p.as_slice(), *w)), true);
    (t, names)
}

/// Whether CPU samples are cpu=wall's: each stack's root frame is a thread state (`[sleeping]`, …).
fn wall_clock(resolved: &[ResolvedStack]) -> bool {
    const STATES: [&str; 7] =
        ["[running]", "[in_native]", "[sleeping]", "[blocked_on_monitor]", "[waiting]", "[parked]", "[other]"];
    resolved.iter().all(|s| s.frames.first().is_some_and(|f| f.is_pseudo() && STATES.contains(&f.method_name.as_str())))
}

/// Every profile type the file has.
pub fn profiles(d: &Dump) -> Vec<Profile> {
    let mut out = Vec::new();
    for (kind, sk, title) in [
        ("cpu", StackKind::CpuSamples, "CPU samples"),
        ("alloc", StackKind::AllocSites, "Allocation sites (live bytes)"),
        ("lock", StackKind::Locks, "Locks: blocked entering monitors [lock:…] and in Object.wait [wait:…]"),
    ] {
        let mut resolved = stacks(d, sk);
        if resolved.is_empty() {
            continue;
        }
        let (kind, title) = if sk == StackKind::CpuSamples && wall_clock(&resolved) {
            ("wall", "Wall-clock samples")
        } else {
            (kind, title)
        };
        let mut by_trace: FxHashMap<u32, u32> = FxHashMap::default();
        if sk == StackKind::CpuSamples {
            by_trace = resolved.iter().enumerate().map(|(i, s)| (s.trace_serial, i as u32)).collect();
            // A trace with sample times but no CPU SAMPLES count still needs its stack (weight 0 overall).
            for s in cpu_stacks_between(d, 0, u64::MAX).unwrap_or_default() {
                by_trace.entry(s.trace_serial).or_insert_with(|| {
                    resolved.push(ResolvedStack { weight: 0, ..s });
                    resolved.len() as u32 - 1
                });
            }
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
        let mut times: Vec<(u32, u32, u32)> = if sk == StackKind::CpuSamples {
            d.sample_times.iter().filter_map(|&(ms, trace, w)| by_trace.get(&trace).map(|&i| (ms, i, w))).collect()
        } else {
            Vec::new()
        };
        times.sort_by_key(|t| t.0);
        out.push(Profile { kind, title, unit: sk.unit(), names, stacks, times });
    }
    out
}

/// The serials of the threads named `name` (a diff's second file numbers its threads its own way).
pub fn serials_named(threads: &[(u32, String)], name: &str) -> Vec<u32> {
    threads.iter().filter(|t| t.1 == name).map(|t| t.0).collect()
}

/// The profile's threads as JSON: serial, name (from the file's threads, `(serial, name)`; null when
/// `redact`) and weight.
pub fn threads_json(threads: &[(u32, String)], p: &Profile, redact: bool) -> Value {
    let name = |serial: u32| threads.iter().find(|t| t.0 == serial && !redact).map(|t| t.1.clone());
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
            // Stack 0's five samples at 0, 10, 20, 30, 40 ms; stack 1's three at 15; stack 2's two at 45.
            times: vec![(0, 0, 1), (10, 0, 1), (15, 1, 3), (20, 0, 1), (30, 0, 1), (40, 0, 1), (45, 2, 2)],
        }
    }

    #[test]
    fn trees_methods_and_callers() {
        let p = profile();
        let all = Sel::default();
        let t = p.tree(&all);
        assert_eq!(t.value[0], 10);
        let j = t.to_json(&|f| p.names[f as usize].clone(), 0, false);
        assert_eq!(j["c"][0]["n"], "main");
        assert_eq!(j["c"][0]["c"][0]["v"], 8);
        assert_eq!(p.total(&Sel::thread(Some(2))), 2);
        let m = p.methods(&all);
        assert_eq!(m[0], (0, 10, 0));
        assert!(m.contains(&(2, 7, 7)));
        let (up, down) = p.callers(2, &all);
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
        let (t, names) = diff_tree(&new, &Sel::default(), &old, &Sel::default());
        let j = t.to_json(&|f| names[f as usize].clone(), 0, true);
        assert_eq!(j["v"], 10);
        assert_eq!(j["b"], 5);
        // old's stack [0,1,2] is main > c > b by name.
        let main = &j["c"][0];
        let c = main["c"].as_array().unwrap().iter().find(|n| n["n"] == "c").unwrap();
        assert_eq!(c["b"], 5);
        assert_eq!(c["v"], 2);
    }

    #[test]
    fn time_ranges_and_the_timeline() {
        let p = profile();
        let range = |from, to| Sel { threads: None, range: Some((from, to)) };
        // [10, 40): stack 0 at 10, 20, 30 and stack 1's three at 15.
        assert_eq!(p.total(&range(10, 40)), 6);
        let t = p.tree(&range(10, 40));
        assert_eq!(t.value[0], 6);
        assert_eq!(p.total(&range(41, 1000)), 2);
        assert_eq!(p.total(&Sel { threads: Some(vec![1]), range: Some((41, 1000)) }), 0);
        let (end, width, counts) = p.timeline(&Sel::default(), 5).unwrap();
        assert_eq!((end, width), (46, 10));
        assert_eq!(counts, vec![1, 4, 1, 1, 3]);
        let (_, _, counts) = p.timeline(&Sel::thread(Some(2)), 5).unwrap();
        assert_eq!(counts, vec![0, 0, 0, 0, 2]);
        let mut old = profile();
        old.stacks.truncate(2);
        old.times.truncate(3);
        let (t, _) = diff_tree(&p, &range(0, 16), &old, &range(0, 16));
        assert_eq!((t.value[0], t.base[0]), (5, 5));
    }
}
