use super::cursor::{Cursor, FormatError};
use super::reader::RawRecord;
use crate::tags::record as tag;

/// One site of an ALLOC SITES record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocSite {
    pub array_type: u8,
    pub class_serial: u32,
    pub trace_serial: u32,
    pub live_bytes: u32,
    pub live_instances: u32,
    pub alloc_bytes: u32,
    pub alloc_instances: u32,
}

/// What a MONITOR TIMES row's time was spent on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MonitorKind {
    /// Blocked entering a monitor another thread held (MONITOR TIME's rows).
    Enter,
    /// In Object.wait on the monitor, until notified or timed out.
    Wait,
}

impl MonitorKind {
    pub fn code(self) -> u8 {
        match self {
            MonitorKind::Enter => 1,
            MonitorKind::Wait => 2,
        }
    }

    pub fn from_code(code: u8) -> Option<MonitorKind> {
        match code {
            1 => Some(MonitorKind::Enter),
            2 => Some(MonitorKind::Wait),
            _ => None,
        }
    }

    /// `enter` / `wait`, as tables and JSON name it.
    pub fn name(self) -> &'static str {
        match self {
            MonitorKind::Enter => "enter",
            MonitorKind::Wait => "wait",
        }
    }
}

/// One row of a MONITOR TIMES record: time spent on monitors of one class from one stack trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonitorTime {
    pub kind: MonitorKind,
    pub trace_serial: u32,
    /// STRING id of the monitor's class name (Java source form); 0 if unknown.
    pub class_name_id: u64,
    pub count: u64,
    pub nanos: u64,
}

/// A decoded top-level record. Heap dump bodies stay raw: they are parsed by sub-record.
#[derive(Debug, Clone, PartialEq)]
pub enum Record<'a> {
    Utf8 {
        id: u64,
        text: &'a [u8],
    },
    LoadClass {
        serial: u32,
        class_id: u64,
        trace_serial: u32,
        name_id: u64,
    },
    UnloadClass {
        serial: u32,
    },
    Frame {
        id: u64,
        method_name_id: u64,
        signature_id: u64,
        source_file_id: u64,
        class_serial: u32,
        line: i32,
    },
    Trace {
        serial: u32,
        thread_serial: u32,
        frame_ids: Vec<u64>,
    },
    AllocSites {
        flags: u16,
        cutoff: f32,
        total_live_bytes: u32,
        total_live_instances: u32,
        total_alloc_bytes: u64,
        total_alloc_instances: u64,
        sites: Vec<AllocSite>,
    },
    HeapSummary {
        live_bytes: u32,
        live_instances: u32,
        alloc_bytes: u64,
        alloc_instances: u64,
    },
    StartThread {
        serial: u32,
        object_id: u64,
        trace_serial: u32,
        name_id: u64,
        group_name_id: u64,
        parent_group_name_id: u64,
    },
    EndThread {
        serial: u32,
    },
    /// HEAP DUMP (0x0C) or HEAP DUMP SEGMENT (0x1C): the sub-records, unparsed.
    HeapDump {
        segment: bool,
        body: &'a [u8],
    },
    HeapDumpEnd,
    CpuSamples {
        total: u32,
        samples: Vec<(u32, u32)>,
    },
    ControlSettings {
        flags: u32,
        depth: u16,
    },
    /// hprof-rs's SAMPLE TIMES: (ms since the session started, trace serial, samples).
    SampleTimes {
        samples: Vec<(u32, u32, u32)>,
    },
    /// hprof-rs's MONITOR TIMES: monitor=y's totals so far.
    MonitorTimes {
        rows: Vec<MonitorTime>,
    },
    /// A record this reader does not know (vendor extensions); skipped by callers with a note.
    Unknown {
        tag: u8,
        body: &'a [u8],
    },
}

