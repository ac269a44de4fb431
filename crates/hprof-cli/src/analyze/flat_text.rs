//! Text reports with a flat profile (`cpu=flat`, `-Xprof`): `hprof print` shows the profile again (with
//! its own cutoff), `hprof flame` draws it as thread → table → method, weighted by ticks. Binary profiles
//! have no flat profile (it is text only), so these commands look for one when the file is text.

use hprof_format::flame::WeightedStack;
use hprof_format::text::flat::{FlatProfile, parse_flat_profile, write_global, write_thread};
use std::io::{self, Write};
use std::path::Path;

/// The flat profile of `path` if it is a text report that holds one; `None` for anything else (binary
/// files first of all, which the caller then opens as such).
pub fn read(path: &Path) -> Option<FlatProfile> {
    parse_flat_profile(&text_report(path)?)
}

/// The text of `path` if it is a text report: `format=a`'s, or cpu=old's (which has no header). A binary
/// profile's header line ends in a NUL; a text report has none.
pub fn text_report(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    if !(bytes.starts_with(b"JAVA PROFILE") || bytes.starts_with(b"count callee caller time")) || bytes.contains(&0) {
        return None;
    }
    // Names in it reach the terminal: control characters escaped, lines and the tabs that start TRACE frames kept.
    Some(hprof_format::names::printable_keeping(&String::from_utf8_lossy(&bytes), &['\n', '\t']).into_owned())
}

/// The profile in -Xprof's layout, rows below `cutoff` of their thread left out.
pub fn print(w: &mut dyn Write, p: &FlatProfile, cutoff: f64) -> io::Result<()> {
    for t in &p.threads {
        write_thread(w, t, cutoff)?;
    }
    write_global(w, &p.global)
}

/// Stacks `thread;Interpreted|Compiled|Stub;method`, and `…;method;native` for native ticks, plus the
/// thread-local ticks under their own names, weighted by ticks.
pub fn stacks(p: &FlatProfile) -> Vec<WeightedStack> {
    let mut out = Vec::new();
    let mut push = |frames: Vec<String>, weight: u64| {
        if weight > 0 {
            out.push(WeightedStack { frames, weight });
        }
    };
    for t in &p.threads {
        for (table, rows) in [("Interpreted", &t.interpreted), ("Compiled", &t.compiled), ("Stub", &t.stub)] {
            for r in rows {
                let base = vec![t.name.clone(), table.to_string(), r.name.clone()];
                push(base.clone(), r.code);
                let mut native = base;
                native.push("native".into());
                push(native, r.native);
            }
        }
        for (what, ticks) in [
            ("Blocked", t.blocked),
            ("Class loader", t.class_loader),
            ("Interpreter", t.interpreter),
            ("Compilation", t.compilation),
            ("Unknown code", t.unknown),
        ] {
            push(vec![t.name.clone(), what.to_string()], ticks);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hprof_format::text::flat::{NamedRow, ThreadProfile};

    #[test]
    fn stacks_name_thread_table_and_method() {
        let p = FlatProfile {
            threads: vec![ThreadProfile {
                name: "main".into(),
                compiled: vec![NamedRow { name: "A.b".into(), code: 5, native: 2 }],
                blocked: 3,
                ..Default::default()
            }],
            ..Default::default()
        };
        let s = stacks(&p);
        let folded: Vec<(String, u64)> = s.iter().map(|w| (w.frames.join(";"), w.weight)).collect();
        assert_eq!(
            folded,
            vec![("main;Compiled;A.b".into(), 5), ("main;Compiled;A.b;native".into(), 2), ("main;Blocked".into(), 3)]
        );
    }
}
