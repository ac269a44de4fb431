//! Binary output state: which strings, classes and frames the file already holds, so that every record
//! is preceded by the STRING / LOAD CLASS / STACK FRAME records it refers to, each written once.

use super::Buffered;
use super::ReportTables;
use crate::classes::ClassRecord;
use crate::traces::StoredFrame;
use hprof_format::binary::{FrameRecord, RecordWriter};
use hprof_format::model::ThreadStart;
use hprof_format::serial_base;
use rustc_hash::FxHashMap;
use std::io;

pub use hprof_format::ID_SIZE;

pub struct BinaryEncoder {
    writer: RecordWriter<Buffered>,
    strings: FxHashMap<String, u64>,
    next_string_id: u64,
    classes_written: Vec<bool>,
    frames_written: Vec<bool>,
}

impl BinaryEncoder {
    pub fn new(out: Buffered, version: &str, now_ms: u64) -> io::Result<BinaryEncoder> {
        Ok(BinaryEncoder {
            writer: RecordWriter::new(out, version, ID_SIZE, now_ms)?,
            strings: FxHashMap::default(),
            next_string_id: 1,
            classes_written: Vec::new(),
            frames_written: Vec::new(),
        })
    }

    pub fn writer(&mut self) -> &mut RecordWriter<Buffered> {
        &mut self.writer
    }

    /// The identifier of a STRING record holding `s`, writing the record the first time. "" is id 0.
    pub fn string_id(&mut self, s: &str) -> io::Result<u64> {
        if s.is_empty() {
            return Ok(0);
        }
        if let Some(&id) = self.strings.get(s) {
            return Ok(id);
        }
        let id = self.next_string_id;
        self.next_string_id += 1;
        self.writer.utf8(id, s)?;
        self.strings.insert(s.to_owned(), id);
        Ok(id)
    }

    /// LOAD CLASS, once per class. Names are in Java source form (`char[]`, `java.lang.String[][]`), as
    /// HPROF's format document asks.
    pub fn load_class(&mut self, class: &ClassRecord) -> io::Result<()> {
        let index = (class.serial - serial_base::CLASS - 1) as usize;
        if self.classes_written.get(index).copied().unwrap_or(false) {
            return Ok(());
        }
        let name_id = self.string_id(&class.name)?;
        self.writer.load_class(class.serial, class.object_id, serial_base::TRACE, name_id)?;
        if self.classes_written.len() <= index {
            self.classes_written.resize(index + 1, false);
        }
        self.classes_written[index] = true;
        Ok(())
    }

    pub fn start_thread(&mut self, t: &ThreadStart) -> io::Result<()> {
        let name = self.string_id(&t.name)?;
        let group = self.string_id(&t.group_name)?;
        let parent = self.string_id(&t.parent_group_name)?;
        self.writer.start_thread(t.serial, t.object_id, t.trace_serial, name, group, parent)
    }

    /// STACK TRACE, preceded by whatever STRING, LOAD CLASS and STACK FRAME records it needs.
    pub fn trace(
        &mut self,
        ctx: &(impl ReportTables + ?Sized),
        serial: u32,
        thread_serial: u32,
        frames: &[(u32, StoredFrame)],
    ) -> io::Result<()> {
        let mut ids = Vec::with_capacity(frames.len());
        for (index, stored) in frames {
            let frame_id = serial_base::FRAME as u64 + *index as u64 + 1;
            ids.push(frame_id);
            let i = *index as usize;
            if self.frames_written.get(i).copied().unwrap_or(false) {
                continue;
            }
            if let Some(class) = ctx.classes().by_serial(stored.class_serial) {
                self.load_class(&class)?;
            }
            let f = &stored.frame;
            let method = self.string_id(&f.method_name)?;
            let sig = self.string_id(&f.method_signature)?;
            let source = match &f.source_file {
                Some(s) => self.string_id(s)?,
                None => 0,
            };
            self.writer.frame(&FrameRecord {
                frame_id,
                method_name_id: method,
                signature_id: sig,
                source_file_id: source,
                class_serial: stored.class_serial,
                line: f.line.to_raw(),
            })?;
            if self.frames_written.len() <= i {
                self.frames_written.resize(i + 1, false);
            }
            self.frames_written[i] = true;
        }
        self.writer.trace(serial, thread_serial, &ids)
    }
}
