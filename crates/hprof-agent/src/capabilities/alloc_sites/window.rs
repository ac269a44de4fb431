//! heap=sites' upload window (otlp=, pyroscope=): per site, what was allocated since the last window and
//! what is live now (as of the last collection the liveness checker saw).

use super::AllocSites;

/// One site's part of a window, in objects and bytes (estimates with `alloc_interval=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowSite {
    pub class_serial: u32,
    pub trace_serial: u32,
    pub alloc_objects: u64,
    pub alloc_bytes: u64,
    pub live_objects: u64,
    pub live_bytes: u64,
}

impl AllocSites {
    /// The sites that allocated since the last call or hold live objects now.
    pub fn take_window(&self) -> Vec<WindowSite> {
        let figures = self.sites.snapshot();
        let scale = self.weighting.count_scale().max(1);
        let objects = |units: u64| (units + scale / 2) / scale;
        let mut last = self.last_window.lock().unwrap_or_else(|e| e.into_inner());
        let window = figures
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                let (units, bytes) = last.get(i).copied().unwrap_or((0, 0));
                // A reset of the allocated figures (the front end's) makes them smaller than last time.
                let (units, bytes) = (f.alloc_units.saturating_sub(units), f.alloc_bytes.saturating_sub(bytes));
                let site = WindowSite {
                    class_serial: f.key.class_serial,
                    trace_serial: f.key.trace_serial,
                    alloc_objects: objects(units),
                    alloc_bytes: bytes,
                    live_objects: objects(f.live_units),
                    live_bytes: f.live_bytes,
                };
                (site.alloc_bytes != 0 || site.live_bytes != 0).then_some(site)
            })
            .collect();
        *last = figures.iter().map(|f| (f.alloc_units, f.alloc_bytes)).collect();
        window
    }

    /// The sampling interval in bytes (`alloc_interval=`), 0 when every allocation is counted.
    pub fn interval_bytes(&self) -> i64 {
        self.weighting.interval_bytes()
    }
}
