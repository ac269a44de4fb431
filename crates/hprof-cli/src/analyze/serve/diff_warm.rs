//! The object-by-object dump diff (`/api/diffobjects`) as part of the index: each heap dump's diff against
//! the file the application compares it with by default is computed, with the default match, on a thread
//! of its own once every file is indexed. A request never waits for a diff: until it is there, the answer
//! is `{"state": "computing"}` at once (the application polls) and, for another match or length, its
//! computation is queued behind the others. One diff is computed at a time, so memory grows by one
//! baseline (the earlier dump's ids and path names) while it runs, and by the small answer it keeps.

use super::app::App;
use super::index::Index;
use super::insight_api::{DiffKey, diff_key, diff_objects};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// One diff at a time: two would hold two baselines of a big dump at once.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Diffs asked for (other matches or lengths) queued at most per file: each waits on a thread of its own.
const MAX_QUEUED: usize = 4;

/// `/api/diffobjects`: the answer if computed, else `{"state": "computing"}` with its computation started.
pub fn answer(app: &Arc<App>, base: &Arc<App>, q: &str) -> Result<Value, (u16, String)> {
    let key = diff_key(app, base, q)?;
    if let Some(v) = cached(app, &key) {
        return match v["error"].as_str() {
            Some(e) => Err((500, e.to_string())),
            None => Ok(v),
        };
    }
    let queued = app.cache.growth_pending.lock().map_or(0, |p| p.len());
    if !is_pending(app, &key) && queued >= MAX_QUEUED {
        return Err((503, format!("{queued} object diffs are being computed: ask again when they are done")));
    }
    if start(app, &key) {
        let (app, base) = (app.clone(), base.clone());
        std::thread::spawn(move || compute(&app, &base, key));
    }
    Ok(json!({"state": "computing", "base": base.file.display().to_string()}))
}

fn cached(app: &App, key: &DiffKey) -> Option<Value> {
    app.cache.growth.lock().ok()?.get(key).cloned()
}

fn is_pending(app: &App, key: &DiffKey) -> bool {
    app.cache.growth_pending.lock().is_ok_and(|p| p.contains(key))
}

/// Marks `key` as being computed; false when it already is.
fn start(app: &App, key: &DiffKey) -> bool {
    app.cache.growth_pending.lock().is_ok_and(|mut p| p.insert(key.clone()))
}

/// Computes the diff of `key` (queued behind any other) and keeps it; a panic leaves it uncomputed.
fn compute(app: &App, base: &App, key: DiffKey) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if cached(app, &key).is_none() {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| diff_objects(app, base, &key)));
        let failed = match r {
            Ok(Ok(_)) => None,
            Ok(Err((_, e))) => Some(e),
            Err(_) => Some("the analysis failed (a bug: please report it with the files)".to_string()),
        };
        if let Some(e) = failed {
            eprintln!("hprof: serve: object diff of {} against {}: {e}", app.file.display(), base.file.display());
            // Kept as an error, so that polling says it rather than starting it again.
            if let Ok(mut c) = app.cache.growth.lock() {
                c.insert(key.clone(), json!({"error": e}));
            }
        }
    }
    if let Ok(mut p) = app.cache.growth_pending.lock() {
        p.remove(&key);
    }
}

/// Once every file is indexed, computes each heap dump's diff against its default other file (the first
/// other one, as the application picks it) with the default match, one after another.
pub fn warm(indexes: Vec<Arc<Index>>) {
    if indexes.len() < 2 {
        return;
    }
    std::thread::spawn(move || {
        while indexes.iter().any(|i| i.get().is_none()) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let apps: Vec<Option<Arc<App>>> =
            indexes.iter().map(|i| i.get().and_then(Result::ok).filter(|a| a.an.is_some())).collect();
        let mut queued = Vec::new();
        for (f, app) in apps.iter().enumerate() {
            let (Some(app), Some(Some(base))) = (app, apps.iter().enumerate().find(|(b, _)| *b != f).map(|x| x.1))
            else {
                continue;
            };
            if let Ok(key) = diff_key(app, base, "")
                && start(app, &key)
            {
                queued.push((app.clone(), base.clone(), key));
            }
        }
        for (app, base, key) in queued {
            compute(&app, &base, key);
        }
    });
}
