//! One event of each family against JvmpiEvents' known behaviour, through a C agent
//! (java/native/jvmpi/EventProbe.c): METHOD_ENTRY2 with and without a receiver, METHOD_EXIT, GetCallTrace
//! inside an event, contended monitor enter/entered, MONITOR_WAIT/WAITED, OBJECT_FREE for every object that
//! died, CLASS_LOAD_HOOK with the class bytes, JNI (weak) global reference alloc/free for references the agent
//! makes, CLASS_UNLOAD of a class whose loader was dropped, and INSTRUCTION_START answering
//! JVMPI_NOT_AVAILABLE. The agent enables METHOD_ENTRY2 in JVM_OnLoad, so the layer (locals=auto) takes local
//! variable access either way it is loaded, and says so with verbose=y.

mod support;

use jvm_harness::{all_jdks, scratch};
use support::{Loading, build_agent, java_with_layer_options, loadings};

#[test]
fn each_event_family_matches_the_programs_behaviour() {
    let build = scratch("jvmpi-events-build");
    let lib = build_agent("EventProbe", build.path());
    for jdk in all_jdks() {
        for loading in loadings(&jdk) {
            let what = format!("JDK {} {loading:?}", jdk.version);
            let dir = scratch("jvmpi-events");
            let run =
                java_with_layer_options(&jdk, dir.path(), &lib, "", loading, "verbose=y").class("JvmpiEvents").run();
            run.assert_success();
            let out = &run.stdout;
            assert!(!out.contains("ERROR"), "{what}:\n{out}");
            assert!(out.contains("ENTRY2_ENABLE at=load rc=SUCCESS\n"), "{what}:\n{out}");
            let why = match loading {
                Loading::ByLayer => "locals=auto: the agent enabled METHOD_ENTRY2 in JVM_OnLoad",
                Loading::Xrun => "locals=auto: an -Xrun agent enables its events after the OnLoad phase",
            };
            let verbose = run.stderr.lines().find(|l| l.starts_with("JVMPI: can_access_local_variables"));
            assert!(
                verbose.is_some_and(|l| l.contains(&format!("taken ({why}"))
                    && l.contains("capabilities held:")
                    && l.contains(" can_access_local_variables")),
                "{what}: the verbose line:\n{}",
                run.stderr
            );
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
