//! The option string of `-agentlib:hprof=…` / `-Xrunhprof:…`, with HPROF's names, values and defaults.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Binary,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuMode {
    Samples,
    /// -Xprof's flat profile: interpreted, compiled, stub and native ticks per thread.
    Flat,
    Times,
    Old,
}

/// How `cpu=samples` takes its samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplerKind {
    /// CPU-time timers and AsyncGetCallTrace: samples only threads that run, at any instruction.
    Async,
    /// HPROF's way: stacks of all RUNNABLE threads at a safepoint, every interval.
    Safepoint,
    /// `cpu=wall`: every live thread, running or not, every interval, with its state as the root frame.
    Wall,
}

/// The default interval of `cpu=wall` (every thread is sampled, so a tick costs more than a CPU sample).
pub const WALL_INTERVAL_MS: u32 = 50;

/// The CPU clock that paces `sampler=async`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuClock {
    /// A perf task clock per thread: a high-resolution timer on the thread's CPU time (exact shares).
    Perf,
    /// A POSIX CPU timer per thread: checked on scheduler ticks (cheaper, less exact when threads compete).
    Posix,
}

/// Parsed options. Field defaults are HPROF's.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub heap_dump: bool,
    pub alloc_sites: bool,
    pub cpu: Option<CpuMode>,
    /// `-Xprof` among the VM's arguments next to another `cpu=`: the flat profile as well.
    pub xprof: bool,
    pub monitor: bool,
    pub format: OutputFormat,
    /// `file=` as given; see [`Options::output_file`] for the default.
    pub file: Option<String>,
    pub net: Option<(String, u16)>,
    pub depth: u32,
    pub interval_ms: u32,
    pub cutoff: f64,
    pub lineno: bool,
    pub thread: bool,
    pub dump_on_exit: bool,
    pub force: bool,
    pub verbose: bool,
    /// `errorexit=y` (HPROF's, from its debug options): any error ends the JVM with exit code 9.
    pub error_exit: bool,
    // Beyond HPROF.
    pub sampler: SamplerKind,
    pub clock: CpuClock,
    pub collapsed: Option<String>,
    pub flamegraph: Option<String>,
    /// `cstack=`: native (and kernel) frames on top of the Java ones. `None` (not given): in flame graphs,
    /// folded stacks and uploads, not in HPROF's TRACEs; `Some(true)`: everywhere; `Some(false)`: nowhere.
    pub cstack: Option<bool>,
    /// `alloc_interval=` in bytes: sample allocations instead of counting every one.
    pub alloc_interval: Option<u32>,
    /// `alloc_probe=y`: exact heap=sites counts from probes inserted into bytecode after each allocation,
    /// instead of the JVM's SampledObjectAlloc event at interval 0.
    pub alloc_probe: bool,
    /// `duration=` in seconds: the session ends after it (reports written, sampling stopped; the JVM runs on).
    pub duration_s: Option<u32>,
    /// Continuous profiles: `otlp=`, `pyroscope=` and their settings (see docs/continuous.md).
    pub continuous: Continuous,
    /// `threads=GLOB`: sample only threads whose name matches (`*` and `?`).
    pub threads: Option<String>,
    /// `include=`/`exclude=`: keep only stacks with a frame matching one of `include`, drop stacks with a frame
    /// matching one of `exclude` (`;`-separated patterns, `*` and `?`, on `Class.method`).
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// Warnings to print once the options are accepted (obsolete or platform-specific options).
    pub warnings: Vec<String>,
}

/// `otlp=`, `pyroscope=`, `service=`, `labels=`, `upload_interval=`, `otlp_headers=`, `flush_timeout=`.
#[derive(Debug, Clone, PartialEq)]
pub struct Continuous {
    /// The OTLP/HTTP endpoint's base URL (`/v1development/profiles` is appended), or `env` for
    /// OTEL_EXPORTER_OTLP_ENDPOINT.
    pub otlp: Option<String>,
    /// The Pyroscope server's base URL (`/ingest` is appended).
    pub pyroscope: Option<String>,
    pub service: Option<String>,
    pub labels: Vec<(String, String)>,
    pub otlp_headers: Vec<(String, String)>,
    pub upload_interval_ms: u32,
    pub flush_timeout_ms: u32,
}

