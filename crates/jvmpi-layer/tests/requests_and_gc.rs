//! Two C agents: Requester (java/native/jvmpi/Requester.c) learns classes and threads only through
//! RequestEvent, which must answer synchronously on the calling thread with JVMPI_REQUESTED_EVENT set —
//! and still counts AllocSites' 100,000 Widgets exactly; GcStats (GcStats.c) counts GC_START / GC_FINISH
//! pairs around its three RunGC calls, runs a system thread that waits on a raw monitor, suspends and resumes
//! it, and checks the COMPILED_METHOD_LOADs the JIT causes.

mod support;

use jvm_harness::{all_jdks, scratch};
use support::{build_agent, java_with_agent, loadings};

#[test]
fn requested_events_arrive_synchronously_with_the_requested_bit() {
    let build = scratch("jvmpi-requester-build");
    let lib = build_agent("Requester", build.path());
    for jdk in all_jdks() {
        for loading in loadings(&jdk) {
            let what = format!("JDK {} {loading:?}", jdk.version);
            let dir = scratch("jvmpi-requester");
            let run = java_with_agent(&jdk, dir.path(), &lib, "AllocSites$Widget", loading).class("AllocSites").run();
            run.assert_success();
            let out = &run.stdout;
            assert!(!out.contains("ERROR"), "{what}:\n{out}");
            assert!(out.contains("kept=25500"), "{what}: the program ran:\n{out}");
            assert!(out.contains("COUNT AllocSites$Widget 100000\n"), "{what}:\n{out}");
            assert!(out.contains("REALLOC same_id=1 same_class=1 same_size=1 requested=1\n"), "{what}:\n{out}");
            assert!(out.contains("NOT_AVAILABLE method_entry=1\n"), "{what}:\n{out}");
            let requests = out.lines().find(|l| l.starts_with("REQUESTS ")).expect("REQUESTS line");
            assert!(!requests.contains("classes=0 ") && !requests.ends_with("threads=0"), "{what}: {requests}");
        }
    }
}

#[test]
fn gc_events_pair_up_and_the_utility_functions_work() {
    let build = scratch("jvmpi-gcstats-build");
    let lib = build_agent("GcStats", build.path());
    for jdk in all_jdks() {
        for loading in loadings(&jdk) {
            let what = format!("JDK {} {loading:?}", jdk.version);
            let dir = scratch("jvmpi-gcstats");
            // G1 explicitly: its heap figures are the ones GC_FINISH can give.
            let run =
                java_with_agent(&jdk, dir.path(), &lib, "", loading).vm_arg("-XX:+UseG1GC").class("JvmpiThreads").run();
            run.assert_success();
            let out = &run.stdout;
            assert!(!out.contains("ERROR"), "{what}:\n{out}");
            let gc = out.lines().find(|l| l.starts_with("GC ")).unwrap_or_else(|| panic!("{what}: no GC line:\n{out}"));
            let n = |k: &str| -> i64 {
                let at = gc.find(&format!("{k}=")).unwrap() + k.len() + 1;
                gc[at..].split_whitespace().next().unwrap().parse().unwrap()
            };
            assert!(n("starts") >= 3, "{what}: three RunGC calls: {gc}");
            assert_eq!(n("starts"), n("finishes"), "{what}: {gc}");
            assert_eq!(n("unpaired"), 0, "{what}: {gc}");
            assert!(n("used_space") > 0 && n("used_space") <= n("total_space"), "{what}: G1's figures: {gc}");
            assert!(out.contains("SYSTEM_THREAD ran=1 woke=1\n"), "{what}:\n{out}");
            assert!(out.contains("CPU main_ns>0=1\n"), "{what}:\n{out}");
            assert!(out.contains("SUSPEND suspended_bit=1 resumed_clear=1 list_ok=1 object_ok=1\n"), "{what}:\n{out}");
            assert!(
                out.contains("RAW contended_enter=1 contended_entered=1 contended_exit=1 quiet=0\n"),
                "{what}: raw monitor contention (none for a name starting with '_'):\n{out}"
            );
            let compiled = out.lines().find(|l| l.starts_with("COMPILED ")).expect("COMPILED line");
            assert!(!compiled.contains("loads=0 ") && compiled.ends_with(" bad=0"), "{what}: {compiled}");
        }
    }
}
