//! Class file bytes: read through the workspace's one cursor over untrusted bytes (`byte-cursor`, shared with
//! the HPROF reader), written big-endian; and the error of a class file we cannot read or rewrite.

use std::fmt;

pub use byte_cursor::Cursor;

/// A class file we cannot read or cannot rewrite, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassError {
    pub message: String,
}

impl ClassError {
    pub fn new(message: impl Into<String>) -> ClassError {
        ClassError { message: message.into() }
    }
}

impl fmt::Display for ClassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ClassError {}

/// A short read or an impossible count: what was being read, and at which offset.
impl From<byte_cursor::DataError> for ClassError {
    fn from(e: byte_cursor::DataError) -> ClassError {
        ClassError::new(e.to_string())
    }
}

pub type Result<T> = std::result::Result<T, ClassError>;

pub fn put_u2(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

pub fn put_u4(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_be_bytes());
}
