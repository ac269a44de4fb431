//! The pages and JSON answers of `hprof serve`: histogram, dominator tree drill-down, paths from GC roots,
//! leak suspects and the flame graph of a profile's CPU samples. Plain server-rendered HTML (works
//! without JavaScript), and the same data as JSON under /api/. Nothing here knows about HTTP: a route
//! takes a path and a query and gives a `Reply`.

use super::pages::{esc, page, query, urlencode};
use crate::analyze::dominators::Analysed;
use crate::analyze::path::path_text;
use crate::analyze::{human, matches, parse_id};
use hprof_analysis::dominators::DominatorTree;
use hprof_analysis::paths::shortest_path;
use std::path::PathBuf;

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
}

/// A route's answer: status, content type and body.
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: String,
}

const HTML: &str = "text/html; charset=utf-8";
const JSON: &str = "application/json";

fn reply(status: u16, content_type: &'static str, body: String) -> Reply {
    Reply { status, content_type, body }
}

impl App {
    fn node_link(&self, an: &Analysed, v: u32) -> String {
        let id = an.graph.ids.get(v);
        format!(
            "<a href=\"/dominators?id=0x{id:x}\">{}</a> <a href=\"/path?id=0x{id:x}\" title=\"path from GC roots\">[path]</a>",
            esc(&an.graph.describe(v))
        )
    }

    /// The answer to `GET path?q`; `other` is the second file of a diff (`b=`).
    pub fn route(&self, path: &str, q: &str, other: Option<&App>) -> Reply {
        let (status, content_type, body) = match path.strip_prefix("/api/") {
            Some(what) => {
                let (status, v) = super::api::answer(self, what, q, other);
                (status, JSON, v.to_string())
            }
            _ => self.answer(path, q),
        };
        // Pages read names from the mapped file: if it shrank meanwhile, the answer is wrong; say so.
        if let Some(Err(e)) = self.an.as_ref().map(|an| an.intact()) {
            return reply(500, HTML, page("The file changed", &format!("<p>{}</p>", esc(&e))));
        }
        reply(status, content_type, body)
    }

    fn answer(&self, path: &str, q: &str) -> (u16, &'static str, String) {
        let html = HTML;
        let no_heap = || (404, html, page("No heap dump", &format!("<p id=\"no-heap\">{}.</p>", esc(&self.no_heap))));
        match path {
            "/" => {
                (200, html, page(&format!("{}", self.file.display()), &format!("<pre>{}</pre>", esc(&self.summary))))
            }
            "/histo" => {
                let Some(an) = &self.an else { return no_heap() };
                let filter = query(q, "filter").unwrap_or_default();
                let rows: Vec<_> = an
                    .class_table()
                    .into_iter()
                    .filter(|r| filter.is_empty() || matches(&filter, &an.graph.classes.classes[r.0].name))
                    .collect();
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
            "/dominators" => {
                let Some(an) = &self.an else { return no_heap() };
                let node = match query(q, "id").filter(|s| !s.is_empty()) {
                    Some(s) => match parse_id(&s).ok().and_then(|id| an.graph.node(id)) {
                        Some(v) => Some(v),
                        None => return (404, html, page("Not found", &format!("<p>No object {}</p>", esc(&s)))),
                    },
                    None => None,
                };
                let kids = an.biggest(&an.tree.children_of(node), 200);
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
            "/path" => {
                let Some(an) = &self.an else { return no_heap() };
                let Some(v) = query(q, "id").and_then(|s| parse_id(&s).ok()).and_then(|id| an.graph.node(id)) else {
                    return (404, html, page("Not found", "<p>No such object</p>"));
                };
                let p = shortest_path(&an.graph, v);
                let body = match &p {
                    Some(p) => format!("<pre id=\"path\">{}</pre>", esc(&path_text(an, p).join("\n"))),
                    None => "<p>Not reachable from GC roots through strong references.</p>".into(),
                };
                (200, html, page(&format!("Path to {}", an.graph.describe(v)), &body))
            }
            "/leaks" => {
                let Some(an) = &self.an else { return no_heap() };
                let threshold = query(q, "threshold").and_then(|t| t.parse().ok()).unwrap_or(10.0);
                let (objs, classes) = crate::analyze::leaks::suspects(an, threshold);
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
