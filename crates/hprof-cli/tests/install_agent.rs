//! `hprof install-agent` puts libhprof.so where HPROF once lived, so that `-agentlib:hprof` and `-Xrunhprof`
//! work with no LD_LIBRARY_PATH.

use jvm_harness::{JvmSlot, all_jdks, java_classes, scratch};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A private copy of JDK 21 (hard links: cheap) in a scratch directory, so that the real one stays
/// untouched; `None` (a named skip) without one.
fn private_jdk(name: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let Some(source) = all_jdks().into_iter().find(|j| j.version == "21") else {
        jvm_harness::skip("no JDK 21 runtime (make jdk21) to copy");
        return None;
    };
    let dir = scratch(name);
    let jdk = dir.path().join("jdk");
    let copied = Command::new("cp").arg("-al").arg(&source.home).arg(&jdk).status().unwrap();
    assert!(copied.success(), "cp -al {}", source.home.display());
    Some((dir, jdk))
}

fn install(agent: &Path, jdk: &Path) -> Output {
    install_under(0o022, agent, jdk)
}

/// [`install`] under umask `mask`.
fn install_under(mask: libc::mode_t, agent: &Path, jdk: &Path) -> Output {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hprof"));
    // SAFETY: umask is async-signal-safe and takes a value copied in before the fork.
    unsafe {
        cmd.pre_exec(move || {
            libc::umask(mask);
            Ok(())
        })
    };
    cmd.args(["install-agent", "--agent"]).arg(agent).arg("--java-home").arg(jdk).output().unwrap()
}

#[test]
fn installed_agent_is_found_by_agentlib_and_xrun() {
    let Some((dir, jdk)) = private_jdk("install") else { return };
    let java = jdk.join("bin/java");

    let _slot = JvmSlot::acquire();
    let before =
        Command::new(&java).args(["-agentlib:hprof=help", "-version"]).env_remove("LD_LIBRARY_PATH").output().unwrap();
    assert!(!before.status.success(), "without installing, -agentlib:hprof must not be found");

    let out = Command::new(env!("CARGO_BIN_EXE_hprof"))
        .args(["install-agent", "--agent"])
        .arg(jvm_harness::agent_library())
        .arg("--java-home")
        .arg(&jdk)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(jdk.join("lib/libhprof.so").is_file());

    for form in ["-agentlib:hprof=cpu=samples,file=agentlib.txt", "-Xrunhprof:cpu=samples,file=xrun.txt"] {
        let run = Command::new(&java)
            .arg(form)
            .arg("-cp")
            .arg(java_classes())
            .arg("Hello")
            .current_dir(dir.path())
            .env_remove("LD_LIBRARY_PATH")
            .output()
            .unwrap();
        assert!(run.status.success(), "{form}: {}", String::from_utf8_lossy(&run.stderr));
    }
    for file in ["agentlib.txt", "xrun.txt"] {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        assert!(text.starts_with("JAVA PROFILE 1.0.1") && text.contains("name=\"main\""), "{file}");
    }
}

#[test]
fn install_refuses_what_is_not_a_jdk() {
    let dir = scratch("install-bad");
    let out = Command::new(env!("CARGO_BIN_EXE_hprof"))
        .args(["install-agent", "--agent"])
        .arg(jvm_harness::agent_library())
        .arg("--java-home")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not look like a JDK"));
}

/// Issue 26: install-agent over the library a running JVM has mapped. Written in place (as `cp` does),
/// the JVM's mapped pages change under it or vanish past the new end of the file: SIGBUS. Written beside
/// it and renamed over it, the running JVM keeps the old file and ends normally with its report.
#[test]
fn install_over_a_library_a_running_jvm_has_mapped_leaves_that_jvm_running() {
    let Some((dir, jdk)) = private_jdk("install-mapped") else { return };
    // 0755 whatever the umask: 077 would make it 0700 (no other user's JVM could load it), 000 0777.
    let first = install_under(0o077, &jvm_harness::agent_library(), &jdk);
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let installed = jdk.join("lib/libhprof.so");
    assert_eq!(std::fs::metadata(&installed).unwrap().mode() & 0o7777, 0o755, "installed under umask 077");
    let old_inode = std::fs::metadata(&installed).unwrap().ino();

    let _slot = JvmSlot::acquire();
    let mut jvm = Command::new(jdk.join("bin/java"))
        .arg("-agentlib:hprof=cpu=samples,interval=1,file=mapped.txt")
        .arg("-cp")
        .arg(java_classes())
        .args(["Sleeper", "3"])
        .current_dir(dir.path())
        .env_remove("LD_LIBRARY_PATH")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(jvm.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready", "the JVM started with the installed agent");
    // A smaller, different shared object over it: a copy in place would cut the mapped agent short.
    let other = install_under(0o000, &jdk.join("lib/libjsig.so"), &jdk);
    assert!(other.status.success(), "{}", String::from_utf8_lossy(&other.stderr));
    assert_ne!(std::fs::metadata(&installed).unwrap().ino(), old_inode, "a new file, renamed over the old one");
    assert_eq!(std::fs::metadata(&installed).unwrap().mode() & 0o7777, 0o755, "installed under umask 000");

    let out = jvm.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the JVM that had the old agent mapped: {:?}\n{stderr}", out.status);
    let report = std::fs::read_to_string(dir.path().join("mapped.txt")).unwrap();
    assert!(report.contains("CPU SAMPLES BEGIN") && report.contains("CPU SAMPLES END"), "its report:\n{report}");
    let leftovers: Vec<_> = std::fs::read_dir(jdk.join("lib"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// install-agent refuses, with an error that says why, a target that is a symlink out of the JDK (the
/// file it points at untouched), a target that is no shared object, and an agent that is none.
#[test]
fn install_refuses_a_link_out_of_the_jdk_and_what_is_no_shared_object() {
    let Some((dir, jdk)) = private_jdk("install-refuse") else { return };
    let target = jdk.join("lib/libhprof.so");
    let victim = dir.path().join("victim.so");
    std::fs::copy(jdk.join("lib/libjsig.so"), &victim).unwrap();
    let victim_bytes = std::fs::read(&victim).unwrap();
    symlink(&victim, &target).unwrap();
    let out = install(&jvm_harness::agent_library(), &jdk);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("is a symlink to") && stderr.contains("outside the JDK"), "{stderr}");
    assert_eq!(std::fs::read(&victim).unwrap(), victim_bytes, "the link's target untouched");
    assert!(std::fs::symlink_metadata(&target).unwrap().is_symlink(), "the link left alone");

    std::fs::remove_file(&target).unwrap();
    std::fs::write(&target, "not a library").unwrap();
    let out = install(&jvm_harness::agent_library(), &jdk);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("is not an ELF file"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "not a library");

    std::fs::remove_file(&target).unwrap();
    let out = install(&jdk.join("bin/java"), &jdk);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("is an executable, not a shared object"), "{stderr}");
    assert!(!target.exists(), "nothing installed");
}
