//! What a heap dump writes into the profile besides its segments, as typed calls: the STRING records its
//! segments name, the empty trace its objects name, the profile's file lent to a dump written in place
//! and taken back, the spooled segments copied in, HEAP DUMP END; the text dump between its BEGIN and END
//! lines. The dump itself never holds the profile's writer.

use super::{Encoder, Output};
use hprof_format::serial_base;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;

/// The profile's file, lent to one heap dump written into it from `start` on ([`Output::lend_file`]);
/// whatever else is written to the profile meanwhile waits in memory.
pub struct LentFile {
    file: File,
    start: u64,
}

impl LentFile {
    /// `file`, lent from its offset on.
    pub fn new(mut file: File) -> io::Result<LentFile> {
        let start = file.stream_position()?;
        Ok(LentFile { file, start })
    }

    pub fn file(&mut self) -> &mut File {
        &mut self.file
    }

    /// Where the dump starts.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Drops what was written from `start` on, leaving `held` there.
    pub fn cut(&mut self, held: &[u8]) -> io::Result<()> {
        self.file.set_len(self.start)?;
        self.file.seek(SeekFrom::Start(self.start))?;
        self.file.write_all(held)
    }
}

/// How a dump puts itself into the lent file as the file is given back: behind `held`, what was written
/// to the profile meanwhile (which its segments may refer to).
pub trait PlaceDump {
    fn place(self, lent: &mut LentFile, held: &[u8]) -> io::Result<()>;
}

impl Output {
    /// Runs `f` on the binary encoder; ignored in text output.
    fn binary(&self, f: impl FnOnce(&mut super::BinaryEncoder) -> io::Result<()>) {
        self.with_state(|s| match &mut s.encoder {
            Encoder::Text(_) => Ok(()),
            Encoder::Binary(b) => f(b),
        })
    }

    /// The STRING ids of `names`, each record written the first time; `None` if the profile is closed or
    /// text.
    pub fn string_ids<'n>(&self, names: impl IntoIterator<Item = &'n str>) -> Option<Vec<u64>> {
        let mut ids = None;
        self.binary(|b| {
            ids = Some(names.into_iter().map(|n| b.string_id(n)).collect::<io::Result<Vec<u64>>>()?);
            Ok(())
        });
        ids
    }

    /// The empty STACK TRACE 300000 that a dump's objects name ("no trace"), once per profile.
    pub fn empty_trace(&self) {
        self.with_state(|s| match &mut s.encoder {
            Encoder::Binary(b) if !s.empty_trace_written => {
                s.empty_trace_written = true;
                b.writer().trace(serial_base::TRACE, 0, &[])
            }
            _ => Ok(()),
        })
    }

    /// Lends the profile's file once everything buffered is in it; `None` when the profile is no regular
    /// file (a socket, a pipe), is text, or is closed.
    pub fn lend_file(&self) -> Option<LentFile> {
        let mut lent = None;
        self.binary(|b| {
            let out = b.writer().get_mut();
            out.flush()?;
            let Some(mut file) = out.get_mut().lend() else { return Ok(()) };
            match file.stream_position() {
                Ok(start) => {
                    lent = Some(LentFile { file, start });
                    Ok(())
                }
                Err(e) => {
                    out.get_mut().give_back(file);
                    Err(e)
                }
            }
        });
        lent
    }

    /// Bytes written to the profile since its file was lent (0 if it is not); `None` if it is closed.
    pub fn held_since_lent(&self) -> Option<usize> {
        let mut held = None;
        self.binary(|b| {
            let out = b.writer().get_mut();
            out.flush()?;
            held = Some(out.get_mut().held_len());
            Ok(())
        });
        held
    }

    /// Gives the lent file back, the dump placed by `dumped` behind what was written meanwhile (or, if
    /// placing fails, cut off). Returns how many bytes were written meanwhile; `None` if that failed.
    pub fn give_back_file(&self, mut lent: LentFile, dumped: impl PlaceDump) -> Option<usize> {
        let mut given = None;
        self.binary(|b| {
            let out = b.writer().get_mut();
            // Anything still buffered was written meanwhile too.
            let flushed = out.flush();
            let held = out.get_mut().take_held();
            let placed = dumped.place(&mut lent, &held);
            if placed.is_err() {
                // Whatever the file holds now, it is the profile's again.
                let _ = lent.cut(&held);
            }
            out.get_mut().give_back(lent.file);
            placed?;
            flushed?;
            given = Some(held.len());
            Ok(())
        });
        given
    }

    /// HEAP DUMP END; false if the profile is closed.
    pub fn heap_dump_end(&self) -> bool {
        let mut written = false;
        self.binary(|b| {
            b.writer().heap_dump_end()?;
            written = true;
            Ok(())
        });
        written
    }

    /// The first `len` bytes of `records` (a spooled dump's segments) copied into the profile, then HEAP
    /// DUMP END: inside the kernel (copy_file_range) when the profile is a file, which spares reading
    /// hundreds of megabytes back through this process, else through a buffer. False if that failed.
    pub fn spooled_heap_dump(&self, records: &File, len: u64) -> bool {
        let mut written = false;
        self.binary(|b| {
            let out = b.writer().get_mut();
            out.flush()?;
            match out.get_mut() {
                super::Sink::File { file, .. } => copy_range(records, 0, len, file)?,
                _ => io::copy(&mut ReadAt { file: records, at: 0, end: len }, out).map(drop)?,
            }
            b.writer().heap_dump_end()?;
            written = true;
            Ok(())
        });
        written
    }

    /// The text dump: HEAP DUMP BEGIN with its totals, the first `len` bytes of `records` (its spooled
    /// lines), HEAP DUMP END. Ignored in binary output.
    pub fn text_heap_dump(&self, objects: u64, bytes: u64, records: &File, len: u64) {
        let date = hprof_format::time::ctime(hprof_format::time::now_millis());
        self.text_only(|w| {
            hprof_format::text::heap::write_heap_dump_begin(w, objects, bytes, &date)?;
            io::copy(&mut ReadAt { file: records, at: 0, end: len }, w)?;
            hprof_format::text::heap::write_heap_dump_end(w)
        })
    }
}

