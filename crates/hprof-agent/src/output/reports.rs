//! The typed report methods capabilities call: each writes one kind of record through hprof-format's text
//! or binary writer, so that no capability holds the encoder itself.

use super::{Checkpoint, Encoder, Output, ReportTables, write_traces};
use hprof_format::model::{CpuReport, MonitorTimeReport, SitesReport};
use hprof_format::text;
use hprof_format::text::MonitorDump;
use hprof_format::text::cpu_time::OldProf;
use hprof_format::text::flat::FlatProfile;

/// The writer together with the tables its records refer to (traces, class names): what a capability
/// writes a report through (the context hands one out).
#[derive(Clone, Copy)]
pub struct Reports<'a> {
    output: &'a Output,
    tables: &'a dyn ReportTables,
}

impl<'a> Reports<'a> {
    pub fn new(output: &'a Output, tables: &'a dyn ReportTables) -> Reports<'a> {
        Reports { output, tables }
    }

    /// The traces among `serials` not written yet (with their frames, in binary).
    pub fn traces(&self, serials: impl IntoIterator<Item = u32>) {
        self.output.traces(self.tables, serials)
    }

    /// SITES (text) or ALLOC SITES (binary), after the traces it refers to.
    pub fn sites(&self, report: &SitesReport) {
        self.output.sites(self.tables, report)
    }

    /// CPU SAMPLES / CPU TIME, after the traces it refers to.
    pub fn cpu(&self, report: &CpuReport) {
        self.output.cpu(self.tables, report)
    }

    /// MONITOR TIME (text only), after the traces it refers to.
    pub fn monitor_time(&self, report: &MonitorTimeReport) {
        self.output.monitor_time(self.tables, report)
    }

    /// MONITOR DUMP (text only), after the traces it refers to (written in either format).
    pub fn monitor_dump(&self, dump: &MonitorDump) {
        self.output.with_state(|s| {
            write_traces(s, self.tables, dump.trace_serials())?;
            match &mut s.encoder {
                Encoder::Text(w) => text::write_monitor_dump(w, dump),
                Encoder::Binary(_) => Ok(()),
            }
        })
    }

    /// `reports` as a checkpoint (see [`Output::checkpoint`]).
    pub fn checkpoint(&self, reports: &[Checkpoint]) {
        self.output.checkpoint(self.tables, reports)
    }
}

/// The text-only reports and lines (the binary format has no records for them).
impl Output {
    /// cpu=old's report (`count callee caller time`).
    pub fn old_prof(&self, report: &OldProf) {
        self.text_only(|w| text::cpu_time::write_old_prof(w, report))
    }

    /// cpu=flat's report (as -Xprof printed it).
    pub fn flat_profile(&self, profile: &FlatProfile, cutoff: f64) {
        self.text_only(|w| text::flat::write_flat_profile(w, profile, cutoff))
    }

    /// `WAIT: MONITOR …` as a thread calls Object.wait.
    pub fn monitor_wait(&self, signature: &str, timeout_ms: i64, thread_serial: u32) {
        self.text_only(|w| text::write_monitor_wait(w, signature, timeout_ms, thread_serial))
    }

    /// `WAITED: MONITOR …` as it returns.
    pub fn monitor_waited(&self, signature: &str, waited_ms: u64, thread_serial: u32) {
        self.text_only(|w| text::write_monitor_waited(w, signature, waited_ms, thread_serial))
    }

    /// `SLEEP: …` as a thread calls Thread.sleep.
    pub fn sleep(&self, timeout_ms: i64, thread_serial: u32) {
        self.text_only(|w| text::write_sleep(w, timeout_ms, thread_serial))
    }
}
