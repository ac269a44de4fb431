use super::cursor::FormatError;
use crate::tags::record;

/// The file header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// `JAVA PROFILE 1.0.1`, `1.0.2` or `1.0.3`.
    pub version: String,
    pub id_size: u32,
    pub timestamp_ms: u64,
    /// Where the first record starts.
    pub records_offset: usize,
}

/// Reads and checks the header. Anything that is not an HPROF file is refused here with a message that
/// says what the file looks like instead.
pub fn parse_header(data: &[u8]) -> Result<Header, FormatError> {
    const MAX_VERSION_LEN: usize = 64;
    if !data.starts_with(b"JAVA PROFILE ") {
        let what = if data.starts_with(&[0x1f, 0x8b]) {
            "a gzip file (decompress it first)"
        } else if data.windows(18).take(64).any(|w| w == b"portable heap dump") {
            "an IBM Portable Heap Dump (PHD), not HPROF"
        } else if data.starts_with(b"JAVA PROFILE") {
            "a malformed HPROF header"
        } else {
            "not an HPROF file"
        };
        return Err(FormatError::new(0, format!("no 'JAVA PROFILE' header: {what}")));
    }
    let nul = data
        .iter()
        .take(MAX_VERSION_LEN)
        .position(|&b| b == 0)
        .ok_or_else(|| FormatError::new(0, "header version string is not NUL-terminated"))?;
    let version = crate::names::printable(&String::from_utf8_lossy(&data[..nul])).into_owned();
    let rest = &data[nul + 1..];
    if rest.len() < 12 {
        return Err(FormatError::new(nul as u64 + 1, "file ends inside the header"));
    }
    let id_size = u32::from_be_bytes(rest[0..4].try_into().unwrap());
    if id_size != 4 && id_size != 8 {
        return Err(FormatError::new(nul as u64 + 1, format!("identifier size {id_size} is neither 4 nor 8")));
    }
    let hi = u32::from_be_bytes(rest[4..8].try_into().unwrap()) as u64;
    let lo = u32::from_be_bytes(rest[8..12].try_into().unwrap()) as u64;
    Ok(Header { version, id_size, timestamp_ms: (hi << 32) | lo, records_offset: nul + 1 + 12 })
}

/// One top-level record, body not yet decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRecord<'a> {
    pub tag: u8,
    pub micros: u32,
    /// Offset of the record's tag byte in the file.
    pub offset: u64,
    pub body: &'a [u8],
}

impl RawRecord<'_> {
    /// Offset of the body's first byte in the file.
    pub fn body_offset(&self) -> u64 {
        self.offset + 9
    }
}

/// Iterates over the records of a whole file held in memory (or memory-mapped). Stops after the first
/// error, which names the record and its offset.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    data: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> Records<'a> {
    pub fn new(data: &'a [u8], header: &Header) -> Records<'a> {
        Records { data, pos: header.records_offset, failed: false }
    }

    /// Offset of the next record.
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<RawRecord<'a>, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.data.len() {
            return None;
        }
        let start = self.pos;
        let remaining = self.data.len() - start;
        if remaining < 9 {
            self.failed = true;
            return Some(Err(FormatError::new(
                start as u64,
                format!("truncated record header: {remaining} bytes left, 9 needed"),
            )));
        }
        let h = &self.data[start..start + 9];
        let tag = h[0];
        let micros = u32::from_be_bytes(h[1..5].try_into().unwrap());
        let len = u32::from_be_bytes(h[5..9].try_into().unwrap()) as usize;
        let body_start = start + 9;
        if len > self.data.len() - body_start {
            self.failed = true;
            return Some(Err(FormatError::new(
                start as u64,
                format!(
                    "{} record (tag 0x{:02X}) claims {} bytes but only {} remain: the file is truncated or corrupt",
                    record::name(tag),
                    tag,
                    len,
                    self.data.len() - body_start
                ),
            )));
        }
        self.pos = body_start + len;
        Some(Ok(RawRecord { tag, micros, offset: start as u64, body: &self.data[body_start..body_start + len] }))
    }
}
