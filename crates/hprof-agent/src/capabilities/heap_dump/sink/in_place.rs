//! A binary dump written straight into the profile's file: the spool's thread writes the segments where
//! they belong, and no copy of hundreds of megabytes follows the walk (on the 2-core benchmark machine the
//! copy took a fifth to a quarter of the dump's time).
//!
//! The profile's writer lends its file for the time of the dump ([`crate::output::Sink::lend`]), and what is written to
//! the profile meanwhile — by other threads, or by the dump itself after its walk (names of classes met
//! late, traces of threads whose stacks changed) — waits in memory. Those records belong before the
//! segments, which may refer to them: when there are any, a dump written in place is moved behind them
//! as the file is given back (two copies instead of the spool's one). So a dump goes in place only while
//! the previous one had nothing else to wait for; otherwise it goes to a spool file, which is copied in
//! behind them. Either way the file holds the same bytes.

use super::spool::{self, Spool};
use crate::output::BinaryEncoder;
use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};

/// The profile's file, lent to one dump.
pub struct LentProfile {
    file: File,
    /// Where the dump starts.
    start: u64,
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
    pub fn lend(enc: &mut BinaryEncoder, near: Option<String>) -> io::Result<Option<LentProfile>> {
        let out = enc.writer().get_mut();
        out.flush()?;
        let Some(mut file) = out.get_mut().lend() else { return Ok(None) };
        match file.stream_position() {
            Ok(start) => Ok(Some(LentProfile { file, start, near })),
            Err(e) => {
                out.get_mut().give_back(file);
                Err(e)
            }
        }
    }

    /// A spool that writes the dump into the file, from where it starts (again, after an abandoned walk).
    pub fn spool_in_place(&mut self) -> io::Result<Spool> {
        self.file.set_len(self.start)?;
        self.file.seek(SeekFrom::Start(self.start))?;
        Ok(Spool::onto(self.file.try_clone()?))
    }

    /// A spool file of its own, next to the profile.
    pub fn spool_aside(&self) -> io::Result<Spool> {
        Spool::open(self.near.as_deref())
    }

    /// Gives the file back to the profile's writer, the dump behind what was written meanwhile (a failed
    /// one cut off). Returns how many bytes were written meanwhile.
    pub fn give_back(mut self, enc: &mut BinaryEncoder, dumped: Dumped) -> io::Result<usize> {
        let out = enc.writer().get_mut();
        // Anything still buffered was written meanwhile too.
        let flushed = out.flush();
        let held = out.get_mut().take_held();
        let placed = match dumped {
            Dumped::InPlace => self.put_before(&held),
            Dumped::Spooled(spool) => self.copy_behind(&held, spool),
            Dumped::Failed => self.cut(&held),
        };
        if let Err(e) = placed {
            // Whatever the file holds now, it is the profile's again.
            let _ = self.cut(&held);
            out.get_mut().give_back(self.file);
            return Err(e);
        }
        out.get_mut().give_back(self.file);
        flushed.map(|()| held.len())
    }

    /// Moves the dump (from `start` to the file's offset) behind `held`.
    fn put_before(&mut self, held: &[u8]) -> io::Result<()> {
        if held.is_empty() {
            return Ok(());
        }
        let end = self.file.stream_position()?;
        let mut moved = spool::temp_file(self.near.as_deref())?;
        spool::copy_range(&self.file, self.start, end - self.start, &mut moved)?;
        self.cut(held)?;
        spool::copy_range(&moved, 0, end - self.start, &mut self.file)
    }

    /// Writes `held`, then the spooled dump.
    fn copy_behind(&mut self, held: &[u8], spool: Spool) -> io::Result<()> {
        self.cut(held)?;
        let len = spool.written();
        spool::copy_range(&spool.into_file()?, 0, len, &mut self.file)
    }

    /// Drops what was written from `start` on, leaving `held` there.
    fn cut(&mut self, held: &[u8]) -> io::Result<()> {
        self.file.set_len(self.start)?;
        self.file.seek(SeekFrom::Start(self.start))?;
        self.file.write_all(held)
    }
}

/// Bytes written to the profile since its file was lent (0 if it is not).
pub fn held(enc: &mut BinaryEncoder) -> io::Result<usize> {
    let out = enc.writer().get_mut();
    out.flush()?;
    Ok(out.get_mut().held_len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Sink;
    use std::io::{BufWriter, Read};

    fn encoder(dir: &std::path::Path) -> BinaryEncoder {
        let path = dir.join("profile.hprof");
        let file = File::options().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        BinaryEncoder::new(BufWriter::new(Sink::file(file, path)), "JAVA PROFILE 1.0.2", 0).unwrap()
    }

    fn contents(enc: &mut BinaryEncoder, dir: &std::path::Path) -> Vec<u8> {
        enc.writer().get_mut().flush().unwrap();
        let mut bytes = Vec::new();
        File::open(dir.join("profile.hprof")).unwrap().read_to_end(&mut bytes).unwrap();
        bytes
    }

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[derive(Clone, Copy, PartialEq)]
    enum How {
        InPlace,
        Aside,
        Failing,
    }

    /// Writes a dump through a lent file, `held` meanwhile through the profile's writer, gives the file
    /// back and writes "END".
    fn dump(enc: &mut BinaryEncoder, held: &[u8], how: How) {
        let mut lent = LentProfile::lend(enc, None).unwrap().unwrap();
        let mut spool = if how == How::Aside { lent.spool_aside() } else { lent.spool_in_place() }.unwrap();
        spool.write_all(&b"DUMP".repeat(1 << 18)).unwrap();
        enc.writer().get_mut().write_all(held).unwrap();
        assert_eq!(super::held(enc).unwrap(), held.len());
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
        assert_eq!(lent.give_back(enc, dumped).unwrap(), held.len());
        enc.writer().get_mut().write_all(b"END").unwrap();
    }

    #[test]
    fn a_dump_lands_behind_what_was_written_meanwhile_however_it_was_written() {
        let tmp = dir();
        let dir = tmp.path();
        let mut enc = encoder(dir);
        let header = contents(&mut enc, dir).len();
        let mut expected = Vec::new();
        for (held, how) in [
            (&b""[..], How::InPlace),
            (b"meanwhile", How::InPlace),
            (b"", How::Aside),
            (b"aside", How::Aside),
            (b"failed", How::Failing),
        ] {
            dump(&mut enc, held, how);
            expected.extend_from_slice(held);
            if how != How::Failing {
                expected.extend_from_slice(&b"DUMP".repeat(1 << 18));
            }
            expected.extend_from_slice(b"END");
            assert!(contents(&mut enc, dir)[header..] == expected[..], "{}", String::from_utf8_lossy(held));
        }
    }
}
