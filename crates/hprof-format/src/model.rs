//! The profile's records as plain data: what the agent's capabilities produce and the writers format.

/// The line field of a stack frame (HPROF's STACK FRAME record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LineNumber {
    Line(u32),
    /// No line information recorded (`lineno=n`), 0 in the binary format.
    NotRecorded,
    /// -1: the method has no line table or the index is before it.
    Unknown,
    /// -2: a compiled frame without a bytecode index.
    Compiled,
    /// -3: a native method.
    Native,
}

impl LineNumber {
    pub fn to_raw(self) -> i32 {
        match self {
            LineNumber::Line(n) => n.min(i32::MAX as u32) as i32,
            LineNumber::NotRecorded => 0,
            LineNumber::Unknown => -1,
            LineNumber::Compiled => -2,
            LineNumber::Native => -3,
        }
    }

    pub fn from_raw(raw: i32) -> LineNumber {
        match raw {
            n if n > 0 => LineNumber::Line(n as u32),
            0 => LineNumber::NotRecorded,
            -2 => LineNumber::Compiled,
            -3 => LineNumber::Native,
            _ => LineNumber::Unknown,
        }
    }
}

/// A resolved stack frame.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Java source form: `java.util.zip.ZipEntry`.
    pub class_name: String,
    pub method_name: String,
    /// JVM form: `(Ljava/lang/String;)V`.
    pub method_signature: String,
    pub source_file: Option<String>,
    pub line: LineNumber,
}

impl Frame {
    /// A pseudo-frame for what a sampler saw instead of Java code (`[GC active]`, `[not walkable]`…).
    pub fn pseudo(label: &str) -> Frame {
        Frame {
            class_name: String::new(),
            method_name: label.to_owned(),
            method_signature: String::new(),
            source_file: None,
            line: LineNumber::Unknown,
        }
    }

    pub fn is_pseudo(&self) -> bool {
        self.class_name.is_empty()
    }

    /// `Class.method`, as CPU SAMPLES rows and flame graphs name a frame.
    pub fn qualified_method(&self) -> String {
        if self.is_pseudo() { self.method_name.clone() } else { format!("{}.{}", self.class_name, self.method_name) }
    }
}

/// THREAD START / START THREAD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadStart {
    pub serial: u32,
    pub object_id: u64,
    pub trace_serial: u32,
    pub name: String,
    pub group_name: String,
    pub parent_group_name: String,
}

/// The order of a SITES report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SiteOrder {
    LiveBytes,
    AllocatedBytes,
}

/// One allocation site: a class allocated at one stack trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// Java source form: `java.lang.String[][]`.
    pub class_name: String,
    pub class_serial: u32,
    /// 0 for instances, else the basic type of the array's elements (2 for object arrays).
    pub array_type: u8,
    pub trace_serial: u32,
    pub live_bytes: u64,
    pub live_instances: u64,
    pub alloc_bytes: u64,
    pub alloc_instances: u64,
}

/// SITES / ALLOC SITES.
#[derive(Debug, Clone, PartialEq)]
pub struct SitesReport {
    pub order: SiteOrder,
    /// Only the sites that changed since the last report (the listener's flag 0x1).
    pub incremental: bool,
    /// A GC was forced before the figures were taken (flag 0x4), so live figures are exact.
    pub forced_gc: bool,
    pub cutoff: f64,
    pub total_live_bytes: u64,
    pub total_live_instances: u64,
    pub total_alloc_bytes: u64,
    pub total_alloc_instances: u64,
    /// Sorted by `order`, largest first.
    pub sites: Vec<Site>,
    /// Printed under the header, e.g. that figures are estimates from sampled allocations.
    pub note: Option<String>,
}

/// A row of a ranked report with its share of the total.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranked<'a, T> {
    pub rank: usize,
    pub self_ratio: f64,
    pub accum_ratio: f64,
    pub row: &'a T,
}

/// Rows in order with their shares, stopping at the first whose share is below `cutoff`, as HPROF does.
pub fn ranked_rows<'a, T>(
    rows: &'a [T],
    total: f64,
    cutoff: f64,
    weight: impl Fn(&T) -> f64,
) -> impl Iterator<Item = Ranked<'a, T>> {
    let mut accum = 0.0;
    rows.iter()
        .enumerate()
        .map(move |(i, row)| {
            let ratio = if total > 0.0 { weight(row) / total } else { 0.0 };
            accum += ratio;
            Ranked { rank: i + 1, self_ratio: ratio, accum_ratio: accum, row }
        })
        .take_while(move |r| r.self_ratio >= cutoff)
}

