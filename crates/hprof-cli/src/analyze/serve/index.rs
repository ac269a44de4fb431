//! The index of the served file — read, graphed and dominated once, on a thread of its own, then shared by
//! every connection — and how far its building has come. The URL is printed before it starts, so the first
//! page comes up at once on a big dump: `/` shows the progress, `/api/status` gives it as JSON, and the
//! other pages wait for the index (the connection waits, no thread does).

use super::app::{App, Reply};
use super::pages::{esc, page};
use crate::analyze::Bar;
use hprof_analysis::Progress;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::watch;

pub struct Index {
    pub file: PathBuf,
    building: Building,
    result: OnceLock<Result<Arc<App>, String>>,
    ready: watch::Sender<bool>,
}

/// The stage being built and its position, for the page; also drawn on a terminal's stderr.
struct Building {
    bar: Bar,
    stage: Mutex<String>,
    done: AtomicU64,
    total: AtomicU64,
}

impl Progress for Building {
    fn start(&self, stage: &str, total: u64) {
        if let Ok(mut s) = self.stage.lock() {
            *s = stage.to_owned();
        }
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.bar.start(stage, total);
    }
    fn set(&self, done: u64) {
        self.done.store(done, Ordering::Relaxed);
        self.bar.set(done);
    }
    fn inc(&self, delta: u64) {
        self.done.fetch_add(delta, Ordering::Relaxed);
        self.bar.inc(delta);
    }
    fn finish(&self) {
        self.bar.finish();
    }
}

impl Index {
    /// Starts building with `build` on a thread of its own, once `after` (the file before) is built.
    pub fn start<F>(file: PathBuf, after: Option<Arc<Index>>, build: F) -> Arc<Index>
    where
        F: FnOnce(&dyn Progress) -> Result<App, String> + Send + 'static,
    {
        let building =
            Building { bar: Bar::new(), stage: Mutex::new("starting".into()), done: 0.into(), total: 0.into() };
        let index = Arc::new(Index { file, building, result: OnceLock::new(), ready: watch::channel(false).0 });
        let me = index.clone();
        std::thread::spawn(move || {
            if let Some(before) = after {
                me.building.start(&format!("waiting for {}", before.file.display()), 0);
                while before.get().is_none() {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            }
            // A panic in the analysis of a hostile file becomes an error page, not pages that wait forever.
            let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build(&me.building)))
                .unwrap_or_else(|_| Err("the analysis failed (a bug: please report it with the file)".into()));
            if let Err(e) = &built {
                let _ = writeln!(std::io::stderr(), "hprof: error: {e}");
            }
            let _ = me.result.set(built.map(Arc::new));
            me.ready.send_replace(true);
        });
        index
    }

    /// The index if built (or why it could not be), without waiting.
    pub fn get(&self) -> Option<Result<Arc<App>, String>> {
        self.result.get().cloned()
    }

    /// The index, once built.
    pub async fn wait(&self) -> Result<Arc<App>, String> {
        let mut rx = self.ready.subscribe();
        let _ = rx.wait_for(|&ready| ready).await;
        self.get().unwrap_or_else(|| Err("the index was not built".into()))
    }

    fn progress(&self) -> (String, u64, u64) {
        let stage = self.building.stage.lock().map(|s| s.clone()).unwrap_or_default();
        (stage, self.building.done.load(Ordering::Relaxed), self.building.total.load(Ordering::Relaxed))
    }

    /// `/api/status`: `{"file", "state": "building"|"ready"|"failed", "stage", "done", "total", "error"}`
    /// of the first file, and the same for every file under `files`.
    pub fn status_all(all: &[Arc<Index>]) -> Reply {
        let files: Vec<_> = all.iter().map(|i| i.status_json()).collect();
        let mut v = files.first().cloned().unwrap_or_default();
        v["files"] = files.into();
        Reply { status: 200, content_type: "application/json", body: v.to_string() }
    }

    fn status_json(&self) -> serde_json::Value {
        let file = self.file.display().to_string();
        match self.get() {
            Some(Ok(app)) => {
                // The object diffs still being computed after the index (diff_warm.rs).
                let diffs = app.cache.diffs_pending();
                let mut v = json!({"file": file, "state": "ready"});
                if !diffs.is_empty() {
                    v["stage"] = format!("object diff against {}", diffs.join(", ")).into();
                    v["diffobjects"] = diffs.into();
                }
                v
            }
            Some(Err(e)) => json!({"file": file, "state": "failed", "error": e}),
            None => {
                let (stage, done, total) = self.progress();
                json!({"file": file, "state": "building", "stage": stage, "done": done, "total": total})
            }
        }
    }

    /// While building: the stage and how far it is, as HTML (the application then follows /api/status).
    pub fn progress_html(&self) -> String {
        let (stage, done, total) = self.progress();
        let pct = if total > 0 { format!(" ({:.0}%)", done as f64 * 100.0 / total as f64) } else { String::new() };
        format!("<p id=\"progress\">Building the index: {}{pct}</p>", esc(&stage))
    }

    /// Every page when the file could not be read: what and where, and the server goes on.
    pub fn failed_page(&self, error: &str) -> Reply {
        let body = format!("<p id=\"error\">{}</p>", esc(error));
        Reply {
            status: 500,
            content_type: "text/html; charset=utf-8",
            body: page(&format!("Cannot read {}", self.file.display()), &body),
        }
    }
}
