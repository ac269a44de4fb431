//! The rewrite heap=sites' `alloc_probe=y` needs: a call to a static probe with each new object, right
//! after the bytecode that made it, as the old HPROF's java_crw_demo did.
//!
//! - `newarray`, `anewarray`: `dup; invokestatic object(Object)V` after the instruction.
//! - `multianewarray` of n dimensions: `dup; sipush n; invokestatic arrays(Object, int)V`, so that the
//!   probe can count the inner arrays the instruction made too.
//! - `new C`: the object cannot be passed before its constructor ran, so the probe goes after the
//!   `invokespecial C.<init>` that initialises it, where javac's `new C; dup; …; invokespecial` leaves the
//!   other copy on top of the stack. `new`/`<init>` pairs nest in code order (javac's shape, also across
//!   branches); a `new` not followed by `dup`, or a pair whose classes differ, gets no probe and is named.
//!
//! Every probe is inserted after an instruction that falls through, leaves the stack as it was and
//! needs two more stack slots at most: branch targets, handlers and stack map frames keep naming the
//! instructions they named, only at new offsets (branches that no longer reach are widened as in
//! [`crate::relocate`]).

use crate::bytes::{ClassError, Cursor, Result, put_u2, put_u4};
use crate::class_file::{ACC_MODULE, ACC_NATIVE, ACC_STATIC, Attribute, ClassFile};
use crate::code::{CodeAttribute, Handler};
use crate::constant_pool::ConstantPool;
use crate::frame_inference::MethodShape;
use crate::instrument::MethodName;
use crate::opcodes::{self, GOTO, GOTO_W, INVOKESPECIAL, INVOKESTATIC, Insn, JSR, JSR_W, Kind, NEW};
use crate::relocate::{Index, Layout, add_frames_after_widened_conditionals, size};
use crate::stack_map;

const NEWARRAY: u8 = 0xbc;
const ANEWARRAY: u8 = 0xbd;
const MULTIANEWARRAY: u8 = 0xc5;
const DUP: u8 = 0x59;
const DUP_X1: u8 = 0x5a;
const SWAP: u8 = 0x5f;
const SIPUSH: u8 = 0x11;

/// The static methods the probes call.
#[derive(Debug, Clone, Copy)]
pub struct AllocProbes<'a> {
    /// Internal name, e.g. `java/lang/HprofAllocs`.
    pub class: &'a str,
    /// `(Ljava/lang/Object;)V`: one new object or array.
    pub object: &'a str,
    /// `(Ljava/lang/Object;I)V`: a `multianewarray` array and its dimensions.
    pub arrays: &'a str,
}

pub const OBJECT_DESCRIPTOR: &str = "(Ljava/lang/Object;)V";
pub const ARRAYS_DESCRIPTOR: &str = "(Ljava/lang/Object;I)V";

#[derive(Debug, Clone)]
pub struct AllocInstrumented {
    /// The new class file; the input's bytes when nothing was rewritten.
    pub bytes: Vec<u8>,
    /// The class's internal name.
    pub class: String,
    /// Allocating instructions given a probe.
    pub probes: usize,
    /// Allocations left without a probe, and why, by method (a whole method when it cannot be rewritten).
    pub skipped: Vec<(MethodName, String)>,
}

/// Constant pool indices of the two probes.
#[derive(Debug, Clone, Copy)]
struct Refs {
    object: u16,
    arrays: u16,
}

