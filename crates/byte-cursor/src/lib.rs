//! The one cursor over untrusted bytes: HPROF files and streams (hprof-format) and class files (classfile)
//! are read through it. Every read checks the bytes that remain, a count read from the bytes is checked
//! against them before it sizes anything ([`Cursor::checked_count`]), and every error names what was being
//! read and at which offset. Big-endian, as both formats are.

use std::fmt;

/// Bytes that do not hold what they claim: what was being read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataError {
    /// Byte offset from the start of the file (or whatever the cursor's `base` counts from).
    pub offset: u64,
    pub message: String,
}

impl DataError {
    pub fn new(offset: u64, message: impl Into<String>) -> DataError {
        DataError { offset, message: message.into() }
    }
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte offset {})", self.message, self.offset)
    }
}

impl std::error::Error for DataError {}

/// Bounds-checked big-endian reads over a byte slice. `base` is the slice's offset in its file, so that
/// errors name file offsets; `what` names the slice in them.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`, which begins at offset `base` of its file.
    pub fn new(data: &'a [u8], base: u64, what: &'static str) -> Cursor<'a> {
        Cursor { data, pos: 0, base, what }
    }

    /// Offset in the file of the next byte.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Offset in the slice of the next byte.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    #[inline]
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// An error at the cursor's offset, naming what the cursor reads.
    pub fn error(&self, message: impl fmt::Display) -> DataError {
        DataError::new(self.offset(), format!("{}: {message}", self.what))
    }

    // Inlined: the readers call these once per field, millions of times per heap dump.
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DataError> {
        if n > self.remaining() {
            return Err(self.short(n));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[cold]
    #[inline(never)]
    fn short(&self, n: usize) -> DataError {
        self.error(format_args!("needs {n} more bytes but only {} remain", self.remaining()))
    }

    #[inline]
    pub fn skip(&mut self, n: usize) -> Result<(), DataError> {
        self.bytes(n).map(|_| ())
    }

    #[inline]
    pub fn u1(&mut self) -> Result<u8, DataError> {
        Ok(self.bytes(1)?[0])
    }

    #[inline]
    pub fn u2(&mut self) -> Result<u16, DataError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    #[inline]
    pub fn u4(&mut self) -> Result<u32, DataError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    #[inline]
    pub fn u8(&mut self) -> Result<u64, DataError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DataError> {
        let mut a = [0; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }

    /// The bytes not yet read, leaving the cursor where it is.
    #[inline]
    pub fn peek_rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// The bytes not yet read; the cursor is then at the end.
    #[inline]
    pub fn rest(&mut self) -> &'a [u8] {
        let s = self.peek_rest();
        self.pos = self.data.len();
        s
    }

    /// A count read from the bytes, checked against the bytes left: `count * unit` must fit. Stops a
    /// hostile length from turning into a huge allocation.
    pub fn checked_count(&self, count: u64, unit: usize, field: &str) -> Result<usize, DataError> {
        match count.checked_mul(unit as u64) {
            Some(n) if n <= self.remaining() as u64 => Ok(count as usize),
            _ => Err(self.error(format_args!(
                "{field} of {count} × {unit} bytes exceeds the {} bytes that remain",
                self.remaining()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_big_endian_and_names_a_short_read_with_its_file_offset() {
        let mut c = Cursor::new(&[0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07], 100, "thing");
        assert_eq!(c.u1().unwrap(), 0x01);
        assert_eq!(c.u2().unwrap(), 0x0203);
        assert_eq!(c.offset(), 103);
        assert_eq!(c.position(), 3);
        let e = c.clone().u8().unwrap_err();
        assert_eq!(e.offset, 103);
        assert_eq!(e.to_string(), "thing: needs 8 more bytes but only 4 remain (at byte offset 103)");
        assert_eq!(c.u4().unwrap(), 0x0405_0607);
        assert!(c.is_empty());
        assert_eq!(c.u1().unwrap_err().offset, 107);
    }

    #[test]
    fn a_count_must_fit_in_what_remains() {
        let c = Cursor::new(&[0; 16], 0, "list");
        assert_eq!(c.checked_count(4, 4, "entries").unwrap(), 4);
        let e = c.checked_count(5, 4, "entries").unwrap_err();
        assert_eq!(e.message, "list: entries of 5 × 4 bytes exceeds the 16 bytes that remain");
        assert!(c.checked_count(u64::MAX, 2, "entries").is_err());
    }

    #[test]
    fn rest_and_peek_rest() {
        let mut c = Cursor::new(b"abcdef", 0, "text");
        c.skip(2).unwrap();
        assert_eq!(c.peek_rest(), b"cdef");
        assert_eq!(c.position(), 2);
        assert_eq!(c.rest(), b"cdef");
        assert!(c.is_empty());
        assert!(c.skip(1).is_err());
    }
}
