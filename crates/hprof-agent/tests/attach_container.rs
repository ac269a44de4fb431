//! `hprof attach` into a JVM in a container — PID and mount namespaces of its own, its own /tmp — whose
//! users plant files and links where hprof works: the agent still reaches the JVM and profiles it, nothing
//! planted is loaded or followed, and nothing is written outside the container's root. Needs root (for
//! unshare); a named skip otherwise.

mod report_support;

use jvm_harness::{Jdk, JvmSlot, all_jdks, hprof_binary, jdk17, scratch, skip};
use report_support::ranked_section;
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// A JVM (CpuAccuracy, for `seconds`) in new PID and mount namespaces, started by `sh -c` after `setup`
/// ran inside them. pid 1 inside.
struct Container {
    /// None once waited for.
    unshare: Option<Child>,
    pid: u32,
    _slot: JvmSlot,
}

impl Container {
    /// None (after a named skip) where namespaces cannot be made.
    fn start(jdk: &Jdk, setup: &str, cwd: &Path, seconds: u32) -> Option<Container> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            skip("unshare needs root (CAP_SYS_ADMIN)");
            return None;
        }
        let probe = Command::new("unshare").args(["--pid", "--mount", "--fork", "true"]).status();
        if !probe.is_ok_and(|s| s.success()) {
            skip("unshare --pid --mount is not allowed here (no CAP_SYS_ADMIN?)");
            return None;
        }
        let slot = JvmSlot::acquire();
        let java =
            format!("{} -cp {} CpuAccuracy {seconds}", jdk.java().display(), jvm_harness::java_classes().display());
        let script = format!("set -e\n{setup}\nexec {}", setup_exec(&java));
        let unshare = Command::new("unshare")
            .args(["--pid", "--mount", "--fork", "--mount-proc", "sh", "-c", &script])
            .current_dir(cwd)
            .spawn()
            .expect("run unshare");
        // The JVM is unshare's child once sh (and chroot) have exec'd it.
        let deadline = Instant::now() + Duration::from_secs(30);
        let children = format!("/proc/{0}/task/{0}/children", unshare.id());
        let mut container = Container { unshare: Some(unshare), pid: 0, _slot: slot };
        while container.pid == 0 {
            assert!(Instant::now() < deadline, "no JVM under unshare within 30 s");
            std::thread::sleep(Duration::from_millis(50));
            let child = std::fs::read_to_string(&children).ok().and_then(|c| c.split_whitespace().next()?.parse().ok());
            container.pid = child.filter(|p: &u32| cmdline(*p).contains("CpuAccuracy")).unwrap_or(0);
        }
        // Long enough for the JVM to start; hprof attach waits for its SIGQUIT handler anyway.
        std::thread::sleep(Duration::from_millis(1000));
        Some(container)
    }

    /// The container's /tmp as a plain path from here (only for where that /tmp is a real directory).
    fn tmp(&self) -> PathBuf {
        PathBuf::from(format!("/proc/{}/root/tmp", self.pid))
    }

    /// The file names of the agent copies the JVM has mapped.
    fn mapped_agents(&self) -> Vec<String> {
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", self.pid)).unwrap_or_default();
        let mut names: Vec<String> = maps
            .lines()
            .filter_map(|l| l.split_whitespace().nth(5)?.rsplit('/').next().map(str::to_owned))
            .filter(|n| n.starts_with("libhprof"))
            .collect();
        names.dedup();
        names
    }

    /// Attaches for a two-second CPU profile into the container's /tmp/inside.txt; returns the report,
    /// read through `report_dir` (the container's /tmp as reached from here).
    fn profile(&self, report_dir: &Path) -> String {
        let out = hprof(self.pid, "cpu=samples,duration=2,file=/tmp/inside.txt");
        assert!(out.contains("stopped: session 1"), "{out}");
        let text = std::fs::read_to_string(report_dir.join("inside.txt")).expect("the report in the JVM's /tmp");
        let (total, rows) = ranked_section(&text, "CPU SAMPLES", 0).expect("CPU SAMPLES");
        assert!(total > 0 && rows.iter().any(|r| r.name.starts_with("CpuAccuracy.hot")), "{text}");
        text
    }

    fn finish(mut self) {
        let status = self.unshare.take().expect("running").wait().expect("wait for unshare");
        assert!(status.success(), "the JVM in the container failed: {status}");
    }
}

