//! The single-page application, embedded in the binary (no network needed): `/` is its shell, with what
//! is known at once — the summary, the index's progress, or why the file cannot be read — so the page
//! comes up before the index is built and says something even without JavaScript; `/assets/` holds its
//! script and style. The application reads everything else from the JSON API (api.rs).

use super::app::Reply;
use super::index::Index;
use super::pages::esc;

const SHELL: &str = include_str!("spa/index.html");
const SCRIPT: &str = include_str!("spa/app.js");
const FLAME: &str = include_str!("spa/flame.js");
const STYLE: &str = include_str!("spa/app.css");

/// An embedded asset, by path.
pub fn asset(path: &str) -> Option<Reply> {
    let (content_type, body) = match path {
        "/assets/app.js" => ("text/javascript; charset=utf-8", SCRIPT),
        "/assets/flame.js" => ("text/javascript; charset=utf-8", FLAME),
        "/assets/app.css" => ("text/css; charset=utf-8", STYLE),
        _ => return None,
    };
    Some(Reply { status: 200, content_type, body: body.to_owned() })
}

/// `/`: the application's shell around what can be said at once about the file.
pub fn shell(index: &Index) -> Reply {
    let file = index.file.display().to_string();
    let (status, initial) = match index.get() {
        None => (200, index.progress_html()),
        Some(Ok(app)) => (200, format!("<pre id=\"summary-text\">{}</pre>", esc(&app.summary))),
        Some(Err(e)) => (500, format!("<h1>Cannot read {}</h1><p id=\"error\">{}</p>", esc(&file), esc(&e))),
    };
    let body = SHELL.replace("{{title}}", &esc(&file)).replace("{{initial}}", &initial);
    Reply { status, content_type: "text/html; charset=utf-8", body }
}