impl SitesReport {
    pub const FLAG_INCREMENTAL: u16 = 0x1;
    pub const FLAG_SORT_BY_ALLOC: u16 = 0x2;
    pub const FLAG_FORCE_GC: u16 = 0x4;

    pub fn flags(&self) -> u16 {
        let mut f = 0;
        if self.incremental {
            f |= Self::FLAG_INCREMENTAL;
        }
        if self.order == SiteOrder::AllocatedBytes {
            f |= Self::FLAG_SORT_BY_ALLOC;
        }
        if self.forced_gc {
            f |= Self::FLAG_FORCE_GC;
        }
        f
    }

    /// The sites above the cutoff, with their shares of live (or allocated) bytes.
    pub fn ranked(&self) -> impl Iterator<Item = Ranked<'_, Site>> {
        let (total, by_alloc) = match self.order {
            SiteOrder::LiveBytes => (self.total_live_bytes, false),
            SiteOrder::AllocatedBytes => (self.total_alloc_bytes, true),
        };
        ranked_rows(&self.sites, total as f64, self.cutoff, move |s| {
            if by_alloc { s.alloc_bytes as f64 } else { s.live_bytes as f64 }
        })
    }
}

/// Whether a CPU report counts samples (`cpu=samples`) or measures time (`cpu=times`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuReportKind {
    Samples,
    Times,
}

/// One row of CPU SAMPLES / CPU TIME.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuRow {
    /// Samples, or CPU nanoseconds for CPU TIME.
    pub weight: u64,
    /// Samples, or calls for CPU TIME.
    pub count: u64,
    pub trace_serial: u32,
    /// `Class.method` of the trace's top frame; `None` for an empty trace.
    pub top_method: Option<String>,
}

impl CpuRow {
    /// Puts rows in a report's order: heaviest first, equal weights by trace serial, so that every writer
    /// (the agent's reports, `hprof analyze`) prints them alike and the same way every run.
    pub fn rank(rows: &mut [CpuRow]) {
        rows.sort_by(|a, b| b.weight.cmp(&a.weight).then(a.trace_serial.cmp(&b.trace_serial)));
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct CpuReport {
    pub kind: CpuReportKind,
    /// Samples, or CPU nanoseconds for CPU TIME (printed in milliseconds).
    pub total: u64,
    pub cutoff: f64,
    /// Sorted by weight, largest first.
    pub rows: Vec<CpuRow>,
    /// Printed under the header, e.g. the methods cpu=times could not time.
    pub note: Option<String>,
}

impl CpuReport {
    pub fn ranked(&self) -> impl Iterator<Item = Ranked<'_, CpuRow>> {
        ranked_rows(&self.rows, self.total as f64, self.cutoff, |r| r.weight as f64)
    }
}

/// One row of MONITOR TIME: time blocked entering monitors of one class at one trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorTimeRow {
    pub nanos: u64,
    pub count: u64,
    pub trace_serial: u32,
    /// Java source form of the locked object's class.
    pub monitor_class: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MonitorTimeReport {
    pub total_nanos: u64,
    pub cutoff: f64,
    /// Sorted by time, largest first.
    pub rows: Vec<MonitorTimeRow>,
}

impl MonitorTimeReport {
    pub fn ranked(&self) -> impl Iterator<Item = Ranked<'_, MonitorTimeRow>> {
        ranked_rows(&self.rows, self.total_nanos as f64, self.cutoff, |r| r.nanos as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_rows_rank_heaviest_first_then_by_trace() {
        let row = |weight, trace_serial| CpuRow { weight, count: 1, trace_serial, top_method: None };
        let mut rows = vec![row(5, 300003), row(9, 300004), row(5, 300001), row(0, 300002)];
        CpuRow::rank(&mut rows);
        let order: Vec<(u64, u32)> = rows.iter().map(|r| (r.weight, r.trace_serial)).collect();
        assert_eq!(order, [(9, 300004), (5, 300001), (5, 300003), (0, 300002)]);
    }

    #[test]
    fn ranked_rows_stop_below_cutoff() {
        let rows = [50u64, 30, 15, 5];
        let r: Vec<_> = ranked_rows(&rows, 100.0, 0.10, |&w| w as f64).collect();
        assert_eq!(r.len(), 3);
        assert_eq!(r[2].rank, 3);
        assert!((r[2].accum_ratio - 0.95).abs() < 1e-9);
    }

    #[test]
    fn line_numbers_round_trip() {
        for l in [
            LineNumber::Line(7),
            LineNumber::NotRecorded,
            LineNumber::Unknown,
            LineNumber::Compiled,
            LineNumber::Native,
        ] {
            assert_eq!(LineNumber::from_raw(l.to_raw()), l);
        }
    }
}
