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
                    let buf = Vec::with_capacity(CHUNK);
                    return Ok(Spool { buf, writer: ChunkWriter::start(file), written: 0 });
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no place for the heap dump spool file")))
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

    /// Everything spooled, in the file.
    fn into_file(mut self) -> io::Result<File> {
        self.writer.write(&mut self.buf)?;
        self.writer.finish()
    }

    /// Copies everything spooled to the profile: inside the kernel (copy_file_range) when the profile is
    /// a file, which spares reading hundreds of megabytes back through this process, else through a buffer.
    pub fn copy_into(self, out: &mut BufWriter<Sink>) -> io::Result<()> {
        let written = self.written;
        let file = self.into_file()?;
        let mut done: i64 = 0;
        out.flush()?;
        if let Sink::File { file: to, .. } = out.get_mut() {
            while (done as u64) < written {
                let left = (written - done as u64).min(1 << 30) as usize;
                let (from, to) = (file.as_raw_fd(), to.as_raw_fd());
                let n = unsafe { libc::copy_file_range(from, &mut done, to, std::ptr::null_mut(), left, 0) };
                if n <= 0 {
                    // Not supported here (or failed): the rest goes the ordinary way.
                    break;
                }
            }
        }
        copy_from(file, done as u64, out)
    }

    /// Copies everything spooled to `out`.
    pub fn copy_to(self, out: &mut dyn Write) -> io::Result<()> {
        let file = self.into_file()?;
        copy_from(file, 0, out)
    }
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

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(bytes);
        self.written += bytes.len() as u64;
        if self.buf.len() >= CHUNK {
            self.writer.write(&mut self.buf)?;
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
}
