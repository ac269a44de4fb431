//! The heap insights of the JSON API — waste, class loaders, threads (hprof-analysis::insight, the same
//! reports as `hprof waste`, `loaders` and `threads`) — each computed once, when first asked, and kept.

use super::app::App;
use crate::analyze::{loaders, threads, waste};
use hprof_analysis::insight::loaders::loaders as loaders_report;
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
                let opts = WasteOptions { top: TOP, ..WasteOptions::default() };
                waste::report_json(&waste_report(&an.dump, &an.graph, &opts))
            })
            .clone(),
        "loaders" => cache
            .loaders
            .get_or_init(|| loaders::report_json(&loaders_report(&an.dump, &an.graph, &an.tree), TOP))
            .clone(),
        _ => cache
            .threads
            .get_or_init(
                || json!({"threads": threads::threads_json(&threads_report(&an.dump, &an.graph, &an.tree), PER_FRAME)}),
            )
            .clone(),
    })
}
