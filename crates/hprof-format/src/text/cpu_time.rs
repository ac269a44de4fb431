//! Reading back what cpu=times and cpu=old wrote, which has no binary form: the CPU TIME sections of a text
//! report with the TRACEs they name, and cpu=old's `count callee caller time` lines. `hprof print` shows
//! them again.

use super::percent;
use std::collections::HashMap;
use std::io::{self, Write};

/// A TRACE record as printed: its frames are kept as their text lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextTrace {
    pub serial: u32,
    pub thread: Option<u32>,
    /// Frame lines without their tab, e.g. `Foo.bar(Foo.java:Unknown line)`; `<empty>` for none.
    pub frames: Vec<String>,
}

/// A CPU TIME row: the percentages as printed (they are rounded, so they are kept rather than derived).
#[derive(Debug, Clone, PartialEq)]
pub struct TimedRow {
    pub rank: u32,
    pub self_percent: f64,
    pub accum_percent: f64,
    pub count: u64,
    pub trace: u32,
    pub method: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CpuTimeSection {
    pub total_ms: u64,
    pub date: String,
    /// The lines between the header and the rows, e.g. `(not timed: …)`.
    pub notes: Vec<String>,
    pub rows: Vec<TimedRow>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuTimes {
    pub traces: HashMap<u32, TextTrace>,
    pub sections: Vec<CpuTimeSection>,
}

fn parse_trace_header(line: &str) -> Option<(u32, Option<u32>)> {
    let rest = line.strip_prefix("TRACE ")?;
    let (serial, rest) = rest.split_once(':')?;
    let serial = serial.parse().ok()?;
    let thread = rest.trim().strip_prefix("(thread=").and_then(|t| t.strip_suffix(')')).and_then(|t| t.parse().ok());
    Some((serial, thread))
}

fn parse_row(line: &str) -> Option<TimedRow> {
    let mut w = line.split_whitespace();
    let rank = w.next()?.parse().ok()?;
    let self_percent = w.next()?.strip_suffix('%')?.parse().ok()?;
    let accum_percent = w.next()?.strip_suffix('%')?.parse().ok()?;
    let count = w.next()?.parse().ok()?;
    let trace = w.next()?.parse().ok()?;
    let method = w.collect::<Vec<_>>().join(" ");
    Some(TimedRow { rank, self_percent, accum_percent, count, trace, method })
}

/// Every CPU TIME section of a text report and the traces of the report; `None` when it has no such
/// section. A section cut off before its END line (a run killed while writing) is dropped.
pub fn parse_cpu_times(text: &str) -> Option<CpuTimes> {
    let mut out = CpuTimes::default();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some((serial, thread)) = parse_trace_header(line) {
            let mut frames = Vec::new();
            while let Some(f) = lines.peek().and_then(|l| l.strip_prefix('\t')) {
                frames.push(f.to_string());
                lines.next();
            }
            out.traces.insert(serial, TextTrace { serial, thread, frames });
        } else if let Some(rest) = line.strip_prefix("CPU TIME (ms) BEGIN (total = ") {
            let Some((total, date)) = rest.split_once(')') else { continue };
            let Ok(total_ms) = total.trim().parse() else { continue };
            let mut section = CpuTimeSection { total_ms, date: date.trim().to_string(), notes: vec![], rows: vec![] };
            let mut ended = false;
            for l in lines.by_ref() {
                if l == "CPU TIME (ms) END" {
                    ended = true;
                    break;
                }
                if l.starts_with("rank ") {
                    continue;
                }
                match parse_row(l) {
                    Some(r) => section.rows.push(r),
                    None => section.notes.push(l.to_string()),
                }
            }
            if ended {
                out.sections.push(section);
            }
        }
    }
    if out.sections.is_empty() { None } else { Some(out) }
}

/// Each section with the rows whose self share is at least `cutoff` (a fraction), each preceded by the
/// TRACEs it names that no earlier section printed, as the agent writes them.
pub fn write_cpu_times(w: &mut dyn Write, c: &CpuTimes, cutoff: f64) -> io::Result<()> {
    let mut printed = std::collections::HashSet::new();
    for s in &c.sections {
        let rows: Vec<&TimedRow> = s.rows.iter().filter(|r| r.self_percent / 100.0 >= cutoff).collect();
        for r in &rows {
            if !printed.insert(r.trace) {
                continue;
            }
            let Some(t) = c.traces.get(&r.trace) else { continue };
            match t.thread {
                Some(th) => writeln!(w, "TRACE {}: (thread={th})", t.serial)?,
                None => writeln!(w, "TRACE {}:", t.serial)?,
            }
            for f in &t.frames {
                writeln!(w, "\t{f}")?;
            }
        }
        writeln!(w, "CPU TIME (ms) BEGIN (total = {}) {}", s.total_ms, s.date)?;
        for n in &s.notes {
            writeln!(w, "{n}")?;
        }
        if !rows.is_empty() {
            writeln!(w, "rank   self  accum   count trace method")?;
        }
        for r in rows {
            writeln!(
                w,
                "{:4} {} {} {:7} {:5} {}",
                r.rank,
                percent(r.self_percent / 100.0),
                percent(r.accum_percent / 100.0),
                r.count,
                r.trace,
                r.method
            )?;
        }
        writeln!(w, "CPU TIME (ms) END")?;
    }
    Ok(())
}

/// A cpu=old line: calls of `callee` from `caller`, and the callee's inclusive time in milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallPair {
    pub count: u64,
    pub callee: String,
    pub caller: String,
    pub ms: u64,
}

