//! `hprof waste`, `loaders`, `threads` and `diff --objects` on real dumps of java/programs/HeapInsight,
//! whose heap has known waste, a class-loader leak and a thread whose frames hold known arrays: every
//! figure against what the program made. Dumps by `jcmd GC.heap_dump` on JDK 17, 21 and 25, and by the
//! agent (heap=dump) on JDK 17.

use jvm_harness::{Java, Jdk, JvmSlot, all_jdks, hprof_binary, hprof_json, jdk17, scratch, skip};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The program's "expect key=value" lines.
fn expectations(stdout: &str) -> HashMap<String, u64> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("expect "))
        .flat_map(|l| l.split_whitespace())
        .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_owned(), v.parse().unwrap())))
        .collect()
}

fn array<'a>(v: &'a Value, what: &str) -> &'a Vec<Value> {
    v.as_array().unwrap_or_else(|| panic!("{what} is not a list: {v}"))
}

fn find<'a>(list: &'a Value, key: &str, want: &str) -> &'a Value {
    array(list, key).iter().find(|x| x[key] == want).unwrap_or_else(|| panic!("no {key} = {want} in {list}"))
}

/// Shallow size of a Latin-1 string's byte[] under compressed oops (16-byte array header, 8-byte alignment).
fn latin1_array(len: u64) -> u64 {
    (16 + len).div_ceil(8) * 8
}

/// Everything `waste`, `loaders` and `threads` must find in a dump of HeapInsight (compressed oops).
fn check_dump(file: &Path, e: &HashMap<String, u64>, what: &str) {
    let f = file.to_str().unwrap();
    let w = hprof_json(&["waste", "--json", f, "--top", "50"]);
    let dups = &w["duplicate_strings"]["top"];
    for (count, len) in [("dup_a", "dup_a_len"), ("dup_b", "dup_b_len")] {
        let (n, len) = (e[count], e[len]);
        let g = array(dups, "top")
            .iter()
            .find(|d| d["length"] == len && d["value"].as_str().is_some_and(|v| v.starts_with("HeapInsight-dup-")))
            .unwrap_or_else(|| panic!("{what}: no duplicate of length {len}: {dups}"));
        assert_eq!(g["strings"], n, "{what}: {g}");
        assert_eq!(g["arrays"], n, "{what}: {g}");
        assert_eq!(g["wasted_bytes"], (n - 1) * (24 + latin1_array(len)), "{what}: {g}");
    }
    let maps = find(&w["collections"], "class", "HeapInsight$EmptyMap");
    assert_eq!(maps["instances"], e["empty_maps"], "{what}: {maps}");
    assert_eq!(maps["empty"], e["empty_maps"], "{what}: {maps}");
    assert_eq!(maps["empty_bytes"], e["empty_maps"] * 48, "{what}: {maps}");
    let list = find(&w["collections"], "class", "HeapInsight$BoxList");
    assert_eq!(list["elements"], e["boxes"], "{what}: {list}");
    assert_eq!(list["capacity"], e["box_capacity"], "{what}: {list}");
    assert_eq!(list["unused_slot_bytes"], (e["box_capacity"] - e["boxes"]) * 4, "{what}: {list}");
    let ints = find(&w["boxed_in_collections"], "class", "java.lang.Integer");
    assert_eq!(find(&ints["holders"], "class", "HeapInsight$BoxList")["objects"], e["boxes"], "{what}: {ints}");
    let copies = array(&w["duplicate_arrays"]["top"], "top")
        .iter()
        .find(|d| d["class"] == "int[]" && d["length"] == e["dup_array_len"])
        .unwrap_or_else(|| panic!("{what}: no duplicated int[{}]", e["dup_array_len"]));
    assert_eq!(copies["copies"], e["dup_arrays"], "{what}: {copies}");
    assert_eq!(copies["wasted_bytes"], (e["dup_arrays"] - 1) * (16 + 4 * e["dup_array_len"]).div_ceil(8) * 8, "{what}");
    let redacted = hprof_json(&["waste", "--json", "--redact", f]);
    assert!(array(&redacted["duplicate_strings"]["top"], "top").iter().all(|d| d["value"].is_null()), "{what}");

    let l = hprof_json(&["loaders", "--json", f]);
    let plugin = find(&l["duplicate_classes"], "class", "HeapInsight$Plugin");
    // The application loader, the leaked ones (closed and destroyed) and the deployed one (the cleanly
    // undeployed one is gone).
    let leaked = e["leaked_loaders"] + e["destroyed_loaders"];
    assert_eq!(array(&plugin["loaders"], "loaders").len() as u64, leaked + 2, "{what}: {plugin}");
    let held = array(&l["held_after_close"], "held");
    assert_eq!(held.len() as u64, leaked, "{what}: {}", l["held_after_close"]);
    for h in held {
        let steps = array(&h["path"]["steps"], "steps");
        let fields: Vec<&str> = steps.iter().filter_map(|s| s["field"].as_str()).collect();
        assert!(fields.contains(&"static LEAK"), "{what}: {h}");
        assert_eq!(steps.last().unwrap()["id"], h["loader"], "{what}: {h}");
        let (class, why) = (steps.last().unwrap()["class"].as_str().unwrap(), h["why"].as_str().unwrap());
        match class {
            "java.net.URLClassLoader" => assert!(why.starts_with("closed"), "{what}: {h}"),
            "HeapInsight$WebappLoader" => assert!(why.starts_with("state DESTROYED"), "{what}: {h}"),
            _ => panic!("{what}: {h}"),
        }
    }
    let closed = array(&l["loaders"], "loaders").iter().filter(|x| x["closed"] == true).count() as u64;
    assert_eq!(closed, e["leaked_loaders"], "{what}");

    let t = hprof_json(&["threads", "--json", f]);
    let worker = find(&t["threads"], "name", "insight-worker");
    let frame = |method: &str| {
        array(&worker["frames"], "frames")
            .iter()
            .find(|fr| fr["method"] == method)
            .unwrap_or_else(|| panic!("{what}: no frame {method}: {worker}"))
            .clone()
    };
    let inner = frame("HeapInsight.inner");
    let held = find(&inner["objects"], "class", "int[]");
    assert_eq!(held["shallow_bytes"], 16 + 4 * 5_000, "{what}: {inner}");
    let outer = frame("HeapInsight.work");
    assert_eq!(find(&outer["objects"], "class", "byte[]")["retained_bytes"], 16 + 100_000, "{what}: {outer}");
    assert_eq!(inner["depth"].as_u64().unwrap() + 1, outer["depth"].as_u64().unwrap(), "{what}");
    assert!(worker["retained_bytes"].as_u64().unwrap() >= 100_016 + 20_016, "{what}: {}", worker["retained_bytes"]);
}

