//! Issue 26: every file the agent writes is 0600 whatever the umask, and a symlink planted at its path,
//! dangling or not, is never followed (docs/security.md, "Files").

use jvm_harness::{Java, all_jdks, jdk17, scratch, skip};
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).mode() & 0o7777
}

/// A file of someone else's that a planted link points at: 0644, "precious".
fn victim(dir: &Path) -> PathBuf {
    let victim = dir.join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    victim
}

fn assert_untouched(victim: &Path, what: &str) {
    assert_eq!(std::fs::read_to_string(victim).unwrap(), "precious", "{what}: the victim's content");
    assert_eq!(mode(victim), 0o644, "{what}: the victim's mode");
}

/// A link as another user would plant it: owned by nobody when we can give it away (as root).
fn plant(target: &Path, link: &Path) {
    symlink(target, link).unwrap();
    let _ = std::os::unix::fs::lchown(link, Some(65534), Some(65534));
}

/// A regular file (not a link any more), 0600, holding `needle`.
fn assert_private_file(path: &Path, needle: &str, what: &str) {
    let meta = std::fs::symlink_metadata(path).unwrap_or_else(|e| panic!("{what}: {}: {e}", path.display()));
    assert!(meta.is_file(), "{what}: {} is a regular file, not a link", path.display());
    assert_eq!(meta.mode() & 0o7777, 0o600, "{what}: {}'s mode", path.display());
    let bytes = std::fs::read(path).unwrap();
    assert!(
        String::from_utf8_lossy(&bytes).contains(needle),
        "{what}: {} holds {needle:?}:\n{}",
        path.display(),
        String::from_utf8_lossy(&bytes[..bytes.len().min(2000)])
    );
}

/// No temporary file left beside the outputs.
fn assert_no_leftovers(dir: &Path, what: &str) {
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") || n.contains(".TMP"))
        .collect();
    assert!(left.is_empty(), "{what}: temporary files left behind: {left:?}");
}

/// Another user (nobody) cannot read `path`, while a 0644 file beside it is readable to them (so that it
/// is the mode that keeps them out, not the directory). Needs setpriv and root; otherwise a named skip.
fn assert_unreadable_to_others(path: &Path) {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !Path::new("/usr/bin/setpriv").exists() {
        skip("the other-user check needs root and setpriv: only the mode was checked");
        return;
    }
    let dir = path.parent().unwrap();
    let control = dir.join("control.txt");
    std::fs::write(&control, "readable").unwrap();
    std::fs::set_permissions(&control, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let cat = |p: &Path| {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "cat"])
            .arg(p)
            .output()
            .unwrap()
    };
    let control_read = cat(&control);
    std::fs::remove_file(&control).unwrap();
    if !control_read.status.success() {
        skip(format!(
            "nobody cannot reach {} at all ({}): only the mode was checked",
            dir.display(),
            String::from_utf8_lossy(&control_read.stderr).trim()
        ));
        return;
    }
    let read = cat(path);
    assert!(!read.status.success(), "nobody read {}", path.display());
    assert!(String::from_utf8_lossy(&read.stderr).contains("Permission denied"), "{:?}", read);
}

#[test]
fn reports_dumps_and_side_files_are_0600_under_umask_022_and_000() {
    for jdk in all_jdks() {
        // Both masks on 17; the laxest on the others.
        let masks: &[u32] = if jdk.version == "17" { &[0o022, 0o000] } else { &[0o000] };
        for &mask in masks {
            let what = format!("JDK {} umask {mask:03o}", jdk.version);
            let dir = scratch("private-modes");
            let run = Java::new(&jdk, dir.path())
                .umask(mask)
                .agentpath("cpu=samples,monitor=y,file=report.txt,collapsed=cpu.collapsed,flamegraph=cpu.html")
                .class("LockContention")
                .args(&["2", "20", "2"])
                .run();
            run.assert_success();
            let d = dir.path();
            assert_private_file(&d.join("report.txt"), "CPU SAMPLES BEGIN", &what);
            assert_private_file(&d.join("report.txt"), "MONITOR TIME BEGIN", &what);
            // Its stacks are checked in the force=y test (this program is mostly blocked: few samples).
            assert_private_file(&d.join("cpu.collapsed"), "", &what);
            assert_private_file(&d.join("cpu.html"), "<svg", &what);
            assert_private_file(&d.join("cpu.locks.collapsed"), "[lock:LockContention$SharedLock]", &what);
            assert_private_file(&d.join("cpu.locks.html"), "<svg", &what);
            assert_no_leftovers(d, &what);

            let run =
                Java::new(&jdk, d).umask(mask).agentpath("heap=dump,format=b,file=dump.hprof").class("Hello").run();
            run.assert_success();
            assert_private_file(&d.join("dump.hprof"), "JAVA PROFILE 1.0.2", &what);
            assert!(mode(&d.join("dump.hprof")) == 0o600 && run.read_bytes("dump.hprof").len() > 100_000, "{what}");
            assert_no_leftovers(d, &what);
            if mask == 0 && jdk.version == "17" {
                assert_unreadable_to_others(&d.join("dump.hprof"));
            }
        }
    }
}

