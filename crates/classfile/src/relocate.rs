//! One method's code with probes inserted: `ldc_w id; invokestatic enter(I)V` at entry,
//! `ldc_w id; invokestatic exit(I)V` before every return, and a catch-all handler at the end that calls
//! `exit` and rethrows. Everything that names a code offset moves with the code: branches (widened when
//! they no longer reach), switch padding, the exception table, StackMapTable frames and their
//! `uninitialized(offset)` entries, LineNumberTable, LocalVariable(Type)Table.
//!
//! The probes are stack neutral (push an int, the call pops it), so no frame's types change; only their
//! offsets. The catch-all's frame has no locals and `Throwable` on the stack: every frame is assignable to
//! it, except in a constructor before `super()`/`this()` returns, where `this` is uninitialized and the
//! verifier wants handlers whose frames carry that flag. A constructor therefore gets two catch-alls: one
//! over the code before the `super()` call with `uninitializedThis` in local 0, one over the code after it.
//! The `super()` call itself is covered by neither (its frame after the call is neither), so an exception
//! thrown by the super constructor leaves without an exit probe; the recorder tolerates missing exits.

use crate::bytes::{ClassError, Cursor, Result, put_u2, put_u4};
use crate::code::{CodeAttribute, Handler};
use crate::constant_pool::ConstantPool;
use crate::frame_inference::{self, FrameState, MethodShape};
use crate::opcodes::{self, ATHROW, GOTO, GOTO_W, INVOKESPECIAL, INVOKESTATIC, Insn, JSR, JSR_W, Kind, LDC_W, NEW};
use crate::stack_map::{self, Frame, FrameKind, VType};

/// Bytes of one probe: `ldc_w` (3) + `invokestatic` (3).
pub const PROBE_LEN: u32 = 6;

/// Constant pool indices the inserted code refers to.
#[derive(Debug, Clone, Copy)]
pub struct ProbeRefs {
    /// CONSTANT_Integer: the method's id.
    pub id: u16,
    /// CONSTANT_Methodref of `enter(I)V` and `exit(I)V`.
    pub enter: u16,
    pub exit: u16,
    /// CONSTANT_Class java/lang/Throwable, for the catch-all's frame.
    pub throwable: u16,
    /// CONSTANT_Utf8 "StackMapTable", for a method that had none (class version 50 and later).
    pub stack_map_name: u16,
}

fn probe(out: &mut Vec<u8>, id: u16, method: u16) {
    out.push(LDC_W);
    put_u2(out, id);
    out.push(INVOKESTATIC);
    put_u2(out, method);
}

/// Where each old instruction lands.
pub(crate) struct Layout {
    /// New offset of instruction i's first byte, its probe included (what branches to it target).
    pub(crate) start: Vec<u32>,
    /// New offset of instruction i's own opcode.
    pub(crate) at: Vec<u32>,
    /// Branches that no longer reach with 16 bits.
    pub(crate) widened: Vec<bool>,
    /// End of the relocated original code, where the catch-all handler starts.
    pub(crate) end: u32,
}

pub(crate) fn size(insn: &Insn, at: u32, widened: bool) -> u32 {
    match &insn.kind {
        Kind::Branch(_) if widened => {
            if opcodes::is_conditional(insn.opcode) {
                8 // if<!cond> +8; goto_w target
            } else {
                5 // goto_w / jsr_w
            }
        }
        Kind::TableSwitch { targets, .. } => 1 + (3 - at % 4) + 12 + 4 * targets.len() as u32,
        Kind::LookupSwitch { pairs, .. } => 1 + (3 - at % 4) + 8 + 8 * pairs.len() as u32,
        _ => insn.len,
    }
}

pub(crate) struct Index {
    of_offset: Vec<u32>,
}

impl Index {
    pub(crate) fn new(insns: &[Insn], code_len: usize) -> Index {
        let mut of_offset = vec![u32::MAX; code_len + 1];
        for (i, insn) in insns.iter().enumerate() {
            of_offset[insn.offset as usize] = i as u32;
        }
        Index { of_offset }
    }

    pub(crate) fn get(&self, old: u32) -> Result<usize> {
        match self.of_offset.get(old as usize) {
            Some(&i) if i != u32::MAX => Ok(i as usize),
            _ => Err(ClassError::new(format!("offset {old} is not the start of an instruction"))),
        }
    }
}

