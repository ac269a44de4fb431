//! examples/profiler_hook.rs, the ProfilerHook written with this crate, on real JVMs through libjvmpi.so:
//! exact instance counts for AllocSites' classes, loaded by the layer on every JDK and by -Xrun on JDK 17.

use jvm_harness::{Java, all_jdks, scratch, target_profile_dir};
use std::path::PathBuf;

fn newest(candidates: [PathBuf; 2], what: &str) -> PathBuf {
    candidates
        .into_iter()
        .filter_map(|p| p.metadata().and_then(|m| m.modified()).ok().map(|t| (t, p)))
        .max()
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("{what} is not built: run `cargo build --release --workspace --examples` first"))
}

#[test]
fn the_rust_profiler_hook_counts_exactly() {
    let dir = target_profile_dir();
    let layer = newest([dir.join("libjvmpi.so"), dir.join("deps/libjvmpi.so")], "libjvmpi.so");
    let hook = dir.join("examples/libprofiler_hook.so");
    assert!(hook.is_file(), "{} is not built (cargo test builds the examples)", hook.display());
    for jdk in all_jdks() {
        let mut ways = vec![format!("-agentpath:{}={}", layer.display(), hook.display())];
        if jdk.version == "17" {
            ways.push("-Xrunprofiler_hook".into());
        }
        for way in ways {
            let what = format!("JDK {} {way}", jdk.version);
            let cwd = scratch("jvmpi-rust-hook");
            let mut java = Java::new(&jdk, cwd.path()).env("LD_LIBRARY_PATH", hook.parent().unwrap().to_str().unwrap());
            if way.starts_with("-Xrun") {
                java = java.vm_arg(&format!("-agentpath:{}", layer.display()));
            }
            let run = java.vm_arg(&way).class("AllocSites").run();
            run.assert_success();
            for (class, count) in [("AllocSites$Widget", 100_000), ("AllocSites$Gadget", 70_000)] {
                let row = run
                    .stdout
                    .lines()
                    .find(|l| l.ends_with(&format!("\t{class}")))
                    .unwrap_or_else(|| panic!("{what}: no {class} row in:\n{}", run.stdout));
                assert_eq!(row.split('\t').nth(1), Some(count.to_string().as_str()), "{what}: {row}");
            }
            assert!(run.stdout.contains("Total Objects:\t"), "{what}: {}", run.stdout);
        }
    }
}
