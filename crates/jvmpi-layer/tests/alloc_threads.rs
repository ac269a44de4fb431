//! OBJECT_ALLOC from four threads at once (java/programs/JvmpiAllocThreads.java), through the layer's
//! per-thread path: no lock and no tag per allocation, IDs from per-thread blocks, the VM's second report
//! of a reflective allocation recognised by address. AllocCounter (java/native/jvmpi) counts the Items
//! and checks that no two got the same ID.

mod support;

use jvm_harness::{all_jdks, scratch};
use support::{Loading, build_agent, java_with_agent};

fn figure(stdout: &str, key: &str) -> u64 {
    let at = stdout.find(key).unwrap_or_else(|| panic!("no {key} in:\n{stdout}"));
    stdout[at + key.len()..].split_whitespace().next().and_then(|v| v.parse().ok()).expect("a number")
}

#[test]
fn four_threads_allocating_at_once_are_counted_exactly_with_distinct_ids() {
    let build = scratch("jvmpi-alloc-threads-build");
    let lib = build_agent("AllocCounter", build.path());
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("jvmpi-alloc-threads");
        let run = java_with_agent(&jdk, dir.path(), &lib, "JvmpiAllocThreads$Item", Loading::Xrun)
            .class("JvmpiAllocThreads")
            .run();
        run.assert_success();
        assert!(run.stdout.contains("kept=20400"), "{what}: the program ran:\n{}", run.stdout);
        // 4 × 50,000 by `new` and 4 × 100 by reflection, each counted once.
        assert_eq!(figure(&run.stdout, "TARGET allocs="), 200_400, "{what}:\n{}", run.stdout);
        assert_eq!(figure(&run.stdout, "duplicate_ids="), 0, "{what}: IDs handed out twice");
        assert!(figure(&run.stdout, "ALLOCS objects=") > 200_400, "{what}: the JDK's own allocations too");
    }
}
