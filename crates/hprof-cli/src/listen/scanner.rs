//! Follows the record stream as it arrives, for the listener's live summary. Bodies of large records
//! (heap dump segments) are counted, not kept.

use hprof_format::binary::{RawRecord, Record, parse_header};
use hprof_format::tags::record as tag;
use std::collections::{BTreeMap, HashMap};

/// Bodies up to this size are decoded for the summary; larger ones are skipped.
const KEEP_BODY: usize = 1 << 20;

enum State {
    Header,
    RecordHead,
    Body {
        tag: u8,
        len: usize,
        keep: bool,
        left: usize,
    },
    /// Not an HPROF stream: the rest is saved, not followed.
    Stopped,
}

/// Most bytes of strings kept for naming threads: a stream of endless strings costs no more than this.
const KEEP_STRINGS: usize = 16 << 20;

/// Most bytes kept while looking for the header's end (the listener checks the header before this).
const MAX_HEADER: usize = 1024 + 13;

pub struct Scanner {
    state: State,
    pending: Vec<u8>,
    offset: u64,
    id_size: u32,
    pub version: Option<String>,
    pub counts: BTreeMap<u8, u64>,
    pub bytes: u64,
    strings: HashMap<u64, String>,
    string_bytes: usize,
    heap_segments: u64,
    heap_bytes: u64,
}

impl Scanner {
    pub fn new() -> Scanner {
        Scanner {
            state: State::Header,
            pending: Vec::new(),
            offset: 0,
            id_size: 8,
            version: None,
            counts: BTreeMap::new(),
            bytes: 0,
            strings: HashMap::new(),
            string_bytes: 0,
            heap_segments: 0,
            heap_bytes: 0,
        }
    }

    /// Takes the next bytes of the stream; returns what is worth telling the user.
    pub fn feed(&mut self, mut data: &[u8]) -> Vec<String> {
        self.bytes += data.len() as u64;
        let mut events = Vec::new();
        while !data.is_empty() {
            match &mut self.state {
                State::Stopped => data = &[],
                State::Header => {
                    let take = data.len().min(MAX_HEADER.saturating_sub(self.pending.len()));
                    self.pending.extend_from_slice(&data[..take]);
                    data = &data[take..];
                    let nul = self.pending.iter().position(|&b| b == 0);
                    let complete = nul.is_some_and(|nul| self.pending.len() >= nul + 13);
                    if !complete && self.pending.len() >= MAX_HEADER {
                        events.push(format!("not an HPROF stream: no header within {MAX_HEADER} bytes"));
                        self.pending = Vec::new();
                        self.state = State::Stopped;
                    } else if complete {
                        match parse_header(&self.pending) {
                            Ok(h) => {
                                self.id_size = h.id_size;
                                events.push(format!("{} with {}-byte identifiers", h.version, h.id_size));
                                self.version = Some(h.version);
                                let mut rest = self.pending.split_off(h.records_offset);
                                rest.extend_from_slice(data);
                                data = &[];
                                self.offset = h.records_offset as u64;
                                self.pending.clear();
                                self.state = State::RecordHead;
                                events.extend(self.feed_inner(&rest));
                            }
                            Err(e) => {
                                events.push(format!("not an HPROF stream: {e}"));
                                self.pending = Vec::new();
                                self.state = State::Stopped;
                            }
                        }
                    }
                }
                _ => {
                    events.extend(self.feed_inner(data));
                    data = &[];
                }
            }
        }
        events
    }

    fn feed_inner(&mut self, mut data: &[u8]) -> Vec<String> {
        let mut events = Vec::new();
        while !data.is_empty() {
            match self.state {
                State::Header | State::Stopped => unreachable!("handled by feed"),
                State::RecordHead => {
                    let need = 9 - self.pending.len();
                    let take = need.min(data.len());
                    self.pending.extend_from_slice(&data[..take]);
                    data = &data[take..];
                    if self.pending.len() == 9 {
                        let t = self.pending[0];
                        let len = u32::from_be_bytes(self.pending[5..9].try_into().unwrap()) as usize;
                        self.pending.clear();
                        self.state = State::Body { tag: t, len, keep: len <= KEEP_BODY, left: len };
                        if len == 0 {
                            events.extend(self.finish_record(t, 0));
                        }
                    }
                }
                State::Body { tag: t, len, keep, left } => {
                    let take = left.min(data.len());
                    if keep {
                        self.pending.extend_from_slice(&data[..take]);
                    }
                    data = &data[take..];
                    let left = left - take;
                    self.state = State::Body { tag: t, len, keep, left };
                    if left == 0 {
                        events.extend(self.finish_record(t, len));
                    }
                }
            }
        }
        events
    }