/// cpu=old's report: the pairs, and the lines that are not pairs (the `(not timed: …)` notes).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OldProf {
    pub pairs: Vec<CallPair>,
    pub notes: Vec<String>,
}

/// A cpu=old file (it begins `count callee caller time`); `None` for anything else. A report written
/// again (Ctrl-\, then exit) starts again with its title line; the last one is returned.
pub fn parse_old_prof(text: &str) -> Option<OldProf> {
    let mut lines = text.lines();
    if lines.next()? != "count callee caller time" {
        return None;
    }
    let mut out = OldProf::default();
    for l in lines {
        if l == "count callee caller time" {
            out = OldProf::default();
            continue;
        }
        // A method's signature has no space; "<unknown caller>" has one.
        let w: Vec<&str> = l.split(' ').collect();
        let pair = (w.len() >= 4)
            .then(|| Some((w[0].parse().ok()?, w[w.len() - 1].parse().ok()?)))
            .flatten()
            .map(|(count, ms)| CallPair { count, callee: w[1].to_string(), caller: w[2..w.len() - 1].join(" "), ms });
        match pair {
            Some(p) => out.pairs.push(p),
            None => out.notes.push(l.to_string()),
        }
    }
    Some(out)
}

pub fn write_old_prof(w: &mut dyn Write, p: &OldProf) -> io::Result<()> {
    writeln!(w, "count callee caller time")?;
    for c in &p.pairs {
        writeln!(w, "{} {} {} {}", c.count, c.callee, c.caller, c.ms)?;
    }
    for n in &p.notes {
        writeln!(w, "{n}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &[&str] = &[
        "JAVA PROFILE 1.0.1, created X",
        "--------",
        "",
        "TRACE 300001:",
        "\tA.a(A.java:Unknown line)",
        "\tA.main(A.java:Unknown line)",
        "TRACE 300002: (thread=200001)",
        "\t<empty>",
        "CPU TIME (ms) BEGIN (total = 100) D1",
        "(not timed: 3 native methods, which have no bytecode)",
        "rank   self  accum   count trace method",
        "   1 90.00% 90.00%      10 300001 A.a",
        "   2  0.01% 90.01%       1 300002 <empty trace>",
        "CPU TIME (ms) END",
        "CPU TIME (ms) BEGIN (total = 200) D2",
        "(not timed: 3 native methods, which have no bytecode)",
        "rank   self  accum   count trace method",
        "   1 95.00% 95.00%      20 300001 A.a",
        "CPU TIME (ms) END",
        "CPU TIME (ms) BEGIN (total = 300) D3",
    ];

    #[test]
    fn sections_rows_notes_and_traces_read_back() {
        let c = parse_cpu_times(&REPORT.join("\n")).unwrap();
        assert_eq!(c.sections.len(), 2, "the unfinished third section is dropped");
        assert_eq!(c.sections[0].total_ms, 100);
        assert_eq!(c.sections[0].date, "D1");
        assert_eq!(c.sections[0].notes, ["(not timed: 3 native methods, which have no bytecode)"]);
        assert_eq!(
            c.sections[0].rows[1],
            TimedRow {
                rank: 2,
                self_percent: 0.01,
                accum_percent: 90.01,
                count: 1,
                trace: 300002,
                method: "<empty trace>".into()
            }
        );
        assert_eq!(
            c.traces[&300002],
            TextTrace { serial: 300002, thread: Some(200001), frames: vec!["<empty>".into()] }
        );
        assert_eq!(c.traces[&300001].frames.len(), 2);
    }

    #[test]
    fn written_again_as_it_was_and_cut_off() {
        let c = parse_cpu_times(&REPORT.join("\n")).unwrap();
        let mut out = Vec::new();
        write_cpu_times(&mut out, &c, 0.0).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, REPORT[3..19].join("\n") + "\n");
        let mut out = Vec::new();
        write_cpu_times(&mut out, &c, 0.01).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("300002"), "{text}");
        assert!(text.contains("   1 90.00% 90.00%      10 300001 A.a\n"), "{text}");
    }

    #[test]
    fn old_prof_pairs_and_notes() {
        let text = "count callee caller time\n5 A.a()V <unknown caller> 3\n2 A.b()V A.a()V 0\n\
                    (not timed: 1 native methods, which have no bytecode)\n";
        let p = parse_old_prof(text).unwrap();
        assert_eq!(
            p.pairs[0],
            CallPair { count: 5, callee: "A.a()V".into(), caller: "<unknown caller>".into(), ms: 3 }
        );
        assert_eq!(p.pairs.len(), 2);
        assert_eq!(p.notes.len(), 1);
        let mut out = Vec::new();
        write_old_prof(&mut out, &p).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), text);
        assert_eq!(parse_old_prof("JAVA PROFILE 1.0.1"), None);
    }
}
