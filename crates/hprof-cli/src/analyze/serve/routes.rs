//! The server-rendered pages of `hprof serve` (they work without JavaScript): histogram, dominator tree
//! drill-down, paths from GC roots, leak suspects and the flame graph of a profile's CPU samples. Nothing
//! here knows about HTTP: a route takes a path and a query and gives a `Reply`.

use super::app::{App, Reply};
use super::pages::{esc, page, query, urlencode};
use crate::analyze::dominators::Analysed;
use crate::analyze::path::path_text;
use crate::analyze::{human, matches, parse_id};
use hprof_analysis::dominators::DominatorTree;
use hprof_analysis::paths::shortest_path;

const HTML: &str = "text/html; charset=utf-8";

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

    /// The page at `GET path?q`.
    pub fn page(&self, path: &str, q: &str) -> Reply {
        let (status, content_type, body) = self.answer(path, q);
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
