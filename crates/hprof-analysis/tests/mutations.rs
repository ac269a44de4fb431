//! Corrupted dumps: real files with bytes flipped, lengths rewritten and tails cut, through the whole
//! pipeline. Every one must give results or errors, never a panic (the stable-toolchain cousin of the
//! cargo-fuzz targets in fuzz/).

use hprof_analysis::dominators::DominatorTree;
use hprof_analysis::heap::{HeapGraph, histogram};
use hprof_analysis::source::Source;
use hprof_analysis::{Dump, Quiet};
use jvm_harness::mutation::{Rng, mutate};
use std::path::PathBuf;

fn corpus_file(name: &str) -> Option<Vec<u8>> {
    let path = jvm_harness::corpus_dir()?.join(name);
    Some(std::fs::read(&path).unwrap_or_else(|e| panic!("corpus file {}: {e}", path.display())))
}

fn analyse(bytes: Vec<u8>) {
    let Ok(d) = Dump::from_source(Source::from_vec(bytes), &Quiet) else { return };
    let _ = histogram(&d, &Quiet);
    if let Ok(g) = HeapGraph::build(&d, true, &Quiet) {
        let t = DominatorTree::compute(&g, &Quiet).unwrap();
        let _ = t.retained_by_class(&g);
        if !g.is_empty() {
            let _ = hprof_analysis::paths::shortest_path(&g, (g.len() / 2) as u32);
            for v in 0..g.len().min(50) as u32 {
                for &w in g.refs(v) {
                    let _ = g.edge_label(&d, v, w);
                }
            }
        }
    }
}

#[test]
fn corrupted_dumps_never_panic() {
    for name in ["mat_sun_jdk5_13_x32.hprof", "slurp_jhat_hprof-32.bin", "mat_sun_jdk6_30_x64_compressedOops.hprof"] {
        let Some(orig) = corpus_file(name) else { return };
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ orig.len() as u64);
        for round in 0..150 {
            let mut b = orig.clone();
            if round % 4 == 3 {
                // A sub-record tag replaced: the analysis's own kind of damage.
                for _ in 0..5 {
                    let i = rng.below(b.len());
                    b[i] = [0x20, 0x21, 0x22, 0x23, 0x05, 0xFE, 0xC3][rng.below(7)];
                }
            } else {
                // Bytes flipped, lengths rewritten, tails cut, as the record reader's own fuzz replay does.
                mutate(&mut rng, &mut b);
            }
            analyse(b);
        }
    }
}

/// Inputs the cargo-fuzz `analysis` target once crashed on (tests/fuzz-regressions/).
#[test]
fn fuzz_findings_stay_fixed() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        analyse(std::fs::read(e.unwrap().path()).unwrap());
        n += 1;
    }
    assert!(n >= 1);
}
