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
        symlink(&victim, d.join("print.txt")).unwrap();
        symlink(&nowhere, d.join("flame.html")).unwrap();
        symlink(&victim, d.join("stacks.collapsed")).unwrap();

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
