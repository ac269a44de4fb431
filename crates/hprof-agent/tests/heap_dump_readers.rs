//! heap=dump checked by readers nobody here wrote: VisualVM's heap library must load our dumps and count
//! what we count, and the per-class counts must equal HotSpot's own `jcmd GC.class_histogram` of the same
//! still heap.

mod heap_dump_support;

use heap_dump_support::HeapFile;
use hprof_format::names::java_name_from_signature;
use hprof_format::tags::record;
use jvm_harness::{Java, Jdk, all_jdks, jdk17, scratch};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const VISUALVM_JAR: &str = "/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar";

/// VisualVM's heap library from Debian's `visualvm` package, which `make test` installs (`make visualvm`);
/// `None` (the test then says why it skips) if it is not there. Installing it here would run apt-get
/// beside JVMs of other tests.
fn visualvm_jar() -> Option<PathBuf> {
    let jar = PathBuf::from(VISUALVM_JAR);
    jar.is_file().then_some(jar)
}

/// Compiles java/tools/VisualVmHeapCheck.java against the jar into `dir`.
fn compile_checker(jar: &Path, dir: &Path) -> PathBuf {
    let out = dir.join("checker");
    let src = jvm_harness::repo_root().join("java/tools/VisualVmHeapCheck.java");
    let status = Command::new(jdk17().bin("javac"))
        .args(["--release", "17", "-cp"])
        .arg(jar)
        .arg("-d")
        .arg(&out)
        .arg(&src)
        .status()
        .expect("javac");
    assert!(status.success(), "cannot compile {}", src.display());
    out
}

/// What VisualVM saw: per-class instance counts, roots by kind, and the list line.
struct VisualVmView {
    counts: BTreeMap<String, u64>,
    roots: BTreeMap<String, u64>,
    list: Option<String>,
}

fn visualvm_view(jar: &Path, checker: &Path, dump: &Path) -> VisualVmView {
    let _slot = jvm_harness::JvmSlot::acquire();
    let cp = format!("{}:{}", checker.display(), jar.display());
    let out = Command::new(jdk17().java()).args(["-cp", &cp, "VisualVmHeapCheck"]).arg(dump).output().expect("java");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "VisualVM could not load {}:\n{stdout}\n{}",
        dump.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut view = VisualVmView { counts: BTreeMap::new(), roots: BTreeMap::new(), list: None };
    for line in stdout.lines() {
        let mut parts = line.splitn(3, ' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some("class"), Some(n), Some(name)) => {
                view.counts.insert(name.to_owned(), n.parse().unwrap());
            }
            (Some("root"), Some(n), Some(kind)) => {
                view.roots.insert(kind.to_owned(), n.parse().unwrap());
            }
            (Some("list"), Some(_), Some(_)) => view.list = Some(line.to_owned()),
            _ => {}
        }
    }
    view
}

/// Whether the binary file holds a top-level record with `tag`.
fn has_record(bytes: &[u8], tag: u8) -> bool {
    let header = hprof_format::binary::parse_header(bytes).unwrap();
    hprof_format::binary::Records::new(bytes, &header).any(|r| r.is_ok_and(|r| r.tag == tag))
}

#[test]
fn visualvm_loads_our_dumps_and_sees_our_counts() {
    let Some(jar) = visualvm_jar() else {
        jvm_harness::skip(format!(
            "VisualVM's heap library ({VISUALVM_JAR}) is not installed (make visualvm installs it)"
        ));
        return;
    };
    let work = scratch("visualvm");
    let checker = compile_checker(&jar, work.path());
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("visualvm-dump");
        // cpu=wall and monitor=y: the file also holds our own SAMPLE TIMES and MONITOR TIMES records, which
        // VisualVM must skip.
        let options = "heap=dump,format=b,monitor=y,cpu=wall,interval=1";
        let run = Java::new(&jdk, dir.path()).agentpath(options).class("HeapDumpGraph").run();
        run.assert_success();
        let bytes = run.read_bytes("java.hprof");
        for (tag, name) in [(record::SAMPLE_TIMES, "SAMPLE TIMES"), (record::MONITOR_TIMES, "MONITOR TIMES")] {
            assert!(has_record(&bytes, tag), "{what}: no {name} record");
        }
        let file = HeapFile::parse(&bytes);
        let ours = file.dumps[0].counts(&file);
        let view = visualvm_view(&jar, &checker, &run.file("java.hprof"));

        // The same instances per class, for every class (VisualVM lists classes with instances only).
        let ours_nonzero: BTreeMap<String, u64> = ours.into_iter().filter(|(_, n)| *n > 0).collect();
        let differ: Vec<String> = ours_nonzero
            .iter()
            .filter(|(name, n)| view.counts.get(*name) != Some(n))
            .map(|(name, n)| format!("{name}: ours {n}, VisualVM {:?}", view.counts.get(name)))
            .chain(
                view.counts
                    .iter()
                    .filter(|(name, _)| !ours_nonzero.contains_key(*name))
                    .map(|(name, n)| format!("{name}: only VisualVM, {n}")),
            )
            .collect();
        assert!(differ.is_empty(), "{what}: VisualVM counts differently:\n{}", differ.join("\n"));
        assert_eq!(view.counts.get("HeapDumpGraph$Node"), Some(&123_457), "{what}");
        // VisualVM follows our references and reads our field values where we wrote them.
        assert_eq!(view.list.as_deref(), Some("list 123457 123456 1234605616436508552 Z"), "{what}");
        for kind in ["thread object", "sticky class", "JNI global"] {
            assert!(view.roots.contains_key(kind), "{what}: VisualVM sees no {kind} root: {:?}", view.roots);
        }
    }
}

