//! The rewriter on class files built here byte by byte: round trips, offsets after insertion, widened
//! branches, switch padding, exception tables, line and variable tables, stack map frames. No JVM.

use classfile::code::CodeAttribute;
use classfile::opcodes::{self, Kind};
use classfile::stack_map::{self, FrameKind, VType};
use classfile::{ClassFile, MethodName, Probes, instrument};

const PROBES: Probes = Probes { class: "hprof/Probe", enter: "enter", exit: "exit" };

/// A class `T` with one static method `m()V` (or `<init>`), with the given code, handlers and code
/// attributes (built against the pool this builder lays out).
struct Builder {
    pool: Vec<Vec<u8>>,
}

impl Builder {
    fn new() -> Builder {
        Builder { pool: Vec::new() }
    }
    fn add(&mut self, entry: Vec<u8>) -> u16 {
        self.pool.push(entry);
        self.pool.len() as u16
    }
    fn utf8(&mut self, s: &str) -> u16 {
        let mut e = vec![1];
        e.extend_from_slice(&(s.len() as u16).to_be_bytes());
        e.extend_from_slice(s.as_bytes());
        self.add(e)
    }
    fn class(&mut self, name: &str) -> u16 {
        let u = self.utf8(name);
        self.add(vec![7, (u >> 8) as u8, u as u8])
    }
    fn methodref(&mut self, class: u16, name: &str, desc: &str) -> u16 {
        let n = self.utf8(name);
        let d = self.utf8(desc);
        let nat = self.add(vec![12, (n >> 8) as u8, n as u8, (d >> 8) as u8, d as u8]);
        self.add(vec![10, (class >> 8) as u8, class as u8, (nat >> 8) as u8, nat as u8])
    }
    fn build(
        mut self,
        major: u16,
        method: &str,
        code: &[u8],
        handlers: &[[u16; 4]],
        attrs: &[(&str, Vec<u8>)],
    ) -> Vec<u8> {
        let this = self.class("T");
        let sup = self.class("java/lang/Object");
        let name = self.utf8(method);
        let desc = self.utf8("()V");
        let code_name = self.utf8("Code");
        let attr_names: Vec<u16> = attrs.iter().map(|(n, _)| self.utf8(n)).collect();
        let mut b = vec![0xCA, 0xFE, 0xBA, 0xBE, 0, 0];
        b.extend_from_slice(&major.to_be_bytes());
        b.extend_from_slice(&(self.pool.len() as u16 + 1).to_be_bytes());
        for e in &self.pool {
            b.extend_from_slice(e);
        }
        let u2 = |b: &mut Vec<u8>, v: u16| b.extend_from_slice(&v.to_be_bytes());
        u2(&mut b, 0x21);
        u2(&mut b, this);
        u2(&mut b, sup);
        u2(&mut b, 0); // interfaces
        u2(&mut b, 0); // fields
        u2(&mut b, 1); // methods
        u2(&mut b, if method == "<init>" { 1 } else { 9 });
        u2(&mut b, name);
        u2(&mut b, desc);
        u2(&mut b, 1);
        let mut c = Vec::new();
        u2(&mut c, 4);
        u2(&mut c, 4);
        c.extend_from_slice(&(code.len() as u32).to_be_bytes());
        c.extend_from_slice(code);
        u2(&mut c, handlers.len() as u16);
        for h in handlers {
            h.iter().for_each(|&v| u2(&mut c, v));
        }
        u2(&mut c, attrs.len() as u16);
        for ((_, info), n) in attrs.iter().zip(attr_names) {
            u2(&mut c, n);
            c.extend_from_slice(&(info.len() as u32).to_be_bytes());
            c.extend_from_slice(info);
        }
        u2(&mut b, code_name);
        b.extend_from_slice(&(c.len() as u32).to_be_bytes());
        b.extend_from_slice(&c);
        u2(&mut b, 0); // class attributes
        b
    }
}

fn rewrite(bytes: &[u8]) -> classfile::Instrumented {
    let mut next = 41;
    instrument(bytes, &PROBES, &mut |_, _: &MethodName| {
        next += 1;
        next
    })
    .expect("instrument")
}

fn code_of(bytes: &[u8]) -> (ClassFile, CodeAttribute) {
    let class = ClassFile::parse(bytes).unwrap();
    let m = &class.methods[0];
    let (_, a) = class.find_attribute(&m.attributes, "Code").unwrap();
    let code = CodeAttribute::parse(&a.info).unwrap();
    (class, code)
}

