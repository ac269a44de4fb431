//! The profile writer. Capabilities hand it records (threads, traces, reports); it writes them as text
//! (`format=a`) or binary (`format=b`) to the file or socket, buffered.
//!
//! Lock discipline: the output lock may take the trace and class tables' locks inside it, never the
//! reverse, and no JVMTI function is called while it is held (a JVMTI call can wait for a safepoint that a
//! heap dump in progress is holding).

mod binary;
mod front_end;
mod heap_dump;
mod reports;
mod side_files;
mod sink;

use binary::BinaryEncoder;
pub use binary::ID_SIZE;
pub use heap_dump::{LentFile, PlaceDump, copy_range};
pub use reports::Reports;
pub use sink::Sink;

use crate::classes::{ClassRecord, ClassTable};
use crate::options::{Options, OutputFormat};
use crate::traces::TraceTable;
use hprof_format::model::{CpuReport, MonitorTimeReport, SitesReport, ThreadStart};
use hprof_format::{text, time};
use private_files::Finish;
use std::io::{self, BufWriter, Write};
use std::net::TcpStream;
use std::sync::Mutex;

/// The tables a report's records refer to: the writer reads traces and class names from them.
pub trait ReportTables {
    fn traces(&self) -> &TraceTable;
    fn classes(&self) -> &ClassTable;
}

const BUFFER_BYTES: usize = 1 << 20;

pub type Buffered = BufWriter<Sink>;

/// A report written as a checkpoint ([`Output::checkpoint`]).
pub enum Checkpoint {
    Cpu(CpuReport),
    Sites(SitesReport),
}

enum Encoder {
    Text(Buffered),
    Binary(BinaryEncoder),
}

struct State {
    encoder: Encoder,
    /// Which trace serials have been written (index = serial - 300001).
    traces_written: Vec<bool>,
    /// The empty STACK TRACE 300000 that heap dumps' objects name ([`Output::empty_trace`]).
    empty_trace_written: bool,
}

pub struct Output {
    format: OutputFormat,
    description: String,
    /// cpu=old: no header, no THREAD START/END lines.
    old_prof: bool,
    command_stream: Option<TcpStream>,
    state: Mutex<Option<State>>,
    failed: std::sync::atomic::AtomicBool,
    /// `force=y` over an existing file: the fresh file's rename over it, at close (or at exit).
    finish: Mutex<Finish>,
}

impl Output {
    /// Opens the destination and writes the header.
    pub fn open(options: &Options) -> Result<Output, String> {
        let old_prof = options.cpu == Some(crate::options::CpuMode::Old);
        let (sink, finish) = Sink::open(options)?;
        let description = sink.describe();
        let command_stream = sink.command_stream();
        let mut buffered = BufWriter::with_capacity(BUFFER_BYTES, sink);
        let now = time::now_millis();
        let mut encoder = match options.format {
            // cpu=old writes the old `prof` format alone: no header.
            OutputFormat::Text if old_prof => Encoder::Text(buffered),
            OutputFormat::Text => {
                text::write_header(&mut buffered, &time::ctime(now))
                    .map_err(|e| format!("cannot write to {description}: {e}"))?;
                Encoder::Text(buffered)
            }
            OutputFormat::Binary => {
                let version = if options.uses_heap_dump_segments() {
                    hprof_format::PROFILE_1_0_2
                } else {
                    hprof_format::PROFILE_1_0_1
                };
                Encoder::Binary(
                    BinaryEncoder::new(buffered, version, now)
                        .map_err(|e| format!("cannot write to {description}: {e}"))?,
                )
            }
        };
        // A file that takes no bytes (a full file system, /dev/full) is refused now, like a bad option, not
        // found out at exit when the program's exit code can no longer say so.
        if options.net.is_none() {
            let flushed = match &mut encoder {
                Encoder::Text(w) => w.flush(),
                Encoder::Binary(b) => b.writer().flush(),
            };
            flushed.map_err(|e| format!("cannot write to output file {description}: {e}"))?;
        }
        side_files::check(options)?;
        Ok(Output {
            format: options.format,
            old_prof,
            description,
            command_stream,
            state: Mutex::new(Some(State { encoder, traces_written: Vec::new(), empty_trace_written: false })),
            failed: Default::default(),
            finish: Mutex::new(finish),
        })
    }

