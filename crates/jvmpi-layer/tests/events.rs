//! One event of each family against JvmpiEvents' known behaviour, through a C agent
//! (java/native/jvmpi/EventProbe.c): METHOD_ENTRY2 with and without a receiver, METHOD_EXIT, GetCallTrace
//! inside an event, contended monitor enter/entered, MONITOR_WAIT/WAITED, OBJECT_FREE for every object that
//! died, CLASS_LOAD_HOOK with the class bytes, JNI (weak) global reference alloc/free for references the agent
//! makes, CLASS_UNLOAD of a class whose loader was dropped, and INSTRUCTION_START answering
//! JVMPI_NOT_AVAILABLE.

mod support;

use jvm_harness::{all_jdks, scratch};
use support::{build_agent, java_with_agent, loadings};

#[test]
fn each_event_family_matches_the_programs_behaviour() {
    let build = scratch("jvmpi-events-build");
    let lib = build_agent("EventProbe", build.path());
    for jdk in all_jdks() {
        for loading in loadings(&jdk) {
            let what = format!("JDK {} {loading:?}", jdk.version);
            let dir = scratch("jvmpi-events");
            let run = java_with_agent(&jdk, dir.path(), &lib, "", loading).class("JvmpiEvents").run();
            run.assert_success();
            let out = &run.stdout;
            assert!(!out.contains("ERROR"), "{what}:\n{out}");
            assert!(out.contains("touched=100 stat=100"), "{what}: the program ran:\n{out}");
            for expected in [
                "ENTRY2 touch=100 same_receiver=1 stat=100 null_receiver=1\n",
                "EXIT touch=100 stat=100\n",
                "CALLTRACE top_is_touch=1 depth>=2=1 traces=100\n",
                "FREE garbage_allocated=10000 garbage_freed=10000\n",
                "GLOBALREF alloc=1 free=1 weak_alloc=1 weak_free=1\n",
                "UNLOAD payload=1\n",
            ] {
                assert!(out.contains(expected), "{what}: expected {expected:?} in:\n{out}");
            }
            // At least the lock the program contends for; the JDK may add its own (JDK 17 sometimes does).
            let contended = out.lines().find(|l| l.starts_with("CONTENDED ")).expect("CONTENDED line");
            let count = |k: &str| contended.split_whitespace().find_map(|f| f.strip_prefix(k)).unwrap().to_owned();
            assert!(count("enter=") != "0" && count("enter=") == count("entered="), "{what}: {contended}");
            assert!(contended.ends_with("on_contender=1"), "{what}: {contended}");
            let wait = out.lines().find(|l| l.starts_with("WAIT ")).expect("WAIT line");
            assert!(wait.contains(" timeout=50 ") && wait.ends_with("waited_ms>=40=1"), "{what}: {wait}");
            let hook = out.lines().find(|l| l.starts_with("HOOK ")).expect("HOOK line");
            assert!(hook.ends_with("magic_ok=1") && !hook.contains("classes=0 "), "{what}: {hook}");
        }
    }
}