/// force=y (the default): a link at the report's, a side file's or a dump's path, pointing at a victim
/// or at nothing, is replaced by the profile at the end; the victim keeps its bytes and mode, and a
/// dangling link's target is never created.
#[test]
fn force_y_replaces_a_planted_symlink_and_never_writes_through_it() {
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("planted-links");
        let d = dir.path();
        let victim = victim(d);
        let nowhere = d.join("nowhere");
        plant(&victim, &d.join("report.txt"));
        plant(&victim, &d.join("cpu.html"));
        plant(&nowhere, &d.join("cpu.collapsed"));
        let run = Java::new(&jdk, d)
            .agentpath("cpu=samples,file=report.txt,collapsed=cpu.collapsed,flamegraph=cpu.html")
            .class("CpuAccuracy")
            .arg("1")
            .run();
        run.assert_success();
        assert_untouched(&victim, &what);
        assert!(!nowhere.exists(), "{what}: the dangling link's target was created");
        assert_private_file(&d.join("report.txt"), "CPU SAMPLES BEGIN", &what);
        assert_private_file(&d.join("cpu.html"), "<svg", &what);
        assert_private_file(&d.join("cpu.collapsed"), "CpuAccuracy.hot", &what);
        assert_no_leftovers(d, &what);

        plant(&victim, &d.join("dump.hprof"));
        let run = Java::new(&jdk, d).agentpath("heap=dump,format=b,file=dump.hprof").class("Hello").run();
        run.assert_success();
        assert_untouched(&victim, &what);
        assert_private_file(&d.join("dump.hprof"), "JAVA PROFILE 1.0.2", &what);
        plant(&nowhere, &d.join("dangling.hprof"));
        let run = Java::new(&jdk, d).agentpath("heap=dump,format=b,file=dangling.hprof").class("Hello").run();
        run.assert_success();
        assert!(!nowhere.exists(), "{what}: the dangling link's target was created");
        assert_private_file(&d.join("dangling.hprof"), "JAVA PROFILE 1.0.2", &what);
        assert_no_leftovers(d, &what);
    }
}

/// force=n keeps what is at the path, a link included, and writes `<name>.<pid>[.txt]` (new, 0600) instead:
/// neither the link's victim nor a dangling link's target is written.
#[test]
fn force_n_keeps_a_planted_symlink_and_takes_a_fresh_name() {
    let dir = scratch("force-n-links");
    let d = dir.path();
    let victim = victim(d);
    let nowhere = d.join("nowhere");
    plant(&victim, &d.join("java.hprof.txt"));
    plant(&nowhere, &d.join("x.txt"));
    for file in ["java.hprof.txt", "x.txt"] {
        let run = Java::new(&jdk17(), d).agentpath(&format!("cpu=samples,force=n,file={file}")).class("Hello").run();
        run.assert_success();
        assert!(std::fs::symlink_metadata(d.join(file)).unwrap().is_symlink(), "{file}: the link is kept");
        assert_untouched(&victim, file);
        assert!(!nowhere.exists(), "{file}: the dangling link's target was created");
        let stem = file.strip_suffix(".txt").unwrap();
        let fresh = d.join(format!("{stem}.{}.txt", run_pid(&run.stderr, d, stem)));
        assert_private_file(&fresh, "CPU SAMPLES BEGIN", file);
    }
}

/// The pid in the one `<stem>.<pid>.txt` written (the run does not say it otherwise).
fn run_pid(stderr: &str, dir: &Path, stem: &str) -> String {
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| Some(n.strip_prefix(&format!("{stem}."))?.strip_suffix(".txt")?.to_owned()))
        .filter(|pid| pid.parse::<u32>().is_ok())
        .collect();
    assert_eq!(names.len(), 1, "one {stem}.<pid>.txt, found {names:?}:\n{stderr}");
    names[0].clone()
}