/// Inserts allocation probes into every method of `class_bytes` that allocates.
pub fn instrument_allocations(class_bytes: &[u8], probes: &AllocProbes) -> Result<AllocInstrumented> {
    let mut class = ClassFile::parse(class_bytes)?;
    if class.access & ACC_MODULE != 0 {
        return Err(ClassError::new("a module-info class has no code"));
    }
    let name = class.name()?;
    if name == probes.class {
        return Err(ClassError::new("the probes' own class"));
    }
    let mut total = 0;
    let mut skipped = Vec::new();
    let mut refs: Option<Refs> = None;
    for m in 0..class.methods.len() {
        let method = &class.methods[m];
        if method.access & ACC_NATIVE != 0 {
            continue;
        }
        let Some((code_at, code_attr)) = class.find_attribute(&method.attributes, "Code") else { continue };
        let mname = MethodName {
            name: class.pool.utf8(method.name_index)?,
            descriptor: class.pool.utf8(method.descriptor_index)?,
        };
        let code = match CodeAttribute::parse(&code_attr.info) {
            Ok(c) => c,
            Err(e) => {
                skipped.push((mname, e.message));
                continue;
            }
        };
        if !code.code.iter().any(|&b| matches!(b, NEW | NEWARRAY | ANEWARRAY | MULTIANEWARRAY)) {
            continue; // A byte that looks like one may be an operand: the decoder below is the judge.
        }
        let plan = match plan(&code, &class.pool) {
            Ok(p) => p,
            Err(e) => {
                skipped.push((mname, e.message));
                continue;
            }
        };
        for why in &plan.unpaired {
            skipped.push((mname.clone(), why.clone()));
        }
        if plan.inserts.is_empty() {
            continue;
        }
        let r = match refs {
            Some(r) => r,
            None => {
                let r = Refs {
                    object: class.pool.intern_methodref(probes.class, probes.object, OBJECT_DESCRIPTOR)?,
                    arrays: class.pool.intern_methodref(probes.class, probes.arrays, ARRAYS_DESCRIPTOR)?,
                };
                refs = Some(r);
                r
            }
        };
        let shape = MethodShape {
            this_class: class.this_class,
            is_static: method.access & ACC_STATIC != 0,
            constructor: mname.name == "<init>" && name != "java/lang/Object",
            descriptor: &mname.descriptor,
        };
        let n = plan.inserts.len();
        match insert_probes(&code, &mut class.pool, class.major, &shape, &plan, r) {
            Ok(new_code) => {
                class.methods[m].attributes[code_at].info = new_code.write();
                total += n;
            }
            Err(e) => skipped.push((mname, e.message)),
        }
    }
    let bytes = if total == 0 { class_bytes.to_vec() } else { class.write() };
    Ok(AllocInstrumented { bytes, class: name, probes: total, skipped })
}

/// What goes after which instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    Object,
    /// A `multianewarray` of this many dimensions.
    Arrays(u8),
}

impl Probe {
    fn len(self) -> u32 {
        match self {
            Probe::Object => 4,    // dup; invokestatic
            Probe::Arrays(_) => 7, // dup; sipush n; invokestatic
        }
    }
}

struct Plan {
    insns: Vec<Insn>,
    /// (instruction index, probe after it), in code order.
    inserts: Vec<(usize, Probe)>,
    /// Allocations that get no probe, and why.
    unpaired: Vec<String>,
}

fn u2_at(code: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([code[at], code[at + 1]])
}

/// Where the probes go: after each array allocation, and after each `<init>` call paired with a `new`.
fn plan(code: &CodeAttribute, pool: &ConstantPool) -> Result<Plan> {
    let old = &code.code;
    let insns = opcodes::decode(old)?;
    let mut inserts = Vec::new();
    let mut unpaired = Vec::new();
    // The `new`s whose `<init>` has not come yet: their instruction index, if followed by `dup`.
    let mut pending: Vec<Option<usize>> = Vec::new();
    for (i, insn) in insns.iter().enumerate() {
        let at = insn.offset as usize;
        match insn.opcode {
            NEWARRAY | ANEWARRAY => inserts.push((i, Probe::Object)),
            MULTIANEWARRAY => inserts.push((i, Probe::Arrays(old[at + 3]))),
            NEW => {
                // `new; dup`, or `new; dup_x1; swap` (an argument already on the stack, as in reflection's
                // generated accessors): either way the other copy is on top once `<init>` returned.
                let op = |k: usize| insns.get(i + k).map(|n| n.opcode);
                let dup_next = op(1) == Some(DUP) || (op(1) == Some(DUP_X1) && op(2) == Some(SWAP));
                if !dup_next {
                    unpaired.push(format!("new at offset {at} is not followed by dup"));
                }
                pending.push(dup_next.then_some(i));
            }
            INVOKESPECIAL => {
                let (class, name, _) = pool.member_ref(u2_at(old, at + 1))?;
                if name != "<init>" {
                    continue;
                }
                // With none pending, this is a constructor's super() or this() call.
                let Some(paired) = pending.pop() else { continue };
                let Some(new_at) = paired else { continue };
                let new_class = u2_at(old, insns[new_at].offset as usize + 1);
                if new_class == class || pool.class_name(new_class)? == pool.class_name(class)? {
                    inserts.push((i, Probe::Object));
                } else {
                    unpaired.push(format!("new at offset {} is not paired with its <init>", insns[new_at].offset));
                }
            }
            _ => {}
        }
    }
    for p in pending.into_iter().flatten() {
        unpaired.push(format!("new at offset {} has no <init> after it", insns[p].offset));
    }
    Ok(Plan { insns, inserts, unpaired })
}

