//! `hprof export --format parquet`: a heap dump or profile as Parquet tables in a directory, one file per
//! table (the schema is in docs/sql.md). Each table is streamed out in row groups; what is held in memory
//! is the analysis itself (the graph and dominator tree), not the tables.

pub mod heap;
pub mod profile;
pub mod refs;
pub mod values;
pub mod writer;

use crate::analyze::dominators::Analysed;
use crate::analyze::{GraphArgs, open};
use hprof_analysis::Progress;
use std::fs::DirBuilder;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use writer::{Cell, TableWriter, Ty};

pub const DUMP: &[(&str, Ty, bool)] = &[
    ("file", Ty::Str, false),
    ("format", Ty::Str, false),
    ("id_size", Ty::Int, false),
    ("timestamp_ms", Ty::Int, false),
    ("has_heap", Ty::Bool, false),
    ("layout", Ty::Str, true),
    ("redacted", Ty::Bool, false),
];

/// What an export wrote: rows per table.
pub struct Exported {
    pub rows: Vec<(&'static str, u64)>,
    pub damage: Result<(), String>,
}

/// Opens `dir` as an export's directory: created 0700 (with any missing parents) when missing; an existing one must be a directory
/// (a symlink is refused, not followed).
pub fn prepare_dir(dir: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_dir() => Ok(()),
        Ok(_) => Err(format!("{} exists and is not a directory (a symlink is not followed)", dir.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display())),
        Err(e) => Err(format!("{}: {e}", dir.display())),
    }
}

pub fn export(
    file: &Path,
    dir: &Path,
    redact: bool,
    graph: &GraphArgs,
    bar: &dyn Progress,
) -> Result<Exported, String> {
    prepare_dir(dir)?;
    let dump = open(file, bar)?;
    let mut rows = Vec::new();
    let has_heap = dump.heap_dump().is_some();
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (format, id_size, timestamp) = (dump.header.version.clone(), dump.id_size(), dump.header.timestamp_ms);
    let [stacks, samples, sites, threads] = profile::write_profile(&dump, dir, redact)?;
    rows.extend([("stacks", stacks), ("samples", samples), ("sites", sites), ("threads", threads)]);
    rows.push(("monitor_time", profile::write_monitor_time(&dump, dir)?));
    let mut layout = None;
    let damage;
    if has_heap {
        let an = Analysed::of_dump(dump, true, true, graph, bar)?;
        layout = Some(an.graph.layout_choice.describe());
        rows.push(("objects", heap::write_objects(&an, dir, redact)?));
        rows.push(("classes", heap::write_classes(&an, dir)?));
        let (r, roots) = refs::write_references_and_roots(&an.dump, &an.graph, dir)?;
        rows.extend([("references", r), ("roots", roots)]);
        damage = an.damage(file);
    } else {
        for (name, columns) in [
            ("objects", heap::OBJECTS),
            ("classes", heap::CLASSES),
            ("references", refs::REFERENCES),
            ("roots", refs::ROOTS),
        ] {
            rows.push((name, TableWriter::create(dir, name, columns)?.close()?));
        }
        damage = super::analyze::damage(file, &[dump.damage.as_ref()]);
    }
    let mut w = TableWriter::create(dir, "dump", DUMP)?;
    w.row(&[
        Cell::S(Some(&name)),
        Cell::S(Some(&format)),
        Cell::I(Some(id_size as i64)),
        Cell::I(Some(timestamp as i64)),
        Cell::B(Some(has_heap)),
        Cell::S(layout.as_deref()),
        Cell::B(Some(redact)),
    ])?;
    rows.insert(0, ("dump", w.close()?));
    Ok(Exported { rows, damage })
}