/// The replacement is renamed into place however the JVM ends: System.exit, SIGTERM, an
/// OutOfMemoryError out of main.
#[test]
fn a_replaced_profile_is_in_place_after_system_exit_and_sigterm() {
    let dir = scratch("replace-at-exit");
    let d = dir.path();
    let victim = victim(d);
    plant(&victim, &d.join("exit.txt"));
    let run = Java::new(&jdk17(), d).agentpath("cpu=samples,file=exit.txt").class("Exiter").run();
    assert_eq!(run.code(), Some(3), "{}", run.stderr);
    assert_private_file(&d.join("exit.txt"), "CPU SAMPLES BEGIN", "System.exit");

    plant(&victim, &d.join("term.txt"));
    let mut jvm = Java::new(&jdk17(), d).agentpath("cpu=samples,file=term.txt").class("Sleeper").spawn();
    jvm.wait_for_stdout("ready", Duration::from_secs(60));
    jvm.signal(libc::SIGTERM);
    let run = jvm.wait();
    run.assert_no_crash_log();
    assert_private_file(&d.join("term.txt"), "CPU SAMPLES BEGIN", "SIGTERM");

    plant(&victim, &d.join("oom.txt"));
    let run = Java::new(&jdk17(), d).agentpath("cpu=samples,file=oom.txt").vm_arg("-Xmx32m").class("OomThrower").run();
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert_private_file(&d.join("oom.txt"), "CPU SAMPLES BEGIN", "OutOfMemoryError");
    assert_untouched(&victim, "exit, SIGTERM, OutOfMemoryError");
    assert_no_leftovers(d, "exit, SIGTERM, OutOfMemoryError");
}

/// As an unprivileged user (nobody), in a sticky world-writable directory (`/tmp`): another user (uid
/// 12345) planted a link at the report's path to nobody's own file, the classic way to make a program
/// overwrite its user's files. force=y cannot rename over another user's entry there: refused at load
/// with a reason, the file untouched. force=n writes `<name>.<pid>.txt` instead; a fresh name is 0600.
#[test]
fn as_an_unprivileged_user_a_link_another_user_planted_in_a_sticky_directory_is_never_followed() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("running the JVM as nobody needs root");
        return;
    }
    let dir = scratch("sticky");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let shared = dir.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let victim = victim(&shared);
    std::os::unix::fs::chown(&victim, Some(65534), Some(65534)).unwrap();
    let link = shared.join("report.txt");
    symlink(&victim, &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(12345), Some(12345)).unwrap();

    let run =
        Java::new(&jdk17(), &shared).user(65534, 65534).agentpath("cpu=samples,file=report.txt").class("Hello").run();
    assert_ne!(run.code(), Some(0), "force=y must refuse:\n{}", run.stderr);
    run.assert_no_crash_log();
    assert!(
        run.stderr.contains("report.txt belongs to another user (uid 12345) in a sticky directory"),
        "{}",
        run.stderr
    );
    assert_untouched(&victim, "force=y as nobody");

    let run = Java::new(&jdk17(), &shared)
        .user(65534, 65534)
        .agentpath("cpu=samples,force=n,file=report.txt")
        .class("Hello")
        .run();
    run.assert_success();
    assert_untouched(&victim, "force=n as nobody");
    let fresh = shared.join(format!("report.{}.txt", run_pid(&run.stderr, &shared, "report")));
    assert_private_file(&fresh, "CPU SAMPLES BEGIN", "force=n as nobody");
    assert_eq!(std::fs::metadata(&fresh).unwrap().uid(), 65534, "nobody's file");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink(), "the other user's link is left alone");
}

/// A session attached to a running JVM (`hprof attach PID … file=`) over a planted link: the report is
/// renamed into place at `hprof attach PID stop`, while the JVM runs on; the victim is untouched.
#[test]
fn an_attached_sessions_report_is_renamed_into_place_at_stop() {
    let dir = scratch("attach-replace");
    let d = dir.path();
    let victim = victim(d);
    let report = d.join("attached.txt");
    plant(&victim, &report);
    let mut jvm = Java::new(&jdk17(), d).class("Sleeper").arg("60").spawn();
    jvm.wait_for_stdout("ready", Duration::from_secs(60));
    let attach = |what: &str| {
        let out = std::process::Command::new(jvm_harness::hprof_binary())
            .args(["attach", &jvm.pid().to_string(), what])
            .output()
            .unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "hprof attach {what}: {said}");
        said
    };
    attach(&format!("cpu=samples,file={}", report.display()));
    std::thread::sleep(Duration::from_millis(500));
    assert!(std::fs::symlink_metadata(&report).unwrap().is_symlink(), "the link stays while the session runs");
    let stopped = attach("stop");
    assert!(stopped.contains("stopped: session 1"), "{stopped}");
    assert_private_file(&report, "CPU SAMPLES BEGIN", "attach stop");
    assert_untouched(&victim, "attach stop");
    assert_no_leftovers(d, "attach stop");
    jvm.signal(libc::SIGTERM);
    jvm.wait().assert_no_crash_log();
}
