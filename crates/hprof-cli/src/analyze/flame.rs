//! `hprof flame` and `hprof export`: CPU samples (CPU SAMPLES + TRACE) or allocation sites (ALLOC SITES)
//! as a flame graph, collapsed stacks, a pprof profile or OTLP profiles (encoded by hprof-format).

use super::{Bar, damage, open, print_json, profile_export};
use hprof_analysis::Dump;
use hprof_analysis::stacks::{ResolvedStack, StackKind, stacks, weighted};
use hprof_format::flame::{write_collapsed, write_flamegraph};
use hprof_format::profiles::{Label, otlp, pprof};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct FlameArgs {
    /// A binary profile written with cpu=samples (or heap=sites for --alloc), or a text report with a flat
    /// profile (cpu=flat): thread, table, method.
    pub file: PathBuf,
    /// Output file: .html (a page around the SVG) or .svg.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Allocation sites (live bytes) instead of CPU samples.
    #[arg(long)]
    pub alloc: bool,
    /// Print a JSON summary of what was written.
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// gzipped profile.proto, for `go tool pprof`, Pyroscope and speedscope.
    Pprof,
    /// Brendan Gregg's folded stacks: `root;caller;callee count`.
    Collapsed,
    /// OpenTelemetry profiles: an ExportProfilesServiceRequest (protobuf, profiles v1development), the body
    /// an OTLP/HTTP collector takes on `/v1development/profiles`.
    Otlp,
    /// A heap dump or profile as Parquet tables, one file per table in the directory given by --output
    /// (objects, references, classes, roots, stacks, samples, sites, threads, dump; see docs/sql.md).
    Parquet,
}

#[derive(clap::Args)]
pub struct ExportArgs {
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// A binary profile written with cpu=samples (or heap=sites for --alloc).
    pub file: PathBuf,
    /// Output file (default: standard output); with --format parquet, the directory of the tables.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Allocation sites instead of CPU samples: for pprof and otlp, alloc_objects, alloc_space,
    /// inuse_objects and inuse_space; for collapsed, live bytes.
    #[arg(long)]
    pub alloc: bool,
    /// The service.name resource attribute of --format otlp (default: the file's name without extension).
    #[arg(long)]
    pub service: Option<String>,
    /// Print a JSON summary of what was written (needs -o).
    #[arg(long)]
    pub json: bool,
    /// With --format parquet: no string or primitive value leaves the file (String texts, boxed values,
    /// thread names are NULL).
    #[arg(long)]
    pub redact: bool,
    #[command(flatten)]
    pub graph: super::GraphArgs,
}

fn load(file: &Path, alloc: bool) -> Result<(Dump, StackKind, Vec<ResolvedStack>), String> {
    let bar = Bar::new();
    let d = open(file, &bar)?;
    let mut kind = if alloc { StackKind::AllocSites } else { StackKind::CpuSamples };
    let mut s = stacks(&d, kind);
    if s.is_empty() && !alloc {
        // A heap=sites profile has no CPU samples: draw what it has rather than refuse.
        let sites = stacks(&d, StackKind::AllocSites);
        if !sites.is_empty() {
            eprintln!("hprof: {} has no CPU SAMPLES; using its ALLOC SITES (as with --alloc)", file.display());
            kind = StackKind::AllocSites;
            s = sites;
        }
    }
    if s.is_empty() {
        let what = if alloc { "ALLOC SITES (heap=sites)" } else { "CPU SAMPLES (cpu=samples)" };
        return Err(format!("{} has no {what} records", file.display()));
    }
    Ok((d, kind, s))
}

pub fn run_flame(a: &FlameArgs) -> Result<(), String> {
    if !a.alloc
        && let Some(flat) = super::flat_text::read(&a.file)
    {
        let stacks = super::flat_text::stacks(&flat);
        write_flamegraph(&a.output, &stacks, "Flat profile", "ticks")
            .map_err(|e| format!("{}: {e}", a.output.display()))?;
        if a.json {
            let total: u64 = stacks.iter().map(|x| x.weight).sum();
            print_json(
                &json!({"output": a.output.display().to_string(), "stacks": stacks.len(), "total": total, "unit": "ticks"}),
            )?;
        }
        return Ok(());
    }
    let (d, kind, s) = load(&a.file, a.alloc)?;
    let title = if matches!(kind, StackKind::AllocSites) { "Allocation sites (live bytes)" } else { "CPU samples" };
    write_flamegraph(&a.output, &weighted(&s), title, kind.unit())
        .map_err(|e| format!("{}: {e}", a.output.display()))?;
    if a.json {
        let total: u64 = s.iter().map(|x| x.weight).sum();
        print_json(
            &json!({"output": a.output.display().to_string(), "stacks": s.len(), "total": total, "unit": kind.unit()}),
        )?;
    }
    damage(&a.file, &[d.damage.as_ref()])
}

pub fn run_export(a: &ExportArgs) -> Result<(), String> {
    if a.format == ExportFormat::Parquet {
        return run_parquet(a);
    }
    // CPU samples or allocation sites, whatever the file also holds.
    let (d, kind, s) = load(&a.file, a.alloc)?;
    let bytes = match a.format {
        ExportFormat::Collapsed => {
            let mut v = Vec::new();
            write_collapsed(&mut v, &weighted(&s)).map_err(|e| e.to_string())?;
            v
        }
        ExportFormat::Pprof => pprof::encode_gzip(&profile_export::profile(&d, kind, &s)),
        ExportFormat::Otlp => {
            let service = a.service.clone().unwrap_or_else(|| {
                a.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "hprof".to_owned())
            });
            let resource = [Label::str("service.name", &service), Label::str("process.runtime.name", "java")];
            let origin =
                otlp::Origin { resource: &resource, scope_name: "hprof-rs", scope_version: env!("CARGO_PKG_VERSION") };
            otlp::encode(&origin, &[profile_export::profile(&d, kind, &s)])
        }
        ExportFormat::Parquet => unreachable!("written by run_parquet above"),
    };
    match &a.output {
        Some(p) => {
            private_files::write_file(p, |w| w.write_all(&bytes)).map_err(|e| format!("{}: {e}", p.display()))?
        }
        None => std::io::stdout().write_all(&bytes).map_err(|e| e.to_string())?,
    }
    if a.json && a.output.is_some() {
        print_json(
            &json!({"format": format!("{:?}", a.format).to_lowercase(), "stacks": s.len(), "bytes": bytes.len()}),
        )?;
    }
    damage(&a.file, &[d.damage.as_ref()])
}

fn run_parquet(a: &ExportArgs) -> Result<(), String> {
    let dir = a.output.as_ref().ok_or("--format parquet needs --output DIR (the directory of the tables)")?;
    let done = crate::tables::export(&a.file, dir, a.redact, &a.graph, &Bar::new())?;
    if a.json {
        let tables: serde_json::Map<String, serde_json::Value> =
            done.rows.iter().map(|(t, n)| (t.to_string(), json!(n))).collect();
        print_json(
            &json!({"format": "parquet", "output": dir.display().to_string(), "redacted": a.redact, "tables": tables}),
        )?;
    } else {
        for (t, n) in &done.rows {
            println!("{:>12}  {}", n, dir.join(format!("{t}.parquet")).display());
        }
    }
    done.damage
}