/// A file's bytes from `at` to `end`, read by offset (the file's own offset untouched).
struct ReadAt<'a> {
    file: &'a File,
    at: u64,
    end: u64,
}

impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let k = ((self.end - self.at) as usize).min(buf.len());
        if k == 0 {
            return Ok(0);
        }
        let n = self.file.read_at(&mut buf[..k], self.at)?;
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the spool file is shorter than written"));
        }
        self.at += n as u64;
        Ok(n)
    }
}

/// Copies `len` bytes of `from` at `offset` to `to` at its offset (which advances): inside the kernel where
/// it can, through a buffer where it cannot.
pub fn copy_range(from: &File, offset: u64, len: u64, to: &mut File) -> io::Result<()> {
    let end = offset + len;
    let mut at = offset;
    while at < end {
        let left = (end - at).min(1 << 30) as usize;
        let n = rustix::fs::copy_file_range(from, Some(&mut at), &*to, None, left).unwrap_or(0);
        if n == 0 {
            // Not supported here (or failed): the rest goes the ordinary way.
            break;
        }
    }
    let mut buf = vec![0u8; (end - at).min(1 << 20) as usize];
    while at < end {
        let k = ((end - at) as usize).min(buf.len());
        from.read_exact_at(&mut buf[..k], at)?;
        to.write_all(&buf[..k])?;
        at += k as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::Context;

    /// A dump of the given bytes, written behind what the profile held meanwhile.
    struct Behind(&'static [u8]);

    impl PlaceDump for Behind {
        fn place(self, lent: &mut LentFile, held: &[u8]) -> io::Result<()> {
            lent.cut(held)?;
            lent.file().write_all(self.0)
        }
    }

    /// `before`, then HEAP DUMP END (tag 0x2c, any time, no body) at the end of `bytes`.
    fn ends_with_dump_end(bytes: &[u8], before: &[u8]) -> bool {
        let Some(rest) = bytes.len().checked_sub(9) else { return false };
        bytes[..rest].ends_with(before) && bytes[rest] == 0x2c && bytes[rest + 5..] == [0, 0, 0, 0]
    }

    fn count(bytes: &[u8], what: &[u8]) -> usize {
        bytes.windows(what.len()).filter(|w| *w == what).count()
    }

    #[test]
    fn a_lent_profile_puts_what_was_written_meanwhile_before_the_dump() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dump.hprof");
        let ctx = Context::without_jvm(&format!("heap=dump,format=b,file={}", path.display()));
        ctx.output.empty_trace();
        ctx.output.empty_trace();
        let lent = ctx.output.lend_file().expect("a regular file is lent");
        assert!(ctx.output.lend_file().is_none(), "lent once");
        assert_eq!(ctx.output.held_since_lent(), Some(0));
        let ids = ctx.output.string_ids(["meanwhile", "meanwhile"]).unwrap();
        assert_eq!(ids[0], ids[1], "one STRING record per name");
        let held = ctx.output.held_since_lent().unwrap();
        assert!(held > "meanwhile".len(), "the STRING record waits while the file is lent");
        assert_eq!(ctx.output.give_back_file(lent, Behind(b"<the dump>")), Some(held));
        assert!(ctx.output.heap_dump_end());
        ctx.output.close();
        let bytes = std::fs::read(&path).unwrap();
        let at = |s: &[u8]| bytes.windows(s.len()).position(|w| w == s).unwrap();
        assert!(at(b"meanwhile") < at(b"<the dump>"), "what was written meanwhile goes first");
        assert_eq!(count(&bytes, b"meanwhile"), 1);
        // STACK TRACE 300000: 12 bytes, thread 0, no frames; once.
        assert_eq!(count(&bytes, &[0, 0, 0, 12, 0, 4, 0x93, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0]), 1);
        assert!(ends_with_dump_end(&bytes, b"<the dump>"), "HEAP DUMP END after the dump");
    }

    #[test]
    fn a_spooled_dump_is_copied_in_then_ended_and_a_text_dump_framed() {
        let dir = tempfile::tempdir().unwrap();
        let records = dir.path().join("records");
        std::fs::write(&records, b"SEGMENTS and more").unwrap();
        let records = File::open(&records).unwrap();
        let path = dir.path().join("dump.hprof");
        let ctx = Context::without_jvm(&format!("heap=dump,format=b,file={}", path.display()));
        assert!(ctx.output.spooled_heap_dump(&records, 8));
        ctx.output.text_heap_dump(1, 2, &records, 8);
        ctx.output.close();
        let bytes = std::fs::read(&path).unwrap();
        assert!(ends_with_dump_end(&bytes, b"SEGMENTS"), "the first 8 bytes, then HEAP DUMP END");
        assert!(!bytes.windows(9).any(|w| w == b"HEAP DUMP"), "no text in a binary profile");

        let path = dir.path().join("dump.txt");
        let ctx = Context::without_jvm(&format!("heap=dump,format=a,file={}", path.display()));
        ctx.output.text_heap_dump(1, 2, &records, 8);
        assert!(!ctx.output.spooled_heap_dump(&records, 8), "no binary records in a text profile");
        ctx.output.close();
        let text = std::fs::read_to_string(&path).unwrap();
        let begin = text.find("HEAP DUMP BEGIN (1 objects, 2 bytes)").expect(&text);
        assert!(text[begin..].contains("\nSEGMENTSHEAP DUMP END\n"), "{text}");
    }

    #[test]
    fn ranges_copy_to_the_offset_of_their_destination() {
        let mut from = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        from.write_all(&data).unwrap();
        let mut to = tempfile::tempfile().unwrap();
        to.write_all(b"head").unwrap();
        copy_range(&from, 1000, 2_000_000, &mut to).unwrap();
        to.write_all(b"tail").unwrap();
        let mut got = Vec::new();
        to.seek(SeekFrom::Start(0)).unwrap();
        to.read_to_end(&mut got).unwrap();
        assert_eq!(&got[..4], b"head");
        assert_eq!(&got[4..4 + 2_000_000], &data[1000..2_001_000]);
        assert_eq!(&got[4 + 2_000_000..], b"tail");
    }
}
