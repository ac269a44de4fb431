//! The spool file a dump is written to before it is copied into the profile (HPROF's `<file>.TMP`).
//!
//! Spooling lets the dump take its time without holding the profile's writer, and lets every STRING and
//! LOAD CLASS record the dump needs (classes met late included) go before its first HEAP DUMP SEGMENT:
//! readers such as VisualVM expect the segments of a dump to follow each other with nothing in between.

use super::spool_writer::ChunkWriter;
use crate::output::Sink;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// Bytes gathered before they are handed to the writer.
pub const CHUNK: usize = 1 << 20;

pub struct Spool {
    /// Bytes not yet handed to `writer`.
    buf: Vec<u8>,
    writer: ChunkWriter,
    written: u64,
}

impl Spool {
    /// Creates the spool next to `near` (the profile's file), or in the temporary directory, and unlinks
    /// it at once: it disappears with the process whatever happens.
    pub fn open(near: Option<&str>) -> io::Result<Spool> {
        Ok(Spool::onto(temp_file(near)?))
    }

    /// Spools into `file` from its offset on: the profile itself, when the dump is written in place.
    pub fn onto(file: File) -> Spool {
        Spool { buf: Vec::with_capacity(CHUNK), writer: ChunkWriter::start(file), written: 0 }
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    /// Spools a whole chunk without copying it, leaving an empty buffer in its place.
    pub fn write_chunk(&mut self, chunk: &mut Vec<u8>) -> io::Result<()> {
        self.writer.write(&mut self.buf)?;
        self.written += chunk.len() as u64;
        self.writer.write(chunk)
    }

    /// Everything spooled, in the file (whose offset is then at its end).
    pub fn into_file(mut self) -> io::Result<File> {
        self.writer.write(&mut self.buf)?;
        self.writer.finish()
    }

    /// Copies everything spooled to the profile: inside the kernel (copy_file_range) when the profile is
    /// a file, which spares reading hundreds of megabytes back through this process, else through a buffer.
    pub fn copy_into(self, out: &mut BufWriter<Sink>) -> io::Result<()> {
        let written = self.written;
        let file = self.into_file()?;
        out.flush()?;
        match out.get_mut() {
            Sink::File { file: to, .. } => copy_range(&file, 0, written, to),
            _ => copy_from(file, 0, out),
        }
    }

    /// Copies everything spooled to `out`.
    pub fn copy_to(self, out: &mut dyn Write) -> io::Result<()> {
        let file = self.into_file()?;
        copy_from(file, 0, out)
    }
}

/// A file for spooling, next to `near` or in the temporary directory, unlinked at once.
pub fn temp_file(near: Option<&str>) -> io::Result<File> {
    let pid = std::process::id();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(path) = near {
        candidates.push(PathBuf::from(format!("{path}.{pid}.TMP")));
    }
    candidates.push(std::env::temp_dir().join(format!("hprof-heap-dump.{pid}.TMP")));
    let mut last = None;
    for path in candidates {
        match OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path) {
            Ok(file) => {
                let _ = std::fs::remove_file(&path);
                return Ok(file);
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no place for the heap dump spool file")))
}

/// Copies `len` bytes of `from` at `offset` to `to` at its offset (which advances): inside the kernel where
/// it can, through a buffer where it cannot.
pub fn copy_range(from: &File, offset: u64, len: u64, to: &mut File) -> io::Result<()> {
    let end = offset + len;
    let mut at = offset as i64;
    while (at as u64) < end {
        let left = (end - at as u64).min(1 << 30) as usize;
        let n =
            // SAFETY: two open file descriptors of ours and a local offset; the kernel checks the rest.
            unsafe { libc::copy_file_range(from.as_raw_fd(), &mut at, to.as_raw_fd(), std::ptr::null_mut(), left, 0) };
        if n <= 0 {
            // Not supported here (or failed): the rest goes the ordinary way.
            break;
        }
    }
    let mut buf = vec![0u8; (end - at as u64).min(1 << 20) as usize];
    let mut at = at as u64;
    while at < end {
        let k = ((end - at) as usize).min(buf.len());
        from.read_exact_at(&mut buf[..k], at)?;
        to.write_all(&buf[..k])?;
        at += k as u64;
    }
    Ok(())
}

/// Copies `file` from `offset` on to `out`.
fn copy_from(mut file: File, offset: u64, out: &mut dyn Write) -> io::Result<()> {
    file.seek(SeekFrom::Start(offset))?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        out.write_all(&buf[..n])?;
    }
}

impl Write for Spool {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    /// Fills chunks of at most [`CHUNK`] bytes, however large the write (a big `byte[]` comes in one): the
    /// buffers the writer thread circulates stay 1 MiB each.
    fn write_all(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        self.written += bytes.len() as u64;
        while !bytes.is_empty() {
            let take = (CHUNK - self.buf.len().min(CHUNK)).min(bytes.len());
            self.buf.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.buf.len() >= CHUNK {
                self.writer.write(&mut self.buf)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spooled_bytes_copy_back_and_the_file_is_gone() {
        let dir = std::env::temp_dir().join(format!("spool-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let near = dir.join("out.hprof");
        let mut spool = Spool::open(Some(near.to_str().unwrap())).unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the spool is unlinked at once");
        spool.write_all(b"hello ").unwrap();
        spool.write_all(&vec![7u8; 3 << 20]).unwrap();
        let mut chunk = vec![9u8; 100];
        spool.write_chunk(&mut chunk).unwrap();
        spool.write_all(b"!").unwrap();
        assert_eq!(spool.written(), 6 + (3 << 20) + 101);
        let mut out = Vec::new();
        spool.copy_to(&mut out).unwrap();
        assert_eq!(&out[..6], b"hello ");
        assert_eq!(out.len(), 6 + (3 << 20) + 101);
        assert_eq!(&out[out.len() - 101..out.len() - 1], &[9u8; 100][..]);
        assert_eq!(out.last(), Some(&b'!'));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn ranges_copy_to_the_offset_of_their_destination() {
        let mut from = temp_file(None).unwrap();
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
        from.write_all(&data).unwrap();
        let mut to = temp_file(None).unwrap();
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
