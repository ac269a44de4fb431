//! `hprof serve`'s single-page application in a real browser: headless Chromium driven by Selenium
//! (tests/browser/spa.py) over two dumps with CPU profiles that the agent wrote on CpuAccuracy (JDK 17)
//! and an unreadable file. What the views show is checked against `hprof histo`, `dominators`, `path`
//! and `export` on the same files. Skipped by name without chromium, chromedriver or Selenium
//! (`make chromium selenium` installs them); a failing step leaves a screenshot, the page and the
//! browser's log in target/<profile>/test-output/serve_spa/.

use jvm_harness::{Java, hprof_binary, hprof_json, jdk17, scratch, skip};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The first of `names` that runs with `--version`.
fn tool(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
        .map(|s| s.to_string())
}

/// Selenium installed by `make selenium` (into target/selenium), if Python can import it from there.
fn selenium() -> Option<PathBuf> {
    let dir = jvm_harness::repo_root().join("target/selenium");
    let ok = Command::new("python3")
        .args(["-c", "import selenium"])
        .env("PYTHONPATH", &dir)
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(dir)
}

/// A dump with CPU samples of CpuAccuracy (hotAlpha and hotBeta) running `seconds`, per thread.
fn profile(dir: &Path, name: &str, seconds: &str) -> PathBuf {
    Java::new(&jdk17(), dir)
        .agentpath(&format!("heap=dump,cpu=samples,format=b,thread=y,depth=16,interval=1,file={name}"))
        .class("CpuAccuracy")
        .args(&[seconds])
        .run()
        .assert_success();
    dir.join(name)
}

struct Serving(Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(files: &[&Path], more: &[&str]) -> (Serving, String) {
    let mut child = Command::new(hprof_binary())
        .arg("serve")
        .args(files)
        .args(more)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).expect("the URL line").to_owned();
    (Serving(child), url)
}

/// The sum of the collapsed stacks' weights, and of those through a frame containing `frame`.
fn collapsed(file: &Path, frame: &str) -> (u64, u64) {
    collapsed_with(file, frame, &[])
}

