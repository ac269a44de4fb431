//! Real dumps from JDK 17, 21 and 25 (`jcmd <pid> GC.heap_dump`, plain and `-gz`) of java/programs/HeapShape,
//! whose heap has a known shape, and real profiles from the agent (cpu=samples,format=b).

use jvm_harness::{Java, JvmSlot, all_jdks, hprof_binary, hprof_json, scratch, skip};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Starts HeapShape, dumps its heap with jcmd (`-gz=1` when `gz`), and stops it.
fn dump_heap_shape(jdk: &jvm_harness::Jdk, dir: &Path, gz: bool) -> std::path::PathBuf {
    // The program and jcmd (a JVM too) run together: two slots.
    let _slots = JvmSlot::acquire_n(2);
    let mut jvm = Java::new(jdk, dir).vm_arg("-Xmx256m").class("HeapShape").spawn_holding(None);
    jvm.wait_for_stdout("ready", Duration::from_secs(60));
    let file = dir.join(if gz { "shape.hprof.gz" } else { "shape.hprof" });
    let mut cmd = Command::new(jdk.bin("jcmd"));
    cmd.arg(jvm.pid().to_string()).arg("GC.heap_dump");
    if gz {
        cmd.arg("-gz=1");
    }
    let o = cmd.arg(&file).output().expect("jcmd");
    jvm.signal(libc_sigkill());
    let _ = jvm.wait();
    assert!(
        o.status.success() && file.is_file(),
        "jcmd on JDK {}: {}",
        jdk.version,
        String::from_utf8_lossy(&o.stdout)
    );
    file
}

fn libc_sigkill() -> i32 {
    9
}

fn class_row<'a>(histo: &'a Value, name: &str) -> &'a Value {
    histo["classes"].as_array().unwrap().iter().find(|c| c["class"] == name).unwrap_or_else(|| panic!("{name} missing"))
}

fn only_object(v: &Value) -> &Value {
    let objs = v["objects"].as_array().unwrap();
    assert_eq!(objs.len(), 1, "{v}");
    &objs[0]
}

#[test]
fn jcmd_dumps_have_the_known_counts_and_retained_sizes() {
    for jdk in all_jdks() {
        if !jdk.bin("jcmd").is_file() {
            skip(format!("JDK {} has no jcmd ({}) to dump the heap with", jdk.version, jdk.home.display()));
            continue;
        }
        let dir = scratch(&format!("shape-{}", jdk.version));
        for gz in [false, true] {
            let file = dump_heap_shape(&jdk, dir.path(), gz);
            let f = file.to_str().unwrap();
            let what = format!("JDK {} ({})", jdk.version, file.display());
            let h = hprof_json(&["histo", "--json", f, "--filter", "HeapShape$"]);
            assert!(h["layout"].as_str().unwrap().contains("compressed oops"), "{what}: {}", h["layout"]);
            let row = |n: &str| class_row(&h, n).clone();
            assert_eq!(row("HeapShape$Node")["instances"], 1000, "{what}");
            assert_eq!(row("HeapShape$Node")["shallow_bytes"], 24_000, "{what}");
            assert_eq!(row("HeapShape$Link")["instances"], 500, "{what}");
            assert_eq!(row("HeapShape$Link")["shallow_bytes"], 12_000, "{what}");
            assert_eq!(row("HeapShape$Node[]")["shallow_bytes"], 4016, "{what}");
            assert_eq!(row("HeapShape$Holder")["instances"], 1, "{what}");

            // Holder retains its array, the 1000 Nodes with their long[4], and the Shared two Nodes hold.
            let d = hprof_json(&["dominators", "--json", f, "--class", "HeapShape$Holder"]);
            let holder = only_object(&d);
            assert_eq!(holder["retained_bytes"], 16 + 4016 + 1000 * (24 + 48) + 24, "{what}: {holder}");
            let d = hprof_json(&["dominators", "--json", f, "--class", "HeapShape$Shared"]);
            let shared = only_object(&d);
            assert_eq!(shared["retained_bytes"], 24, "{what}");
            let arr = only_object(&hprof_json(&["dominators", "--json", f, "--class", "HeapShape$Node[]"])).clone();
            assert_eq!(shared["dominator"], arr["id"], "{what}: Shared is dominated by the array, not a Node");
            // The chain: the head retains all 500 links.
            let links = hprof_json(&["dominators", "--json", f, "--class", "HeapShape$Link", "--top", "1"]);
            assert_eq!(links["objects"][0]["retained_bytes"], 500 * 24, "{what}");
            // The WeakReference does not retain its referent.
            let weak = hprof_json(&["dominators", "--json", f, "--class", "java.lang.ref.WeakReference"]);
            for w in weak["objects"].as_array().unwrap().iter().filter(|w| w["class"] == "java.lang.ref.WeakReference")
            {
                assert_eq!(w["retained_bytes"], w["shallow_bytes"], "{what}: {w}");
            }
            // The path to the array goes through the Holder from the HeapShape class's static.
            let p = hprof_json(&["path", "--json", f, arr["id"].as_str().unwrap()]);
            let steps = p["path"]["steps"].as_array().unwrap();
            let fields: Vec<&str> = steps.iter().filter_map(|s| s["field"].as_str()).collect();
            assert!(fields.ends_with(&["static HOLDER", "nodes"]), "{what}: {p}");
            // Shared has two holders, Node 1 and Node 2: --max gives the shortest path through each.
            let p = hprof_json(&["path", "--json", "--max", "5", f, shared["id"].as_str().unwrap()]);
            let paths = p["paths"].as_array().unwrap();
            assert_eq!(paths.len(), 2, "{what}: {p}");
            let holders: Vec<&Value> = paths
                .iter()
                .map(|path| {
                    let steps = path["steps"].as_array().unwrap();
                    assert_eq!(steps[steps.len() - 1]["field"], "extra", "{what}: {path}");
                    assert_eq!(steps[steps.len() - 2]["class"], "HeapShape$Node", "{what}: {path}");
                    &steps[steps.len() - 2]["id"]
                })
                .collect();
            assert_ne!(holders[0], holders[1], "{what}: two different holders");
            // Leaks with a low threshold name the Holder's array as an accumulation point.
            let l = hprof_json(&["leaks", "--json", f, "--threshold", "3"]);
            let text = l.to_string();
            assert!(text.contains("HeapShape$"), "{what}: {text}");
        }
    }
}

