//! The reader on real dumps from many producers (../shared/corpus/hprof; reported as skipped by name if absent).

use hprof_format::binary::{HeapRecord, HeapRecords, Record, Records, parse_header};
use std::path::PathBuf;

fn corpus() -> Option<PathBuf> {
    jvm_harness::corpus_dir()
}

/// Walks every record and heap sub-record; returns (records, heap sub-records).
fn walk(data: &[u8]) -> Result<(usize, usize), String> {
    let h = parse_header(data).map_err(|e| e.to_string())?;
    let (mut records, mut subs) = (0, 0);
    for raw in Records::new(data, &h) {
        let raw = raw.map_err(|e| e.to_string())?;
        records += 1;
        if let Record::HeapDump { body, .. } = Record::decode(&raw, h.id_size).map_err(|e| e.to_string())? {
            for sub in HeapRecords::new(body, raw.body_offset(), h.id_size) {
                let (_, rec) = sub.map_err(|e| e.to_string())?;
                if let HeapRecord::ClassDump(c) = &rec {
                    assert!(c.class_id != 0);
                }
                subs += 1;
            }
        }
    }
    Ok((records, subs))
}

#[test]
fn every_uncompressed_corpus_dump_parses_completely() {
    let Some(dir) = corpus() else { return };
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !path.is_file() || name.ends_with(".gz") || name.ends_with(".phd") || name.ends_with(".md") {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        let (records, subs) = walk(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(records > 10 && subs > 1000, "{name}: {records} records, {subs} sub-records");
        seen += 1;
    }
    assert!(seen >= 10, "only {seen} dumps found");
}

#[test]
fn damaged_and_foreign_files_are_refused_with_offsets() {
    let Some(dir) = corpus() else { return };
    let e = walk(&std::fs::read(dir.join("damaged/trunc50_mat_oracle_jdk8_05_x64.hprof")).unwrap()).unwrap_err();
    assert!(e.contains("truncated") && e.contains("offset"), "{e}");
    let e = walk(&std::fs::read(dir.join("damaged/bad_len_first_record_mat_oracle_jdk8_05_x64.hprof")).unwrap())
        .unwrap_err();
    assert!(e.contains("2147483647") && e.contains("offset 31"), "{e}");
    let e = walk(&std::fs::read(dir.join("mat_ibm_jdk6_32_heapdump.phd")).unwrap()).unwrap_err();
    assert!(e.contains("Portable Heap Dump"), "{e}");
}
