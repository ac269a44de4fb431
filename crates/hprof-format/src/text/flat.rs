//! The flat profile (`cpu=flat`, `-Xprof`) as text, in -Xprof's layout, and its reader: per thread a "Flat profile of …" header, the
//! "Interpreted + native", "Compiled + native" and "Stub + native" tables (percent of the thread's active
//! ticks, code ticks, `+` native ticks, method) with their totals, the thread-local ticks, and at the end
//! the global summary. A row below `cutoff` of the thread's active ticks is left out, and the table's
//! total then says "(including elided)", as -Xprof's did for rows past its row limits.

use std::io::{self, Write};

/// A table row with its name resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedRow {
    pub name: String,
    pub code: u64,
    pub native: u64,
}

/// One thread's profile, ready to print.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadProfile {
    pub name: String,
    pub seconds: f64,
    pub interpreted: Vec<NamedRow>,
    pub compiled: Vec<NamedRow>,
    pub stub: Vec<NamedRow>,
    pub blocked: u64,
    pub class_loader: u64,
    pub interpreter: u64,
    pub compilation: u64,
    pub unknown: u64,
}

impl ThreadProfile {
    pub fn active(&self) -> u64 {
        [&self.interpreted, &self.compiled, &self.stub]
            .iter()
            .flat_map(|t| t.iter())
            .map(|r| r.code + r.native)
            .sum::<u64>()
            + self.class_loader
            + self.interpreter
            + self.compilation
            + self.unknown
    }

    pub fn total(&self) -> u64 {
        self.active() + self.blocked
    }
}

/// The global summary, ready to print.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GlobalSummary {
    pub seconds: f64,
    pub received: u64,
    pub gc: u64,
    pub compilation: u64,
    /// Other VM operations, by name where the JVM tells, else one unnamed row.
    pub vm_operations: Vec<(String, u64)>,
    pub class_loader: u64,
    pub interpreter: u64,
    pub unknown: u64,
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 { 0.0 } else { part as f64 * 100.0 / whole as f64 }
}

/// `%5.1f%% %5d` then the title from column 25: -Xprof's line for a count.
fn ticks_line(w: &mut dyn Write, title: &str, ticks: u64, whole: u64) -> io::Result<()> {
    if ticks > 0 {
        writeln!(w, "{:5.1}% {:5}{:13}{title}", percent(ticks, whole), ticks, "")?;
    }
    Ok(())
}

fn table(
    w: &mut dyn Write,
    kind: &str,
    total_label: &str,
    rows: &[NamedRow],
    active: u64,
    cutoff: f64,
) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut rows: Vec<&NamedRow> = rows.iter().collect();
    rows.sort_by(|a, b| (b.code + b.native).cmp(&(a.code + a.native)).then(a.name.cmp(&b.name)));
    writeln!(w, "  {kind:>11} + native   Method")?;
    let (mut code, mut native, mut elided) = (0, 0, false);
    for r in rows {
        code += r.code;
        native += r.native;
        if percent(r.code + r.native, active) < cutoff * 100.0 {
            elided = true;
            continue;
        }
        writeln!(w, "{:5.1}% {:5}  + {:5}    {}", percent(r.code + r.native, active), r.code, r.native, r.name)?;
    }
    let label = if elided { format!("{total_label} (including elided)") } else { total_label.to_string() };
    writeln!(w, "{:5.1}% {:5}  + {:5}    {label}", percent(code + native, active), code, native)?;
    writeln!(w)
}

pub fn write_thread(w: &mut dyn Write, p: &ThreadProfile, cutoff: f64) -> io::Result<()> {
    let (active, total) = (p.active(), p.total());
    if total == 0 {
        return Ok(());
    }
    writeln!(w)?;
    writeln!(w, "Flat profile of {:.2} secs ({total} total ticks): {}", p.seconds, p.name)?;
    writeln!(w)?;
    table(w, "Interpreted", "Total interpreted", &p.interpreted, active, cutoff)?;
    table(w, "Compiled", "Total compiled", &p.compiled, active, cutoff)?;
    table(w, "Stub", "Total stub", &p.stub, active, cutoff)?;
    if p.blocked + p.class_loader + p.interpreter + p.compilation + p.unknown > 0 {
        writeln!(w, "  Thread-local ticks:")?;
        ticks_line(w, "Blocked (of total)", p.blocked, total)?;
        ticks_line(w, "Class loader", p.class_loader, active)?;
        ticks_line(w, "Interpreter", p.interpreter, active)?;
        ticks_line(w, "Compilation", p.compilation, active)?;
        ticks_line(w, "Unknown code", p.unknown, active)?;
        writeln!(w)?;
    }
    Ok(())
}

