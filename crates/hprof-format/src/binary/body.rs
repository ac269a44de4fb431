/// Builds a record body (or a heap-dump sub-record) in big-endian order with the file's identifier size.
#[derive(Debug, Clone)]
pub struct Body {
    buf: Vec<u8>,
    id_size: u32,
}

impl Body {
    pub fn new(id_size: u32) -> Body {
        Body { buf: Vec::new(), id_size }
    }

    pub fn with_capacity(id_size: u32, capacity: usize) -> Body {
        Body { buf: Vec::with_capacity(capacity), id_size }
    }

    pub fn id_size(&self) -> u32 {
        self.id_size
    }

    pub fn u1(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }

    pub fn u2(&mut self, v: u16) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    pub fn u4(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    pub fn u8(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// An identifier: 8 bytes, or the low 4 bytes when the file uses 4-byte identifiers.
    pub fn id(&mut self, v: u64) -> &mut Self {
        if self.id_size == 4 { self.u4(v as u32) } else { self.u8(v) }
    }

    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(b);
        self
    }

    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn clear(&mut self) {
        self.buf.clear();
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.buf
    }

    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }
}
