use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

/// How many JVMs tests may run at once, across processes. Two cores: more would make timings and
/// sample counts flaky.
pub const MAX_CONCURRENT_JVMS: usize = 2;

/// An exclusive `flock` on a file, released on drop.
pub(crate) struct FileLock(File);

impl FileLock {
    pub(crate) fn exclusive(path: &Path) -> FileLock {
        let f = OpenOptions::new().create(true).truncate(false).write(true).open(path).expect("lock file");
        // SAFETY: flock on the descriptor of a file we just opened and own.
        unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
        FileLock(f)
    }

    fn try_exclusive(path: &Path) -> Option<FileLock> {
        let f = OpenOptions::new().create(true).truncate(false).write(true).open(path).ok()?;
        // SAFETY: as in `exclusive`.
        (unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0).then_some(FileLock(f))
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // SAFETY: flock on the descriptor `self` owns, still open until the File drops after this.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Permission to run one JVM. Hold it for the JVM's lifetime.
pub struct JvmSlot(#[allow(dead_code)] FileLock);

impl JvmSlot {
    pub fn acquire() -> JvmSlot {
        Self::acquire_n(1).pop().expect("one slot")
    }

    /// Several slots at once, for a test that needs more than one JVM alive together (e.g. an agent and
    /// a front end). Taken all-or-nothing, so that two such tests cannot deadlock.
    pub fn acquire_n(n: usize) -> Vec<JvmSlot> {
        let n = n.min(MAX_CONCURRENT_JVMS);
        // HPROF_JVM_SLOTS_DIR shares the slots between checkouts (several worktrees testing on one machine).
        let dir = std::env::var_os("HPROF_JVM_SLOTS_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| crate::target_profile_dir().join("jvm-slots"));
        std::fs::create_dir_all(&dir).expect("slot dir");
        loop {
            let mut got = Vec::new();
            for i in 0..MAX_CONCURRENT_JVMS {
                if got.len() == n {
                    break;
                }
                if let Some(l) = FileLock::try_exclusive(&dir.join(format!("slot-{i}"))) {
                    got.push(JvmSlot(l));
                }
            }
            if got.len() == n {
                return got;
            }
            drop(got);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
