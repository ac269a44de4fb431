use crate::model::{Frame, LineNumber, ThreadStart};
use std::io::{self, Write};

pub fn write_thread_start(w: &mut dyn Write, t: &ThreadStart) -> io::Result<()> {
    writeln!(
        w,
        "THREAD START (obj={:x}, id = {}, name=\"{}\", group=\"{}\")",
        t.object_id, t.serial, t.name, t.group_name
    )
}

pub fn write_thread_end(w: &mut dyn Write, serial: u32) -> io::Result<()> {
    writeln!(w, "THREAD END (id = {serial})")
}

/// `TRACE n:` \[` (thread=m)`\] then one tab-indented line per frame, `<empty>` when there are none.
pub fn write_trace<'a>(
    w: &mut dyn Write,
    serial: u32,
    thread_serial: Option<u32>,
    frames: impl IntoIterator<Item = &'a Frame>,
) -> io::Result<()> {
    match thread_serial {
        Some(t) => writeln!(w, "TRACE {serial}: (thread={t})")?,
        None => writeln!(w, "TRACE {serial}:")?,
    }
    let mut any = false;
    for f in frames {
        any = true;
        write_frame(w, f)?;
    }
    if !any {
        writeln!(w, "\t<empty>")?;
    }
    Ok(())
}

fn write_frame(w: &mut dyn Write, f: &Frame) -> io::Result<()> {
    if f.is_pseudo() {
        return writeln!(w, "\t{}", f.method_name);
    }
    let method = if f.method_name.is_empty() { "<Unknown Method>" } else { &f.method_name };
    let source = f.source_file.as_deref().unwrap_or("<Unknown Source>");
    match f.line {
        LineNumber::Line(n) => writeln!(w, "\t{}.{}({}:{})", f.class_name, method, source, n),
        LineNumber::NotRecorded => writeln!(w, "\t{}.{}({})", f.class_name, method, source),
        LineNumber::Unknown => writeln!(w, "\t{}.{}({}:Unknown line)", f.class_name, method, source),
        LineNumber::Compiled => writeln!(w, "\t{}.{}({}:Compiled method)", f.class_name, method, source),
        LineNumber::Native => writeln!(w, "\t{}.{}({}:Native method)", f.class_name, method, source),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(class: &str, method: &str, file: Option<&str>, line: LineNumber) -> Frame {
        Frame {
            class_name: class.into(),
            method_name: method.into(),
            method_signature: "()V".into(),
            source_file: file.map(Into::into),
            line,
        }
    }

    #[test]
    fn trace_lines_match_hprof() {
        let frames = [
            frame("java.util.zip.ZipEntry", "<init>", Some("ZipEntry.java"), LineNumber::Line(101)),
            frame("java.lang.Object", "wait", Some("Object.java"), LineNumber::Native),
            frame("Foo", "bar", None, LineNumber::Unknown),
        ];
        let mut out = Vec::new();
        write_trace(&mut out, 301926, None, &frames).unwrap();
        write_trace(&mut out, 300073, Some(200001), &[]).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "TRACE 301926:\n\tjava.util.zip.ZipEntry.<init>(ZipEntry.java:101)\n\
             \tjava.lang.Object.wait(Object.java:Native method)\n\tFoo.bar(<Unknown Source>:Unknown line)\n\
             TRACE 300073: (thread=200001)\n\t<empty>\n"
        );
    }

    #[test]
    fn thread_records() {
        let mut out = Vec::new();
        let t = ThreadStart {
            serial: 200001,
            object_id: 0x500001c4,
            trace_serial: 300000,
            name: "main".into(),
            group_name: "main".into(),
            parent_group_name: "system".into(),
        };
        write_thread_start(&mut out, &t).unwrap();
        write_thread_end(&mut out, 200001).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "THREAD START (obj=500001c4, id = 200001, name=\"main\", group=\"main\")\nTHREAD END (id = 200001)\n"
        );
    }
}
