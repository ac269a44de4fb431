//! `hprof flame` and `hprof export`: CPU samples (CPU SAMPLES + TRACE), allocation sites (ALLOC SITES) or
//! lock times (hprof-rs's MONITOR TIMES) as a flame graph, collapsed stacks, a pprof profile or OTLP profiles (encoded by hprof-format).

use super::{Bar, damage, open, print_json, profile_export};
use hprof_analysis::Dump;
use hprof_analysis::stacks::{ResolvedStack, StackKind, cpu_stacks_between, stacks, weighted};
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
    #[arg(long, conflicts_with = "lock")]
    pub alloc: bool,
    /// Lock times (nanoseconds) instead of CPU samples: blocked entering monitors (leaf `[lock:CLASS]`)
    /// and in Object.wait (`[wait:CLASS]`), from a binary profile written with monitor=y.
    #[arg(long)]
    pub lock: bool,
    /// Only the samples taken from this time on (`12s`, `500ms`, `2m`; since the profiled session started).
    /// Needs a binary profile written by hprof-rs (its SAMPLE TIMES records).
    #[arg(long, value_name = "TIME", value_parser = crate::time_arg::parse_time_ms)]
    pub from: Option<u64>,
    /// Only the samples taken before this time.
    #[arg(long, value_name = "TIME", value_parser = crate::time_arg::parse_time_ms)]
    pub to: Option<u64>,
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
    #[arg(long, conflicts_with = "lock")]
    pub alloc: bool,
    /// Lock times instead of CPU samples (monitor=y): for pprof and otlp, contentions/count and
    /// delay/nanoseconds per stack under `[lock:CLASS]` (blocked entering) or `[wait:CLASS]` (Object.wait);
    /// for collapsed, nanoseconds.
    #[arg(long)]
    pub lock: bool,
    /// Only the samples taken from this time on (`12s`, `500ms`, `2m`; since the profiled session started).
    /// Needs a binary profile written by hprof-rs (its SAMPLE TIMES records).
    #[arg(long, value_name = "TIME", value_parser = crate::time_arg::parse_time_ms)]
    pub from: Option<u64>,
    /// Only the samples taken before this time.
    #[arg(long, value_name = "TIME", value_parser = crate::time_arg::parse_time_ms)]
    pub to: Option<u64>,
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

/// The profile `--alloc` / `--lock` ask for (CPU samples without either).
fn chosen(alloc: bool, lock: bool) -> StackKind {
    match (alloc, lock) {
        (true, _) => StackKind::AllocSites,
        (_, true) => StackKind::Locks,
        _ => StackKind::CpuSamples,
    }
}

/// `--from`/`--to` as a range of ms since the session started, if either was given.
fn time_range(from: Option<u64>, to: Option<u64>, kind: StackKind) -> Result<Option<(u64, u64)>, String> {
    if from.is_none() && to.is_none() {
        return Ok(None);
    }
    match kind {
        StackKind::AllocSites => {
            return Err("--from/--to select CPU samples by time; allocation sites have no times".into());
        }
        StackKind::Locks => return Err("--from/--to select CPU samples by time; lock times have no times".into()),
        StackKind::CpuSamples => {}
    }
    let (from, to) = (from.unwrap_or(0), to.unwrap_or(u64::MAX));
    if from >= to {
        return Err(format!("--from ({from} ms) must come before --to ({to} ms)"));
    }
    Ok(Some((from, to)))
}

fn load(
    file: &Path,
    asked: StackKind,
    range: Option<(u64, u64)>,
) -> Result<(Dump, StackKind, Vec<ResolvedStack>), String> {
    let bar = Bar::new();
    let d = open(file, &bar)?;
    if let Some((from, to)) = range {
        let s = cpu_stacks_between(&d, from, to).ok_or_else(|| {
            format!(
                "{} has no sample times (SAMPLE TIMES records): --from/--to need a binary profile written by \
                 hprof-rs with cpu=samples or cpu=wall and format=b",
                file.display()
            )
        })?;
        if s.is_empty() {
            return Err(format!("{} has no samples from {from} ms to {to} ms", file.display()));
        }
        return Ok((d, StackKind::CpuSamples, s));
    }
    let mut kind = asked;
    let mut s = stacks(&d, kind);
    if s.is_empty() && asked == StackKind::CpuSamples {
        // A heap=sites or monitor=y profile has no CPU samples: draw what it has rather than refuse.
        for (other, what) in [
            (StackKind::AllocSites, "ALLOC SITES (as with --alloc)"),
            (StackKind::Locks, "MONITOR TIMES (as with --lock)"),
        ] {
            let found = stacks(&d, other);
            if !found.is_empty() {
                eprintln!("hprof: {} has no CPU SAMPLES; using its {what}", file.display());
                kind = other;
                s = found;
                break;
            }
        }
    }
    if s.is_empty() {
        let what = match asked {
            StackKind::AllocSites => "ALLOC SITES (heap=sites)",
            StackKind::Locks => "MONITOR TIMES (monitor=y and format=b, written by hprof-rs)",
            StackKind::CpuSamples => "CPU SAMPLES (cpu=samples)",
        };
        return Err(format!("{} has no {what} records", file.display()));
    }
    Ok((d, kind, s))
}

/// Whether a stack is cpu=wall's: its root frame is a thread state (`[sleeping]`, …).
fn is_wall_clock(stack: &ResolvedStack) -> bool {
    const STATES: [&str; 7] =
        ["[running]", "[in_native]", "[sleeping]", "[blocked_on_monitor]", "[waiting]", "[parked]", "[other]"];
    stack.frames.first().is_some_and(|f| f.is_pseudo() && STATES.contains(&f.method_name.as_str()))
}

pub fn run_flame(a: &FlameArgs) -> Result<(), String> {
    let asked = chosen(a.alloc, a.lock);
    let range = time_range(a.from, a.to, asked)?;
    if asked == StackKind::CpuSamples
        && range.is_none()
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
    let (d, kind, s) = load(&a.file, asked, range)?;
    let title = if matches!(kind, StackKind::AllocSites) {
        "Allocation sites (live bytes)"
    } else if matches!(kind, StackKind::Locks) {
        "Locks: time blocked entering monitors [lock:…] and in Object.wait [wait:…]"
    } else if s.iter().any(is_wall_clock) {
        "Wall clock (cpu=wall)"
    } else {
        "CPU samples"
    };
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
    let asked = chosen(a.alloc, a.lock);
    let (d, kind, s) = load(&a.file, asked, time_range(a.from, a.to, asked)?)?;
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
