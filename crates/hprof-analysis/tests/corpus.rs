//! The analysis on real dumps from many producers (../shared/corpus/hprof; reported as skipped by name if
//! absent), against the figures other tools computed for them (oracles/).

use hprof_analysis::dominators::DominatorTree;
use hprof_analysis::heap::{HeapGraph, histogram};
use hprof_analysis::{Dump, Error, Quiet};
use std::collections::HashMap;
use std::path::PathBuf;

fn corpus() -> Option<PathBuf> {
    jvm_harness::corpus_dir()
}

fn open(name: &str) -> Option<Dump> {
    let dir = corpus()?;
    Some(Dump::open(&dir.join(name), &Quiet).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// (instances, bytes) by class name.
fn histo(d: &Dump) -> HashMap<String, (u64, u64)> {
    let h = histogram(d, &Quiet).unwrap();
    assert!(h.damage.is_none(), "{:?}", h.damage);
    h.rows.into_iter().map(|r| (r.class_name, (r.instances, r.shallow_bytes))).collect()
}

#[test]
fn compressed_oops_histogram_matches_jmap_exactly() {
    let Some(d) = open("mat_sun_jdk6_30_x64_compressedOops.hprof") else { return };
    let h = histo(&d);
    let hi = histogram(&d, &Quiet).unwrap();
    assert!(hi.layout.compressed_oops(), "compressed oops not detected");
    // From oracles/mat_sun_jdk6_30_x64_compressedOops.notes.txt (jmap -histo of the same VM).
    for (class, n, bytes) in [
        ("char[]", 842, 114152),
        ("byte[]", 394, 75056),
        ("short[]", 491, 31448),
        ("java.lang.String", 876, 28032),
        ("int[]", 360, 19216),
        ("java.lang.Object[]", 311, 13400),
        ("java.net.URL", 43, 2752),
        ("java.util.LinkedHashMap$Entry", 51, 2040),
        ("java.lang.String[]", 48, 1952),
        ("java.util.HashMap", 18, 864),
    ] {
        assert_eq!(h.get(class), Some(&(n, bytes)), "{class}");
    }
}

#[test]
fn thirty_two_bit_histogram_matches_where_jmap_saw_no_garbage() {
    let Some(d) = open("mat_sun_jdk5_13_x32.hprof") else { return };
    let h = histo(&d);
    for (class, n, bytes) in [
        ("java.lang.Object[]", 211, 8272),
        ("java.util.Hashtable$Entry", 58, 1392),
        ("java.util.HashMap$Entry[]", 15, 1200),
        ("java.lang.String[]", 28, 1200),
        ("short[]", 10, 976),
        ("java.util.Locale", 22, 704),
        ("java.util.Hashtable$Entry[]", 7, 680),
    ] {
        assert_eq!(h.get(class), Some(&(n, bytes)), "{class}");
    }
}

#[test]
fn instance_counts_match_hprof_slurp() {
    let Some(d) = open("slurp_netbeans_hprof-64.bin") else { return };
    let h = histo(&d);
    // oracles/slurp_hprof-64-result.txt (its sizes are the file's, not the VM's; counts are comparable).
    for (class, n) in [
        ("int[]", 436),
        ("char[]", 1991),
        ("byte[]", 443),
        ("java.lang.String", 1516),
        ("java.lang.Object[]", 560),
        ("java.util.LinkedList$Node", 378),
        ("java.lang.reflect.Field", 126),
        ("java.util.HashMap$Node", 212),
    ] {
        assert_eq!(h.get(class).map(|x| x.0), Some(n), "{class}");
    }
    let hi = histogram(&d, &Quiet).unwrap();
    assert_eq!(
        (hi.counts.instances, hi.counts.object_arrays, hi.counts.primitive_arrays, hi.counts.classes),
        (4149, 748, 2891, 474)
    );
    assert_eq!(hi.counts.roots, 9 + 5 + 22 + 413 + 4);
    let Some(d) = open("slurp_jhat_hprof-32.bin") else { return };
    let hi = histogram(&d, &Quiet).unwrap();
    // oracles/slurp_hprof-32-result.txt.
    assert_eq!(
        (hi.counts.instances, hi.counts.object_arrays, hi.counts.primitive_arrays, hi.counts.classes),
        (1293, 423, 849, 361)
    );
    assert_eq!(hi.counts.roots, 54 + 8 + 395 + 1 + 14 + 381 + 7 + 2);
    assert_eq!(d.traces.len(), 216);
    assert_eq!(d.frames.len(), 365);
    assert_eq!(d.string_count(), 1496);
}

#[test]
fn every_dump_gives_a_consistent_dominator_tree() {
    let Some(dir) = corpus() else { return };
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !p.is_file() || name.ends_with(".md") || name.ends_with(".phd") {
            continue;
        }
        let d = Dump::open(&p, &Quiet).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(d.damage.is_none(), "{name}: {:?}", d.damage);
        let g = HeapGraph::build(&d, false, &Quiet).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(g.damage.is_none(), "{name}: {:?}", g.damage);
        // By default the tree holds what GC roots reach, and its top level retains exactly that.
        let t = DominatorTree::compute(&g, &Quiet).unwrap();
        let top: u64 = t.children_of(None).iter().map(|&v| t.retained[v as usize]).sum();
        assert_eq!((top, t.tree_bytes), (t.reachable_bytes, t.reachable_bytes), "{name}");
        let t = DominatorTree::compute_with(&g, hprof_analysis::dominators::Unreachable::Kept, &Quiet).unwrap();
        // Kept: every object is in the tree; the top level retains everything; a dominator retains at
        // least what each child does.
        let total: u64 = g.shallow.iter().map(|&s| s as u64).sum();
        assert_eq!(t.total_bytes, total, "{name}");
        let top: u64 = t.children_of(None).iter().map(|&v| t.retained[v as usize]).sum();
        assert_eq!(top, total, "{name}");
        for v in 0..g.len() as u32 {
            let d = t.idom[v as usize];
            assert_ne!(d, DominatorTree::UNREACHABLE, "{name}");
            if d != DominatorTree::ROOT {
                assert!(t.retained[d as usize] > t.retained[v as usize], "{name}");
            }
        }
        // The streaming histogram and the graph agree.
        let h = histogram(&d, &Quiet).unwrap();
        assert_eq!(h.total_bytes(), total, "{name}");
        assert_eq!(h.total_instances(), g.len() as u64, "{name}");
        // Old dumps were written without a GC first and hold garbage, so no ratio is asserted here.
        assert!(t.reachable > 100, "{name}: only {} of {} reachable", t.reachable, g.len());
        seen += 1;
    }
    assert!(seen >= 13, "{seen} dumps");
}

#[test]
fn non_hprof_and_damaged_files_are_refused_with_offsets() {
    let Some(dir) = corpus() else { return };
    match Dump::open(&dir.join("mat_ibm_jdk6_32_heapdump.phd"), &Quiet) {
        Err(Error::NotHprof(m)) => assert!(m.contains("Portable Heap Dump"), "{m}"),
        other => panic!("PHD accepted: {:?}", other.err()),
    }
    let d = Dump::open(&dir.join("damaged/bad_len_first_record_mat_oracle_jdk8_05_x64.hprof"), &Quiet).unwrap();
    let e = d.damage.as_ref().expect("damage");
    assert_eq!(e.offset, 31);
    assert!(e.message.contains("STRING") && e.message.contains("2147483647"), "{e}");

    let d = Dump::open(&dir.join("damaged/trunc50_mat_oracle_jdk8_05_x64.hprof"), &Quiet).unwrap();
    let e = d.damage.as_ref().expect("damage");
    assert!(e.message.contains("HEAP DUMP"), "{e}");
    // Partial results: the objects before the cut.
    let h = histogram(&d, &Quiet).unwrap();
    assert!(h.counts.objects() > 1000, "{:?}", h.counts);
    assert!(h.damage.is_some());
    let g = HeapGraph::build(&d, false, &Quiet).unwrap();
    DominatorTree::compute(&g, &Quiet).unwrap();
}

#[test]
fn gzip_dumps_are_read_transparently() {
    let Some(d) = open("mat_openjdk_jdk11_04_x64.hprof.gz") else { return };
    assert!(d.source.was_gzip);
    let h = histogram(&d, &Quiet).unwrap();
    assert_eq!(h.counts.classes, 1912);
    assert!(h.counts.objects() > 180_000);
}

#[test]
fn bzip2_xz_and_zstd_dumps_read_like_the_plain_file() {
    use std::io::{BufReader, Write};
    let Some(dir) = corpus() else { return };
    let plain_path = dir.join("mat_oracle_jdk8_05_x64.hprof");
    let plain = std::fs::read(&plain_path).unwrap();
    let expected = histo(&Dump::open(&plain_path, &Quiet).unwrap());
    let scratch = jvm_harness::scratch("analysis-compressed");
    let mut bz = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    bz.write_all(&plain).unwrap();
    let mut xz = Vec::new();
    lzma_rs::xz_compress(&mut BufReader::new(&plain[..]), &mut xz).unwrap();
    let mut zst = Vec::new();
    ruzstd::encoding::compress(&plain[..], &mut zst, ruzstd::encoding::CompressionLevel::Fastest);
    // Two zstd frames back to back, as `zstd -T` and concatenated files have them.
    let (a, b) = plain.split_at(plain.len() / 2);
    let mut two = Vec::new();
    ruzstd::encoding::compress(a, &mut two, ruzstd::encoding::CompressionLevel::Fastest);
    ruzstd::encoding::compress(b, &mut two, ruzstd::encoding::CompressionLevel::Fastest);
    for (name, bytes, kind) in
        [("d.bz2", bz.finish().unwrap(), "bzip2"), ("d.xz", xz, "xz"), ("d.zst", zst, "zstd"), ("d2.zst", two, "zstd")]
    {
        let p = scratch.path().join(name);
        std::fs::write(&p, &bytes).unwrap();
        let d = Dump::open(&p, &Quiet).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(d.source.compression, Some(kind));
        assert_eq!(d.data(), &plain[..], "{name}");
        assert_eq!(histo(&d), expected, "{name}");
    }
    // Damaged compressed data is named as such.
    let p = scratch.path().join("bad.xz");
    std::fs::write(&p, [0xfd, b'7', b'z', b'X', b'Z', 0, 1, 2, 3]).unwrap();
    let e = Dump::open(&p, &Quiet).err().expect("a damaged xz file is refused").to_string();
    assert!(e.contains("xz data is damaged"), "{e}");
}

#[test]
fn weak_referents_are_not_retained() {
    let Some(d) = open("mat_sun_jdk6_30_x64_compressedOops.hprof") else { return };
    let g = HeapGraph::build(&d, false, &Quiet).unwrap();
    let t = DominatorTree::compute(&g, &Quiet).unwrap();
    let mut seen = 0;
    for v in 0..g.len() as u32 {
        let name = g.class_name(v);
        if name == "java.lang.ref.WeakReference" || name == "java.lang.ref.SoftReference" {
            // Referent left out: a Reference's own fields (queue, next) point at shared objects, so it
            // retains only itself here.
            assert!(
                !g.refs(v).iter().any(|&w| g.class_name(w) == "java.lang.String" && t.idom[w as usize] == v),
                "{name} retains its referent"
            );
            seen += 1;
        }
    }
    assert!(seen > 0);
}

#[test]
fn releasing_references_gives_the_same_tree() {
    for name in ["mat_oracle_jdk8_05_x64.hprof", "mat_sun_jdk6_18_x64.hprof", "perflib_dialer.android-hprof"] {
        let Some(d) = open(name) else { return };
        let g = HeapGraph::build(&d, false, &Quiet).unwrap();
        let t = DominatorTree::compute(&g, &Quiet).unwrap();
        let mut g2 = HeapGraph::build(&d, false, &Quiet).unwrap();
        let t2 = DominatorTree::compute_releasing_references(
            &mut g2,
            hprof_analysis::dominators::Unreachable::LeftOut,
            &Quiet,
        )
        .unwrap();
        assert_eq!(t.idom, t2.idom, "{name}");
        assert_eq!(t.retained, t2.retained, "{name}");
        assert_eq!(t.retained_by_class(&g), t2.retained_by_class(&g2), "{name}");
        assert_eq!(t.children_of(None), t2.children_of(None), "{name}");
        assert_eq!(g.shallow, g2.shallow, "{name}: sizes restored");
        assert_eq!(g.class_of, g2.class_of, "{name}: classes restored");
        assert!((0..g.len() as u32).all(|v| g.ids.get(v) == g2.ids.get(v)), "{name}: ids restored");
        assert!(g2.refs(0).is_empty());
    }
}

#[test]
fn multi_member_gzip_reads_like_the_plain_file() {
    use std::io::Write;
    let Some(dir) = corpus() else { return };
    let plain = std::fs::read(dir.join("mat_sun_jdk5_13_x32.hprof")).unwrap();
    // Two gzip members back to back, as `cat a.gz b.gz` makes (and parallel gzip writers do).
    let mut gz = Vec::new();
    for half in [&plain[..plain.len() / 2], &plain[plain.len() / 2..]] {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(half).unwrap();
        gz.extend(e.finish().unwrap());
    }
    let tmp = tempfile::Builder::new().suffix(".hprof.gz").tempfile().unwrap();
    std::fs::write(tmp.path(), &gz).unwrap();
    let a = Dump::open(tmp.path(), &Quiet).unwrap();
    assert!(a.source.was_gzip);
    assert_eq!(a.data(), &plain[..]);
    let b = open("mat_sun_jdk5_13_x32.hprof").unwrap();
    assert_eq!(histogram(&a, &Quiet).unwrap().rows, histogram(&b, &Quiet).unwrap().rows);
    // A damaged gzip stream is an error, not a panic.
    std::fs::write(tmp.path(), &gz[..gz.len() / 3]).unwrap();
    match Dump::open(tmp.path(), &Quiet) {
        Err(Error::Io(m)) => assert!(m.contains("gzip"), "{m}"),
        Ok(d) => assert!(d.damage.is_some()),
        Err(e) => panic!("{e}"),
    }
}