impl Default for Continuous {
    fn default() -> Continuous {
        Continuous {
            otlp: None,
            pyroscope: None,
            service: None,
            labels: Vec::new(),
            otlp_headers: Vec::new(),
            upload_interval_ms: 10_000,
            flush_timeout_ms: 5_000,
        }
    }
}

impl Continuous {
    pub fn enabled(&self) -> bool {
        self.otlp.is_some() || self.pyroscope.is_some()
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            heap_dump: false,
            alloc_sites: false,
            cpu: None,
            xprof: false,
            monitor: false,
            format: OutputFormat::Text,
            file: None,
            net: None,
            depth: 4,
            interval_ms: 10,
            cutoff: 0.0001,
            lineno: true,
            thread: false,
            dump_on_exit: true,
            force: true,
            verbose: true,
            error_exit: false,
            sampler: SamplerKind::Async,
            clock: CpuClock::Perf,
            collapsed: None,
            flamegraph: None,
            cstack: None,
            alloc_interval: None,
            alloc_probe: false,
            duration_s: None,
            continuous: Continuous::default(),
            threads: None,
            include: Vec::new(),
            exclude: Vec::new(),
            warnings: Vec::new(),
        }
    }
}

/// What the option string asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    Run(Box<Options>),
    Help,
}

/// A rejected option: one line that names it and says what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError(pub String);

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The largest depth the binary format can carry (CONTROL SETTINGS holds it in a u2).
pub const MAX_DEPTH: u32 = 65_535;

impl Options {
    /// Parses `heap=sites,depth=8,…`. `help` anywhere wins.
    pub fn parse(input: Option<&str>) -> Result<Parsed, OptionError> {
        Options::parse_for_vm(input, &[])
    }