fn attribute(class: &ClassFile, code: &CodeAttribute, name: &str) -> Option<Vec<u8>> {
    class.find_attribute(&code.attributes, name).map(|(_, a)| a.info.clone())
}

/// The probe sequences in the code: (offset, "enter"/"exit").
fn probes_in(class: &ClassFile, code: &[u8]) -> Vec<(u32, String)> {
    let insns = opcodes::decode(code).unwrap();
    let mut v = Vec::new();
    for w in insns.windows(2) {
        if w[0].opcode == opcodes::LDC_W && w[1].opcode == opcodes::INVOKESTATIC {
            let at = w[1].offset as usize;
            let (_, name, desc) = class.pool.member_ref(u16::from_be_bytes([code[at + 1], code[at + 2]])).unwrap();
            assert_eq!(desc, "(I)V");
            v.push((w[0].offset, name));
        }
    }
    v
}

#[test]
fn parse_then_write_gives_the_same_bytes() {
    let b = Builder::new().build(52, "m", &[0x00, 0xb1], &[], &[]);
    assert_eq!(ClassFile::parse(&b).unwrap().write(), b);
}

#[test]
fn truncated_and_foreign_bytes_are_refused_with_a_reason() {
    let b = Builder::new().build(52, "m", &[0x00, 0xb1], &[], &[]);
    for cut in [3, 9, 20, b.len() - 1] {
        let e = instrument(&b[..cut], &PROBES, &mut |_, _| 1).unwrap_err();
        assert!(e.message.contains(" remain (at byte offset "), "{cut}: {}", e.message);
    }
    // The constant pool's count is cut after its first byte: what, how many bytes and where are named.
    let e = instrument(&b[..9], &PROBES, &mut |_, _| 1).unwrap_err();
    assert_eq!(e.message, "class file: needs 2 more bytes but only 1 remain (at byte offset 8)");
    assert!(instrument(b"PK\x03\x04", &PROBES, &mut |_, _| 1).unwrap_err().message.contains("not a class file"));
}

#[test]
fn probes_at_entry_before_each_return_and_in_a_catch_all() {
    // 0: iconst_0; 1: ifeq +5 (→6); 4: nop; 5: return; 6: return
    let code = [0x03, 0x99, 0x00, 0x05, 0x00, 0xb1, 0xb1];
    let smt = {
        let mut s = vec![0, 1];
        s.push(6); // same_frame at 6
        s
    };
    let b = Builder::new().build(52, "m", &code, &[], &[("StackMapTable", smt)]);
    let r = rewrite(&b);
    assert_eq!(r.methods.len(), 1);
    assert_eq!(r.methods[0].1, 42);
    let (class, c) = code_of(&r.bytes);
    let got = probes_in(&class, &c.code);
    // entry probe at 0; old 0..5 now 6..11; probe before return at old 5 → 11, the return at 17;
    // old 6 → probe at 18, return at 24; catch-all at 25: probe, athrow.
    assert_eq!(got, vec![(0, "enter".into()), (11, "exit".into()), (18, "exit".into()), (25, "exit".into())]);
    assert_eq!(c.code.len(), 32);
    assert_eq!(c.code[31], opcodes::ATHROW);
    // The branch now jumps to the probe before the second return.
    let insns = opcodes::decode(&c.code).unwrap();
    let ifeq = insns.iter().find(|i| i.opcode == 0x99).unwrap();
    assert_eq!((ifeq.offset, ifeq.kind.clone()), (7, Kind::Branch(18)));
    assert_eq!(c.handlers.len(), 1);
    let h = c.handlers[0];
    assert_eq!((h.start, h.end, h.handler), (6, 25, 25));
    assert_eq!(class.pool.class_name(h.catch_type).unwrap(), "java/lang/Throwable");
    let frames = stack_map::decode(&attribute(&class, &c, "StackMapTable").unwrap()).unwrap();
    assert_eq!(frames.len(), 2);
    assert_eq!((frames[0].offset, &frames[0].kind), (18, &FrameKind::Same));
    assert_eq!(frames[1].offset, 25);
    let FrameKind::Full { locals, stack } = &frames[1].kind else { panic!("{:?}", frames[1]) };
    assert!(locals.is_empty());
    assert_eq!(
        class
            .pool
            .class_name(match stack[..] {
                [VType::Object(i)] => i,
                _ => panic!(),
            })
            .unwrap(),
        "java/lang/Throwable"
    );
    assert!(c.max_stack >= 2);
}

