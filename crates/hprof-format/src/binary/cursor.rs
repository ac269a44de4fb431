//! The reader's cursor: the workspace's one cursor over untrusted bytes (`byte-cursor`), which the class
//! file parser shares, with the identifier size the file's records take.

use std::ops::{Deref, DerefMut};

/// A malformed or truncated file: what was being read, and where (a byte offset from the file's start).
pub use byte_cursor::DataError as FormatError;

/// Bounds-checked big-endian reads over a byte slice (every read of [`byte_cursor::Cursor`]), and
/// identifiers of the file's size. `base` is the slice's offset in the file, so that errors name file
/// offsets.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    bytes: byte_cursor::Cursor<'a>,
    id_size: u32,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8], base: u64, id_size: u32, what: &'static str) -> Cursor<'a> {
        Cursor { bytes: byte_cursor::Cursor::new(data, base, what), id_size }
    }

    #[inline]
    pub fn id_size(&self) -> u32 {
        self.id_size
    }

    /// An identifier: 4 or 8 bytes, as the file's header said.
    #[inline]
    pub fn id(&mut self) -> Result<u64, FormatError> {
        match self.id_size {
            4 => Ok(self.bytes.u4()? as u64),
            _ => self.bytes.u8(),
        }
    }
}

impl<'a> Deref for Cursor<'a> {
    type Target = byte_cursor::Cursor<'a>;

    #[inline]
    fn deref(&self) -> &byte_cursor::Cursor<'a> {
        &self.bytes
    }
}

impl DerefMut for Cursor<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.bytes
    }
}