impl Drop for Container {
    /// A test that failed midway leaves no JVM behind: the JVM is pid 1 of its namespace, so killing it
    /// ends the namespace, and unshare with it.
    fn drop(&mut self) {
        if let Some(mut unshare) = self.unshare.take() {
            if self.pid != 0 {
                // SAFETY: kill has no memory preconditions; the pid is our JVM's, not yet waited for.
                unsafe { libc::kill(self.pid as i32, libc::SIGKILL) };
            }
            let _ = unshare.kill();
            let _ = unshare.wait();
        }
    }
}

/// `exec` of the JVM as the setup script leaves it (a chroot when the setup made a root).
fn setup_exec(java: &str) -> String {
    format!("${{CHROOT:+chroot $CHROOT}} {java}")
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline")).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default()
}

/// `hprof attach PID what`, which must succeed; its stdout.
fn hprof(pid: u32, what: &str) -> String {
    let out = Command::new(hprof_binary()).args(["attach", &pid.to_string(), what]).output().expect("hprof attach");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "hprof attach {pid} {what} failed:\n{stdout}{stderr}");
    stdout.into_owned()
}

/// The agent hprof attach copies (the one next to the hprof binary), its length, mtime and the first 16
/// hex digits of its SHA-256.
fn agent() -> (PathBuf, Vec<u8>, i64, String) {
    let path = hprof_binary().with_file_name("libhprof.so").canonicalize().expect("libhprof.so next to hprof");
    let bytes = std::fs::read(&path).unwrap();
    let mtime = std::fs::metadata(&path).unwrap().mtime();
    let sum = Command::new("sha256sum").arg(&path).output().expect("sha256sum");
    let hash = String::from_utf8_lossy(&sum.stdout)[..16].to_owned();
    (path, bytes, mtime, hash)
}

const MOUNT_OWN_TMP: &str = "mount -t tmpfs tmpfs /tmp";

/// Files planted in the container's /tmp where hprof copies the agent — at the name hprof once used
/// (`libhprof-<len>-<mtime>.so`) and at names of the current pattern: a same-length impostor of ours, the
/// exact library but another user's, the exact library writable by others, a link to the library. None
/// is loaded: the JVM maps a fresh copy of its own, profiles right, and a second attach reuses that copy.
#[test]
fn planted_agent_copies_are_not_loaded() {
    for jdk in all_jdks() {
        planted_agent_copies_are_not_loaded_on(&jdk);
    }
}