/// `collapsed` with more arguments (`--from`, `--to`).
fn collapsed_with(file: &Path, frame: &str, args: &[&str]) -> (u64, u64) {
    let o =
        Command::new(hprof_binary()).args(["export", "--format", "collapsed"]).args(args).arg(file).output().unwrap();
    assert!(o.status.success(), "hprof export {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    let mut all = 0;
    let mut hit = 0;
    for l in String::from_utf8_lossy(&o.stdout).lines() {
        let (stack, n) = l.rsplit_once(' ').unwrap();
        let n: u64 = n.parse().unwrap();
        all += n;
        if stack.split(';').any(|f| f.contains(frame)) {
            hit += n;
        }
    }
    (all, hit)
}

/// `GET path` from the server at `url`: the body of a 200 answer.
fn get(url: &str, path: &str) -> String {
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let mut s = TcpStream::connect(host).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    assert!(resp.starts_with("HTTP/1.0 200") || resp.starts_with("HTTP/1.1 200"), "GET {path}: {resp}");
    resp.split_once("\r\n\r\n").map(|x| x.1.to_owned()).unwrap_or_default()
}

/// Every page and API answer about file 0 (the second file the diffs' base): the lists, the views, each
/// thread object, the objects its fields refer to and those theirs refer to (a thread's name String and
/// its array). Answers as (path, body); the inspector's answers parsed under "object".
fn crawl(url: &str) -> (Vec<(String, String)>, Vec<Value>) {
    let mut seen = Vec::new();
    let mut fetch = |path: String| {
        let body = get(url, &path);
        seen.push((path, body.clone()));
        body
    };
    for page in ["/", "/histo", "/dominators", "/leaks", "/flame", "/objects?class=java.lang.Thread"] {
        fetch(page.to_owned());
    }
    for api in [
        "summary",
        "histo",
        "histo?group=package",
        "histo?group=loader",
        "dominators",
        "leaks",
        "waste",
        "loaders",
        "threads",
        "flame",
        "methods",
        "timeline",
        "flamediff?b=1",
        "diff?b=1",
        "diffobjects?b=1",
    ] {
        let sep = if api.contains('?') { '&' } else { '?' };
        fetch(format!("/api/{api}{sep}f=0"));
    }
    let threads: Value =
        serde_json::from_str(&fetch("/api/objects?f=0&class=java.lang.Thread&limit=1000".into())).unwrap();
    let mut objects = Vec::new();
    let mut next: Vec<String> =
        threads["objects"].as_array().unwrap().iter().map(|o| o["id"].as_str().unwrap().to_owned()).collect();
    for _depth in 0..3 {
        let mut refs = Vec::new();
        for id in next.drain(..) {
            let o: Value = serde_json::from_str(&fetch(format!("/api/object?f=0&id={id}"))).unwrap();
            fetch(format!("/api/path?f=0&id={id}"));
            fetch(format!("/api/incoming?f=0&id={id}"));
            for f in o["fields"].as_array().into_iter().flatten() {
                if let Some(r) = f["ref"]["id"].as_str() {
                    refs.push(r.to_owned());
                }
            }
            objects.push(o);
        }
        refs.sort();
        refs.dedup();
        next = refs.into_iter().take(200).collect();
    }
    (seen, objects)
}

/// The primitive values an inspector answer shows: fields, statics and array elements of a primitive type.
fn primitive_values(o: &Value) -> Vec<&Value> {
    ["fields", "statics", "elements"]
        .iter()
        .flat_map(|k| o[*k].as_array().into_iter().flatten())
        .filter(|f| f["type"] != "Object" && f["ref"].is_null() && f["value"] != "null")
        .map(|f| &f["value"])
        .collect()
}

/// The package of a class name, as the histogram groups them.
fn package(class: &str) -> &str {
    let base = class.trim_end_matches("[]");
    base.rfind('.').map_or("<default>", |i| &base[..i])
}

/// Per package, from every object's class, retained size and immediate dominator: (the retained bytes of
/// the objects no other object of the package dominates, instances, the plain sum of retained bytes).
fn package_retained(every: &Value) -> std::collections::HashMap<String, (u64, u64, u64)> {
    let objects = every["objects"].as_array().unwrap();
    let by_id: std::collections::HashMap<&str, &Value> =
        objects.iter().map(|o| (o["id"].as_str().unwrap(), o)).collect();
    let mut out: std::collections::HashMap<String, (u64, u64, u64)> = Default::default();
    for o in objects {
        let mine = package(o["class"].as_str().unwrap());
        let retained = o["retained_bytes"].as_u64().unwrap();
        let mut up = o["dominator"].as_str().and_then(|d| by_id.get(d));
        let mut inside = false;
        while let Some(d) = up {
            if package(d["class"].as_str().unwrap()) == mine {
                inside = true;
                break;
            }
            up = d["dominator"].as_str().and_then(|x| by_id.get(x));
        }
        let e = out.entry(mine.to_owned()).or_default();
        e.1 += 1;
        e.2 += retained;
        if !inside && o["reachable"] == true {
            e.0 += retained;
        }
    }
    out
}

#[test]
fn spa_views_in_headless_chromium() {
    let (Some(chromium), Some(driver)) =
        (tool(&["chromium", "chromium-browser"]), tool(&["chromedriver", "/usr/lib/chromium/chromedriver"]))
    else {
        skip("no chromium or chromedriver (make chromium installs both)");
        return;
    };
    let Some(selenium) = selenium() else {
        skip("no Selenium in target/selenium (make selenium installs it)");
        return;
    };
    let dir = scratch("serve-spa");
    let a = profile(dir.path(), "a.hprof", "2");
    let b = profile(dir.path(), "b.hprof", "1");
    // A third profile with CPU samples and lock times (LockProfile: two posters contend, a waiter waits).
    Java::new(&jdk17(), dir.path())
        .agentpath("cpu=samples,monitor=y,format=b,depth=8,interval=1,file=locks.hprof")
        .class("LockProfile")
        .args(&["2", "10", "5", "2", "20"])
        .run()
        .assert_success();
    let locks = dir.path().join("locks.hprof");
    let bad = dir.path().join("bad.hprof");
    std::fs::write(&bad, "these are notes, not a heap dump\n").unwrap();
    let (_server, url) = serve(&[&a, &b, &bad, &locks], &[]);
    let out = jvm_harness::target_profile_dir().join("test-output/serve_spa");
    let _ = std::fs::remove_dir_all(&out);
    let script = jvm_harness::repo_root().join("crates/hprof-cli/tests/browser/spa.py");
    let (class, frame) = ("java.lang.String", "hotAlpha");
    let o = Command::new("python3")
        .arg(&script)
        .args([url.as_str(), out.to_str().unwrap(), class, frame])
        .env("PYTHONPATH", &selenium)
        .env(
            "CHROMIUM",
            Command::new("sh")
                .args(["-c", &format!("command -v {chromium}")])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
                .unwrap_or(chromium),
        )
        .env(
            "CHROMEDRIVER",
            Command::new("sh")
                .args(["-c", &format!("command -v {driver}")])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
                .unwrap_or(driver),
        )
        // Selenium asks the network for drivers and sends usage statistics unless told not to.
        .env("SE_AVOID_STATS", "true")
        .env("SE_OFFLINE", "true")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "the browser test failed (screenshot in {}):\n{stderr}", out.display());
    let seen: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    eprintln!("seen: {seen}");

    let views =
        ["overview", "histo", "dominators", "object", "leaks", "waste", "loaders", "threads", "flame", "callers"];
    for view in views.into_iter().chain(["flamediff", "diff"]) {
        assert!(seen["views"].as_array().unwrap().iter().any(|v| v == view), "view {view} never loaded: {seen}");
    }
    assert!(seen["console"].as_array().unwrap().is_empty(), "console errors: {}", seen["console"]);

    let af = a.to_str().unwrap();
    // The histogram row of the class found by search: `hprof histo` and `hprof dominators`.
    let histo = hprof_json(&["histo", "--json", af]);
    let row = histo["classes"].as_array().unwrap().iter().find(|c| c["class"] == class).unwrap();
    assert_eq!(seen["histo_row"]["instances"], row["instances"], "{seen}");
    assert_eq!(seen["histo_row"]["shallow_bytes"], row["shallow_bytes"], "{seen}");
    let dom = hprof_json(&["dominators", "--json", "--top", "100000", af]);
    let retained = dom["classes"].as_array().unwrap().iter().find(|c| c["class"] == class).unwrap();
    assert_eq!(seen["histo_row"]["retained_bytes"], retained["retained_bytes"], "{seen}");
    assert_eq!(seen["objects_total"], dom["objects"]);
    assert!(seen["histo_package_rows"].as_u64().unwrap() >= 1 && seen["histo_loader_rows"].as_u64().unwrap() >= 1);
    // A package's retained size: its objects' retained sizes, each counted unless an object of the
    // package dominates it (from every object's dominator in `hprof dominators --class '*'`).
    let every = hprof_json(&["dominators", "--json", "--class", "*", af]);
    let package_retained = package_retained(&every);
    let packages = seen["histo_package"].as_array().unwrap();
    assert!(packages.len() >= 3, "{seen}");
    let mut nested = 0;
    for row in packages {
        let name = row["name"].as_str().unwrap();
        let (retained, instances, summed) = package_retained[name];
        assert_eq!(row["retained_bytes"], retained, "package {name}: {seen}");
        assert_eq!(row["instances"], instances, "package {name}: {seen}");
        nested += usize::from(summed > retained);
    }
    assert!(nested > 0, "a package whose objects dominate each other (java.util's maps and their nodes): {seen}");

    // The dominator tree's first level, and each level opened: `hprof dominators [--children]`.
    let top = hprof_json(&["dominators", "--json", "--top", "5", af]);
    for (shown, cli) in seen["dominator_roots"].as_array().unwrap().iter().zip(top["dominators"].as_array().unwrap()) {
        assert_eq!(shown["id"], cli["id"], "{seen}");
        assert_eq!(shown["retained_bytes"], cli["retained_bytes"], "{seen}");
    }
    let chain = seen["dominator_chain"].as_array().unwrap();
    assert_eq!(chain.len(), 4, "three levels opened: {seen}");
    for w in chain.windows(2) {
        let kids =
            hprof_json(&["dominators", "--json", "--top", "1000", "--children", w[0]["id"].as_str().unwrap(), af]);
        let kid = kids["children"].as_array().unwrap().iter().find(|k| k["id"] == w[1]["id"]);
        let kid = kid.unwrap_or_else(|| panic!("{} is not a child of {} in hprof dominators", w[1]["id"], w[0]["id"]));
        assert_eq!(kid["retained_bytes"], w[1]["retained_bytes"]);
    }

    // The object opened and its path from a GC root: `hprof path`.
    let id = seen["object"]["id"].as_str().unwrap();
    let path = hprof_json(&["path", "--json", af, id]);
    assert_eq!(seen["object"]["shallow_bytes"], path["object"]["shallow_bytes"]);
    assert_eq!(seen["object"]["retained_bytes"], path["object"]["retained_bytes"]);
    let steps = path["path"]["steps"].as_array().unwrap();
    let ids: Vec<&str> = steps.iter().map(|s| s["id"].as_str().unwrap()).collect();
    let shown: Vec<&str> = seen["object"]["path"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert_eq!(shown, ids, "{seen}");
    for (shown, cli) in seen["object"]["path_fields"].as_array().unwrap().iter().zip(steps) {
        assert_eq!(shown, &cli["field"], "{seen}");
    }
    assert_eq!(seen["path_root_object"]["id"], steps[0]["id"]);
    assert_eq!(seen["path_root_object"]["path_len"], 1, "the first step is held by the root itself");

    // The heap insights: `hprof waste`, `loaders` and `threads`.
    assert_eq!(seen["waste_bytes"], hprof_json(&["waste", "--json", af])["wasted_bytes"], "{seen}");
    let loaders = hprof_json(&["loaders", "--json", af]);
    assert_eq!(seen["loaders"].as_u64().unwrap(), loaders["loaders"].as_array().unwrap().len() as u64, "{seen}");
    let threads = hprof_json(&["threads", "--json", af]);
    assert_eq!(seen["threads"].as_u64().unwrap(), threads["threads"].as_array().unwrap().len() as u64, "{seen}");
    assert!(seen["threads"].as_u64().unwrap() > 0, "{seen}");

    // The flame graph's search: the matched share is the samples through the frame (`hprof export`).
    let (all, hit) = collapsed(&a, frame);
    assert_eq!(seen["flame_total"], all, "{seen}");
    assert_eq!(seen["flame_matched"], hit, "{seen}");
    assert!(hit * 2 > all, "hotAlpha has most of CpuAccuracy's samples: {hit} of {all}");
    assert!(seen["flame_zoom"]["frame"].as_str().unwrap().contains(frame));
    assert!(seen["flame_threads"].as_u64().unwrap() >= 1, "thread=y gives the samples' threads: {seen}");
    // The timeline: all samples have times; a range dragged across it and one typed give `hprof export
    // --from --to`'s totals.
    assert_eq!(seen["timeline_total"], all, "{seen}");
    for key in ["range", "range_typed"] {
        let r = &seen[key];
        let (from, to) = (format!("{}ms", r["from"]), format!("{}ms", r["to"]));
        let (in_range, _) = collapsed_with(&a, frame, &["--from", &from, "--to", &to]);
        assert_eq!(r["total"], in_range, "{key} {from}..{to}: {seen}");
    }
    let dragged = seen["range"]["total"].as_u64().unwrap();
    assert!(dragged > 0 && dragged < all, "the middle half of the run holds some of its samples: {seen}");
    let end = seen["timeline_end_ms"].as_u64().unwrap();
    assert!(end > 1500, "CpuAccuracy ran 2 s: {seen}");
    assert!(seen["range"]["from"].as_u64().unwrap() * 5 > end && seen["range"]["to"].as_u64().unwrap() * 5 < end * 4);
    // Per thread, the timeline counts that thread's samples.
    assert_eq!(seen["timeline_thread_total"], seen["flame_thread_total"], "{seen}");
    assert!(seen["callers_title"].as_str().unwrap().contains(frame));
    // The diff against the second profile: both totals, the frame's weight before and after.
    let (ball, bhit) = collapsed(&b, frame);
    // Counts are shown with thousands separators (en-US) once they reach 1,000; compare the digits.
    let digits = |s: &str| s.replace(',', "");
    assert_eq!(digits(seen["flamediff_totals"].as_str().unwrap()), format!("{ball} → {all} samples"));
    assert_eq!(seen["flamediff_matched"], hit);
    let title = seen["flamediff_title"][0].as_str().unwrap();
    assert!(digits(title).contains(&format!("before: {bhit}")), "{title}");
    // The diff's thread filter: this file's thread, and the second file's thread of that name.
    assert_eq!(
        digits(seen["flamediff_thread_totals"].as_str().unwrap()),
        format!("{} → {} samples", seen["b_thread_total"], seen["flame_thread_total"]),
        "{seen}"
    );
    assert!(seen["b_thread_total"].as_u64().unwrap() > 0, "{seen}");
    assert!(seen["diff_rows"].as_u64().unwrap() > 0, "{seen}");
    // Object by object: `hprof diff B A --objects --json` (b= is the earlier dump).
    let growth = hprof_json(&["diff", "--objects", "--json", b.to_str().unwrap(), af]);
    let shown = &seen["diff_objects"];
    // Opened right after start, before the background diff was there, it shows the same once ready.
    assert_eq!(&seen["diff_objects_at_start"], shown, "{seen}");
    assert_eq!(shown["new_objects"], growth["new_objects"], "{seen}");
    assert_eq!(shown["new_bytes"], growth["new_bytes"], "{seen}");
    let groups = growth["groups"].as_array().unwrap();
    assert!(!groups.is_empty(), "a second run of the program has objects the first lacks: {growth}");
    assert_eq!(shown["groups"].as_array().unwrap().len(), groups.len(), "{seen}");
    for (row, cli) in shown["groups"].as_array().unwrap().iter().zip(groups) {
        for k in ["holder", "new_objects", "new_bytes", "retained_bytes"] {
            assert_eq!(row[k], cli[k], "{k}: {row} against {cli}");
        }
    }

    // --redact: the names of the program's JVM threads (Strings of the heap, shown without it in the threads
    // view, in the inspector and as their String's text) are nowhere in any page or answer; every primitive
    // value the inspector shows is hidden.
    let (plain, plain_objects) = crawl(&url);
    let secrets: Vec<&str> = ["Signal Dispatcher", "Reference Handler", "Notification Thread", "HPROF worker"]
        .into_iter()
        .filter(|s| plain.iter().any(|(_, b)| b.contains(s)))
        .collect();
    assert!(secrets.contains(&"Signal Dispatcher"), "the crawl reaches the threads' names");
    let plain_strings: Vec<&Value> =
        plain_objects.iter().filter(|o| o["string"].is_string()).map(|o| &o["string"]).collect();
    assert!(
        plain_strings.iter().any(|s| *s == "Signal Dispatcher"),
        "a thread's name String is inspected: {plain_strings:?}"
    );
    assert!(
        plain_objects.iter().flat_map(primitive_values).any(|v| v.as_str().is_some_and(|s| s.parse::<i64>().is_ok()))
    );
    let (_redacted_server, redacted_url) = serve(&[&a, &b], &["--redact"]);
    let (redacted, objects) = crawl(&redacted_url);
    assert_eq!(redacted.len(), plain.len(), "the same crawl");
    for (path, body) in &redacted {
        for secret in &secrets {
            assert!(!body.contains(secret), "GET {path} with --redact shows {secret:?}: {body}");
        }
    }
    let hidden: Vec<&Value> = objects.iter().flat_map(primitive_values).collect();
    assert!(hidden.len() > 20, "the crawl inspects primitive fields and arrays: {}", hidden.len());
    assert!(hidden.iter().all(|v| *v == "<redacted>"), "{hidden:?}");
    assert!(objects.iter().all(|o| o["string"].is_null()), "no String text with --redact");

    // The lock profile, picked in the type picker: `hprof export --format collapsed --lock`'s nanoseconds.
    let (lock_ns, _) = collapsed_with(&locks, "LockProfile", &["--lock"]);
    assert!(lock_ns > 0);
    assert_eq!(seen["lock_total"], lock_ns, "{seen}");
    assert!(seen["lock_kinds"].as_array().unwrap().iter().any(|k| k == "lock"), "{seen}");

    // The unreadable file: named, with where reading stopped; the server answered on.
    let bad_text = seen["bad_file"].as_str().unwrap();
    assert!(bad_text.contains("bad.hprof") && bad_text.contains("offset 0"), "{bad_text}");
}
