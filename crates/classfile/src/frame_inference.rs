//! The verifier's types at one instruction, for a stack map frame the class does not have.
//!
//! Widening a conditional branch into `if<!cond> +8; goto_w target` makes the instruction after it a jump
//! target, and a class verified by type checking (version 50 and later) needs a frame there. javac writes
//! none where only the fall-through arrives, so we derive it: start from the last frame at or before the
//! branch (or the method's implicit first frame) and run the instructions up to the branch as the type
//! checker does (JVMS §4.10.1). Between a frame and the next, code runs straight: after a `goto`, return,
//! `athrow` or switch the next instruction needs a frame of its own, so no merge is ever needed and the types
//! come out exactly as the verifier has them, which is what a frame in the middle of its path must say.

use crate::bytes::{ClassError, Result};
use crate::code::CodeAttribute;
use crate::constant_pool::{self, ConstantPool};
use crate::opcodes::{self, Insn};
use crate::stack_map::{Frame, FrameKind, VType};

/// What the method's implicit first frame is made of (JVMS §4.10.1.6).
#[derive(Debug, Clone, Copy)]
pub struct MethodShape<'a> {
    /// CONSTANT_Class of the method's class.
    pub this_class: u16,
    pub is_static: bool,
    /// `<init>` of a class other than java/lang/Object: `this` starts uninitialized.
    pub constructor: bool,
    pub descriptor: &'a str,
}

/// Locals and stack as lists of frame entries (a long or double is one entry), as a frame says them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameState {
    pub locals: Vec<VType>,
    pub stack: Vec<VType>,
}

fn is_wide(v: &VType) -> bool {
    matches!(v, VType::Long | VType::Double)
}

fn bad(what: impl Into<String>) -> ClassError {
    ClassError::new(format!("cannot infer a stack map frame: {}", what.into()))
}

/// The types of one field descriptor starting at `at`, and where the next begins.
fn field_type(pool: &mut ConstantPool, d: &str, at: usize) -> Result<(VType, usize)> {
    let b = d.as_bytes();
    let mut end = at;
    while b.get(end) == Some(&b'[') {
        end += 1;
    }
    let c = *b.get(end).ok_or_else(|| bad(format!("descriptor {d} ends early")))?;
    if c == b'L' {
        let semi = d[end..].find(';').ok_or_else(|| bad(format!("descriptor {d} has no ';'")))? + end;
        let name = if end == at { &d[at + 1..semi] } else { &d[at..=semi] };
        return Ok((VType::Object(pool.intern_class(name)?), semi + 1));
    }
    if end > at {
        return Ok((VType::Object(pool.intern_class(&d[at..=end])?), end + 1));
    }
    let v = match c {
        b'B' | b'C' | b'I' | b'S' | b'Z' => VType::Integer,
        b'F' => VType::Float,
        b'J' => VType::Long,
        b'D' => VType::Double,
        _ => return Err(bad(format!("descriptor {d}: unknown type {}", c as char))),
    };
    Ok((v, at + 1))
}

/// A method descriptor's argument types and its return type (None for void).
fn method_types(pool: &mut ConstantPool, d: &str) -> Result<(Vec<VType>, Option<VType>)> {
    if !d.starts_with('(') {
        return Err(bad(format!("{d} is not a method descriptor")));
    }
    let mut args = Vec::new();
    let mut at = 1;
    while d.as_bytes().get(at).is_some_and(|&c| c != b')') {
        let (v, next) = field_type(pool, d, at)?;
        args.push(v);
        at = next;
    }
    let ret = if d.get(at + 1..) == Some("V") { None } else { Some(field_type(pool, d, at + 1)?.0) };
    Ok((args, ret))
}

