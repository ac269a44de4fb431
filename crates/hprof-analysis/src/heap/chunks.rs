//! Where the heap dump is, and its segments cut into chunks of whole sub-records that are read in parallel.

use crate::Error;
use crate::dump::{Dump, HeapDumpSegments};
use hprof_format::binary::{FormatError, HeapRecords};

/// The heap dump to read, or why there is none.
pub(super) fn heap_dump_of(dump: &Dump) -> Result<&HeapDumpSegments, Error> {
    dump.heap_dump().ok_or_else(|| match &dump.damage {
        Some(e) => Error::Missing(format!("no heap dump before the file's damage: {e}")),
        None => Error::Missing("the file holds no heap dump".into()),
    })
}

/// Target chunk size: large enough to amortise, small enough to balance two to sixteen cores.
pub(super) const CHUNK: usize = 4 << 20;

/// A run of whole sub-records: `[start, end)` in the file.
#[derive(Debug, Clone, Copy)]
pub struct Chunk {
    pub start: usize,
    pub end: usize,
}

/// Cuts the segments into chunks. Segments larger than `CHUNK` are walked once to find sub-record
/// boundaries; damage stops the walk and is returned (the chunks before it are still good).
pub fn chunks(dump: &Dump, hd: &HeapDumpSegments) -> (Vec<Chunk>, Option<FormatError>) {
    let data = dump.data();
    let idn = dump.id_size();
    let mut out = Vec::new();
    for &(s, e) in &hd.segments {
        if e - s <= CHUNK {
            out.push(Chunk { start: s, end: e });
            continue;
        }
        let mut chunk_start = s;
        let mut it = HeapRecords::new(&data[s..e], s as u64, idn);
        loop {
            match it.next() {
                None => break,
                Some(Ok((at, _))) => {
                    let at = at as usize;
                    if at - chunk_start >= CHUNK {
                        out.push(Chunk { start: chunk_start, end: at });
                        dump.source.release(chunk_start, at);
                        chunk_start = at;
                    }
                }
                Some(Err(err)) => {
                    // The chunk ends where the damage starts; its reader will not see the bad bytes.
                    let at = (err.offset as usize).clamp(chunk_start, e);
                    if at > chunk_start {
                        out.push(Chunk { start: chunk_start, end: at });
                    }
                    dump.source.release(s, e);
                    return (out, Some(err));
                }
            }
        }
        out.push(Chunk { start: chunk_start, end: e });
        dump.source.release(chunk_start, e);
    }
    (out, None)
}

pub(super) fn records<'a>(dump: &'a Dump, c: &Chunk) -> HeapRecords<'a> {
    HeapRecords::new(&dump.data()[c.start..c.end], c.start as u64, dump.id_size())
}
