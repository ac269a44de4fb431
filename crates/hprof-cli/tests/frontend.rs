//! Every analysis command over every file of the corpus (../shared/corpus/hprof, reported as skipped by name if
//! absent): results where the file is good, a clear error naming the offset where it is not, never a panic.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn hprof() -> PathBuf {
    jvm_harness::hprof_binary()
}

fn corpus() -> Option<PathBuf> {
    jvm_harness::corpus_dir()
}

fn run(args: &[&str]) -> Output {
    Command::new(hprof()).args(args).output().expect("run hprof")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = run(args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "hprof {args:?} failed: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("hprof {args:?}: bad JSON ({e}): {out}"))
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .chain(std::fs::read_dir(dir.join("damaged")).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && !p.to_string_lossy().ends_with(".md"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_command_on_every_corpus_file_answers_or_refuses_clearly() {
    let Some(dir) = corpus() else { return };
    let scratch = jvm_harness::scratch("frontend-corpus");
    for f in files(&dir) {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let fs = f.to_str().unwrap();
        let bad = name.ends_with(".phd") || f.parent().unwrap().ends_with("damaged");
        let out = scratch.path().join("out.html");
        let out_s = out.to_str().unwrap();
        let pprof = scratch.path().join("p.pb.gz");
        let commands: Vec<Vec<&str>> = vec![
            vec!["summary", fs],
            vec!["summary", "--json", fs],
            vec!["histo", fs, "--top", "5"],
            vec!["histo", "--json", fs],
            vec!["print", fs, "-o", "/dev/null"],
            vec!["dominators", fs, "--top", "5"],
            vec!["dominators", "--json", fs, "--class", "java.lang.String", "--top", "3"],
            vec!["leaks", fs],
            vec!["diff", fs, fs],
            vec!["diff", "--objects", "--json", fs, fs],
            vec!["waste", "--json", fs],
            vec!["loaders", "--json", fs],
            vec!["threads", "--json", fs],
            vec!["flame", fs, "-o", out_s],
            vec!["export", "--format", "pprof", fs, "-o", pprof.to_str().unwrap()],
            vec!["export", "--format", "collapsed", "--alloc", fs],
        ];
        for args in commands {
            let o = run(&args);
            let (stdout, stderr) = text(&o);
            let code = o.status.code();
            assert!(matches!(code, Some(0) | Some(1)), "{name}: hprof {args:?} crashed ({code:?}): {stderr}");
            assert!(!stderr.contains("panicked"), "{name}: hprof {args:?} panicked: {stderr}");
            let no_profile = matches!(args[0], "flame" | "export");
            if bad {
                assert_eq!(code, Some(1), "{name}: hprof {args:?} accepted a bad file");
                assert!(stderr.contains("hprof: error:"), "{name}: {stderr}");
                if !no_profile {
                    assert!(stderr.contains("offset"), "{name}: hprof {args:?}: error without an offset: {stderr}");
                }
            } else if !no_profile {
                assert_eq!(code, Some(0), "{name}: hprof {args:?} failed: {stderr}");
                if args.contains(&"--json") {
                    serde_json::from_str::<serde_json::Value>(&stdout).unwrap_or_else(|e| panic!("{name}: {e}"));
                }
            } else if code == Some(1) {
                assert!(
                    stderr.contains("has no CPU SAMPLES") || stderr.contains("has no ALLOC SITES"),
                    "{name}: {stderr}"
                );
            }
        }
        if name.ends_with(".phd") {
            let (_, err) = text(&run(&["histo", fs]));
            assert!(err.contains("Portable Heap Dump"), "{err}");
        }
    }
}

#[test]
fn summary_matches_hprof_slurp_counts() {
    let Some(dir) = corpus() else { return };
    // oracles/slurp_hprof-64-result.txt: 10768 strings, 474 classes, 10 traces, 20 frames, 7 thread stacks.
    let v = json(&["summary", "--json", dir.join("slurp_netbeans_hprof-64.bin").to_str().unwrap()]);
    assert_eq!(v["strings"], 10768);
    assert_eq!(v["classes_loaded"], 474);
    assert_eq!(v["stack_traces"], 10);
    assert_eq!(v["stack_frames"], 20);
    let stacks = v["thread_stacks"].as_array().unwrap();
    assert_eq!(stacks.len(), 7);
    assert!(
        stacks.iter().any(|s| s["frames"][0] == "java.lang.Thread.sleep (Thread.java:native method)"),
        "{stacks:?}"
    );
    assert_eq!(v["heap"]["instances"], 4149);
    assert_eq!(v["heap"]["gc_roots"], 453);
    // oracles/slurp_hprof-32-result.txt.
    let v = json(&["summary", "--json", dir.join("slurp_jhat_hprof-32.bin").to_str().unwrap()]);
    assert_eq!(v["strings"], 1496);
    assert_eq!(v["classes_loaded"], 361);
    assert_eq!(v["threads"].as_array().unwrap().len(), 5);
    let count =
        |name: &str| v["records"].as_array().unwrap().iter().find(|r| r["name"] == name).map(|r| r["count"].clone());
    assert_eq!(count("ALLOC SITES"), Some(1.into()));
    assert_eq!(count("END THREAD"), Some(1.into()));
    assert_eq!(count("CONTROL SETTINGS"), Some(1.into()));
}

#[test]
fn histo_json_figures_and_options() {
    let Some(dir) = corpus() else { return };
    let f = dir.join("mat_sun_jdk6_30_x64_compressedOops.hprof");
    let f = f.to_str().unwrap();
    let v = json(&["histo", "--json", f, "--filter", "java.lang.String", "--sort", "count"]);
    let classes = v["classes"].as_array().unwrap();
    assert_eq!(classes[0]["class"], "java.lang.String");
    assert_eq!(classes[0]["instances"], 876);
    assert_eq!(classes[0]["shallow_bytes"], 28032);
    assert!(classes.iter().all(|c| c["class"].as_str().unwrap().to_lowercase().contains("java.lang.string")));
    let v = json(&["histo", "--json", f, "--top", "3"]);
    assert_eq!(v["classes"].as_array().unwrap().len(), 3);
    assert_eq!(v["classes"][0]["class"], "char[]");
    assert_eq!(v["total_instances"], 4351);
}

#[test]
fn dominators_path_and_children_agree() {
    let Some(dir) = corpus() else { return };
    let f = dir.join("mat_oracle_jdk8_05_x64.hprof");
    let f = f.to_str().unwrap();
    let v = json(&["dominators", "--json", f, "--top", "5"]);
    let top = &v["dominators"][0];
    let id = top["id"].as_str().unwrap();
    let kids = json(&["dominators", "--json", f, "--children", id]);
    let sum: u64 = kids["children"].as_array().unwrap().iter().map(|c| c["retained_bytes"].as_u64().unwrap()).sum();
    assert_eq!(sum + top["shallow_bytes"].as_u64().unwrap(), top["retained_bytes"].as_u64().unwrap());
    // A path to a child ends at it and starts at a GC root.
    let child = kids["children"][0]["id"].as_str().unwrap();
    let p = json(&["path", "--json", f, child]);
    let steps = p["path"]["steps"].as_array().unwrap();
    assert_eq!(steps.last().unwrap()["id"], child);
    assert!(p["path"]["root_kind"].as_str().is_some());
    assert!(steps.len() >= 2 && steps[1]["field"].is_string(), "{p}");
    let o = run(&["path", f, "0x1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("no object 0x1"));
}

#[test]
fn diff_of_two_producers_shows_growth() {
    let Some(dir) = corpus() else { return };
    let a = dir.join("mat_sun_jdk6_30_x64_compressedOops.hprof");
    let b = dir.join("mat_sun_jdk6_31_hprofagent_compressedOops.hprof");
    let v = json(&["diff", "--json", a.to_str().unwrap(), b.to_str().unwrap()]);
    let rows = v["classes"].as_array().unwrap();
    assert!(!rows.is_empty());
    for r in rows {
        assert_eq!(
            r["bytes_delta"].as_i64().unwrap(),
            r["bytes_after"].as_i64().unwrap() - r["bytes_before"].as_i64().unwrap()
        );
    }
    let same = json(&["diff", "--json", a.to_str().unwrap(), a.to_str().unwrap()]);
    assert!(same["classes"].as_array().unwrap().is_empty());
}

#[test]
fn alloc_sites_flame_graph_and_exports() {
    let Some(dir) = corpus() else { return };
    let f = dir.join("slurp_jhat_hprof-32.bin");
    let f = f.to_str().unwrap();
    let scratch = jvm_harness::scratch("frontend-flame");
    let svg = scratch.path().join("a.svg");
    let o = run(&["flame", "--alloc", f, "-o", svg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o).1);
    assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    let o = run(&["export", "--format", "collapsed", "--alloc", f]);
    let (out, _) = text(&o);
    assert!(
        out.lines().count() > 0 && out.lines().all(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().is_ok()),
        "{out}"
    );
    let pb = scratch.path().join("a.pb.gz");
    let o = run(&["export", "--format", "pprof", "--alloc", f, "-o", pb.to_str().unwrap()]);
    assert!(o.status.success());
    let mut raw = Vec::new();
    flate2_read(&std::fs::read(&pb).unwrap(), &mut raw);
    // profile.proto: field 1 (sample_type) first, and the string table holds the unit.
    assert_eq!(raw[0], 0x0a);
    assert!(raw.windows(5).any(|w| w == b"bytes"));
}

fn flate2_read(gz: &[u8], out: &mut Vec<u8>) {
    // The gzip header's magic, then let the system's gzip decompress (no extra test dependency).
    assert_eq!(&gz[..2], &[0x1f, 0x8b]);
    let mut child = Command::new("gzip").arg("-dc").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(gz).unwrap();
    child.stdout.take().unwrap().read_to_end(out).unwrap();
    assert!(child.wait().unwrap().success());
}

/// `hprof serve` on a free port; returns the child and its base URL.
pub fn serve(file: &str) -> (std::process::Child, String) {
    let mut child = Command::new(hprof())
        .args(["serve", file, "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("address line")
        .trim_end_matches('/')
        .to_owned();
    (child, url)
}

fn get(url: &str, path: &str) -> (u16, String) {
    let host = url.trim_start_matches("http://");
    let mut s = TcpStream::connect(host).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let code = resp.split_whitespace().nth(1).unwrap().parse().unwrap();
    let body = resp.split_once("\r\n\r\n").map(|x| x.1.to_owned()).unwrap_or_default();
    (code, body)
}

#[test]
fn serve_answers_pages_and_json() {
    let Some(dir) = corpus() else { return };
    let f = dir.join("mat_oracle_jdk8_05_x64.hprof");
    let (mut child, url) = serve(f.to_str().unwrap());
    let (code, body) = get(&url, "/histo?filter=String");
    assert_eq!(code, 200);
    assert!(body.contains("<table id=\"histogram\">") && body.contains("java.lang.String"), "{body}");
    let (code, body) = get(&url, "/api/dominators");
    assert_eq!(code, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let id = v["children"][0]["id"].as_str().unwrap().to_owned();
    let (code, body) = get(&url, &format!("/dominators?id={id}"));
    assert_eq!(code, 200);
    assert!(body.contains("dominated by"), "{body}");
    let (code, body) = get(&url, &format!("/path?id={id}"));
    assert_eq!(code, 200);
    assert!(body.contains("GC root"), "{body}");
    let (code, body) = get(&url, "/leaks?threshold=5");
    assert_eq!(code, 200);
    assert!(body.contains("<ol id=\"suspects\">") && body.contains(" retain"), "{body}");
    assert_eq!(get(&url, "/nope").0, 404);
    assert_eq!(get(&url, "/dominators?id=0x1").0, 404);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// The web view in a real browser (headless Chromium, Debian's `chromium`; `make chromium` installs it).
/// Skipped with a message when it is not installed.
#[test]
fn serve_renders_in_headless_chromium() {
    let Some(dir) = corpus() else { return };
    let Some(chromium) = ["chromium", "chromium-browser"].iter().find(|c| {
        Command::new(c).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    }) else {
        jvm_harness::skip("no chromium (make chromium installs it)");
        return;
    };
    let f = dir.join("mat_oracle_jdk8_05_x64.hprof");
    let (mut child, url) = serve(f.to_str().unwrap());
    let profile = jvm_harness::scratch("chromium");
    let dom = |path: &str| {
        let o = Command::new(chromium)
            .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("--dump-dom")
            .arg(format!("{url}{path}"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let histo = dom("/histo");
    assert!(histo.contains("id=\"histogram\"") && histo.contains("java.lang.String"), "{histo}");
    let tree = dom("/dominators");
    assert!(tree.contains("id=\"dominators\"") && tree.contains("[path]"), "{tree}");
    let id =
        tree.split("/dominators?id=").nth(1).and_then(|s| s.split('"').next()).expect("a drill-down link").to_owned();
    let drill = dom(&format!("/dominators?id={id}"));
    assert!(drill.contains("dominated by"), "{drill}");
    let path = dom(&format!("/path?id={id}"));
    assert!(path.contains("GC root"), "{path}");
    child.kill().unwrap();
    child.wait().unwrap();
}

/// A progress bar on a terminal (through `script`, which gives the command a pseudo-terminal), none
/// when stderr is piped.
#[test]
fn progress_bar_only_on_a_terminal() {
    let Some(dir) = corpus() else { return };
    let f = dir.join("mat_openjdk_jdk11_04_x64.hprof.gz");
    let o = run(&["histo", f.to_str().unwrap(), "--top", "1"]);
    assert!(o.status.success());
    assert!(o.stderr.is_empty(), "piped stderr got: {}", String::from_utf8_lossy(&o.stderr));
    let has_script = Command::new("script").arg("--version").output().is_ok_and(|o| o.status.success());
    if !has_script {
        jvm_harness::skip("the terminal half: no `script` (util-linux) to give hprof a terminal");
        return;
    }
    let cmd = format!("{} histo {} --top 1", hprof().display(), f.display());
    let o = Command::new("script").args(["-qec", &cmd, "/dev/null"]).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("decompressing") || out.contains("histogram"), "no progress bar on a terminal: {out}");
}
