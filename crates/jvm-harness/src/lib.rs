//! Test support for everything that starts a JVM: which JDKs exist, the freshly built agent and front end,
//! the Java programs under `java/programs`, and a `java` command runner with a timeout.
//!
//! JVMs are heavy on a two-core machine, so [`JvmSlot`] lets at most [`MAX_CONCURRENT_JVMS`] run at once
//! across all test threads and test processes (a file lock per slot).

mod front_end;
mod jdk;
pub mod mutation;
mod run;
mod skip;
mod slots;

pub use front_end::{hprof_json, hprof_text};
pub use jdk::{Jdk, all_jdks, jdk17};
pub use run::{Java, JavaRun, Running};
pub use skip::{current_test_name, skip, skip_log};
pub use slots::{JvmSlot, MAX_CONCURRENT_JVMS};
pub use tempfile::TempDir;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The workspace root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repo root")
}

/// The shared corpus of real heap dumps (`../shared/corpus/hprof` beside the repository): `HPROF_CORPUS` if
/// set (and then only that), else beside this checkout, else the workplace's `/work/shared`. `None` when absent, after recording
/// the current test as skipped by name (see [`skip()`]), so that a checkout without it still runs the rest
/// and says what it did not run.
pub fn corpus_dir() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os("HPROF_CORPUS") {
        Some(dir) => vec![PathBuf::from(dir)],
        None => vec![repo_root().join("../shared/corpus/hprof"), PathBuf::from("/work/shared/corpus/hprof")],
    };
    let found = candidates.iter().find(|d| d.is_dir()).cloned();
    if found.is_none() {
        skip(format!("no heap dump corpus (looked in {candidates:?}; set HPROF_CORPUS)"));
    }
    found
}

/// `target/<profile>`: where cargo put this test binary's sibling artifacts (libhprof.so, hprof).
pub fn target_profile_dir() -> PathBuf {
    // Test binaries live in target/<profile>/deps/.
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("deps dir");
    deps.parent().expect("profile dir").to_path_buf()
}

/// The agent library under test: the newer of `target/<profile>/libhprof.so` (from `cargo build`) and
/// `target/<profile>/deps/libhprof.so` (which `cargo test` rebuilds but does not copy up).
pub fn agent_library() -> PathBuf {
    let dir = target_profile_dir();
    [dir.join("deps/libhprof.so"), dir.join("libhprof.so")]
        .into_iter()
        .filter_map(|p| p.metadata().and_then(|m| m.modified()).ok().map(|t| (t, p)))
        .max()
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("no libhprof.so under {}: run `cargo build --release` first", dir.display()))
}

/// The front end under test.
pub fn hprof_binary() -> PathBuf {
    let p = target_profile_dir().join("hprof");
    assert!(p.is_file(), "{} is missing: run `cargo build --release` (or `make test`) first", p.display());
    p
}

/// A scratch directory, deleted on drop unless HPROF_KEEP_TEST_DIRS is set.
pub fn scratch(name: &str) -> tempfile::TempDir {
    let base = target_profile_dir().join("test-runs");
    std::fs::create_dir_all(&base).expect("test-runs dir");
    let mut dir = tempfile::Builder::new().prefix(&format!("{name}-")).tempdir_in(base).expect("tempdir");
    if std::env::var_os("HPROF_KEEP_TEST_DIRS").is_some() {
        dir.disable_cleanup(true);
    }
    dir
}

/// Compiles every program in `java/programs` (once per test process; with a file lock between processes)
/// with JDK 17's javac for release 17, so that every JDK under test can run them. Returns the class dir.
pub fn java_classes() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let src = repo_root().join("java/programs");
        let out = target_profile_dir().join("java-classes");
        std::fs::create_dir_all(&out).expect("classes dir");
        let lock = slots::FileLock::exclusive(&out.join(".compile.lock"));
        let mut sources: Vec<PathBuf> = std::fs::read_dir(&src)
            .expect("java/programs")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "java"))
            .collect();
        sources.sort();
        let stamp = out.join(".stamp");
        let newest_source = sources.iter().filter_map(|p| p.metadata().and_then(|m| m.modified()).ok()).max();
        let stamp_time = stamp.metadata().and_then(|m| m.modified()).ok();
        if stamp_time.is_none() || newest_source > stamp_time {
            let javac = jdk17().bin("javac");
            let status = std::process::Command::new(&javac)
                .args(["--release", "17", "-g", "-d"])
                .arg(&out)
                .args(&sources)
                .status()
                .unwrap_or_else(|e| panic!("cannot run {}: {e}", javac.display()));
            assert!(status.success(), "javac failed on java/programs");
            std::fs::write(&stamp, b"").expect("stamp");
        }
        drop(lock);
        out
    })
}
