//! Turns the site table's figures into HPROF's SITES report.

use super::site_table::SiteFigures;
use super::weight::Weighting;
use crate::output::ReportTables;
use hprof_format::model::{Site, SiteOrder, SitesReport};

pub struct ReportRequest<'a> {
    pub order: SiteOrder,
    pub cutoff: f64,
    /// For an incremental report: each site's allocated count at the previous report (index = site).
    pub since: Option<&'a [u64]>,
    pub forced_gc: bool,
    /// No collection could be forced first: dead objects not yet collected still count as live.
    pub live_as_of_last_gc: bool,
    pub weighting: Weighting,
    pub dropped: u64,
}

/// Heap totals over every site: (live bytes, live objects, allocated bytes, allocated objects), as both
/// SITES and HEAP SUMMARY report them.
pub fn totals(figures: &[SiteFigures], weighting: Weighting) -> (u64, u64, u64, u64) {
    let objects = objects_of(weighting);
    figures.iter().fold((0, 0, 0, 0), |t, f| {
        (t.0 + f.live_bytes, t.1 + objects(f.live_units), t.2 + f.alloc_bytes, t.3 + objects(f.alloc_units))
    })
}

/// Weight units to whole objects, rounded to the nearest.
fn objects_of(weighting: Weighting) -> impl Fn(u64) -> u64 {
    let scale = weighting.count_scale();
    move |units| (units + scale / 2) / scale
}

/// The report over `figures`, naming classes from the tables' class table (sites of unknown classes are left
/// out).
pub fn build(ctx: &(impl ReportTables + ?Sized), figures: &[SiteFigures], req: &ReportRequest) -> SitesReport {
    let objects = objects_of(req.weighting);
    let (total_live_bytes, total_live_instances, total_alloc_bytes, total_alloc_instances) =
        totals(figures, req.weighting);
    let mut report = SitesReport {
        order: req.order,
        incremental: req.since.is_some(),
        forced_gc: req.forced_gc,
        cutoff: req.cutoff,
        total_live_bytes,
        total_live_instances,
        total_alloc_bytes,
        total_alloc_instances,
        sites: Vec::new(),
        note: note(req),
    };
    for (i, f) in figures.iter().enumerate() {
        if f.alloc_units == 0 && f.live_units == 0 {
            continue;
        }
        if let Some(since) = req.since
            && since.get(i).copied() == Some(f.alloc_units)
        {
            continue;
        }
        let Some(class) = ctx.classes().by_serial(f.key.class_serial) else { continue };
        report.sites.push(Site {
            class_name: class.name.clone(),
            class_serial: class.serial,
            array_type: class.array_type(),
            trace_serial: f.key.trace_serial,
            live_bytes: f.live_bytes,
            live_instances: objects(f.live_units),
            alloc_bytes: f.alloc_bytes,
            alloc_instances: objects(f.alloc_units),
        });
    }
    let by_alloc = req.order == SiteOrder::AllocatedBytes;
    report.sites.sort_by(|a, b| {
        let (ka, kb) = if by_alloc {
            ((a.alloc_bytes, a.live_bytes), (b.alloc_bytes, b.live_bytes))
        } else {
            ((a.live_bytes, a.alloc_bytes), (b.live_bytes, b.alloc_bytes))
        };
        kb.cmp(&ka).then(a.trace_serial.cmp(&b.trace_serial)).then(a.class_serial.cmp(&b.class_serial))
    });
    report
}