#[test]
fn a_loop_back_to_offset_zero_does_not_repeat_the_entry_probe() {
    // 0: goto 0 — an endless loop at the method's start
    let code = [0xa7, 0x00, 0x00];
    let b = Builder::new().build(49, "m", &code, &[], &[]);
    let (_, c) = code_of(&rewrite(&b).bytes);
    let insns = opcodes::decode(&c.code).unwrap();
    assert_eq!((insns[2].offset, insns[2].kind.clone()), (6, Kind::Branch(6)));
}

#[test]
fn switch_padding_follows_the_new_offsets() {
    // 0: iconst_0; 1: tableswitch (pad 2) default→+N, low 0, high 1, targets; then returns
    let mut code = vec![0x03, 0xaa, 0, 0];
    let after = 4 + 12 + 8; // 24: first return
    let rel = |t: i32| (t - 1).to_be_bytes();
    code.extend_from_slice(&rel(after));
    code.extend_from_slice(&0i32.to_be_bytes());
    code.extend_from_slice(&1i32.to_be_bytes());
    code.extend_from_slice(&rel(after));
    code.extend_from_slice(&rel(after + 1));
    code.push(0xb1); // 24
    code.push(0xb1); // 25
    let b = Builder::new().build(49, "m", &code, &[], &[]);
    let (_, c) = code_of(&rewrite(&b).bytes);
    let insns = opcodes::decode(&c.code).unwrap();
    let sw = insns.iter().find(|i| i.opcode == opcodes::TABLESWITCH).unwrap();
    assert_eq!(sw.offset, 7);
    // tableswitch at 7: pad 0, 12 + 8 bytes → 28; probe + return at 28..35; probe + return 35..42
    assert_eq!(sw.kind, Kind::TableSwitch { default: 28, low: 0, targets: vec![28, 35] });
}

#[test]
fn exception_table_line_numbers_and_local_variables_move_with_the_code() {
    // 0: nop; 1: nop; 2: return; 3: athrow (handler), handler [0,2) → 3
    let code = [0x00, 0x00, 0xb1, 0xbf];
    let lnt = vec![0, 2, 0, 0, 0, 10, 0, 1, 0, 11];
    // one variable over [1, 4)
    let lvt = vec![0, 1, 0, 1, 0, 3, 0, 1, 0, 1, 0, 0];
    let b =
        Builder::new().build(49, "m", &code, &[[0, 2, 3, 0]], &[("LineNumberTable", lnt), ("LocalVariableTable", lvt)]);
    let (class, c) = code_of(&rewrite(&b).bytes);
    // old 0→6, 1→7, 2→8 (probe) return 14, 3→15; end of original code 16
    let h = c.handlers[0];
    assert_eq!((h.start, h.end, h.handler), (6, 8, 15));
    let lnt = attribute(&class, &c, "LineNumberTable").unwrap();
    assert_eq!(lnt, vec![0, 2, 0, 0, 0, 10, 0, 7, 0, 11]);
    let lvt = attribute(&class, &c, "LocalVariableTable").unwrap();
    assert_eq!(&lvt[2..6], &[0, 7, 0, 9]);
}

#[test]
fn a_branch_that_no_longer_reaches_becomes_goto_w() {
    // 0: goto +32767 (→ 32767: return); 3: return, whose probe pushes the target out of reach
    let mut code = vec![0xa7];
    code.extend_from_slice(&32767i16.to_be_bytes());
    code.push(0xb1);
    code.resize(32767, 0x00);
    code.push(0xb1);
    let b = Builder::new().build(49, "m", &code, &[], &[]);
    let (class, c) = code_of(&rewrite(&b).bytes);
    let insns = opcodes::decode(&c.code).unwrap();
    assert_eq!((insns[2].offset, insns[2].opcode), (6, opcodes::GOTO_W));
    // goto_w is 2 bytes longer, the return at 3 got a probe: old 32767 → 32767 + 6 + 2 + 6
    let target = 32767 + 14;
    assert_eq!(insns[2].kind, Kind::WideBranch(target));
    assert_eq!(probes_in(&class, &c.code)[2].0, target);
}

