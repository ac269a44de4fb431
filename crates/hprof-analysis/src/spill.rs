//! Arrays parked in an unlinked temporary file while a memory-hungry phase runs, then read back. The
//! dominator computation parks the per-object arrays it does not touch (ids, classes, sizes), which keeps
//! its peak resident set below the size of the dump on large heaps.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

/// An array of `T` (`u32`, `u64`, or another [`Plain`] type) in a temporary file.
pub struct Spilled<T = u32> {
    file: File,
    len: usize,
    _of: std::marker::PhantomData<T>,
}

/// Types written and read as their bytes.
///
/// # Safety
/// No padding, and every bit pattern is a value.
pub unsafe trait Plain: Copy + Default {}
// SAFETY: integers have no padding and no invalid values.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}

fn as_bytes<T: Plain>(v: &[T]) -> &[u8] {
    // SAFETY: T has no padding (Plain's contract); any slice of it is a valid byte slice of its size.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

impl<T: Plain> Spilled<T> {
    pub fn park(v: Vec<T>) -> io::Result<Spilled<T>> {
        Spilled::copy(&v)
    }

    /// A copy of `v` (which the caller keeps, e.g. to reuse its memory).
    pub fn copy(v: &[T]) -> io::Result<Spilled<T>> {
        let mut file = tempfile::tempfile()?;
        file.write_all(as_bytes(v))?;
        Ok(Spilled { file, len: v.len(), _of: std::marker::PhantomData })
    }

    /// The array back (the file stays, so it can be read again).
    pub fn read(&self) -> io::Result<Vec<T>> {
        self.read_into(Vec::new())
    }

    /// The array back in `v`'s memory (grown if need be): memory a process already has need not be
    /// handed out and zeroed by the kernel again.
    pub fn read_into(&self, mut v: Vec<T>) -> io::Result<Vec<T>> {
        v.truncate(self.len);
        v.reserve_exact(self.len - v.len());
        v.resize(self.len, T::default());
        let size = std::mem::size_of_val(&v[..]);
        // SAFETY: every bit pattern is a valid T, and the byte view covers exactly the vector.
        let bytes = unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, size) };
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
        assert_eq!(s.read_into(vec![9; 10]).unwrap(), v);
        assert_eq!(s.read_into(vec![9; 200_000]).unwrap(), v);
        let w: Vec<u64> = (0..1000).map(|i| i << 40 | i).collect();
        assert_eq!(super::Spilled::park(w.clone()).unwrap().read().unwrap(), w);
    }
}
