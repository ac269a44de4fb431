//! How heap dumps name objects: by address (the fast way, checked before it is trusted) on every JDK we
//! support, and by tags when forced, when a check fails in the middle of a walk, or for text dumps alike —
//! the same graph, exact values, in every case.

mod heap_dump_support;

use heap_dump_support::HeapFile;
use heap_dump_support::graph::{assert_graph, assert_sound};
use jvm_harness::{Java, Jdk, all_jdks, scratch};

/// Dumps HeapDumpGraph at exit with `env` set and `vm_args`; checks the dump and returns the agent's
/// stderr.
fn dump_graph_with(jdk: &Jdk, what: &str, env: &[(&str, &str)], vm_args: &[&str]) -> String {
    let dir = scratch("heap-dump-naming");
    let mut java = Java::new(jdk, dir.path()).agentpath("heap=dump,format=b").class("HeapDumpGraph");
    for (k, v) in [("HPROF_HEAP_DUMP_STATS", "1")].iter().chain(env) {
        java = java.env(k, v);
    }
    for arg in vm_args {
        java = java.vm_arg(arg);
    }
    let run = java.run();
    run.assert_success();
    assert!(!run.stderr.contains("HPROF ERROR"), "{what}:\n{}", run.stderr);
    assert!(!run.stderr.contains("could not be placed"), "{what}:\n{}", run.stderr);
    let file = HeapFile::parse(&run.read_bytes("java.hprof"));
    assert_eq!(file.dumps.len(), 1, "{what}");
    assert_eq!(file.unfinished_segments, 0, "{what}");
    let d = &file.dumps[0];
    assert_sound(&file, d, what);
    assert_graph(&file, d, what);
    run.stderr
}

fn dump_graph(jdk: &Jdk, what: &str, env: &[(&str, &str)]) -> String {
    dump_graph_with(jdk, what, env, &[])
}

#[test]
fn objects_are_named_by_address_with_fields_read_from_memory_on_every_jdk() {
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let stderr = dump_graph(&jdk, &what, &[]);
        assert!(
            stderr.contains("; ids: object addresses, fields read from memory"),
            "{what}: the dump must have used object addresses:\n{stderr}"
        );
    }
}

#[test]
fn forced_tags_dump_the_same_graph() {
    for jdk in all_jdks() {
        let what = format!("JDK {}, tags forced", jdk.version);
        let stderr = dump_graph(&jdk, &what, &[("HPROF_HEAP_DUMP_TAGS", "1")]);
        assert!(stderr.contains("; ids: tags (HPROF_HEAP_DUMP_TAGS is set)"), "{what}:\n{stderr}");
    }
}

#[test]
fn a_check_failing_in_the_walk_makes_it_again_with_tags() {
    for jdk in all_jdks() {
        let what = format!("JDK {}, a check failing", jdk.version);
        // Well into the walk: records were spooled, tags were taken off.
        let stderr = dump_graph(&jdk, &what, &[("HPROF_HEAP_DUMP_TEST_FAIL", "50000")]);
        assert!(
            stderr.contains("HPROF_HEAP_DUMP_TEST_FAIL is set; the heap is walked again, with tags"),
            "{what}: the failure must be reported:\n{stderr}"
        );
        assert!(stderr.contains("; ids: tags (object addresses failed a check"), "{what}:\n{stderr}");
    }
}

#[test]
fn other_collectors_and_object_layouts() {
    const ADDRESSES: &str = "; ids: object addresses, fields read from memory";
    let cases: &[(&str, &[&str], &str)] = &[
        ("17", &["-XX:+UseSerialGC"], ADDRESSES),
        ("17", &["-XX:+UseParallelGC", "-XX:-UseCompressedOops"], ADDRESSES),
        ("17", &["-XX:-UseCompressedClassPointers"], ADDRESSES),
        ("17", &["-Xmx40g"], ADDRESSES),
        ("17", &["-XX:+UseZGC"], "; ids: tags (ZGC is not a collector verified with object addresses)"),
        ("21", &["-XX:+UseParallelGC"], ADDRESSES),
        ("21", &["-XX:+UseZGC", "-XX:+ZGenerational"], "; ids: tags (ZGC is not"),
        ("25", &["-XX:+UseCompactObjectHeaders"], ADDRESSES),
        ("25", &["-XX:+UseSerialGC", "-XX:-UseCompressedClassPointers"], ADDRESSES),
        ("25", &["-XX:+UseShenandoahGC"], "; ids: tags (Shenandoah is not a collector verified"),
    ];
    let jdks = all_jdks();
    for (version, vm_args, expected) in cases {
        let Some(jdk) = jdks.iter().find(|j| j.version == *version) else { continue };
        let what = format!("JDK {version} {vm_args:?}");
        let stderr = dump_graph_with(jdk, &what, &[], vm_args);
        assert!(stderr.contains(expected), "{what}: expected {expected:?}:\n{stderr}");
    }
}
