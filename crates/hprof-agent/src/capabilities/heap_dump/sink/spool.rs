//! The spool file a dump is written to before it is copied into the profile (HPROF's `<file>.TMP`).
//!
//! Spooling lets the dump take its time without holding the profile's writer, and lets every STRING and
//! LOAD CLASS record the dump needs (classes met late included) go before its first HEAP DUMP SEGMENT:
//! readers such as VisualVM expect the segments of a dump to follow each other with nothing in between.

use crate::capabilities::heap_dump::records::RecordBytes;
use crate::panic_guard::guard;
use std::fs::File;
use std::io::{self, Write};
use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

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

    /// Everything spooled, in the file (whose offset is then at its end).
    pub fn into_file(mut self) -> io::Result<File> {
        self.writer.write(&mut self.buf)?;
        self.writer.finish()
    }
}

impl RecordBytes for Spool {
    /// Spools a whole chunk without copying it, leaving an empty buffer in its place.
    fn write_chunk(&mut self, chunk: &mut Vec<u8>) -> io::Result<()> {
        self.writer.write(&mut self.buf)?;
        self.written += chunk.len() as u64;
        self.writer.write(chunk)
    }
}

/// A file for spooling without a name, 0600: next to `near` (the profile), else in the temporary
/// directory (HPROF's predictable `<file>.TMP` and `$TMPDIR/hprof-heap-dump.<pid>.TMP` could be planted).
pub fn temp_file(near: Option<&str>) -> io::Result<File> {
    private_files::unnamed(near.map(std::path::Path::new))
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
    use std::io::{Read, Seek, SeekFrom};

    #[test]
    fn spooled_bytes_copy_back_and_the_file_is_gone() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let near = dir.join("out.hprof");
        let mut spool = Spool::open(Some(near.to_str().unwrap())).unwrap();
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "the spool is unlinked at once");
        spool.write_all(b"hello ").unwrap();
        spool.write_all(&vec![7u8; 3 << 20]).unwrap();
        let mut chunk = vec![9u8; 100];
        spool.write_chunk(&mut chunk).unwrap();
        spool.write_all(b"!").unwrap();
        assert_eq!(spool.written(), 6 + (3 << 20) + 101);
        let mut file = spool.into_file().unwrap();
        let mut out = Vec::new();
        file.seek(SeekFrom::Start(0)).unwrap();
        file.read_to_end(&mut out).unwrap();
        assert_eq!(&out[..6], b"hello ");
        assert_eq!(out.len(), 6 + (3 << 20) + 101);
        assert_eq!(&out[out.len() - 101..out.len() - 1], &[9u8; 100][..]);
        assert_eq!(out.last(), Some(&b'!'));
    }
}

// The thread that writes a spool's chunks to its file, so that the kernel's copying of hundreds of
// megabytes into the page cache runs on another core than the heap walk, which only hands full buffers
// over. A few buffers circulate (the walk waits when the disk is behind); without a thread, the chunks
// are written in place.

/// Buffers on their way to the thread at most.
const IN_FLIGHT: usize = 3;

pub struct ChunkWriter {
    to: Option<SyncSender<Vec<u8>>>,
    back: Option<Receiver<Vec<u8>>>,
    thread: Option<JoinHandle<io::Result<File>>>,
    /// The file itself when no thread could be started.
    file: Option<File>,
}

impl ChunkWriter {
    pub fn start(file: File) -> ChunkWriter {
        let in_place = |file| ChunkWriter { to: None, back: None, thread: None, file: Some(file) };
        // The thread writes through a second handle on the file; this one stays if it cannot start.
        let Ok(mut handle) = file.try_clone() else { return in_place(file) };
        let (to, from) = sync_channel::<Vec<u8>>(IN_FLIGHT);
        let (give_back, back) = channel::<Vec<u8>>();
        let body = move || {
            let written = guard(
                || {
                    for mut chunk in from {
                        handle.write_all(&chunk)?;
                        chunk.clear();
                        let _ = give_back.send(chunk);
                    }
                    Ok(())
                },
                Err(io::Error::other("the spool writer stopped after an internal error")),
            );
            written.map(|()| handle)
        };
        match std::thread::Builder::new().name("HPROF heap dump spool".into()).spawn(body) {
            Ok(thread) => ChunkWriter { to: Some(to), back: Some(back), thread: Some(thread), file: None },
            Err(_) => in_place(file),
        }
    }

    /// Writes `chunk` (on the thread), leaving an empty buffer in its place.
    pub fn write(&mut self, chunk: &mut Vec<u8>) -> io::Result<()> {
        if chunk.is_empty() {
            return Ok(());
        }
        if let Some(file) = &mut self.file {
            file.write_all(chunk)?;
            chunk.clear();
            return Ok(());
        }
        let recycled = self.back.as_ref().and_then(|b| b.try_recv().ok());
        let full = std::mem::replace(chunk, recycled.unwrap_or_else(|| Vec::with_capacity(chunk.capacity())));
        match &self.to {
            Some(to) if to.send(full).is_ok() => Ok(()),
            // The thread has stopped on an error, which finish() reports.
            _ => Err(io::Error::other("the heap dump spool could not be written")),
        }
    }

    /// Waits for every chunk to be written and hands back the file.
    pub fn finish(mut self) -> io::Result<File> {
        if let Some(file) = self.file.take() {
            return Ok(file);
        }
        drop(self.to.take());
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            _ => Err(io::Error::other("the heap dump spool writer failed")),
        }
    }
}

impl Drop for ChunkWriter {
    /// A writer dropped on an error path still waits for its thread: the file may be cut or reused next.
    fn drop(&mut self) {
        drop(self.to.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod chunk_writer_tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom};

    #[test]
    fn chunks_arrive_in_order_and_buffers_come_back() {
        let mut file = tempfile();
        let mut w = ChunkWriter::start(file.try_clone().unwrap());
        let mut expected = Vec::new();
        for i in 0..20u8 {
            let mut chunk = vec![i; 1000 + i as usize];
            expected.extend_from_slice(&chunk);
            w.write(&mut chunk).unwrap();
            assert!(chunk.is_empty(), "an empty buffer takes the chunk's place");
        }
        w.finish().unwrap();
        let mut got = Vec::new();
        file.seek(SeekFrom::Start(0)).unwrap();
        file.read_to_end(&mut got).unwrap();
        assert_eq!(got, expected);
    }

    fn tempfile() -> File {
        ::tempfile::tempfile().unwrap()
    }
}
