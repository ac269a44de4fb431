//! The thread that writes a spool's chunks to its file, so that the kernel's copying of hundreds of
//! megabytes into the page cache runs on another core than the heap walk, which only hands full buffers
//! over. A few buffers circulate (the walk waits when the disk is behind); without a thread, the chunks
//! are written in place.

use crate::panic_guard::guard;
use std::fs::File;
use std::io::{self, Write};
use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

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
mod tests {
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
        let name = format!("chunk-writer-{}-{:?}", std::process::id(), std::thread::current().id());
        let path = std::env::temp_dir().join(name);
        let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        f
    }
}