    pub fn format(&self) -> OutputFormat {
        self.format
    }

    pub fn is_binary(&self) -> bool {
        self.format == OutputFormat::Binary
    }

    /// The file name or socket address, for messages.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// A reading handle on the front end's socket (`net=`), for its commands.
    pub fn command_stream(&self) -> Option<TcpStream> {
        self.command_stream.as_ref().and_then(|s| s.try_clone().ok())
    }

    /// Runs `f` on the open state; after a write error or close, does nothing. The first error is reported.
    fn with_state(&self, f: impl FnOnce(&mut State) -> io::Result<()>) {
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(state) = guard.as_mut() else { return };
        if let Err(e) = f(state) {
            if !self.failed.swap(true, std::sync::atomic::Ordering::Relaxed) {
                if self.command_stream.is_some() {
                    crate::log::warning(&format!(
                        "the front end ({}) is gone ({e}); the program goes on and further profile data is discarded",
                        self.description
                    ));
                } else {
                    crate::log::error(&format!(
                        "cannot write the profile to {}: {e}; the file is incomplete and the rest of the profile \
                         is lost (the program's exit code stays its own; errorexit=y makes this exit code 9)",
                        self.description
                    ));
                }
            }
            *guard = None;
        }
    }

    pub fn thread_start(&self, t: &ThreadStart) {
        if self.old_prof {
            return;
        }
        self.with_state(|s| match &mut s.encoder {
            Encoder::Text(w) => text::write_thread_start(w, t),
            Encoder::Binary(b) => b.start_thread(t),
        })
    }

    pub fn thread_end(&self, serial: u32) {
        if self.old_prof {
            return;
        }
        self.with_state(|s| match &mut s.encoder {
            Encoder::Text(w) => text::write_thread_end(w, serial),
            Encoder::Binary(b) => b.writer().end_thread(serial),
        })
    }

    /// LOAD CLASS (binary only; the text format has no class records).
    pub fn load_class(&self, class: &ClassRecord) {
        self.with_state(|s| match &mut s.encoder {
            Encoder::Text(_) => Ok(()),
            Encoder::Binary(b) => b.load_class(class),
        })
    }

    pub fn unload_class(&self, serial: u32) {
        self.with_state(|s| match &mut s.encoder {
            Encoder::Text(_) => Ok(()),
            Encoder::Binary(b) => b.writer().unload_class(serial),
        })
    }

    /// Writes the traces among `serials` that have not been written yet (with their frames, in binary).
    pub fn traces(&self, ctx: &(impl ReportTables + ?Sized), serials: impl IntoIterator<Item = u32>) {
        self.with_state(|s| write_traces(s, ctx, serials))
    }

    /// SITES (text) or ALLOC SITES (binary), after the traces it refers to.
    pub fn sites(&self, ctx: &(impl ReportTables + ?Sized), report: &SitesReport) {
        let serials: Vec<u32> = report.ranked().map(|r| r.row.trace_serial).collect();
        self.with_state(|s| {
            write_traces(s, ctx, serials)?;
            match &mut s.encoder {
                Encoder::Text(w) => text::write_sites(w, report, &time::ctime(time::now_millis())),
                Encoder::Binary(b) => {
                    for site in report.ranked() {
                        if let Some(class) = ctx.classes().by_serial(site.row.class_serial) {
                            b.load_class(&class)?;
                        }
                    }
                    b.writer().alloc_sites(report)
                }
            }
        })
    }

    /// HEAP SUMMARY (binary only).
    pub fn heap_summary(&self, live_bytes: u64, live_instances: u64, alloc_bytes: u64, alloc_instances: u64) {
        self.with_state(|s| match &mut s.encoder {
            Encoder::Text(_) => Ok(()),
            Encoder::Binary(b) => b.writer().heap_summary(live_bytes, live_instances, alloc_bytes, alloc_instances),
        })
    }

