use super::*;
use std::os::unix::fs::{MetadataExt, symlink};

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o7777
}

fn victim(dir: &Path) -> PathBuf {
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::set_permissions(&victim, Permissions::from_mode(0o644)).unwrap();
    victim
}

fn assert_untouched(victim: &Path) {
    assert_eq!(std::fs::read_to_string(victim).unwrap(), "precious", "the victim's content");
    assert_eq!(mode(victim), 0o644, "the victim's mode");
}

fn write(created: &mut Created, text: &str) {
    created.file.write_all(text.as_bytes()).unwrap();
}

#[test]
fn a_new_file_is_0600_under_any_umask() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: umask only swaps the process's mask; every file here is created 0600 whatever it is.
    let old = unsafe { libc::umask(0) };
    let created = create(&dir.path().join("out"), IfExists::Replace);
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    let created = created.unwrap();
    assert_eq!(created.kind, Kind::New);
    assert_eq!(mode(&dir.path().join("out")), 0o600);
}

#[test]
fn replace_writes_beside_a_symlink_and_renames_over_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let out = dir.path().join("out");
    symlink(&victim, &out).unwrap();
    let mut created = create(&out, IfExists::Replace).unwrap();
    assert_eq!(created.kind, Kind::Replacing);
    write(&mut created, "profile");
    let temp = created.finish.pending().unwrap().to_owned();
    assert_eq!(temp.parent(), Some(dir.path()), "beside the path");
    assert_eq!(mode(&temp), 0o600);
    assert!(std::fs::symlink_metadata(&out).unwrap().is_symlink(), "the link stays until the commit");
    created.finish.commit().unwrap();
    assert!(!temp.exists());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "profile");
    assert!(std::fs::symlink_metadata(&out).unwrap().is_file(), "the link itself replaced");
    assert_eq!(mode(&out), 0o600);
    assert_untouched(&victim);
    created.finish.commit().unwrap();
}

#[test]
fn a_dangling_symlinks_target_is_never_created() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    let out = dir.path().join("out");
    symlink(&target, &out).unwrap();
    let mut created = create(&out, IfExists::Replace).unwrap();
    write(&mut created, "profile");
    created.finish.commit().unwrap();
    assert!(!target.exists(), "the dangling link's target created");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "profile");

    let named = |n: u32| dir.path().join(format!("kept.{n}"));
    let kept = dir.path().join("kept");
    symlink(&target, &kept).unwrap();
    let created = create(&kept, IfExists::PickName(&named)).unwrap();
    assert_eq!(created.path, named(1));
    assert!(!target.exists(), "the dangling link's target created");
    assert!(std::fs::symlink_metadata(&kept).unwrap().is_symlink(), "the link kept");
}

#[test]
fn pick_name_keeps_what_exists_and_skips_names_taken() {
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let out = dir.path().join("out");
    symlink(&victim, &out).unwrap();
    let named = |n: u32| dir.path().join(format!("out.{n}"));
    symlink(&victim, named(1)).unwrap();
    let mut created = create(&out, IfExists::PickName(&named)).unwrap();
    assert_eq!(created.path, named(2));
    assert_eq!(created.kind, Kind::New);
    write(&mut created, "profile");
    assert_eq!(std::fs::read_to_string(named(2)).unwrap(), "profile");
    assert_eq!(mode(&named(2)), 0o600);
    assert_untouched(&victim);
}

#[test]
fn a_replacement_dropped_before_its_commit_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let mut created = create(&victim, IfExists::Replace).unwrap();
    write(&mut created, "half");
    let temp = created.finish.pending().unwrap().to_owned();
    drop(created);
    assert!(!temp.exists(), "the fresh file removed");
    assert_untouched(&victim);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn devices_pipes_and_our_descriptors_are_written_as_they_are() {
    assert_eq!(create(Path::new("/dev/null"), IfExists::Replace).unwrap().kind, Kind::Stream);
    assert_eq!(create(Path::new("/dev/stderr"), IfExists::Replace).unwrap().kind, Kind::Stream);
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // A reader, so that opening the FIFO for writing does not wait.
    let reader = OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&fifo).unwrap();
    let mut created = create(&fifo, IfExists::Replace).unwrap();
    assert_eq!(created.kind, Kind::Stream);
    write(&mut created, "x");
    drop(reader);
}

#[test]
fn a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = create(dir.path(), IfExists::Replace).err().unwrap();
    assert!(e.to_string().contains("is a directory"), "{e}");
}

#[test]
fn write_file_replaces_only_once_written() {
    let dir = tempfile::tempdir().unwrap();
    let victim = victim(dir.path());
    let out = dir.path().join("out");
    symlink(&victim, &out).unwrap();
    let failed = write_file(&out, |w| {
        w.write_all(b"half")?;
        Err(io::Error::other("no more"))
    });
    assert!(failed.is_err());
    assert!(std::fs::symlink_metadata(&out).unwrap().is_symlink(), "nothing replaced by a failed write");
    write_file(&out, |w| w.write_all(b"whole")).unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "whole");
    assert_eq!(mode(&out), 0o600);
    assert_untouched(&victim);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "no temporary file left");
}

#[test]
fn unnamed_files_are_0600_and_nameless() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: umask only swaps the process's mask; every file here is created 0600 whatever it is.
    let old = unsafe { libc::umask(0) };
    let near = unnamed(Some(&dir.path().join("profile")));
    let anywhere = unnamed(None);
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    assert_eq!(near.unwrap().metadata().unwrap().mode() & 0o7777, 0o600);
    assert_eq!(anywhere.unwrap().metadata().unwrap().mode() & 0o7777, 0o600);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no name left in the directory");
}
