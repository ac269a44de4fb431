//! What the server knows about one file, built once by index.rs and shared by every connection, and the
//! answer to a request for it: a JSON answer (api.rs) or a server-rendered page (routes.rs).

use super::groups::Groups;
use super::pages::{esc, page};
use crate::analyze::dominators::Analysed;
use hprof_analysis::Progress;
use hprof_analysis::insight::root_paths::RootForest;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// What the server knows about its file, built once and shared by every connection.
pub struct App {
    pub file: PathBuf,
    pub an: Option<Analysed>,
    /// The CPU samples' flame graph (inferno's SVG without its XML prolog), rendered in memory.
    pub flame_svg: Option<String>,
    pub summary: String,
    /// Why there is no heap to show, when `an` is `None`.
    pub no_heap: String,
    /// Every profile type the file holds.
    pub profiles: Vec<super::profile::Profile>,
    /// The file's threads: (serial, name).
    pub threads: Vec<(u32, String)>,
    /// The summary for the API: file, version, records, damage.
    pub summary_json: serde_json::Value,
    /// `--redact`: no string or primitive value of the file in any answer.
    pub redact: bool,
    /// What is computed once, when first asked.
    pub cache: Cache,
}

/// Answers that walk the whole heap, kept once computed: a drill-down then costs a lookup.
#[derive(Default)]
pub struct Cache {
    /// `Analysed::class_table`: (class index, instances, shallow, retained), biggest retained first.
    pub class_table: OnceLock<Vec<(usize, u64, u64, u64)>>,
    pub waste: OnceLock<Value>,
    pub loaders: OnceLock<Value>,
    pub threads: OnceLock<Value>,
    /// Each class's instances, each object's referrers, and the shortest paths from the GC roots.
    pub instances: OnceLock<Groups>,
    pub referrers: OnceLock<Groups>,
    pub forest: OnceLock<RootForest>,
    /// The histogram's package and loader groupings by (group, filter): each walks the dominator tree.
    pub group_rows: Mutex<HashMap<(String, String), GroupRows>>,
    /// `/api/diffobjects` answers by (the other file, match, top): each walks both heaps.
    pub growth: Mutex<HashMap<(PathBuf, String, usize), Value>>,
    /// The `growth` keys being computed in the background (diff_warm.rs).
    pub growth_pending: Mutex<std::collections::HashSet<(PathBuf, String, usize)>>,
}

impl Cache {
    /// What `/api/status` says of this file's object diffs being computed (diff_warm.rs): the files they are against.
    pub fn diffs_pending(&self) -> Vec<String> {
        let p = self.growth_pending.lock();
        p.map(|p| p.iter().map(|k| k.0.display().to_string()).collect()).unwrap_or_default()
    }
}

/// The rows of one histogram grouping, shared by the answers that page through it.
pub type GroupRows = Arc<Vec<super::heap_api::Row>>;

/// A route's answer: status, content type and body.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

impl App {
    /// Builds the tables of the drill-downs (part of the index, so that none waits for them later).
    pub fn warm(&self, progress: &dyn Progress) {
        let Some(an) = &self.an else { return };
        progress.start("tables for drill-downs", 6);
        self.class_table(an);
        progress.inc(1);
        for group in ["package", "loader"] {
            self.group_rows(an, group, "");
            progress.inc(1);
        }
        self.instances(an);
        progress.inc(1);
        self.referrers(an);
        progress.inc(1);
        self.forest(an);
        progress.inc(1);
        progress.finish();
    }

    /// The rows of a package or loader grouping of the classes matching `filter`, computed once.
    pub fn group_rows(&self, an: &Analysed, group: &str, filter: &str) -> GroupRows {
        let key = (group.to_owned(), filter.to_owned());
        if let Some(rows) = self.cache.group_rows.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return rows;
        }
        let rows = Arc::new(super::heap_api::group_rows(an, self.class_table(an), group, filter));
        if let Ok(mut c) = self.cache.group_rows.lock() {
            // Filters typed one after another would pile up: keep the unfiltered groupings and a few more.
            if c.len() > 16 {
                c.retain(|k, _| k.1.is_empty());
            }
            c.insert(key, rows.clone());
        }
        rows
    }

    pub fn instances(&self, an: &Analysed) -> &Groups {
        self.cache.instances.get_or_init(|| Groups::instances(an))
    }

    pub fn referrers(&self, an: &Analysed) -> &Groups {
        self.cache.referrers.get_or_init(|| Groups::referrers(an))
    }

    /// Every reachable object's parent on a shortest path from the roots: one search for all paths.
    pub fn forest(&self, an: &Analysed) -> &RootForest {
        self.cache.forest.get_or_init(|| RootForest::new(&an.graph))
    }

    /// The classes by retained size (see `Analysed::class_table`), computed once.
    pub fn class_table(&self, an: &Analysed) -> &[(usize, u64, u64, u64)] {
        self.cache.class_table.get_or_init(|| an.class_table())
    }

    /// Checks that the file is still whole after an answer was computed from it: pages read names from the
    /// mapped file, and if it shrank meanwhile, the answer is wrong; say so instead.
    pub fn checked(&self, reply: Reply) -> Reply {
        match self.an.as_ref().map(|an| an.intact()) {
            Some(Err(e)) => Reply {
                status: 500,
                content_type: "text/html; charset=utf-8",
                body: page("The file changed", &format!("<p>{}</p>", esc(&e))),
            },
            _ => reply,
        }
    }
}
