//! Turns the site table's figures into HPROF's SITES report.

use super::site_table::SiteFigures;
use super::weight::Weighting;
use crate::agent::Agent;
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

pub fn build(agent: &Agent, figures: &[SiteFigures], req: &ReportRequest) -> SitesReport {
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
        let Some(class) = agent.classes.by_serial(f.key.class_serial) else { continue };
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