fn planted_agent_copies_are_not_loaded_on(jdk: &Jdk) {
    let dir = scratch("attach-planted");
    let Some(jvm) = Container::start(jdk, MOUNT_OWN_TMP, dir.path(), 8) else { return };
    let (library, bytes, mtime, hash) = agent();
    let tmp = jvm.tmp();
    let impostor = vec![0x5au8; bytes.len()];
    let old_name = format!("libhprof-{}-{mtime}.so", bytes.len());
    std::fs::write(tmp.join(&old_name), &impostor).unwrap();
    let pattern = |n: char| format!("libhprof-{hash}-{}.so", n.to_string().repeat(16));
    std::fs::write(tmp.join(pattern('0')), &impostor).unwrap();
    std::fs::set_permissions(tmp.join(pattern('0')), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::write(tmp.join(pattern('1')), &bytes).unwrap();
    std::os::unix::fs::chown(tmp.join(pattern('1')), Some(65534), Some(65534)).unwrap();
    std::fs::write(tmp.join(pattern('2')), &bytes).unwrap();
    std::fs::set_permissions(tmp.join(pattern('2')), std::fs::Permissions::from_mode(0o666)).unwrap();
    symlink(&library, tmp.join(pattern('3'))).unwrap();
    let planted = [old_name.clone(), pattern('0'), pattern('1'), pattern('2'), pattern('3')];

    jvm.profile(&tmp);
    let mapped = jvm.mapped_agents();
    let v = jdk.version;
    assert_eq!(mapped.len(), 1, "JDK {v}: one agent mapped: {mapped:?}");
    assert!(
        !planted.contains(&mapped[0]) && mapped[0].starts_with(&format!("libhprof-{hash}-")),
        "JDK {v}: {mapped:?}"
    );
    let copy = std::fs::symlink_metadata(tmp.join(&mapped[0])).unwrap();
    assert!(copy.is_file() && copy.mode() & 0o777 == 0o600 && copy.len() == bytes.len() as u64, "{copy:?}");
    // A second attach reaches the same agent through the same copy.
    assert!(hprof(jvm.pid, "status").starts_with("stopped: session 1"));
    assert_eq!(jvm.mapped_agents(), mapped);
    // The planted files are as they were.
    assert_eq!(std::fs::read(tmp.join(&old_name)).unwrap(), impostor);
    assert_eq!(std::fs::read(tmp.join(pattern('0'))).unwrap(), impostor);
    jvm.finish();
}

/// A link planted in the container's /tmp at the name hprof once copied the agent to, pointing at a file
/// of the host: the host file is untouched and the attach works.
#[test]
fn a_planted_link_in_the_container_tmp_is_not_followed() {
    let dir = scratch("attach-link");
    let victim = dir.path().join("host-file");
    std::fs::write(&victim, "the host's own\n").unwrap();
    let Some(jvm) = Container::start(&jdk17(), MOUNT_OWN_TMP, dir.path(), 8) else { return };
    let (_, bytes, mtime, _) = agent();
    symlink(&victim, jvm.tmp().join(format!("libhprof-{}-{mtime}.so", bytes.len()))).unwrap();
    jvm.profile(&jvm.tmp());
    assert_eq!(std::fs::read(&victim).unwrap(), b"the host's own\n", "the host file was overwritten");
    jvm.finish();
}

/// The container's /tmp itself a link to an absolute path, which inside the container is its own
/// directory and from the host's root a host directory: hprof resolves it as the JVM does, inside the
/// container's root. Nothing lands in the host directory; the agent, the reply and the report in the
/// container's.
#[test]
fn a_container_tmp_linked_out_of_its_root_is_resolved_inside_it() {
    let dir = scratch("attach-tmp-link");
    let root = dir.path().join("root");
    let host_dir = dir.path().join("host-dir");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&host_dir).unwrap();
    let (r, h) = (root.display(), host_dir.display());
    // A root of its own: a tmpfs with every top-level directory of ours bound into it except /tmp and
    // /proc; the host directory's path covered by a tmpfs of the container's; /tmp a link to that path.
    let setup = format!(
        r#"R={r}
mount -t tmpfs tmpfs "$R"
for d in /*; do
  n=${{d#/}}
  case "$n" in tmp|proc) continue;; esac
  if [ -L "$d" ]; then cp -P "$d" "$R/$n"; elif [ -d "$d" ]; then mkdir "$R/$n"; mount --rbind "$d" "$R/$n"; fi
done
mkdir "$R/proc" && mount -t proc proc "$R/proc"
mount -t tmpfs -o mode=1777 tmpfs "$R{h}"
ln -s {h} "$R/tmp"
CHROOT="$R""#
    );
    let Some(jvm) = Container::start(&jdk17(), &setup, dir.path(), 10) else { return };
    let inside_tmp = PathBuf::from(format!("/proc/{}/root{h}", jvm.pid));
    assert!(
        std::fs::symlink_metadata(format!("/proc/{}/root/tmp", jvm.pid)).unwrap().file_type().is_symlink(),
        "the container's /tmp is a link"
    );
    jvm.profile(&inside_tmp);
    let leaked: Vec<_> = std::fs::read_dir(&host_dir).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(leaked.is_empty(), "written outside the container's root: {leaked:?}");
    let names: Vec<String> = std::fs::read_dir(&inside_tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("libhprof-")), "the agent's copy in the container's /tmp: {names:?}");
    jvm.finish();
}

/// A dangling link planted at `.attach_pid1` in the JVM's working directory, pointing at a host path: it is
/// not followed (the host path is not created); hprof triggers the listener through the JVM's /tmp instead,
/// which HotSpot looks at when the working directory's trigger does not stat.
#[test]
fn a_planted_attach_pid_link_is_not_followed() {
    for jdk in all_jdks() {
        a_planted_attach_pid_link_is_not_followed_on(&jdk);
    }
}

fn a_planted_attach_pid_link_is_not_followed_on(jdk: &Jdk) {
    let dir = scratch("attach-pid-link");
    let cwd = dir.path().join("cwd");
    std::fs::create_dir_all(&cwd).unwrap();
    let target = dir.path().join("created-through-the-link");
    symlink(&target, cwd.join(".attach_pid1")).unwrap();
    let Some(jvm) = Container::start(jdk, MOUNT_OWN_TMP, &cwd, 8) else { return };
    jvm.profile(&jvm.tmp());
    let v = jdk.version;
    assert!(std::fs::symlink_metadata(&target).is_err(), "JDK {v}: {} was created through the link", target.display());
    assert!(std::fs::symlink_metadata(cwd.join(".attach_pid1")).unwrap().file_type().is_symlink(), "left in place");
    jvm.finish();
}

/// `hprof attach PID what`, which must fail with one line; that line.
fn hprof_fails(pid: u32, what: &str) -> String {
    let out = Command::new(hprof_binary()).args(["attach", &pid.to_string(), what]).output().expect("hprof attach");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success(), "hprof attach {pid} {what} should have failed:\n{stdout}{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line:\n{stderr}");
    stderr.into_owned()
}

/// What hprof cannot vouch for is refused with one line, and nothing is sent or copied: a socket at
/// `.java_pid1` served by another process than the JVM (ours, private, a socket — only SO_PEERCRED tells),
/// and a container /tmp that others may write without the sticky bit (a checked copy could be swapped).
#[test]
fn what_hprof_cannot_vouch_for_is_refused() {
    let dir = scratch("attach-refused");
    let Some(jvm) = Container::start(&jdk17(), MOUNT_OWN_TMP, dir.path(), 6) else { return };
    let fake = std::os::unix::net::UnixListener::bind(jvm.tmp().join(".java_pid1")).unwrap();
    std::fs::set_permissions(jvm.tmp().join(".java_pid1"), std::fs::Permissions::from_mode(0o600)).unwrap();
    fake.set_nonblocking(true).unwrap();
    let line = hprof_fails(jvm.pid, "cpu=samples");
    assert!(line.contains(&format!("not by the JVM {}", jvm.pid)), "{line}");
    // hprof connected (that is how it asks who listens) but sent nothing.
    if let Ok((mut conn, _)) = fake.accept() {
        use std::io::Read;
        conn.set_nonblocking(false).unwrap();
        let mut got = Vec::new();
        conn.read_to_end(&mut got).unwrap();
        assert!(got.is_empty(), "sent to the impostor: {:?}", String::from_utf8_lossy(&got));
    }
    jvm.finish();

    let Some(jvm) = Container::start(&jdk17(), "mount -t tmpfs -o mode=0777 tmpfs /tmp", dir.path(), 6) else {
        return;
    };
    let line = hprof_fails(jvm.pid, "cpu=samples");
    assert!(line.contains("writable by others without the sticky bit (mode 777)"), "{line}");
    let copies: Vec<_> = std::fs::read_dir(jvm.tmp())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("libhprof"))
        .map(|e| e.file_name())
        .collect();
    assert!(copies.is_empty(), "{copies:?}");
    jvm.finish();
}
