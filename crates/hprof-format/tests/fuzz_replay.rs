//! The `records` fuzz target (fuzz/fuzz_targets/records.rs) on stable, in every `make test`: every file of
//! its corpus (the committed seeds in fuzz/seeds/records, small dumps covering every record and sub-record
//! kind, plus whatever `cargo fuzz run records` has added in fuzz/corpus or found in fuzz/artifacts), then a bounded, deterministic mutation run over them
//! (flipped bits, rewritten lengths, cut tails). Any input must give records or an error, never a panic or
//! a huge allocation. `cargo test -p hprof-format --test fuzz_replay -- --ignored` rewrites the seeds.

use hprof_format::binary::{Body, FrameRecord, RecordWriter};
use hprof_format::tags::{heap as sub, record};
use jvm_harness::mutation::{Rng, mutate};
use std::path::PathBuf;

include!("../../../fuzz/fuzz_targets/records_exercise.rs");

fn seeds_dir() -> PathBuf {
    jvm_harness::repo_root().join("fuzz/seeds/records")
}

/// The committed seeds and anything cargo-fuzz left beside them (its crash artifacts too, if any).
fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let root = jvm_harness::repo_root();
    for dir in [seeds_dir(), root.join("fuzz/corpus/records"), root.join("fuzz/artifacts/records")] {
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
fn every_corpus_input_parses_or_fails_cleanly() {
    let corpus = corpus();
    let seeds: Vec<_> = corpus.iter().filter(|(n, _)| n.starts_with("seed-")).collect();
    assert!(seeds.len() >= 2, "fuzz/seeds/records has {} seeds (want the committed seed-*.hprof)", seeds.len());
    for (name, data) in &corpus {
        let subs = exercise_records(data);
        if name.starts_with("seed-") {
            // The seeds are whole dumps: every sub-record must be read, or the mutations below test little.
            assert!(subs >= 12, "{name}: only {subs} heap sub-records read");
        }
    }
}

#[test]
fn mutated_corpus_inputs_never_panic() {
    const ROUNDS: usize = 40_000;
    for (i, (name, data)) in corpus().iter().enumerate() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (i as u64 + 1));
        for round in 0..ROUNDS {
            let mut m = data.clone();
            mutate(&mut rng, &mut m);
            let r = std::panic::catch_unwind(|| exercise_records(&m));
            assert!(r.is_ok(), "{name}, mutation round {round}: the reader panicked");
        }
    }
}

