//! Running the `hprof` front end from tests: its text output, or its `--json` output parsed.

use crate::hprof_binary;
use std::process::Command;

/// `hprof ARGS`'s standard output; panics with its standard error when it fails.
pub fn hprof_text(args: &[&str]) -> String {
    let o = Command::new(hprof_binary()).args(args).output().unwrap_or_else(|e| panic!("hprof {args:?}: {e}"));
    assert!(o.status.success(), "hprof {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap_or_else(|e| panic!("hprof {args:?}: output is not UTF-8: {e}"))
}

/// `hprof ARGS` (which should include `--json`), its output parsed; panics naming the command when it is not JSON.
pub fn hprof_json(args: &[&str]) -> serde_json::Value {
    let out = hprof_text(args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("hprof {args:?}: not JSON ({e}): {out}"))
}
