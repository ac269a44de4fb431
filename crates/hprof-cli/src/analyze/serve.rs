//! `hprof serve`: a small web view on 127.0.0.1 — histogram, dominator tree drill-down, paths from GC
//! roots, and the flame graph of a profile's CPU samples. Plain server-rendered HTML (works without
//! JavaScript), and the same data as JSON under /api/.

use super::dominators::Analysed;
use super::path::{path_json, path_text};
use super::{Bar, human, matches, open, parse_id};
use hprof_analysis::Dump;
use hprof_analysis::dominators::DominatorTree;
use hprof_analysis::paths::shortest_path;
use hprof_analysis::stacks::{StackKind, stacks, weighted};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A heap dump or binary profile.
    pub file: PathBuf,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    #[command(flatten)]
    pub graph: super::GraphArgs,
}

struct App {
    file: PathBuf,
    an: Option<Analysed>,
    flame_svg: Option<String>,
    summary: String,
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{t} - hprof</title><style>\
         body{{font-family:sans-serif;margin:1em}} table{{border-collapse:collapse}} td,th{{padding:2px 8px;border-bottom:1px solid #ddd}}\
         td.n{{text-align:right;font-family:monospace}} nav a{{margin-right:1em}}</style></head><body>\
         <nav><a href=\"/\">Summary</a><a href=\"/histo\">Histogram</a><a href=\"/dominators\">Dominator tree</a>\
         <a href=\"/leaks\">Leak suspects</a><a href=\"/flame\">Flame graph</a></nav><h1>{t}</h1>{body}</body></html>",
        t = esc(title)
    )
}

fn query(q: &str, key: &str) -> Option<String> {
    q.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == key).then(|| percent_decode(v))
    })
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                match u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 2;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl App {
    fn node_link(&self, an: &Analysed, v: u32) -> String {
        let id = an.graph.ids.get(v);
        format!(
            "<a href=\"/dominators?id=0x{id:x}\">{}</a> <a href=\"/path?id=0x{id:x}\" title=\"path from GC roots\">[path]</a>",
            esc(&an.graph.describe(v))
        )
    }

    fn route(&self, path: &str, q: &str) -> (u16, &'static str, String) {
        let html = "text/html; charset=utf-8";
        let js = "application/json";
        let no_heap = || (404, html, page("No heap dump", "<p>This file holds no heap dump.</p>"));
        match path {
            "/" => {
                (200, html, page(&format!("{}", self.file.display()), &format!("<pre>{}</pre>", esc(&self.summary))))
            }
            "/histo" | "/api/histo" => {
                let Some(an) = &self.an else { return no_heap() };
                let filter = query(q, "filter").unwrap_or_default();
                let rows: Vec<_> = an
                    .class_table()
                    .into_iter()
                    .filter(|r| filter.is_empty() || matches(&filter, &an.graph.classes.classes[r.0].name))
                    .collect();
                if path.starts_with("/api") {
                    let v: Vec<_> = rows.iter().map(|&(i, n, s, r)| json!({"class": an.graph.classes.classes[i].name, "instances": n, "shallow_bytes": s, "retained_bytes": r})).collect();
                    return (200, js, json!({"classes": v}).to_string());
                }
                let mut b = format!(
                    "<form><input name=\"filter\" value=\"{}\" placeholder=\"class filter\"><button>Filter</button></form>\
                    <table id=\"histogram\"><tr><th>Class</th><th>Instances</th><th>Shallow bytes</th><th>Retained bytes</th></tr>",
                    esc(&filter)
                );
                for &(i, n, s, r) in rows.iter().take(500) {
                    let name = &an.graph.classes.classes[i].name;
                    b.push_str(&format!("<tr><td><a href=\"/objects?class={}\">{}</a></td><td class=n>{n}</td><td class=n>{s}</td><td class=n>{r}</td></tr>", esc(&urlencode(name)), esc(name)));
                }
                b.push_str("</table>");
                (200, html, page("Class histogram", &b))
            }
            "/objects" => {
                let Some(an) = &self.an else { return no_heap() };
                let class = query(q, "class").unwrap_or_default();
                let g = &an.graph;
                let wanted: Vec<bool> = g.classes.classes.iter().map(|c| c.name == class).collect();
                let mut objs: Vec<u32> =
                    (0..g.len() as u32).filter(|&v| wanted[g.class_of[v as usize] as usize]).collect();
                objs.sort_by_key(|&v| std::cmp::Reverse(an.tree.retained[v as usize]));
                let mut b = format!(
                    "<p>{} instances</p><table><tr><th>Object</th><th>Shallow</th><th>Retained</th></tr>",
                    objs.len()
                );
                for &v in objs.iter().take(500) {
                    b.push_str(&format!(
                        "<tr><td>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
                        self.node_link(an, v),
                        g.shallow[v as usize],
                        an.tree.retained[v as usize]
                    ));
                }
                b.push_str("</table>");
                (200, html, page(&class, &b))
            }
            "/dominators" | "/api/dominators" => {
                let Some(an) = &self.an else { return no_heap() };
                let node = match query(q, "id").filter(|s| !s.is_empty()) {
                    Some(s) => match parse_id(&s).ok().and_then(|id| an.graph.node(id)) {
                        Some(v) => Some(v),
                        None => return (404, html, page("Not found", &format!("<p>No object {}</p>", esc(&s)))),
                    },
                    None => None,
                };
                let kids = an.biggest(&an.tree.children_of(node), 200);
                if path.starts_with("/api") {
                    return (200, js, json!({"object": node.map(|v| an.node_json(v)), "children": kids.iter().map(|&k| an.node_json(k)).collect::<Vec<_>>()}).to_string());
                }
                let mut b = String::new();
                match node {
                    Some(v) => {
                        let up = match an.tree.idom[v as usize] {
                            DominatorTree::ROOT | DominatorTree::UNREACHABLE => {
                                "<a href=\"/dominators\">&lt;GC roots&gt;</a>".to_string()
                            }
                            d => self.node_link(an, d),
                        };
                        b.push_str(&format!(
                            "<p>{} — shallow {}, retained {}</p><p>dominated by {up}</p>",
                            self.node_link(an, v),
                            an.graph.shallow[v as usize],
                            an.tree.retained[v as usize]
                        ));
                    }
                    None => b.push_str(&format!(
                        "<p>Reachable heap: {} in {} objects</p>",
                        human(an.tree.reachable_bytes),
                        an.tree.reachable
                    )),
                }
                b.push_str(
                    "<table id=\"dominators\"><tr><th>Object</th><th>Shallow</th><th>Retained</th><th>%</th></tr>",
                );
                let total = an.tree.tree_bytes.max(1) as f64;
                for &k in &kids {
                    let r = an.tree.retained[k as usize];
                    b.push_str(&format!(
                        "<tr><td>{}</td><td class=n>{}</td><td class=n>{r}</td><td class=n>{:.2}</td></tr>",
                        self.node_link(an, k),
                        an.graph.shallow[k as usize],
                        r as f64 * 100.0 / total
                    ));
                }
                b.push_str("</table>");
                (200, html, page("Dominator tree", &b))
            }
            "/path" | "/api/path" => {
                let Some(an) = &self.an else { return no_heap() };
                let Some(v) = query(q, "id").and_then(|s| parse_id(&s).ok()).and_then(|id| an.graph.node(id)) else {
                    return (404, html, page("Not found", "<p>No such object</p>"));
                };
                let p = shortest_path(&an.graph, v);
                if path.starts_with("/api") {
                    return (
                        200,
                        js,
                        json!({"object": an.node_json(v), "path": p.as_ref().map(|p| path_json(an, p))}).to_string(),
                    );
                }
                let body = match &p {
                    Some(p) => format!("<pre id=\"path\">{}</pre>", esc(&path_text(an, p).join("\n"))),
                    None => "<p>Not reachable from GC roots through strong references.</p>".into(),
                };
                (200, html, page(&format!("Path to {}", an.graph.describe(v)), &body))
            }
            "/leaks" => {
                let Some(an) = &self.an else { return no_heap() };
                let threshold = query(q, "threshold").and_then(|t| t.parse().ok()).unwrap_or(10.0);
                let (objs, classes) = super::leaks::suspects(an, threshold);
                let total = an.tree.tree_bytes.max(1) as f64;
                let mut b = format!(
                    "<p>Objects and classes retaining at least {threshold}% of {}.</p><ol id=\"suspects\">",
                    human(an.tree.tree_bytes)
                );
                for sp in &objs {
                    let r = an.tree.retained[sp.node as usize];
                    b.push_str(&format!(
                        "<li>{} retains {} ({:.1}%)",
                        self.node_link(an, sp.node),
                        human(r),
                        r as f64 * 100.0 / total
                    ));
                    if sp.accumulation != sp.node {
                        b.push_str(&format!("<br>accumulation point: {}", self.node_link(an, sp.accumulation)));
                    }
                    b.push_str("<ul>");
                    for (c, n, bytes) in &sp.content {
                        b.push_str(&format!("<li>{n} × {} retaining {}</li>", esc(c), human(*bytes)));
                    }
                    b.push_str("</ul></li>");
                }
                for &(i, n, _, r) in &classes {
                    b.push_str(&format!(
                        "<li>{n} instances of {} retain {} ({:.1}%)</li>",
                        esc(&an.graph.classes.classes[i].name),
                        human(r),
                        r as f64 * 100.0 / total
                    ));
                }
                b.push_str("</ol>");
                (200, html, page("Leak suspects", &b))
            }
            "/flame" => match &self.flame_svg {
                Some(svg) => (200, html, page("CPU samples", svg)),
                None => (200, html, page("Flame graph", "<p>This file has no CPU SAMPLES.</p>")),
            },
            _ => (404, html, page("Not found", "<p>No such page.</p>")),
        }
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"._-".contains(&b) { (b as char).to_string() } else { format!("%{b:02X}") }
        })
        .collect()
}

