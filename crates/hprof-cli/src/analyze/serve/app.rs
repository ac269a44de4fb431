//! What the server knows about one file, built once by index.rs and shared by every connection, and the
//! answer to a request for it: a JSON answer (api.rs) or a server-rendered page (routes.rs).

use super::pages::{esc, page};
use crate::analyze::dominators::Analysed;
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

impl App {
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
