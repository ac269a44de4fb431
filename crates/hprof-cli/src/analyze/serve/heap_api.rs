//! The heap side of the JSON API: overview, histogram (filtered, sorted, grouped), instances of a class,
//! the dominator tree one level at a time, leak suspects and the diff of two dumps. Every list is paged
//! (`offset`, `limit`) and says its `total`, so that a dump with millions of objects answers in one page.

use super::group_retained::{NONE, group_retained};
use super::groups::Groups;
use super::pages::query;
use crate::analyze::dominators::Analysed;
use crate::analyze::{matches, parse_id};
use hprof_analysis::dominators::DominatorTree;
use rustc_hash::FxHashMap;
use serde_json::{Value, json};

/// Rows asked for by `offset` and `limit` (default 100, at most 1000).
pub fn page_of(q: &str) -> (usize, usize) {
    let offset = query(q, "offset").and_then(|s| s.parse().ok()).unwrap_or(0);
    let limit = query(q, "limit").and_then(|s| s.parse().ok()).unwrap_or(100usize).clamp(1, 1000);
    (offset, limit)
}

/// A node as the page shows it: id, class, sizes, whether it has dominator-tree children.
pub fn node(an: &Analysed, v: u32) -> Value {
    let mut j = an.node_json(v);
    j["label"] = Value::String(an.graph.describe(v));
    j["children"] = json!(an.tree.child_count(Some(v)));
    j
}

/// The package of a class name (`java.util` for `java.util.HashMap[]`); `<default>` without one.
fn package(name: &str) -> &str {
    let base = name.trim_end_matches("[]");
    base.rfind('.').map_or("<default>", |i| &base[..i])
}

/// A class loader's name for grouping: `<bootstrap>` or the loader object.
fn loader(an: &Analysed, loader_id: u64) -> String {
    if loader_id == 0 {
        return "<bootstrap>".into();
    }
    match an.graph.node(loader_id) {
        Some(v) => an.graph.describe(v),
        None => format!("0x{loader_id:x}"),
    }
}

/// A class row: (class index, instances, shallow, retained), as `Analysed::class_table` gives them.
type ClassRow = (usize, u64, u64, u64);

/// A histogram row: name, instances, shallow bytes, retained bytes (`None`: unknown), classes in it.
pub type Row = (String, u64, u64, Option<u64>, u64);

/// The rows of the classes matching `filter` grouped by `group` (`package` or `loader`), each with the
/// retained size of its objects counted once (group_retained.rs).
pub fn group_rows(an: &Analysed, table: &[ClassRow], group: &str, filter: &str) -> Vec<Row> {
    let classes = &an.graph.classes.classes;
    let mut index: FxHashMap<String, u32> = FxHashMap::default();
    let mut rows: Vec<Row> = Vec::new();
    let mut group_of = vec![NONE; classes.len()];
    for &(i, n, s, _) in table.iter().filter(|r| filter.is_empty() || matches(filter, &classes[r.0].name)) {
        let key =
            if group == "package" { package(&classes[i].name).to_owned() } else { loader(an, classes[i].loader_id) };
        let g = *index.entry(key.clone()).or_insert_with(|| {
            rows.push((key, 0, 0, None, 0));
            rows.len() as u32 - 1
        });
        group_of[i] = g;
        let r = &mut rows[g as usize];
        r.1 += n;
        r.2 += s;
        r.4 += 1;
    }
    if let Some(retained) = group_retained(&an.tree, &an.graph.class_of, &group_of, rows.len()) {
        for (r, b) in rows.iter_mut().zip(retained) {
            r.3 = Some(b);
        }
    }
    rows
}

