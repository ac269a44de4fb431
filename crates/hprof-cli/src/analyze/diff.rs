//! `hprof diff`: per-class growth from one heap dump to another.

use super::{Bar, damage, damage_json, matches, open, print_json};
use hprof_analysis::heap::histogram_as;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The earlier heap dump.
    pub a: PathBuf,
    /// The later heap dump.
    pub b: PathBuf,
    /// Only classes whose name contains PATTERN.
    #[arg(long, value_name = "PATTERN")]
    pub filter: Option<String>,
    /// Show only the first N rows (by growth in bytes).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub layout: super::LayoutArg,
    /// Object by object: the objects of the later dump that the earlier lacks, grouped by what keeps them
    /// and ranked by what they retain (instead of the per-class table).
    #[arg(long)]
    pub objects: bool,
    /// With --objects, how objects of the two dumps are matched: auto, identity (same id and class, for
    /// dumps of one JVM run) or path (same classes on the path from a GC root).
    #[arg(long = "match", value_name = "HOW", default_value = "auto", value_parser = ["auto", "identity", "path"])]
    pub match_by: String,
}

pub fn run(a: &Args) -> Result<(), String> {
    if a.objects {
        use hprof_analysis::insight::growth::Match;
        let by = match a.match_by.as_str() {
            "identity" => Match::Identity,
            "path" => Match::Path,
            _ => Match::Auto,
        };
        return super::diff_objects::run(&super::diff_objects::Args {
            a: a.a.clone(),
            b: a.b.clone(),
            layout: a.layout.clone(),
            by,
            top: a.top,
            json: a.json,
        });
    }
    let bar = Bar::new();
    let da = open(&a.a, &bar)?;
    let ha = histogram_as(&da, a.layout.layout, &bar).map_err(|e| format!("{}: {e}", a.a.display()))?;
    let db = open(&a.b, &bar)?;
    let hb = histogram_as(&db, a.layout.layout, &bar).map_err(|e| format!("{}: {e}", a.b.display()))?;
    // (instances, bytes) before and after, by class name.
    let mut rows: BTreeMap<&str, [i64; 4]> = BTreeMap::new();
    for r in &ha.rows {
        let e = rows.entry(&r.class_name).or_default();
        e[0] += r.instances as i64;
        e[1] += r.shallow_bytes as i64;
    }
    for r in &hb.rows {
        let e = rows.entry(&r.class_name).or_default();
        e[2] += r.instances as i64;
        e[3] += r.shallow_bytes as i64;
    }
    let mut rows: Vec<(&str, [i64; 4])> = rows
        .into_iter()
        .filter(|(_, v)| v[0] != v[2] || v[1] != v[3])
        .filter(|(n, _)| a.filter.as_deref().is_none_or(|p| matches(p, n)))
        .collect();
    rows.sort_by(|x, y| (y.1[3] - y.1[1]).cmp(&(x.1[3] - x.1[1])).then(x.0.cmp(y.0)));
    if let Some(n) = a.top {
        rows.truncate(n);
    }
    let dmg = [da.damage.as_ref(), ha.damage.as_ref(), db.damage.as_ref(), hb.damage.as_ref()];
    if a.json {
        print_json(&json!({
            "before": {"instances": ha.total_instances(), "shallow_bytes": ha.total_bytes()},
            "after": {"instances": hb.total_instances(), "shallow_bytes": hb.total_bytes()},
            "classes": rows.iter().map(|(n, v)| json!({
                "class": n, "instances_before": v[0], "instances_after": v[2], "instances_delta": v[2] - v[0],
                "bytes_before": v[1], "bytes_after": v[3], "bytes_delta": v[3] - v[1],
            })).collect::<Vec<_>>(),
            "damage": damage_json(&dmg),
        }))?;
    } else {
        println!("{:>12} {:>14} {:>12} {:>14}  class", "Δinstances", "Δbytes", "instances", "bytes");
        for (n, v) in &rows {
            println!("{:>+12} {:>+14} {:>12} {:>14}  {}", v[2] - v[0], v[3] - v[1], v[2], v[3], n);
        }
        println!(
            "total: {:+} instances, {:+} bytes",
            hb.total_instances() as i64 - ha.total_instances() as i64,
            hb.total_bytes() as i64 - ha.total_bytes() as i64
        );
    }
    damage(&a.a, &dmg[..2])?;
    damage(&a.b, &dmg[2..])
}
