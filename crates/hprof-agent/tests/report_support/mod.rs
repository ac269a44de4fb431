//! Parses the agent's text report in tests: TRACE blocks and the ranked sections' rows.
#![allow(dead_code)]

use std::collections::HashMap;

/// A TRACE record: its thread (thread=y) and frames as printed.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub thread: Option<u32>,
    pub frames: Vec<String>,
}

/// Every TRACE in the file, by serial.
pub fn traces(text: &str) -> HashMap<u32, Trace> {
    let mut out = HashMap::new();
    let mut current: Option<(u32, Trace)> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("TRACE ") {
            if let Some((s, t)) = current.take() {
                out.insert(s, t);
            }
            let (serial, tail) = rest.split_once(':').expect("TRACE n:");
            let thread = tail.split("thread=").nth(1).map(|t| t.trim_end_matches(')').parse().expect("thread serial"));
            current = Some((serial.parse().expect("trace serial"), Trace { thread, frames: Vec::new() }));
        } else if let Some(frame) = line.strip_prefix('\t') {
            if let Some((_, t)) = current.as_mut() {
                t.frames.push(frame.to_owned());
            }
        } else if let Some((s, t)) = current.take() {
            out.insert(s, t);
        }
    }
    if let Some((s, t)) = current.take() {
        out.insert(s, t);
    }
    out
}

/// One row of CPU SAMPLES / CPU TIME / MONITOR TIME: rank, self %, accum %, count, trace, method.
#[derive(Debug, Clone, PartialEq)]
pub struct RankedRow {
    pub rank: u32,
    pub self_pct: f64,
    pub accum_pct: f64,
    pub count: u64,
    pub trace: u32,
    pub name: String,
}

/// A section from its BEGIN line to its END line: the BEGIN line's total and its rows. `n` picks the n-th
/// occurrence (0 = first).
pub fn ranked_section(text: &str, name: &str, n: usize) -> Option<(u64, Vec<RankedRow>)> {
    let begin = format!("{name} BEGIN (total = ");
    let mut sections = text.split(&begin).skip(1);
    let body = sections.nth(n)?;
    let total: u64 = body.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
    let end = format!("{name} END");
    let body = &body[..body.find(&end)?];
    let rows = body
        .lines()
        .skip(1)
        .filter(|l| l.trim_start().chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            RankedRow {
                rank: w[0].parse().unwrap(),
                self_pct: w[1].trim_end_matches('%').parse().unwrap(),
                accum_pct: w[2].trim_end_matches('%').parse().unwrap(),
                count: w[3].parse().unwrap(),
                trace: w[4].parse().unwrap(),
                name: w[5..].join(" "),
            }
        })
        .collect();
    Some((total, rows))
}

/// `key=value` pairs from a line the test program printed, e.g. `own-share hotAlpha=74.9 hotBeta=25.1`.
pub fn program_figures(stdout: &str, prefix: &str) -> HashMap<String, f64> {
    let line =
        stdout.lines().find(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("no {prefix} line in:\n{stdout}"));
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.parse().unwrap_or_else(|_| panic!("number in {k}={v}"))))
        .collect()
}

/// Every record of a binary profile, decoded; panics on a malformed one.
pub fn binary_records(bytes: &[u8]) -> Vec<hprof_format::binary::Record<'_>> {
    use hprof_format::binary::{Record, Records, parse_header};
    let h = parse_header(bytes).expect("header");
    Records::new(bytes, &h).map(|r| Record::decode(&r.expect("record"), h.id_size).expect("decode")).collect()
}

/// The STRING records by identifier.
pub fn strings_by_id(records: &[hprof_format::binary::Record<'_>]) -> HashMap<u64, String> {
    records
        .iter()
        .filter_map(|r| match r {
            hprof_format::binary::Record::Utf8 { id, text } => Some((*id, String::from_utf8_lossy(text).into_owned())),
            _ => None,
        })
        .collect()
}
