//! The records of a dump: the walk's `HeapSink` (`walk::heap_sink`) written once for binary sub-records
//! ([`binary`]: hprof-format's `HeapWriter` encodes them, the sink cuts them into HEAP DUMP SEGMENTs) and
//! once for the text lines ([`text`]). Either writes its bytes to a [`RecordBytes`]: the sink's spool file
//! (`sink`), filled by a thread of its own, or, for a binary dump into a file, the profile itself. A binary
//! file states the JVM's object layout before its first dump ([`layout_note`]).

pub(super) mod binary;
pub(super) mod layout_note;
pub(super) mod text;

use std::io::{self, Write};

/// Where the records' bytes go: written as they come, or a whole chunk at once.
pub trait RecordBytes: Write {
    /// Takes a whole chunk without copying it, leaving an empty buffer in its place.
    fn write_chunk(&mut self, chunk: &mut Vec<u8>) -> io::Result<()>;
}

/// In memory (the tests').
impl RecordBytes for Vec<u8> {
    fn write_chunk(&mut self, chunk: &mut Vec<u8>) -> io::Result<()> {
        self.append(chunk);
        Ok(())
    }
}

/// The reference in an instance's values at `offset` (8 bytes, big-endian).
pub fn reference_at(values: &[u8], offset: u32) -> u64 {
    let o = offset as usize;
    values.get(o..o + 8).map_or(0, |b| u64::from_be_bytes(b.try_into().unwrap()))
}