    /// Parses the option string of a JVM whose own input arguments are `vm_args`: `-Xprof` among them (which
    /// JDK 10+ ignores with a warning but keeps) asks for the flat profile, as `cpu=flat` does.
    pub fn parse_for_vm(input: Option<&str>, vm_args: &[String]) -> Result<Parsed, OptionError> {
        let mut o = Options::default();
        let mut heap_given = false;
        let mut format_given = false;
        let mut interval_given = false;
        let mut sampler_given = false;
        let mut alloc_probe_given = false;
        let input = input.unwrap_or("").trim();
        for item in input.split(',').filter(|s| !s.is_empty()) {
            let (name, value) = match item.split_once('=') {
                Some((n, v)) => (n.trim(), Some(v.trim())),
                None => (item.trim(), None),
            };
            if name == "help" {
                return Ok(Parsed::Help);
            }
            let Some(value) = value else {
                return Err(OptionError(format!(
                    "option '{name}' needs a value ({name}=...); run with hprof=help for the list of options"
                )));
            };
            match name {
                "heap" => {
                    heap_given = true;
                    let (dump, sites) = match value {
                        "dump" => (true, false),
                        "sites" => (false, true),
                        "all" => (true, true),
                        _ => return Err(bad(name, value, "dump, sites or all")),
                    };
                    o.heap_dump |= dump;
                    o.alloc_sites |= sites;
                }
                "cpu" => {
                    o.cpu = Some(match value {
                        "samples" => CpuMode::Samples,
                        "wall" => {
                            o.sampler = SamplerKind::Wall;
                            CpuMode::Samples
                        }
                        "flat" => CpuMode::Flat,
                        "times" => CpuMode::Times,
                        "old" => CpuMode::Old,
                        _ => return Err(bad(name, value, "samples, wall, flat, times or old")),
                    })
                }
                "monitor" => o.monitor = yes_no(name, value)?,
                "format" => {
                    format_given = true;
                    o.format = match value {
                        "a" => OutputFormat::Text,
                        "b" => OutputFormat::Binary,
                        _ => return Err(bad(name, value, "a (text) or b (binary)")),
                    }
                }
                "file" => {
                    if value.is_empty() {
                        return Err(bad(name, value, "a file name"));
                    }
                    o.file = Some(value.to_owned());
                }
                "net" => o.net = Some(parse_net(value)?),
                "depth" => o.depth = number(name, value, 0, MAX_DEPTH)?,
                "interval" => {
                    interval_given = true;
                    o.interval_ms = number(name, value, 1, 3_600_000)?
                }
                "cutoff" => o.cutoff = ratio(name, value)?,
                "lineno" => o.lineno = yes_no(name, value)?,
                "thread" => o.thread = yes_no(name, value)?,
                "doe" => o.dump_on_exit = yes_no(name, value)?,
                "force" => o.force = yes_no(name, value)?,
                "verbose" => o.verbose = yes_no(name, value)?,
                "errorexit" => o.error_exit = yes_no(name, value)?,
                "msa" => {
                    if yes_no(name, value)? {
                        o.warnings.push("msa=y (micro state accounting) exists only on Solaris; ignored".into());
                    }
                }
                "gc_okay" => {
                    yes_no(name, value)?;
                    o.warnings.push("gc_okay is obsolete and has no effect".into());
                }
                "sampler" => {
                    sampler_given = true;
                    o.sampler = match value {
                        "async" => SamplerKind::Async,
                        "safepoint" => SamplerKind::Safepoint,
                        "wall" => SamplerKind::Wall,
                        _ => return Err(bad(name, value, "async, safepoint or wall")),
                    }
                }
                "threads" => o.threads = Some(non_empty_glob(name, value)?),
                "include" => o.include = patterns(name, value)?,
                "exclude" => o.exclude = patterns(name, value)?,
                "clock" => {
                    o.clock = match value {
                        "perf" => CpuClock::Perf,
                        "posix" => CpuClock::Posix,
                        _ => return Err(bad(name, value, "perf or posix")),
                    }
                }
                "collapsed" => o.collapsed = Some(non_empty(name, value)?),
                "cstack" => o.cstack = Some(yes_no(name, value)?),
                "flamegraph" => {
                    let f = non_empty(name, value)?;
                    if !(f.ends_with(".html") || f.ends_with(".svg")) {
                        return Err(bad(name, value, "a file name ending in .html or .svg"));
                    }
                    o.flamegraph = Some(f);
                }
                "alloc_interval" => o.alloc_interval = Some(byte_size(name, value)?),
                "alloc_probe" => {
                    alloc_probe_given = true;
                    o.alloc_probe = yes_no(name, value)?;
                }
                "duration" => o.duration_s = Some(number(name, value, 1, 31_536_000)?),
                "otlp" => o.continuous.otlp = Some(if value == "env" { value.to_owned() } else { url(name, value)? }),
                "pyroscope" => o.continuous.pyroscope = Some(url(name, value)?),
                "service" => o.continuous.service = Some(non_empty(name, value)?),
                "labels" => o.continuous.labels = pairs(name, value)?,
                "otlp_headers" => o.continuous.otlp_headers = pairs(name, value)?,
                "upload_interval" => o.continuous.upload_interval_ms = millis(name, value, 1_000, 3_600_000)?,
                "flush_timeout" => o.continuous.flush_timeout_ms = millis(name, value, 0, 600_000)?,
                _ => {
                    return Err(OptionError(format!(
                        "unknown option '{name}' (in '{item}'); run with hprof=help for the list of options"
                    )));
                }
            }
        }
        if vm_args.iter().any(|a| a == "-Xprof") {
            match o.cpu {
                None => o.cpu = Some(CpuMode::Flat),
                Some(CpuMode::Flat) => {}
                Some(_) => o.xprof = true,
            }
        }
        if o.net.is_some() {
            if o.monitor {
                return Err(OptionError(
                    "option monitor=y cannot be used with net= (the socket carries the binary format, which has no \
                     monitor records); use file= with format=a"
                        .into(),
                ));
            }
            if format_given && o.format == OutputFormat::Text {
                o.warnings.push("net= always streams the binary format; format=a is ignored".into());
            }
            o.format = OutputFormat::Binary;
        }
        if sampler_given && o.sampler != SamplerKind::Wall && input.split(',').any(|i| i.trim() == "cpu=wall") {
            return Err(OptionError("option cpu=wall cannot be used with sampler=async or sampler=safepoint".into()));
        }
        if o.sampler == SamplerKind::Wall && !interval_given {
            o.interval_ms = WALL_INTERVAL_MS;
        }
        if !heap_given && o.cpu.is_none() && !o.monitor {
            o.heap_dump = true;
            o.alloc_sites = true;
        }
        if !alloc_probe_given && o.alloc_sites && o.alloc_interval.is_none() {
            o.alloc_probe = default_alloc_probe();
        }
        o.check_combinations()?;
        Ok(Parsed::Run(Box::new(o)))
    }

