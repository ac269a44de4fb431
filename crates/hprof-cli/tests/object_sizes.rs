//! `hprof histo` against the JVM's own `jcmd GC.class_histogram`, taken from the same JVM right after its
//! heap dump, under every object layout HotSpot has: java/programs/ObjectLayouts (small hierarchies whose
//! fields fill each other's gaps, every field type, empty classes, arrays of lengths 0, 1 and odd) on JDK
//! 17, 21 and 25 with compressed oops, without, without compressed class pointers either, ZGC, Shenandoah
//! and (JDK 24+) compact object headers. Each run checks that the detected layout is the VM's, that every
//! class of the program has the JVM's count and bytes, and that the whole heap's bytes are within 1%.
//!
//! The runs turn CDS off: with it the VM's histogram also counts the `java.lang.Class` mirrors of archived
//! classes that were never loaded (about 800 on JDK 17), which no heap dump contains. One run per JDK
//! keeps CDS and checks everything but `java.lang.Class`.

use jvm_harness::{Java, JavaRun, Jdk, JvmSlot, all_jdks, hprof_binary, scratch};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A VM configuration and the layout `hprof` must find.
struct Config {
    name: &'static str,
    flags: &'static [&'static str],
    layout: &'static str,
    /// The first JDK that has it.
    since: u32,
}

const CONFIGS: &[Config] = &[
    Config { name: "default", flags: &[], layout: "compressed-oops", since: 17 },
    Config {
        name: "no compressed oops",
        flags: &["-XX:-UseCompressedOops"],
        layout: "compressed-class-pointers",
        since: 17,
    },
    Config {
        name: "neither compressed oops nor class pointers",
        flags: &["-XX:-UseCompressedOops", "-XX:-UseCompressedClassPointers"],
        layout: "uncompressed",
        since: 17,
    },
    Config { name: "ZGC", flags: &["-XX:+UseZGC"], layout: "compressed-class-pointers", since: 17 },
    Config { name: "Shenandoah", flags: &["-XX:+UseShenandoahGC"], layout: "compressed-oops", since: 17 },
    Config {
        name: "compact object headers",
        flags: &["-XX:+UseCompactObjectHeaders"],
        layout: "compact-headers",
        since: 24,
    },
    Config {
        name: "compact object headers without compressed oops",
        flags: &["-XX:+UseCompactObjectHeaders", "-XX:-UseCompressedOops"],
        layout: "compact-headers-uncompressed-oops",
        since: 24,
    },
];

/// (instances, bytes) per class, in Java's spelling (`byte[]`, `Foo$Bar[][]`).
type Histogram = HashMap<String, (u64, u64)>;

/// `[B` → `byte[]`, `[[LFoo;` → `Foo[][]`.
fn java_name(jvm: &str) -> String {
    let dims = jvm.bytes().take_while(|&b| b == b'[').count();
    if dims == 0 {
        return jvm.to_owned();
    }
    let rest = &jvm[dims..];
    let base = match rest {
        "Z" => "boolean",
        "B" => "byte",
        "S" => "short",
        "C" => "char",
        "I" => "int",
        "J" => "long",
        "F" => "float",
        "D" => "double",
        _ => rest.trim_start_matches('L').trim_end_matches(';'),
    };
    format!("{base}{}", "[]".repeat(dims))
}

/// Parses `jcmd GC.class_histogram`: rows and the total bytes.
fn parse_jcmd_histogram(text: &str) -> (Histogram, u64) {
    let mut rows = HashMap::new();
    let mut total = 0;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 4 && f[0].ends_with(':') {
            if let (Ok(n), Ok(b)) = (f[1].parse::<u64>(), f[2].parse::<u64>()) {
                rows.insert(java_name(f[3]), (n, b));
            }
        } else if f.len() == 3 && f[0] == "Total" {
            total = f[2].parse().unwrap_or(0);
        }
    }
    assert!(total > 0 && !rows.is_empty(), "not a class histogram:\n{text}");
    (rows, total)
}

/// `hprof histo` of `file`, with the layout detected (or stated in the file), or `given`: the rows, the
/// total bytes, the layout's name and where it came from (`detected`, `file`, `given`).
fn hprof_histogram(file: &Path, given: Option<&str>) -> (Histogram, u64, String, String) {
    let mut hprof = Command::new(hprof_binary());
    hprof.args(["histo", "--json"]).arg(file);
    if let Some(layout) = given {
        hprof.args(["--layout", layout]);
    }
    let o = hprof.output().unwrap();
    assert!(o.status.success(), "hprof histo {}: {}", file.display(), String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["class"].as_str().unwrap().to_owned(),
                (c["instances"].as_u64().unwrap(), c["shallow_bytes"].as_u64().unwrap()),
            )
        })
        .collect();
    let name = v["layout_name"].as_str().unwrap().to_owned();
    (rows, v["total_shallow_bytes"].as_u64().unwrap(), name, v["layout_source"].as_str().unwrap().to_owned())
}