fn note(req: &ReportRequest) -> Option<String> {
    let mut lines = Vec::new();
    if let Weighting::Sampled { interval } = req.weighting {
        lines.push(format!(
            "(estimates: allocations sampled every {} bytes on average (alloc_interval), each weighted by the \
             inverse of its chance of being sampled)",
            interval as u64
        ));
    }
    if req.live_as_of_last_gc {
        lines.push(
            "(live figures as of the last garbage collection: a concurrent collector cannot be made to \
             collect at exit)"
                .to_string(),
        );
    }
    if req.dropped > 0 {
        lines.push(format!("({} allocations at new sites not recorded: the site table is full)", req.dropped));
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::alloc_sites::site_table::SiteKey;
    use crate::classes::ClassTable;
    use crate::traces::TraceTable;

    /// The tables a report reads, without a JVM.
    struct FakeTables {
        traces: TraceTable,
        classes: ClassTable,
    }

    impl ReportTables for FakeTables {
        fn traces(&self) -> &TraceTable {
            &self.traces
        }
        fn classes(&self) -> &ClassTable {
            &self.classes
        }
    }

    fn tables() -> FakeTables {
        let t = FakeTables { traces: TraceTable::new(true), classes: ClassTable::default() };
        t.classes.append("Ljava/lang/String;".into(), 1); // serial 100001
        t.classes.append("[I".into(), 2); // serial 100002
        t
    }

    fn site(class_serial: u32, trace_serial: u32, alloc: (u64, u64), live: (u64, u64)) -> SiteFigures {
        SiteFigures {
            key: SiteKey { class_serial, trace_serial },
            alloc_units: alloc.0,
            alloc_bytes: alloc.1,
            live_units: live.0,
            live_bytes: live.1,
        }
    }

    fn request(order: SiteOrder, weighting: Weighting) -> ReportRequest<'static> {
        ReportRequest {
            order,
            cutoff: 0.0,
            since: None,
            forced_gc: true,
            live_as_of_last_gc: false,
            weighting,
            dropped: 0,
        }
    }

    #[test]
    fn sites_are_named_ranked_and_totalled_from_the_tables() {
        let figures = [
            site(100_001, 300_001, (10, 400), (2, 80)),
            site(100_002, 300_002, (3, 3000), (3, 3000)),
            // A class the table does not know (unloaded before numbering): counted in totals, not listed.
            site(100_009, 300_003, (1, 16), (1, 16)),
            // Nothing allocated nor live: not a site.
            site(100_001, 300_004, (0, 0), (0, 0)),
        ];
        let report = build(&tables(), &figures, &request(SiteOrder::LiveBytes, Weighting::Exact));
        let listed: Vec<_> =
            report.sites.iter().map(|s| (s.class_name.as_str(), s.trace_serial, s.array_type)).collect();
        assert_eq!(listed, [("int[]", 300_002, 10), ("java.lang.String", 300_001, 0)]);
        assert_eq!(
            (
                report.total_live_bytes,
                report.total_live_instances,
                report.total_alloc_bytes,
                report.total_alloc_instances
            ),
            (3096, 6, 3416, 14)
        );
        assert_eq!(report.note, None);

        let by_alloc = build(&tables(), &figures[..2], &request(SiteOrder::AllocatedBytes, Weighting::Exact));
        assert_eq!(by_alloc.sites[0].alloc_bytes, 3000);
    }

    #[test]
    fn sampled_weights_round_to_whole_objects_and_an_incremental_report_skips_unchanged_sites() {
        let scale = Weighting::Sampled { interval: 512.0 }.count_scale();
        let figures = [
            site(100_001, 300_001, (5 * scale + scale / 2, 900), (scale / 2 - 1, 10)),
            site(100_002, 300_002, (scale, 64), (0, 0)),
        ];
        let since = [0, scale];
        let mut req = request(SiteOrder::AllocatedBytes, Weighting::Sampled { interval: 512.0 });
        req.since = Some(&since);
        let report = build(&tables(), &figures, &req);
        assert_eq!(report.sites.len(), 1, "the int[] site allocated nothing since the last report");
        let s = &report.sites[0];
        assert_eq!((s.alloc_instances, s.live_instances), (6, 0), "5.5 rounds up, 0.5 - 1/1024 down");
        assert!(report.incremental);
        assert!(report.note.unwrap().contains("sampled every 512 bytes"));
    }
}