fn flame_svg(d: &Dump) -> Option<String> {
    let s = stacks(d, StackKind::CpuSamples);
    if s.is_empty() {
        return None;
    }
    let dir = tempfile_dir()?;
    let p = dir.join("flame.svg");
    hprof_format::flame::write_flamegraph(&p, &weighted(&s), "CPU samples", "samples").ok()?;
    let svg = std::fs::read_to_string(&p).ok();
    let _ = std::fs::remove_dir_all(&dir);
    let svg = svg?;
    let start = svg.find("<svg")?;
    Some(svg[start..].to_owned())
}

fn tempfile_dir() -> Option<PathBuf> {
    let d = std::env::temp_dir().join(format!("hprof-serve-{}", std::process::id()));
    std::fs::create_dir_all(&d).ok()?;
    Some(d)
}

fn handle(app: &App, mut s: TcpStream) -> std::io::Result<()> {
    let mut r = BufReader::new(s.try_clone()?);
    let mut line = String::new();
    r.read_line(&mut line)?;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h)? == 0 || h == "\r\n" || h == "\n" {
            break;
        }
    }
    let target = line.split_whitespace().nth(1).unwrap_or("/");
    let (path, q) = target.split_once('?').unwrap_or((target, ""));
    let (code, ctype, body) = app.route(path, q);
    let reason = if code == 200 { "OK" } else { "Not Found" };
    write!(
        s,
        "HTTP/1.1 {code} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    s.write_all(body.as_bytes())?;
    s.flush()
}