impl<'a> Record<'a> {
    /// Decodes a record's body. Every count is checked against the bytes that remain.
    pub fn decode(raw: &RawRecord<'a>, id_size: u32) -> Result<Record<'a>, FormatError> {
        let what = match raw.tag {
            tag::UTF8 => "STRING record",
            tag::LOAD_CLASS => "LOAD CLASS record",
            tag::UNLOAD_CLASS => "UNLOAD CLASS record",
            tag::FRAME => "STACK FRAME record",
            tag::TRACE => "STACK TRACE record",
            tag::ALLOC_SITES => "ALLOC SITES record",
            tag::HEAP_SUMMARY => "HEAP SUMMARY record",
            tag::START_THREAD => "START THREAD record",
            tag::END_THREAD => "END THREAD record",
            tag::CPU_SAMPLES => "CPU SAMPLES record",
            tag::CONTROL_SETTINGS => "CONTROL SETTINGS record",
            tag::SAMPLE_TIMES | tag::SAMPLE_TIMES_0XA1 => "SAMPLE TIMES record",
            tag::MONITOR_TIMES => "MONITOR TIMES record",
            _ => "record",
        };
        let mut c = Cursor::new(raw.body, raw.body_offset(), id_size, what);
        let idn = id_size as usize;
        let rec = match raw.tag {
            tag::UTF8 => Record::Utf8 { id: c.id()?, text: c.rest() },
            tag::LOAD_CLASS => {
                Record::LoadClass { serial: c.u4()?, class_id: c.id()?, trace_serial: c.u4()?, name_id: c.id()? }
            }
            tag::UNLOAD_CLASS => Record::UnloadClass { serial: c.u4()? },
            tag::FRAME => Record::Frame {
                id: c.id()?,
                method_name_id: c.id()?,
                signature_id: c.id()?,
                source_file_id: c.id()?,
                class_serial: c.u4()?,
                line: c.u4()? as i32,
            },
            tag::TRACE => {
                let serial = c.u4()?;
                let thread_serial = c.u4()?;
                let n = c.u4()?;
                let n = c.checked_count(n as u64, idn, "frame count")?;
                let frame_ids = (0..n).map(|_| c.id()).collect::<Result<_, _>>()?;
                Record::Trace { serial, thread_serial, frame_ids }
            }
            tag::ALLOC_SITES => {
                let flags = c.u2()?;
                let cutoff = f32::from_bits(c.u4()?);
                let total_live_bytes = c.u4()?;
                let total_live_instances = c.u4()?;
                let total_alloc_bytes = c.u8()?;
                let total_alloc_instances = c.u8()?;
                let n = c.u4()?;
                let n = c.checked_count(n as u64, 25, "site count")?;
                let mut sites = Vec::with_capacity(n);
                for _ in 0..n {
                    sites.push(AllocSite {
                        array_type: c.u1()?,
                        class_serial: c.u4()?,
                        trace_serial: c.u4()?,
                        live_bytes: c.u4()?,
                        live_instances: c.u4()?,
                        alloc_bytes: c.u4()?,
                        alloc_instances: c.u4()?,
                    });
                }
                Record::AllocSites {
                    flags,
                    cutoff,
                    total_live_bytes,
                    total_live_instances,
                    total_alloc_bytes,
                    total_alloc_instances,
                    sites,
                }
            }
            tag::HEAP_SUMMARY => Record::HeapSummary {
                live_bytes: c.u4()?,
                live_instances: c.u4()?,
                alloc_bytes: c.u8()?,
                alloc_instances: c.u8()?,
            },
            tag::START_THREAD => Record::StartThread {
                serial: c.u4()?,
                object_id: c.id()?,
                trace_serial: c.u4()?,
                name_id: c.id()?,
                group_name_id: c.id()?,
                parent_group_name_id: c.id()?,
            },
            tag::END_THREAD => Record::EndThread { serial: c.u4()? },
            tag::HEAP_DUMP => Record::HeapDump { segment: false, body: raw.body },
            tag::HEAP_DUMP_SEGMENT => Record::HeapDump { segment: true, body: raw.body },
            tag::HEAP_DUMP_END => Record::HeapDumpEnd,
            tag::CPU_SAMPLES => {
                let total = c.u4()?;
                let n = c.u4()?;
                let n = c.checked_count(n as u64, 8, "trace count")?;
                let samples = (0..n).map(|_| Ok((c.u4()?, c.u4()?))).collect::<Result<_, FormatError>>()?;
                Record::CpuSamples { total, samples }
            }
            tag::CONTROL_SETTINGS => Record::ControlSettings { flags: c.u4()?, depth: c.u2()? },
            tag::SAMPLE_TIMES | tag::SAMPLE_TIMES_0XA1 => {
                let n = c.u4()?;
                let n = c.checked_count(n as u64, 12, "sample count")?;
                let samples = (0..n).map(|_| Ok((c.u4()?, c.u4()?, c.u4()?))).collect::<Result<_, FormatError>>()?;
                Record::SampleTimes { samples }
            }
            tag::MONITOR_TIMES => {
                let n = c.u4()?;
                let n = c.checked_count(n as u64, 1 + 4 + idn + 8 + 8, "row count")?;
                let mut rows = Vec::with_capacity(n);
                for _ in 0..n {
                    let code = c.u1()?;
                    let kind = MonitorKind::from_code(code)
                        .ok_or_else(|| c.error(format!("monitor kind {code} (1 enter, 2 wait)")))?;
                    rows.push(MonitorTime {
                        kind,
                        trace_serial: c.u4()?,
                        class_name_id: c.id()?,
                        count: c.u8()?,
                        nanos: c.u8()?,
                    });
                }
                Record::MonitorTimes { rows }
            }
            other => Record::Unknown { tag: other, body: raw.body },
        };
        Ok(rec)
    }
}
