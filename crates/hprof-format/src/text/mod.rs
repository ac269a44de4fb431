//! The text report (`format=a`), in the layout the original HPROF printed, so that existing readers and
//! habits keep working. Each function writes one record kind.

pub mod cpu_time;
pub mod flat;
pub mod heap;
mod monitor;
mod reports;
mod threads;

pub use monitor::{
    DumpedMonitor, DumpedThread, MonitorDump, RunState, ThreadStatus, write_monitor_dump, write_monitor_wait,
    write_monitor_waited, write_sleep,
};
pub use reports::{write_cpu_report, write_monitor_time, write_sites};
pub use threads::{write_thread_end, write_thread_start, write_trace};

use std::io::{self, Write};

/// What follows the header line: our own short guide to the record kinds.
const PRELUDE: &str = "\
Its records follow in the order they happened:

  * THREAD START / THREAD END: a Java thread began or finished. Thread serials start at 200001;
    obj= is the thread object's identifier, as a heap dump would show it.
  * TRACE n: a stack trace, top frame first, up to depth= frames. Trace serials start at 300001;
    other records point at traces by serial (300000 means no trace was recorded). A trace is
    printed once, just before the first record that uses it; with thread=y it names its thread.
  * SITES (heap=sites): allocation sites - a class allocated at a trace - ranked by live bytes,
    with the live and the allocated bytes and object counts.
  * CPU SAMPLES (cpu=samples): how often each trace was seen running on a CPU, ranked.
  * CPU TIME (cpu=times): time spent in each trace, with call counts.
  * Flat profile (cpu=flat, -Xprof): per thread, ticks in interpreted, compiled and stub code, with
    '+ native' ticks in native code they called, then a global summary, in -Xprof's layout.
  * MONITOR TIME (monitor=y): time threads waited to enter monitors, by trace and lock class;
    MONITOR DUMP lists every thread's state and every monitor's owner and waiters.
  * WAIT / WAITED (monitor=y): a thread called Object.wait (with its timeout in ms, 0 = none) and
    how long the wait lasted, printed as they happen.
  * HEAP DUMP (heap=dump): every live object as ROOT, CLS (class), OBJ (instance) and ARR (array)
    lines with the identifiers of the objects they reference.

Rows whose share of the total is below cutoff= are left out of ranked reports.
";

/// `JAVA PROFILE 1.0.1, created <date>`, the guide to the records, and the separator.
pub fn write_header(w: &mut dyn Write, created: &str) -> io::Result<()> {
    write_header_as(w, crate::PROFILE_1_0_1, created, Some("hprof-rs (an HPROF agent for JDK 17+)"))
}

/// The header for a report of `version` (`JAVA PROFILE 1.0.2`, as its file says); the guide names the
/// writer only when it is known (a binary file does not say who wrote it).
pub fn write_header_as(w: &mut dyn Write, version: &str, created: &str, writer: Option<&str>) -> io::Result<()> {
    writeln!(w, "{version}, created {created}")?;
    writeln!(w)?;
    match writer {
        Some(who) => writeln!(w, "This file holds a profile of one Java program run, written by {who}.")?,
        None => writeln!(w, "This file holds a profile of one Java program run.")?,
    }
    w.write_all(PRELUDE.as_bytes())?;
    w.write_all(b"\n--------\n\n")
}

/// Formats a percentage the way HPROF's `%5.2f%%` does.
pub(crate) fn percent(ratio: f64) -> String {
    format!("{:5.2}%", ratio * 100.0)
}
