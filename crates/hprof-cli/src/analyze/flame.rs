//! `hprof flame` and `hprof export`: CPU samples (CPU SAMPLES + TRACE) or allocation sites (ALLOC SITES)
//! as a flame graph, collapsed stacks, or a pprof profile.

use super::{Bar, damage, open, print_json};
use hprof_analysis::Dump;
use hprof_analysis::stacks::{ResolvedStack, StackKind, stacks, weighted};
use hprof_format::flame::{write_collapsed, write_flamegraph};
use hprof_format::model::LineNumber;
use serde_json::json;
use std::collections::HashMap;
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
}

#[derive(clap::Args)]
pub struct ExportArgs {
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// A binary profile written with cpu=samples (or heap=sites for --alloc).
    pub file: PathBuf,
    /// Output file (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Allocation sites (live bytes) instead of CPU samples.
    #[arg(long)]
    pub alloc: bool,
    /// Print a JSON summary of what was written (needs -o).
    #[arg(long)]
    pub json: bool,
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
    let (d, kind, s) = load(&a.file, a.alloc)?;
    let bytes = match a.format {
        ExportFormat::Collapsed => {
            let mut v = Vec::new();
            write_collapsed(&mut v, &weighted(&s)).map_err(|e| e.to_string())?;
            v
        }
        ExportFormat::Pprof => {
            let raw = pprof(&s, kind, d.header.timestamp_ms);
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(&raw).map_err(|e| e.to_string())?;
            gz.finish().map_err(|e| e.to_string())?
        }
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

/// Protocol buffer writing, just what profile.proto needs.
struct Pb(Vec<u8>);

impl Pb {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }
    fn key(&mut self, field: u32, wire: u32) {
        self.varint(((field << 3) | wire) as u64);
    }
    fn uint(&mut self, field: u32, v: u64) {
        if v != 0 {
            self.key(field, 0);
            self.varint(v);
        }
    }
    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.key(field, 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn packed(&mut self, field: u32, vs: &[u64]) {
        let mut p = Pb(Vec::new());
        for &v in vs {
            p.varint(v);
        }
        self.bytes(field, &p.0);
    }
}

/// A perftools.profiles.Profile (profile.proto), uncompressed.
pub fn pprof(stacks: &[ResolvedStack], kind: StackKind, time_ms: u64) -> Vec<u8> {
    let mut strings: Vec<String> = vec![String::new()];
    let mut string_ids: HashMap<String, u64> = HashMap::new();
    let mut intern = |s: &str| -> u64 {
        if s.is_empty() {
            return 0;
        }
        if let Some(&i) = string_ids.get(s) {
            return i;
        }
        strings.push(s.to_owned());
        string_ids.insert(s.to_owned(), (strings.len() - 1) as u64);
        (strings.len() - 1) as u64
    };
    let mut p = Pb(Vec::new());
    let (ty, unit) = match kind {
        StackKind::CpuSamples => ("samples", "count"),
        StackKind::AllocSites => ("live_space", "bytes"),
    };
    let mut vt = Pb(Vec::new());
    vt.uint(1, intern(ty));
    vt.uint(2, intern(unit));
    let sample_type = vt.0;
    p.bytes(1, &sample_type);
    // Functions and locations, one per distinct (function, line).
    let mut functions: HashMap<(String, String), u64> = HashMap::new();
    let mut locations: HashMap<(u64, i64), u64> = HashMap::new();
    let mut fn_msgs = Vec::new();
    let mut loc_msgs = Vec::new();
    for s in stacks {
        let mut ids = Vec::new();
        // pprof wants the leaf first.
        for f in s.frames.iter().rev() {
            let name = f.qualified_method();
            let file = f.source_file.clone().unwrap_or_default();
            let next = functions.len() as u64 + 1;
            let fid = *functions.entry((name.clone(), file.clone())).or_insert_with(|| {
                let mut m = Pb(Vec::new());
                m.uint(1, next);
                m.uint(2, intern(&name));
                m.uint(3, intern(&format!("{}{}", name, f.method_signature)));
                m.uint(4, intern(&file));
                fn_msgs.push(m.0);
                next
            });
            let line = match f.line {
                LineNumber::Line(n) => n as i64,
                _ => 0,
            };
            let next = locations.len() as u64 + 1;
            let lid = *locations.entry((fid, line)).or_insert_with(|| {
                let mut l = Pb(Vec::new());
                l.uint(1, fid);
                l.uint(2, line as u64);
                let mut m = Pb(Vec::new());
                m.uint(1, next);
                m.bytes(4, &l.0);
                loc_msgs.push(m.0);
                next
            });
            ids.push(lid);
        }
        let mut sm = Pb(Vec::new());
        sm.packed(1, &ids);
        sm.packed(2, &[s.weight]);
        p.bytes(2, &sm.0);
    }
    for m in &loc_msgs {
        p.bytes(4, m);
    }
    for m in &fn_msgs {
        p.bytes(5, m);
    }
    for s in &strings {
        p.bytes(6, s.as_bytes());
    }
    p.uint(9, time_ms.saturating_mul(1_000_000));
    p.0
}
