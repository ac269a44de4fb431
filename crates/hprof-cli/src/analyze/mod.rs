//! The analysis commands. Each has `--json`; the schemas are in docs/frontend.md.

pub mod diff;
pub mod diff_objects;
pub mod dominators;
pub mod flame;
pub mod flat_text;
pub mod histo;
pub mod leaks;
pub mod loaders;
pub mod output_file;
pub mod path;
pub mod print;
pub mod profile_export;
pub mod serve;
pub mod summary;
pub mod threads;
pub mod waste;

use hprof_analysis::dominators::Unreachable;
use hprof_analysis::layout::LayoutKind;
use hprof_analysis::{Dump, FormatError, Progress};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::Mutex;

/// A progress bar on stderr when it is a terminal; nothing when output is piped or redirected.
pub struct Bar {
    bar: Mutex<Option<ProgressBar>>,
    enabled: bool,
}

impl Bar {
    pub fn new() -> Bar {
        Bar { bar: Mutex::new(None), enabled: std::io::stderr().is_terminal() }
    }
}

impl Progress for Bar {
    fn start(&self, stage: &str, total: u64) {
        if !self.enabled {
            return;
        }
        let b = ProgressBar::new(total);
        b.set_style(
            ProgressStyle::with_template("{msg:>20} [{bar:40}] {percent:>3}% {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        b.set_message(stage.to_owned());
        if let Ok(mut g) = self.bar.lock()
            && let Some(old) = g.replace(b)
        {
            old.finish_and_clear();
        }
    }

    fn set(&self, done: u64) {
        if let Ok(g) = self.bar.lock()
            && let Some(b) = g.as_ref()
        {
            b.set_position(done);
        }
    }

    fn inc(&self, delta: u64) {
        if let Ok(g) = self.bar.lock()
            && let Some(b) = g.as_ref()
        {
            b.inc(delta);
        }
    }

    fn finish(&self) {
        if let Ok(mut g) = self.bar.lock()
            && let Some(b) = g.take()
        {
            b.finish_and_clear();
        }
    }
}

/// `--layout`, on every command that sizes objects.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct LayoutArg {
    /// The object layout of the VM that wrote the dump, instead of the detected one: 32-bit,
    /// compressed-oops, compressed-class-pointers, uncompressed, compressed-oops-only, compact-headers,
    /// compact-headers-uncompressed-oops (`hprof summary` shows the detected one and how sure it is).
    #[arg(long, value_name = "LAYOUT", value_parser = parse_layout)]
    pub layout: Option<LayoutKind>,
}

fn parse_layout(s: &str) -> Result<LayoutKind, String> {
    LayoutKind::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = LayoutKind::ALL.iter().map(|k| k.name()).collect();
        format!("unknown layout '{s}'; one of: {}", names.join(", "))
    })
}

/// The options of the commands that build the dominator tree.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct GraphArgs {
    #[command(flatten)]
    pub layout: LayoutArg,
    /// Keep objects no GC root reaches in the dominator tree, under the root (by default they are left
    /// out and counted apart, as Eclipse MAT does). Retained sizes follow strong references only: the
    /// `referent` of a weak, soft, phantom or final reference retains nothing.
    #[arg(long)]
    pub keep_unreachable: bool,
}

impl GraphArgs {
    pub fn unreachable(&self) -> Unreachable {
        if self.keep_unreachable { Unreachable::Kept } else { Unreachable::LeftOut }
    }
}

/// Opens a file and tells what was skipped.
pub fn open(path: &Path, progress: &dyn Progress) -> Result<Dump, String> {
    let d = Dump::open(path, progress).map_err(|e| e.to_string())?;
    for n in &d.notes {
        eprintln!("hprof: note: {n}");
    }
    if let Some(m) = d.incomplete_message() {
        eprintln!("hprof: warning: {}: {m}", path.display());
    }
    Ok(d)
}

/// The first damage found, as the command's error (its results above were partial).
pub fn damage(path: &Path, errors: &[Option<&FormatError>]) -> Result<(), String> {
    match errors.iter().flatten().next() {
        Some(e) => Err(format!("{} is damaged: {e}; the results above cover what comes before it", path.display())),
        None => Ok(()),
    }
}

pub fn damage_json(errors: &[Option<&FormatError>]) -> serde_json::Value {
    match errors.iter().flatten().next() {
        Some(e) => serde_json::json!({"offset": e.offset, "message": e.message}),
        None => serde_json::Value::Null,
    }
}

/// A record kind's name for tables: `unknown (0x76)` for tags this reader does not know.
pub fn record_label(tag: u8) -> String {
    match hprof_format::tags::record::name(tag) {
        "unknown" => format!("unknown (0x{tag:02X})"),
        n => n.to_owned(),
    }
}

pub fn print_json(v: &serde_json::Value) -> Result<(), String> {
    let s = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    println!("{s}");
    Ok(())
}

/// An object id as the user typed it: `0x7f3a…` or plain hex digits, or decimal with `#`.
pub fn parse_id(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let r = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else if let Some(d) = t.strip_prefix('#') {
        d.parse()
    } else {
        u64::from_str_radix(t, 16)
    };
    r.map_err(|_| format!("'{s}' is not an object id (hexadecimal, e.g. 0x7f3a8c10)"))
}

/// `12.3 MiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 { format!("{bytes} B") } else { format!("{v:.1} {}", UNITS[u]) }
}

/// Case-insensitive substring match, or a `*` glob when the pattern has one.
pub fn matches(pattern: &str, name: &str) -> bool {
    let p = pattern.to_ascii_lowercase();
    let n = name.to_ascii_lowercase();
    if !p.contains('*') {
        return n.contains(&p);
    }
    let parts: Vec<&str> = p.split('*').collect();
    let mut pos = 0;
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        if i == 0 {
            if !n.starts_with(part) {
                return false;
            }
            pos = part.len();
        } else if let Some(k) = n[pos..].find(part) {
            pos += k + part.len();
        } else {
            return false;
        }
    }
    parts.last().is_none_or(|l| l.is_empty() || n.ends_with(l))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_and_ids() {
        assert!(matches("string", "java.lang.String"));
        assert!(matches("java.util.*Map", "java.util.HashMap"));
        assert!(!matches("java.util.*Map", "java.util.HashMap$Node"));
        assert!(matches("*Node", "java.util.HashMap$Node"));
        assert_eq!(parse_id("0x10").unwrap(), 16);
        assert_eq!(parse_id("ff").unwrap(), 255);
        assert_eq!(parse_id("#10").unwrap(), 10);
        assert!(parse_id("zz").is_err());
    }
}