#[test]
fn a_conditional_that_no_longer_reaches_is_inverted_over_a_goto_w() {
    // 0: iconst_0; 1: ifne → 32766 (return); 4: return; nops; 32766: return
    let mut code = vec![0x03, 0x9a];
    code.extend_from_slice(&32765i16.to_be_bytes());
    code.push(0xb1);
    code.resize(32766, 0x00);
    code.push(0xb1);
    let b = Builder::new().build(49, "m", &code, &[], &[]);
    let (_, c) = code_of(&rewrite(&b).bytes);
    let insns = opcodes::decode(&c.code).unwrap();
    // 6: iconst_0; 7: ifeq +8 → 15; 10: goto_w → the probe before the last return
    assert_eq!((insns[3].offset, insns[3].opcode, insns[3].kind.clone()), (7, 0x99, Kind::Branch(15)));
    assert_eq!(insns[4].opcode, opcodes::GOTO_W);
    let last_probe = c.code.len() as u32 - 7 - 7;
    assert_eq!(insns[4].kind, Kind::WideBranch(last_probe));
}

#[test]
fn a_widened_conditional_without_a_frame_after_it_gets_an_inferred_one() {
    let mut b = Builder::new();
    let obj = b.class("java/lang/Object");
    // 0: new Object; 3: dup; 4: lconst_1; 5: lstore_0; 6: iconst_0; 7: ifne → far; 10: pop; pop; return;
    // 13: nops (a `same` frame); far: pop; pop; return (a full frame: [long] [uninit(0), uninit(0)])
    let far = 7 + 32765u32;
    let mut code = vec![0xbb, (obj >> 8) as u8, obj as u8, 0x59, 0x0a, 0x3f, 0x03, 0x9a];
    code.extend_from_slice(&32765i16.to_be_bytes());
    code.extend_from_slice(&[0x57, 0x57, 0xb1]);
    code.resize(far as usize, 0x00);
    code.extend_from_slice(&[0x57, 0x57, 0xb1]);
    let mut smt = vec![0, 2, 13, 255];
    smt.extend_from_slice(&((far - 13 - 1) as u16).to_be_bytes());
    smt.extend_from_slice(&[0, 1, 4, 0, 2, 8, 0, 0, 8, 0, 0]);
    let bytes = b.build(52, "m", &code, &[], &[("StackMapTable", smt)]);
    let r = rewrite(&bytes);
    assert!(r.skipped.is_empty(), "{:?}", r.skipped);
    assert_eq!(r.methods.len(), 1);
    let (class, c) = code_of(&r.bytes);
    let insns = opcodes::decode(&c.code).unwrap();
    // 6: new … 13: ifeq +8 → 21; 16: goto_w; 21: pop
    assert_eq!((insns[7].offset, insns[7].opcode, insns[7].kind.clone()), (13, 0x99, Kind::Branch(21)));
    assert_eq!(insns[8].opcode, opcodes::GOTO_W);
    let frames = stack_map::decode(&attribute(&class, &c, "StackMapTable").unwrap()).unwrap();
    // The inferred frame: the long in local 0, the two references to the object `new` made (now at 6).
    assert_eq!(frames[0].offset, 21);
    assert_eq!(
        frames[0].kind,
        FrameKind::Full { locals: vec![VType::Long], stack: vec![VType::Uninitialized(6), VType::Uninitialized(6)] }
    );
    // The `same` frame after the return (old 13, now after the return's probe) is spelled out, since the
    // frame before it is now the inferred one.
    assert_eq!(frames[1].offset, 30);
    assert_eq!(frames[1].kind, FrameKind::Full { locals: vec![], stack: vec![] });
    let FrameKind::Full { stack, .. } = &frames[2].kind else { panic!("{:?}", frames[2]) };
    assert_eq!(stack, &vec![VType::Uninitialized(6), VType::Uninitialized(6)]);
}

