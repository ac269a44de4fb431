//! The agent's copy in a container's /tmp, for a JVM that cannot see our file system.
//!
//! The copy is named `libhprof-<first 16 hex digits of its SHA-256>-<16 random hex digits>.so`: no one can
//! plant a file at a name hprof will pick, and the hash part lets a later attach find the copy the JVM has
//! loaded already — HotSpot loads a library once per path, so the same path reaches the running agent,
//! where a second copy would start a second agent. A file is used only when hprof can vouch for it: ours,
//! a regular file no one else may write, in a directory where no one else may replace it, with the
//! library's exact size and hash, read back through the descriptor it was checked with.

use super::jvm_dir::JvmDir;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::io::{Read, Seek, Write};
use std::path::Path;

/// The library, read once: its bytes and their hash.
pub struct Library {
    bytes: Vec<u8>,
    hash: [u8; 32],
}

impl Library {
    pub fn read(path: &Path) -> Result<Library, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let hash = Sha256::digest(&bytes).into();
        Ok(Library { bytes, hash })
    }

    /// The beginning of every name a copy of this library has.
    fn prefix(&self) -> String {
        format!("libhprof-{}-", hex(&self.hash[..8]))
    }
}

/// The path, inside the JVM's file system, of a verified copy of `library` in `dir`: the one the JVM has
/// mapped (its name and inode among `loaded`), else another of ours, else a new one.
pub fn place(dir: &JvmDir, library: &Library, loaded: &HashSet<(String, u64)>, our_uid: u32) -> Result<String, String> {
    dir.check_private_enough(our_uid)?;
    let prefix = library.prefix();
    let mut ours: Vec<(String, u64)> = dir
        .names()
        .map_err(|e| format!("cannot list {}: {e}", dir.shown))?
        .into_iter()
        .filter(|n| is_copy_name(n, &prefix))
        .filter_map(|n| verify_existing(dir, &n, library, our_uid).map(|ino| (n, ino)))
        .collect();
    ours.sort_by_key(|(name, ino)| (!loaded.contains(&(name.clone(), *ino)), name.clone()));
    let name = match ours.into_iter().next() {
        Some((name, _)) => name,
        None => create(dir, library, &prefix)?,
    };
    Ok(format!("{}/{name}", dir.inside.trim_end_matches('/')))
}

/// `<prefix><16 hex digits>.so`.
fn is_copy_name(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix)
        .and_then(|rest| rest.strip_suffix(".so"))
        .is_some_and(|random| random.len() == 16 && random.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The inode of the copy `name` when it is ours, private and exactly the library; None otherwise.
fn verify_existing(dir: &JvmDir, name: &str, library: &Library, our_uid: u32) -> Option<u64> {
    let (mut file, stat) = dir.open_regular(name).ok()?;
    let private = stat.st_uid == our_uid && stat.st_mode & 0o022 == 0;
    (private && holds_exactly(&mut file, library)).then_some(stat.st_ino)
}

/// Whether `file` holds the library's bytes, as the kernel gives them back through this descriptor.
fn holds_exactly(file: &mut std::fs::File, library: &Library) -> bool {
    let Ok(size) = file.metadata().map(|m| m.len()) else { return false };
    if size != library.bytes.len() as u64 || file.rewind().is_err() {
        return false;
    }
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hasher.update(&buf[..n]),
            Err(_) => return false,
        }
    }
    <[u8; 32]>::from(hasher.finalize()) == library.hash
}

/// A new copy under a random name. Mode 0600: hprof attaches only to JVMs of its own effective uid (see
/// `Target::find`), so the JVM that loads the file is its owner, and dlopen needs no more than read
/// permission. No one else needs to read it, and no one else may write it.
fn create(dir: &JvmDir, library: &Library, prefix: &str) -> Result<String, String> {
    let fail = |name: &str, e: &dyn std::fmt::Display| format!("cannot copy the agent to {}/{name}: {e}", dir.shown);
    for _ in 0..8 {
        let name = format!("{prefix}{}.so", random_hex()?);
        let mut file = match dir.create_new(&name, 0o600) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(fail(&name, &e)),
        };
        let written = file.write_all(&library.bytes).and_then(|()| file.sync_all());
        if let Err(e) = written {
            let _ = dir.remove(&name);
            return Err(fail(&name, &e));
        }
        if !holds_exactly(&mut file, library) {
            let _ = dir.remove(&name);
            return Err(fail(&name, &"what was written is not what reads back"));
        }
        return Ok(name);
    }
    Err(format!("cannot create a copy of the agent in {}: every random name was taken", dir.shown))
}

pub fn random_hex() -> Result<String, String> {
    let mut bytes = [0u8; 8];
    rustix::rand::getrandom(&mut bytes, rustix::rand::GetRandomFlags::empty())
        .map_err(|e| format!("no random numbers from the kernel: {e}"))?;
    Ok(hex(&bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The file names and inodes of the agent copies process `pid` has mapped (`/proc/PID/maps`: address,
/// perms, offset, device, inode, path).
pub fn mapped_copies(pid: i32) -> HashSet<(String, u64)> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    maps.lines()
        .filter_map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            let name = fields.get(5)?.rsplit('/').next()?;
            name.starts_with("libhprof-").then(|| Some((name.to_owned(), fields[4].parse().ok()?)))?
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_names() {
        let p = "libhprof-0123456789abcdef-";
        assert!(is_copy_name("libhprof-0123456789abcdef-00112233aabbccdd.so", p));
        assert!(!is_copy_name("libhprof-0123456789abcdef-0011.so", p));
        assert!(!is_copy_name("libhprof-1234-5678.so", p));
        assert!(!is_copy_name("libhprof-0123456789abcdef-00112233aabbccdd.so.x", p));
    }
}
