//! Skips that cannot go unnoticed. A test whose input (the heap dump corpus, a JDK, VisualVM, chromium, a C
//! compiler) is missing calls [`skip`]: the skip is printed by test name straight to the terminal (past
//! libtest's capture, so it shows even when the test "passes") and appended to `target/<profile>/test-skips.log`,
//! which `make test` prints and counts at the end. With `HPROF_REQUIRE_ALL=1` a skip fails the test instead,
//! for a machine that is meant to have everything.

use std::fmt::Display;
use std::io::Write;
use std::path::PathBuf;

/// The log `make test` summarises: one line per skip, `<package>/<test binary>::<test>: <reason>`.
pub fn skip_log() -> PathBuf {
    crate::target_profile_dir().join("test-skips.log")
}

/// `<package>/<test binary>::<test name>`: libtest runs each test on a thread named after it, the binary's
/// name is cargo's `<target>-<hash>`, and `cargo test` sets `CARGO_PKG_NAME` when it runs a test.
pub fn current_test_name() -> String {
    let test = std::thread::current().name().unwrap_or("?").to_owned();
    let exe = std::env::current_exe().ok();
    let stem = exe.as_ref().and_then(|e| e.file_stem()).map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let binary = stem.rsplit_once('-').map_or(stem.as_str(), |(b, _)| b).to_owned();
    match std::env::var("CARGO_PKG_NAME") {
        Ok(package) => format!("{package}/{binary}::{test}"),
        Err(_) => format!("{binary}::{test}"),
    }
}

/// Records that the current test (or part of it, as `reason` says) did not run. The caller then returns.
/// Panics instead when `HPROF_REQUIRE_ALL` is set.
pub fn skip(reason: impl Display) {
    let line = format!("{}: {reason}", current_test_name());
    if std::env::var_os("HPROF_REQUIRE_ALL").is_some_and(|v| v != "0") {
        panic!("HPROF_REQUIRE_ALL is set and this test cannot run: {line}");
    }
    // io::stderr() directly, not eprintln!: libtest captures the print macros of passing tests.
    let _ = writeln!(std::io::stderr(), "SKIPPED {line}");
    let log = skip_log();
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(&log) {
        // One write per line: appends of this size from concurrent test processes do not interleave.
        let _ = f.write_all(format!("{line}\n").as_bytes());
    }
}
