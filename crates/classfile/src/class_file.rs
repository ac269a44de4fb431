//! The class file's structure (JVMS §4.1) down to attributes, which stay raw bytes except `Code`,
//! parsed on demand by [`crate::code::CodeAttribute`]. Reading then writing gives the same bytes.

use crate::bytes::{ClassError, Cursor, Result, put_u2, put_u4};
use crate::constant_pool::ConstantPool;

pub const ACC_STATIC: u16 = 0x0008;
pub const ACC_NATIVE: u16 = 0x0100;
pub const ACC_ABSTRACT: u16 = 0x0400;
pub const ACC_INTERFACE: u16 = 0x0200;
pub const ACC_MODULE: u16 = 0x8000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    pub name_index: u16,
    pub info: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub access: u16,
    pub name_index: u16,
    pub descriptor_index: u16,
    pub attributes: Vec<Attribute>,
}

#[derive(Debug, Clone)]
pub struct ClassFile {
    pub minor: u16,
    pub major: u16,
    pub pool: ConstantPool,
    pub access: u16,
    pub this_class: u16,
    pub super_class: u16,
    pub interfaces: Vec<u16>,
    pub fields: Vec<Member>,
    pub methods: Vec<Member>,
    pub attributes: Vec<Attribute>,
}

pub fn read_attributes(r: &mut Cursor) -> Result<Vec<Attribute>> {
    let count = r.u2()?;
    let mut attributes = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let name_index = r.u2()?;
        let len = r.u4()? as usize;
        attributes.push(Attribute { name_index, info: r.bytes(len)?.to_vec() });
    }
    Ok(attributes)
}

pub fn write_attributes(out: &mut Vec<u8>, attributes: &[Attribute]) {
    put_u2(out, attributes.len() as u16);
    for a in attributes {
        put_u2(out, a.name_index);
        put_u4(out, a.info.len() as u32);
        out.extend_from_slice(&a.info);
    }
}

fn read_members(r: &mut Cursor) -> Result<Vec<Member>> {
    let count = r.u2()?;
    let mut members = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let access = r.u2()?;
        let name_index = r.u2()?;
        let descriptor_index = r.u2()?;
        let attributes = read_attributes(r)?;
        members.push(Member { access, name_index, descriptor_index, attributes });
    }
    Ok(members)
}

fn write_members(out: &mut Vec<u8>, members: &[Member]) {
    put_u2(out, members.len() as u16);
    for m in members {
        put_u2(out, m.access);
        put_u2(out, m.name_index);
        put_u2(out, m.descriptor_index);
        write_attributes(out, &m.attributes);
    }
}

impl ClassFile {
    pub fn parse(bytes: &[u8]) -> Result<ClassFile> {
        let mut r = Cursor::new(bytes, 0, "class file");
        let magic = r.u4()?;
        if magic != 0xCAFE_BABE {
            return Err(ClassError::new(format!("not a class file (magic {magic:#010x})")));
        }
        let minor = r.u2()?;
        let major = r.u2()?;
        let pool = ConstantPool::read(&mut r)?;
        let access = r.u2()?;
        let this_class = r.u2()?;
        let super_class = r.u2()?;
        let n = r.u2()?;
        let mut interfaces = Vec::with_capacity(n as usize);
        for _ in 0..n {
            interfaces.push(r.u2()?);
        }
        let fields = read_members(&mut r)?;
        let methods = read_members(&mut r)?;
        let attributes = read_attributes(&mut r)?;
        if !r.is_empty() {
            return Err(ClassError::new(format!("{} bytes after the class file's end", r.remaining())));
        }
        Ok(ClassFile { minor, major, pool, access, this_class, super_class, interfaces, fields, methods, attributes })
    }

    pub fn write(&self) -> Vec<u8> {
        let mut out = Vec::new();
        put_u4(&mut out, 0xCAFE_BABE);
        put_u2(&mut out, self.minor);
        put_u2(&mut out, self.major);
        self.pool.write(&mut out);
        put_u2(&mut out, self.access);
        put_u2(&mut out, self.this_class);
        put_u2(&mut out, self.super_class);
        put_u2(&mut out, self.interfaces.len() as u16);
        for &i in &self.interfaces {
            put_u2(&mut out, i);
        }
        write_members(&mut out, &self.fields);
        write_members(&mut out, &self.methods);
        write_attributes(&mut out, &self.attributes);
        out
    }

    pub fn name(&self) -> Result<String> {
        self.pool.class_name(self.this_class)
    }

    /// The first attribute of `attributes` called `name`.
    pub fn find_attribute<'a>(&self, attributes: &'a [Attribute], name: &str) -> Option<(usize, &'a Attribute)> {
        attributes.iter().enumerate().find(|(_, a)| self.pool.utf8(a.name_index).is_ok_and(|n| n == name))
    }
}