/// `diff --objects` between the dumps before and after the program's growth.
fn check_growth(before: &Path, after: &Path, e: &HashMap<String, u64>, what: &str) {
    let (a, b) = (before.to_str().unwrap(), after.to_str().unwrap());
    for how in ["path", "auto"] {
        let d = hprof_json(&["diff", "--objects", "--json", "--match", how, a, b]);
        let top = &array(&d["groups"], "groups")[0];
        assert!(top["holder"].as_str().unwrap().starts_with("java.lang.Object[]@"), "{what} ({how}): {top}");
        let n = e["grown"];
        assert_eq!(find(&top["classes"], "class", "HeapInsight$Grown")["objects"], n, "{what} ({how}): {top}");
        assert_eq!(find(&top["classes"], "class", "byte[]")["bytes"], n * (16 + 1000), "{what} ({how}): {top}");
        if how == "path" {
            assert_eq!(top["new_objects"], 2 * n, "{what}: {top}");
            assert_eq!(top["retained_bytes"], n * (16 + 16 + 1000), "{what}: {top}");
        }
        let fields: Vec<&str> =
            array(&top["path"]["steps"], "steps").iter().filter_map(|s| s["field"].as_str()).collect();
        assert!(fields.contains(&"static GROWTH"), "{what} ({how}): {top}");
    }
}

fn jcmd(jdk: &Jdk, pid: u32, args: &[&str]) {
    let o = Command::new(jdk.bin("jcmd")).arg(pid.to_string()).args(args).output().expect("jcmd");
    assert!(o.status.success(), "jcmd {args:?} on JDK {}: {}", jdk.version, String::from_utf8_lossy(&o.stdout));
}

/// Runs HeapInsight, dumps it with `jcmd` (or the agent: SIGQUIT), lets it grow, dumps again.
fn run_and_dump(jdk: &Jdk, dir: &Path, agent: bool) -> (PathBuf, PathBuf, HashMap<String, u64>) {
    // The program and jcmd (a JVM too) run together: two slots.
    let _slots = JvmSlot::acquire_n(2);
    let trigger = dir.join("grow");
    let (a, b) = (dir.join("before.hprof"), dir.join("after.hprof"));
    let mut java = Java::new(jdk, dir).vm_arg("-Xmx256m").vm_arg("-XX:+UseG1GC");
    if agent {
        java = java.agentpath(&format!("heap=dump,format=b,file={}", a.display()));
    }
    let mut jvm = java.class("HeapInsight").arg(trigger.to_str().unwrap()).spawn_holding(None);
    jvm.wait_for_stdout("ready", Duration::from_secs(60));
    let e = expectations(&jvm.stdout_so_far());
    if agent {
        jvm.signal(3);
        wait_for_heap_dump_end(&a);
    } else {
        jcmd(jdk, jvm.pid(), &["GC.heap_dump", a.to_str().unwrap()]);
    }
    std::fs::write(&trigger, b"").unwrap();
    jvm.wait_for_stdout("grown", Duration::from_secs(60));
    if !agent {
        jcmd(jdk, jvm.pid(), &["GC.heap_dump", b.to_str().unwrap()]);
    }
    jvm.signal(9);
    let _ = jvm.wait();
    (a, b, e)
}

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

#[test]
fn jcmd_dumps_show_the_programs_waste_leaked_loaders_frame_locals_and_growth() {
    for jdk in all_jdks() {
        if !jdk.bin("jcmd").is_file() {
            skip(format!("JDK {} has no jcmd ({}) to dump the heap with", jdk.version, jdk.home.display()));
            continue;
        }
        let dir = scratch(&format!("insight-{}", jdk.version));
        let (a, b, e) = run_and_dump(&jdk, dir.path(), false);
        let what = format!("JDK {} jcmd", jdk.version);
        check_dump(&a, &e, &what);
        check_growth(&a, &b, &e, &what);
    }
}

#[test]
fn agent_dumps_show_the_programs_waste_leaked_loaders_and_frame_locals() {
    let jdk = jdk17();
    let dir = scratch("insight-agent");
    let (a, _, e) = run_and_dump(&jdk, dir.path(), true);
    check_dump(&a, &e, "JDK 17 agent");
    // Each command within --max-memory, or stopped with the option named.
    for cmd in ["waste", "loaders", "threads"] {
        let o = Command::new(hprof_binary()).args(["--max-memory", "1M", cmd, a.to_str().unwrap()]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains("--max-memory 1.0 MiB"), "{cmd}: {err}");
        let o = Command::new(hprof_binary()).args(["--max-memory", "256M", cmd, a.to_str().unwrap()]).output().unwrap();
        assert!(o.status.success(), "{cmd} in 256 MiB: {}", String::from_utf8_lossy(&o.stderr));
    }
}
