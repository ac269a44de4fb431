//! monitor=y in binary profiles, end to end, on one JVM run per JDK of java/programs/LockProfile.java (four
//! threads blocking on one Ledger, one thread in Object.wait on a Mailbox, both timed by the program):
//! the MONITOR TIMES record against the program's clocks and the agent's own lock stacks; `hprof print`'s
//! MONITOR TIME; `hprof flame
//! --lock`, `export --lock` (collapsed; pprof decoded by the official profile.proto), the Parquet
//! `monitor_time` table read by DuckDB, and `hprof serve`'s JSON API, all with the record's totals.

use hprof_analysis::stacks::{LockRow, lock_rows};
use hprof_analysis::{Dump, Quiet};
use hprof_format::binary::MonitorKind;
use jvm_harness::{Java, all_jdks, hprof_binary, repo_root, scratch, skip};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const LEDGER: &str = "LockProfile$Ledger";
const MAILBOX: &str = "LockProfile$Mailbox";

fn hprof(args: &[&str]) -> String {
    let o = Command::new(hprof_binary()).args(args).output().unwrap();
    assert!(o.status.success(), "hprof {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// `name=value` the program printed.
fn printed(stdout: &str, name: &str) -> u64 {
    let prefix = format!("{name}=");
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("the program did not print {name}=…:\n{stdout}"))
}

/// Folded stacks (`a;b;leaf N`) summed by leaf frame.
fn collapsed_by_leaf(text: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap_or_else(|| panic!("not a folded line: {line:?}"));
        let leaf = stack.rsplit(';').next().unwrap().to_owned();
        *out.entry(leaf).or_default() += n.parse::<u64>().unwrap();
    }
    out
}

fn sum_of(rows: &[&LockRow]) -> (u64, u64) {
    (rows.iter().map(|r| r.count).sum(), rows.iter().map(|r| r.nanos).sum())
}

/// target/pysql's DuckDB, or a named skip.
fn duckdb(dir: &Path, sql: &str) -> Option<Vec<Value>> {
    let py = repo_root().join("target/pysql");
    if !py.join("duckdb").is_dir() {
        skip(format!("{} lacks PyPI's duckdb (make pysql): the monitor_time table is not read", py.display()));
        return None;
    }
    let o = Command::new("python3")
        .arg(repo_root().join("scripts/sql/engines.py"))
        .args(["duckdb".as_ref(), dir.as_os_str(), sql.as_ref()])
        .env("PYTHONPATH", &py)
        .output()
        .unwrap();
    assert!(o.status.success(), "duckdb {sql}: {}", String::from_utf8_lossy(&o.stderr));
    Some(serde_json::from_slice::<Value>(&o.stdout).unwrap().as_array().unwrap().clone())
}

/// target/pyotel's decoder of profile.proto (scripts/otel/decode.py), or a named skip.
fn pprof_decoded(file: &Path) -> Option<Value> {
    let py = repo_root().join("target/pyotel");
    if !py.join("grpc_tools").is_dir() {
        skip(format!("{} lacks grpcio-tools (make pyotel): the lock pprof is not decoded", py.display()));
        return None;
    }
    let o = Command::new("python3")
        .arg(repo_root().join("scripts/otel/decode.py"))
        .arg("pprof")
        .arg(file)
        .output()
        .unwrap();
    assert!(o.status.success(), "decode.py: {}", String::from_utf8_lossy(&o.stderr));
    Some(serde_json::from_slice(&o.stdout).unwrap())
}

/// `hprof serve FILE` on a free port: the child and its base URL.
fn serve(file: &Path) -> (std::process::Child, String) {
    let mut child = Command::new(hprof_binary())
        .arg("serve")
        .arg(file)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).expect("address line");
    (child, url.trim_end_matches('/').to_owned())
}