fn lay_out(insns: &[Insn], after: &[u32], index: &Index) -> Result<Layout> {
    let n = insns.len();
    let mut l = Layout { start: vec![0; n], at: vec![0; n], widened: vec![false; n], end: 0 };
    loop {
        let mut pos = 0;
        for (i, insn) in insns.iter().enumerate() {
            l.start[i] = pos;
            l.at[i] = pos;
            pos += size(insn, pos, l.widened[i]) + after[i];
        }
        l.end = pos;
        let mut changed = false;
        for (i, insn) in insns.iter().enumerate() {
            if let Kind::Branch(t) = insn.kind
                && !l.widened[i]
            {
                let d = l.start[index.get(t)?] as i64 - l.at[i] as i64;
                if d < i16::MIN as i64 || d > i16::MAX as i64 {
                    l.widened[i] = true;
                    changed = true;
                }
            }
        }
        if !changed {
            return Ok(l);
        }
    }
}

fn emit_probe(out: &mut Vec<u8>, probe: Probe, refs: Refs) {
    out.push(DUP);
    match probe {
        Probe::Object => {
            out.push(INVOKESTATIC);
            put_u2(out, refs.object);
        }
        Probe::Arrays(n) => {
            out.push(SIPUSH);
            put_u2(out, n as u16);
            out.push(INVOKESTATIC);
            put_u2(out, refs.arrays);
        }
    }
}

/// Moves a LineNumberTable or LocalVariable(Type)Table through `map`.
fn relocate_table(
    a: &Attribute,
    name: &str,
    map: &dyn Fn(u32) -> Result<u32>,
    end: u32,
    old_len: u32,
) -> Result<Attribute> {
    let mut r = Cursor::new(&a.info, 0, "a code table");
    let n = r.u2()?;
    let mut info = Vec::with_capacity(a.info.len());
    put_u2(&mut info, n);
    for _ in 0..n {
        if name == "LineNumberTable" {
            let pc = r.u2()?;
            let line = r.u2()?;
            put_u2(&mut info, map(pc as u32)? as u16);
            put_u2(&mut info, line);
        } else {
            let start = r.u2()? as u32;
            let length = r.u2()? as u32;
            let rest = r.bytes(6)?;
            let new_start = map(start)?;
            let new_end = if start + length == old_len { end } else { map(start + length)? };
            put_u2(&mut info, new_start as u16);
            put_u2(&mut info, (new_end - new_start) as u16);
            info.extend_from_slice(rest);
        }
    }
    Ok(Attribute { name_index: a.name_index, info })
}

