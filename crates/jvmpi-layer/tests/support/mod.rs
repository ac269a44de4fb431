//! Test support for the JVMPI layer: the freshly built libjvmpi.so, the C agents of java/native/jvmpi
//! compiled with `cc` against include/jvmpi.h, and the two ways of loading an agent.

#![allow(dead_code)]

use jvm_harness::{Java, Jdk, repo_root, target_profile_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The layer under test: the newer of `target/<profile>/libjvmpi.so` and the copy `cargo test` rebuilds.
pub fn layer_library() -> PathBuf {
    let dir = target_profile_dir();
    [dir.join("deps/libjvmpi.so"), dir.join("libjvmpi.so")]
        .into_iter()
        .filter_map(|p| p.metadata().and_then(|m| m.modified()).ok().map(|t| (t, p)))
        .max()
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("no libjvmpi.so under {}: run `cargo build --release` first", dir.display()))
}

/// Compiles java/native/jvmpi/<name>.c into `dir`/lib<name>.so, with JDK 17's jni.h and our jvmpi.h.
pub fn build_agent(name: &str, dir: &Path) -> PathBuf {
    let home = jvm_harness::jdk17().home;
    let src = repo_root().join(format!("java/native/jvmpi/{name}.c"));
    let lib = dir.join(format!("lib{name}.so"));
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o"])
        .arg(&lib)
        .arg(format!("-I{}", repo_root().join("include").display()))
        .arg(format!("-I{}", home.join("include").display()))
        .arg(format!("-I{}", home.join("include/linux").display()))
        .arg(&src)
        .arg("-lpthread")
        .output()
        .unwrap_or_else(|e| panic!("the JVMPI tests need a C compiler: cannot run `cc` ({e})"));
    assert!(out.status.success(), "cc failed on {}:\n{}", src.display(), String::from_utf8_lossy(&out.stderr));
    lib
}

/// How the agent is loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loading {
    /// `-agentpath:libjvmpi.so -Xrun<agent>[:options]`, the agent found through LD_LIBRARY_PATH.
    Xrun,
    /// `-agentpath:libjvmpi.so=/abs/lib<agent>.so[=options]`.
    ByLayer,
}

pub const BOTH: [Loading; 2] = [Loading::Xrun, Loading::ByLayer];

/// Both ways on JDK 17; `-Xrun` alone on the others. Only the `-Xrun` way depends on the JDK (the order in
/// which HotSpot initialises agents and libraries); the layer's own loading is the same everywhere, and
/// JVMs are dear on the two-core CI machine.
pub fn loadings(jdk: &Jdk) -> Vec<Loading> {
    if jdk.version == "17" { BOTH.to_vec() } else { vec![Loading::Xrun] }
}

/// A `java` command running the agent `lib` (built by [`build_agent`]) with `options`, loaded as asked.
pub fn java_with_agent(jdk: &Jdk, cwd: &Path, lib: &Path, options: &str, loading: Loading) -> Java {
    java_with_layer_options(jdk, cwd, lib, options, loading, "")
}

/// As [`java_with_agent`], with the layer's own options (`locals=…,verbose=…`) in front of the agent.
pub fn java_with_layer_options(
    jdk: &Jdk,
    cwd: &Path,
    lib: &Path,
    options: &str,
    loading: Loading,
    layer_options: &str,
) -> Java {
    let layer = layer_library();
    let layer_arg = |rest: &str| match (layer_options, rest) {
        ("", "") => format!("-agentpath:{}", layer.display()),
        ("", r) | (r, "") => format!("-agentpath:{}={r}", layer.display()),
        (l, r) => format!("-agentpath:{}={l},{r}", layer.display()),
    };
    let name = lib.file_stem().unwrap().to_str().unwrap().trim_start_matches("lib").to_owned();
    match loading {
        Loading::Xrun => {
            let xrun = if options.is_empty() { format!("-Xrun{name}") } else { format!("-Xrun{name}:{options}") };
            Java::new(jdk, cwd)
                .vm_arg(&layer_arg(""))
                .vm_arg(&xrun)
                .env("LD_LIBRARY_PATH", lib.parent().unwrap().to_str().unwrap())
        }
        Loading::ByLayer => {
            let spec =
                if options.is_empty() { lib.display().to_string() } else { format!("{}={options}", lib.display()) };
            Java::new(jdk, cwd).vm_arg(&layer_arg(&spec))
        }
    }
}
