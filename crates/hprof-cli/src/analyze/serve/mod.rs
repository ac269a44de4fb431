//! `hprof serve`: a small web view of a heap dump or profile — histogram, dominator tree drill-down, paths
//! from GC roots, leak suspects and the flame graph of a profile's CPU samples.
//!
//! - http.rs: the HTTP server (hyper), its limits and timeouts;
//! - guard.rs: who may read it (the `Host:` check, the token beyond loopback);
//! - index.rs: the file's index, built once in the background and shared (an `Arc`) by every connection;
//! - app.rs: what is known about one file; routes.rs: the server-rendered pages (they work without
//!   JavaScript); pages.rs: HTML helpers;
//! - api.rs: the JSON API of the single-page application, over heap_api.rs (histogram, dominator tree,
//!   leaks, dump diff), insight_api.rs (waste, class loaders, threads), inspect.rs (object inspector, paths) and profile.rs (flame graphs, callers, diffs);
//! - diff_warm.rs: the object-by-object dump diff, computed in the background once every file is indexed;
//! - spa.rs: the application itself (spa/: HTML, JavaScript and CSS embedded in the binary).
//!
//! See docs/security.md for what it exposes and to whom.

mod api;
mod app;
mod diff_warm;
mod group_retained;
mod groups;
mod guard;
mod heap_api;
mod http;
mod index;
mod insight_api;
mod inspect;
mod pages;
mod profile;
mod routes;
mod spa;

use super::dominators::Analysed;
use super::{human, open};
use app::App;
use guard::Access;
use hprof_analysis::stacks::{StackKind, stacks, weighted};
use hprof_analysis::{Dump, Progress};
use index::Index;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Heap dumps or binary profiles (two of a kind enable the diff views).
    #[arg(required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Port (0 picks a free one).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Address to listen on. A loopback address (the default) answers only this machine; any other
    /// (0.0.0.0 for all) also requires the random token printed in the URL.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub bind: IpAddr,
    /// No string or primitive value leaves the file: the inspector shows no field values but references,
    /// no String text or array contents; waste shows no duplicated text; thread and loader names are left out.
    #[arg(long)]
    pub redact: bool,
    #[command(flatten)]
    pub graph: super::GraphArgs,
}

/// The CPU samples' flame graph, as inline SVG for a page; rendered in memory, no file written.
fn flame_svg(d: &Dump) -> Option<String> {
    let s = stacks(d, StackKind::CpuSamples);
    if s.is_empty() {
        return None;
    }
    let svg = hprof_format::flame::flamegraph_svg(&weighted(&s), "CPU samples", "samples").ok()?;
    let svg = String::from_utf8_lossy(&svg);
    let start = svg.find("<svg")?;
    Some(svg[start..].to_owned())
}

/// Reads the file and builds what the pages show (run by index.rs on a thread of its own).
fn load(file: &Path, graph: &super::GraphArgs, redact: bool, progress: &dyn Progress) -> Result<App, String> {
    let (an, fresh, no_heap) = match Analysed::load_with(file, true, graph, progress) {
        Ok(an) => (Some(an), None, String::new()),
        // A profile (its records are all there is), or a dump damaged before its heap dump (the page says where).
        Err(e) if e.contains("no heap dump") => (None, Some(open(file, progress)?), e),
        Err(e) => return Err(e),
    };
    let d: &Dump = match (&an, &fresh) {
        (Some(an), _) => &an.dump,
        (None, Some(d)) => d,
        (None, None) => unreachable!("one of the two is read above"),
    };
    let flame = flame_svg(d);
    let profiles = profile::profiles(d);
    let threads = d.threads.iter().map(|t| (t.serial, t.name.clone())).collect();
    let damage_text = d.damage.as_ref().or(an.as_ref().and_then(|an| an.graph.damage.as_ref())).map(|e| e.to_string());
    let summary_json = serde_json::json!({
        "file": file.display().to_string(),
        "version": d.header.version,
        "id_size": d.header.id_size,
        "records": d.tag_counts.iter().map(|(t, c)| serde_json::json!({"record": super::record_label(*t), "count": c.count})).collect::<Vec<_>>(),
        "damage": damage_text,
        "incomplete": d.incomplete_message(),
        "no_heap": (!no_heap.is_empty()).then_some(&no_heap),
    });
    let mut summary = format!("{}\n{}-byte identifiers\n", d.header.version, d.header.id_size);
    for (t, c) in &d.tag_counts {
        summary.push_str(&format!("{:<20} {:>10}\n", super::record_label(*t), c.count));
    }
    if let Some(an) = &an {
        summary.push_str(&format!(
            "\n{} objects, {} reachable, {} retained from GC roots\n",
            an.graph.len(),
            an.tree.reachable,
            human(an.tree.reachable_bytes)
        ));
    }
    let damage = d.damage.as_ref().or(an.as_ref().and_then(|an| an.graph.damage.as_ref()));
    if let Some(e) = damage {
        summary.push_str(&format!("\ndamaged: {e}; what is shown comes from before it\n"));
    }
    if let Some(m) = d.incomplete_message() {
        summary.push_str(&format!("\n{m}\n"));
    }
    drop(fresh);
    let app = App {
        file: file.to_path_buf(),
        an,
        flame_svg: flame,
        summary,
        no_heap,
        profiles,
        threads,
        summary_json,
        redact,
        cache: Default::default(),
    };
    app.warm(progress);
    Ok(app)
}

/// This machine's name, for the URL and the Host check of a server bound to all addresses.
fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most that many bytes.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0)?;
    std::str::from_utf8(&buf[..end]).ok().filter(|s| !s.is_empty()).map(str::to_owned)
}

pub fn run(a: &Args) -> Result<(), String> {
    // A file that is not there is said at once; what is wrong inside it, on the page (and stderr).
    for f in &a.files {
        std::fs::File::open(f).map_err(|e| format!("{}: {e}", f.display()))?;
    }
    let listener = std::net::TcpListener::bind(SocketAddr::new(a.bind, a.port))
        .map_err(|e| format!("{}: {e}", SocketAddr::new(a.bind, a.port)))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let token = if addr.ip().is_loopback() { None } else { Some(guard::new_token()?) };
    let host = hostname();
    let access = Access::new(addr.ip(), addr.port(), token.clone(), host.clone());
    let shown = match (addr.ip().is_unspecified(), &host) {
        (true, Some(h)) => h.clone(),
        _ => guard::host_literal(addr.ip()),
    };
    let url = match &token {
        Some(t) => format!("http://{shown}:{}/?token={t}", addr.port()),
        None => format!("http://{shown}:{}/", addr.port()),
    };
    let names: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
    let mut said = format!("serving {} on {url} (Ctrl-C stops)", names.join(", "));
    if access.needs_token() {
        said.push_str(&format!("\nlistening on {addr}, beyond this machine: every request needs the token above"));
    }
    println!("{said}");
    std::io::stdout().flush().ok();
    // The files are indexed one after another: two at once would only compete for the cores and memory.
    let mut indexes = Vec::new();
    let mut before = None;
    for f in &a.files {
        let (file, graph, redact) = (f.clone(), a.graph.clone(), a.redact);
        let index = Index::start(f.clone(), before.take(), move |progress| load(&file, &graph, redact, progress));
        before = Some(index.clone());
        indexes.push(index);
    }
    diff_warm::warm(indexes.clone());
    http::run(listener, http::Server { indexes, access })
}
