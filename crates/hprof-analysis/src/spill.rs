//! Arrays parked in an unlinked temporary file while a memory-hungry phase runs, then read back. The
//! dominator computation parks the per-object arrays it does not touch (ids, classes, sizes), which keeps
//! its peak resident set below the size of the dump on large heaps.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

pub struct Spilled {
    file: File,
    len: usize,
}

fn as_bytes(v: &[u32]) -> &[u8] {
    // SAFETY: u32 has no padding; any u32 slice is a valid byte slice of four times the length.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

impl Spilled {
    pub fn park(v: Vec<u32>) -> io::Result<Spilled> {
        let mut file = tempfile::tempfile()?;
        file.write_all(as_bytes(&v))?;
        Ok(Spilled { file, len: v.len() })
    }

    /// The array back (the file stays, so it can be read again).
    pub fn read(&self) -> io::Result<Vec<u32>> {
        let mut v = vec![0u32; self.len];
        // SAFETY: every bit pattern is a valid u32, and the byte view covers exactly the vector.
        let bytes = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, self.len * 4) };
        let mut f = &self.file;
        f.seek(SeekFrom::Start(0))?;
        f.read_exact(bytes)?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_trip() {
        let v: Vec<u32> = (0..100_000).map(|i| i * 7).collect();
        let s = super::Spilled::park(v.clone()).unwrap();
        assert_eq!(s.read().unwrap(), v);
        assert_eq!(s.read().unwrap(), v);
    }
}
