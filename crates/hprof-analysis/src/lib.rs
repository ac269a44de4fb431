//! Heap dump and profile analysis for the `hprof` front end.
//!
//! - [`source`]: the file's bytes, memory-mapped (gzip files are decompressed to an unlinked temporary file);
//!   [`map_guard`]: a file truncated under the map is an error, not SIGBUS.
//! - [`dump`]: one sequential pass over the top-level records (names, classes, traces, samples, where the
//!   heap segments are).
//! - [`layout`]: which object layout the VM used, told from the addresses (see `docs/frontend.md`);
//!   [`field_layout`], [`injected`] and [`class_sizes`]: how big instances and class mirrors are under it.
//! - [`heap`]: heap segments cut into chunks and read in parallel: a streaming histogram, and the flat
//!   object graph (sorted ids → dense indices, class and shallow size per object, references as CSR).
//! - [`dominators`]: the dominator tree (semi-NCA) with retained sizes.
//! - [`paths`]: shortest paths from GC roots.
//! - [`insight`]: waste, class loaders, threads and object-level growth, as data for the front end.
//! - [`stacks`]: CPU samples and allocation sites as weighted stacks, for flame graphs and pprof.
//!
//! Nothing here trusts the input: every length is checked against the bytes that remain, and damage is
//! reported with the record and byte offset.

mod atomic_arrays;
pub mod class_sizes;
pub mod dominators;
pub mod dump;
pub mod field_layout;
pub mod heap;
pub mod injected;
pub mod insight;
pub mod layout;
pub mod map_guard;
pub mod paths;
pub mod source;
pub mod spill;
pub mod stacks;

pub use dump::Dump;
pub use hprof_format::binary::FormatError;

use std::fmt;

#[derive(Debug)]
pub enum Error {
    Io(String),
    /// Not an HPROF file at all (or a header that cannot be read).
    NotHprof(String),
    Format(FormatError),
    /// The file has no heap dump, or no profile data, for what was asked.
    Missing(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(m) | Error::NotHprof(m) | Error::Missing(m) => f.write_str(m),
            Error::Format(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<FormatError> for Error {
    fn from(e: FormatError) -> Error {
        Error::Format(e)
    }
}

/// Where long work reports how far it got (a progress bar on a terminal, nothing otherwise).
pub trait Progress: Sync {
    fn start(&self, _stage: &str, _total: u64) {}
    /// Absolute position.
    fn set(&self, _done: u64) {}
    /// Relative advance.
    fn inc(&self, _delta: u64) {}
    fn finish(&self) {}
}

/// No progress reporting.
pub struct Quiet;

impl Progress for Quiet {}

/// With HPROF_MEM_TRACE set, prints the resident set, its peak so far and the seconds since the first
/// trace (for finding where memory and time go).
pub fn mem_trace(at: &str) {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    if std::env::var_os("HPROF_MEM_TRACE").is_none() {
        return;
    }
    let secs = START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let get = |k: &str| {
        status.lines().find(|l| l.starts_with(k)).map(|l| l.split_whitespace().nth(1).unwrap_or("?").to_owned())
    };
    let (rss, peak) = (get("VmRSS:").unwrap_or_default(), get("VmHWM:").unwrap_or_default());
    // CPU time (user + system) so far: steadier than the wall clock on a shared machine.
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = after_name.split_whitespace().skip(11).take(2).filter_map(|t| t.parse::<u64>().ok()).sum();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let cpu = ticks as f64 / hz;
    eprintln!("mem {at}: {secs:.2} s, cpu {cpu:.2} s, rss {rss} kB, peak {peak} kB");
}
