//! Output files that only their owner can read, created without following a symlink someone planted at
//! their path. Profiles and heap dumps hold whatever the program held (passwords, tokens, customer data),
//! and they are often written where other users can create files (`/tmp`, a shared volume).
//!
//! - A file is created 0600 whatever the umask (`fchmod` after the `open`), with `O_NOFOLLOW|O_CLOEXEC`,
//!   and a new one with `O_CREAT|O_EXCL`: nothing at the path is ever opened and truncated.
//! - An existing path is either replaced ([`IfExists::Replace`]): a fresh, randomly named file is written
//!   beside it and renamed over it by [`Finish::commit`] (a symlink there is replaced, never followed); or
//!   kept ([`IfExists::PickName`]): the first free name of a series is taken, again with `O_EXCL`.
//! - A device or pipe of ours or root's at the path (`/dev/null`, a FIFO we made) is written as it is;
//!   `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` and `/proc/self/fd/N` are our own descriptors, duplicated.
//!
//! Temporary files come from the `tempfile` crate: random names, `O_EXCL`, 0600.

mod stream;

use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use tempfile::TempPath;

/// The mode of every file created here.
pub const MODE: u32 = 0o600;

/// What to do when something already exists at the path.
pub enum IfExists<'a> {
    /// Write a fresh file beside it and rename it over the path at [`Finish::commit`].
    Replace,
    /// Keep it and take the first name of `names(1)`, `names(2)`, … up to [`MAX_NAMES`] that is free.
    PickName(&'a dyn Fn(u32) -> PathBuf),
}

/// How many names [`IfExists::PickName`] tries before it gives up.
pub const MAX_NAMES: u32 = 100;

/// How the file was opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Created at its path.
    New,
    /// A fresh file beside the path, renamed over it at [`Finish::commit`].
    Replacing,
    /// A device, a pipe or one of our descriptors, written as it is: no seeking, nothing to commit.
    Stream,
}

/// An opened output.
pub struct Created {
    pub file: File,
    /// Where the bytes end up (after [`Finish::commit`], for [`Kind::Replacing`]).
    pub path: PathBuf,
    pub kind: Kind,
    /// The rename still to do, if any.
    pub finish: Finish,
}

/// The step left once everything is written: renaming the fresh file over the path. Dropped without
/// [`Finish::commit`], it removes the fresh file (a write that failed leaves the old file as it was).
#[derive(Default)]
pub struct Finish(Option<(TempPath, PathBuf)>);

impl Finish {
    /// Renames the fresh file over the path (the directory entry itself: a symlink there is replaced).
    /// Does nothing the second time, or when there was nothing to rename.
    pub fn commit(&mut self) -> io::Result<()> {
        let Some((temp, target)) = self.0.take() else { return Ok(()) };
        temp.persist(&target).map_err(|e| {
            let why = format!("cannot rename {} over {}: {}", e.path.display(), target.display(), e.error);
            // Put back: the fresh file is removed when this is dropped.
            self.0 = Some((e.path, target));
            io::Error::new(e.error.kind(), why)
        })
    }

    /// The fresh file's name while it waits for its rename.
    pub fn pending(&self) -> Option<&Path> {
        self.0.as_ref().map(|(temp, _)| &**temp)
    }
}

/// Opens `path` for writing as the module's rules say (see the crate's documentation).
pub fn create(path: &Path, if_exists: IfExists) -> io::Result<Created> {
    if let Some(file) = stream::open(path)? {
        return Ok(Created { file, path: path.to_owned(), kind: Kind::Stream, finish: Finish::default() });
    }
    match create_new(path) {
        Ok(file) => Ok(Created { file, path: path.to_owned(), kind: Kind::New, finish: Finish::default() }),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => match if_exists {
            IfExists::Replace => replace(path),
            IfExists::PickName(names) => pick_name(path, names),
        },
        Err(e) => Err(e),
    }
}

/// Writes a whole file with `write` ([`IfExists::Replace`]): an existing one is replaced only once
/// everything is written.
pub fn write_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let Created { file, mut finish, .. } = create(path, IfExists::Replace)?;
    let mut out = BufWriter::new(file);
    write(&mut out)?;
    out.flush()?;
    finish.commit()
}

/// Creates `path`, which must not exist (a symlink there, dangling or not, exists): 0600, read and write.
pub fn create_new(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)?;
    private(file)
}

/// A temporary file without a name (gone with its last descriptor), 0600: in the directory of `near`
/// when there is one and it can be made there (the output's file system, where it is copied in without
/// leaving the kernel), else in the temporary directory.
pub fn unnamed(near: Option<&Path>) -> io::Result<File> {
    let dir = near.map(|p| p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")));
    let file = match dir.map(tempfile::tempfile_in) {
        Some(Ok(file)) => file,
        _ => tempfile::tempfile()?,
    };
    // O_TMPFILE takes its mode from the umask.
    private(file)
}

/// The mode asked for at `open` is cut by the umask (and 0600 is what we want whatever it is): set it.
fn private(file: File) -> io::Result<File> {
    file.set_permissions(Permissions::from_mode(MODE))?;
    Ok(file)
}

/// A fresh file beside `path`, named `<name>.<random>.tmp`, to be renamed over it.
fn replace(path: &Path) -> io::Result<Created> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.is_dir() {
            return Err(io::Error::new(io::ErrorKind::IsADirectory, format!("{} is a directory", path.display())));
        }
        renamable_over(path, &meta, dir)?;
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!("{name}.");
    let temp = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(".tmp")
        .permissions(Permissions::from_mode(MODE))
        .tempfile_in(dir)?;
    let (file, temp) = temp.into_parts();
    let file = private(file)?;
    Ok(Created { file, path: path.to_owned(), kind: Kind::Replacing, finish: Finish(Some((temp, path.to_owned()))) })
}

/// In a sticky directory (`/tmp`) only root, the directory's owner and the entry's own owner may rename
/// over an entry: refused now, with a reason, rather than by the rename once the profile is written.
fn renamable_over(path: &Path, meta: &std::fs::Metadata, dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let Ok(dir_meta) = std::fs::metadata(dir) else { return Ok(()) };
    let sticky = dir_meta.mode() & libc::S_ISVTX != 0;
    if me == 0 || !sticky || meta.uid() == me || dir_meta.uid() == me {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} belongs to another user (uid {}) in a sticky directory, where it cannot be replaced; \
             remove it or choose another name",
            path.display(),
            meta.uid()
        ),
    ))
}

fn pick_name(path: &Path, names: &dyn Fn(u32) -> PathBuf) -> io::Result<Created> {
    for n in 1..=MAX_NAMES {
        let candidate = names(n);
        match create_new(&candidate) {
            Ok(file) => return Ok(Created { file, path: candidate, kind: Kind::New, finish: Finish::default() }),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{} exists, and so do the {MAX_NAMES} names tried instead ({} …)", path.display(), names(1).display()),
    ))
}

#[cfg(test)]
mod tests;
