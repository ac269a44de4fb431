//! A directory of the target JVM's file system, held open by descriptor, and the files hprof makes in it.
//!
//! A JVM in a container sees its own root, and its /tmp is writable by users of the container. Reached from
//! here as the path `/proc/PID/root/tmp`, a symlink planted for `tmp` (or inside it) would be resolved
//! against *our* root: the attaching user, often root, would write where the container's users point it.
//! So the directory is resolved inside the JVM's root as the JVM itself resolves it (`openat2` with
//! RESOLVE_IN_ROOT: absolute links and `..` stay in that root), held open, and every file in it is reached
//! relative to that descriptor, by one name, never following a link at that name.

use rustix::fd::{AsFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};
use rustix::io::Errno;
use std::fs::File;
use std::path::{Path, PathBuf};

pub struct JvmDir {
    fd: OwnedFd,
    /// Its path in the JVM's file system: what the JVM is told.
    pub inside: String,
    /// How we reach it, for messages.
    pub shown: String,
}

impl JvmDir {
    /// `inside` (an absolute path) resolved within `root` (`/`, or a JVM's `/proc/PID/root`), links and all,
    /// without leaving that root.
    pub fn open_in_root(root: &Path, inside: &str) -> Result<JvmDir, String> {
        let shown = format!("{}{inside}", root.display()).replace("//", "/");
        let fail = |e: Errno| format!("cannot open the JVM's {inside} ({shown}): {e}");
        let root_fd =
            rustix::fs::open(root, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).map_err(fail)?;
        let relative = inside.trim_start_matches('/');
        let fd = if relative.is_empty() { root_fd } else { resolve_in_root(&root_fd, relative).map_err(fail)? };
        Ok(JvmDir { fd, inside: inside.to_owned(), shown })
    }

    /// The working directory of process `pid`. /proc/PID/cwd is the kernel's own reference to it (a "magic
    /// link", not a path resolved again), so nothing on the way can be redirected.
    pub fn cwd(pid: i32) -> Result<JvmDir, String> {
        let shown = format!("/proc/{pid}/cwd");
        let fd = rustix::fs::open(&shown, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
            .map_err(|e| format!("cannot open {shown}: {e}"))?;
        let inside = std::fs::read_link(&shown).map(|p| p.display().to_string()).unwrap_or_else(|_| shown.clone());
        Ok(JvmDir { fd, inside, shown })
    }

    /// The subdirectory `name`, which must be a directory itself, not a link to one.
    pub fn subdir(&self, name: &str) -> std::io::Result<JvmDir> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::empty())?;
        Ok(JvmDir { fd, inside: format!("{}/{name}", self.inside), shown: format!("{}/{name}", self.shown) })
    }

    /// A new file `name`, for reading and writing, created here and nowhere else: O_EXCL fails on anything
    /// already at that name, a link (even a dangling one) included.
    pub fn create_new(&self, name: &str, mode: u32) -> std::io::Result<File> {
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        Ok(rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(mode))?.into())
    }

    /// The regular file `name`, for reading; a link, a FIFO or a device at that name is refused (O_NONBLOCK:
    /// opening a FIFO planted there does not wait for a writer).
    pub fn open_regular(&self, name: &str) -> std::io::Result<(File, Stat)> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::empty())?;
        let stat = rustix::fs::fstat(&fd)?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(std::io::Error::other("not a regular file"));
        }
        Ok((fd.into(), stat))
    }

    /// What is at `name`, itself (a link is not followed).
    pub fn lstat(&self, name: &str) -> std::io::Result<Stat> {
        Ok(rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)?)
    }

    /// The directory itself.
    pub fn stat(&self) -> std::io::Result<Stat> {
        Ok(rustix::fs::fstat(&self.fd)?)
    }

    /// Removes the entry `name` of this directory (a link itself, never its target).
    pub fn remove(&self, name: &str) -> std::io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?)
    }

    /// The names in this directory.
    pub fn names(&self) -> std::io::Result<Vec<String>> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let dir = rustix::fs::Dir::new(rustix::fs::openat(&self.fd, ".", flags, Mode::empty())?)?;
        let mut names = Vec::new();
        for entry in dir {
            if let Ok(name) = entry?.file_name().to_str() {
                names.push(name.to_owned());
            }
        }
        Ok(names)
    }

    /// A path to `name` in this very directory, through our descriptor (`/proc/self/fd/N/name`): for calls
    /// that take only a path, such as connect(2). Valid while `self` lives.
    pub fn path_of(&self, name: &str) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}/{name}", self.fd.as_fd().as_raw_fd()))
    }

    /// Whether no one but its owner (us or root) can replace what is in this directory: else a file we
    /// checked could be swapped before the JVM uses it. A shared directory must be sticky, as /tmp is.
    pub fn check_private_enough(&self, our_uid: u32) -> Result<(), String> {
        let s = self.stat().map_err(|e| format!("{}: {e}", self.shown))?;
        let mode = s.st_mode & 0o7777;
        if s.st_uid != our_uid && s.st_uid != 0 {
            return Err(format!("{} belongs to uid {}, not to you or root; refusing to use it", self.shown, s.st_uid));
        }
        if mode & 0o022 != 0 && mode & 0o1000 == 0 {
            return Err(format!(
                "{} is writable by others without the sticky bit (mode {mode:o}); refusing to use it",
                self.shown
            ));
        }
        Ok(())
    }
}

