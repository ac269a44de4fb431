// The body of the `analysis` fuzz target, shared with crates/hprof-analysis/tests/fuzz_replay.rs (which
// replays fuzz/seeds/analysis and fuzz/corpus/analysis on stable in `make fuzz`) through `include!`: the
// whole pipeline, scan, histogram, graph, dominators, paths and their field names. Returns how many objects
// the graph had, so that the replay can check that its seeds reach the heap dump.
fn exercise_analysis(data: &[u8]) -> usize {
    use hprof_analysis::dominators::DominatorTree;
    use hprof_analysis::heap::{HeapGraph, histogram};
    use hprof_analysis::source::Source;
    use hprof_analysis::{Dump, Quiet};
    let Ok(d) = Dump::from_source(Source::from_vec(data.to_vec()), &Quiet) else { return 0 };
    for t in 0..d.threads.len().min(4) {
        let _ = d.trace_frames(d.threads[t].trace_serial);
    }
    let _ = histogram(&d, &Quiet);
    let Ok(g) = HeapGraph::build(&d, true, &Quiet) else { return 0 };
    if let Ok(t) = DominatorTree::compute(&g, &Quiet) {
        let _ = t.retained_by_class(&g);
    }
    if !g.is_empty() {
        let target = (g.len() - 1) as u32;
        if let Some(p) = hprof_analysis::paths::shortest_path(&g, target) {
            for w in p.nodes.windows(2) {
                let _ = g.edge_label(&d, w[0], w[1]);
            }
        }
        let _ = hprof_analysis::paths::shortest_paths(&g, target, 3);
        for v in 0..g.len().min(64) as u32 {
            let _ = g.describe(v);
            for &w in g.refs(v) {
                let _ = g.edge_label(&d, v, w);
            }
        }
    }
    g.len()
}
