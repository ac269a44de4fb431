//! The constant pool, kept as raw entries so that a class file writes back byte for byte; new entries are
//! appended (and looked up first, so a rewrite adds each at most once).

use crate::bytes::{ClassError, Cursor, Result, put_u2};
use std::collections::HashMap;

pub const UTF8: u8 = 1;
pub const INTEGER: u8 = 3;
pub const FLOAT: u8 = 4;
pub const LONG: u8 = 5;
pub const DOUBLE: u8 = 6;
pub const CLASS: u8 = 7;
pub const STRING: u8 = 8;
pub const FIELDREF: u8 = 9;
pub const METHODREF: u8 = 10;
pub const INTERFACE_METHODREF: u8 = 11;
pub const NAME_AND_TYPE: u8 = 12;
pub const METHOD_HANDLE: u8 = 15;
pub const METHOD_TYPE: u8 = 16;
pub const DYNAMIC: u8 = 17;
pub const INVOKE_DYNAMIC: u8 = 18;
pub const MODULE: u8 = 19;
pub const PACKAGE: u8 = 20;

/// One entry: its tag and the bytes after the tag. Slot 0 and the slot after a long or double are `None`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Entry {
    pub tag: u8,
    pub body: Vec<u8>,
}

#[derive(Debug, Clone, Default)]
pub struct ConstantPool {
    entries: Vec<Option<Entry>>,
    /// Built at the first `intern`: entry → its first index.
    index: Option<HashMap<Entry, u16>>,
}

impl ConstantPool {
    /// An empty pool (slot 0 unused), for building a class.
    pub fn new() -> ConstantPool {
        ConstantPool { entries: vec![None], index: None }
    }