/// Starts ObjectLayouts with `flags` (and `agent` options, if any), has its heap dumped (by jcmd, or by
/// the agent on SIGQUIT after a collection), takes the JVM's class histogram, and stops it.
fn dump_and_histogram(jdk: &Jdk, dir: &Path, flags: &[&str], agent: Option<&str>) -> (PathBuf, String) {
    let (file, histogram, _) = dump_and_histogram_with(jdk, dir, flags, agent, &[]);
    (file, histogram)
}

/// [`dump_and_histogram`] with variables in the program's environment; the program's run too.
fn dump_and_histogram_with(
    jdk: &Jdk,
    dir: &Path,
    flags: &[&str],
    agent: Option<&str>,
    env: &[(&str, &str)],
) -> (PathBuf, String, JavaRun) {
    // The program and jcmd (a JVM too) run together: two slots.
    let _slots = JvmSlot::acquire_n(2);
    let file = dir.join("layouts.hprof");
    let mut java = Java::new(jdk, dir).vm_arg("-Xmx256m");
    for f in flags {
        java = java.vm_arg(f);
    }
    if let Some(options) = agent {
        java = java.agentpath(&format!("{options},file={}", file.display()));
    }
    for (key, value) in env {
        java = java.env(key, value);
    }
    let mut jvm = java.class("ObjectLayouts").spawn_holding(None);
    jvm.wait_for_stdout("ready", Duration::from_secs(60));
    let jcmd = |args: &[&str]| {
        let o = Command::new(jdk.bin("jcmd")).arg(jvm.pid().to_string()).args(args).output().expect("jcmd");
        assert!(o.status.success(), "jcmd {args:?} on JDK {}: {}", jdk.version, String::from_utf8_lossy(&o.stdout));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let histogram = match agent {
        None => {
            // Both commands through one attach (one jcmd JVM fewer to start).
            let commands = dir.join("jcmd-commands.txt");
            std::fs::write(&commands, format!("GC.heap_dump {}\nGC.class_histogram\n", file.display())).unwrap();
            jcmd(&["-f", commands.to_str().unwrap()])
        }
        Some(_) => {
            // The agent dumps what is reachable now; the JVM's histogram counts what the heap holds. Both count
            // the same heap once the JVM has collected: GC.class_histogram asks for a collection, which ZGC
            // and Shenandoah ignore in JDK 17 (`collect_as_vm_thread`, asked from the VM thread), and which
            // comes after the dump anyway.
            jcmd(&["GC.run"]);
            jvm.signal(3);
            wait_for_heap_dump_end(&file);
            jcmd(&["GC.class_histogram"])
        }
    };
    jvm.signal(9);
    (file, histogram, jvm.wait())
}

/// Waits until the agent's dump ends with HEAP DUMP END.
fn wait_for_heap_dump_end(file: &Path) {
    let start = std::time::Instant::now();
    loop {
        if let Ok(b) = std::fs::read(file)
            && b.len() > 9
            && b[b.len() - 9] == 0x2C
        {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "the agent wrote no whole heap dump to {}", file.display());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The whole heap's bytes agree within this share.
const TOLERANCE: f64 = 0.01;

/// What `hprof` must find in a dump: `layout`, and `source` where (see [`compare`]); `with_cds`: the JVM
/// maps CDS, whose java.lang.Class objects the totals leave out.
#[derive(Clone, Copy)]
struct Expected<'a> {
    layout: &'a str,
    source: &'a str,
    with_cds: bool,
}

/// Every class of the program exact; the whole heap within 1% (or, with CDS, all but java.lang.Class).
/// `layout` is the one `hprof` must find, and `source` where: `detected` from the addresses of the JVM's
/// own dumps, `file` as the agent's dumps state it (also those whose identifiers are no addresses).
fn compare(what: &str, file: &Path, jcmd: &str, expected: Expected<'_>) -> String {
    let Expected { layout, source, with_cds } = expected;
    let (jvm, jvm_total) = parse_jcmd_histogram(jcmd);
    let (ours, our_total, our_layout, our_source) = hprof_histogram(file, None);
    assert_eq!((our_layout.as_str(), our_source.as_str()), (layout, source), "{what}: layout, and where from");
    let mut program = 0;
    for (class, counts) in jvm.iter().filter(|(c, _)| c.starts_with("ObjectLayouts")) {
        program += 1;
        assert_eq!(ours.get(class), Some(counts), "{what}: {class} (instances, bytes): hprof vs the JVM");
    }
    assert!(program >= 28, "{what}: only {program} classes of ObjectLayouts in the JVM's histogram");
    let class_bytes = |h: &Histogram| h.get("java.lang.Class").map_or(0, |r| r.1);
    let (a, b) =
        if with_cds { (our_total - class_bytes(&ours), jvm_total - class_bytes(&jvm)) } else { (our_total, jvm_total) };
    let ratio = a as f64 / b as f64;
    assert!((ratio - 1.0).abs() <= TOLERANCE, "{what}: hprof counts {a} bytes, the JVM {b} ({ratio:.4})");
    format!("{what}: {layout}, {program} classes exact, bytes {ratio:.4} of the JVM's")
}

fn matrix(version: &str) {
    let Some(jdk) = all_jdks().into_iter().find(|j| j.version == version) else { return };
    let feature: u32 = version.parse().unwrap();
    let mut report = Vec::new();
    for c in CONFIGS.iter().filter(|c| feature >= c.since) {
        let dir = scratch(&format!("object-sizes-{version}"));
        let mut flags = vec!["-Xshare:off"];
        flags.extend_from_slice(c.flags);
        let (file, histogram) = dump_and_histogram(&jdk, dir.path(), &flags, None);
        let expected = Expected { layout: c.layout, source: "detected", with_cds: false };
        report.push(compare(&format!("JDK {version}, {}", c.name), &file, &histogram, expected));
    }
    // CDS on, as a default VM runs.
    let dir = scratch(&format!("object-sizes-{version}-cds"));
    let (file, histogram) = dump_and_histogram(&jdk, dir.path(), &[], None);
    let what = format!("JDK {version}, default with CDS");
    let expected = Expected { layout: "compressed-oops", source: "detected", with_cds: true };
    report.push(compare(&what, &file, &histogram, expected));
    eprintln!("{}", report.join("\n"));
}

#[test]
fn object_sizes_match_the_jvms_histogram_on_jdk17() {
    matrix("17");
}

#[test]
fn object_sizes_match_the_jvms_histogram_on_jdk21() {
    matrix("21");
}

#[test]
fn object_sizes_match_the_jvms_histogram_on_jdk25() {
    matrix("25");
}

/// How the agent's dumps are checked: a collector (or the default, G1) and whether objects are named by
/// tag (ZGC and Shenandoah always are; `HPROF_HEAP_DUMP_TAGS` forces it on G1) or by address.
struct AgentConfig {
    name: &'static str,
    flags: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    layout: &'static str,
    /// Objects named by tag: the dump's identifiers are no addresses, only the file's statement tells the
    /// layout.
    by_tag: bool,
    /// The first JDK that has it.
    since: u32,
}

const AGENT_CONFIGS: &[AgentConfig] = &[
    AgentConfig { name: "G1", flags: &[], env: &[], layout: "compressed-oops", by_tag: false, since: 17 },
    AgentConfig {
        name: "G1, named by tag",
        flags: &[],
        env: &[("HPROF_HEAP_DUMP_TAGS", "1")],
        layout: "compressed-oops",
        by_tag: true,
        since: 17,
    },
    AgentConfig {
        name: "neither compressed oops nor class pointers, named by tag",
        flags: &["-XX:-UseCompressedOops", "-XX:-UseCompressedClassPointers"],
        env: &[("HPROF_HEAP_DUMP_TAGS", "1")],
        layout: "uncompressed",
        by_tag: true,
        since: 17,
    },
    AgentConfig {
        name: "16-byte object alignment",
        flags: &["-XX:ObjectAlignmentInBytes=16"],
        env: &[],
        layout: "compressed-oops",
        by_tag: false,
        since: 17,
    },
    AgentConfig {
        name: "ZGC",
        flags: &["-XX:+UseZGC"],
        env: &[],
        layout: "compressed-class-pointers",
        by_tag: true,
        since: 17,
    },
    AgentConfig {
        name: "Shenandoah",
        flags: &["-XX:+UseShenandoahGC"],
        env: &[],
        layout: "compressed-oops",
        by_tag: true,
        since: 17,
    },
    AgentConfig {
        name: "no compressed oops",
        flags: &["-XX:-UseCompressedOops"],
        env: &[],
        layout: "compressed-class-pointers",
        by_tag: false,
        since: 17,
    },
    AgentConfig {
        name: "compact object headers",
        flags: &["-XX:+UseCompactObjectHeaders"],
        env: &[],
        layout: "compact-headers",
        by_tag: false,
        since: 24,
    },
    AgentConfig {
        name: "compact object headers without compressed oops",
        flags: &["-XX:+UseCompactObjectHeaders", "-XX:-UseCompressedOops"],
        env: &[],
        layout: "compact-headers-uncompressed-oops",
        by_tag: false,
        since: 24,
    },
];

/// The agent's own dumps (heap=dump,format=b, taken on SIGQUIT), with G1 (objects named by address, and by
/// tag), ZGC and Shenandoah (named by tag) on each JDK, G1 without compressed oops (12-byte headers, 8-byte
/// references) and, on JDK 24+, with compact object headers with and without compressed oops (all three
/// named by address, as the dump's statistics must say): the program's classes exact, its lambdas' classes
/// too, and the whole heap within 1%, as for the JVM's own dumps, under the layout the file states (no
/// `--layout`: named by tag, no address would tell it), which `--layout` still overrides. What only the fields of class objects
/// hold (a class's reflection data behind a SoftReference: cached Constructors, Methods; its cached name)
/// is in the dump as the JVM counts it: those classes' counts equal the JVM's (before, 26 of 27
/// `Class$ReflectionData` and 27 of 37 SoftReferences were missing on JDK 17, and the dump held 0.971 of
/// the JVM's bytes). So is what only the constant pools' resolved references hold (invokedynamic call
/// sites: on JDK 25 the instances of the program's lambdas, their method handles and MemberNames; before,
/// the dump held 0.987 (JDK 17) and 0.986 (JDK 25) of the JVM's bytes; named by tag, where those arrays
/// were out of reach until they were reached through the classes' metadata, 0.987–0.988).
#[test]
fn agent_dumps_have_the_jvms_object_sizes() {
    let mut report = Vec::new();
    for jdk in all_jdks() {
        let feature: u32 = jdk.version.parse().unwrap();
        for c in AGENT_CONFIGS {
            if feature < c.since {
                report.push(format!("agent dump, JDK {}, {}: not run (JDK {}+ only)", jdk.version, c.name, c.since));
                continue;
            }
            let dir = scratch(&format!("object-sizes-agent-{}", jdk.version));
            let mut flags = vec!["-Xshare:off"];
            flags.extend_from_slice(c.flags);
            // The dump's statistics say how it named objects.
            let env = [c.env, &[("HPROF_HEAP_DUMP_STATS", "1")]].concat();
            let (file, histogram, run) =
                dump_and_histogram_with(&jdk, dir.path(), &flags, Some("heap=dump,format=b"), &env);
            let what = format!("agent dump, JDK {}, {}", jdk.version, c.name);
            let naming = if c.by_tag { "; ids: tags (" } else { "; ids: object addresses" };
            assert!(run.stderr.contains(naming), "{what}: objects not named as expected ({naming}):\n{}", run.stderr);
            let expected = Expected { layout: c.layout, source: "file", with_cds: false };
            report.push(compare(&what, &file, &histogram, expected));
            let (jvm, _) = parse_jcmd_histogram(&histogram);
            let (ours, _, _, _) = hprof_histogram(&file, None);
            // `--layout` still decides over what the file states.
            let (_, _, given, source) = hprof_histogram(&file, Some("uncompressed"));
            assert_eq!((given.as_str(), source.as_str()), ("uncompressed", "given"), "{what}: --layout");
            let lambdas = jvm.keys().filter(|c| c.starts_with("ObjectLayouts$$Lambda")).count();
            assert!(lambdas > 0, "{what}: the JVM has no lambda of ObjectLayouts: their comparison above is void");
            // The init locks (`int[0]`) of classes linked but not initialized, which only a field HotSpot
            // injects into class objects holds: before they were held, 104 (JDK 17), 119 (21) and 132 (25)
            // of the JVM's int[]s were missing.
            let count = |h: &Histogram, class: &str| h.get(class).map_or(0, |r| r.0);
            assert_eq!(count(&ours, "int[]"), count(&jvm, "int[]"), "{what}: int[] instances, agent dump vs the JVM");
            for class in ["java.lang.Class$ReflectionData", "java.lang.ref.SoftReference"] {
                let count = |h: &Histogram| h.get(class).map_or(0, |r| r.0);
                // G1's System.gc keeps soft references; ZGC's and Shenandoah's may clear them all.
                assert!(c.by_tag || count(&jvm) > 0, "{what}: the JVM has no {class}");
                assert_eq!(count(&ours), count(&jvm), "{what}: {class} instances, agent dump vs the JVM");
            }
        }
    }
    eprintln!("{}", report.join("\n"));
}

/// Under `-Xcheck:jni` checked JNI would end the VM on the global handles and the field ID that the
/// resolved references and the init locks are read through: the agent leaves out what needs them, says so
/// once, and its dump is whole (JDK 17's handle tags and JDK 21+'s alike). JDK 17's init locks share their
/// slot with the declared field `componentType`, whose own ID checked JNI accepts: there they are held, as
/// many `int[]`s as the JVM counts.
#[test]
fn agent_dumps_under_checked_jni_leave_out_what_needs_foreign_handles() {
    for jdk in all_jdks() {
        let dir = scratch(&format!("object-sizes-checked-jni-{}", jdk.version));
        let flags = ["-Xshare:off", "-Xcheck:jni"];
        let (file, histogram, run) = dump_and_histogram_with(&jdk, dir.path(), &flags, Some("heap=dump,format=b"), &[]);
        run.assert_no_crash_log();
        let what = format!("JDK {}, -Xcheck:jni", jdk.version);
        let line = |left_out: &str| format!("heap dumps leave out {left_out}: JNI calls are checked (-Xcheck:jni)");
        let pools = line("what only constant pools hold");
        assert_eq!(run.stderr.matches(&pools).count(), 1, "{what}: stderr should say once: {pools}\n{}", run.stderr);
        let locks = line("the init locks of classes not yet initialized");
        let expected = if jdk.version == "17" { 0 } else { 1 };
        assert_eq!(run.stderr.matches(&locks).count(), expected, "{what}: {locks}\n{}", run.stderr);
        assert!(!run.stderr.contains("FATAL ERROR"), "{what}: {}", run.stderr);
        let (ours, _, _, _) = hprof_histogram(&file, None);
        let program = ours.keys().filter(|c| c.starts_with("ObjectLayouts")).count();
        assert!(program >= 28, "{what}: only {program} classes of ObjectLayouts in the dump");
        if jdk.version == "17" {
            let (jvm, _) = parse_jcmd_histogram(&histogram);
            let count = |h: &Histogram| h.get("int[]").map_or(0, |r| r.0);
            assert_eq!(count(&ours), count(&jvm), "{what}: int[] instances (init locks), agent dump vs the JVM");
        }
    }
}

/// Where the resolved references' route leads nowhere (here made so by `HPROF_HEAP_DUMP_TEST_NO_POOLS`, as
/// on a JVM whose `jmethodID`s no longer lead to a `Method*`), objects the JVM has are missing from the
/// dump: a warning says so, once, and the rest of the dump is whole.
#[test]
fn agent_dumps_warn_when_no_class_leads_to_its_resolved_references() {
    for jdk in all_jdks() {
        let _slot = JvmSlot::acquire_n(1);
        let dir = scratch(&format!("object-sizes-no-pools-{}", jdk.version));
        let file = dir.path().join("no-pools.hprof");
        let mut jvm = Java::new(&jdk, dir.path())
            .vm_arg("-Xmx256m")
            .env("HPROF_HEAP_DUMP_TEST_NO_POOLS", "1")
            .agentpath(&format!("heap=dump,format=b,file={}", file.display()))
            .class("ObjectLayouts")
            .spawn_holding(None);
        jvm.wait_for_stdout("ready", Duration::from_secs(60));
        jvm.signal(3);
        wait_for_heap_dump_end(&file);
        jvm.signal(9);
        let run = jvm.wait();
        let what = format!("JDK {}, no class leading to its resolved references", jdk.version);
        let warning = "HPROF WARNING: heap dumps leave out what only constant pools hold: not one \
                       resolved-references array from ";
        assert_eq!(run.stderr.matches(warning).count(), 1, "{what}: stderr should warn once:\n{}", run.stderr);
        assert!(run.stderr.contains("(0 of them reached through their metadata)"), "{what}:\n{}", run.stderr);
        let (ours, _, _, _) = hprof_histogram(&file, None);
        let program = ours.keys().filter(|c| c.starts_with("ObjectLayouts")).count();
        assert!(program >= 28, "{what}: only {program} classes of ObjectLayouts in the dump");
    }
}
