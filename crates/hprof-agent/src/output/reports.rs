//! The typed report methods capabilities call: each writes one kind of record through hprof-format's text
//! or binary writer, so that no capability holds the encoder itself.

use super::{Checkpoint, Encoder, Output, ReportTables, write_traces};
use hprof_format::binary::{MonitorKind, MonitorTime};
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

    /// SAMPLE TIMES (binary only: the text format has no place for them), after the traces they name.
    pub fn sample_times(&self, samples: &[(u32, u32, u32)]) {
        self.output.with_state(|s| {
            if !matches!(s.encoder, Encoder::Binary(_)) {
                return Ok(());
            }
            let mut serials: Vec<u32> = samples.iter().map(|&(_, t, _)| t).collect();
            serials.sort_unstable();
            serials.dedup();
            write_traces(s, self.tables, serials)?;
            match &mut s.encoder {
                Encoder::Binary(b) => b.writer().sample_times(samples),
                Encoder::Text(_) => Ok(()),
            }
        })
    }

    /// MONITOR TIME (text only), after the traces it refers to.
    pub fn monitor_time(&self, report: &MonitorTimeReport) {
        self.output.monitor_time(self.tables, report)
    }

    /// MONITOR TIMES (binary only, hprof-rs's record): MONITOR TIME's rows (`enters`, all of them, the
    /// cutoff is the text's) and the finished Object.wait times (`waits`), after the traces they name.
    pub fn monitor_times(&self, enters: &MonitorTimeReport, waits: &MonitorTimeReport) {
        self.output.with_state(|s| {
            if !matches!(s.encoder, Encoder::Binary(_)) {
                return Ok(());
            }
            let rows = || {
                let enters = enters.rows.iter().map(|r| (MonitorKind::Enter, r));
                enters.chain(waits.rows.iter().map(|r| (MonitorKind::Wait, r)))
            };
            write_traces(s, self.tables, rows().map(|(_, r)| r.trace_serial))?;
            let Encoder::Binary(b) = &mut s.encoder else { return Ok(()) };
            let mut out = Vec::new();
            for (kind, r) in rows() {
                let class_name_id = b.string_id(&r.monitor_class)?;
                out.push(MonitorTime {
                    kind,
                    trace_serial: r.trace_serial,
                    class_name_id,
                    count: r.count,
                    nanos: r.nanos,
                });
            }
            b.writer().monitor_times(&out)
        })
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

#[cfg(test)]
mod tests {
    use crate::context::Context;
    use hprof_format::model::{Frame, LineNumber};
    use hprof_format::text::{DumpedThread, MonitorDump, RunState, ThreadStatus};

    /// Writes a MONITOR DUMP naming one trace, and the live lines, through the typed methods; the profile's text.
    fn written(format: &str) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("reports.txt");
        let ctx = Context::without_jvm(&format!("cpu=samples,format={format},file={}", path.display()));
        let frame = ctx.traces().named_frame(Frame {
            class_name: "com.example.Bank".into(),
            method_name: "run".into(),
            method_signature: "()V".into(),
            source_file: Some("Bank.java".into()),
            line: LineNumber::Line(10),
        });
        let trace_serial = ctx.intern_trace(200001, &[frame]);
        let status = ThreadStatus { suspended: false, interrupted: false, in_native: false, state: RunState::Runnable };
        let dump =
            MonitorDump { threads: vec![DumpedThread { serial: 200001, trace_serial, status }], monitors: vec![] };
        ctx.reports().monitor_dump(&dump);
        ctx.output.monitor_wait("Ljava/lang/Object;", 5, 200001);
        ctx.output.monitor_waited("Ljava/lang/Object;", 7, 200001);
        ctx.output.sleep(3, 200001);
        ctx.output.close();
        std::fs::read(&path).unwrap()
    }

    #[test]
    fn a_monitor_dump_comes_after_its_traces_and_the_live_lines_after_it() {
        let text = String::from_utf8(written("a")).unwrap();
        let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("no {s:?} in {text}"));
        assert!(at("TRACE 300001:\n\tcom.example.Bank.run(Bank.java:10)") < at("MONITOR DUMP BEGIN"), "{text}");
        assert!(at("    THREAD 200001, trace 300001, status: R") < at("MONITOR DUMP END"), "{text}");
        assert!(at("MONITOR DUMP END") < at("WAIT: MONITOR Ljava/lang/Object;, timeout=5, thread 200001"), "{text}");
        assert!(at("WAITED: MONITOR Ljava/lang/Object;, time_waited=7, thread 200001") < at("SLEEP: timeout=3"));
    }

    #[test]
    fn binary_output_takes_the_trace_but_none_of_the_text_lines() {
        let bytes = written("b");
        let has = |s: &[u8]| bytes.windows(s.len()).any(|w| w == s);
        assert!(has(b"Bank.java"), "the trace's frame names its source file");
        assert!(!has(b"MONITOR DUMP") && !has(b"WAIT") && !has(b"SLEEP"));
    }
}