/// `/api/histo?filter=&sort=retained|shallow|instances|name&group=class|package|loader&offset&limit`;
/// `grouped` are the rows of a package or loader grouping (`group_rows`, kept by the caller).
pub fn histo(an: &Analysed, table: &[ClassRow], grouped: Option<&[Row]>, q: &str) -> Value {
    let filter = query(q, "filter").unwrap_or_default();
    let sort = query(q, "sort").unwrap_or_else(|| "retained".into());
    let group = query(q, "group").unwrap_or_else(|| "class".into());
    let (offset, limit) = page_of(q);
    let classes = &an.graph.classes.classes;
    let mut rows: Vec<Row> = match grouped {
        Some(rows) => rows.to_vec(),
        None => table
            .iter()
            .copied()
            .filter(|r| filter.is_empty() || matches(&filter, &classes[r.0].name))
            .map(|(i, n, s, r)| (classes[i].name.clone(), n, s, Some(r), 1))
            .collect(),
    };
    match sort.as_str() {
        "name" => rows.sort_by(|a, b| a.0.cmp(&b.0)),
        "instances" => rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0))),
        "shallow" => rows.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0))),
        _ => rows.sort_by(|a, b| b.3.cmp(&a.3).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0))),
    }
    let total = rows.len();
    let (ti, ts) = rows.iter().fold((0, 0), |acc, r| (acc.0 + r.1, acc.1 + r.2));
    let page: Vec<Value> = rows
        .into_iter()
        .skip(offset)
        .take(limit)
        .map(|(name, n, s, r, c)| {
            json!({"class": name, "instances": n, "shallow_bytes": s, "retained_bytes": r, "classes": c})
        })
        .collect();
    json!({"group": group, "sort": sort, "total": total, "offset": offset, "instances": ti, "shallow_bytes": ts,
           "classes": page})
}

/// `/api/objects?class=NAME&offset&limit`: the class's instances, biggest retained first.
pub fn objects(an: &Analysed, instances: &Groups, q: &str) -> Value {
    let class = query(q, "class").unwrap_or_default();
    let (offset, limit) = page_of(q);
    let g = &an.graph;
    // Every class of that name (several loaders may define one), each list biggest first.
    let classes: Vec<usize> = (0..g.classes.classes.len()).filter(|&c| g.classes.classes[c].name == class).collect();
    let (total, page) = match classes[..] {
        [c] => {
            let all = instances.get(c);
            (all.len(), all.iter().skip(offset).take(limit).copied().collect::<Vec<_>>())
        }
        _ => {
            let all: Vec<u32> = classes.iter().flat_map(|&c| instances.get(c).iter().copied()).collect();
            let top = an.biggest(&all, offset + limit);
            (all.len(), top.into_iter().skip(offset).collect())
        }
    };
    json!({"class": class, "total": total, "offset": offset,
           "objects": page.iter().map(|&v| node(an, v)).collect::<Vec<_>>()})
}

/// `/api/dominators?id=&offset&limit`: one level of the tree (the GC roots' level without `id`).
pub fn dominators(an: &Analysed, q: &str) -> Result<Value, String> {
    let id = query(q, "id").filter(|s| !s.is_empty());
    let v = match id {
        Some(s) => Some(parse_id(&s).ok().and_then(|id| an.graph.node(id)).ok_or(format!("no object {s}"))?),
        None => None,
    };
    let (offset, limit) = page_of(q);
    let copied;
    let kids = match an.tree.children_slice(v) {
        Some(k) => k,
        None => {
            copied = an.tree.children_of(v);
            &copied
        }
    };
    let top = an.biggest(kids, offset + limit);
    let parent = v.map(|v| an.tree.idom[v as usize]).and_then(|d| match d {
        DominatorTree::ROOT | DominatorTree::UNREACHABLE => None,
        d => Some(format!("0x{:x}", an.graph.ids.get(d))),
    });
    Ok(json!({
        "object": v.map(|v| node(an, v)),
        "parent": parent,
        "total": kids.len(),
        "offset": offset,
        "tree_bytes": an.tree.tree_bytes,
        "children": top.iter().skip(offset).map(|&k| node(an, k)).collect::<Vec<_>>(),
    }))
}

