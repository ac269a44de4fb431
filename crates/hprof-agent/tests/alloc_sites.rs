//! heap=sites on real JVMs: every allocation of AllocSites counted exactly (bytecode `new`, `newarray` and
//! reflection, which the VM also reports through VMObjectAlloc), live figures after the objects died, the
//! binary ALLOC SITES / HEAP SUMMARY records, and sampled mode's estimates.

mod report_support;

use hprof_format::binary::Record;
use jvm_harness::{Java, all_jdks, jdk17, scratch};
use report_support::{binary_records, strings_by_id, traces};
use std::collections::HashMap;

/// One SITES row.
#[derive(Debug, Clone)]
struct SiteRow {
    live_bytes: u64,
    live_objs: u64,
    alloc_bytes: u64,
    alloc_objs: u64,
    trace: u32,
    class: String,
}

/// The rows of the last SITES section, and its header line.
fn last_sites(text: &str) -> (String, Vec<SiteRow>) {
    let start = text.rfind("SITES BEGIN").expect("no SITES section");
    let end = start + text[start..].find("SITES END").expect("no SITES END");
    let mut lines = text[start..end].lines();
    let header = lines.next().unwrap().to_owned();
    let rows = lines
        .filter(|l| l.trim_start().chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 9, "malformed SITES row {l:?}");
            SiteRow {
                live_bytes: f[3].parse().unwrap(),
                live_objs: f[4].parse().unwrap(),
                alloc_bytes: f[5].parse().unwrap(),
                alloc_objs: f[6].parse().unwrap(),
                trace: f[7].parse().unwrap(),
                class: f[8].to_owned(),
            }
        })
        .collect();
    (header, rows)
}

/// (live objects, allocated objects) per class, summed over its sites.
fn per_class(rows: &[SiteRow]) -> HashMap<String, (u64, u64)> {
    let mut out: HashMap<String, (u64, u64)> = HashMap::new();
    for r in rows {
        let e = out.entry(r.class.clone()).or_default();
        e.0 += r.live_objs;
        e.1 += r.alloc_objs;
    }
    out
}

#[test]
fn every_allocation_is_counted_exactly_on_every_jdk() {
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("sites-exact");
        let run = Java::new(&jdk, dir.path()).agentpath("heap=sites,cutoff=0").class("AllocSites").run();
        run.assert_success().assert_no_crash_log();
        assert!(run.stdout.contains("kept=25500"), "{what}: the program must run:\n{}", run.stdout);
        let text = run.read("java.hprof.txt");
        let (header, rows) = last_sites(&text);
        assert!(header.starts_with("SITES BEGIN (ordered by live bytes) "), "{what}: {header}");
        let classes = per_class(&rows);
        assert_eq!(classes["AllocSites$Widget"], (25_000, 100_000), "{what}: Widgets (live, allocated)");
        assert_eq!(classes["AllocSites$Gadget"], (0, 70_000), "{what}: Gadgets (live, allocated)");
        // Reflection: the VM allocates these itself and reports them twice; each must count once.
        assert_eq!(classes["AllocSites$Reflected"], (500, 500), "{what}: Reflected (live, allocated)");
        let longs: Vec<&SiteRow> = rows.iter().filter(|r| r.class == "long[]" && r.alloc_objs == 1_000).collect();
        assert_eq!(longs.len(), 1, "{what}: one site made the 1,000 long[333]");
        assert_eq!((longs[0].alloc_bytes, longs[0].live_objs), (1_000 * 2_680, 0), "{what}: long[333] bytes");

        // Every Widget came from makeWidget: one site, its trace's top frame says so.
        let widget_rows: Vec<&SiteRow> = rows.iter().filter(|r| r.class == "AllocSites$Widget").collect();
        assert_eq!(widget_rows.len(), 1, "{what}: Widgets have one site");
        assert_eq!(widget_rows[0].live_bytes % 25_000, 0, "{what}: every Widget has the same size");
        let all_traces = traces(&text);
        let top = &all_traces[&widget_rows[0].trace].frames;
        assert!(top[0].starts_with("AllocSites.makeWidget(AllocSites.java:"), "{what}: trace {top:?}");
        assert!(top[1].starts_with("AllocSites.main(AllocSites.java:"), "{what}: trace {top:?}");
        // Ranked by live bytes: the kept Widgets lead.
        assert_eq!(rows[0].class, "AllocSites$Widget", "{what}: rank 1");
    }
}