/// A whole flat profile: each thread's, then the global summary.
pub fn write_flat_profile(w: &mut dyn Write, p: &FlatProfile, cutoff: f64) -> io::Result<()> {
    for t in &p.threads {
        write_thread(w, t, cutoff)?;
    }
    write_global(w, &p.global)
}

pub fn write_global(w: &mut dyn Write, g: &GlobalSummary) -> io::Result<()> {
    writeln!(w)?;
    writeln!(w, "Global summary of {:.2} seconds:", g.seconds)?;
    let r = g.received;
    ticks_line(w, "Received ticks", r, r)?;
    ticks_line(w, "Received GC ticks", g.gc, r)?;
    ticks_line(w, "Compilation", g.compilation, r)?;
    for (name, ticks) in &g.vm_operations {
        ticks_line(w, name, *ticks, r)?;
    }
    ticks_line(w, "Class loader", g.class_loader, r)?;
    ticks_line(w, "Interpreter", g.interpreter, r)?;
    ticks_line(w, "Unknown code", g.unknown, r)?;
    writeln!(w)
}

/// A flat profile read back from a text report: the last complete one in the file (each dump — at exit, on
/// Ctrl-\\ — prints the run so far and ends with the global summary).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlatProfile {
    pub threads: Vec<ThreadProfile>,
    pub global: GlobalSummary,
}

#[derive(Clone, Copy, PartialEq)]
enum Part {
    None,
    Interpreted,
    Compiled,
    Stub,
    ThreadLocal,
    Global,
}

/// `N.N% ticks [+ native] title`: the ticks, the native ticks (0 where the line has none) and the title.
fn parse_row(line: &str) -> Option<(u64, u64, String)> {
    let rest = line.trim_start();
    let (pct, rest) = rest.split_once('%')?;
    pct.trim().parse::<f64>().ok()?;
    let rest = rest.trim_start();
    let end = rest.find(|c: char| !c.is_ascii_digit())?;
    let ticks = rest[..end].parse().ok()?;
    let rest = rest[end..].trim_start();
    if let Some(after) = rest.strip_prefix('+') {
        let after = after.trim_start();
        let end = after.find(|c: char| !c.is_ascii_digit())?;
        let native = after[..end].parse().ok()?;
        return Some((ticks, native, after[end..].trim().to_string()));
    }
    Some((ticks, 0, rest.trim().to_string()))
}

