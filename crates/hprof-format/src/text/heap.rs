//! The text heap dump (`heap=dump`, `format=a`): `HEAP DUMP BEGIN`, then ROOT, CLS, OBJ and ARR lines, then
//! `HEAP DUMP END`, line for line as HPROF printed them. Identifiers are hexadecimal; primitive values are
//! not printed, only the references an object holds.

use std::io::{self, Write};

/// A GC root, as its ROOT line describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootLine<'a> {
    Unknown { id: u64 },
    JniGlobal { id: u64, ref_serial: u64, trace: u32 },
    JniLocal { id: u64, thread: u32, frame: i32 },
    JavaFrame { id: u64, thread: u32, frame: i32 },
    NativeStack { id: u64, thread: u32 },
    StickyClass { id: u64, name: &'a str },
    ThreadBlock { id: u64, thread: u32 },
    MonitorUsed { id: u64 },
    ThreadObject { id: u64, thread: u32, trace: u32 },
}

/// The head of a CLS record; zero identifiers are left out, as HPROF did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClassLine<'a> {
    pub id: u64,
    pub name: &'a str,
    pub trace: u32,
    pub super_id: u64,
    pub loader_id: u64,
    pub signers_id: u64,
    pub domain_id: u64,
}

/// `HEAP DUMP BEGIN (n objects, b bytes) <date>`.
pub fn write_heap_dump_begin(w: &mut dyn Write, objects: u64, bytes: u64, date: &str) -> io::Result<()> {
    writeln!(w, "HEAP DUMP BEGIN ({objects} objects, {bytes} bytes) {date}")
}

pub fn write_heap_dump_end(w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "HEAP DUMP END")
}

pub fn write_root(w: &mut dyn Write, root: &RootLine<'_>) -> io::Result<()> {
    match *root {
        RootLine::Unknown { id } => writeln!(w, "ROOT {id:x} (kind=<unknown>)"),
        RootLine::JniGlobal { id, ref_serial, trace } => {
            writeln!(w, "ROOT {id:x} (kind=<JNI global ref>, id={ref_serial:x}, trace={trace})")
        }
        RootLine::JniLocal { id, thread, frame } => {
            writeln!(w, "ROOT {id:x} (kind=<JNI local ref>, thread={thread}, frame={frame})")
        }
        RootLine::JavaFrame { id, thread, frame } => {
            writeln!(w, "ROOT {id:x} (kind=<Java stack>, thread={thread}, frame={frame})")
        }
        RootLine::NativeStack { id, thread } => writeln!(w, "ROOT {id:x} (kind=<native stack>, thread={thread})"),
        RootLine::StickyClass { id, name } => writeln!(w, "ROOT {id:x} (kind=<system class>, name={name})"),
        RootLine::ThreadBlock { id, thread } => writeln!(w, "ROOT {id:x} (kind=<thread block>, thread={thread})"),
        RootLine::MonitorUsed { id } => writeln!(w, "ROOT {id:x} (kind=<busy monitor>)"),
        RootLine::ThreadObject { id, thread, trace } => {
            writeln!(w, "ROOT {id:x} (kind=<thread>, id={thread}, trace={trace})")
        }
    }
}

/// `CLS id (name=…, trace=…)` and the super, loader, signers and domain lines that are not zero.
pub fn write_class(w: &mut dyn Write, c: &ClassLine<'_>) -> io::Result<()> {
    writeln!(w, "CLS {:x} (name={}, trace={})", c.id, c.name, c.trace)?;
    for (label, id) in
        [("super", c.super_id), ("loader", c.loader_id), ("signers", c.signers_id), ("domain", c.domain_id)]
    {
        if id != 0 {
            writeln!(w, "\t{label}\t\t{id:x}")?;
        }
    }
    Ok(())
}

/// A non-null static reference of the class just written.
pub fn write_class_static(w: &mut dyn Write, field: &str, id: u64) -> io::Result<()> {
    writeln!(w, "\tstatic {field}\t{id:x}")
}

/// A resolved constant pool entry (string or class) of the class just written.
pub fn write_class_constant(w: &mut dyn Write, index: u16, id: u64) -> io::Result<()> {
    writeln!(w, "\tconstant pool entry {index}\t{id:x}")
}

/// `OBJ id (sz=…, trace=…, class=name@classid)`.
pub fn write_instance(
    w: &mut dyn Write,
    id: u64,
    size: u64,
    trace: u32,
    class_name: &str,
    class_id: u64,
) -> io::Result<()> {
    writeln!(w, "OBJ {id:x} (sz={size}, trace={trace}, class={class_name}@{class_id:x})")
}