/// `walk check: N verified, M mismatches` and the stacks the walker left to JVMTI, from the agent's
/// HPROF_ALLOC_STATS line.
fn walk_check(stderr: &str) -> (u64, u64, u64) {
    let line = stderr.lines().find(|l| l.contains("walk check:")).unwrap_or_else(|| panic!("no walk check:\n{stderr}"));
    let number_before = |marker: &str| -> u64 {
        let end = line.find(marker).unwrap_or_else(|| panic!("no {marker:?} in {line}"));
        line[..end].split_whitespace().last().unwrap().parse().unwrap()
    };
    let by_jvmti: u64 = line
        .match_indices(" by JVMTI (")
        .map(|(at, _)| line[..at].split_whitespace().last().unwrap().parse::<u64>().unwrap())
        .sum();
    (number_before(" verified"), number_before(" mismatches"), by_jvmti)
}

/// The frame walker names each stack by its frames' identities and asks JVMTI only for a stack it has not
/// seen. With HPROF_VERIFY_WALK=1 every allocation's cached site is checked against GetStackTrace's: on
/// WalkerWorkout (interpreted, C1 and C2 frames, inlining, deep recursion, reflection's call stubs mid-stack,
/// streams, exceptions, clones, several threads, virtual threads on 21+), at several depths and collectors.
#[test]
fn the_frame_walker_agrees_with_jvmti_on_every_allocation() {
    for jdk in all_jdks() {
        for (depth, gc) in [(4, "-XX:+UseG1GC"), (1, "-XX:+UseParallelGC"), (12, "-XX:+UseSerialGC")] {
            let what = format!("JDK {} depth={depth} {gc}", jdk.version);
            let dir = scratch("sites-walker");
            let run = Java::new(&jdk, dir.path())
                .vm_arg(gc)
                .agentpath(&format!("heap=sites,depth={depth}"))
                .env("HPROF_VERIFY_WALK", "1")
                .env("HPROF_ALLOC_STATS", "1")
                .class("WalkerWorkout")
                .arg("1")
                .run();
            run.assert_success().assert_no_crash_log();
            assert!(run.stdout.starts_with("done "), "{what}: {}", run.stdout);
            let (verified, mismatches, by_jvmti) = walk_check(&run.stderr);
            assert_eq!(mismatches, 0, "{what}: {verified} verified");
            assert!(verified > 1_000_000, "{what}: only {verified} allocations verified");
            assert!(by_jvmti * 1000 < verified, "{what}: {by_jvmti} of {verified} stacks left to JVMTI");
        }
    }
}

/// ZGC and Shenandoah stop their threads before VMDeath, so no collection can be forced at exit (one used
/// to hang the JVM there for good): the exit report says its live figures are the last collection's, and
/// allocated counts stay exact. Class objects may move at any time under these collectors, so the site
/// cache keys classes by serial: the walk check covers that path.
#[test]
fn concurrent_collectors_report_at_exit_without_hanging() {
    for jdk in all_jdks() {
        for gc in ["-XX:+UseZGC", "-XX:+UseShenandoahGC"] {
            let what = format!("JDK {} {gc}", jdk.version);
            let dir = scratch("sites-concurrent-gc");
            let run = Java::new(&jdk, dir.path())
                .vm_arg(gc)
                .agentpath("heap=sites,cutoff=0")
                .env("HPROF_VERIFY_WALK", "1")
                .env("HPROF_ALLOC_STATS", "1")
                .class("AllocSites")
                .timeout(std::time::Duration::from_secs(120))
                .run();
            run.assert_success().assert_no_crash_log();
            let text = run.read("java.hprof.txt");
            assert!(text.contains("(live figures as of the last garbage collection"), "{what}: the report says so");
            let (_, rows) = last_sites(&text);
            let classes = per_class(&rows);
            assert_eq!(classes["AllocSites$Widget"].1, 100_000, "{what}: Widgets allocated");
            assert_eq!(classes["AllocSites$Reflected"].1, 500, "{what}: Reflected allocated once each");
            assert!(classes["AllocSites$Widget"].0 >= 25_000, "{what}: kept Widgets are live");
            let (verified, mismatches, _) = walk_check(&run.stderr);
            assert!(verified > 100_000 && mismatches == 0, "{what}: {verified} verified, {mismatches} mismatches");
        }
    }
}

