use super::percent;
use crate::model::{CpuReport, CpuReportKind, MonitorTimeReport, SiteOrder, SitesReport};
use std::io::{self, Write};

/// SITES BEGIN … SITES END.
pub fn write_sites(w: &mut dyn Write, report: &SitesReport, date: &str) -> io::Result<()> {
    let order = match report.order {
        SiteOrder::LiveBytes => "live bytes",
        SiteOrder::AllocatedBytes => "allocated bytes",
    };
    writeln!(w, "SITES BEGIN (ordered by {order}) {date}")?;
    if let Some(note) = &report.note {
        writeln!(w, "{note}")?;
    }
    writeln!(w, "          percent          live          alloc'ed  stack class")?;
    writeln!(w, " rank   self  accum     bytes objs     bytes  objs trace name")?;
    for r in report.ranked() {
        let s = r.row;
        writeln!(
            w,
            "{:5} {} {} {:9} {:4} {:9} {:5} {:5} {}",
            r.rank,
            percent(r.self_ratio),
            percent(r.accum_ratio),
            s.live_bytes,
            s.live_instances,
            s.alloc_bytes,
            s.alloc_instances,
            s.trace_serial,
            s.class_name
        )?;
    }
    writeln!(w, "SITES END")
}

/// CPU SAMPLES BEGIN … END, or CPU TIME (ms) BEGIN … END.
pub fn write_cpu_report(w: &mut dyn Write, report: &CpuReport, date: &str) -> io::Result<()> {
    let name = match report.kind {
        CpuReportKind::Samples => "CPU SAMPLES",
        CpuReportKind::Times => "CPU TIME (ms)",
    };
    // CPU TIME weighs rows in nanoseconds and prints its total in milliseconds.
    let total = match report.kind {
        CpuReportKind::Samples => report.total,
        CpuReportKind::Times => report.total / 1_000_000,
    };
    writeln!(w, "{name} BEGIN (total = {total}) {date}")?;
    if let Some(note) = &report.note {
        writeln!(w, "{note}")?;
    }
    let mut rows = report.ranked().peekable();
    if rows.peek().is_some() {
        writeln!(w, "rank   self  accum   count trace method")?;
    }
    for r in rows {
        let row = r.row;
        write!(
            w,
            "{:4} {} {} {:7} {:5}",
            r.rank,
            percent(r.self_ratio),
            percent(r.accum_ratio),
            row.count,
            row.trace_serial
        )?;
        match &row.top_method {
            Some(m) => writeln!(w, " {m}")?,
            None => writeln!(w, " <empty trace>")?,
        }
    }
    writeln!(w, "{name} END")
}

/// MONITOR TIME BEGIN … END. Times are summed in nanoseconds and printed in milliseconds.
pub fn write_monitor_time(w: &mut dyn Write, report: &MonitorTimeReport, date: &str) -> io::Result<()> {
    writeln!(w, "MONITOR TIME BEGIN (total = {} ms) {date}", report.total_nanos / 1_000_000)?;
    let mut rows = report.ranked().peekable();
    if rows.peek().is_some() {
        writeln!(w, "rank   self  accum   count trace monitor")?;
    }
    for r in rows {
        let row = r.row;
        writeln!(
            w,
            "{:4} {} {} {:7} {:5} {} (Java)",
            r.rank,
            percent(r.self_ratio),
            percent(r.accum_ratio),
            row.count,
            row.trace_serial,
            row.monitor_class
        )?;
    }
    writeln!(w, "MONITOR TIME END")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CpuRow, Site};

    #[test]
    fn sites_layout_and_cutoff() {
        let site = |name: &str, live: u64, trace: u32| Site {
            class_name: name.into(),
            class_serial: 1,
            array_type: 0,
            trace_serial: trace,
            live_bytes: live,
            live_instances: live / 16,
            alloc_bytes: live * 2,
            alloc_instances: live / 8,
        };
        let report = SitesReport {
            forced_gc: false,
            order: SiteOrder::LiveBytes,
            incremental: false,
            cutoff: 0.05,
            total_live_bytes: 1000,
            total_live_instances: 62,
            total_alloc_bytes: 2000,
            total_alloc_instances: 125,
            sites: vec![site("int[]", 960, 300044), site("byte[]", 32, 300195), site("X", 8, 300001)],
            note: None,
        };
        let mut out = Vec::new();
        write_sites(&mut out, &report, "DATE").unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "SITES BEGIN (ordered by live bytes) DATE\n          percent          live          alloc'ed  stack class\n \
             rank   self  accum     bytes objs     bytes  objs trace name\n    \
             1 96.00% 96.00%       960   60      1920   120 300044 int[]\nSITES END\n"
        );
    }

    #[test]
    fn cpu_samples_layout() {
        let report = CpuReport {
            kind: CpuReportKind::Samples,
            total: 50,
            cutoff: 0.0001,
            rows: vec![
                CpuRow { weight: 8, count: 8, trace_serial: 300118, top_method: Some("CpuBound.mapWork".into()) },
                CpuRow { weight: 2, count: 2, trace_serial: 300039, top_method: None },
            ],
            note: None,
        };
        let mut out = Vec::new();
        write_cpu_report(&mut out, &report, "DATE").unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "CPU SAMPLES BEGIN (total = 50) DATE\nrank   self  accum   count trace method\n   \
             1 16.00% 16.00%       8 300118 CpuBound.mapWork\n   2  4.00% 20.00%       2 300039 <empty trace>\n\
             CPU SAMPLES END\n"
        );
    }

    #[test]
    fn empty_cpu_report_has_no_column_line() {
        let report = CpuReport { kind: CpuReportKind::Times, total: 0, cutoff: 0.0001, rows: vec![], note: None };
        let mut out = Vec::new();
        write_cpu_report(&mut out, &report, "D").unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "CPU TIME (ms) BEGIN (total = 0) D\nCPU TIME (ms) END\n");
    }
}
