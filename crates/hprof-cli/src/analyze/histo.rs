//! `hprof histo`: the class histogram.

use super::{Bar, damage, damage_json, matches, open, print_json};
use hprof_analysis::heap::{HistoRow, histogram_as};
use serde_json::json;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SortBy {
    Count,
    Bytes,
}

#[derive(clap::Args)]
pub struct Args {
    /// A heap dump (HPROF, gzip is fine).
    pub file: PathBuf,
    /// Only classes whose name contains PATTERN (case-insensitive; `*` wildcards allowed).
    #[arg(long, value_name = "PATTERN")]
    pub filter: Option<String>,
    /// Order by shallow bytes (default) or instance count.
    #[arg(long, value_enum, default_value = "bytes")]
    pub sort: SortBy,
    /// Show only the first N rows.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub layout: super::LayoutArg,
}

pub fn select(mut rows: Vec<HistoRow>, filter: Option<&str>, sort: SortBy, top: Option<usize>) -> Vec<HistoRow> {
    if let Some(p) = filter {
        rows.retain(|r| matches(p, &r.class_name));
    }
    match sort {
        SortBy::Bytes => {
            rows.sort_by(|a, b| b.shallow_bytes.cmp(&a.shallow_bytes).then_with(|| a.class_name.cmp(&b.class_name)))
        }
        SortBy::Count => {
            rows.sort_by(|a, b| b.instances.cmp(&a.instances).then_with(|| a.class_name.cmp(&b.class_name)))
        }
    }
    if let Some(n) = top {
        rows.truncate(n);
    }
    rows
}

pub fn run(a: &Args) -> Result<(), String> {
    let bar = Bar::new();
    let d = open(&a.file, &bar)?;
    let h = histogram_as(&d, a.layout.layout, &bar).map_err(|e| e.to_string())?;
    let (total_n, total_b) = (h.total_instances(), h.total_bytes());
    let rows = select(h.rows.clone(), a.filter.as_deref(), a.sort, a.top);
    let dmg = [d.damage.as_ref(), h.damage.as_ref()];
    if a.json {
        let rows: Vec<_> = rows
            .iter()
            .map(|r| json!({"class": r.class_name, "class_id": format!("0x{:x}", r.class_id), "instances": r.instances, "shallow_bytes": r.shallow_bytes}))
            .collect();
        print_json(&json!({
            "total_instances": total_n,
            "total_shallow_bytes": total_b,
            "layout": h.layout.describe(),
            "layout_name": h.layout.kind.name(),
            "layout_source": h.layout_choice.source(),
            "incomplete": d.incomplete_message(),
            "classes": rows,
            "damage": damage_json(&dmg),
        }))?;
    } else {
        println!(" num     #instances         #bytes  class name");
        println!("----------------------------------------------");
        for (i, r) in rows.iter().enumerate() {
            println!("{:4}: {:>14} {:>14}  {}", i + 1, r.instances, r.shallow_bytes, r.class_name);
        }
        println!("Total {:>14} {:>14}", total_n, total_b);
    }
    damage(&a.file, &dmg)
}
