//! A binary dump written straight into the profile's file: the spool's thread writes the segments where
//! they belong, and no copy of hundreds of megabytes follows the walk (on the 2-core benchmark machine the
//! copy took a fifth to a quarter of the dump's time).
//!
//! The profile's writer lends its file for the time of the dump ([`crate::output::Output::lend_file`]), and what is written to
//! the profile meanwhile — by other threads, or by the dump itself after its walk (names of classes met
//! late, traces of threads whose stacks changed) — waits in memory. Those records belong before the
//! segments, which may refer to them: when there are any, a dump written in place is moved behind them
//! as the file is given back (two copies instead of the spool's one). So a dump goes in place only while
//! the previous one had nothing else to wait for; otherwise it goes to a spool file, which is copied in
//! behind them. Either way the file holds the same bytes.

use super::spool::{self, Spool};
use crate::output::{LentFile, Output, PlaceDump, copy_range};
use std::io;

/// The profile's file, lent to one dump.
pub struct LentProfile {
    lent: LentFile,
    /// Where a dump is spooled or moved (next to the profile).
    near: Option<String>,
}

/// How the dump given back was written.
pub enum Dumped {
    /// Into the file, from where it starts to the file's offset.
    InPlace,
    /// Into a spool, to be copied in.
    Spooled(Spool),
    /// Not completely: what was written in place is cut off.
    Failed,
}

impl LentProfile {
    /// Lends the profile's file once everything buffered is in it; `None` when the profile is no file.
    pub fn lend(output: &Output, near: Option<String>) -> Option<LentProfile> {
        output.lend_file().map(|lent| LentProfile { lent, near })
    }

    /// A spool that writes the dump into the file, from where it starts (again, after an abandoned walk).
    pub fn spool_in_place(&mut self) -> io::Result<Spool> {
        self.lent.cut(&[])?;
        Ok(Spool::onto(self.lent.file().try_clone()?))
    }

    /// A spool file of its own, next to the profile.
    pub fn spool_aside(&self) -> io::Result<Spool> {
        Spool::open(self.near.as_deref())
    }

    /// Gives the file back to the profile's writer, the dump behind what was written meanwhile (a failed
    /// one cut off). Returns how many bytes were written meanwhile; `None` if that failed.
    pub fn give_back(self, output: &Output, dumped: Dumped) -> Option<usize> {
        output.give_back_file(self.lent, Placed { dumped, near: self.near })
    }
}

/// A dump as it is given back, and where to put it aside while it is moved.
struct Placed {
    dumped: Dumped,
    near: Option<String>,
}

impl PlaceDump for Placed {
    fn place(self, lent: &mut LentFile, held: &[u8]) -> io::Result<()> {
        match self.dumped {
            Dumped::InPlace => put_before(lent, held, self.near.as_deref()),
            Dumped::Spooled(spool) => copy_behind(lent, held, spool),
            Dumped::Failed => lent.cut(held),
        }
    }
}

/// Moves the dump (from its start to the file's offset) behind `held`.
fn put_before(lent: &mut LentFile, held: &[u8], near: Option<&str>) -> io::Result<()> {
    if held.is_empty() {
        return Ok(());
    }
    let start = lent.start();
    let end = io::Seek::stream_position(lent.file())?;
    let mut moved = spool::temp_file(near)?;
    copy_range(lent.file(), start, end - start, &mut moved)?;
    lent.cut(held)?;
    copy_range(&moved, 0, end - start, lent.file())
}

/// Writes `held`, then the spooled dump.
fn copy_behind(lent: &mut LentFile, held: &[u8], spool: Spool) -> io::Result<()> {
    lent.cut(held)?;
    let len = spool.written();
    copy_range(&spool.into_file()?, 0, len, lent.file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::{Read, Write};

    fn contents(dir: &std::path::Path) -> Vec<u8> {
        let mut bytes = Vec::new();
        File::open(dir.join("profile.hprof")).unwrap().read_to_end(&mut bytes).unwrap();
        bytes
    }

    #[derive(Clone, Copy, PartialEq)]
    enum How {
        InPlace,
        Aside,
        Failing,
    }

    /// Writes a dump through the lent file, places it behind `held` (what the profile's writer held
    /// meanwhile) and writes "END" where the writer goes on.
    fn dump(file: &mut File, held: &[u8], how: How) {
        let mut lent = LentProfile { lent: LentFile::new(file.try_clone().unwrap()).unwrap(), near: None };
        let mut spool = if how == How::Aside { lent.spool_aside() } else { lent.spool_in_place() }.unwrap();
        spool.write_all(&b"DUMP".repeat(1 << 18)).unwrap();
        let dumped = match how {
            How::Aside => Dumped::Spooled(spool),
            How::InPlace => {
                spool.into_file().unwrap();
                Dumped::InPlace
            }
            How::Failing => {
                drop(spool);
                Dumped::Failed
            }
        };
        Placed { dumped, near: None }.place(&mut lent.lent, held).unwrap();
        file.write_all(b"END").unwrap();
    }

    #[test]
    fn a_dump_lands_behind_what_was_written_meanwhile_however_it_was_written() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let mut file = File::options().read(true).write(true).create_new(true).open(dir.join("profile.hprof")).unwrap();
        file.write_all(b"JAVA PROFILE 1.0.2\0").unwrap();
        let header = contents(dir).len();
        let mut expected = Vec::new();
        for (held, how) in [
            (&b""[..], How::InPlace),
            (b"meanwhile", How::InPlace),
            (b"", How::Aside),
            (b"aside", How::Aside),
            (b"failed", How::Failing),
        ] {
            dump(&mut file, held, how);
            expected.extend_from_slice(held);
            if how != How::Failing {
                expected.extend_from_slice(&b"DUMP".repeat(1 << 18));
            }
            expected.extend_from_slice(b"END");
            assert!(contents(dir)[header..] == expected[..], "{}", String::from_utf8_lossy(held));
        }
    }
}
