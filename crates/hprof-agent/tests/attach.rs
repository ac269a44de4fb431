//! `hprof attach` on real JVMs started without the agent: CPU shares of a 3:1 split against the program's
//! own clocks, a heap dump with exact instance counts (read by our reader and by VisualVM's heap library),
//! a second attach reaching the running session (status, dump, stop, a new session), and each error a
//! user meets, as one line and a non-zero exit.

mod heap_dump_support;
mod report_support;

use heap_dump_support::HeapFile;
use jvm_harness::{Java, Jdk, JvmSlot, Running, all_jdks, hprof_binary, jdk17, scratch, skip};
use report_support::{program_figures, ranked_section};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// `hprof attach PID <what>`: (exit success, stdout, stderr).
fn attach(pid: u32, what: &str, extra: &[&str]) -> (bool, String, String) {
    let out: Output = Command::new(hprof_binary())
        .arg("attach")
        .arg(pid.to_string())
        .arg(what)
        .args(extra)
        .output()
        .expect("run hprof attach");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn attach_ok(pid: u32, what: &str) -> String {
    let (ok, stdout, stderr) = attach(pid, what, &[]);
    assert!(ok, "hprof attach {pid} {what} failed:\n{stdout}{stderr}");
    stdout
}

/// A JVM with no agent, started in `dir`; returns once it runs Java code (the JVM handles SIGQUIT from then
/// on; `hprof attach` also waits for that itself).
fn start_without_agent(jdk: &Jdk, dir: &Path, class: &str, args: &[&str], ready: Option<&str>) -> Running {
    let mut running = Java::new(jdk, dir).class(class).args(args).spawn();
    match ready {
        Some(text) => running.wait_for_stdout(text, Duration::from_secs(120)),
        None => std::thread::sleep(Duration::from_millis(1500)),
    }
    running
}

#[test]
fn cpu_samples_of_a_running_jvm_show_its_three_to_one_split() {
    for jdk in all_jdks() {
        let dir = scratch("attach-cpu");
        // Alone on the machine (both JVM slots), as the startup accuracy tests run: a busy neighbour leaves
        // the program few samples.
        let _alone = JvmSlot::acquire_n(2);
        let running = Java::new(&jdk, dir.path()).class("CpuAccuracy").arg("10").spawn_holding(None);
        std::thread::sleep(Duration::from_millis(1500));
        let report = dir.path().join("cpu.txt");
        // duration=: hprof attach returns once the session has ended and the report is written.
        let out = attach_ok(running.pid(), &format!("cpu=samples,interval=5,duration=5,file={}", report.display()));
        assert!(out.contains("started: session 1") && out.contains("stopped: session 1"), "JDK {}: {out}", jdk.version);
        let text = std::fs::read_to_string(&report).expect("the report is written when hprof attach returns");
        let run = running.wait();
        run.assert_success();
        let own = program_figures(&run.stdout, "own-share");
        let (_, rows) = ranked_section(&text, "CPU SAMPLES", 0).expect("CPU SAMPLES section");
        let count = |m: &str| rows.iter().filter(|r| r.name == m).map(|r| r.count).sum::<u64>() as f64;
        let (alpha, beta) = (count("CpuAccuracy.hotAlpha"), count("CpuAccuracy.hotBeta"));
        let share = 100.0 * alpha / (alpha + beta);
        let what = format!("JDK {}: alpha {share:.1}% vs own {:.1}% ({alpha}+{beta})", jdk.version, own["hotAlpha"]);
        // main started before the attach: its samples prove clocks armed on threads found running.
        assert!(alpha + beta >= 50.0, "{what}: too few samples of main");
        // Five seconds of a ten-second run: a wider band than the startup tests' 5 points.
        assert!((share - own["hotAlpha"]).abs() <= 8.0, "{what}");
        // The JVM went on unharmed after the session, and the agent said so on its stderr.
        assert!(run.stderr.contains("HPROF: session 1 ended after 5 s"), "{what}\n{}", run.stderr);
        if jdk.version.parse::<u32>().unwrap_or(0) >= 21 {
            assert!(run.stderr.contains("loaded dynamically"), "JDK {}: no dynamic-agent warning", jdk.version);
        }
    }
}

#[test]
fn a_heap_dump_of_a_running_jvm_has_exact_instance_counts() {
    for jdk in all_jdks() {
        let dir = scratch("attach-heap");
        let running = start_without_agent(&jdk, dir.path(), "HeapDumpGraph", &["sleep"], Some("ready"));
        let dump = dir.path().join("heap.hprof");
        let out = attach_ok(running.pid(), &format!("heap=dump,format=b,file={}", dump.display()));
        assert!(out.starts_with("dumped: session 1"), "JDK {}: {out}", jdk.version);
        // A heap dump alone is a snapshot: the session is over, and a new one may start.
        assert!(attach_ok(running.pid(), "status").starts_with("stopped: session 1"));
        running.signal(libc::SIGKILL);
        let _ = running.wait();
        let file = HeapFile::parse(&std::fs::read(&dump).expect("heap dump written"));
        assert_eq!(file.dumps.len(), 1, "JDK {}", jdk.version);
        let counts = file.dumps[0].counts(&file);
        assert_eq!(counts.get("HeapDumpGraph$Node"), Some(&123_457), "JDK {}", jdk.version);
        visualvm_counts_nodes(&dump, &jdk);
    }
}

/// VisualVM's heap library (Debian's `visualvm`, which `make test` installs) counts the same Nodes.
fn visualvm_counts_nodes(dump: &Path, jdk: &Jdk) {
    let jar = PathBuf::from("/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar");
    if !jar.is_file() {
        skip(format!("the VisualVM part only: {} is not installed", jar.display()));
        return;
    }
    let out = dump.parent().unwrap().join("checker");
    let src = jvm_harness::repo_root().join("java/tools/VisualVmHeapCheck.java");
    let status = Command::new(jdk17().bin("javac"))
        .args(["--release", "17", "-cp"])
        .arg(&jar)
        .arg("-d")
        .arg(&out)
        .arg(&src)
        .status();
    assert!(status.is_ok_and(|s| s.success()), "cannot compile {}", src.display());
    let _slot = jvm_harness::JvmSlot::acquire();
    let cp = format!("{}:{}", out.display(), jar.display());
    let view = Command::new(jdk17().java()).args(["-cp", &cp, "VisualVmHeapCheck"]).arg(dump).output().expect("java");
    let stdout = String::from_utf8_lossy(&view.stdout);
    assert!(view.status.success(), "JDK {}: VisualVM could not load the dump:\n{stdout}", jdk.version);
    assert!(stdout.lines().any(|l| l == "class 123457 HeapDumpGraph$Node"), "JDK {}: VisualVM:\n{stdout}", jdk.version);
}

#[test]
fn a_second_attach_reaches_the_running_session() {
    let jdk = jdk17();
    let dir = scratch("attach-twice");
    let running = start_without_agent(&jdk, dir.path(), "CpuAccuracy", &["12"], None);
    let pid = running.pid();
    // hprof ps lists it: pid, Java version, main class and arguments.
    let ps = Command::new(hprof_binary()).arg("ps").output().unwrap();
    let ps = String::from_utf8_lossy(&ps.stdout);
    let line = ps.lines().find(|l| l.split_whitespace().next() == Some(&pid.to_string())).unwrap_or_default();
    assert!(line.contains(" 17.") && line.ends_with("CpuAccuracy 12"), "{ps}");
    let report = dir.path().join("first.txt");
    let out = attach_ok(pid, &format!("cpu=samples,file={}", report.display()));
    assert!(out.starts_with("started: session 1"), "{out}");

    // A second session while one runs is refused, naming the one running.
    let (ok, _, stderr) = attach(pid, "cpu=samples", &[]);
    assert!(!ok && stderr.contains("already profiles this JVM (session 1"), "{stderr}");

    std::thread::sleep(Duration::from_secs(1));
    let status = attach_ok(pid, "status");
    assert!(status.starts_with("running: session 1 (cpu=samples,file="), "{status}");
    assert!(attach_ok(pid, "dump").starts_with("dumped: session 1"));
    let stopped = attach_ok(pid, "stop");
    assert!(stopped.starts_with("stopped: session 1"), "{stopped}");
    let text = std::fs::read_to_string(&report).unwrap();
    // Two reports: the dump and the stop, each cumulative.
    assert_eq!(text.matches("CPU SAMPLES BEGIN").count(), 2, "{text}");
    let (total, _) = ranked_section(&text, "CPU SAMPLES", 1).expect("second CPU SAMPLES");
    assert!(total >= 5, "{total} samples in the session:\n{text}");
    assert!(attach_ok(pid, "status").starts_with("stopped: session 1"));
    let (ok, _, stderr) = attach(pid, "stop", &[]);
    assert!(!ok && stderr.contains("session 1 has already ended"), "{stderr}");

    // The library stays loaded: the next attach starts session 2 in it.
    let second = dir.path().join("second.txt");
    let out = attach_ok(pid, &format!("cpu=samples,duration=1,file={}", second.display()));
    assert!(out.contains("started: session 2") && out.contains("stopped: session 2"), "{out}");
    assert!(std::fs::read_to_string(&second).unwrap().contains("CPU SAMPLES BEGIN"));
    let run = running.wait();
    run.assert_success().assert_no_crash_log();
    assert!(run.stdout.contains("own-share"), "the program ran to its end");
}

#[test]
fn each_error_is_one_line_and_a_failure() {
    let one_line_error = |(ok, stdout, stderr): (bool, String, String), expect: &str| {
        assert!(!ok, "expected a failure, got:\n{stdout}{stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "one line, not:\n{stderr}");
        assert!(lines[0].starts_with("hprof: error: ") && lines[0].contains(expect), "{expect:?} not in {stderr}");
    };
    // No such process: a pid that just ended.
    let mut gone = Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    one_line_error(attach(gone_pid, "cpu=samples", &[]), &format!("no such process: {gone_pid}"));
    // Not a JVM.
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    one_line_error(attach(sleeper.id(), "cpu=samples", &[]), "is not a Java VM");
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    // Another user's process (needs root to start one; says so otherwise).
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        let mut other =
            Command::new("setpriv").args(["--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "30"]).spawn();
        match &mut other {
            Ok(child) => {
                std::thread::sleep(Duration::from_millis(200));
                one_line_error(attach(child.id(), "cpu=samples", &[]), "hprof attaches only to JVMs of its own user");
                let _ = child.kill();
                let _ = child.wait();
            }
            Err(e) => skip(format!("the other user's process only: cannot run setpriv: {e}")),
        }
    } else {
        skip("the other user's process only: the test starts one only as root");
    }

    let jdk = jdk17();
    // Attach disabled.
    let dir = scratch("attach-disabled");
    let mut disabled =
        Java::new(&jdk, dir.path()).vm_arg("-XX:+DisableAttachMechanism").class("Sleeper").arg("60").spawn();
    disabled.wait_for_stdout("ready", Duration::from_secs(60));
    one_line_error(attach(disabled.pid(), "cpu=samples", &[]), "-XX:+DisableAttachMechanism");
    disabled.signal(libc::SIGKILL);
    let _ = disabled.wait();

    // A JVM that does not answer: stopped, so it cannot start its listener.
    let dir = scratch("attach-stopped");
    let mut stopped = Java::new(&jdk, dir.path()).class("Sleeper").arg("60").spawn();
    stopped.wait_for_stdout("ready", Duration::from_secs(60));
    stopped.signal(libc::SIGSTOP);
    one_line_error(attach(stopped.pid(), "cpu=samples", &["--timeout", "2"]), "did not answer within 2 s");
    stopped.signal(libc::SIGKILL);
    let _ = stopped.wait();

    // Options the agent refuses: its own message, and the JVM runs on.
    let dir = scratch("attach-refused");
    let mut refused = Java::new(&jdk, dir.path()).class("Sleeper").arg("60").spawn();
    refused.wait_for_stdout("ready", Duration::from_secs(60));
    one_line_error(attach(refused.pid(), "cpu=samples,depth=-1", &[]), "option depth=-1 is not valid");
    one_line_error(attach(refused.pid(), "dump", &[]), "no hprof session runs in this JVM");
    assert!(attach_ok(refused.pid(), "status").starts_with("idle: hprof is loaded but no session has run"));
    refused.signal(libc::SIGKILL);
    let _ = refused.wait();
}

/// cpu=times attached: the loaded classes get probes (retransformed), calls made after the attach are counted
/// exactly, the program runs on after `stop` (which gives the classes their own code back); a second cpu=times
/// session in the same JVM is refused.
#[test]
fn cpu_times_attached_counts_exactly_and_the_program_runs_on_after_stop() {
    for jdk in all_jdks() {
        let dir = scratch("attach-cputimes");
        let mut running = start_without_agent(&jdk, dir.path(), "AttachCalls", &["2"], Some("ready"));
        let report = dir.path().join("times.txt");
        let out = attach_ok(running.pid(), &format!("cpu=times,cutoff=0,file={}", report.display()));
        assert!(out.contains("started: session 1"), "JDK {}: {out}", jdk.version);
        std::fs::write(dir.path().join("go-1"), "").unwrap();
        running.wait_for_stdout("round 1 ", Duration::from_secs(120));
        assert!(attach_ok(running.pid(), "stop").contains("stopped: session 1"));
        let (ok, _, stderr) = attach(running.pid(), "cpu=times", &[]);
        assert!(!ok && stderr.contains("runs once per JVM"), "JDK {}: {stderr}", jdk.version);
        std::fs::write(dir.path().join("go-2"), "").unwrap();
        let run = running.wait();
        run.assert_success().assert_no_crash_log();
        assert!(run.stdout.contains("round 2 "), "JDK {}: the program ran on after stop\n{}", jdk.version, run.stdout);
        assert!(!run.stderr.contains("Error"), "JDK {}: {}", jdk.version, run.stderr);

        let text = std::fs::read_to_string(&report).unwrap();
        let (_, rows) = ranked_section(&text, "CPU TIME (ms)", 0).expect("CPU TIME at stop");
        assert!(ranked_section(&text, "CPU TIME (ms)", 1).is_none(), "one report: the stop's");
        let expected = program_figures(&run.stdout, "round 1 expected-calls");
        for (method, &want) in &expected {
            let got: u64 = rows.iter().filter(|r| &r.name == method).map(|r| r.count).sum();
            assert_eq!(got, want as u64, "JDK {}: calls of {method} in round 1", jdk.version);
        }
    }
}

#[test]
fn jcmd_agent_load_starts_a_session_too() {
    let jdk = jdk17();
    let jcmd = jdk.bin("jcmd");
    assert!(jcmd.is_file(), "JDK 17 has no jcmd at {}", jcmd.display());
    let dir = scratch("attach-jcmd");
    let running = start_without_agent(&jdk, dir.path(), "CpuAccuracy", &["6"], None);
    let report = dir.path().join("jcmd.txt");
    let library = jvm_harness::agent_library();
    // jcmd hands on only the part before '=' of an unquoted argument: the inner quotes keep it whole.
    let options = format!("\"cpu=samples,duration=1,file={}\"", report.display());
    let out = Command::new(&jcmd)
        .arg(running.pid().to_string())
        .arg("JVMTI.agent_load")
        .arg(&library)
        .arg(&options)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("return code: 0"), "{stdout}");
    let run = running.wait();
    run.assert_success();
    assert!(run.stderr.contains("HPROF: session 1 ended after 1 s"), "{}", run.stderr);
    let text = std::fs::read_to_string(&report).unwrap();
    let (total, rows) = ranked_section(&text, "CPU SAMPLES", 0).expect("CPU SAMPLES");
    assert!(total > 0 && rows.iter().any(|r| r.name.starts_with("CpuAccuracy.hot")), "{text}");
}

/// A JVM in a PID and mount namespace of its own, as in a container: pid 1 inside, its own /tmp.
#[test]
fn a_jvm_in_its_own_pid_and_mount_namespaces() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("unshare needs root");
        return;
    }
    let jdk = jdk17();
    let _slot = JvmSlot::acquire();
    let classes = jvm_harness::java_classes();
    let script =
        format!("mount -t tmpfs tmpfs /tmp && exec {} -cp {} CpuAccuracy 8", jdk.java().display(), classes.display());
    let mut unshare =
        match Command::new("unshare").args(["--pid", "--mount", "--fork", "--mount-proc", "sh", "-c", &script]).spawn()
        {
            Ok(c) => c,
            Err(e) => panic!("cannot run unshare: {e}"),
        };
    // The JVM is unshare's child (sh execs java).
    std::thread::sleep(Duration::from_millis(1500));
    let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", unshare.id())).unwrap_or_default();
    let Some(pid) = children.split_whitespace().next().and_then(|p| p.parse::<u32>().ok()) else {
        let _ = unshare.kill();
        panic!("no JVM under unshare (is unshare --pid allowed here?)");
    };
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(status.lines().any(|l| l.starts_with("NSpid:") && l.trim_end().ends_with("\t1")), "{status}");
    let ps = Command::new(hprof_binary()).arg("ps").output().unwrap();
    let ps = String::from_utf8_lossy(&ps.stdout);
    assert!(
        ps.lines().any(|l| l.trim_start().starts_with(&pid.to_string()) && l.contains("in a container as pid 1")),
        "{ps}"
    );
    // file= names a path inside the container's own /tmp.
    let out = attach_ok(pid, "cpu=samples,duration=2,file=/tmp/inside.txt");
    assert!(out.contains("stopped: session 1"), "{out}");
    let text =
        std::fs::read_to_string(format!("/proc/{pid}/root/tmp/inside.txt")).expect("the report in the JVM's /tmp");
    assert!(!Path::new("/tmp/inside.txt").exists(), "written outside the container");
    let (total, _) = ranked_section(&text, "CPU SAMPLES", 0).expect("CPU SAMPLES");
    assert!(total > 0, "{text}");
    let _ = unshare.wait();
}
