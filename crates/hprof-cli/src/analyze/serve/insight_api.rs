//! The heap insights of the JSON API — waste, class loaders, threads and the object-level growth between
//! two dumps (hprof-analysis::insight, the same reports as `hprof waste`, `loaders`, `threads` and `diff
//! --objects`) — each computed once, when first asked, and kept.

use super::app::App;
use super::pages::query;
use crate::analyze::{diff_objects, loaders, threads, waste};
use hprof_analysis::insight::growth::{Holder, Match, baseline, growth};
use hprof_analysis::insight::loaders::loaders as loaders_report;
use hprof_analysis::insight::root_paths::labelled;
use hprof_analysis::insight::threads::threads as threads_report;
use hprof_analysis::insight::waste::{WasteOptions, waste as waste_report};
use serde_json::{Value, json};

/// How many duplicated strings, arrays, loaders and duplicated classes the reports list.
const TOP: usize = 50;
/// How many objects each thread frame lists.
const PER_FRAME: usize = 20;

/// `/api/waste`, `/api/loaders`, `/api/threads` of a heap dump.
pub fn insight(app: &App, what: &str) -> Option<Value> {
    let an = app.an.as_ref()?;
    let cache = &app.cache;
    Some(match what {
        "waste" => cache
            .waste
            .get_or_init(|| {
                let opts = WasteOptions { top: TOP, redact: app.redact, ..WasteOptions::default() };
                waste::report_json(&waste_report(&an.dump, &an.graph, &opts))
            })
            .clone(),
        "loaders" => cache
            .loaders
            .get_or_init(|| {
                let mut v = loaders::report_json(&loaders_report(&an.dump, &an.graph, &an.tree), TOP);
                if app.redact {
                    // A loader's name is a String of the heap.
                    v["loaders"].as_array_mut().into_iter().flatten().for_each(|l| l["name"] = Value::Null);
                }
                v
            })
            .clone(),
        _ => cache
            .threads
            .get_or_init(|| {
                let mut ts = threads::threads_json(&threads_report(&an.dump, &an.graph, &an.tree), PER_FRAME);
                if app.redact {
                    ts.as_array_mut().into_iter().flatten().for_each(|t| t["name"] = Value::Null);
                }
                json!({ "threads": ts })
            })
            .clone(),
    })
}

/// `/api/diffobjects`'s cache key: (the other file, match, top).
pub type DiffKey = (std::path::PathBuf, String, usize);

/// The key of `/api/diffobjects?b=&match=auto|identity|path&top=` (auto and 20 by default), checked.
pub fn diff_key(app: &App, base: &App, q: &str) -> Result<DiffKey, (u16, String)> {
    app.an.as_ref().ok_or((404, "no heap dump".to_string()))?;
    base.an.as_ref().ok_or_else(|| (404, format!("{} has no heap dump", base.file.display())))?;
    let by_name = query(q, "match").unwrap_or_else(|| "auto".into());
    match_of(&by_name)?;
    let top: usize = query(q, "top").and_then(|t| t.parse().ok()).unwrap_or(20).clamp(1, 1000);
    Ok((base.file.clone(), by_name, top))
}

fn match_of(name: &str) -> Result<Match, (u16, String)> {
    match name {
        "auto" => Ok(Match::Auto),
        "identity" => Ok(Match::Identity),
        "path" => Ok(Match::Path),
        m => Err((400, format!("match={m}: auto, identity or path"))),
    }
}

/// The objects of this dump that `base`'s lacks, grouped by what keeps them, biggest retained first —
/// `hprof diff BASE THIS --objects --json`, with each holder's id — computed (by diff_warm.rs) and kept.
pub fn diff_objects(app: &App, base: &App, key: &DiffKey) -> Result<Value, (u16, String)> {
    let an = app.an.as_ref().ok_or((404, "no heap dump".to_string()))?;
    let bh = base.an.as_ref().ok_or_else(|| (404, format!("{} has no heap dump", base.file.display())))?;
    let (by, top) = (match_of(&key.1)?, key.2);
    let r = growth(&baseline(&bh.graph), &an.graph, &an.tree, by, top);
    let forest = app.forest(an);
    let paths: Vec<_> = r
        .groups
        .iter()
        .map(|gr| match gr.holder {
            Holder::Object(v) => forest.path(&an.graph, v).map(|p| labelled(&an.dump, &an.graph, &p)),
            _ => None,
        })
        .collect();
    let mut v = diff_objects::report_json(an, &r, &paths);
    for (j, gr) in v["groups"].as_array_mut().into_iter().flatten().zip(&r.groups) {
        if let Holder::Object(h) = gr.holder {
            j["holder_id"] = json!(format!("0x{:x}", an.graph.ids.get(h)));
        }
    }
    if let Ok(mut c) = app.cache.growth.lock() {
        c.insert(key.clone(), v.clone());
    }
    Ok(v)
}
