//! Record tags, heap-dump sub-record tags and basic types.

/// Top-level record tags.
pub mod record {
    pub const UTF8: u8 = 0x01;
    pub const LOAD_CLASS: u8 = 0x02;
    pub const UNLOAD_CLASS: u8 = 0x03;
    pub const FRAME: u8 = 0x04;
    pub const TRACE: u8 = 0x05;
    pub const ALLOC_SITES: u8 = 0x06;
    pub const HEAP_SUMMARY: u8 = 0x07;
    pub const START_THREAD: u8 = 0x0A;
    pub const END_THREAD: u8 = 0x0B;
    pub const HEAP_DUMP: u8 = 0x0C;
    pub const CPU_SAMPLES: u8 = 0x0D;
    pub const CONTROL_SETTINGS: u8 = 0x0E;
    pub const HEAP_DUMP_SEGMENT: u8 = 0x1C;
    pub const HEAP_DUMP_END: u8 = 0x2C;
    // hprof-rs's own records take tags below 0x80: VisualVM reads a tag as a signed byte and fails on any
    // tag from 0x80 up (an array index of -94 for 0xA2), while it skips unknown ones below by their length.
    /// hprof-rs's own: each sample's time (ms since the session started), trace and weight, so that a time
    /// range can be chosen (`hprof flame --from --to`). Readers that do not know it skip it by its length.
    pub const SAMPLE_TIMES: u8 = 0x71;
    /// SAMPLE TIMES as the first builds wrote it (VisualVM could not read those files); still read.
    pub const SAMPLE_TIMES_0XA1: u8 = 0xA1;
    /// hprof-rs's own: monitor=y's lock profile — per stack trace, monitor class and kind (contended enter
    /// or Object.wait), the count and the nanoseconds. The last record of a file holds the totals.
    pub const MONITOR_TIMES: u8 = 0x72;

    pub fn name(tag: u8) -> &'static str {
        match tag {
            UTF8 => "STRING",
            LOAD_CLASS => "LOAD CLASS",
            UNLOAD_CLASS => "UNLOAD CLASS",
            FRAME => "STACK FRAME",
            TRACE => "STACK TRACE",
            ALLOC_SITES => "ALLOC SITES",
            HEAP_SUMMARY => "HEAP SUMMARY",
            START_THREAD => "START THREAD",
            END_THREAD => "END THREAD",
            HEAP_DUMP => "HEAP DUMP",
            CPU_SAMPLES => "CPU SAMPLES",
            CONTROL_SETTINGS => "CONTROL SETTINGS",
            HEAP_DUMP_SEGMENT => "HEAP DUMP SEGMENT",
            HEAP_DUMP_END => "HEAP DUMP END",
            SAMPLE_TIMES | SAMPLE_TIMES_0XA1 => "SAMPLE TIMES (hprof-rs)",
            MONITOR_TIMES => "MONITOR TIMES (hprof-rs)",
            // Callers add "record (tag 0x..)": "unknown record" would read "unknown record record".
            _ => "unknown",
        }
    }
}

/// Heap-dump sub-record tags (inside HEAP DUMP / HEAP DUMP SEGMENT).
pub mod heap {
    pub const ROOT_UNKNOWN: u8 = 0xFF;
    pub const ROOT_JNI_GLOBAL: u8 = 0x01;
    pub const ROOT_JNI_LOCAL: u8 = 0x02;
    pub const ROOT_JAVA_FRAME: u8 = 0x03;
    pub const ROOT_NATIVE_STACK: u8 = 0x04;
    pub const ROOT_STICKY_CLASS: u8 = 0x05;
    pub const ROOT_THREAD_BLOCK: u8 = 0x06;
    pub const ROOT_MONITOR_USED: u8 = 0x07;
    pub const ROOT_THREAD_OBJECT: u8 = 0x08;
    pub const CLASS_DUMP: u8 = 0x20;
    pub const INSTANCE_DUMP: u8 = 0x21;
    pub const OBJECT_ARRAY_DUMP: u8 = 0x22;
    pub const PRIMITIVE_ARRAY_DUMP: u8 = 0x23;
    // Android (1.0.3) extensions.
    pub const ROOT_INTERNED_STRING: u8 = 0x89;
    pub const ROOT_FINALIZING: u8 = 0x8A;
    pub const ROOT_DEBUGGER: u8 = 0x8B;
    pub const ROOT_REFERENCE_CLEANUP: u8 = 0x8C;
    pub const ROOT_VM_INTERNAL: u8 = 0x8D;
    pub const ROOT_JNI_MONITOR: u8 = 0x8E;
    pub const UNREACHABLE: u8 = 0x90;
    pub const PRIMITIVE_ARRAY_NODATA: u8 = 0xC3;
    pub const HEAP_DUMP_INFO: u8 = 0xFE;
}

/// Field and array element types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum BasicType {
    Object = 2,
    Boolean = 4,
    Char = 5,
    Float = 6,
    Double = 7,
    Byte = 8,
    Short = 9,
    Int = 10,
    Long = 11,
}

impl BasicType {
    pub fn from_u8(b: u8) -> Option<BasicType> {
        Some(match b {
            // 1 ("array object") appears in old documents; writers use 2 for every reference.
            1 | 2 => BasicType::Object,
            4 => BasicType::Boolean,
            5 => BasicType::Char,
            6 => BasicType::Float,
            7 => BasicType::Double,
            8 => BasicType::Byte,
            9 => BasicType::Short,
            10 => BasicType::Int,
            11 => BasicType::Long,
            _ => return None,
        })
    }

    /// The type of a JVM field descriptor's first character (`I`, `[`, `L`, …).
    pub fn from_descriptor(c: u8) -> Option<BasicType> {
        Some(match c {
            b'L' | b'[' => BasicType::Object,
            b'Z' => BasicType::Boolean,
            b'C' => BasicType::Char,
            b'F' => BasicType::Float,
            b'D' => BasicType::Double,
            b'B' => BasicType::Byte,
            b'S' => BasicType::Short,
            b'I' => BasicType::Int,
            b'J' => BasicType::Long,
            _ => return None,
        })
    }

    /// Size of a value in the file; references take the identifier size.
    pub fn size(self, id_size: u32) -> u32 {
        match self {
            BasicType::Object => id_size,
            BasicType::Boolean | BasicType::Byte => 1,
            BasicType::Char | BasicType::Short => 2,
            BasicType::Float | BasicType::Int => 4,
            BasicType::Double | BasicType::Long => 8,
        }
    }

    /// The Java keyword, e.g. `int` (`Object` for references).
    pub fn java_name(self) -> &'static str {
        match self {
            BasicType::Object => "Object",
            BasicType::Boolean => "boolean",
            BasicType::Char => "char",
            BasicType::Float => "float",
            BasicType::Double => "double",
            BasicType::Byte => "byte",
            BasicType::Short => "short",
            BasicType::Int => "int",
            BasicType::Long => "long",
        }
    }
}