    fn finish_record(&mut self, t: u8, len: usize) -> Option<String> {
        *self.counts.entry(t).or_default() += 1;
        let body = std::mem::take(&mut self.pending);
        let at = self.offset;
        self.offset += 9 + len as u64;
        self.state = State::RecordHead;
        if t == tag::HEAP_DUMP_SEGMENT || t == tag::HEAP_DUMP {
            self.heap_segments += 1;
            self.heap_bytes += len as u64;
            if t == tag::HEAP_DUMP {
                return Some(format!("HEAP DUMP ({len} bytes)"));
            }
            return None;
        }
        if t == tag::HEAP_DUMP_END {
            let msg = format!("HEAP DUMP: {} segments, {} bytes", self.heap_segments, self.heap_bytes);
            self.heap_segments = 0;
            self.heap_bytes = 0;
            return Some(msg);
        }
        if body.len() != len {
            return None;
        }
        let raw = RawRecord { tag: t, micros: 0, offset: at, body: &body };
        match Record::decode(&raw, self.id_size).ok()? {
            Record::Utf8 { id, text } if text.len() <= 256 => {
                let text = String::from_utf8_lossy(text);
                if self.string_bytes < KEEP_STRINGS {
                    let name = hprof_format::names::printable(&text).into_owned();
                    self.string_bytes += name.len() + 32;
                    self.strings.insert(id, name);
                }
                None
            }
            Record::StartThread { serial, name_id, .. } => {
                let name = self.strings.get(&name_id).cloned().unwrap_or_default();
                Some(format!("START THREAD {serial} \"{name}\""))
            }
            Record::CpuSamples { total, samples } => {
                Some(format!("CPU SAMPLES: {total} samples in {} traces", samples.len()))
            }
            Record::AllocSites { total_live_bytes, total_live_instances, sites, .. } => Some(format!(
                "ALLOC SITES: {} sites, {total_live_bytes} live bytes in {total_live_instances} objects",
                sites.len()
            )),
            Record::HeapSummary { live_bytes, live_instances, alloc_bytes, alloc_instances } => Some(format!(
                "HEAP SUMMARY: live {live_bytes} bytes / {live_instances} objects, allocated {alloc_bytes} bytes / \
                 {alloc_instances} objects"
            )),
            Record::ControlSettings { flags, depth } => {
                Some(format!("CONTROL SETTINGS: flags {flags:#x}, depth {depth}"))
            }
            _ => None,
        }
    }

    /// One line: bytes and records so far.
    pub fn status(&self) -> String {
        let records: u64 = self.counts.values().sum();
        format!("{} bytes, {records} records", self.bytes)
    }

    /// Record counts by kind, for the final summary.
    pub fn counts_by_name(&self) -> Vec<(&'static str, u64)> {
        self.counts.iter().map(|(&t, &n)| (tag::name(t), n)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hprof_format::binary::RecordWriter;

    #[test]
    fn a_header_without_end_is_not_kept() {
        let mut s = Scanner::new();
        let mut events = s.feed(b"JAVA PROFILE ");
        for _ in 0..1000 {
            events.extend(s.feed(&[b'x'; 100_000]));
        }
        assert_eq!(events, vec![format!("not an HPROF stream: no header within {MAX_HEADER} bytes")]);
        assert!(s.pending.capacity() <= MAX_HEADER);
    }

    #[test]
    fn strings_kept_are_bounded() {
        let mut w = RecordWriter::new(Vec::new(), hprof_format::PROFILE_1_0_2, 8, 0).unwrap();
        let mut s = Scanner::new();
        s.feed(&std::mem::take(w.get_mut()));
        let name = "n".repeat(200);
        for id in 0..200_000 {
            w.utf8(id, &name).unwrap();
            if id % 1000 == 0 {
                s.feed(&std::mem::take(w.get_mut()));
            }
        }
        assert!(s.string_bytes <= KEEP_STRINGS + 256 && s.strings.len() < 100_000, "{}", s.strings.len());
    }

    #[test]
    fn names_are_escaped() {
        let mut w = RecordWriter::new(Vec::new(), hprof_format::PROFILE_1_0_2, 8, 0).unwrap();
        w.utf8(1, "evil\x1b]0;owned\x07\x1b[2J").unwrap();
        w.start_thread(7, 9, 300000, 1, 0, 0).unwrap();
        let mut s = Scanner::new();
        let events = s.feed(&w.into_inner());
        assert_eq!(events[1], "START THREAD 7 \"evil\\x1b]0;owned\\x07\\x1b[2J\"");
    }

    #[test]
    fn follows_records_split_anywhere() {
        let mut w = RecordWriter::new(Vec::new(), hprof_format::PROFILE_1_0_2, 8, 0).unwrap();
        w.utf8(1, "main").unwrap();
        w.start_thread(200001, 9, 300000, 1, 0, 0).unwrap();
        w.cpu_samples(5, &[(5, 300001)]).unwrap();
        w.heap_dump_segment(&[0u8; 3000]).unwrap();
        w.heap_dump_end().unwrap();
        let data = w.into_inner();
        for chunk in [1, 7, 100, 100_000] {
            let mut s = Scanner::new();
            let events: Vec<String> = data.chunks(chunk).flat_map(|c| s.feed(c)).collect();
            assert_eq!(
                events,
                vec![
                    "JAVA PROFILE 1.0.2 with 8-byte identifiers",
                    "START THREAD 200001 \"main\"",
                    "CPU SAMPLES: 5 samples in 1 traces",
                    "HEAP DUMP: 1 segments, 3000 bytes",
                ],
                "chunk {chunk}"
            );
            assert_eq!(s.counts.values().sum::<u64>(), 5);
        }
    }
}
