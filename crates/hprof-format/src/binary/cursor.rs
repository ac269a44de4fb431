use std::fmt;

/// A malformed or truncated file: what was being read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// Byte offset from the start of the file.
    pub offset: u64,
    pub message: String,
}

impl FormatError {
    pub fn new(offset: u64, message: impl Into<String>) -> FormatError {
        FormatError { offset, message: message.into() }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte offset {})", self.message, self.offset)
    }
}

impl std::error::Error for FormatError {}

/// Bounds-checked big-endian reads over a byte slice. `base` is the slice's offset in the file, so that
/// errors name file offsets.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    id_size: u32,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8], base: u64, id_size: u32, what: &'static str) -> Cursor<'a> {
        Cursor { data, pos: 0, base, id_size, what }
    }

    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    pub fn id_size(&self) -> u32 {
        self.id_size
    }

    fn short(&self, wanted: usize) -> FormatError {
        FormatError::new(
            self.offset(),
            format!("{}: needs {} more bytes but only {} remain", self.what, wanted, self.remaining()),
        )
    }

    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], FormatError> {
        if n > self.remaining() {
            return Err(self.short(n));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub fn skip(&mut self, n: usize) -> Result<(), FormatError> {
        self.bytes(n).map(|_| ())
    }

    pub fn u1(&mut self) -> Result<u8, FormatError> {
        Ok(self.bytes(1)?[0])
    }

    pub fn u2(&mut self) -> Result<u16, FormatError> {
        Ok(u16::from_be_bytes(self.bytes(2)?.try_into().unwrap()))
    }

    pub fn u4(&mut self) -> Result<u32, FormatError> {
        Ok(u32::from_be_bytes(self.bytes(4)?.try_into().unwrap()))
    }

    pub fn u8(&mut self) -> Result<u64, FormatError> {
        Ok(u64::from_be_bytes(self.bytes(8)?.try_into().unwrap()))
    }

    pub fn id(&mut self) -> Result<u64, FormatError> {
        match self.id_size {
            4 => Ok(self.u4()? as u64),
            _ => self.u8(),
        }
    }

    /// The rest of the slice.
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.data[self.pos..];
        self.pos = self.data.len();
        s
    }

    /// A count read from the file, checked against the bytes left: `count * unit` must fit. Stops a
    /// hostile length from turning into a huge allocation.
    pub fn checked_count(&self, count: u64, unit: usize, field: &str) -> Result<usize, FormatError> {
        let need = count.checked_mul(unit as u64);
        match need {
            Some(n) if n <= self.remaining() as u64 => Ok(count as usize),
            _ => Err(FormatError::new(
                self.offset(),
                format!(
                    "{}: {} of {} × {} bytes exceeds the {} bytes that remain",
                    self.what,
                    field,
                    count,
                    unit,
                    self.remaining()
                ),
            )),
        }
    }
}
