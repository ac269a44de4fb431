//! The `Code` attribute (JVMS §4.7.3) parsed into its parts, and written back.

use crate::bytes::{Cursor, Result, put_u2, put_u4};
use crate::class_file::{Attribute, read_attributes, write_attributes};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handler {
    pub start: u16,
    pub end: u16,
    pub handler: u16,
    pub catch_type: u16,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeAttribute {
    pub max_stack: u16,
    pub max_locals: u16,
    pub code: Vec<u8>,
    pub handlers: Vec<Handler>,
    pub attributes: Vec<Attribute>,
}

impl CodeAttribute {
    pub fn parse(info: &[u8]) -> Result<CodeAttribute> {
        let mut r = Cursor::new(info, 0, "Code attribute");
        let max_stack = r.u2()?;
        let max_locals = r.u2()?;
        let len = r.u4()? as usize;
        let code = r.bytes(len)?.to_vec();
        let n = r.u2()?;
        let mut handlers = Vec::with_capacity(n as usize);
        for _ in 0..n {
            handlers.push(Handler { start: r.u2()?, end: r.u2()?, handler: r.u2()?, catch_type: r.u2()? });
        }
        let attributes = read_attributes(&mut r)?;
        if !r.is_empty() {
            return Err(crate::bytes::ClassError::new("bytes after the Code attribute's end"));
        }
        Ok(CodeAttribute { max_stack, max_locals, code, handlers, attributes })
    }

    pub fn write(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.code.len() + 64);
        put_u2(&mut out, self.max_stack);
        put_u2(&mut out, self.max_locals);
        put_u4(&mut out, self.code.len() as u32);
        out.extend_from_slice(&self.code);
        put_u2(&mut out, self.handlers.len() as u16);
        for h in &self.handlers {
            put_u2(&mut out, h.start);
            put_u2(&mut out, h.end);
            put_u2(&mut out, h.handler);
            put_u2(&mut out, h.catch_type);
        }
        write_attributes(&mut out, &self.attributes);
        out
    }
}