    /// CPU SAMPLES / CPU TIME, after the traces it refers to.
    pub fn cpu(&self, ctx: &(impl ReportTables + ?Sized), report: &CpuReport) {
        let serials: Vec<u32> = report.ranked().map(|r| r.row.trace_serial).collect();
        self.with_state(|s| {
            write_traces(s, ctx, serials)?;
            match &mut s.encoder {
                Encoder::Text(w) => text::write_cpu_report(w, report, &time::ctime(time::now_millis())),
                Encoder::Binary(b) => {
                    let pairs: Vec<(u64, u32)> = report.ranked().map(|r| (r.row.count, r.row.trace_serial)).collect();
                    b.writer().cpu_samples(report.total, &pairs)
                }
            }
        })
    }

    /// Writes `reports` as a checkpoint (see [`Sink::mark_checkpoint`]): what they refer to (traces,
    /// classes) for good, then the reports themselves, which stay at the end of the file only until the next
    /// bytes replace them. Nothing happens if the profile is no file.
    pub fn checkpoint(&self, ctx: &(impl ReportTables + ?Sized), reports: &[Checkpoint]) {
        // A socket cannot take a checkpoint back; the front end has the stream so far.
        if reports.is_empty() || self.command_stream.is_some() {
            return;
        }
        self.with_state(|s| {
            for report in reports {
                match report {
                    Checkpoint::Cpu(r) => write_traces(s, ctx, r.ranked().map(|r| r.row.trace_serial))?,
                    Checkpoint::Sites(r) => {
                        write_traces(s, ctx, r.ranked().map(|r| r.row.trace_serial))?;
                        if let Encoder::Binary(b) = &mut s.encoder {
                            for site in r.ranked() {
                                if let Some(class) = ctx.classes().by_serial(site.row.class_serial) {
                                    b.load_class(&class)?;
                                }
                            }
                        }
                    }
                }
            }
            let Some(start) = s.sink().checkpoint_start()? else { return Ok(()) };
            let now = time::ctime(time::now_millis());
            for report in reports {
                match (report, &mut s.encoder) {
                    (Checkpoint::Cpu(r), Encoder::Text(w)) => text::write_cpu_report(w, r, &now)?,
                    (Checkpoint::Cpu(r), Encoder::Binary(b)) => {
                        let pairs: Vec<(u64, u32)> = r.ranked().map(|r| (r.row.count, r.row.trace_serial)).collect();
                        b.writer().cpu_samples(r.total, &pairs)?
                    }
                    (Checkpoint::Sites(r), Encoder::Text(w)) => text::write_sites(w, r, &now)?,
                    (Checkpoint::Sites(r), Encoder::Binary(b)) => {
                        b.writer().alloc_sites(r)?;
                        b.writer().heap_summary(
                            r.total_live_bytes,
                            r.total_live_instances,
                            r.total_alloc_bytes,
                            r.total_alloc_instances,
                        )?
                    }
                }
            }
            s.sink().flush()?;
            s.sink().mark_checkpoint(start);
            Ok(())
        })
    }

    /// MONITOR TIME (text only; binary files get the MONITOR TIMES record, see `Reports::monitor_times`).
    pub fn monitor_time(&self, ctx: &(impl ReportTables + ?Sized), report: &MonitorTimeReport) {
        let serials: Vec<u32> = report.ranked().map(|r| r.row.trace_serial).collect();
        self.with_state(|s| {
            write_traces(s, ctx, serials)?;
            match &mut s.encoder {
                Encoder::Text(w) => text::write_monitor_time(w, report, &time::ctime(time::now_millis())),
                Encoder::Binary(_) => Ok(()),
            }
        })
    }

    /// Runs a text writer on the open text stream; ignored in binary output.
    fn text_only(&self, f: impl FnOnce(&mut dyn Write) -> io::Result<()>) {
        self.with_state(|s| match &mut s.encoder {
            Encoder::Text(w) => f(w),
            Encoder::Binary(_) => Ok(()),
        })
    }

    pub fn flush(&self) {
        self.with_state(|s| match &mut s.encoder {
            Encoder::Text(w) => w.flush(),
            Encoder::Binary(b) => b.writer().flush(),
        })
    }

