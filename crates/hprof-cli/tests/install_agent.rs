//! `hprof install-agent` puts libhprof.so where HPROF once lived, so that `-agentlib:hprof` and `-Xrunhprof`
//! work with no LD_LIBRARY_PATH.

use jvm_harness::{JvmSlot, all_jdks, java_classes, scratch};
use std::process::Command;

#[test]
fn installed_agent_is_found_by_agentlib_and_xrun() {
    // A private copy of a JDK (hard links: cheap), so that the real one stays untouched.
    let Some(source) = all_jdks().into_iter().find(|j| j.version == "21") else {
        jvm_harness::skip("no JDK 21 runtime (make jdk21) to copy");
        return;
    };
    let dir = scratch("install");
    let jdk = dir.path().join("jdk");
    let copied = Command::new("cp").arg("-al").arg(&source.home).arg(&jdk).status().unwrap();
    assert!(copied.success(), "cp -al {}", source.home.display());
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
