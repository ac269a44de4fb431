//! The whole analysis on arbitrary bytes: scan, histogram, object graph, dominators, paths.
#![no_main]

use hprof_analysis::dominators::DominatorTree;
use hprof_analysis::heap::{HeapGraph, histogram};
use hprof_analysis::source::Source;
use hprof_analysis::{Dump, Quiet};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(d) = Dump::from_source(Source::from_vec(data.to_vec()), &Quiet) else { return };
    let _ = histogram(&d, &Quiet);
    if let Ok(g) = HeapGraph::build(&d, true, &Quiet) {
        if let Ok(t) = DominatorTree::compute(&g, &Quiet) {
            let _ = t.retained_by_class(&g);
        }
        if !g.is_empty() {
            let _ = hprof_analysis::paths::shortest_path(&g, (g.len() - 1) as u32);
        }
    }
});
