//! HEAP_DUMP at each level, MONITOR_DUMP and OBJECT_DUMP, requested by a C agent (java/native/jvmpi/
//! DumpWalker.c) on Ctrl-\ and parsed record by record with the specification's sizes, on JvmpiHeap's known
//! heap and monitors: 5,000 Nodes whose values sum to 12,497,500, a monitor entered twice by "owner" that
//! "blocked" waits to enter, and one "waiter" waits on to be notified. DumpWalker enables no METHOD_ENTRY2,
//! so loaded by the layer (JDK 17) it runs without local variable access; JDK 25 needs that access for the
//! monitor "waiter" waits on, and without it (locals=n) the dump leaves only that monitor out.

mod support;

use jvm_harness::{JavaRun, Running, all_jdks, scratch};
use std::time::Duration;
use support::{Loading, build_agent, java_with_agent, java_with_layer_options, loadings};

fn field(line: &str, name: &str) -> i64 {
    let key = format!("{name}=");
    let at = line.find(&key).unwrap_or_else(|| panic!("no {name} in {line:?}")) + key.len();
    line[at..].split_whitespace().next().unwrap().parse().unwrap()
}

fn line<'a>(stdout: &'a str, prefix: &str) -> &'a str {
    stdout.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no line {prefix:?} in:\n{stdout}"))
}

#[test]
fn heap_monitor_and_object_dumps_parse_and_match_the_known_heap() {
    let build = scratch("jvmpi-dumps-build");
    let lib = build_agent("DumpWalker", build.path());
    for jdk in all_jdks() {
        for loading in loadings(&jdk) {
            let what = format!("JDK {} {loading:?}", jdk.version);
            let dir = scratch("jvmpi-dumps");
            let running = java_with_agent(&jdk, dir.path(), &lib, "JvmpiHeap$Node", loading).class("JvmpiHeap").spawn();
            let run = dump_on_sigquit(running, dir.path());
            let out = &run.stdout;
            assert!(!out.contains("ERROR"), "{what}: a dump did not parse:\n{out}");
            assert!(out.contains("done sum=12497500"), "{what}: the program ran:\n{out}");

            let l0 = line(out, "HEAP level=0 ");
            let l1 = line(out, "HEAP level=1 ");
            let l2 = line(out, "HEAP level=2 ");
            for l in [l1, l2] {
                assert!(field(l, "roots") > 0 && field(l, "classes") > 100, "{what}: {l}");
                assert!(field(l, "traces") >= 4, "{what}: main, owner, blocked, waiter: {l}");
                let parts =
                    field(l, "instances") + field(l, "obj_arrays") + field(l, "prim_arrays") + field(l, "classes");
                assert_eq!(field(l, "objects"), parts, "{what}: {l}");
            }
            // The three dumps are taken one after the other while the JVM runs on: the totals agree closely.
            let (n0, n2) = (field(l0, "objects"), field(l2, "objects"));
            assert!((n0 - n2).abs() * 20 < n2, "{what}: level 0 has {n0} objects, level 2 {n2}");
            let nodes1 = line(out, "HEAP level=1 class=JvmpiHeap$Node");
            let nodes2 = line(out, "HEAP level=2 class=JvmpiHeap$Node");
            assert_eq!(field(nodes1, "count"), 5_000, "{what}: {nodes1}");
            assert_eq!(field(nodes2, "count"), 5_000, "{what}: {nodes2}");
            assert_eq!(field(nodes1, "value_sum"), 0, "{what}: level 1 leaves the int out");
            assert_eq!(field(nodes2, "value_sum"), 12_497_500, "{what}: {nodes2}");

            let held = line(out, "MONITOR java owner=owner ");
            assert!(held.contains("entries=2 enter_waiters=blocked "), "{what}: {held}");
            // The monitor "waiter" waits on, free; JDK 17 and 21's JVMTI also lists the waiter as waiting to enter.
            let signal = out
                .lines()
                .find(|l| l.starts_with("MONITOR java owner=none entries=0 ") && l.contains("notify_waiters=waiter"))
                .unwrap_or_else(|| panic!("{what}: no monitor with \"waiter\" waiting to be notified:\n{out}"));
            assert!(signal.ends_with("notify_waiters=waiter"), "{what}: {signal}");
            // The walker's own raw monitor, entered twice on the thread that handles Ctrl-\.
            let raw = line(out, "MONITOR raw name=walker-held ");
            assert!(raw.contains(" owner=Signal Dispatcher entries=2 "), "{what}: {raw}");
            assert_eq!(field(line(out, "MONITOR thread=blocked"), "status"), 2, "{what}: JVMPI_THREAD_MONITOR_WAIT");
            let traces = line(out, "MONITOR traces=");
            assert!(field(traces, "with_frames") >= 4, "{what}: {traces}");

            let object = line(out, "OBJECT ");
            assert!(object.starts_with("OBJECT class=JvmpiHeap$Node bytes=12 "), "{what}: int + reference: {object}");
            assert!((0..5_000).contains(&field(object, "first_int")), "{what}: {object}");
        }
    }
}

#[test]
fn monitor_dump_without_local_variable_access_leaves_out_only_the_waited_on_monitor_on_jdk_25() {
    let Some(jdk) = all_jdks().into_iter().find(|j| j.version == "25") else {
        panic!("this test needs JDK 25 (/usr/lib/jvm/temurin-25-jdk-amd64)");
    };
    let build = scratch("jvmpi-dumps-nolocals-build");
    let lib = build_agent("DumpWalker", build.path());
    let dir = scratch("jvmpi-dumps-nolocals");
    let running = java_with_layer_options(&jdk, dir.path(), &lib, "JvmpiHeap$Node", Loading::Xrun, "locals=n")
        .class("JvmpiHeap")
        .spawn();
    let run = dump_on_sigquit(running, dir.path());
    let out = &run.stdout;
    assert!(!out.contains("ERROR"), "a dump did not parse:\n{out}");
    let held = line(out, "MONITOR java owner=owner ");
    assert!(held.contains("entries=2 enter_waiters=blocked "), "{held}");
    assert!(
        !out.contains("notify_waiters=waiter"),
        "JDK 25 names the waited-on monitor only through the wait frame:\n{out}"
    );
    assert!(line(out, "MONITOR raw name=walker-held ").contains(" entries=2 "), "{out}");
    assert_eq!(field(line(out, "MONITOR thread=blocked"), "status"), 2, "JVMPI_THREAD_MONITOR_WAIT");
    assert!(field(line(out, "MONITOR traces="), "with_frames") >= 4, "{out}");
}

/// Once JvmpiHeap is ready: SIGQUIT (the walker asks for its dumps), then the program is released and must
/// end well.
fn dump_on_sigquit(mut running: Running, dir: &std::path::Path) -> JavaRun {
    running.wait_for_stdout("ready", Duration::from_secs(60));
    running.signal(libc::SIGQUIT);
    running.wait_for_stdout("DUMPS done", Duration::from_secs(120));
    std::fs::write(dir.join("release"), b"").unwrap();
    let run = running.wait();
    run.assert_success();
    run
}