pub fn run(a: &Args) -> Result<(), String> {
    let bar = Bar::new();
    let d = open(&a.file, &bar)?;
    let flame = flame_svg(&d);
    let mut summary = format!("{}\n{}-byte identifiers\n", d.header.version, d.header.id_size);
    for (t, c) in &d.tag_counts {
        summary.push_str(&format!("{:<20} {:>10}\n", super::record_label(*t), c.count));
    }
    drop(d);
    let an = match Analysed::load(&a.file, true, &a.graph) {
        Ok(an) => Some(an),
        Err(e) if e.contains("no heap dump") => None,
        Err(e) => return Err(e),
    };
    if let Some(an) = &an {
        summary.push_str(&format!(
            "\n{} objects, {} reachable, {} retained from GC roots\n",
            an.graph.len(),
            an.tree.reachable,
            human(an.tree.reachable_bytes)
        ));
    }
    let app = App { file: a.file.clone(), an, flame_svg: flame, summary };
    let listener = TcpListener::bind(("127.0.0.1", a.port)).map_err(|e| format!("127.0.0.1:{}: {e}", a.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("serving {} on http://{addr}/ (Ctrl-C stops)", a.file.display());
    std::io::stdout().flush().ok();
    for s in listener.incoming() {
        match s {
            Ok(s) => {
                if let Err(e) = handle(&app, s) {
                    eprintln!("hprof: serve: {e}");
                }
            }
            Err(e) => eprintln!("hprof: serve: {e}"),
        }
    }
    Ok(())
}