fn insert_probes(
    code: &CodeAttribute,
    pool: &mut ConstantPool,
    major: u16,
    method: &MethodShape,
    plan: &Plan,
    refs: Refs,
) -> Result<CodeAttribute> {
    let insns = &plan.insns;
    let old = &code.code;
    let mut after = vec![0u32; insns.len()];
    let mut probe_after = vec![None; insns.len()];
    for &(i, p) in &plan.inserts {
        after[i] = p.len();
        probe_after[i] = Some(p);
    }
    let index = Index::new(insns, old.len());
    let layout = lay_out(insns, &after, &index)?;
    let end = layout.end;
    if end > 65535 {
        return Err(ClassError::new(format!("the code would grow to {end} bytes, over the 65535 limit")));
    }
    let target = |old_offset: u32| -> Result<u32> { Ok(layout.start[index.get(old_offset)?]) };
    let range_end = |old_offset: u32| -> Result<u32> {
        if old_offset as usize == old.len() { Ok(end) } else { target(old_offset) }
    };

    let mut frames = Vec::new();
    let mut stack_map_at = None;
    let mut attributes = Vec::with_capacity(code.attributes.len());
    for a in &code.attributes {
        let name = pool.utf8(a.name_index)?;
        match name.as_str() {
            "StackMapTable" => {
                frames = stack_map::decode(&a.info)?;
                stack_map_at = Some(attributes.len());
                attributes.push(a.clone());
            }
            "LineNumberTable" | "LocalVariableTable" | "LocalVariableTypeTable" => {
                attributes.push(relocate_table(a, &name, &target, end, old.len() as u32)?);
            }
            // As in `relocate`: their offsets come in many shapes and the JVM does not read them.
            "RuntimeVisibleTypeAnnotations" | "RuntimeInvisibleTypeAnnotations" => {}
            _ => attributes.push(a.clone()),
        }
    }
    if major >= 50 {
        add_frames_after_widened_conditionals(code, insns, &index, &layout, &mut frames, pool, method)?;
    }

    let mut out = Vec::with_capacity(end as usize);
    for (i, insn) in insns.iter().enumerate() {
        debug_assert_eq!(out.len() as u32, layout.start[i]);
        let at = layout.at[i];
        let rel = |t: u32| -> Result<i32> { Ok(target(t)? as i32 - at as i32) };
        match &insn.kind {
            Kind::Plain | Kind::Return => {
                out.extend_from_slice(&old[insn.offset as usize..(insn.offset + insn.len) as usize]);
            }
            Kind::Branch(t) if !layout.widened[i] => {
                out.push(insn.opcode);
                put_u2(&mut out, rel(*t)? as i16 as u16);
            }
            Kind::Branch(t) if insn.opcode == GOTO || insn.opcode == JSR => {
                out.push(if insn.opcode == GOTO { GOTO_W } else { JSR_W });
                put_u4(&mut out, rel(*t)? as u32);
            }
            Kind::Branch(t) => {
                out.push(opcodes::inverted(insn.opcode));
                put_u2(&mut out, 8);
                out.push(GOTO_W);
                put_u4(&mut out, (rel(*t)? - 3) as u32);
            }
            Kind::WideBranch(t) => {
                out.push(insn.opcode);
                put_u4(&mut out, rel(*t)? as u32);
            }
            Kind::TableSwitch { default, low, targets } => {
                out.push(insn.opcode);
                out.resize(out.len() + (3 - at % 4) as usize, 0);
                put_u4(&mut out, rel(*default)? as u32);
                put_u4(&mut out, *low as u32);
                put_u4(&mut out, (*low as i64 + targets.len() as i64 - 1) as i32 as u32);
                for t in targets {
                    put_u4(&mut out, rel(*t)? as u32);
                }
            }
            Kind::LookupSwitch { default, pairs } => {
                out.push(insn.opcode);
                out.resize(out.len() + (3 - at % 4) as usize, 0);
                put_u4(&mut out, rel(*default)? as u32);
                put_u4(&mut out, pairs.len() as u32);
                for (key, t) in pairs {
                    put_u4(&mut out, *key as u32);
                    put_u4(&mut out, rel(*t)? as u32);
                }
            }
        }
        if let Some(p) = probe_after[i] {
            emit_probe(&mut out, p, refs);
        }
    }
    debug_assert_eq!(out.len() as u32, end);

    let mut handlers = Vec::with_capacity(code.handlers.len());
    for h in &code.handlers {
        handlers.push(Handler {
            start: target(h.start as u32)? as u16,
            end: range_end(h.end as u32)? as u16,
            handler: target(h.handler as u32)? as u16,
            catch_type: h.catch_type,
        });
    }
    if major >= 50 {
        stack_map::relocate(&mut frames, &target)?;
        if !frames.is_empty() || stack_map_at.is_some() {
            let info = stack_map::encode(&frames)?;
            match stack_map_at {
                Some(k) => attributes[k].info = info,
                None => {
                    let name_index = pool.intern_utf8("StackMapTable")?;
                    attributes.push(Attribute { name_index, info });
                }
            }
        }
    }
    let extra = if plan.inserts.iter().any(|(_, p)| matches!(p, Probe::Arrays(_))) { 2 } else { 1 };
    let max_stack = code.max_stack as u32 + extra;
    if max_stack > 65535 {
        return Err(ClassError::new("max_stack would exceed 65535"));
    }
    Ok(CodeAttribute { max_stack: max_stack as u16, max_locals: code.max_locals, code: out, handlers, attributes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_lengths_match_what_is_emitted() {
        let refs = Refs { object: 7, arrays: 9 };
        for p in [Probe::Object, Probe::Arrays(3)] {
            let mut out = Vec::new();
            emit_probe(&mut out, p, refs);
            assert_eq!(out.len() as u32, p.len());
        }
    }
}
