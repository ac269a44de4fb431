//! StackMapTable (JVMS §4.7.4) decoded to frames at absolute offsets, so that code can move under them,
//! and encoded back choosing the compact frame forms where the new deltas allow.

use crate::bytes::{ClassError, Cursor, Result, put_u2};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VType {
    Top,
    Integer,
    Float,
    Double,
    Long,
    Null,
    UninitializedThis,
    Object(u16),
    /// `new` at this code offset, not yet constructed.
    Uninitialized(u32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameKind {
    Same,
    SameLocals1(VType),
    Chop(u8),
    Append(Vec<VType>),
    Full { locals: Vec<VType>, stack: Vec<VType> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub offset: u32,
    pub kind: FrameKind,
}

fn read_vtype(r: &mut Cursor) -> Result<VType> {
    Ok(match r.u1()? {
        0 => VType::Top,
        1 => VType::Integer,
        2 => VType::Float,
        3 => VType::Double,
        4 => VType::Long,
        5 => VType::Null,
        6 => VType::UninitializedThis,
        7 => VType::Object(r.u2()?),
        8 => VType::Uninitialized(r.u2()? as u32),
        t => return Err(ClassError::new(format!("StackMapTable: unknown verification type tag {t}"))),
    })
}

fn write_vtype(out: &mut Vec<u8>, v: &VType) {
    match v {
        VType::Top => out.push(0),
        VType::Integer => out.push(1),
        VType::Float => out.push(2),
        VType::Double => out.push(3),
        VType::Long => out.push(4),
        VType::Null => out.push(5),
        VType::UninitializedThis => out.push(6),
        VType::Object(i) => {
            out.push(7);
            put_u2(out, *i);
        }
        VType::Uninitialized(o) => {
            out.push(8);
            put_u2(out, *o as u16);
        }
    }
}

fn read_vtypes(r: &mut Cursor, n: usize) -> Result<Vec<VType>> {
    (0..n).map(|_| read_vtype(r)).collect()
}

pub fn decode(info: &[u8]) -> Result<Vec<Frame>> {
    let mut r = Cursor::new(info, 0, "StackMapTable");
    let n = r.u2()?;
    let mut frames = Vec::with_capacity(n as usize);
    let mut previous: Option<u32> = None;
    for _ in 0..n {
        let tag = r.u1()?;
        let (delta, kind) = match tag {
            0..=63 => (tag as u32, FrameKind::Same),
            64..=127 => ((tag - 64) as u32, FrameKind::SameLocals1(read_vtype(&mut r)?)),
            247 => {
                let d = r.u2()? as u32;
                (d, FrameKind::SameLocals1(read_vtype(&mut r)?))
            }
            248..=250 => (r.u2()? as u32, FrameKind::Chop(251 - tag)),
            251 => (r.u2()? as u32, FrameKind::Same),
            252..=254 => {
                let d = r.u2()? as u32;
                (d, FrameKind::Append(read_vtypes(&mut r, (tag - 251) as usize)?))
            }
            255 => {
                let d = r.u2()? as u32;
                let nl = r.u2()? as usize;
                let locals = read_vtypes(&mut r, nl)?;
                let ns = r.u2()? as usize;
                let stack = read_vtypes(&mut r, ns)?;
                (d, FrameKind::Full { locals, stack })
            }
            t => return Err(ClassError::new(format!("StackMapTable: reserved frame type {t}"))),
        };
        let offset = match previous {
            None => delta,
            Some(p) => p + delta + 1,
        };
        previous = Some(offset);
        frames.push(Frame { offset, kind });
    }
    if !r.is_empty() {
        return Err(ClassError::new("StackMapTable: bytes after the last frame"));
    }
    Ok(frames)
}

pub fn encode(frames: &[Frame]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    put_u2(&mut out, frames.len() as u16);
    let mut previous: Option<u32> = None;
    for f in frames {
        let delta = match previous {
            None => f.offset,
            Some(p) if f.offset > p => f.offset - p - 1,
            Some(p) => {
                return Err(ClassError::new(format!("StackMapTable: frame at {} does not follow {p}", f.offset)));
            }
        };
        previous = Some(f.offset);
        let d = u16::try_from(delta).map_err(|_| ClassError::new("StackMapTable: offset delta over 65535"))?;
        match &f.kind {
            FrameKind::Same if d <= 63 => out.push(d as u8),
            FrameKind::Same => {
                out.push(251);
                put_u2(&mut out, d);
            }
            FrameKind::SameLocals1(v) => {
                if d <= 63 {
                    out.push(64 + d as u8);
                } else {
                    out.push(247);
                    put_u2(&mut out, d);
                }
                write_vtype(&mut out, v);
            }
            FrameKind::Chop(k) => {
                out.push(251 - k);
                put_u2(&mut out, d);
            }
            FrameKind::Append(vs) => {
                out.push(251 + vs.len() as u8);
                put_u2(&mut out, d);
                vs.iter().for_each(|v| write_vtype(&mut out, v));
            }
            FrameKind::Full { locals, stack } => {
                out.push(255);
                put_u2(&mut out, d);
                put_u2(&mut out, locals.len() as u16);
                locals.iter().for_each(|v| write_vtype(&mut out, v));
                put_u2(&mut out, stack.len() as u16);
                stack.iter().for_each(|v| write_vtype(&mut out, v));
            }
        }
    }
    Ok(out)
}

/// Moves every frame and every `uninitialized(offset)` through `map` (old offset → new offset).
pub fn relocate(frames: &mut [Frame], map: &dyn Fn(u32) -> Result<u32>) -> Result<()> {
    let fix = |v: &mut VType| -> Result<()> {
        if let VType::Uninitialized(o) = v {
            *o = map(*o)?;
        }
        Ok(())
    };
    for f in frames.iter_mut() {
        f.offset = map(f.offset)?;
        match &mut f.kind {
            FrameKind::Same | FrameKind::Chop(_) => {}
            FrameKind::SameLocals1(v) => fix(v)?,
            FrameKind::Append(vs) => vs.iter_mut().try_for_each(fix)?,
            FrameKind::Full { locals, stack } => {
                locals.iter_mut().try_for_each(fix)?;
                stack.iter_mut().try_for_each(fix)?;
            }
        }
    }
    Ok(())
}
