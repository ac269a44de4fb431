//! `hprof serve`'s single-page application in a real browser: headless Chromium driven by Selenium
//! (tests/browser/spa.py) over two dumps with CPU profiles that the agent wrote on CpuAccuracy (JDK 17)
//! and an unreadable file. What the views show is checked against `hprof histo`, `dominators`, `path`
//! and `export` on the same files. Skipped by name without chromium, chromedriver or Selenium
//! (`make chromium selenium` installs them); a failing step leaves a screenshot, the page and the
//! browser's log in target/<profile>/test-output/serve_spa/.

use jvm_harness::{Java, hprof_binary, hprof_json, jdk17, scratch, skip};
use serde_json::Value;
use std::io::{BufRead, BufReader};
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

fn serve(files: &[&Path]) -> (Serving, String) {
    let mut child = Command::new(hprof_binary())
        .arg("serve")
        .args(files)
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
    let o = Command::new(hprof_binary()).args(["export", "--format", "collapsed"]).arg(file).output().unwrap();
    assert!(o.status.success());
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
    let bad = dir.path().join("bad.hprof");
    std::fs::write(&bad, "these are notes, not a heap dump\n").unwrap();
    let (_server, url) = serve(&[&a, &b, &bad]);
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
    assert!(seen["callers_title"].as_str().unwrap().contains(frame));
    // The diff against the second profile: both totals, the frame's weight before and after.
    let (ball, bhit) = collapsed(&b, frame);
    // Counts are shown with thousands separators (en-US) once they reach 1,000; compare the digits.
    let digits = |s: &str| s.replace(',', "");
    assert_eq!(digits(seen["flamediff_totals"].as_str().unwrap()), format!("{ball} → {all} samples"));
    assert_eq!(seen["flamediff_matched"], hit);
    let title = seen["flamediff_title"][0].as_str().unwrap();
    assert!(digits(title).contains(&format!("before: {bhit}")), "{title}");
    assert!(seen["diff_rows"].as_u64().unwrap() > 0, "{seen}");

    // The unreadable file: named, with where reading stopped; the server answered on.
    let bad_text = seen["bad_file"].as_str().unwrap();
    assert!(bad_text.contains("bad.hprof") && bad_text.contains("offset 0"), "{bad_text}");
}