#[test]
fn default_heap_all_gives_sites_with_cutoff_and_a_heap_dump() {
    let jdk = jdk17();
    let dir = scratch("sites-all");
    let run = Java::new(&jdk, dir.path()).agentpath("file=all.txt").class("AllocSites").run();
    run.assert_success();
    let text = run.read("all.txt");
    assert!(text.contains("HEAP DUMP BEGIN"), "heap=all (the default) includes the heap dump");
    let (_, rows) = last_sites(&text);
    assert_eq!(rows[0].class, "AllocSites$Widget");
    // The default cutoff (0.0001) drops sites with no live bytes: all Gadgets are garbage.
    assert!(rows.iter().all(|r| r.class != "AllocSites$Gadget"), "dead sites are below the cutoff");
    assert!(rows.iter().all(|r| r.live_bytes > 0));
}

#[test]
fn binary_alloc_sites_and_heap_summary_match_the_program() {
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("sites-binary");
        let run = Java::new(&jdk, dir.path()).agentpath("heap=sites,format=b,cutoff=0").class("AllocSites").run();
        run.assert_success();
        let bytes = run.read_bytes("java.hprof");
        let recs = binary_records(&bytes);
        let strings = strings_by_id(&recs);
        let class_names: HashMap<u32, &str> = recs
            .iter()
            .filter_map(|r| match r {
                Record::LoadClass { serial, name_id, .. } => Some((*serial, strings[name_id].as_str())),
                _ => None,
            })
            .collect();
        let (sites, total_alloc) = recs
            .iter()
            .rev()
            .find_map(|r| match r {
                Record::AllocSites { sites, total_alloc_instances, .. } => Some((sites, *total_alloc_instances)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{what}: no ALLOC SITES record"));
        let mut widgets = (0u64, 0u64);
        for s in sites.iter().filter(|s| class_names.get(&s.class_serial) == Some(&"AllocSites$Widget")) {
            widgets.0 += s.live_instances as u64;
            widgets.1 += s.alloc_instances as u64;
        }
        assert_eq!(widgets, (25_000, 100_000), "{what}: Widgets in ALLOC SITES");
        let summary = recs.iter().rev().find_map(|r| match r {
            Record::HeapSummary { alloc_instances, live_instances, .. } => Some((*alloc_instances, *live_instances)),
            _ => None,
        });
        let (summary_alloc, summary_live) = summary.unwrap_or_else(|| panic!("{what}: no HEAP SUMMARY"));
        assert_eq!(summary_alloc, total_alloc, "{what}: HEAP SUMMARY agrees with ALLOC SITES");
        assert!(summary_alloc >= 171_500 && summary_live >= 25_500, "{what}: totals {summary_alloc}/{summary_live}");
        // Every site's trace was written before the record that names it.
        let trace_serials: Vec<u32> = recs
            .iter()
            .filter_map(|r| match r {
                Record::Trace { serial, .. } => Some(*serial),
                _ => None,
            })
            .collect();
        // (300000 is HPROF's "no trace": a thread whose stack could not be taken.)
        let missing: Vec<u32> =
            sites.iter().map(|s| s.trace_serial).filter(|t| *t != 300_000 && !trace_serials.contains(t)).collect();
        assert!(missing.is_empty(), "{what}: traces {missing:?} not written before the sites naming them");
    }
}

#[test]
fn sampled_mode_estimates_within_a_few_percent_and_says_so() {
    let jdk = jdk17();
    let dir = scratch("sites-sampled");
    // 20 rounds: 2,000,000 Widgets (64 MB) and 1,400,000 Gadgets (22 MB), sampled every 16 KiB on average.
    let run = Java::new(&jdk, dir.path())
        .agentpath("heap=sites,alloc_interval=16k,cutoff=0")
        .class("AllocSites")
        .arg("20")
        .run();
    run.assert_success();
    let text = run.read("java.hprof.txt");
    assert!(text.contains("(estimates: allocations sampled every 16384 bytes on average"), "the report says so");
    let (_, rows) = last_sites(&text);
    let classes = per_class(&rows);
    for (class, truth) in [("AllocSites$Widget", 2_000_000.0), ("AllocSites$Gadget", 1_400_000.0)] {
        let estimate = classes.get(class).map_or(0, |c| c.1) as f64;
        let error = (estimate - truth).abs() / truth;
        // About 4,000 and 1,400 samples: a 15% error is more than 5 standard deviations.
        assert!(error < 0.15, "{class}: estimated {estimate} of {truth} allocations ({:.1}% off)", error * 100.0);
    }
}

#[test]
fn thread_churn_with_every_capability_neither_crashes_nor_loses_counts() {
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("sites-churn");
        let run = Java::new(&jdk, dir.path())
            .agentpath("heap=sites,cpu=samples,interval=1,monitor=y,cutoff=0")
            .class("ThreadChurn")
            .run();
        run.assert_success().assert_no_crash_log();
        assert!(run.stdout.contains("threads=2000"), "{what}: {}", run.stdout);
        let text = run.read("java.hprof.txt");
        let (_, rows) = last_sites(&text);
        assert_eq!(per_class(&rows)["ThreadChurn$Chunk"].1, 200_000, "{what}: every thread's Chunks counted");
        assert_threads_recorded(&text);
        assert!(text.contains("CPU SAMPLES BEGIN"), "{what}: CPU SAMPLES written");
    }
}

/// Every churn thread has its THREAD START and THREAD END; only main and the JVM's daemons are left open.
fn assert_threads_recorded(text: &str) {
    let started = text.matches("THREAD START").count();
    let ended = text.matches("THREAD END").count();
    assert!(started >= 2000 && ended >= 2000 && started - ended < 50, "{started} started, {ended} ended");
}

/// `alloc_probe=y`: the counts come from probes inserted after each allocating bytecode (and VMObjectAlloc
/// for the VM's own), not from the JVM's allocation event — and stay exact: AllocSites as in the test above,
/// and AllocPaths' multianewarray inner arrays and hot clone / Array.newInstance / Arrays.copyOf, which the
/// JIT allocates inline (the agent turns those intrinsics off; with them on, compiled code's went uncounted).
#[test]
fn bytecode_probes_count_every_allocation_path_exactly_on_every_jdk() {
    for jdk in all_jdks() {
        let what = format!("JDK {} alloc_probe=y", jdk.version);
        let dir = scratch("sites-probe");
        let run = Java::new(&jdk, dir.path())
            .agentpath("heap=sites,cutoff=0,alloc_probe=y,file=sites.txt")
            .env("HPROF_ALLOC_STATS", "1")
            .class("AllocSites")
            .run();
        run.assert_success().assert_no_crash_log();
        let inserted: u64 = run
            .stderr
            .split("alloc probes: ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{what}: no probe count:\n{}", run.stderr));
        assert!(inserted > 1_000, "{what}: only {inserted} probes inserted");
        let text = run.read("sites.txt");
        let (_, rows) = last_sites(&text);
        let classes = per_class(&rows);
        assert_eq!(classes["AllocSites$Widget"], (25_000, 100_000), "{what}: Widgets (live, allocated)");
        assert_eq!(classes["AllocSites$Gadget"], (0, 70_000), "{what}: Gadgets (live, allocated)");
        assert_eq!(classes["AllocSites$Reflected"], (500, 500), "{what}: Reflected (live, allocated)");
        let longs: Vec<&SiteRow> = rows.iter().filter(|r| r.class == "long[]" && r.alloc_objs == 1_000).collect();
        assert_eq!(longs.len(), 1, "{what}: one site made the 1,000 long[333]");
        assert_eq!(longs[0].alloc_bytes, 1_000 * 2_680, "{what}: long[333] bytes");
        // The probe's own frame is not part of the trace.
        let widget = rows.iter().find(|r| r.class == "AllocSites$Widget").unwrap();
        let top = &traces(&text)[&widget.trace].frames;
        assert!(top[0].starts_with("AllocSites.makeWidget(AllocSites.java:"), "{what}: trace {top:?}");
        assert!(top[1].starts_with("AllocSites.main(AllocSites.java:"), "{what}: trace {top:?}");

        let run = Java::new(&jdk, dir.path())
            .agentpath("heap=sites,cutoff=0,alloc_probe=y,file=paths.txt")
            .class("AllocPaths")
            .run();
        run.assert_success().assert_no_crash_log();
        let (_, rows) = last_sites(&run.read("paths.txt"));
        let classes = per_class(&rows);
        for (class, allocated) in [
            ("AllocPaths$Grid[][]", 1_000),
            ("AllocPaths$Grid[]", 3_000),
            ("AllocPaths$Sheep", 200_001),
            ("AllocPaths$Slot[]", 200_000),
            ("AllocPaths$Copy[]", 200_001),
        ] {
            assert_eq!(classes.get(class).map(|c| c.1), Some(allocated), "{what}: {class} allocated");
        }
    }
}
