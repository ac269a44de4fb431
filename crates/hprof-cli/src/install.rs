//! `hprof install-agent`: put libhprof.so where `-agentlib:hprof` looks first, the JDK's own lib directory.

use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct InstallArgs {
    /// The JDK to install into (default: $JAVA_HOME, else the JDK of `java` on PATH).
    #[arg(long, value_name = "DIR")]
    pub java_home: Option<PathBuf>,
    /// The agent library (default: libhprof.so next to this program).
    #[arg(long, value_name = "FILE")]
    pub agent: Option<PathBuf>,
}

pub fn run(args: &InstallArgs) -> Result<(), String> {
    let agent = match &args.agent {
        Some(a) => a.clone(),
        None => std::env::current_exe()
            .map_err(|e| format!("cannot find this program's directory: {e}"))?
            .with_file_name("libhprof.so"),
    };
    if !agent.is_file() {
        return Err(format!("{} not found; build it with `cargo build --release` or pass --agent", agent.display()));
    }
    let java_home = match &args.java_home {
        Some(h) => h.clone(),
        None => find_java_home()?,
    };
    let lib = java_home.join("lib");
    if !lib.join("libjava.so").is_file() {
        return Err(format!("{} does not look like a JDK (no lib/libjava.so)", java_home.display()));
    }
    let target = lib.join("libhprof.so");
    std::fs::copy(&agent, &target).map_err(|e| format!("cannot copy to {}: {e}", target.display()))?;
    println!("installed {} -> {}", agent.display(), target.display());
    println!("now `{}/bin/java -agentlib:hprof=help -version` works", java_home.display());
    Ok(())
}

fn find_java_home() -> Result<PathBuf, String> {
    if let Some(h) = std::env::var_os("JAVA_HOME") {
        return Ok(PathBuf::from(h));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let java = dir.join("java");
        if java.is_file() {
            let real = std::fs::canonicalize(&java).unwrap_or(java);
            // <home>/bin/java
            if let Some(home) = real.parent().and_then(Path::parent) {
                return Ok(home.to_path_buf());
            }
        }
    }
    Err("no JDK found: set JAVA_HOME or pass --java-home".into())
}