/// The implicit frame at offset 0.
pub fn initial_state(pool: &mut ConstantPool, method: &MethodShape) -> Result<FrameState> {
    let mut locals = Vec::new();
    if !method.is_static {
        locals.push(if method.constructor { VType::UninitializedThis } else { VType::Object(method.this_class) });
    }
    locals.extend(method_types(pool, method.descriptor)?.0);
    Ok(FrameState { locals, stack: Vec::new() })
}

/// Every frame of the table spelled out in full (the compact forms are relative to the frame before).
pub fn expand(frames: &[Frame], initial: &FrameState) -> Result<Vec<FrameState>> {
    let mut previous = initial.locals.clone();
    let mut out = Vec::with_capacity(frames.len());
    for f in frames {
        let state = match &f.kind {
            FrameKind::Same => FrameState { locals: previous.clone(), stack: Vec::new() },
            FrameKind::SameLocals1(v) => FrameState { locals: previous.clone(), stack: vec![v.clone()] },
            FrameKind::Chop(k) => {
                let k = *k as usize;
                if k > previous.len() {
                    return Err(bad(format!("the frame at {} chops {k} of {} locals", f.offset, previous.len())));
                }
                FrameState { locals: previous[..previous.len() - k].to_vec(), stack: Vec::new() }
            }
            FrameKind::Append(vs) => {
                let mut locals = previous.clone();
                locals.extend(vs.iter().cloned());
                FrameState { locals, stack: Vec::new() }
            }
            FrameKind::Full { locals, stack } => FrameState { locals: locals.clone(), stack: stack.clone() },
        };
        previous = state.locals.clone();
        out.push(state);
    }
    Ok(out)
}

/// Entries to slots: a long or double takes its own slot and a `Top` after it, as in the verifier.
fn to_slots(entries: &[VType]) -> Vec<VType> {
    let mut slots = Vec::with_capacity(entries.len() + 2);
    for v in entries {
        slots.push(v.clone());
        if is_wide(v) {
            slots.push(VType::Top);
        }
    }
    slots
}

fn to_entries(slots: &[VType]) -> Vec<VType> {
    let mut entries = Vec::with_capacity(slots.len());
    let mut i = 0;
    while i < slots.len() {
        entries.push(slots[i].clone());
        i += if is_wide(&slots[i]) { 2 } else { 1 };
    }
    entries
}

/// The type checker's state while it runs straight-line code: locals and operand stack in slots.
struct Machine<'p> {
    pool: &'p mut ConstantPool,
    this_class: u16,
    locals: Vec<VType>,
    stack: Vec<VType>,
}

