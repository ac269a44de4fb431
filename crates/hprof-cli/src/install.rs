//! `hprof install-agent`: put libhprof.so where `-agentlib:hprof` looks first, the JDK's own lib directory.

use clap::Args;
use std::os::unix::fs::PermissionsExt;
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
    check_target(&java_home, &target)?;
    replace(&agent, &lib, &target)?;
    println!("installed {} -> {}", agent.display(), target.display());
    println!("now `{}/bin/java -agentlib:hprof=help -version` works", java_home.display());
    Ok(())
}

/// What is at `target` may be replaced: nothing, an ELF shared object, or a symlink to one inside the JDK.
/// A link out of the JDK (a file elsewhere that someone chose, or planted) and anything that is no
/// shared library are left alone, with an error that says why.
fn check_target(java_home: &Path, target: &Path) -> Result<(), String> {
    let Ok(meta) = std::fs::symlink_metadata(target) else { return Ok(()) };
    if meta.file_type().is_symlink() {
        let points_to = std::fs::read_link(target).map(|p| p.display().to_string()).unwrap_or_default();
        let home = std::fs::canonicalize(java_home).map_err(|e| format!("{}: {e}", java_home.display()))?;
        match std::fs::canonicalize(target) {
            Ok(real) if real.starts_with(&home) => {}
            _ => {
                return Err(format!(
                    "{} is a symlink to {points_to}, which is outside the JDK ({}) or missing: not replaced; \
                     remove the link first if the agent is to go there",
                    target.display(),
                    home.display()
                ));
            }
        }
    }
    elf_shared_object(target).map_err(|why| {
        format!(
            "{} is there already and {why}: not replaced; remove it first if the agent is to go there",
            target.display()
        )
    })
}

/// Writes `agent` into a fresh, randomly named file in `lib` and renames it over `target`. The old file
/// is never written: a JVM that has it mapped keeps it (overwritten in place, its pages would change
/// under it, or vanish past the new end of file: SIGBUS).
fn replace(agent: &Path, lib: &Path, target: &Path) -> Result<(), String> {
    elf_shared_object(agent).map_err(|why| format!("{} {why}: not installed", agent.display()))?;
    let fail = |e: std::io::Error| format!("cannot install into {}: {e}", lib.display());
    // 0755 whatever the umask: every user of the JDK loads it.
    let mode = std::fs::Permissions::from_mode(0o755);
    let mut temp = tempfile::Builder::new()
        .prefix(".libhprof.so.")
        .suffix(".tmp")
        .permissions(mode.clone())
        .tempfile_in(lib)
        .map_err(fail)?;
    let mut from = std::fs::File::open(agent).map_err(|e| format!("{}: {e}", agent.display()))?;
    std::io::copy(&mut from, temp.as_file_mut()).map_err(fail)?;
    temp.as_file().set_permissions(mode).map_err(fail)?;
    temp.as_file().sync_all().map_err(fail)?;
    temp.persist(target)
        .map_err(|e| format!("cannot rename {} over {}: {}", e.file.path().display(), target.display(), e.error))?;
    Ok(())
}

/// Ok for an ELF shared library: `ET_DYN` without a program interpreter (a position-independent
/// executable is `ET_DYN` too, but asks for one); otherwise what it is not.
fn elf_shared_object(path: &Path) -> Result<(), String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot be read ({e})"))?;
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" {
        return Err("is not an ELF file".into());
    }
    let wide = match bytes[4] {
        1 => false,
        2 => true,
        _ => return Err("is not a valid ELF file (unknown class)".into()),
    };
    let big = match bytes[5] {
        1 => false,
        2 => true,
        _ => return Err("is not a valid ELF file (unknown byte order)".into()),
    };
    let read = |at: usize, len: usize| -> Option<u64> {
        let b = bytes.get(at..at + len)?;
        let mut v = 0u64;
        for i in 0..len {
            v |= (b[if big { len - 1 - i } else { i }] as u64) << (8 * i);
        }
        Some(v)
    };
    const ET_DYN: u64 = 3;
    const PT_INTERP: u64 = 3;
    let e_type = read(16, 2).unwrap_or(0);
    if e_type != ET_DYN {
        return Err(format!("is an ELF file but not a shared object (e_type {e_type})"));
    }
    let (phoff, phentsize, phnum) =
        if wide { (read(32, 8), read(54, 2), read(56, 2)) } else { (read(28, 4), read(42, 2), read(44, 2)) };
    let (Some(phoff), Some(phentsize), Some(phnum)) = (phoff, phentsize, phnum) else {
        return Err("is not a valid ELF file (header cut short)".into());
    };
    for i in 0..phnum {
        let at = phoff.saturating_add(i * phentsize);
        let p_type = usize::try_from(at).ok().and_then(|at| read(at, 4));
        match p_type {
            None => return Err("is not a valid ELF file (program headers cut short)".into()),
            Some(PT_INTERP) => return Err("is an executable, not a shared object".into()),
            Some(_) => {}
        }
    }
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