#[test]
fn frame_inference_follows_stores_calls_fields_arrays_and_constructors() {
    use classfile::constant_pool::ConstantPool;
    use classfile::frame_inference::{FrameState, MethodShape, initial_state, run};
    let mut b = Builder::new();
    let string = b.class("java/lang/String");
    let concat = b.methodref(string, "concat", "(Ljava/lang/String;)Ljava/lang/String;");
    let init = b.methodref(string, "<init>", "([CII)V");
    // Instance method (Ljava/lang/String;J[[Ljava/lang/String;)V of T: locals this, s, long (2), array.
    // 0: aload_1; 1: aload_1; 2: invokevirtual concat; 5: astore 5; 7: aload 4; 9: iconst_0; 10: aaload;
    // 11: iconst_0; 12: aaload; 13: new String; 16: dup; 17: iconst_1; 18: newarray char; 20: iconst_0;
    // 21: iconst_1; 22: invokespecial <init>([CII)V; 25: dup; 26: iconst_2; 27: istore_3 (splits the long
    // at 2); 28: ifnull → 0
    let code = [
        0x2b,
        0x2b,
        0xb6,
        (concat >> 8) as u8,
        concat as u8,
        0x3a,
        5,
        0x19,
        4,
        0x03,
        0x32,
        0x03,
        0x32,
        0xbb,
        (string >> 8) as u8,
        string as u8,
        0x59,
        0x04,
        0xbc,
        5,
        0x03,
        0x04,
        0xb7,
        (init >> 8) as u8,
        init as u8,
        0x59,
        0x05,
        0x3e,
        0xc6,
        0xff,
        0xe4,
        0xb1,
    ];
    let bytes = b.build(52, "m", &code, &[], &[]);
    let class = ClassFile::parse(&bytes).unwrap();
    let mut pool: ConstantPool = class.pool.clone();
    let shape = MethodShape {
        this_class: class.this_class,
        is_static: false,
        constructor: false,
        descriptor: "(Ljava/lang/String;J[[Ljava/lang/String;)V",
    };
    let start = initial_state(&mut pool, &shape).unwrap();
    let obj = |p: &mut ConstantPool, n: &str| VType::Object(p.intern_class(n).unwrap());
    assert_eq!(
        start.locals,
        vec![
            VType::Object(class.this_class),
            obj(&mut pool, "java/lang/String"),
            VType::Long,
            obj(&mut pool, "[[Ljava/lang/String;")
        ]
    );
    let attr = CodeAttribute { max_stack: 8, max_locals: 6, code: code.to_vec(), handlers: vec![], attributes: vec![] };
    let insns = opcodes::decode(&code).unwrap();
    let last = insns.iter().position(|i| i.offset == 28).unwrap();
    let s: FrameState = run(&attr, &insns, 0, last, &start, &mut pool, class.this_class).unwrap();
    let string_t = obj(&mut pool, "java/lang/String");
    assert_eq!(
        s.locals,
        vec![
            VType::Object(class.this_class),
            string_t.clone(),
            VType::Top,
            VType::Integer,
            obj(&mut pool, "[[Ljava/lang/String;"),
            string_t.clone()
        ]
    );
    // Under what ifnull popped: the String from the array of arrays, the String constructed (no longer
    // uninitialized).
    assert_eq!(s.stack, vec![string_t.clone(), string_t]);
}

#[test]
fn frames_keep_uninitialized_offsets_and_switch_to_extended_forms() {
    // 0: new #T; 3: dup; 4: iconst_0; 5: ifeq → 8; 8: (frame: stack [uninit(0), uninit(0)]) pop; pop; return
    let code = [0xbb, 0x00, 0x01, 0x59, 0x03, 0x99, 0x00, 0x03, 0x57, 0x57, 0xb1];
    let smt = vec![0, 1, 255, 0, 8, 0, 0, 0, 2, 8, 0, 0, 8, 0, 0];
    let b = Builder::new().build(52, "m", &code, &[], &[("StackMapTable", smt)]);
    let (class, c) = code_of(&rewrite(&b).bytes);
    let frames = stack_map::decode(&attribute(&class, &c, "StackMapTable").unwrap()).unwrap();
    assert_eq!(frames[0].offset, 14);
    assert_eq!(
        frames[0].kind,
        FrameKind::Full { locals: vec![], stack: vec![VType::Uninitialized(6), VType::Uninitialized(6)] }
    );
}

