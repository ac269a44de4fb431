//! `hprof ps` and `hprof attach` show what other processes chose to be called (their command lines, a JVM's
//! performance data) with control characters escaped, as every other name (docs/security.md, "Hostile input").

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

const EVIL: &str = "evil\x1b]0;owned\x07\x1b[2J\r\nfake line";
const SHOWN: &str = "evil\\x1b]0;owned\\x07\\x1b[2J\\r\\nfake line";

fn raw_escape(text: &str) -> bool {
    text.contains('\x1b') || text.contains('\x07') || text.contains('\r')
}

#[test]
fn ps_shows_a_jvms_arguments_escaped() {
    for jdk in jvm_harness::all_jdks() {
        let dir = jvm_harness::scratch("ps-evil-args");
        let mut jvm = jvm_harness::Java::new(&jdk, dir.path()).class("Sleeper").args(&["60", EVIL]).spawn();
        jvm.wait_for_stdout("ready", Duration::from_secs(60));
        let pid = jvm.pid().to_string();
        let ps = Command::new(jvm_harness::hprof_binary()).arg("ps").output().unwrap();
        jvm.signal(libc::SIGKILL);
        let _ = jvm.wait();
        let out = String::from_utf8_lossy(&ps.stdout);
        assert!(ps.status.success(), "JDK {}: hprof ps: {}", jdk.version, String::from_utf8_lossy(&ps.stderr));
        assert!(!raw_escape(&out), "JDK {}: hprof ps printed a raw escape: {out:?}", jdk.version);
        let line = out.lines().find(|l| l.split_whitespace().next() == Some(pid.as_str())).unwrap_or_default();
        assert!(
            line.ends_with(&format!("Sleeper 60 {SHOWN}")),
            "JDK {}: pid {pid} not shown escaped:\n{out}",
            jdk.version
        );
    }
}

#[test]
fn attach_names_a_process_that_is_no_jvm_escaped() {
    let mut sleeper = Command::new("sleep").arg0(EVIL).arg("30").stdin(Stdio::null()).spawn().expect("sleep");
    // The name must be readable before hprof reads it: on a loaded machine /proc/PID/cmdline has been seen
    // empty right after spawn (hprof then said "()" and the test failed for the wrong reason).
    let cmdline = format!("/proc/{}/cmdline", sleeper.id());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !std::fs::read(&cmdline).is_ok_and(|c| c.starts_with(EVIL.as_bytes())) {
        assert!(std::time::Instant::now() < deadline, "sleep's {cmdline} never showed its argv[0]");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = Command::new(jvm_harness::hprof_binary())
        .args(["attach", &sleeper.id().to_string(), "status"])
        .output()
        .unwrap();
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "hprof attach to sleep succeeded: {err}");
    assert!(!raw_escape(&err), "hprof attach printed a raw escape: {err:?}");
    assert!(err.contains(&format!("({SHOWN}) is not a Java VM")), "{err}");
}