/// A non-null reference field of the instance just written; short names get a second tab, as in HPROF.
pub fn write_instance_field(w: &mut dyn Write, field: &str, id: u64) -> io::Result<()> {
    let sep = if field.len() < 8 { "\t" } else { "" };
    writeln!(w, "\t{field}\t{sep}{id:x}")
}

/// `ARR id (sz=…, trace=…, nelems=…, elem type=name@classid)` for an array of references.
pub fn write_object_array(
    w: &mut dyn Write,
    id: u64,
    size: u64,
    trace: u32,
    length: u32,
    class_name: &str,
    class_id: u64,
) -> io::Result<()> {
    writeln!(w, "ARR {id:x} (sz={size}, trace={trace}, nelems={length}, elem type={class_name}@{class_id:x})")
}

/// A non-null element of the object array just written.
pub fn write_array_element(w: &mut dyn Write, index: u32, id: u64) -> io::Result<()> {
    writeln!(w, "\t[{index}]\t\t{id:x}")
}

/// `ARR id (sz=…, trace=…, nelems=…, elem type=int[])` for an array of primitives.
pub fn write_primitive_array(
    w: &mut dyn Write,
    id: u64,
    size: u64,
    trace: u32,
    length: u32,
    class_name: &str,
) -> io::Result<()> {
    writeln!(w, "ARR {id:x} (sz={size}, trace={trace}, nelems={length}, elem type={class_name})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lines_match_hprof_templates() {
        assert_eq!(
            text(|w| write_heap_dump_begin(w, 21024, 1717480, "Sun Nov 22 18:44:01 2026")),
            "HEAP DUMP BEGIN (21024 objects, 1717480 bytes) Sun Nov 22 18:44:01 2026\n"
        );
        assert_eq!(
            text(|w| write_root(w, &RootLine::ThreadObject { id: 0x50005221, thread: 200006, trace: 300000 })),
            "ROOT 50005221 (kind=<thread>, id=200006, trace=300000)\n"
        );
        assert_eq!(
            text(|w| write_root(w, &RootLine::JavaFrame { id: 0x50005221, thread: 200000, frame: 2 })),
            "ROOT 50005221 (kind=<Java stack>, thread=200000, frame=2)\n"
        );
        assert_eq!(
            text(|w| write_root(w, &RootLine::StickyClass { id: 0x50005231, name: "java.lang.Object[]" })),
            "ROOT 50005231 (kind=<system class>, name=java.lang.Object[])\n"
        );
        assert_eq!(
            text(|w| write_root(w, &RootLine::JniGlobal { id: 0x500001b9, ref_serial: 1, trace: 300000 })),
            "ROOT 500001b9 (kind=<JNI global ref>, id=1, trace=300000)\n"
        );
        assert_eq!(text(|w| write_root(w, &RootLine::MonitorUsed { id: 0xab })), "ROOT ab (kind=<busy monitor>)\n");
    }

    #[test]
    fn class_and_object_lines() {
        let c = ClassLine {
            id: 0x50000001,
            name: "java.lang.invoke.StringConcatFactory$3",
            trace: 300000,
            super_id: 0x500001c6,
            loader_id: 0,
            signers_id: 0,
            domain_id: 0,
        };
        let out = text(|w| {
            write_class(w, &c)?;
            write_class_static(w, "INSTANCE", 0x77)?;
            write_class_constant(w, 74, 0x50005220)
        });
        assert_eq!(
            out,
            "CLS 50000001 (name=java.lang.invoke.StringConcatFactory$3, trace=300000)\n\tsuper\t\t500001c6\n\
             \tstatic INSTANCE\t77\n\tconstant pool entry 74\t50005220\n"
        );
        let out = text(|w| {
            write_instance(w, 0x500001c7, 368, 300000, "java.lang.Thread", 0x50000180)?;
            write_instance_field(w, "name", 0x10)?;
            write_instance_field(w, "contextClassLoader", 0x11)
        });
        assert_eq!(
            out,
            "OBJ 500001c7 (sz=368, trace=300000, class=java.lang.Thread@50000180)\n\tname\t\t10\n\
             \tcontextClassLoader\t11\n"
        );
        let out = text(|w| {
            write_object_array(w, 0x500001d0, 96, 300005, 19, "sun.util.locale.BaseLocale[]", 0x500001cf)?;
            write_array_element(w, 0, 0x500056df)?;
            write_primitive_array(w, 0x500001ff, 64, 300044, 16, "int[]")
        });
        assert_eq!(
            out,
            "ARR 500001d0 (sz=96, trace=300005, nelems=19, elem type=sun.util.locale.BaseLocale[]@500001cf)\n\
             \t[0]\t\t500056df\nARR 500001ff (sz=64, trace=300044, nelems=16, elem type=int[])\n"
        );
    }
}
