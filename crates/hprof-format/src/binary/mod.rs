//! The binary format (`format=b`): big-endian, a NUL-terminated version string, the identifier size, a
//! millisecond timestamp, then `u1 tag, u4 microseconds, u4 length, body` records.

mod body;
mod cursor;
pub mod heap;
mod heap_writer;
mod reader;
mod records;
mod writer;

pub use body::Body;
pub use cursor::{Cursor, FormatError};
pub use heap::{ClassDump, FieldDecl, HeapRecord, HeapRecords, StaticField, Value};
pub use heap_writer::{ClassDumpOut, HeapWriter, SubRecordOut};
pub use reader::{Header, RawRecord, Records, parse_header};
pub use records::{AllocSite, MonitorKind, MonitorTime, Record};
pub use writer::{FrameRecord, RECORD_HEAD, RecordWriter, record_head};