#[test]
fn a_constructor_gets_catch_alls_before_and_after_super_but_not_over_it() {
    // 0: aload_0; 1: new #T; 4: dup; 5: invokespecial T.<init>; 8: pop; 9: aload_0;
    // 10: invokespecial Object.<init>; 13: nop; 14: return
    let mut b = Builder::new();
    let t = b.class("T");
    let t_init = b.methodref(t, "<init>", "()V");
    let o = b.class("java/lang/Object");
    let o_init = b.methodref(o, "<init>", "()V");
    let code = [
        0x2a,
        0xbb,
        (t >> 8) as u8,
        t as u8,
        0x59,
        0xb7,
        (t_init >> 8) as u8,
        t_init as u8,
        0x57,
        0x2a,
        0xb7,
        (o_init >> 8) as u8,
        o_init as u8,
        0x00,
        0xb1,
    ];
    let bytes = b.build(52, "<init>", &code, &[], &[]);
    let (class, c) = code_of(&rewrite(&bytes).bytes);
    // old n → n + 6 up to the return (probe at 20, return 26), catch-alls at 27 and 34
    let hs: Vec<_> = c.handlers.iter().map(|h| (h.start, h.end, h.handler)).collect();
    assert_eq!(hs, vec![(6, 16, 27), (19, 27, 34)]);
    let frames = stack_map::decode(&attribute(&class, &c, "StackMapTable").unwrap()).unwrap();
    let locals: Vec<_> = frames
        .iter()
        .map(|f| match &f.kind {
            FrameKind::Full { locals, .. } => (f.offset, locals.clone()),
            k => panic!("{k:?}"),
        })
        .collect();
    assert_eq!(locals, vec![(27, vec![VType::UninitializedThis]), (34, vec![])]);
}

#[test]
fn native_and_abstract_methods_are_left_alone() {
    let b = Builder::new().build(52, "m", &[0xb1], &[], &[]);
    let mut class = ClassFile::parse(&b).unwrap();
    class.methods[0].attributes.clear();
    class.methods[0].access |= classfile::class_file::ACC_NATIVE;
    let bytes = class.write();
    let r = rewrite(&bytes);
    assert!(r.methods.is_empty());
    assert_eq!(r.skipped[0].1, "native");
    assert_eq!(r.bytes, bytes);
}

/// `alloc_probe=y`'s rewrite: `dup; invokestatic object(Object)V` after a `new`'s constructor call and after
/// `newarray`/`anewarray`, `dup; sipush n; invokestatic arrays(Object, int)V` after `multianewarray`, and a
/// branch back to the start still reaching it.
#[test]
fn alloc_probes_follow_each_constructor_call_and_array_allocation() {
    let mut b = Builder::new();
    let t = b.class("T");
    let init = b.methodref(t, "<init>", "()V");
    let grid = b.class("[[I");
    let [t, init, grid] = [t, init, grid].map(|i| i.to_be_bytes());
    #[rustfmt::skip]
    let code = [
        0xbb, t[0], t[1], 0x59, 0xb7, init[0], init[1], 0x57, // 0: new T; dup; invokespecial <init>; pop
        0x05, 0xbc, 10, 0x57,                                 // 8: iconst_2; newarray int; pop
        0x05, 0x06, 0xc5, grid[0], grid[1], 2, 0x57,          // 12: iconst_2; iconst_3; multianewarray [[I 2; pop
        0x04, 0xbd, t[0], t[1], 0x57,                         // 19: iconst_1; anewarray T; pop
        0xa7, 0xff, 0xe8, 0xb1,                               // 24: goto 0; 27: return
    ];
    let bytes = b.build(52, "m", &code, &[], &[]);
    let probes = classfile::AllocProbes { class: "java/lang/HprofAllocs", object: "object", arrays: "arrays" };
    let r = classfile::instrument_allocations(&bytes, &probes).expect("instrument");
    assert_eq!((r.probes, r.skipped.len()), (4, 0), "{:?}", r.skipped);
    let (class, c) = code_of(&r.bytes);
    let insns = opcodes::decode(&c.code).unwrap();
    let calls: Vec<(u32, String)> = insns
        .iter()
        .filter(|i| i.opcode == opcodes::INVOKESTATIC)
        .map(|i| {
            let at = i.offset as usize;
            (i.offset, class.pool.member_ref(u16::from_be_bytes([c.code[at + 1], c.code[at + 2]])).unwrap().1)
        })
        .collect();
    let expected = [(8, "object"), (16, "object"), (30, "arrays"), (39, "object")];
    assert_eq!(calls, expected.map(|(o, n)| (o, n.to_string())));
    for (at, _) in expected {
        assert_eq!(c.code[at as usize - if at == 30 { 4 } else { 1 }], 0x59, "dup before the call at {at}");
    }
    let goto = insns.iter().find(|i| i.opcode == opcodes::GOTO).unwrap();
    assert_eq!((goto.offset, goto.kind.clone()), (43, Kind::Branch(0)));
    assert_eq!(c.max_stack, 4 + 2);
}
