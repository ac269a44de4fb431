//! The JSON API the single-page application reads (`/api/...`). Each answer is computed from the index
//! of the file named by `f=` (its position on the command line); diffs take the second file from `b=`.
//! Errors are `{"error": "..."}` with a 4xx status.

use super::app::App;
use super::diff_warm;
use super::heap_api;
use super::insight_api;
use super::inspect;
use super::pages::query;
use super::profile::{Profile, Sel, diff_tree, serials_named, threads_json};
use serde_json::{Value, json};
use std::sync::Arc;

/// The answer to `/api/<what>?q`: status and JSON.
pub fn answer(app: &Arc<App>, what: &str, q: &str, other: Option<&Arc<App>>) -> (u16, Value) {
    let answer = match (what, other) {
        // Never computed here: it is there, or being computed in the background.
        ("diffobjects", Some(b)) => diff_warm::answer(app, b, q),
        _ => run(app, what, q, other.map(|b| &**b)),
    };
    match answer {
        Ok(v) => (200, v),
        Err((status, e)) => (status, json!({"error": e})),
    }
}

type Answer = Result<Value, (u16, String)>;

fn not_found(e: String) -> (u16, String) {
    (404, e)
}

fn run(app: &App, what: &str, q: &str, other: Option<&App>) -> Answer {
    let heap = || app.an.as_ref().ok_or_else(|| (404, format!("no heap dump: {}", app.no_heap)));
    match what {
        "summary" => Ok(summary(app)),
        "histo" => {
            let an = heap()?;
            let group = query(q, "group").unwrap_or_default();
            let grouped = match group.as_str() {
                "package" | "loader" => Some(app.group_rows(an, &group, &query(q, "filter").unwrap_or_default())),
                _ => None,
            };
            Ok(heap_api::histo(an, app.class_table(an), grouped.as_deref().map(|v| v.as_slice()), q))
        }
        "objects" => Ok(heap_api::objects(heap()?, app.instances(heap()?), q)),
        "dominators" => heap_api::dominators(heap()?, q).map_err(not_found),
        "leaks" => Ok(heap_api::leaks(heap()?, q)),
        "object" => inspect::object(heap()?, q, app.redact).map_err(not_found),
        "incoming" => inspect::incoming(heap()?, app.referrers(heap()?), q).map_err(not_found),
        "path" => {
            let an = heap()?;
            inspect::path(an, || app.forest(an), q).map_err(not_found)
        }
        "diff" => {
            let b = other.ok_or((400, "b= names no second file".to_string()))?;
            let bh = b.an.as_ref().ok_or_else(|| (404, format!("{} has no heap dump", b.file.display())))?;
            Ok(heap_api::diff([(heap()?, app.class_table(heap()?)), (bh, b.class_table(bh))], q))
        }
        "diffobjects" => Err((400, "b= names no second file".to_string())),
        "waste" | "loaders" | "threads" => {
            heap()?;
            insight_api::insight(app, what).ok_or_else(|| (404, "no heap dump".to_string()))
        }
        "flame" | "methods" | "callers" | "flamediff" | "timeline" => profile_answer(app, what, q, other),
        _ => Err((404, format!("no API /api/{what}"))),
    }
}

/// The first screen: the file, its records, its heap's biggest classes and objects, its profiles.
fn summary(app: &App) -> Value {
    let mut v = app.summary_json.clone();
    if let Some(an) = &app.an {
        v["heap"] = heap_api::overview(an, app.class_table(an));
    }
    v["profiles"] = app
        .profiles
        .iter()
        .map(|p| {
            json!({"kind": p.kind, "title": p.title, "unit": p.unit, "total": p.total(&Sel::default()),
                   "times": !p.times.is_empty(), "threads": threads_json(&app.threads, p, app.redact)})
        })
        .collect::<Vec<_>>()
        .into();
    v
}

/// The profile `kind=` names (the file's first without it).
fn profile<'a>(app: &'a App, q: &str) -> Result<&'a Profile, (u16, String)> {
    let kind = query(q, "kind").filter(|k| !k.is_empty());
    app.profiles
        .iter()
        .find(|p| kind.as_deref().is_none_or(|k| p.kind == k))
        .ok_or_else(|| (404, format!("{} has no {} profile", app.file.display(), kind.as_deref().unwrap_or("CPU"))))
}

/// `thread=` as a serial; absent or empty for all threads.
fn thread(q: &str) -> Option<u32> {
    query(q, "thread").and_then(|t| t.parse().ok())
}