/// `/api/leaks?threshold=`: the suspects of `hprof leaks`.
pub fn leaks(an: &Analysed, q: &str) -> Value {
    let threshold = query(q, "threshold").and_then(|t| t.parse().ok()).unwrap_or(10.0);
    let (objs, classes) = crate::analyze::leaks::suspects(an, threshold);
    let names = &an.graph.classes.classes;
    json!({
        "threshold": threshold,
        "tree_bytes": an.tree.tree_bytes,
        "objects": objs.iter().map(|s| json!({
            "object": node(an, s.node),
            "accumulation": node(an, s.accumulation),
            "content": s.content.iter().map(|(c, n, b)| json!({"class": c, "objects": n, "retained_bytes": b})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "classes": classes.iter().map(|&(i, n, s, r)| json!({"class": names[i].name, "instances": n, "shallow_bytes": s, "retained_bytes": r})).collect::<Vec<_>>(),
    })
}

/// The biggest classes and objects for the first screen.
pub fn overview(an: &Analysed, table: &[ClassRow]) -> Value {
    let names = &an.graph.classes.classes;
    let classes: Vec<Value> = table
        .iter()
        .copied()
        .take(10)
        .map(|(i, n, s, r)| json!({"class": names[i].name, "instances": n, "shallow_bytes": s, "retained_bytes": r}))
        .collect();
    let objects: Vec<Value> = an.biggest(&an.tree.children_of(None), 10).iter().map(|&v| node(an, v)).collect();
    json!({
        "objects_total": an.graph.len(),
        "reachable": an.tree.reachable,
        "reachable_bytes": an.tree.reachable_bytes,
        "tree_bytes": an.tree.tree_bytes,
        "classes_total": names.len(),
        "roots": an.graph.roots.len(),
        "biggest_classes": classes,
        "biggest_objects": objects,
    })
}

/// `/api/diff?b=1&filter=&offset&limit`: per class, instances, shallow and retained bytes in both dumps,
/// biggest change in retained (then shallow) bytes first.
pub fn diff(files: [(&Analysed, &[ClassRow]); 2], q: &str) -> Value {
    let [(a, _), (b, _)] = files;
    let filter = query(q, "filter").unwrap_or_default();
    let (offset, limit) = page_of(q);
    let mut per: FxHashMap<&str, [i64; 6]> = FxHashMap::default();
    for (k, (an, table)) in files.into_iter().enumerate() {
        let names = &an.graph.classes.classes;
        for &(i, n, s, r) in table {
            let e = per.entry(names[i].name.as_str()).or_default();
            e[k * 3] += n as i64;
            e[k * 3 + 1] += s as i64;
            e[k * 3 + 2] += r as i64;
        }
    }
    let mut rows: Vec<(&str, [i64; 6])> = per
        .into_iter()
        .filter(|(n, _)| filter.is_empty() || matches(&filter, n))
        .filter(|(_, v)| v[..3] != v[3..])
        .collect();
    let key = |v: &[i64; 6]| ((v[5] - v[2]).abs(), (v[4] - v[1]).abs());
    rows.sort_by(|x, y| key(&y.1).cmp(&key(&x.1)).then(x.0.cmp(y.0)));
    let total = rows.len();
    let totals = |an: &Analysed| {
        json!({"objects": an.graph.len(), "shallow_bytes": an.graph.shallow.iter().map(|&s| s as u64).sum::<u64>(),
               "reachable_bytes": an.tree.reachable_bytes})
    };
    json!({
        "a": totals(a), "b": totals(b), "total": total, "offset": offset,
        "classes": rows.iter().skip(offset).take(limit).map(|(n, v)| json!({
            "class": n,
            "a": {"instances": v[0], "shallow_bytes": v[1], "retained_bytes": v[2]},
            "b": {"instances": v[3], "shallow_bytes": v[4], "retained_bytes": v[5]},
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_of_class_names() {
        assert_eq!(package("java.util.HashMap"), "java.util");
        assert_eq!(package("java.util.HashMap[][]"), "java.util");
        assert_eq!(package("int[]"), "<default>");
        assert_eq!(package("Main"), "<default>");
    }
}