    fn check_combinations(&self) -> Result<(), OptionError> {
        if self.format == OutputFormat::Binary
            && let Some(m @ (CpuMode::Times | CpuMode::Old)) = self.cpu
        {
            let name = if m == CpuMode::Times { "times" } else { "old" };
            return Err(OptionError(format!(
                "option format=b cannot be used with cpu={name} (the binary format has no records for it); \
                 use format=a or cpu=samples"
            )));
        }
        if self.format == OutputFormat::Binary && self.net.is_none() && self.flat_profile() {
            return Err(OptionError(
                "option format=b cannot be used with cpu=flat or -Xprof (the flat profile is text only); use \
                 format=a"
                    .into(),
            ));
        }
        if (self.collapsed.is_some() || self.flamegraph.is_some())
            && matches!(self.cpu, None | Some(CpuMode::Flat))
            && !self.monitor
        {
            return Err(OptionError(
                "options collapsed= and flamegraph= need cpu=samples or monitor=y to have stacks to draw".into(),
            ));
        }
        if self.continuous.enabled() && self.cpu != Some(CpuMode::Samples) && !self.alloc_sites && !self.monitor {
            return Err(OptionError(
                "options otlp= and pyroscope= need cpu=samples, heap=sites or monitor=y (the profiles they upload)"
                    .into(),
            ));
        }
        if !self.continuous.enabled()
            && (self.continuous.service.is_some()
                || !self.continuous.labels.is_empty()
                || !self.continuous.otlp_headers.is_empty())
        {
            return Err(OptionError("options service=, labels= and otlp_headers= need otlp= or pyroscope=".into()));
        }
        if (self.threads.is_some() || !self.include.is_empty() || !self.exclude.is_empty())
            && self.cpu != Some(CpuMode::Samples)
        {
            return Err(OptionError("options threads=, include= and exclude= need cpu=samples or cpu=wall".into()));
        }
        if self.alloc_interval.is_some() && !self.alloc_sites {
            return Err(OptionError("option alloc_interval= needs heap=sites or heap=all".into()));
        }
        if self.alloc_probe && (!self.alloc_sites || self.alloc_interval.is_some()) {
            return Err(OptionError(
                "option alloc_probe=y needs heap=sites or heap=all without alloc_interval=".into(),
            ));
        }
        if self.cstack == Some(true) && self.sampler == SamplerKind::Wall {
            // Native frames are unwound in the SIGPROF handler of a CPU sample; a wall sample is a stack the
            // JVM hands out for a thread that may be asleep, and holds Java frames only.
            return Err(OptionError(
                "option cstack=y does not go with cpu=wall: wall samples are the JVM's own stack traces of every \
                 thread, which hold no native frames (time in native code shows as [in_native] under the Java \
                 native method); native frames come with CPU samples: cpu=samples,cstack=y"
                    .into(),
            ));
        }
        if self.cstack == Some(true) && (self.cpu != Some(CpuMode::Samples) || self.sampler != SamplerKind::Async) {
            return Err(OptionError(
                "option cstack=y needs cpu=samples with sampler=async (native frames are unwound from its signal)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Whether samples carry native frames: `cstack=y`, or by default where whole stacks are written
    /// (flame graphs, folded stacks, uploads) — never with `cstack=n` or without sampler=async.
    pub fn native_frames(&self) -> bool {
        let whole_stacks = self.collapsed.is_some() || self.flamegraph.is_some() || self.continuous.enabled();
        self.cpu == Some(CpuMode::Samples)
            && self.sampler == SamplerKind::Async
            && match self.cstack {
                Some(on) => on,
                None => whole_stacks,
            }
    }

    /// Whether HPROF's TRACEs (CPU SAMPLES) hold the native frames too: only when `cstack=y` was given.
    pub fn native_frames_in_traces(&self) -> bool {
        self.cstack == Some(true) && self.native_frames()
    }

    /// Whether the flat profile runs (`cpu=flat`, or `-Xprof` next to another `cpu=`).
    pub fn flat_profile(&self) -> bool {
        self.cpu == Some(CpuMode::Flat) || self.xprof
    }

    /// The output file: `file=` or HPROF's default, `java.hprof.txt` (text) / `java.hprof` (binary).
    pub fn output_file(&self) -> String {
        match &self.file {
            Some(f) => f.clone(),
            None if self.format == OutputFormat::Binary => "java.hprof".into(),
            None => "java.hprof.txt".into(),
        }
    }

    /// Whether the binary file announces heap-dump segments (1.0.2).
    pub fn uses_heap_dump_segments(&self) -> bool {
        self.heap_dump
    }
}

fn bad(name: &str, value: &str, allowed: &str) -> OptionError {
    OptionError(format!("option {name}={value} is not valid: {name} must be {allowed}"))
}

fn yes_no(name: &str, value: &str) -> Result<bool, OptionError> {
    match value {
        "y" => Ok(true),
        "n" => Ok(false),
        _ => Err(bad(name, value, "y or n")),
    }
}

fn non_empty(name: &str, value: &str) -> Result<String, OptionError> {
    if value.is_empty() { Err(bad(name, value, "a file name")) } else { Ok(value.to_owned()) }
}

fn non_empty_glob(name: &str, value: &str) -> Result<String, OptionError> {
    if value.is_empty() {
        Err(bad(name, value, "a thread name pattern such as worker-*"))
    } else {
        Ok(value.to_owned())
    }
}

/// `java.util.*;*Parser.parse`: frame patterns, `;`-separated (`,` separates options).
fn patterns(name: &str, value: &str) -> Result<Vec<String>, OptionError> {
    let list: Vec<String> = value.split(';').map(str::trim).filter(|p| !p.is_empty()).map(str::to_owned).collect();
    if list.is_empty() {
        return Err(bad(name, value, "one or more frame patterns separated by ';', such as java.io.*;*.read"));
    }
    Ok(list)
}

fn number(name: &str, value: &str, min: u32, max: u32) -> Result<u32, OptionError> {
    let allowed = format!("a whole number from {min} to {max}");
    if !value.bytes().all(|b| b.is_ascii_digit()) || value.is_empty() {
        return Err(bad(name, value, &allowed));
    }
    match value.parse::<u64>() {
        Ok(n) if n >= min as u64 && n <= max as u64 => Ok(n as u32),
        _ => Err(bad(name, value, &allowed)),
    }
}

fn ratio(name: &str, value: &str) -> Result<f64, OptionError> {
    match value.parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(bad(name, value, "a number from 0 to 1, e.g. 0.0001")),
    }
}

/// `512k`, `4m`, `1048576`: a positive byte count that fits the JVM's int interval.
fn byte_size(name: &str, value: &str) -> Result<u32, OptionError> {
    let allowed = "a positive byte count such as 512k, 4m or 1048576 (at most 2g-1)";
    let lower = value.to_ascii_lowercase();
    let (digits, mult) = match lower.as_bytes().last() {
        Some(b'k') => (&lower[..lower.len() - 1], 1u64 << 10),
        Some(b'm') => (&lower[..lower.len() - 1], 1u64 << 20),
        Some(b'g') => (&lower[..lower.len() - 1], 1u64 << 30),
        _ => (lower.as_str(), 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(name, value, allowed));
    }
    match digits.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)) {
        Some(n) if n > 0 && n <= i32::MAX as u64 => Ok(n as u32),
        _ => Err(bad(name, value, allowed)),
    }
}

/// `http://host[:port][/path]` or `https://…`: the base URL of a backend.
fn url(name: &str, value: &str) -> Result<String, OptionError> {
    let allowed = "an http:// or https:// URL such as http://collector:4318";
    let rest = value.strip_prefix("http://").or_else(|| value.strip_prefix("https://"));
    let Some(rest) = rest else { return Err(bad(name, value, allowed)) };
    let authority = rest.split('/').next().unwrap_or("");
    let host = match authority.rsplit_once(':') {
        Some((h, port)) if !h.ends_with(']') || authority.starts_with('[') => {
            if !port.is_empty() && port.parse::<u16>().is_err() && !h.contains(']') {
                return Err(bad(name, value, allowed));
            }
            h
        }
        _ => authority,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() || host.contains(['?', '#', ' ', '@']) || value.contains(['?', '#', ' ']) {
        return Err(bad(name, value, allowed));
    }
    Ok(value.trim_end_matches('/').to_owned())
}

/// `k:v;k:v` (labels=, otlp_headers=): keys and values without `;`, keys without `:`.
fn pairs(name: &str, value: &str) -> Result<Vec<(String, String)>, OptionError> {
    let allowed = "key:value pairs separated by ';', e.g. env:prod;team:db";
    value
        .split(';')
        .filter(|p| !p.trim().is_empty())
        .map(|p| match p.split_once(':') {
            Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_owned(), v.trim().to_owned())),
            _ => Err(bad(name, value, allowed)),
        })
        .collect()
}

