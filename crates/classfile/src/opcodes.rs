//! Instruction decoding: lengths and branch targets (JVMS §6.5), just what relocating code needs.

use crate::bytes::{ClassError, Result};

pub const GOTO: u8 = 0xa7;
pub const JSR: u8 = 0xa8;
pub const TABLESWITCH: u8 = 0xaa;
pub const LOOKUPSWITCH: u8 = 0xab;
pub const IRETURN: u8 = 0xac;
pub const RETURN: u8 = 0xb1;
pub const ATHROW: u8 = 0xbf;
pub const WIDE: u8 = 0xc4;
pub const IFNULL: u8 = 0xc6;
pub const IFNONNULL: u8 = 0xc7;
pub const GOTO_W: u8 = 0xc8;
pub const JSR_W: u8 = 0xc9;
pub const LDC_W: u8 = 0x13;
pub const INVOKESTATIC: u8 = 0xb8;
pub const INVOKESPECIAL: u8 = 0xb7;
pub const NEW: u8 = 0xbb;

/// What an instruction does to control flow, with its targets as old code offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Plain,
    /// ireturn … return: a probe goes before it.
    Return,
    /// `if<cond>`, goto, jsr, ifnull, ifnonnull: a 16-bit offset.
    Branch(u32),
    /// goto_w, jsr_w.
    WideBranch(u32),
    TableSwitch {
        default: u32,
        low: i32,
        targets: Vec<u32>,
    },
    LookupSwitch {
        default: u32,
        pairs: Vec<(i32, u32)>,
    },
}

#[derive(Debug, Clone)]
pub struct Insn {
    pub offset: u32,
    pub opcode: u8,
    pub len: u32,
    pub kind: Kind,
}

pub fn is_conditional(op: u8) -> bool {
    (0x99..=0xa6).contains(&op) || op == IFNULL || op == IFNONNULL
}

/// The conditional branch taken exactly when `op`'s is not.
pub fn inverted(op: u8) -> u8 {
    if op == IFNULL || op == IFNONNULL { op ^ 1 } else { ((op - 0x99) ^ 1) + 0x99 }
}

fn fixed_length(op: u8) -> Option<u32> {
    Some(match op {
        0x00..=0x0f => 1,
        0x10 => 2,
        0x11 => 3,
        0x12 => 2,
        0x13 | 0x14 => 3,
        0x15..=0x19 => 2,
        0x1a..=0x35 => 1,
        0x36..=0x3a => 2,
        0x3b..=0x83 => 1,
        0x84 => 3,
        0x85..=0x98 => 1,
        0x99..=0xa8 => 3,
        0xa9 => 2,
        0xac..=0xb1 => 1,
        0xb2..=0xb8 => 3,
        0xb9 | 0xba => 5,
        0xbb => 3,
        0xbc => 2,
        0xbd => 3,
        0xbe | 0xbf => 1,
        0xc0 | 0xc1 => 3,
        0xc2 | 0xc3 => 1,
        0xc5 => 4,
        0xc6 | 0xc7 => 3,
        0xc8 | 0xc9 => 5,
        _ => return None,
    })
}

fn i32_at(code: &[u8], at: usize) -> Result<i32> {
    code.get(at..at + 4)
        .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| ClassError::new(format!("a switch at offset {at} runs past the end of the code")))
}

fn target(offset: u32, delta: i32, code_len: usize) -> Result<u32> {
    let t = offset as i64 + delta as i64;
    if t < 0 || t >= code_len as i64 {
        return Err(ClassError::new(format!("the branch at offset {offset} targets {t}, outside the code")));
    }
    Ok(t as u32)
}

/// All instructions of `code`, in order.
pub fn decode(code: &[u8]) -> Result<Vec<Insn>> {
    let mut insns = Vec::new();
    let mut pc = 0usize;
    while pc < code.len() {
        let op = code[pc];
        let offset = pc as u32;
        let (len, kind) = match op {
            TABLESWITCH | LOOKUPSWITCH => {
                let base = pc + 1 + (3 - (pc % 4));
                let default = target(offset, i32_at(code, base)?, code.len())?;
                if op == TABLESWITCH {
                    let low = i32_at(code, base + 4)?;
                    let high = i32_at(code, base + 8)?;
                    if high < low {
                        return Err(ClassError::new(format!("tableswitch at offset {pc}: high {high} < low {low}")));
                    }
                    let n = (high as i64 - low as i64 + 1) as usize;
                    if n > code.len() {
                        return Err(ClassError::new(format!("tableswitch at offset {pc} has too many entries")));
                    }
                    let mut targets = Vec::with_capacity(n);
                    for k in 0..n {
                        targets.push(target(offset, i32_at(code, base + 12 + 4 * k)?, code.len())?);
                    }
                    ((base + 12 + 4 * n - pc) as u32, Kind::TableSwitch { default, low, targets })
                } else {
                    let n = i32_at(code, base + 4)?;
                    if n < 0 || n as usize > code.len() {
                        return Err(ClassError::new(format!("lookupswitch at offset {pc} has {n} pairs")));
                    }
                    let mut pairs = Vec::with_capacity(n as usize);
                    for k in 0..n as usize {
                        let key = i32_at(code, base + 8 + 8 * k)?;
                        pairs.push((key, target(offset, i32_at(code, base + 12 + 8 * k)?, code.len())?));
                    }
                    ((base + 8 + 8 * n as usize - pc) as u32, Kind::LookupSwitch { default, pairs })
                }
            }
            WIDE => {
                let next =
                    *code.get(pc + 1).ok_or_else(|| ClassError::new(format!("wide at offset {pc} ends the code")))?;
                (if next == 0x84 { 6 } else { 4 }, Kind::Plain)
            }
            _ => {
                let len = fixed_length(op)
                    .ok_or_else(|| ClassError::new(format!("unknown opcode {op:#04x} at offset {pc}")))?;
                if pc + len as usize > code.len() {
                    return Err(ClassError::new(format!(
                        "the instruction at offset {pc} runs past the end of the code"
                    )));
                }
                let kind = match op {
                    0x99..=0xa8 | IFNULL | IFNONNULL => {
                        let d = i16::from_be_bytes([code[pc + 1], code[pc + 2]]) as i32;
                        Kind::Branch(target(offset, d, code.len())?)
                    }
                    GOTO_W | JSR_W => Kind::WideBranch(target(offset, i32_at(code, pc + 1)?, code.len())?),
                    IRETURN..=RETURN => Kind::Return,
                    _ => Kind::Plain,
                };
                (len, kind)
            }
        };
        if pc + len as usize > code.len() {
            return Err(ClassError::new(format!("the instruction at offset {pc} runs past the end of the code")));
        }
        insns.push(Insn { offset, opcode: op, len, kind });
        pc += len as usize;
    }
    Ok(insns)
}
