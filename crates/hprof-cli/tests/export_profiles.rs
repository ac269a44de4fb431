//! `hprof export --format pprof|otlp` on files real JVMs wrote, decoded with the official definitions
//! (PyPI's opentelemetry-proto, and profile.proto compiled by grpcio-tools' protoc; scripts/otel/decode.py),
//! not with hprof-rs's own code.

use jvm_harness::{Java, all_jdks, hprof_binary, repo_root, scratch, skip};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The Python packages `make test` installs into target/pyotel; None (after a named skip) without them.
fn decoder() -> Option<std::path::PathBuf> {
    let py = repo_root().join("target/pyotel");
    if !py.join("opentelemetry/proto/collector/profiles").is_dir() || !py.join("grpc_tools").is_dir() {
        skip(format!("{} lacks opentelemetry-proto and grpcio-tools (make pyotel)", py.display()));
        return None;
    }
    Some(repo_root().join("scripts/otel/decode.py"))
}

fn decode(script: &Path, format: &str, file: &Path) -> Value {
    let o = Command::new("python3").arg(script).arg(format).arg(file).output().unwrap();
    assert!(o.status.success(), "decode.py {format}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn export(args: &[&str]) {
    let o = Command::new(hprof_binary()).arg("export").args(args).output().unwrap();
    assert!(o.status.success(), "hprof export {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// Sum of values per leaf function over all samples, and the first sample whose leaf is `function`.
fn by_leaf(samples: &[Value], value: usize) -> std::collections::HashMap<String, i64> {
    let mut m = std::collections::HashMap::new();
    for s in samples {
        let leaf = s["frames"][0]["function"].as_str().unwrap_or("").to_owned();
        *m.entry(leaf).or_default() += s["values"][value].as_i64().unwrap();
    }
    m
}

fn leaf_sample<'a>(samples: &'a [Value], function: &str) -> &'a Value {
    samples.iter().find(|s| s["frames"][0]["function"] == function).unwrap_or_else(|| panic!("no {function} sample"))
}

#[test]
fn cpu_samples_export_as_pprof_and_otlp_with_the_programs_split_lines_and_threads() {
    let Some(script) = decoder() else { return };
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("export-cpu");
        let run =
            Java::new(&jdk, dir.path()).agentpath("cpu=samples,format=b,thread=y").class("CpuAccuracy").arg("4").run();
        run.assert_success();
        let own: f64 = run.stdout.split("hotAlpha=").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        let input = dir.path().join("java.hprof");
        let (pb, otlp) = (dir.path().join("cpu.pb.gz"), dir.path().join("cpu.otlp"));
        export(&["--format", "pprof", input.to_str().unwrap(), "-o", pb.to_str().unwrap()]);
        export(&["--format", "otlp", "--service", "checkout", input.to_str().unwrap(), "-o", otlp.to_str().unwrap()]);

        let p = &decode(&script, "pprof", &pb)["profiles"][0];
        assert_eq!(p["sample_types"], serde_json::json!([["samples", "count"]]), "{what}");
        let o = &decode(&script, "otlp", &otlp)["profiles"][0];
        assert_eq!(o["sample_type"], serde_json::json!(["samples", "count"]), "{what}");
        assert_eq!(o["resource"]["service.name"], "checkout", "{what}");
        assert_eq!(o["scope"], "hprof-rs", "{what}");
        for (form, profile) in [("pprof", p), ("otlp", o)] {
            let samples = profile["samples"].as_array().unwrap();
            let leaves = by_leaf(samples, 0);
            let (alpha, beta) = (leaves["CpuAccuracy.hotAlpha"] as f64, leaves["CpuAccuracy.hotBeta"] as f64);
            let share = 100.0 * alpha / (alpha + beta);
            assert!((share - own).abs() <= 10.0, "{what} {form}: alpha {share:.1}% vs the program's {own}%");
            let s = leaf_sample(samples, "CpuAccuracy.hotAlpha");
            let top = &s["frames"][0];
            assert_eq!(top["file"], "CpuAccuracy.java", "{what} {form}: {top}");
            assert!(top["line"].as_i64().unwrap() > 0, "{what} {form}: a line number: {top}");
            assert_eq!(top["system_name"], "CpuAccuracy.hotAlpha(J)J", "{what} {form}");
            assert_eq!(s["frames"][1]["function"], "CpuAccuracy.main", "{what} {form}: caller");
            assert_eq!(s["attrs"]["thread.name"], "main", "{what} {form}: {}", s["attrs"]);
            assert!(s["attrs"]["thread.id"].as_i64().unwrap() > 0, "{what} {form}");
            // Same stacks, same counts in both encodings (thread=y: traces name their thread).
            assert_eq!(leaves, by_leaf(p["samples"].as_array().unwrap(), 0), "{what} {form}");
        }
    }
}

#[test]
fn alloc_sites_export_all_four_values() {
    let Some(script) = decoder() else { return };
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("export-alloc");
        let run = Java::new(&jdk, dir.path()).agentpath("heap=sites,cutoff=0,format=b").class("AllocSites").run();
        run.assert_success();
        let input = dir.path().join("java.hprof");
        let (pb, otlp) = (dir.path().join("a.pb.gz"), dir.path().join("a.otlp"));
        export(&["--format", "pprof", "--alloc", input.to_str().unwrap(), "-o", pb.to_str().unwrap()]);
        export(&["--format", "otlp", "--alloc", input.to_str().unwrap(), "-o", otlp.to_str().unwrap()]);
        let p = &decode(&script, "pprof", &pb)["profiles"][0];
        let types = serde_json::json!([
            ["alloc_objects", "count"],
            ["alloc_space", "bytes"],
            ["inuse_objects", "count"],
            ["inuse_space", "bytes"]
        ]);
        assert_eq!(p["sample_types"], types, "{what}");
        let leaves = by_leaf(p["samples"].as_array().unwrap(), 0);
        assert_eq!(leaves["AllocSites$Widget"], 100_000, "{what}: Widgets allocated");
        assert_eq!(by_leaf(p["samples"].as_array().unwrap(), 2)["AllocSites$Widget"], 25_000, "{what}: live");
        let w = leaf_sample(p["samples"].as_array().unwrap(), "AllocSites$Widget");
        assert_eq!(w["frames"][1]["function"], "AllocSites.makeWidget", "{what}");
        assert!(w["frames"][1]["line"].as_i64().unwrap() > 0, "{what}");
        // OTLP: one profile per sample type, the same numbers.
        let o = decode(&script, "otlp", &otlp);
        let profiles = o["profiles"].as_array().unwrap();
        assert_eq!(profiles.len(), 4, "{what}");
        for (i, t) in types.as_array().unwrap().iter().enumerate() {
            assert_eq!(&profiles[i]["sample_type"], t, "{what}");
            let want = by_leaf(p["samples"].as_array().unwrap(), i);
            let got = by_leaf(profiles[i]["samples"].as_array().unwrap(), 0);
            assert_eq!(got["AllocSites$Widget"], want["AllocSites$Widget"], "{what}: {t}");
        }
    }
}