    pub fn read(r: &mut Cursor) -> Result<ConstantPool> {
        let count = r.u2()? as usize;
        if count == 0 {
            return Err(ClassError::new("constant_pool_count is 0"));
        }
        let mut entries = Vec::with_capacity(count);
        entries.push(None);
        while entries.len() < count {
            let index = entries.len();
            let tag = r.u1()?;
            let len = match tag {
                UTF8 => peek_u2(r)? as usize + 2,
                INTEGER | FLOAT | FIELDREF | METHODREF | INTERFACE_METHODREF | NAME_AND_TYPE | DYNAMIC
                | INVOKE_DYNAMIC => 4,
                LONG | DOUBLE => 8,
                CLASS | STRING | METHOD_TYPE | MODULE | PACKAGE => 2,
                METHOD_HANDLE => 3,
                other => {
                    return Err(ClassError::new(format!("constant pool entry {index} has unknown tag {other}")));
                }
            };
            let body = r.bytes(len)?.to_vec();
            entries.push(Some(Entry { tag, body }));
            if tag == LONG || tag == DOUBLE {
                if entries.len() >= count {
                    return Err(ClassError::new(format!(
                        "constant pool entry {index}: a long or double in the last slot"
                    )));
                }
                entries.push(None);
            }
        }
        Ok(ConstantPool { entries, index: None })
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        put_u2(out, self.entries.len() as u16);
        for e in self.entries.iter().flatten() {
            out.push(e.tag);
            out.extend_from_slice(&e.body);
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.len() <= 1
    }

    pub fn entry(&self, index: u16) -> Result<&Entry> {
        self.entries
            .get(index as usize)
            .and_then(|e| e.as_ref())
            .ok_or_else(|| ClassError::new(format!("constant pool index {index} is not a valid entry")))
    }

    fn u2_at(body: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([body[at], body[at + 1]])
    }

    /// The text of a CONSTANT_Utf8 entry (modified UTF-8, decoded loosely: names here are ASCII in practice,
    /// and a lossy name only affects how a method is reported).
    pub fn utf8(&self, index: u16) -> Result<String> {
        let e = self.entry(index)?;
        if e.tag != UTF8 {
            return Err(ClassError::new(format!("constant pool entry {index} is not a Utf8 (tag {})", e.tag)));
        }
        Ok(String::from_utf8_lossy(&e.body[2..]).into_owned())
    }

    /// The name of a CONSTANT_Class entry, e.g. `java/lang/String`.
    pub fn class_name(&self, index: u16) -> Result<String> {
        let e = self.entry(index)?;
        if e.tag != CLASS {
            return Err(ClassError::new(format!("constant pool entry {index} is not a Class (tag {})", e.tag)));
        }
        self.utf8(Self::u2_at(&e.body, 0))
    }

    /// For a Fieldref/Methodref/InterfaceMethodref: (class index, name, descriptor).
    pub fn member_ref(&self, index: u16) -> Result<(u16, String, String)> {
        let e = self.entry(index)?;
        if !matches!(e.tag, FIELDREF | METHODREF | INTERFACE_METHODREF) {
            return Err(ClassError::new(format!("constant pool entry {index} is not a member reference")));
        }
        let class = Self::u2_at(&e.body, 0);
        let (name, descriptor) = self.name_and_type(Self::u2_at(&e.body, 2))?;
        Ok((class, name, descriptor))
    }

    pub fn name_and_type(&self, index: u16) -> Result<(String, String)> {
        let e = self.entry(index)?;
        if e.tag != NAME_AND_TYPE {
            return Err(ClassError::new(format!("constant pool entry {index} is not a NameAndType")));
        }
        Ok((self.utf8(Self::u2_at(&e.body, 0))?, self.utf8(Self::u2_at(&e.body, 2))?))
    }

    /// The index of an entry equal to `entry`, appending it if there is none.
    pub fn intern(&mut self, entry: Entry) -> Result<u16> {
        let entries = &self.entries;
        let index = self.index.get_or_insert_with(|| {
            let mut m = HashMap::with_capacity(entries.len());
            for (i, e) in entries.iter().enumerate() {
                if let Some(e) = e {
                    m.entry(e.clone()).or_insert(i as u16);
                }
            }
            m
        });
        if let Some(&i) = index.get(&entry) {
            return Ok(i);
        }
        // Long and double take two slots; nothing appended here is one.
        if self.entries.len() >= u16::MAX as usize {
            return Err(ClassError::new("the constant pool is full (65535 entries)"));
        }
        let i = self.entries.len() as u16;
        index.insert(entry.clone(), i);
        self.entries.push(Some(entry));
        Ok(i)
    }

    pub fn intern_utf8(&mut self, text: &str) -> Result<u16> {
        let mut body = Vec::with_capacity(text.len() + 2);
        put_u2(&mut body, text.len() as u16);
        body.extend_from_slice(text.as_bytes());
        self.intern(Entry { tag: UTF8, body })
    }

    pub fn intern_class(&mut self, name: &str) -> Result<u16> {
        let utf8 = self.intern_utf8(name)?;
        self.intern(Entry { tag: CLASS, body: utf8.to_be_bytes().to_vec() })
    }

    pub fn intern_integer(&mut self, value: i32) -> Result<u16> {
        self.intern(Entry { tag: INTEGER, body: value.to_be_bytes().to_vec() })
    }

    pub fn intern_methodref(&mut self, class: &str, name: &str, descriptor: &str) -> Result<u16> {
        let class = self.intern_class(class)?;
        let name = self.intern_utf8(name)?;
        let descriptor = self.intern_utf8(descriptor)?;
        let mut nat = Vec::with_capacity(4);
        put_u2(&mut nat, name);
        put_u2(&mut nat, descriptor);
        let nat = self.intern(Entry { tag: NAME_AND_TYPE, body: nat })?;
        let mut body = Vec::with_capacity(4);
        put_u2(&mut body, class);
        put_u2(&mut body, nat);
        self.intern(Entry { tag: METHODREF, body })
    }
}

/// The next u2 without consuming it (a Utf8 entry's length is part of its body).
fn peek_u2(r: &Cursor) -> Result<u16> {
    Ok(Cursor::new(r.peek_rest(), r.offset(), "constant pool Utf8 length").u2()?)
}