/// GET `path` as JSON once it holds `key` (while the index is built, answers hold an error instead).
fn api(url: &str, path: &str, key: &str) -> Value {
    let host = url.trim_start_matches("http://");
    for _ in 0..600 {
        let mut s = TcpStream::connect(host).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
        let mut resp = String::new();
        s.read_to_string(&mut resp).unwrap();
        let body = resp.split_once("\r\n\r\n").map(|x| x.1).unwrap_or_default();
        if let Ok(v) = serde_json::from_str::<Value>(body)
            && v.get(key).is_some_and(|p| !p.is_null())
        {
            return v;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("{url}{path} did not answer with the profile");
}

#[test]
fn lock_profiles_go_from_binary_files_to_flame_graphs_pprof_parquet_and_serve_with_the_programs_times() {
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("lock-profile");
        let run = Java::new(&jdk, dir.path())
            .agentpath("monitor=y,format=b,depth=8,collapsed=agent.collapsed")
            .class("LockProfile")
            .run();
        run.assert_success();
        let (blocked_ns, surely, acquisitions) = (
            printed(&run.stdout, "blocked_ns"),
            printed(&run.stdout, "surely_blocked"),
            printed(&run.stdout, "acquisitions"),
        );
        let (waits, waited_ns) = (printed(&run.stdout, "waits"), printed(&run.stdout, "waited_ns"));
        assert!(blocked_ns > 1_000_000_000 && surely > 20, "{what}: the program barely blocked ({blocked_ns} ns)");
        let file: PathBuf = dir.path().join("java.hprof");

        // The record: the Ledger's contended entries on post()'s stack, the Mailbox's waits in awaitMail().
        let dump = Dump::open(&file, &Quiet).unwrap();
        let rows = lock_rows(&dump);
        let top = |r: &LockRow| dump.trace_frames(r.trace_serial).first().map(|f| f.qualified_method());
        let ledger: Vec<&LockRow> = rows.iter().filter(|r| r.kind == MonitorKind::Enter && r.class == LEDGER).collect();
        let (count, nanos) = sum_of(&ledger);
        let ratio = nanos as f64 / blocked_ns as f64;
        assert!((0.85..=1.1).contains(&ratio), "{what}: {nanos} ns blocked on the Ledger, the program's {blocked_ns}");
        assert!((surely..=acquisitions).contains(&count), "{what}: {count} entries, {surely}..={acquisitions}");
        for r in &ledger {
            assert_eq!(top(r).as_deref(), Some("LockProfile.post"), "{what}: the synchronizing method on top");
        }
        let mailbox: Vec<&LockRow> = rows.iter().filter(|r| r.class == MAILBOX).collect();
        let (count, nanos) = sum_of(&mailbox);
        assert_eq!(count, waits, "{what}: every Object.wait on the Mailbox, once");
        assert!(mailbox.iter().all(|r| r.kind == MonitorKind::Wait), "{what}: nobody else takes the Mailbox");
        let off_ms = (nanos as f64 - waited_ns as f64).abs() / 1e6;
        assert!(
            off_ms <= 20.0,
            "{what}: {nanos} ns waited on the Mailbox, the program's {waited_ns} ({off_ms:.1} ms off)"
        );
        for r in &mailbox {
            let frames: Vec<String> = dump.trace_frames(r.trace_serial).iter().map(|f| f.qualified_method()).collect();
            assert!(frames.iter().any(|f| f == "LockProfile.awaitMail"), "{what}: the waiting method: {frames:?}");
        }

        // The agent's own lock stacks (full depth, the same events) hold exactly the record's enter times.
        let agent = collapsed_by_leaf(&std::fs::read_to_string(dir.path().join("agent.collapsed")).unwrap());
        let enters: u64 =
            rows.iter().filter(|r| r.kind == MonitorKind::Enter && r.class == LEDGER).map(|r| r.nanos).sum();
        assert_eq!(agent.get(&format!("[lock:{LEDGER}]")), Some(&enters), "{what}: agent's collapsed {agent:?}");

        // The text MONITOR TIME `hprof print` writes from the record (format=a's writer): its total, and a row
        // for each of the record's Ledger rows with the same count and trace.
        let text = hprof(&["print", file.to_str().unwrap()]);
        let at = text.rfind("MONITOR TIME BEGIN (total = ").unwrap_or_else(|| panic!("{what}: no MONITOR TIME"));
        let section = &text[at..at + text[at..].find("MONITOR TIME END").expect("MONITOR TIME END")];
        let all_enters: u64 = rows.iter().filter(|r| r.kind == MonitorKind::Enter).map(|r| r.nanos).sum();
        assert!(section.starts_with(&format!("MONITOR TIME BEGIN (total = {} ms) ", all_enters / 1_000_000)), "{what}");
        for r in &ledger {
            let line = format!("{:>7} {} {LEDGER} (Java)", r.count, r.trace_serial);
            assert!(section.lines().any(|l| l.ends_with(&line)), "{what}: {line:?} not in\n{section}");
        }

        // flame and collapsed: the record's totals, by leaf.
        let total: u64 = rows.iter().map(|r| r.nanos).sum();
        let f = file.to_str().unwrap();
        let html = dir.path().join("locks.html");
        let flame: Value =
            serde_json::from_str(&hprof(&["flame", "--lock", f, "-o", html.to_str().unwrap(), "--json"])).unwrap();
        assert_eq!((flame["total"].as_u64(), flame["unit"].as_str()), (Some(total), Some("ns")), "{what}");
        assert!(std::fs::read_to_string(&html).unwrap().contains("LockProfile.awaitMail"), "{what}: flame graph");
        let collapsed = collapsed_by_leaf(&hprof(&["export", "--format", "collapsed", "--lock", f]));
        assert_eq!(collapsed.values().sum::<u64>(), total, "{what}");
        assert_eq!(collapsed.get(&format!("[lock:{LEDGER}]")), Some(&enters), "{what}: {collapsed:?}");
        assert_eq!(collapsed.get(&format!("[wait:{MAILBOX}]")), Some(&nanos), "{what}: {collapsed:?}");

        // pprof: contentions/count and delay/nanoseconds, as the continuous lock windows.
        let pb = dir.path().join("locks.pb.gz");
        hprof(&["export", "--format", "pprof", "--lock", f, "-o", pb.to_str().unwrap()]);
        if let Some(p) = pprof_decoded(&pb) {
            let p = &p["profiles"][0];
            let types = serde_json::json!([["contentions", "count"], ["delay", "nanoseconds"]]);
            assert_eq!(p["sample_types"], types, "{what}");
            let samples = p["samples"].as_array().unwrap();
            let sum = |leaf: &str, i: usize| -> i64 {
                samples
                    .iter()
                    .filter(|s| s["frames"][0]["function"] == leaf)
                    .map(|s| s["values"][i].as_i64().unwrap())
                    .sum()
            };
            assert_eq!(sum(&format!("[wait:{MAILBOX}]"), 0), waits as i64, "{what}: pprof contentions");
            assert_eq!(sum(&format!("[wait:{MAILBOX}]"), 1), nanos as i64, "{what}: pprof delay");
            assert_eq!(sum(&format!("[lock:{LEDGER}]"), 1), enters as i64, "{what}: pprof delay");
        }

        // Parquet: the monitor_time table, read by DuckDB, joined to its stacks.
        let tables = dir.path().join("tables");
        hprof(&["export", "--format", "parquet", f, "--output", tables.to_str().unwrap()]);
        let sql = "SELECT kind, monitor_class, sum(count) AS n, sum(nanos) AS ns FROM monitor_time \
                   GROUP BY kind, monitor_class ORDER BY kind, monitor_class";
        if let Some(by_class) = duckdb(&tables, sql) {
            let mut ours: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
            for r in &rows {
                let e = ours.entry((r.kind.name().to_owned(), r.class.clone())).or_default();
                e.0 += r.count;
                e.1 += r.nanos;
            }
            let theirs: BTreeMap<(String, String), (u64, u64)> = by_class
                .iter()
                .map(|r| {
                    let key = (r["kind"].as_str().unwrap().to_owned(), r["monitor_class"].as_str().unwrap().to_owned());
                    (key, (r["n"].as_u64().unwrap(), r["ns"].as_u64().unwrap()))
                })
                .collect();
            assert_eq!(theirs, ours, "{what}: DuckDB's monitor_time");
            let all: u64 = theirs.values().map(|v| v.1).sum();
            assert_eq!(all, collapsed.values().sum::<u64>(), "{what}: the table and the lock flame graph");
            let waiting = duckdb(
                &tables,
                &format!(
                    "SELECT DISTINCT st.method AS method FROM monitor_time m JOIN stacks st ON m.trace = st.trace \
                     WHERE m.monitor_class = '{MAILBOX}' AND st.method = 'LockProfile.awaitMail'"
                ),
            )
            .unwrap();
            assert_eq!(waiting.len(), 1, "{what}: the waiting method through the stacks table");
        }

        // serve: the lock profile listed with its unit and total, its flame graph the same.
        let (mut child, url) = serve(&file);
        let summary = api(&url, "/api/summary", "profiles");
        let lock = summary["profiles"].as_array().unwrap().iter().find(|p| p["kind"] == "lock").cloned();
        let flame = api(&url, "/api/flame?kind=lock", "tree");
        child.kill().ok();
        child.wait().ok();
        let lock = lock.unwrap_or_else(|| panic!("{what}: serve lists no lock profile: {summary}"));
        assert_eq!((lock["total"].as_u64(), lock["unit"].as_str()), (Some(total), Some("ns")), "{what}: {lock}");
        assert_eq!(flame["total"].as_u64(), Some(total), "{what}: /api/flame?kind=lock");
    }
}
