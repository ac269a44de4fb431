//! A process seen through /proc: who owns it, which pid it has inside its own PID namespace, where its
//! root and temporary directory are from here (a JVM in a container has its own), and whether it is a JVM.

use super::jvm_dir::JvmDir;
use super::perfdata::PerfData;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

#[derive(Debug)]
pub struct Process {
    pub pid: i32,
    /// The pid the process has in its innermost PID namespace: what a JVM in a container calls itself,
    /// and so the number in its `.java_pid<pid>` and hsperfdata file names.
    pub ns_pid: i32,
    /// The effective uid, which HotSpot compares with the attaching peer's.
    pub uid: u32,
    /// Whether the process sees the same file system as we do: the same mount namespace and the same root
    /// directory (not a chroot). Else its paths are reached through /proc/PID/root.
    pub same_root: bool,
}

impl Process {
    /// The process `pid`, or a one-line reason why there is none.
    pub fn open(pid: i32) -> Result<Process, String> {
        if pid <= 0 {
            return Err(format!("{pid} is not a process id"));
        }
        let status =
            std::fs::read_to_string(format!("/proc/{pid}/status")).map_err(|_| format!("no such process: {pid}"))?;
        let field = |name: &str| {
            status.lines().find_map(|l| l.strip_prefix(name)).map(|rest| rest.split_whitespace().collect::<Vec<_>>())
        };
        let uid = field("Uid:")
            .and_then(|v| v.get(1).and_then(|u| u.parse().ok()))
            .ok_or(format!("/proc/{pid}/status has no Uid line"))?;
        // NSpid lists the pid in each namespace, outermost first; kernels before 4.1 lack it.
        let ns_pid = field("NSpid:").and_then(|v| v.last().and_then(|p| p.parse().ok())).unwrap_or(pid);
        let mnt = |p: &str| std::fs::read_link(format!("/proc/{p}/ns/mnt")).ok();
        let root = |p: &str| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
        let same_root = match (mnt("self"), mnt(&pid.to_string()), root("/"), root(&format!("/proc/{pid}/root"))) {
            (Some(a), Some(b), Some(r), Some(s)) => a == b && r == s,
            // Unreadable (another user's): only matters for processes we may not attach to anyway.
            _ => true,
        };
        Ok(Process { pid, ns_pid, uid, same_root })
    }

    /// Its root directory as we reach it.
    pub fn root(&self) -> PathBuf {
        if self.same_root { PathBuf::from("/") } else { PathBuf::from(format!("/proc/{}/root", self.pid)) }
    }

    /// Its temporary directory, resolved within its root (see `JvmDir`). HotSpot always uses /tmp for the
    /// attach files, whatever java.io.tmpdir says.
    pub fn tmp(&self) -> Result<JvmDir, String> {
        JvmDir::open_in_root(&self.root(), "/tmp")
    }

    /// Its command line, control characters escaped (it is shown, and anyone may have chosen it).
    pub fn cmdline(&self) -> Vec<String> {
        std::fs::read(format!("/proc/{}/cmdline", self.pid))
            .map(|b| {
                b.split(|&c| c == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| hprof_format::names::printable(&String::from_utf8_lossy(a)).into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The JVM's performance data (`hsperfdata_<user>/<pid>` in its /tmp), if it keeps one (not with
    /// `-XX:-UsePerfData`). The user name inside a container may differ from ours, so every
    /// `hsperfdata_*` directory is looked at for a file of the process's owner.
    /// (HotSpot itself refuses an `hsperfdata_*` that is a link, and so does this.)
    pub fn perf_data(&self) -> Option<Result<PerfData, String>> {
        use std::io::Read;
        let tmp = self.tmp().ok()?;
        let name = self.ns_pid.to_string();
        for dir in tmp.names().ok()? {
            let Some(dir) = dir.starts_with("hsperfdata_").then(|| tmp.subdir(&dir).ok()).flatten() else {
                continue;
            };
            let shown = format!("{}/{name}", dir.shown);
            match dir.open_regular(&name) {
                Ok((mut file, stat)) if stat.st_uid == self.uid => {
                    let mut bytes = Vec::new();
                    return Some(
                        file.read_to_end(&mut bytes)
                            .map_err(|e| format!("{shown}: {e}"))
                            .and_then(|_| PerfData::parse(&bytes).map_err(|e| format!("{shown}: {e}"))),
                    );
                }
                _ => {}
            }
        }
        None
    }

    /// Whether libjvm.so is mapped into the process (for JVMs that keep no performance data).
    pub fn maps_libjvm(&self) -> bool {
        std::fs::read_to_string(format!("/proc/{}/maps", self.pid)).is_ok_and(|m| m.contains("/libjvm.so"))
    }
}

/// The effective uid of this program.
pub fn our_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The name of a user, for messages; the number where there is no such entry.
pub fn user_name(uid: u32) -> String {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() > 2 && f[2] == uid.to_string()).then(|| f[0].to_owned())
        })
        .unwrap_or_else(|| format!("uid {uid}"))
}

/// Every process id under /proc.
pub fn all_pids() -> Vec<i32> {
    let mut pids: Vec<i32> = std::fs::read_dir("/proc")
        .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default();
    pids.sort_unstable();
    pids
}