/// One dump with every record kind the reader knows and every heap sub-record kind, at `id_size`.
fn seed_dump(id_size: u32, android: bool) -> Vec<u8> {
    let version = if android { "JAVA PROFILE 1.0.3" } else { "JAVA PROFILE 1.0.2" };
    let mut w = RecordWriter::new(Vec::new(), version, id_size, 1_700_000_000_000).unwrap();
    let names = ["java.lang.Object", "Point", "x", "next", "main", "()V", "Point.java", "main-thread", "g", "s"];
    for (i, n) in names.iter().enumerate() {
        w.utf8(i as u64 + 1, n).unwrap();
    }
    w.load_class(1, 0x1000, 0, 1).unwrap();
    w.load_class(2, 0x1100, 0, 2).unwrap();
    w.frame(&FrameRecord {
        frame_id: 0x50,
        method_name_id: 5,
        signature_id: 6,
        source_file_id: 7,
        class_serial: 2,
        line: 12,
    })
    .unwrap();
    w.trace(1, 1, &[0x50]).unwrap();
    w.start_thread(1, 0x2000, 1, 8, 9, 9).unwrap();
    w.control_settings(3, 4).unwrap();
    w.heap_summary(100, 2, 200, 4).unwrap();
    w.cpu_samples(3, &[(2, 1), (1, 1)]).unwrap();
    let mut b = Body::new(id_size);
    b.u1(sub::ROOT_UNKNOWN).id(0x3000);
    b.u1(sub::ROOT_JNI_GLOBAL).id(0x3000).id(0x9);
    b.u1(sub::ROOT_JNI_LOCAL).id(0x3000).u4(1).u4(0);
    b.u1(sub::ROOT_JAVA_FRAME).id(0x3000).u4(1).u4(0);
    b.u1(sub::ROOT_NATIVE_STACK).id(0x3000).u4(1);
    b.u1(sub::ROOT_STICKY_CLASS).id(0x1000);
    b.u1(sub::ROOT_THREAD_BLOCK).id(0x2000).u4(1);
    b.u1(sub::ROOT_MONITOR_USED).id(0x3000);
    b.u1(sub::ROOT_THREAD_OBJECT).id(0x2000).u4(1).u4(1);
    // java.lang.Object, then Point { int x; Point next; static int s = 7; constant 1 = long 5 }.
    b.u1(sub::CLASS_DUMP).id(0x1000).u4(0).id(0).id(0).id(0).id(0).id(0).id(0).u4(0).u2(0).u2(0).u2(0);
    b.u1(sub::CLASS_DUMP).id(0x1100).u4(1).id(0x1000).id(0).id(0).id(0).id(0).id(0).u4(8 + id_size);
    b.u2(1).u2(1).u1(11).u8(5);
    b.u2(1).id(10).u1(10).u4(7);
    b.u2(2).id(3).u1(10).id(4).u1(2);
    b.u1(sub::INSTANCE_DUMP).id(0x3000).u4(1).id(0x1100).u4(4 + id_size).u4(42).id(0x3100);
    b.u1(sub::INSTANCE_DUMP).id(0x3100).u4(1).id(0x1100).u4(4 + id_size).u4(43).id(0);
    b.u1(sub::OBJECT_ARRAY_DUMP).id(0x3200).u4(1).u4(2).id(0x1000).id(0x3000).id(0x3100);
    b.u1(sub::PRIMITIVE_ARRAY_DUMP).id(0x3300).u4(1).u4(3).u1(10).u4(1).u4(2).u4(3);
    b.u1(sub::PRIMITIVE_ARRAY_DUMP).id(0x3400).u4(1).u4(2).u1(11).u8(1).u8(u64::MAX);
    if android {
        b.u1(sub::HEAP_DUMP_INFO).u4(u32::from(b'A')).id(9);
        b.u1(sub::ROOT_INTERNED_STRING).id(0x3000);
        b.u1(sub::ROOT_FINALIZING).id(0x3000);
        b.u1(sub::ROOT_DEBUGGER).id(0x3000);
        b.u1(sub::ROOT_REFERENCE_CLEANUP).id(0x3000);
        b.u1(sub::ROOT_VM_INTERNAL).id(0x3000);
        b.u1(sub::ROOT_JNI_MONITOR).id(0x3000).u4(1).u4(0);
        b.u1(sub::UNREACHABLE).id(0x3500);
        b.u1(sub::PRIMITIVE_ARRAY_NODATA).id(0x3600).u4(1).u4(9).u1(8);
    }
    let body = b.into_vec();
    // Two segments, split between sub-records, as a segmented dump is.
    w.heap_dump_segment(&body[..1 + id_size as usize]).unwrap();
    w.heap_dump_segment(&body[1 + id_size as usize..]).unwrap();
    w.heap_dump_end().unwrap();
    w.record(record::HEAP_DUMP, &body).unwrap();
    w.end_thread(1).unwrap();
    w.unload_class(2).unwrap();
    w.into_inner()
}

#[test]
#[ignore = "rewrites the committed seeds in fuzz/seeds/records"]
fn write_seed_corpus() {
    let dir = seeds_dir();
    std::fs::create_dir_all(&dir).unwrap();
    for (name, id_size, android) in
        [("seed-ids8.hprof", 8, false), ("seed-ids4.hprof", 4, false), ("seed-android.hprof", 4, true)]
    {
        std::fs::write(dir.join(name), seed_dump(id_size, android)).unwrap();
    }
}
