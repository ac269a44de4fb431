//! The JVMPI specification's per-thread method counter (java/native/jvmpi/MethodCounter.c): THREAD_START
//! sets up thread-local storage, METHOD_ENTRY counts in it, THREAD_END prints it. Three threads of
//! JvmpiThreads run the same code calling `work` 0, 1,000 and 3,000 times: their counts must differ by
//! exactly 1,000 and 2,000, and every thread that entered a method must have had its THREAD_START first.

mod support;

use jvm_harness::{all_jdks, scratch};
use std::collections::HashMap;
use support::{build_agent, java_with_agent, loadings};

fn counts(stdout: &str) -> HashMap<String, i64> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("Thread "))
        .filter_map(|l| l.strip_suffix(" methods"))
        .filter_map(|l| l.rsplit_once(" executed "))
        .map(|(name, n)| (name.to_owned(), n.parse().unwrap()))
        .collect()
}

#[test]
fn method_counts_per_thread_differ_by_the_calls_made() {
    let build = scratch("jvmpi-counter-build");
    let lib = build_agent("MethodCounter", build.path());
    for jdk in all_jdks() {
        for loading in loadings(&jdk) {
            let what = format!("JDK {} {loading:?}", jdk.version);
            let dir = scratch("jvmpi-counter");
            let run = java_with_agent(&jdk, dir.path(), &lib, "", loading).class("JvmpiThreads").run();
            run.assert_success();
            assert!(run.stdout.contains("sink=4000"), "{what}: the program ran:\n{}", run.stdout);
            assert!(!run.stdout.contains("ERROR"), "{what}: an event came before its THREAD_START:\n{}", run.stdout);
            let c = counts(&run.stdout);
            let (zero, one, three) = (c["calls-0"], c["calls-1000"], c["calls-3000"]);
            assert!(zero >= 2, "{what}: Thread.run and Worker.run at least: {c:?}");
            assert_eq!(one - zero, 1_000, "{what}: {c:?}");
            assert_eq!(three - zero, 3_000, "{what}: {c:?}");
            assert!(c.keys().any(|k| k == "main" || k == "DestroyJavaVM"), "{what}: the main thread ends too: {c:?}");
        }
    }
}