#[test]
fn agent_cpu_samples_print_and_flame_show_the_hot_method() {
    let dir = scratch("frontend-cpu");
    let _both = JvmSlot::acquire_n(2);
    let jdk = jvm_harness::jdk17();
    let run = Java::new(&jdk, dir.path())
        .agentpath("cpu=samples,interval=10,depth=8,format=b,file=cpu.hprof")
        .class("CpuAccuracy")
        .arg("2")
        .spawn_holding(None)
        .wait();
    run.assert_success();
    let file = dir.path().join("cpu.hprof");
    let f = file.to_str().unwrap();
    let o = Command::new(hprof_binary()).args(["print", f]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let section = text.split("CPU SAMPLES BEGIN").nth(1).expect("CPU SAMPLES section");
    let first_row = section.lines().nth(2).expect("a first row");
    assert!(first_row.ends_with("CpuAccuracy.hotAlpha"), "top row: {first_row}\n{section}");
    assert!(text.contains("TRACE ") && text.contains("CpuAccuracy.hotAlpha(CpuAccuracy.java:"), "no traces");
    let html = dir.path().join("cpu.html");
    let o = Command::new(hprof_binary()).args(["flame", f, "-o", html.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("CpuAccuracy.hotAlpha") && page.contains("<svg"));
    let o = Command::new(hprof_binary()).args(["export", "--format", "collapsed", f]).output().unwrap();
    let folded = String::from_utf8_lossy(&o.stdout);
    let top = folded.lines().next().unwrap();
    assert!(top.contains("CpuAccuracy.main;CpuAccuracy.hotAlpha"), "{top}");

    // The web view of a profile: its flame graph page.
    let mut child = Command::new(hprof_binary())
        .args(["serve", f, "--port", "0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
    let addr =
        line.split("http://").nth(1).unwrap().split_whitespace().next().unwrap().trim_end_matches('/').to_owned();
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    let request = format!("GET /flame HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    std::io::Write::write_all(&mut s, request.as_bytes()).unwrap();
    let mut resp = String::new();
    std::io::Read::read_to_string(&mut s, &mut resp).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(resp.starts_with("HTTP/1.1 200") && resp.contains("<svg") && resp.contains("CpuAccuracy.hotAlpha"));
}

/// `hprof print` of a binary run tells the same story as a text run of the same program: the same
/// sections in the same order, the same objects of the program's classes, the same class count.
#[test]
fn print_of_a_binary_run_matches_a_text_run() {
    let dir = scratch("frontend-print");
    let jdk = jvm_harness::jdk17();
    let run = |options: &str| {
        Java::new(&jdk, dir.path()).agentpath(options).class("HeapDumpGraph").run().assert_success();
    };
    run("heap=all,format=a,file=a.txt");
    run("heap=all,format=b,file=b.hprof");
    let text = std::fs::read_to_string(dir.path().join("a.txt")).unwrap();
    let o =
        Command::new(hprof_binary()).args(["print", dir.path().join("b.hprof").to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8_lossy(&o.stdout).into_owned();
    let sections = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.contains(" BEGIN ") || l.ends_with(" END"))
            .map(|l| l.split(" (").next().unwrap().split(" BEGIN").next().unwrap().to_owned())
            .collect()
    };
    assert_eq!(sections(&text), sections(&printed));
    let count = |t: &str, pat: &str| t.lines().filter(|l| l.contains(pat)).count();
    for pat in ["class=HeapDumpGraph$Node@", "CLS ", "elem type=HeapDumpGraph$Node[]", "\tnext\t"] {
        assert_eq!(count(&text, pat), count(&printed, pat), "{pat}");
    }
    assert_eq!(count(&printed, "class=HeapDumpGraph$Node@"), 123_457);
    // The file's own version heads the report, and a binary file does not name its writer.
    let bin = std::fs::read(dir.path().join("b.hprof")).unwrap();
    let version = String::from_utf8_lossy(&bin[..18]).into_owned();
    assert!(printed.starts_with(&format!("{version}, created ")), "{version}: {}", &printed[..40]);
    assert!(!printed.contains("written by"));
}

/// Two jcmd dumps of one JVM, before and after it allocates 5000 more Growth$Item: `hprof diff` shows
/// exactly that growth.
#[test]
fn diff_of_two_jcmd_dumps_shows_the_growth() {
    let jdk = jvm_harness::jdk17();
    let dir = scratch("frontend-diff");
    // The program and jcmd (a JVM too) run together: two slots.
    let _slots = JvmSlot::acquire_n(2);
    let mut jvm = Java::new(&jdk, dir.path()).vm_arg("-Xmx256m").class("Growth").spawn_holding(None);
    let dump = |name: &str, pid: u32| {
        let file = dir.path().join(name);
        let o = Command::new(jdk.bin("jcmd")).arg(pid.to_string()).arg("GC.heap_dump").arg(&file).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
        file
    };
    jvm.wait_for_stdout("step1", Duration::from_secs(60));
    let a = dump("a.hprof", jvm.pid());
    std::fs::write(dir.path().join("next"), b"").unwrap();
    jvm.wait_for_stdout("step2", Duration::from_secs(60));
    let b = dump("b.hprof", jvm.pid());
    jvm.signal(libc_sigkill());
    let _ = jvm.wait();
    let v = hprof_json(&["diff", "--json", a.to_str().unwrap(), b.to_str().unwrap(), "--filter", "Growth$Item"]);
    let row =
        v["classes"].as_array().unwrap().iter().find(|c| c["class"] == "Growth$Item").expect("Growth$Item row").clone();
    assert_eq!(row["instances_before"], 1000);
    assert_eq!(row["instances_after"], 6000);
    assert_eq!(row["instances_delta"], 5000);
    assert_eq!(row["bytes_delta"], 5000 * 16);
}

/// heap=sites end to end through the front end: the binary profile's ALLOC SITES printed as HPROF's SITES
/// with AllocSites' exact counts, and drawn (flame, collapsed) by live bytes without needing --alloc.
#[test]
fn agent_alloc_sites_print_flame_and_export_show_the_exact_counts() {
    let dir = scratch("frontend-sites");
    let jdk = jvm_harness::jdk17();
    Java::new(&jdk, dir.path())
        .agentpath("heap=sites,format=b,cutoff=0,file=sites.hprof")
        .class("AllocSites")
        .run()
        .assert_success();
    let f = dir.path().join("sites.hprof");
    let f = f.to_str().unwrap();
    let o = Command::new(hprof_binary()).args(["print", f]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let section = text.split("SITES BEGIN (ordered by live bytes)").nth(1).expect("SITES section");
    let widget = section.lines().find(|l| l.ends_with(" AllocSites$Widget")).expect("a Widget row");
    let fields: Vec<&str> = widget.split_whitespace().collect();
    assert_eq!((fields[4], fields[6]), ("25000", "100000"), "live and allocated Widgets: {widget}");
    let gadget = section.lines().find(|l| l.ends_with(" AllocSites$Gadget")).expect("a Gadget row (cutoff=0)");
    assert_eq!(gadget.split_whitespace().nth(6), Some("70000"), "{gadget}");

    let o = Command::new(hprof_binary()).args(["export", "--format", "collapsed", f]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let folded = String::from_utf8_lossy(&o.stdout);
    let widgets = folded.lines().find(|l| l.contains("AllocSites.makeWidget;AllocSites$Widget ")).expect("{folded}");
    assert!(widgets.ends_with(" 800000"), "25,000 live Widgets of 32 bytes: {widgets}");
    let html = dir.path().join("sites.html");
    let o = Command::new(hprof_binary()).args(["flame", f, "-o", html.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(&html).unwrap().contains("AllocSites$Widget"));
}