/// `10s`, `500ms`, `1m`, or a plain number of seconds, from `min` to `max` milliseconds.
fn millis(name: &str, value: &str, min: u32, max: u32) -> Result<u32, OptionError> {
    let allowed = format!("a duration such as 10s, 500ms or 1m, from {min} ms to {} s", max / 1000);
    let (digits, mult) = if let Some(d) = value.strip_suffix("ms") {
        (d, 1u64)
    } else if let Some(d) = value.strip_suffix('s') {
        (d, 1000)
    } else if let Some(d) = value.strip_suffix('m') {
        (d, 60_000)
    } else {
        (value, 1000)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(name, value, &allowed));
    }
    match digits.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)) {
        Some(n) if n >= min as u64 && n <= max as u64 => Ok(n as u32),
        _ => Err(bad(name, value, &allowed)),
    }
}

/// heap=sites' way of counting when `alloc_probe=` is not given: `HPROF_ALLOC_PROBE=y|n` decides (so that
/// the test suite and the benchmarks can run either way unchanged), else the JVM's event.
fn default_alloc_probe() -> bool {
    matches!(std::env::var("HPROF_ALLOC_PROBE").as_deref(), Ok("y" | "1"))
}

fn parse_net(value: &str) -> Result<(String, u16), OptionError> {
    let allowed = "<host>:<port>, e.g. localhost:9000";
    let (host, port) = value.rsplit_once(':').ok_or_else(|| bad("net", value, allowed))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(bad("net", value, allowed));
    }
    match port.parse::<u16>() {
        Ok(p) if p > 0 => Ok((host.to_owned(), p)),
        _ => Err(bad("net", value, allowed)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(s: &str) -> Options {
        match Options::parse(Some(s)).unwrap() {
            Parsed::Run(o) => *o,
            Parsed::Help => panic!("help"),
        }
    }

    fn err(s: &str) -> String {
        Options::parse(Some(s)).unwrap_err().0
    }

    #[test]
    fn defaults_are_hprofs() {
        let o = run("");
        assert!(o.heap_dump && o.alloc_sites, "heap=all when nothing else is asked");
        assert_eq!((o.depth, o.interval_ms, o.cutoff), (4, 10, 0.0001));
        assert!(o.lineno && !o.thread && o.dump_on_exit && o.force && o.verbose);
        assert_eq!(o.output_file(), "java.hprof.txt");
        let o = run("cpu=samples");
        assert!(!o.heap_dump && !o.alloc_sites);
        assert_eq!(run("format=b,heap=dump").output_file(), "java.hprof");
    }

    #[test]
    fn values() {
        let o = run("heap=sites,cpu=samples,depth=8,interval=20,cutoff=0.01,thread=y,lineno=n,file=x.txt");
        assert!(o.alloc_sites && !o.heap_dump);
        assert_eq!(o.cpu, Some(CpuMode::Samples));
        assert_eq!((o.depth, o.interval_ms, o.cutoff), (8, 20, 0.01));
        assert!(o.thread && !o.lineno);
        assert!(!o.native_frames(), "no stack files: no native frames unless cstack=y");
        let folded = run("cpu=samples,collapsed=x.txt");
        assert!(folded.native_frames() && !folded.native_frames_in_traces(), "in folded stacks, not in TRACEs");
        let cstack = run("cpu=samples,cstack=y");
        assert!(cstack.native_frames() && cstack.native_frames_in_traces());
        assert!(!run("cpu=samples,collapsed=x.txt,cstack=n").native_frames());
        assert!(Options::parse(Some("cpu=times,cstack=y")).is_err(), "cstack=y needs the async sampler");
        let Err(OptionError(wall)) = Options::parse(Some("cpu=wall,cstack=y")) else {
            panic!("cstack=y with cpu=wall must be refused")
        };
        assert!(wall.contains("cpu=wall") && wall.contains("[in_native]") && wall.contains("cpu=samples,cstack=y"));
        let wall = run("cpu=wall,cstack=n,collapsed=x.txt");
        assert!(!wall.native_frames() && !wall.native_frames_in_traces(), "wall stacks are Java frames only");
        assert!(!run("cpu=wall,flamegraph=x.html").native_frames(), "not by default either");
        assert_eq!(o.output_file(), "x.txt");
        let o = run("net=localhost:9000,heap=sites");
        assert_eq!(o.net, Some(("localhost".into(), 9000)));
        assert_eq!(o.format, OutputFormat::Binary, "net= streams binary");
        assert_eq!(run("net=h:1,format=a").warnings.len(), 1);
        assert!(err("net=h:1,monitor=y").contains("net="));
        assert_eq!(run("heap=sites,alloc_interval=512k").alloc_interval, Some(512 * 1024));
        assert_eq!((run("cpu=samples").clock, run("cpu=samples,clock=posix").clock), (CpuClock::Perf, CpuClock::Posix));
        assert_eq!(Options::parse(Some("depth=3,help")).unwrap(), Parsed::Help);
    }

    #[test]
    fn warnings_for_obsolete_and_solaris_options() {
        let o = run("gc_okay=y,msa=y");
        assert_eq!(o.warnings.len(), 2);
        assert!(o.warnings[1].contains("Solaris"));
    }

    #[test]
    fn bad_options_name_the_option() {
        assert!(err("bogus=1").contains("unknown option 'bogus'"));
        assert!(err("depth=-1").contains("depth=-1"));
        assert!(err("depth=abc").contains("whole number"));
        assert!(err("interval=0").contains("interval=0"));
        assert!(err("heap=lots").contains("dump, sites or all"));
        assert!(err("cutoff=2").contains("cutoff"));
        // monitor=y's times go into a MONITOR TIMES record of ours.
        assert!(run("format=b,monitor=y").monitor);
        assert!(err("format=b,cpu=old").contains("cpu=old"));
        assert!(err("format=b,cpu=flat").contains("cpu=flat"));
        assert!(err("cpu=times,format=b").contains("cpu=times"));
        assert!(err("net=nohost").contains("net="));
        assert!(err("net=h:0").contains("net="));
        assert!(err("thread=maybe").contains("y or n"));
        assert!(err("depth").contains("needs a value"));
        assert!(err("heap=dump,alloc_interval=0").contains("alloc_interval"));
        assert!(run("heap=sites,alloc_probe=y").alloc_probe);
        assert!(err("heap=sites,alloc_interval=1k,alloc_probe=y").contains("alloc_probe"));
        assert!(err("flamegraph=x.png,cpu=samples").contains(".html or .svg"));
        assert!(err("cpu=samples,clock=wall").contains("perf or posix"));
        assert!(err("cpu=samples,otlp=collector:4318").contains("otlp=collector:4318"));
        assert!(err("cpu=samples,pyroscope=http://").contains("pyroscope="));
        assert!(err("cpu=samples,otlp=http://h:port").contains("otlp="));
        assert!(err("cpu=times,otlp=http://h:4318").contains("need cpu=samples, heap=sites or monitor=y"));
        assert!(run("heap=sites,monitor=y,otlp=http://h:4318").continuous.enabled());
        assert!(err("cpu=samples,otlp=http://h,labels=env").contains("labels=env"));
        assert!(err("cpu=samples,otlp=http://h,upload_interval=10x").contains("upload_interval=10x"));
        assert!(err("cpu=samples,otlp=http://h,upload_interval=100ms").contains("upload_interval"));
        assert!(err("cpu=samples,service=a").contains("need otlp="));
    }

    #[test]
    fn wall_mode_samples_every_50_ms_unless_told_and_takes_filters() {
        let o = run("cpu=wall");
        assert_eq!((o.cpu, o.sampler, o.interval_ms), (Some(CpuMode::Samples), SamplerKind::Wall, 50));
        assert_eq!(run("cpu=wall,interval=20").interval_ms, 20);
        assert_eq!(run("interval=20,cpu=wall").interval_ms, 20);
        let o = run("cpu=wall,threads=worker-*,include=Work.*;*.run,exclude=java.lang.Thread.sleep*");
        assert_eq!(o.threads.as_deref(), Some("worker-*"));
        assert_eq!(o.include, ["Work.*", "*.run"]);
        assert_eq!(o.exclude, ["java.lang.Thread.sleep*"]);
        assert!(err("cpu=wall,sampler=async").contains("cpu=wall cannot be used with sampler="));
        assert!(err("heap=sites,threads=main").contains("need cpu=samples or cpu=wall"));
        assert!(err("cpu=wall,include=;").contains("include=; is not valid"));
    }

    #[test]
    fn continuous_options() {
        let o =
            run("cpu=samples,otlp=https://c.example:4318/,service=checkout,labels=env:prod;team:db,upload_interval=2s");
        let c = &o.continuous;
        assert_eq!(c.otlp.as_deref(), Some("https://c.example:4318"));
        assert_eq!(c.service.as_deref(), Some("checkout"));
        assert_eq!(c.labels, [("env".to_owned(), "prod".to_owned()), ("team".to_owned(), "db".to_owned())]);
        assert_eq!((c.upload_interval_ms, c.flush_timeout_ms), (2_000, 5_000));
        let o = run("cpu=samples,pyroscope=http://[::1]:4040,flush_timeout=500ms,otlp_headers=Authorization:Bearer x");
        assert_eq!(o.continuous.pyroscope.as_deref(), Some("http://[::1]:4040"));
        assert_eq!(o.continuous.flush_timeout_ms, 500);
        assert_eq!(o.continuous.otlp_headers[0].1, "Bearer x");
        assert_eq!(run("cpu=samples,otlp=env").continuous.otlp.as_deref(), Some("env"));
        assert!(!run("cpu=samples").continuous.enabled());
    }
}

#[cfg(test)]
mod xprof_tests {
    use super::*;

    fn with_vm(options: &str, vm_args: &[&str]) -> Options {
        let args: Vec<String> = vm_args.iter().map(|s| s.to_string()).collect();
        match Options::parse_for_vm(Some(options), &args).unwrap() {
            Parsed::Run(o) => *o,
            Parsed::Help => panic!("help"),
        }
    }

    #[test]
    fn xprof_means_cpu_flat_and_no_default_heap_profile() {
        let o = with_vm("", &["-Xint", "-Xprof"]);
        assert_eq!(o.cpu, Some(CpuMode::Flat));
        assert!(o.flat_profile() && !o.heap_dump && !o.alloc_sites);
        let o = with_vm("cpu=samples", &["-Xprof"]);
        assert_eq!(o.cpu, Some(CpuMode::Samples));
        assert!(o.xprof && o.flat_profile());
        let o = with_vm("", &["-Xprofx", "-XX:+UseG1GC"]);
        assert!(!o.flat_profile() && o.heap_dump, "only -Xprof itself counts");
        assert_eq!(with_vm("cpu=flat", &[]).cpu, Some(CpuMode::Flat));
    }
}
