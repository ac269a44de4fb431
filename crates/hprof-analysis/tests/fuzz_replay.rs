//! The `analysis` fuzz target (fuzz/fuzz_targets/analysis.rs) on stable, in `make fuzz`: every file of its
//! corpus (the committed seeds in fuzz/seeds/analysis: small dumps with a chain, a class hierarchy with
//! inherited fields, a weak reference, arrays and roots of every kind; the record target's seeds; whatever
//! `cargo fuzz run analysis` has added in fuzz/corpus or found in fuzz/artifacts), then a bounded,
//! deterministic mutation run over them (flipped bits, rewritten lengths, cut tails). Any input must give
//! results or an error, never a panic. `cargo test -p hprof-analysis --test fuzz_replay -- --ignored`
//! rewrites the seeds.

use hprof_format::binary::{Body, FrameRecord, RecordWriter};
use hprof_format::tags::heap as sub;
use jvm_harness::mutation::{Rng, mutate};
use std::path::PathBuf;

include!("../../../fuzz/fuzz_targets/analysis_exercise.rs");

fn seeds_dir() -> PathBuf {
    jvm_harness::repo_root().join("fuzz/seeds/analysis")
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    let root = jvm_harness::repo_root();
    let mut out = Vec::new();
    for dir in [
        seeds_dir(),
        root.join("fuzz/seeds/records"),
        root.join("fuzz/corpus/analysis"),
        root.join("fuzz/artifacts/analysis"),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_file() {
                out.push((p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_corpus_input_analyses_or_fails_cleanly() {
    let corpus = corpus();
    let seeds: Vec<_> = corpus.iter().filter(|(n, _)| n.starts_with("analysis-")).collect();
    assert!(seeds.len() >= 2, "fuzz/seeds/analysis has {} seeds (want the committed analysis-*.hprof)", seeds.len());
    for (name, data) in &corpus {
        let objects = exercise_analysis(data);
        if name.starts_with("analysis-") {
            assert!(objects >= 8, "{name}: only {objects} objects in the graph");
        }
    }
}

#[test]
fn mutated_corpus_inputs_never_panic() {
    const ROUNDS: usize = 100_000;
    for (i, (name, data)) in corpus().iter().enumerate() {
        let mut rng = Rng(0x2545_F491_4F6C_DD1D ^ (i as u64 + 1));
        for round in 0..ROUNDS {
            let mut m = data.clone();
            mutate(&mut rng, &mut m);
            let r = std::panic::catch_unwind(|| exercise_analysis(&m));
            assert!(r.is_ok(), "{name}, mutation round {round}: the analysis panicked");
        }
    }
}

/// A dump for the analysis: `Object`, a `Reference` with a weak `referent`, `Base { Object a; int n }`,
/// `Node extends Base { Node next; long v }`, a chain of `Node`s, arrays of both kinds, and roots.
fn seed_dump(id_size: u32, chain: u64) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new(), "JAVA PROFILE 1.0.2", id_size, 1_700_000_000_000).unwrap();
    let names = ["java.lang.Object", "java.lang.ref.Reference", "Base", "Node", "referent", "a", "n", "next", "v"];
    for (i, n) in names.iter().enumerate() {
        w.utf8(i as u64 + 1, n).unwrap();
    }
    w.utf8(20, "main").unwrap();
    w.utf8(21, "run").unwrap();
    w.utf8(22, "()V").unwrap();
    let classes = [(0x1000, 1), (0x1100, 2), (0x1200, 3), (0x1300, 4)];
    for (i, (id, name)) in classes.iter().enumerate() {
        w.load_class(i as u32 + 1, *id, 0, *name).unwrap();
    }
    w.frame(&FrameRecord {
        frame_id: 0x50,
        method_name_id: 21,
        signature_id: 22,
        source_file_id: 0,
        class_serial: 4,
        line: 7,
    })
    .unwrap();
    w.trace(300001, 1, &[0x50]).unwrap();
    w.start_thread(1, 0x2000, 300001, 20, 20, 20).unwrap();
    w.cpu_samples(3, &[(3, 300001)]).unwrap();
    let idn = id_size;
    let mut b = Body::new(id_size);
    let class = |b: &mut Body, id: u64, sup: u64, fields: &[(u64, u8)]| {
        b.u1(sub::CLASS_DUMP).id(id).u4(1).id(sup).id(0).id(0).id(0).id(0).id(0).u4(0).u2(0).u2(0);
        b.u2(fields.len() as u16);
        for &(n, t) in fields {
            b.id(n).u1(t);
        }
    };
    class(&mut b, 0x1000, 0, &[]);
    class(&mut b, 0x1100, 0x1000, &[(5, 2)]);
    class(&mut b, 0x1200, 0x1000, &[(6, 2), (7, 10)]);
    class(&mut b, 0x1300, 0x1200, &[(8, 2), (9, 11)]);
    b.u1(sub::ROOT_THREAD_OBJECT).id(0x2000).u4(1).u4(300001);
    b.u1(sub::ROOT_JAVA_FRAME).id(0x4000).u4(1).u4(0);
    b.u1(sub::ROOT_STICKY_CLASS).id(0x1300);
    b.u1(sub::INSTANCE_DUMP).id(0x2000).u4(1).id(0x1000).u4(0);
    // Node values: its own block (next, v), then Base's (a, n).
    let node_bytes = idn + 8 + idn + 4;
    for i in 0..chain {
        let id = 0x4000 + 16 * i;
        let next = if i + 1 < chain { id + 16 } else { 0 };
        b.u1(sub::INSTANCE_DUMP).id(id).u4(1).id(0x1300).u4(node_bytes).id(next).u8(i).id(0x6000).u4(i as u32);
    }
    b.u1(sub::INSTANCE_DUMP).id(0x5000).u4(1).id(0x1100).u4(idn).id(0x4000);
    b.u1(sub::OBJECT_ARRAY_DUMP).id(0x6000).u4(1).u4(3).id(0x1300).id(0x4000).id(0).id(0x5000);
    b.u1(sub::PRIMITIVE_ARRAY_DUMP).id(0x6100).u4(1).u4(3).u1(10).u4(1).u4(2).u4(3);
    b.u1(sub::ROOT_JNI_GLOBAL).id(0x6100).id(0x9);
    w.heap_dump_segment(b.as_slice()).unwrap();
    w.heap_dump_end().unwrap();
    w.into_inner()
}

#[test]
#[ignore = "rewrites the committed seeds in fuzz/seeds/analysis"]
fn write_seed_corpus() {
    let dir = seeds_dir();
    std::fs::create_dir_all(&dir).unwrap();
    for (name, id_size, chain) in [("analysis-ids8.hprof", 8, 6), ("analysis-ids4.hprof", 4, 12)] {
        std::fs::write(dir.join(name), seed_dump(id_size, chain)).unwrap();
    }
}