impl Machine<'_> {
    fn push(&mut self, v: VType) {
        let wide = is_wide(&v);
        self.stack.push(v);
        if wide {
            self.stack.push(VType::Top);
        }
    }

    fn pop_slots(&mut self, n: usize, at: u32) -> Result<Vec<VType>> {
        if n > self.stack.len() {
            return Err(bad(format!("the stack underflows at {at}")));
        }
        Ok(self.stack.split_off(self.stack.len() - n))
    }

    /// Pops one value (two slots for a long or double) and returns it.
    fn pop(&mut self, at: u32) -> Result<VType> {
        let top = self.stack.last().ok_or_else(|| bad(format!("the stack underflows at {at}")))?;
        let n = if *top == VType::Top { 2 } else { 1 };
        Ok(self.pop_slots(n, at)?.swap_remove(0))
    }

    fn pop_values(&mut self, types: &[VType], at: u32) -> Result<()> {
        let n: usize = types.iter().map(|t| if is_wide(t) { 2 } else { 1 }).sum();
        self.pop_slots(n, at).map(|_| ())
    }

    fn load(&mut self, n: usize, at: u32) -> Result<()> {
        let v = self.locals.get(n).cloned().ok_or_else(|| bad(format!("local {n} is unset at {at}")))?;
        self.push(v);
        Ok(())
    }

    fn store(&mut self, n: usize, at: u32) -> Result<()> {
        let v = self.pop(at)?;
        let wide = is_wide(&v);
        let need = n + if wide { 2 } else { 1 };
        if self.locals.len() < need {
            self.locals.resize(need, VType::Top);
        }
        // Overwriting the second half of a long or double leaves its first half unusable.
        if n > 0 && is_wide(&self.locals[n - 1]) {
            self.locals[n - 1] = VType::Top;
        }
        self.locals[n] = v;
        if wide {
            self.locals[n + 1] = VType::Top;
        }
        Ok(())
    }

    fn class(&mut self, name: &str) -> Result<VType> {
        Ok(VType::Object(self.pool.intern_class(name)?))
    }

    /// The element type of an `aaload` from an array of type `array`.
    fn component(&mut self, array: &VType, at: u32) -> Result<VType> {
        match array {
            VType::Null => Ok(VType::Null),
            VType::Object(i) => {
                let name = self.pool.class_name(*i)?;
                match name.strip_prefix('[') {
                    Some(c) if c.starts_with('[') => self.class(c),
                    Some(c) if c.starts_with('L') && c.ends_with(';') => self.class(&c[1..c.len() - 1]),
                    _ => Err(bad(format!("aaload at {at} from a {name}"))),
                }
            }
            other => Err(bad(format!("aaload at {at} from a {other:?}"))),
        }
    }

    fn ldc(&mut self, index: u16, at: u32) -> Result<()> {
        let e = self.pool.entry(index)?.clone();
        let v = match e.tag {
            constant_pool::INTEGER => VType::Integer,
            constant_pool::FLOAT => VType::Float,
            constant_pool::LONG => VType::Long,
            constant_pool::DOUBLE => VType::Double,
            constant_pool::STRING => self.class("java/lang/String")?,
            constant_pool::CLASS => self.class("java/lang/Class")?,
            constant_pool::METHOD_TYPE => self.class("java/lang/invoke/MethodType")?,
            constant_pool::METHOD_HANDLE => self.class("java/lang/invoke/MethodHandle")?,
            constant_pool::DYNAMIC => {
                let (_, d) = self.pool.name_and_type(u16::from_be_bytes([e.body[2], e.body[3]]))?;
                field_type(self.pool, &d, 0)?.0
            }
            t => return Err(bad(format!("ldc at {at} of a constant with tag {t}"))),
        };
        self.push(v);
        Ok(())
    }

    /// After `<init>` returns, every copy of the object it constructed has its class.
    fn initialize(&mut self, object: &VType, code: &[u8]) -> Result<()> {
        let class = match object {
            VType::UninitializedThis => VType::Object(self.this_class),
            VType::Uninitialized(new_at) => {
                let a = *new_at as usize;
                match code.get(a..a + 3) {
                    Some([opcodes::NEW, hi, lo]) => VType::Object(u16::from_be_bytes([*hi, *lo])),
                    _ => return Err(bad(format!("uninitialized({new_at}) does not name a new instruction"))),
                }
            }
            _ => return Ok(()),
        };
        for v in self.locals.iter_mut().chain(self.stack.iter_mut()) {
            if v == object {
                *v = class.clone();
            }
        }
        Ok(())
    }

    fn invoke(&mut self, op: u8, index: u16, code: &[u8], at: u32) -> Result<()> {
        let descriptor = if op == INVOKEDYNAMIC {
            let e = self.pool.entry(index)?;
            if e.tag != constant_pool::INVOKE_DYNAMIC {
                return Err(bad(format!("invokedynamic at {at} names entry {index}")));
            }
            let nat = u16::from_be_bytes([e.body[2], e.body[3]]);
            self.pool.name_and_type(nat)?.1
        } else {
            let (_, name, d) = self.pool.member_ref(index)?;
            if name == "<init>" {
                let (args, _) = method_types(self.pool, &d)?;
                self.pop_values(&args, at)?;
                let object = self.pop(at)?;
                return self.initialize(&object, code);
            }
            d
        };
        let (args, ret) = method_types(self.pool, &descriptor)?;
        self.pop_values(&args, at)?;
        if op != INVOKESTATIC && op != INVOKEDYNAMIC {
            self.pop(at)?;
        }
        if let Some(r) = ret {
            self.push(r);
        }
        Ok(())
    }

    fn field(&mut self, op: u8, index: u16, at: u32) -> Result<()> {
        let (_, _, d) = self.pool.member_ref(index)?;
        let (t, _) = field_type(self.pool, &d, 0)?;
        match op {
            GETSTATIC => self.push(t),
            PUTSTATIC => self.pop_values(&[t], at)?,
            GETFIELD => {
                self.pop(at)?;
                self.push(t);
            }
            _ => {
                self.pop_values(&[t], at)?;
                self.pop(at)?;
            }
        }
        Ok(())
    }

    /// Runs one instruction that falls through to the next.
    fn step(&mut self, insn: &Insn, code: &[u8]) -> Result<()> {
        use VType::{Double as D, Float as F, Integer as I, Long as J};
        let at = insn.offset;
        let p = at as usize;
        let u1 = |k: usize| code[p + k] as usize;
        let u2 = |k: usize| u16::from_be_bytes([code[p + k], code[p + k + 1]]);
        let op = insn.opcode;
        match op {
            0x00 => {}
            0x01 => self.push(VType::Null),
            0x02..=0x08 | 0x10 | 0x11 => self.push(I),
            0x09 | 0x0a => self.push(J),
            0x0b..=0x0d => self.push(F),
            0x0e | 0x0f => self.push(D),
            0x12 => self.ldc(u1(1) as u16, at)?,
            0x13 | 0x14 => self.ldc(u2(1), at)?,
            0x15 => self.push(I),
            0x16 => self.push(J),
            0x17 => self.push(F),
            0x18 => self.push(D),
            0x19 => self.load(u1(1), at)?,
            0x1a..=0x1d => self.push(I),
            0x1e..=0x21 => self.push(J),
            0x22..=0x25 => self.push(F),
            0x26..=0x29 => self.push(D),
            0x2a..=0x2d => self.load((op - 0x2a) as usize, at)?,
            0x2e..=0x35 => {
                self.pop(at)?;
                let array = self.pop(at)?;
                let v = match op {
                    0x2f => J,
                    0x30 => F,
                    0x31 => D,
                    0x32 => self.component(&array, at)?,
                    _ => I,
                };
                self.push(v);
            }
            0x36..=0x3a => self.store(u1(1), at)?,
            0x3b..=0x4e => self.store(((op - 0x3b) % 4) as usize, at)?,
            0x4f..=0x56 => {
                self.pop(at)?;
                self.pop(at)?;
                self.pop(at)?;
            }
            0x57 => {
                self.pop_slots(1, at)?;
            }
            0x58 => {
                self.pop_slots(2, at)?;
            }
            // The dup family moves slots, whatever they hold.
            0x59..=0x5f => {
                let (n, x) = match op {
                    0x59 => (1, 0),
                    0x5a => (1, 1),
                    0x5b => (1, 2),
                    0x5c => (2, 0),
                    0x5d => (2, 1),
                    0x5e => (2, 2),
                    _ => (0, 0),
                };
                if op == 0x5f {
                    let s = self.pop_slots(2, at)?;
                    self.stack.extend([s[1].clone(), s[0].clone()]);
                } else {
                    let s = self.pop_slots(n + x, at)?;
                    self.stack.extend_from_slice(&s[x..]);
                    self.stack.extend_from_slice(&s);
                }
            }
            0x60..=0x73 => {
                let t = [I, J, F, D][((op - 0x60) % 4) as usize].clone();
                self.pop(at)?;
                self.pop(at)?;
                self.push(t);
            }
            0x74..=0x77 => {
                let v = self.pop(at)?;
                self.push(v);
            }
            0x78..=0x83 => {
                // Shifts take an int count; and/or/xor two of a kind. Odd opcodes are the long forms.
                self.pop(at)?;
                self.pop(at)?;
                self.push(if (op - 0x78).is_multiple_of(2) { I } else { J });
            }
            0x84 => {}
            0x85..=0x93 => {
                self.pop(at)?;
                let t = match op {
                    0x85 | 0x8c | 0x8f => J,
                    0x86 | 0x89 | 0x90 => F,
                    0x87 | 0x8a | 0x8d => D,
                    _ => I,
                };
                self.push(t);
            }
            0x94..=0x98 => {
                self.pop(at)?;
                self.pop(at)?;
                self.push(I);
            }
            0x99..=0x9e | opcodes::IFNULL | opcodes::IFNONNULL => {
                self.pop(at)?;
            }
            0x9f..=0xa6 => {
                self.pop(at)?;
                self.pop(at)?;
            }
            GETSTATIC..=0xb5 => self.field(op, u2(1), at)?,
            0xb6..=INVOKEDYNAMIC => self.invoke(op, u2(1), code, at)?,
            opcodes::NEW => self.push(VType::Uninitialized(at)),
            0xbc => {
                self.pop(at)?;
                let name = match u1(1) {
                    4 => "[Z",
                    5 => "[C",
                    6 => "[F",
                    7 => "[D",
                    8 => "[B",
                    9 => "[S",
                    10 => "[I",
                    11 => "[J",
                    t => return Err(bad(format!("newarray at {at} of type {t}"))),
                };
                let v = self.class(name)?;
                self.push(v);
            }
            0xbd => {
                self.pop(at)?;
                let element = self.pool.class_name(u2(1))?;
                let name = if element.starts_with('[') { format!("[{element}") } else { format!("[L{element};") };
                let v = self.class(&name)?;
                self.push(v);
            }
            0xbe | 0xc1 => {
                self.pop(at)?;
                self.push(I);
            }
            0xc0 => {
                self.pop(at)?;
                self.push(VType::Object(u2(1)));
            }
            0xc2 | 0xc3 => {
                self.pop(at)?;
            }
            opcodes::WIDE => {
                let n = u16::from_be_bytes([code[p + 2], code[p + 3]]) as usize;
                match code[p + 1] {
                    0x15 => self.push(I),
                    0x16 => self.push(J),
                    0x17 => self.push(F),
                    0x18 => self.push(D),
                    0x19 => self.load(n, at)?,
                    0x36..=0x3a => self.store(n, at)?,
                    0x84 => {}
                    w => return Err(bad(format!("wide {w:#04x} at {at}"))),
                }
            }
            0xc5 => {
                self.pop_slots(u1(3), at)?;
                self.push(VType::Object(u2(1)));
            }
            _ => return Err(bad(format!("the instruction {op:#04x} at {at} does not fall through"))),
        }
        Ok(())
    }
}

const GETSTATIC: u8 = 0xb2;
const PUTSTATIC: u8 = 0xb3;
const GETFIELD: u8 = 0xb4;
const INVOKESTATIC: u8 = 0xb8;
const INVOKEDYNAMIC: u8 = 0xba;

/// The state after `insns[last]` runs and falls through, starting from `start` at `insns[first]`.
pub fn run(
    code: &CodeAttribute,
    insns: &[Insn],
    first: usize,
    last: usize,
    start: &FrameState,
    pool: &mut ConstantPool,
    this_class: u16,
) -> Result<FrameState> {
    let mut m = Machine { pool, this_class, locals: to_slots(&start.locals), stack: to_slots(&start.stack) };
    for insn in &insns[first..=last] {
        m.step(insn, &code.code)?;
    }
    let mut locals = to_entries(&m.locals);
    while locals.last() == Some(&VType::Top) {
        locals.pop();
    }
    Ok(FrameState { locals, stack: to_entries(&m.stack) })
}
