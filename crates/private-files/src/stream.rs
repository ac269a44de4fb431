//! Outputs that are no file to create: our own descriptors by name (`/dev/stdout`), and devices or pipes
//! that only we or root can have put at the path (`/dev/null`, a FIFO of ours).

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The path as a stream to write as it is, or `None` when it is to be created (or replaced).
pub fn open(path: &Path) -> io::Result<Option<File>> {
    if let Some(fd) = own_descriptor(path) {
        return duplicate(fd).map(Some);
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(io::Error::new(io::ErrorKind::IsADirectory, format!("{} is a directory", path.display())));
    }
    // A file or a symlink is replaced; a device or pipe someone else made (a FIFO planted to read the
    // profile) too, which the rename refuses where the directory does not let us remove it.
    if kind.is_file() || kind.is_symlink() || !ours(&meta) {
        return Ok(None);
    }
    // No O_CREAT, no O_TRUNC: a device or pipe is written as it is. Not O_RDWR: the JVM would be a reader of
    // its own pipe, and once the real reader is gone its writes would wait for ever instead of failing.
    let file =
        OpenOptions::new().write(true).custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY).open(path)?;
    // Swapped between the two looks: refuse rather than write into whatever it is now.
    let now = file.metadata()?;
    if now.file_type().is_file() || now.file_type().is_dir() || !ours(&now) || now.ino() != meta.ino() {
        return Err(io::Error::other(format!("{} changed while it was opened", path.display())));
    }
    Ok(Some(file))
}

/// Made by us or by root: nothing another user planted.
fn ours(meta: &Metadata) -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    meta.uid() == me || meta.uid() == 0
}

/// `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`: names of our own open descriptors, which
/// are taken as they are instead of reopening what the name's links lead to.
fn own_descriptor(path: &Path) -> Option<RawFd> {
    let s = path.to_str()?;
    match s {
        "/dev/stdout" => Some(1),
        "/dev/stderr" => Some(2),
        _ => s.strip_prefix("/dev/fd/").or_else(|| s.strip_prefix("/proc/self/fd/"))?.parse().ok(),
    }
}

fn duplicate(fd: RawFd) -> io::Result<File> {
    // SAFETY: F_DUPFD_CLOEXEC only reads `fd` (an invalid one fails with EBADF) and returns a new descriptor.
    let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
    if new < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` is a descriptor we just made and own alone.
    Ok(unsafe { File::from_raw_fd(new) })
}
