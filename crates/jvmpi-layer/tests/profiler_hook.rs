//! The Dr. Dobb's ProfilerHook (java/native/jvmpi/ProfilerHook.c), an unmodified JVMPI agent, on real JVMs:
//! the article's own command `java -agentpath:libjvmpi.so -XrunProfilerHook Hello`, and exact instance
//! counts for the classes AllocSites allocates a known number of times, loaded both ways.

mod support;

use jvm_harness::{all_jdks, scratch};
use std::collections::HashMap;
use support::{build_agent, java_with_agent, loadings};

/// The summary's rows (name → (bytes, count)) and its two totals.
fn parse_summary(stdout: &str) -> (HashMap<String, (u64, u64)>, u64, u64) {
    let start = stdout.find("Shutdown Summary").unwrap_or_else(|| panic!("no summary in:\n{stdout}"));
    let mut rows = HashMap::new();
    let (mut memory, mut objects) = (None, None);
    for line in stdout[start..].lines().skip(2) {
        if let Some(v) = line.strip_prefix("Total Memory:\t") {
            memory = Some(v.trim().parse().unwrap());
        } else if let Some(v) = line.strip_prefix("Total Objects:\t") {
            objects = Some(v.trim().parse().unwrap());
        } else if let [size, count, name] = line.split('\t').collect::<Vec<_>>()[..] {
            rows.insert(name.to_owned(), (size.parse().unwrap(), count.parse().unwrap()));
        }
    }
    (rows, memory.expect("Total Memory line"), objects.expect("Total Objects line"))
}

#[test]
fn the_articles_command_prints_the_summary_on_every_jdk() {
    let build = scratch("jvmpi-hook-build");
    let lib = build_agent("ProfilerHook", build.path());
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("jvmpi-hook-hello");
        let run = java_with_agent(&jdk, dir.path(), &lib, "", support::Loading::Xrun).class("Hello").run();
        run.assert_success();
        assert!(!run.stderr.contains("no longer supported"), "{what}: the JVM's own JVMPI answered:\n{}", run.stderr);
        assert!(run.stdout.contains("Hello x"), "{what}: the program ran:\n{}", run.stdout);
        let (rows, memory, objects) = parse_summary(&run.stdout);
        // Hello starts one Thread and concatenates strings: both classes were defined and allocated.
        assert!(rows.get("java.lang.Thread").is_some_and(|&(_, n)| n >= 1), "{what}: {rows:?}");
        assert!(rows.get("java.lang.String").is_some_and(|&(_, n)| n >= 1), "{what}: {rows:?}");
        assert_eq!(objects, rows.values().map(|r| r.1).sum::<u64>(), "{what}: Total Objects is the rows' sum");
        assert_eq!(memory, rows.values().map(|r| r.0).sum::<u64>(), "{what}: Total Memory is the rows' sum");
    }
}

#[test]
fn counts_are_exact_for_a_known_program_loaded_either_way() {
    let build = scratch("jvmpi-hook-build");
    let lib = build_agent("ProfilerHook", build.path());
    for jdk in all_jdks() {
        for loading in loadings(&jdk) {
            let what = format!("JDK {} {loading:?}", jdk.version);
            let dir = scratch("jvmpi-hook-exact");
            let run = java_with_agent(&jdk, dir.path(), &lib, "", loading).class("AllocSites").run();
            run.assert_success();
            assert!(run.stdout.contains("kept=25500"), "{what}: the program ran:\n{}", run.stdout);
            let (rows, _, _) = parse_summary(&run.stdout);
            for (class, expected) in
                [("AllocSites$Widget", 100_000), ("AllocSites$Gadget", 70_000), ("AllocSites$Reflected", 500)]
            {
                let (bytes, count) = rows.get(class).copied().unwrap_or_else(|| panic!("{what}: no {class} row"));
                assert_eq!(count, expected, "{what}: {class} instances");
                // Every instance of a class has the same size, which JVMTI gives: at least a header's 12 bytes.
                assert!(bytes % count == 0 && bytes / count >= 12, "{what}: {class} bytes {bytes} for {count}");
            }
        }
    }
}
