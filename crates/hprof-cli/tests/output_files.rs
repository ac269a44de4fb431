//! Issue 26: `hprof print|flame|export -o FILE` write 0600 under umask 022 and 000, and replace a symlink at
//! FILE (dangling or not) without writing through it (docs/security.md, "Files").

use jvm_harness::{Java, jdk17, scratch};
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// `hprof ARGS` under umask `mask`.
fn hprof_under(mask: libc::mode_t, dir: &Path, args: &[&str]) {
    let mut cmd = Command::new(jvm_harness::hprof_binary());
    // SAFETY: umask is async-signal-safe and takes a value copied in before the fork.
    unsafe {
        cmd.pre_exec(move || {
            libc::umask(mask);
            Ok(())
        })
    };
    let out = cmd.args(args).current_dir(dir).output().unwrap();
    assert!(out.status.success(), "hprof {args:?} (umask {mask:03o}): {}", String::from_utf8_lossy(&out.stderr));
}

fn assert_private_file(path: &Path, needle: &str) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    assert!(meta.is_file(), "{} is a regular file, not a link", path.display());
    assert_eq!(meta.mode() & 0o7777, 0o600, "{}'s mode", path.display());
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    assert!(text.contains(needle), "{} holds {needle:?}", path.display());
}

#[test]
fn dash_o_outputs_are_0600_and_replace_a_planted_symlink() {
    let dir = scratch("cli-private");
    let run = Java::new(&jdk17(), dir.path())
        .agentpath("cpu=samples,format=b,file=cpu.hprof")
        .class("CpuAccuracy")
        .arg("1")
        .run();
    run.assert_success();
    let profile = dir.path().join("cpu.hprof");
    // 022, the usual mask, would give 0644 files; 000 would give 0666.
    for mask in [0o022, 0o000] {
        let d = &dir.path().join(format!("umask-{mask:03o}"));
        std::fs::create_dir(d).unwrap();
        std::fs::copy(&profile, d.join("cpu.hprof")).unwrap();
        let victim = d.join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
        let nowhere = d.join("nowhere");
        // A link to the victim at each path under one mask, a dangling link under the other.
        let (first, second) = if mask == 0o022 { (&victim, &nowhere) } else { (&nowhere, &victim) };
        symlink(first, d.join("print.txt")).unwrap();
        symlink(second, d.join("flame.html")).unwrap();
        symlink(first, d.join("stacks.collapsed")).unwrap();

        hprof_under(mask, d, &["print", "cpu.hprof", "-o", "print.txt"]);
        hprof_under(mask, d, &["flame", "cpu.hprof", "-o", "flame.html"]);
        hprof_under(mask, d, &["export", "--format", "collapsed", "cpu.hprof", "-o", "stacks.collapsed"]);
        hprof_under(mask, d, &["print", "cpu.hprof", "-o", "new.txt"]);
        hprof_under(mask, d, &["flame", "cpu.hprof", "-o", "new.html"]);

        assert_private_file(&d.join("print.txt"), "CPU SAMPLES");
        assert_private_file(&d.join("new.txt"), "CPU SAMPLES");
        assert_private_file(&d.join("flame.html"), "<svg");
        assert_private_file(&d.join("new.html"), "<svg");
        assert_private_file(&d.join("stacks.collapsed"), "CpuAccuracy.hot");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "umask {mask:03o}: the victim's content");
        assert_eq!(std::fs::metadata(&victim).unwrap().mode() & 0o7777, 0o644, "umask {mask:03o}: the victim's mode");
        assert!(!nowhere.exists(), "umask {mask:03o}: the dangling link's target was created");
        let left: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "umask {mask:03o}: temporary files left: {left:?}");
    }
}

/// `hprof listen -o` under the usual umask 022 (net.rs in hprof-agent covers 000 and a link to a victim):
/// a dangling link at the path is replaced by a 0600 file holding the session, its target never created.
#[test]
fn listen_o_under_umask_022_replaces_a_dangling_link_with_a_private_file() {
    use std::io::{BufRead, BufReader};
    let dir = scratch("listen-022");
    let d = dir.path();
    let nowhere = d.join("nowhere");
    symlink(&nowhere, d.join("run.hprof")).unwrap();
    let mut cmd = Command::new(jvm_harness::hprof_binary());
    // SAFETY: umask is async-signal-safe and takes a constant.
    unsafe {
        cmd.pre_exec(|| {
            libc::umask(0o022);
            Ok(())
        })
    };
    let mut listener = cmd
        .args(["listen", "127.0.0.1:0", "--no-stdin", "-o", "run.hprof"])
        .current_dir(d)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(listener.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line.split_whitespace().nth(3).unwrap_or_default().trim_end_matches(';').to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "listen's first line: {line}");
    let run = Java::new(&jdk17(), d).agentpath(&format!("net={addr},cpu=samples")).class("CpuAccuracy").arg("1").run();
    run.assert_success();
    let status = listener.wait().unwrap();
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut err, &mut rest);
    assert!(status.success(), "hprof listen {status}: {rest}");
    assert!(!nowhere.exists(), "the dangling link's target was created");
    let saved = std::fs::symlink_metadata(d.join("run.hprof")).unwrap();
    assert!(saved.is_file(), "the link replaced by the saved profile");
    assert_eq!(saved.mode() & 0o7777, 0o600, "the saved profile's mode under umask 022");
    hprof_under(0o022, d, &["print", "run.hprof", "-o", "run.txt"]);
    assert_private_file(&d.join("run.txt"), "CpuAccuracy.hot");
}