    /// Flushes and closes; later writes are dropped. A checkpoint still at the end is dropped: the exit dump
    /// (or doe=n) decides what the profile ends with.
    pub fn close(&self) {
        self.flush();
        self.with_state(|s| s.sink().drop_checkpoint());
        self.with_state(|s| s.sink().finish());
        self.state.lock().unwrap_or_else(|e| e.into_inner()).take();
        self.commit(&mut self.finish.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// The session did not start: nothing more is written, and a fresh file that was to replace an
    /// existing one is removed (the existing one stays as it was).
    pub fn abandon(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).take();
        *self.finish.lock().unwrap_or_else(|e| e.into_inner()) = Finish::default();
    }

    /// Renames a replacing file over the profile's path. A failed rename leaves it under its own name,
    /// which the error gives.
    fn commit(&self, finish: &mut Finish) {
        let pending = finish.pending().map(|p| p.display().to_string());
        if let Err(e) = finish.commit() {
            crate::log::error(&format!(
                "{e}: the profile stays in {}",
                pending.as_deref().unwrap_or("its temporary file")
            ));
        }
    }

    /// Best-effort flush from an `atexit` hook: never waits for the lock (the holder may be a thread the
    /// exiting process has stopped).
    pub fn flush_at_exit(&self) {
        if let Ok(mut guard) = self.state.try_lock()
            && let Some(state) = guard.as_mut()
        {
            let _ = match &mut state.encoder {
                Encoder::Text(w) => w.flush(),
                Encoder::Binary(b) => b.writer().flush(),
            };
        }
        // Whatever the file holds now is the profile: under its name, not a temporary one.
        if let Ok(mut finish) = self.finish.try_lock() {
            self.commit(&mut finish);
        }
    }
}

impl State {
    /// The destination, with everything buffered written to it.
    fn sink(&mut self) -> Flushed<'_> {
        Flushed(match &mut self.encoder {
            Encoder::Text(w) => w,
            Encoder::Binary(b) => b.writer().get_mut(),
        })
    }
}

/// The buffered destination, for the checkpoint's steps, each of which first writes out what is buffered.
struct Flushed<'a>(&'a mut Buffered);

impl Flushed<'_> {
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }

    fn checkpoint_start(&mut self) -> io::Result<Option<u64>> {
        self.0.flush()?;
        self.0.get_mut().checkpoint_start()
    }

    fn mark_checkpoint(&mut self, start: u64) {
        self.0.get_mut().mark_checkpoint(start)
    }

    fn drop_checkpoint(&mut self) -> io::Result<()> {
        self.0.flush()?;
        self.0.get_mut().drop_checkpoint()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.0.flush()?;
        self.0.get_mut().finish()
    }
}

fn write_traces(
    s: &mut State,
    ctx: &(impl ReportTables + ?Sized),
    serials: impl IntoIterator<Item = u32>,
) -> io::Result<()> {
    for serial in serials {
        let Some(index) = serial.checked_sub(hprof_format::serial_base::TRACE + 1) else { continue };
        let index = index as usize;
        if s.traces_written.get(index).copied().unwrap_or(false) {
            continue;
        }
        let Some(trace) = ctx.traces().trace(serial) else { continue };
        let frames: Vec<_> = trace.frames.iter().filter_map(|&i| ctx.traces().frame(i).map(|f| (i, f))).collect();
        let thread = (trace.thread_serial != 0).then_some(trace.thread_serial);
        match &mut s.encoder {
            Encoder::Text(w) => text::write_trace(w, serial, thread, frames.iter().map(|(_, f)| &f.frame))?,
            Encoder::Binary(b) => b.trace(ctx, serial, trace.thread_serial, &frames)?,
        }
        if s.traces_written.len() <= index {
            s.traces_written.resize(index + 1, false);
        }
        s.traces_written[index] = true;
    }
    Ok(())
}

/// `<name>.<pid>` for the first try, `<name>.<pid>.<n>` for the next ones (the sink's and the front end's
/// fresh file names).
fn numbered(name: &str, pid: u32, n: u32) -> std::path::PathBuf {
    std::path::PathBuf::from(if n <= 1 { format!("{name}.{pid}") } else { format!("{name}.{pid}.{n}") })
}
