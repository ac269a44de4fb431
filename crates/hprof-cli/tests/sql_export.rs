//! `hprof export --format parquet` on real dumps: jcmd's dumps of java/programs/HeapShape from JDK 17, 21
//! and 25, the corpus's, and a cpu=samples,heap=sites profile from the agent. The Parquet files are read by
//! two independent engines, DuckDB (PyPI duckdb) and Apache Spark (PyPI pyspark, local mode on JDK 17),
//! through scripts/sql/engines.py (`make pysql` installs them): both must give exactly `hprof histo`'s
//! per-class counts and bytes and `hprof dominators`' top retained sizes, and SQL on the tables must say
//! what the programs built.

use jvm_harness::{Java, JvmSlot, all_jdks, corpus_dir, hprof_json, hprof_text, jdk17, repo_root, scratch, skip};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// target/pysql, where `make pysql` installs pyspark and duckdb; None (after a named skip) without `module`.
fn pysql(module: &str, what: &str) -> Option<PathBuf> {
    let py = repo_root().join("target/pysql");
    if py.join(module).is_dir() {
        return Some(py);
    }
    skip(format!("{} lacks PyPI's {module} (make pysql): {what}", py.display()));
    None
}

/// Runs scripts/sql/engines.py with `engine` on an export (or a directory of `dump=NAME` exports), with
/// `sql` or, without it, its histogram and top-dominator queries.
fn engine(py: &Path, engine: &str, dir: &Path, sql: Option<&str>) -> Value {
    let _slot = (engine == "spark").then(JvmSlot::acquire);
    let mut cmd = Command::new("python3");
    cmd.arg(repo_root().join("scripts/sql/engines.py")).arg(engine).arg(dir);
    cmd.args(sql).env("PYTHONPATH", py).env("JAVA_HOME", &jdk17().home).env("SPARK_LOCAL_IP", "127.0.0.1");
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{engine} {sql:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{engine}: {e}: {}", String::from_utf8_lossy(&o.stdout)))
}

/// The rows of `sql` on an export, by DuckDB.
fn query(py: &Path, dir: &Path, sql: &str) -> Vec<Value> {
    engine(py, "duckdb", dir, Some(sql)).as_array().unwrap().clone()
}

fn export(file: &Path, dir: &Path, extra: &[&str]) {
    let mut args = vec!["export", "--format", "parquet", file.to_str().unwrap(), "--output", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    hprof_text(&args);
}

/// The SQL of `hprof histo`: (class, instances, bytes) per class, sorted.
const HISTO: &str =
    "SELECT class, count(*) AS instances, sum(shallow) AS shallow_bytes FROM objects GROUP BY class_id, class";
/// The SQL of `hprof dominators`' biggest objects: the top of the dominator tree.
const TOP: &str = "SELECT id, retained FROM objects WHERE dominator IS NULL ORDER BY retained DESC, id LIMIT 20";

type Histo = Vec<(String, u64, u64)>;

fn histo_of_hprof(file: &Path) -> Histo {
    let h = hprof_json(&["histo", "--json", file.to_str().unwrap()]);
    let mut rows: Histo = h["classes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["class"].as_str().unwrap().to_owned(),
                c["instances"].as_u64().unwrap(),
                c["shallow_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn top_of_hprof(file: &Path) -> Vec<(u64, u64)> {
    let d = hprof_json(&["dominators", "--json", "--top", "20", file.to_str().unwrap()]);
    d["dominators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let id = o["id"].as_str().unwrap().trim_start_matches("0x");
            (u64::from_str_radix(id, 16).unwrap(), o["retained_bytes"].as_u64().unwrap())
        })
        .collect()
}

fn histo_of_rows(rows: &[Value]) -> Histo {
    let mut h: Histo = rows
        .iter()
        .map(|r| {
            (
                r["class"].as_str().unwrap().to_owned(),
                r["instances"].as_u64().unwrap(),
                r["shallow_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    h.sort();
    h
}

fn top_of_rows(rows: &[Value]) -> Vec<(u64, u64)> {
    rows.iter().map(|r| (r["id"].as_u64().unwrap(), r["retained"].as_u64().unwrap())).collect()
}

/// Exports `file` and checks that SQL on the export gives `hprof histo`'s histogram and `hprof
/// dominators`' top objects.
fn check_export_agrees(py: &Path, file: &Path, dir: &Path, what: &str) {
    export(file, dir, &[]);
    let histo = histo_of_hprof(file);
    assert!(histo.len() > 10, "{what}: {histo:?}");
    assert_eq!(histo_of_rows(&query(py, dir, HISTO)), histo, "{what}: the histogram");
    assert_eq!(top_of_rows(&query(py, dir, TOP)), top_of_hprof(file), "{what}: the top dominators");
}

/// Starts HeapShape, dumps its heap with jcmd, and stops it.
fn dump_heap_shape(jdk: &jvm_harness::Jdk, dir: &Path) -> PathBuf {
    let _slots = JvmSlot::acquire_n(2);
    let mut jvm = Java::new(jdk, dir).vm_arg("-Xmx256m").class("HeapShape").spawn_holding(None);
    jvm.wait_for_stdout("ready", Duration::from_secs(60));
    let file = dir.join("shape.hprof");
    let o = Command::new(jdk.bin("jcmd")).arg(jvm.pid().to_string()).arg("GC.heap_dump").arg(&file).output().unwrap();
    jvm.signal(9);
    let _ = jvm.wait();
    assert!(
        o.status.success() && file.is_file(),
        "jcmd on JDK {}: {}",
        jdk.version,
        String::from_utf8_lossy(&o.stdout)
    );
    file
}

fn one(rows: &[Value], col: &str) -> Value {
    assert_eq!(rows.len(), 1, "{rows:?}");
    rows[0][col].clone()
}

/// What HeapShape's program says about its heap, asked in SQL.
fn check_heap_shape(py: &Path, dir: &Path, what: &str) {
    let q = |sql: &str| query(py, dir, sql);
    let node = q("SELECT count(*) AS n, sum(shallow) AS b FROM objects WHERE class = 'HeapShape$Node'");
    assert_eq!((node[0]["n"].as_u64(), node[0]["b"].as_u64()), (Some(1000), Some(24_000)), "{what}");
    // Holder retains its array, the 1000 Nodes with their long[4], and the Shared two Nodes hold.
    let holder = q("SELECT retained FROM objects WHERE class = 'HeapShape$Holder'");
    assert_eq!(one(&holder, "retained"), 16 + 4016 + 1000 * (24 + 48) + 24, "{what}");
    // Shared is dominated by the array, not by either Node that refers to it.
    let shared =
        q("SELECT o.class AS c FROM objects s JOIN objects o ON s.dominator = o.id WHERE s.class = 'HeapShape$Shared'");
    assert_eq!(one(&shared, "c"), "HeapShape$Node[]", "{what}");
    // References name their field or index: every Node's payload, the array's 1000 elements, two `extra`s.
    let refs = q(
        "SELECT r.kind AS kind, r.field AS field, count(*) AS n, min(r.array_index) AS lo, max(r.array_index) AS hi \
                  FROM \"references\" r JOIN objects o ON r.from_id = o.id \
                  WHERE o.class IN ('HeapShape$Node', 'HeapShape$Node[]') GROUP BY r.kind, r.field ORDER BY n DESC, kind",
    );
    let got: Vec<(String, Value, u64)> = refs
        .iter()
        .map(|r| (r["kind"].as_str().unwrap().to_owned(), r["field"].clone(), r["n"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("element".into(), Value::Null, 1000),
            ("field".into(), json!("payload"), 1000),
            ("field".into(), json!("extra"), 2)
        ],
        "{what}: {refs:?}"
    );
    assert_eq!((refs[0]["lo"].as_u64(), refs[0]["hi"].as_u64()), (Some(0), Some(999)), "{what}");
    let statics =
        q("SELECT r.field AS field, o.class AS target FROM \"references\" r JOIN classes c ON r.from_id = c.id \
                     JOIN objects o ON o.id = r.to_id WHERE c.name = 'HeapShape' AND r.kind = 'static' ORDER BY field");
    let statics: Vec<(String, String)> = statics
        .iter()
        .map(|r| (r["field"].as_str().unwrap().to_owned(), r["target"].as_str().unwrap().to_owned()))
        .collect();
    assert!(statics.contains(&("HOLDER".into(), "HeapShape$Holder".into())), "{what}: {statics:?}");
    assert!(statics.contains(&("CHAIN".into(), "HeapShape$Link".into())), "{what}: {statics:?}");
    let class = q(
        "SELECT c.instance_size AS instance_size, s.name AS sup FROM classes c JOIN classes s ON c.super_id = s.id WHERE c.name = 'HeapShape$Node'",
    );
    assert_eq!((one(&class, "instance_size"), one(&class, "sup")), (json!(24), json!("java.lang.Object")), "{what}");
    // Roots: the system classes, and the threads, each a java.lang.Thread whose `name` is a String.
    let roots = q("SELECT kind, count(*) AS n FROM roots GROUP BY kind");
    assert!(roots.iter().any(|r| r["kind"] == "system class" && r["n"].as_u64() > Some(100)), "{what}: {roots:?}");
    let main = q("SELECT o.class AS class, r.thread_serial AS serial FROM roots r JOIN objects o ON o.id = r.object \
                  JOIN \"references\" f ON f.from_id = r.object AND f.field = 'name' JOIN objects n ON n.id = f.to_id \
                  WHERE r.kind = 'thread' AND n.value = 'main'");
    assert_eq!(one(&main, "class"), "java.lang.Thread", "{what}");
    // Values: the main thread's name as a String, and the Integer cache's boxes; arrays' lengths.
    let values = q("SELECT count(*) AS n FROM objects WHERE (class = 'java.lang.String' AND value = 'main') \
                    OR (class = 'java.lang.Integer' AND value = '127')");
    assert!(one(&values, "n").as_u64() >= Some(2), "{what}: {values:?}");
    let arr = q("SELECT length FROM objects WHERE class = 'HeapShape$Node[]'");
    assert_eq!(one(&arr, "length"), 1000, "{what}");
    // jcmd writes each thread's stack as a TRACE: main sleeps in HeapShape.main.
    let stack = q(&format!(
        "SELECT count(*) AS n FROM stacks WHERE thread_serial = {} AND method = 'HeapShape.main'",
        main[0]["serial"]
    ));
    assert_eq!(one(&stack, "n"), 1, "{what}");
}

fn engine_histo(v: &Value, dump: &str) -> Histo {
    let mut h: Histo = v["histo"][dump]
        .as_array()
        .unwrap_or_else(|| panic!("no histogram of {dump}: {v}"))
        .iter()
        .map(|r| (r[0].as_str().unwrap().to_owned(), r[1].as_u64().unwrap(), r[2].as_u64().unwrap()))
        .collect();
    h.sort();
    h
}

fn engine_top(v: &Value, dump: &str) -> Vec<(u64, u64)> {
    let mut t: Vec<(u64, u64)> =
        v["top"][dump].as_array().unwrap().iter().map(|r| (r[0].as_u64().unwrap(), r[1].as_u64().unwrap())).collect();
    t.sort_by_key(|&(id, retained)| (std::cmp::Reverse(retained), id));
    t
}

#[test]
fn jcmd_dumps_export_to_parquet_that_duckdb_and_spark_read_as_hprof_does() {
    let Some(py) = pysql("duckdb", "no SQL read the exports") else { return };
    let base = scratch("sql-exports");
    let mut expected: BTreeMap<String, (Histo, Vec<(u64, u64)>)> = BTreeMap::new();
    for jdk in all_jdks() {
        if !jdk.bin("jcmd").is_file() {
            skip(format!("JDK {} has no jcmd ({}) to dump the heap with", jdk.version, jdk.home.display()));
            continue;
        }
        let what = format!("JDK {}", jdk.version);
        let dir = scratch(&format!("sql-shape-{}", jdk.version));
        let file = dump_heap_shape(&jdk, dir.path());
        let name = format!("jdk{}", jdk.version);
        let out = base.path().join(format!("dump={name}"));
        check_export_agrees(&py, &file, &out, &what);
        check_heap_shape(&py, &out, &what);
        // --redact: no String text, box value or thread name in any table, and the export says so.
        let redacted = dir.path().join("redacted");
        export(&file, &redacted, &["--redact"]);
        let leaks = query(
            &py,
            &redacted,
            "SELECT (SELECT count(*) FROM objects WHERE value IS NOT NULL) + (SELECT count(*) FROM threads WHERE name IS NOT NULL) AS n, \
             (SELECT bool_and(redacted) FROM dump) AS redacted, (SELECT count(*) FROM objects) AS objects",
        );
        assert_eq!((&leaks[0]["n"], &leaks[0]["redacted"]), (&json!(0), &json!(true)), "{what}: {leaks:?}");
        assert!(leaks[0]["objects"].as_u64() > Some(10_000), "{what}: {leaks:?}");
        expected.insert(name, (histo_of_hprof(&file), top_of_hprof(&file)));
    }
    // Every dump's export at once, as `dump=NAME` partitions: DuckDB, then Spark.
    let spark = pysql("pyspark", "Spark did not read the exports");
    for (name, py) in [("duckdb", Some(py)), ("spark", spark)] {
        let Some(py) = py else { continue };
        let v = engine(&py, name, base.path(), None);
        for (dump, (histo, top)) in &expected {
            assert_eq!(&engine_histo(&v, dump), histo, "{name} on {dump}: the histogram");
            assert_eq!(&engine_top(&v, dump), top, "{name} on {dump}: the top dominators");
        }
    }
}

#[test]
fn corpus_dumps_export_as_hprof_reads_them() {
    let Some(py) = pysql("duckdb", "no SQL read the exports") else { return };
    let Some(corpus) = corpus_dir() else {
        skip("the heap dump corpus (/work/shared/corpus/hprof) is missing");
        return;
    };
    for name in ["mat_openjdk_jdk11_04_x64.hprof.gz", "mat_oracle_jdk8_05_x64.hprof", "mat_sun_jdk5_13_x32.hprof"] {
        let file = corpus.join(name);
        if !file.is_file() {
            skip(format!("{} is missing", file.display()));
            continue;
        }
        let dir = scratch("sql-corpus");
        check_export_agrees(&py, &file, &dir.path().join("export"), name);
    }
}

#[test]
fn a_profile_exports_its_samples_sites_and_stacks() {
    let Some(py) = pysql("duckdb", "no SQL read the export") else { return };
    let jdk = jdk17();
    let dir = scratch("sql-profile");
    let run = Java::new(&jdk, dir.path())
        .agentpath("cpu=samples,heap=sites,format=b,depth=8")
        .class("CpuAccuracy")
        .arg("2")
        .run();
    run.assert_success();
    let file = dir.path().join("java.hprof");
    let out = dir.path().join("tables");
    export(&file, &out, &[]);
    // Every sample, and every live byte at the sites, as `hprof export --format collapsed` counts them.
    let collapsed = |alloc: bool| -> u64 {
        let mut args = vec!["export", "--format", "collapsed", file.to_str().unwrap()];
        if alloc {
            args.push("--alloc");
        }
        hprof_text(&args).lines().filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok()).sum()
    };
    let samples = query(&py, &out, "SELECT sum(count) AS n FROM samples");
    let n = one(&samples, "n").as_u64().unwrap();
    assert!(n > 10, "{samples:?}");
    assert_eq!(n, collapsed(false));
    let sites = query(&py, &out, "SELECT sum(live_bytes) AS b, min(site) AS first FROM sites");
    assert_eq!(one(&sites, "b").as_u64(), Some(collapsed(true)));
    // The hottest method on the samples' stacks is CpuAccuracy's own (its leaf frames).
    let hot = query(
        &py,
        &out,
        "SELECT st.method AS method, sum(s.count) AS n FROM samples s JOIN stacks st ON s.trace = st.trace \
         WHERE st.depth = 0 GROUP BY st.method ORDER BY n DESC LIMIT 1",
    );
    assert!(one(&hot, "method").as_str().unwrap().starts_with("CpuAccuracy."), "{hot:?}");
    // No heap dump in a profile: the heap tables are there, empty.
    assert_eq!(one(&query(&py, &out, "SELECT count(*) AS n FROM objects"), "n"), 0);
}