/// `relative` opened as a directory below `root`, as a process whose root is `root` would: openat2 with
/// RESOLVE_IN_ROOT. Kernels before 5.6 (or a seccomp filter) answer ENOSYS: then a walk one component at a
/// time that follows no link at all (stricter than the JVM, but never out of the root).
fn resolve_in_root(root: &OwnedFd, relative: &str) -> Result<OwnedFd, Errno> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let resolve = ResolveFlags::IN_ROOT | ResolveFlags::NO_MAGICLINKS;
    for _ in 0..8 {
        match rustix::fs::openat2(root, relative, flags, Mode::empty(), resolve) {
            // EAGAIN: a rename raced with the lookup; the kernel asks to try again.
            Err(Errno::AGAIN) => continue,
            Err(Errno::NOSYS) => return walk_without_links(root, relative),
            other => return other,
        }
    }
    Err(Errno::AGAIN)
}

fn walk_without_links(root: &OwnedFd, relative: &str) -> Result<OwnedFd, Errno> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let mut dir = rustix::fs::openat(root, ".", flags, Mode::empty())?;
    for part in relative.split('/').filter(|p| !p.is_empty() && *p != ".") {
        if part == ".." {
            return Err(Errno::XDEV);
        }
        dir = rustix::fs::openat(&dir, part, flags, Mode::empty())?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_stay_in_the_root() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        std::fs::create_dir_all(root.join("real")).unwrap();
        // An absolute link means the root's own /real, not ours.
        symlink("/real", root.join("tmp")).unwrap();
        symlink("../../../..", root.join("real/up")).unwrap();
        let dir = JvmDir::open_in_root(root, "/tmp").unwrap();
        dir.create_new("x", 0o600).unwrap();
        assert!(root.join("real/x").is_file());
        let up = JvmDir::open_in_root(root, "/tmp/up").unwrap();
        assert!(up.names().unwrap().contains(&"real".to_owned()), "`..` above the root is the root");
        // A link at the name itself is neither created through nor opened.
        symlink(root.join("real/target"), root.join("real/link")).unwrap();
        assert!(dir.create_new("link", 0o600).is_err());
        assert!(!root.join("real/target").exists());
        assert!(dir.open_regular("link").is_err());
        assert!(walk_without_links(&dir.fd, "up").is_err(), "the fallback follows no link");
    }
}