/// `from=` and `to=` (ms since the session started, `to` excluded) as the samples' time range, if either
/// is given; refused for a profile without sample times.
fn range(p: &Profile, q: &str) -> Result<Option<(u64, u64)>, (u16, String)> {
    let ms = |k: &str| -> Result<Option<u64>, (u16, String)> {
        match query(q, k).filter(|s| !s.is_empty()) {
            None => Ok(None),
            Some(s) => s.parse().map(Some).map_err(|_| (400, format!("{k}={s} is not a number of milliseconds"))),
        }
    };
    let (from, to) = (ms("from")?, ms("to")?);
    if from.is_none() && to.is_none() {
        return Ok(None);
    }
    if p.times.is_empty() {
        return Err((400, format!("the {} profile has no sample times (SAMPLE TIMES records of format=b)", p.kind)));
    }
    let (from, to) = (from.unwrap_or(0), to.unwrap_or(u64::MAX));
    if from >= to {
        return Err((400, format!("from={from} must come before to={to}")));
    }
    Ok(Some((from, to)))
}

/// Nodes below this share of the total are left out of a tree (they would be under a pixel wide).
fn min_weight(total: u64, q: &str) -> u64 {
    let share: f64 = query(q, "min").and_then(|m| m.parse().ok()).unwrap_or(0.0002);
    (total as f64 * share) as u64
}

fn profile_answer(app: &App, what: &str, q: &str, other: Option<&App>) -> Answer {
    let p = profile(app, q)?;
    let t = thread(q);
    let sel = Sel { range: range(p, q)?, ..Sel::thread(t) };
    let total = p.total(&sel);
    let names = |f: u32| p.names[f as usize].clone();
    match what {
        "flame" => Ok(json!({"kind": p.kind, "title": p.title, "unit": p.unit, "total": total,
                              "tree": p.tree(&sel).to_json(&names, min_weight(total, q), false)})),
        "timeline" => {
            let buckets = query(q, "buckets").and_then(|b| b.parse().ok()).unwrap_or(200usize).clamp(1, 2000);
            let (end, width, counts) = p.timeline(&sel, buckets).ok_or_else(|| {
                (404, format!("the {} profile has no sample times (SAMPLE TIMES records of format=b)", p.kind))
            })?;
            Ok(json!({"kind": p.kind, "unit": p.unit, "end_ms": end, "bucket_ms": width, "counts": counts}))
        }
        "methods" => {
            let filter = query(q, "filter").unwrap_or_default().to_lowercase();
            let (offset, limit) = heap_api::page_of(q);
            let rows: Vec<_> = p
                .methods(&sel)
                .into_iter()
                .filter(|(f, _, _)| filter.is_empty() || p.names[*f as usize].to_lowercase().contains(&filter))
                .collect();
            Ok(json!({"unit": p.unit, "total": total, "rows": rows.len(), "offset": offset,
                      "methods": rows.iter().skip(offset).take(limit).map(|&(f, tot, own)|
                          json!({"frame": p.names[f as usize], "total": tot, "self": own})).collect::<Vec<_>>()}))
        }
        "callers" => {
            let name = query(q, "frame").unwrap_or_default();
            let f = p.frame(&name).ok_or_else(|| (404, format!("no frame {name}")))?;
            let (up, down) = p.callers(f, &sel);
            let min = min_weight(up.value[0], q);
            Ok(json!({"frame": name, "unit": p.unit, "total": total, "value": up.value[0],
                      "callers": up.to_json(&names, min, false), "callees": down.to_json(&names, min, false)}))
        }
        _ => {
            let b = other.ok_or((400, "b= names no second file".to_string()))?;
            let old = profile(b, q)?;
            // Thread serials belong to one file: the second file's threads are those of the same name.
            let old_threads = match t {
                None => None,
                Some(t) => {
                    let name = app.threads.iter().find(|x| x.0 == t).map(|x| x.1.as_str());
                    Some(name.map(|n| serials_named(&b.threads, n)).unwrap_or_default())
                }
            };
            // The range applies to both files when the second has sample times too (else all of it).
            let old_range = if old.times.is_empty() { None } else { sel.range };
            let old_sel = Sel { threads: old_threads, range: old_range };
            let (tree, all) = diff_tree(p, &sel, old, &old_sel);
            let (total, base_total) = (tree.value[0], tree.base[0]);
            let min = min_weight(total.max(base_total), q);
            Ok(json!({"kind": p.kind, "unit": p.unit, "total": total, "base_total": base_total,
                      "base_range": old_range.is_some(),
                      "tree": tree.to_json(&|f| all[f as usize].clone(), min, true)}))
        }
    }
}