/// `jcmd <pid> GC.class_histogram`: instances per class, in Java source names.
fn class_histogram(jcmd: &Path, pid: u32) -> BTreeMap<String, u64> {
    let out = Command::new(jcmd).arg(pid.to_string()).arg("GC.class_histogram").output().expect("jcmd");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "jcmd GC.class_histogram failed:\n{text}");
    let mut counts = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() >= 4 && fields[0].ends_with(':') && fields[0].trim_end_matches(':').parse::<u32>().is_ok() {
            counts.insert(java_name_from_signature(fields[3]), fields[1].parse().unwrap());
        }
    }
    counts
}

fn wait_for_stderr(running: &jvm_harness::Running, text: &str) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !running.stderr_so_far().contains(text) {
        assert!(Instant::now() < deadline, "no {text:?} on stderr:\n{}", running.stderr_so_far());
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn histogram_matches(jdk: &Jdk) {
    let what = format!("JDK {}", jdk.version);
    let jcmd = jdk.bin("jcmd");
    if !jcmd.is_file() {
        jvm_harness::skip(format!("{what}: no jcmd in {}", jdk.home.display()));
        return;
    }
    let dir = scratch("histogram");
    let mut running = Java::new(jdk, dir.path())
        .agentpath("heap=dump,format=b,file=still.hprof")
        .class("HeapDumpGraph")
        .arg("sleep")
        .spawn();
    running.wait_for_stdout("ready", Duration::from_secs(120));
    // The histogram's full GC leaves only live objects; then our dump of the same, still heap.
    let histogram = class_histogram(&jcmd, running.pid());
    running.signal(libc::SIGQUIT);
    wait_for_stderr(&running, " done.");
    running.signal(libc::SIGKILL);
    let _ = running.wait();
    let file = HeapFile::parse(&std::fs::read(dir.path().join("still.hprof")).unwrap());
    assert_eq!(file.dumps.len(), 1, "{what}");
    let ours = file.dumps[0].counts(&file);

    // The program's own classes: exactly.
    for (name, n) in histogram.iter().filter(|(name, _)| name.starts_with("HeapDumpGraph") && !name.contains("Lambda"))
    {
        assert_eq!(ours.get(name), Some(n), "{what}: {name}");
    }
    assert_eq!(ours.get("HeapDumpGraph$Node"), Some(&123_457), "{what}");
    // Every class. The histogram counts what the GC keeps alive, JVMTI what its roots reach: a few JVM
    // internals differ (the threads JVMTI hides, such as the JIT compilers', and objects held only by
    // fields the JVM injects into class objects, such as the init locks of classes not yet initialized),
    // and the JVM's own threads (attach listener) may allocate between the two. Class objects are CLASS
    // DUMPs, not instances.
    let comparable: Vec<(&String, &u64)> =
        histogram.iter().filter(|(name, _)| *name != "java.lang.Class" && !name.contains("/0x")).collect();
    let differ: Vec<String> = comparable
        .iter()
        .filter(|(name, n)| ours.get(*name) != Some(n))
        .map(|(name, n)| format!("{name}: histogram {n}, ours {:?}", ours.get(*name)))
        .collect();
    // The init locks are int[0]s, one per class not yet initialized: hundreds.
    let (histogram_ints, our_ints) =
        (histogram.get("int[]").copied().unwrap_or(0), ours.get("int[]").copied().unwrap_or(0));
    assert!(our_ints <= histogram_ints, "{what}: int[]: ours {our_ints}, histogram {histogram_ints}");
    let total: u64 = comparable.iter().map(|(_, n)| **n).sum();
    let off: u64 = comparable
        .iter()
        .filter(|(name, _)| *name != "int[]")
        .map(|(name, n)| ours.get(*name).copied().unwrap_or(0).abs_diff(**n))
        .sum();
    assert!(
        differ.len() * 10 <= comparable.len() && off * 200 <= total,
        "{what}: {} of {} classes ({off} of {total} objects) differ from the histogram:\n{}",
        differ.len(),
        comparable.len(),
        differ.join("\n")
    );
    eprintln!(
        "{what}: {} of {} classes, {off} of {total} objects differ:\n{}",
        differ.len(),
        comparable.len(),
        differ.join("\n")
    );
}

#[test]
fn per_class_counts_equal_jcmd_class_histogram() {
    for jdk in all_jdks() {
        histogram_matches(&jdk);
    }
}