fn lay_out(insns: &[Insn], index: &Index) -> Result<Layout> {
    let n = insns.len();
    let mut l = Layout { start: vec![0; n], at: vec![0; n], widened: vec![false; n], end: 0 };
    // Widening only grows code, so each round widens at least one more branch or is the last.
    loop {
        let mut pos = PROBE_LEN;
        for (i, insn) in insns.iter().enumerate() {
            l.start[i] = pos;
            if insn.kind == Kind::Return {
                pos += PROBE_LEN;
            }
            l.at[i] = pos;
            pos += size(insn, pos, l.widened[i]);
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

/// In a constructor, the instruction that calls `super(…)` or `this(…)`: the first `invokespecial <init>`
/// not paired with an earlier `new` (javac nests `new`…`<init>` pairs in code order, even across branches).
fn super_call(insns: &[Insn], code: &[u8], pool: &ConstantPool) -> Result<Option<usize>> {
    let mut pending_new = 0u32;
    for (i, insn) in insns.iter().enumerate() {
        match insn.opcode {
            NEW => pending_new += 1,
            INVOKESPECIAL => {
                let at = insn.offset as usize;
                let (_, name, _) = pool.member_ref(u16::from_be_bytes([code[at + 1], code[at + 2]]))?;
                if name == "<init>" {
                    if pending_new == 0 {
                        return Ok(Some(i));
                    }
                    pending_new -= 1;
                }
            }
            _ => {}
        }
    }
    Ok(None)
}

/// Adds a frame (at old offsets) after every widened conditional branch that has none, inferred from the
/// last frame before the branch. A frame right after an added one is then written in full: its compact
/// form would be read relative to the added frame's locals rather than those of the frame it followed.
pub(crate) fn add_frames_after_widened_conditionals(
    code: &CodeAttribute,
    insns: &[Insn],
    index: &Index,
    layout: &Layout,
    frames: &mut Vec<Frame>,
    pool: &mut ConstantPool,
    method: &MethodShape,
) -> Result<()> {
    let missing: Vec<usize> = (0..insns.len())
        .filter(|&i| {
            let next = insns[i].offset + insns[i].len;
            layout.widened[i] && opcodes::is_conditional(insns[i].opcode) && !frames.iter().any(|f| f.offset == next)
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let initial = frame_inference::initial_state(pool, method)?;
    let states = frame_inference::expand(frames, &initial)?;
    let mut added = Vec::with_capacity(missing.len());
    for i in missing {
        let branch = &insns[i];
        let next = branch.offset + branch.len;
        // The last frame at or before the branch: between it and the branch the code runs straight.
        let (first, start): (usize, &FrameState) = match frames.iter().rposition(|f| f.offset <= branch.offset) {
            Some(k) => (index.get(frames[k].offset)?, &states[k]),
            None => (0, &initial),
        };
        let s = frame_inference::run(code, insns, first, i, start, pool, method.this_class).map_err(|e| {
            ClassError::new(format!("the branch at offset {} must be widened, and {}", branch.offset, e.message))
        })?;
        added.push(Frame { offset: next, kind: FrameKind::Full { locals: s.locals, stack: s.stack } });
    }
    for f in &added {
        if let Some(k) = frames.iter().position(|g| g.offset > f.offset) {
            frames[k].kind = FrameKind::Full { locals: states[k].locals.clone(), stack: states[k].stack.clone() };
        }
    }
    frames.extend(added);
    frames.sort_by_key(|f| f.offset);
    Ok(())
}

/// A catch-all: the old code range it covers (instruction indices, end exclusive) and whether `this` is
/// still uninitialized there.
struct CatchAll {
    first: usize,
    end: usize,
    uninitialized_this: bool,
}

/// Rewrites `code` with probes for the method whose id is the Integer constant `refs.id`.
pub fn instrument_code(
    code: &CodeAttribute,
    pool: &mut ConstantPool,
    major: u16,
    method: &MethodShape,
    refs: ProbeRefs,
) -> Result<CodeAttribute> {
    let constructor = method.constructor;
    let old = &code.code;
    let insns = opcodes::decode(old)?;
    let index = Index::new(&insns, old.len());
    let layout = lay_out(&insns, &index)?;
    let end = layout.end;
    let catch_alls = if constructor {
        let s = super_call(&insns, old, pool)?
            .ok_or_else(|| ClassError::new("a constructor without a super() or this() call"))?;
        let mut v = vec![CatchAll { first: 0, end: s, uninitialized_this: true }];
        if s + 1 < insns.len() {
            v.push(CatchAll { first: s + 1, end: insns.len(), uninitialized_this: false });
        }
        v
    } else {
        vec![CatchAll { first: 0, end: insns.len(), uninitialized_this: false }]
    };
    let handler_len = PROBE_LEN + 1;
    let new_len = end as usize + handler_len as usize * catch_alls.len();
    if new_len > 65535 {
        return Err(ClassError::new(format!("the code would grow to {new_len} bytes, over the 65535 limit")));
    }
    let target = |old_offset: u32| -> Result<u32> { Ok(layout.start[index.get(old_offset)?]) };
    let range_end = |old_offset: u32| -> Result<u32> {
        if old_offset as usize == old.len() { Ok(end) } else { target(old_offset) }
    };
    // Line and variable ranges that start at 0 keep covering the entry probe.
    let range_start = |old_offset: u32| -> Result<u32> { if old_offset == 0 { Ok(0) } else { target(old_offset) } };

    let mut frames = Vec::new();
    let mut stack_map_at = None;
    let mut attributes = Vec::with_capacity(code.attributes.len() + 1);
    for a in &code.attributes {
        let name = pool.utf8(a.name_index)?;
        match name.as_str() {
            "StackMapTable" => {
                frames = stack_map::decode(&a.info)?;
                stack_map_at = Some(attributes.len());
                attributes.push(a.clone());
            }
            "LineNumberTable" => {
                let mut r = Cursor::new(&a.info, 0, "LineNumberTable");
                let n = r.u2()?;
                let mut info = Vec::with_capacity(a.info.len());
                put_u2(&mut info, n);
                for _ in 0..n {
                    let pc = r.u2()?;
                    let line = r.u2()?;
                    put_u2(&mut info, range_start(pc as u32)? as u16);
                    put_u2(&mut info, line);
                }
                attributes.push(crate::class_file::Attribute { name_index: a.name_index, info });
            }
            "LocalVariableTable" | "LocalVariableTypeTable" => {
                let mut r = Cursor::new(&a.info, 0, "LocalVariableTable");
                let n = r.u2()?;
                let mut info = Vec::with_capacity(a.info.len());
                put_u2(&mut info, n);
                for _ in 0..n {
                    let start = r.u2()? as u32;
                    let length = r.u2()? as u32;
                    let rest = r.bytes(6)?;
                    let new_start = range_start(start)?;
                    let new_end = range_end(start + length)?;
                    put_u2(&mut info, new_start as u16);
                    put_u2(&mut info, (new_end - new_start) as u16);
                    info.extend_from_slice(rest);
                }
                attributes.push(crate::class_file::Attribute { name_index: a.name_index, info });
            }
            // Their targets name code offsets in many shapes; the JVM does not read them, and a stale
            // offset would mislead a tool that does, so they go.
            "RuntimeVisibleTypeAnnotations" | "RuntimeInvisibleTypeAnnotations" => {}
            _ => attributes.push(a.clone()),
        }
    }

    // A conditional branch widened into `if<!cond> +8; goto_w` makes the next instruction a branch
    // target, which needs a frame in a class verified by type checking: where the class has none, the
    // verifier's types there are inferred (see `frame_inference`).
    if major >= 50 {
        add_frames_after_widened_conditionals(code, &insns, &index, &layout, &mut frames, pool, method)?;
    }

    let mut out = Vec::with_capacity(end as usize + handler_len as usize);
    probe(&mut out, refs.id, refs.enter);
    for (i, insn) in insns.iter().enumerate() {
        debug_assert_eq!(out.len() as u32, layout.start[i]);
        if insn.kind == Kind::Return {
            probe(&mut out, refs.id, refs.exit);
        }
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
    }
    debug_assert_eq!(out.len() as u32, end);
    for _ in &catch_alls {
        probe(&mut out, refs.id, refs.exit);
        out.push(ATHROW);
    }
    // A range starts at an instruction's probe, except the first, which starts after the entry probe.
    let new_start = |i: usize| if i == 0 { PROBE_LEN } else { layout.start[i] };
    let new_end = |i: usize| if i == insns.len() { end } else { layout.start[i] };

    let mut handlers = Vec::with_capacity(code.handlers.len() + 1);
    for h in &code.handlers {
        handlers.push(Handler {
            start: target(h.start as u32)? as u16,
            end: range_end(h.end as u32)? as u16,
            handler: target(h.handler as u32)? as u16,
            catch_type: h.catch_type,
        });
    }
    // Last, so that the method's own handlers see their exceptions first.
    for (k, c) in catch_alls.iter().enumerate() {
        let (s, e) = (new_start(c.first), new_end(c.end));
        if s < e {
            let h = end + k as u32 * handler_len;
            // Typed as Throwable rather than 0 ("any"): the same catch, but C2 on JDK 17 crashes resolving
            // the catch type of an "any" handler in java.lang.Object.<init> (index 0 read as a class).
            handlers.push(Handler { start: s as u16, end: e as u16, handler: h as u16, catch_type: refs.throwable });
        }
    }

    if major >= 50 {
        stack_map::relocate(&mut frames, &target)?;
        for (k, c) in catch_alls.iter().enumerate() {
            let locals = if c.uninitialized_this { vec![VType::UninitializedThis] } else { Vec::new() };
            frames.push(Frame {
                offset: end + k as u32 * handler_len,
                kind: FrameKind::Full { locals, stack: vec![VType::Object(refs.throwable)] },
            });
        }
        let info = stack_map::encode(&frames)?;
        match stack_map_at {
            Some(k) => attributes[k].info = info,
            None => attributes.push(crate::class_file::Attribute { name_index: refs.stack_map_name, info }),
        }
    }

    let max_stack = (code.max_stack as u32 + 1).max(2);
    if max_stack > 65535 {
        return Err(ClassError::new("max_stack would exceed 65535"));
    }
    Ok(CodeAttribute { max_stack: max_stack as u16, max_locals: code.max_locals, code: out, handlers, attributes })
}