/// Reads the last flat profile in a text report; `None` if it holds none.
pub fn parse_flat_profile(text: &str) -> Option<FlatProfile> {
    let mut last = None;
    let mut current = FlatProfile::default();
    let mut part = Part::None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Flat profile of ") {
            let (secs, rest) = rest.split_once(" secs (")?;
            let (_, name) = rest.split_once("): ")?;
            current.threads.push(ThreadProfile {
                name: name.to_string(),
                seconds: secs.trim().parse().unwrap_or(0.0),
                ..Default::default()
            });
            part = Part::None;
            continue;
        }
        if let Some(rest) = line.strip_prefix("Global summary of ") {
            current.global.seconds = rest.trim_end_matches(" seconds:").trim().parse().unwrap_or(0.0);
            part = Part::Global;
            continue;
        }
        let header = line.trim();
        match header {
            "Interpreted + native   Method" => part = Part::Interpreted,
            "Compiled + native   Method" => part = Part::Compiled,
            "Stub + native   Method" => part = Part::Stub,
            "Thread-local ticks:" => part = Part::ThreadLocal,
            _ => {}
        }
        if header.is_empty() && part == Part::Global {
            last = Some(std::mem::take(&mut current));
            part = Part::None;
            continue;
        }
        let Some((ticks, native, title)) = parse_row(line) else { continue };
        if title.starts_with("Total ") && matches!(part, Part::Interpreted | Part::Compiled | Part::Stub) {
            continue;
        }
        let row = NamedRow { name: title.clone(), code: ticks, native };
        if part == Part::Global {
            let g = &mut current.global;
            match title.as_str() {
                "Received ticks" => g.received = ticks,
                "Received GC ticks" => g.gc = ticks,
                "Compilation" => g.compilation = ticks,
                "Class loader" => g.class_loader = ticks,
                "Interpreter" => g.interpreter = ticks,
                "Unknown code" => g.unknown = ticks,
                _ => g.vm_operations.push((title, ticks)),
            }
            continue;
        }
        let Some(t) = current.threads.last_mut() else { continue };
        match part {
            Part::Interpreted => t.interpreted.push(row),
            Part::Compiled => t.compiled.push(row),
            Part::Stub => t.stub.push(row),
            Part::ThreadLocal => match title.as_str() {
                "Blocked (of total)" => t.blocked = ticks,
                "Class loader" => t.class_loader = ticks,
                "Interpreter" => t.interpreter = ticks,
                "Compilation" => t.compilation = ticks,
                "Unknown code" => t.unknown = ticks,
                _ => {}
            },
            _ => {}
        }
    }
    if part == Part::Global {
        last = Some(current);
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, code: u64, native: u64) -> NamedRow {
        NamedRow { name: name.into(), code, native }
    }

    #[test]
    fn thread_profile_in_xprofs_layout() {
        let p = ThreadProfile {
            name: "main".into(),
            seconds: 1.234,
            interpreted: vec![row("Work.beta", 10, 0), row("Work.native", 0, 5), row("Work.rare", 1, 0)],
            compiled: vec![row("Work.alpha", 30, 2)],
            stub: vec![row("StubRoutines (1)", 1, 0)],
            blocked: 4,
            unknown: 1,
            ..Default::default()
        };
        let mut out = Vec::new();
        write_thread(&mut out, &p, 0.021).unwrap();
        let text = String::from_utf8(out).unwrap();
        let expected = "
Flat profile of 1.23 secs (54 total ticks): main

  Interpreted + native   Method
 20.0%    10  +     0    Work.beta
 10.0%     0  +     5    Work.native
 32.0%    11  +     5    Total interpreted (including elided)

     Compiled + native   Method
 64.0%    30  +     2    Work.alpha
 64.0%    30  +     2    Total compiled

         Stub + native   Method
  2.0%     1  +     0    Total stub (including elided)

  Thread-local ticks:
  7.4%     4             Blocked (of total)
  2.0%     1             Unknown code

";
        assert_eq!(text, expected);
    }

    #[test]
    fn global_summary_prints_only_what_happened() {
        let g = GlobalSummary {
            seconds: 2.0,
            received: 200,
            gc: 10,
            vm_operations: vec![("Other VM operations".into(), 2)],
            ..Default::default()
        };
        let mut out = Vec::new();
        write_global(&mut out, &g).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "\nGlobal summary of 2.00 seconds:\n100.0%   200             Received ticks\n  5.0%    10             Received GC ticks\n  1.0%     2             Other VM operations\n\n"
        );
    }

    #[test]
    fn reads_back_what_it_writes_the_last_dump_winning() {
        let thread = |name: &str, ticks: u64| ThreadProfile {
            name: name.into(),
            seconds: 1.5,
            interpreted: vec![row("A.b", ticks, 2)],
            compiled: vec![row("C.d  (in C.e)", 7, 0)],
            // In the order printed: most ticks first.
            stub: vec![row("java.lang.Thread.currentThread", 0, 3), row("StubRoutines (1)", 1, 0)],
            blocked: 5,
            class_loader: 1,
            interpreter: 2,
            unknown: 1,
            ..Default::default()
        };
        let global = GlobalSummary {
            seconds: 3.25,
            received: 100,
            gc: 4,
            compilation: 6,
            vm_operations: vec![("Other VM operations".into(), 2)],
            class_loader: 1,
            interpreter: 2,
            unknown: 1,
        };
        let mut out = b"JAVA PROFILE 1.0.1\n".to_vec();
        for ticks in [3, 30] {
            write_thread(&mut out, &thread("main", ticks), 0.0).unwrap();
            write_thread(&mut out, &thread("worker 1", ticks), 0.0).unwrap();
            write_global(&mut out, &global).unwrap();
        }
        let parsed = parse_flat_profile(&String::from_utf8(out).unwrap()).unwrap();
        assert_eq!(parsed.threads, vec![thread("main", 30), thread("worker 1", 30)]);
        assert_eq!(parsed.global, global);
        assert_eq!(parse_flat_profile("CPU SAMPLES BEGIN"), None);
    }
}
