//! The front end's commands on the `net=` socket (HPROF's "Socket Connection and Communication"):
//! `u1 tag, u4 serial, u4 length, payload`, big-endian.
//!
//! The original agent ignored the length field, so front ends written for it may send anything there.
//! We decode each payload by its tag, then use the length only to skip extra bytes when it is plausible.

use std::fmt;
use std::io::{self, Read};

pub const FORCE_GC: u8 = 0x01;
pub const DUMP_HEAP: u8 = 0x02;
pub const ALLOC_SITES: u8 = 0x03;
pub const HEAP_SUMMARY: u8 = 0x04;
pub const EXIT_VM: u8 = 0x05;
pub const DUMP_TRACES: u8 = 0x06;
pub const CPU_SAMPLES: u8 = 0x07;
pub const CONTROL: u8 = 0x08;
pub const EOF: u8 = 0xFF;

/// CONTROL sub-commands, numbered as the HPROF document numbers them.
pub mod control {
    pub const ALLOC_TRACES_ON: u16 = 0x1;
    pub const ALLOC_TRACES_OFF: u16 = 0x2;
    pub const CPU_SAMPLING_ON: u16 = 0x3;
    pub const CPU_SAMPLING_OFF: u16 = 0x4;
    pub const CLEAR_CPU_SAMPLES: u16 = 0x5;
    pub const SET_DEPTH: u16 = 0x6;
    /// The JDK 6–8 agent's sources numbered "set depth" 7 (and used 6 to reset the site table).
    pub const SET_DEPTH_OLD: u16 = 0x7;
}

/// Extra payload bytes we are willing to skip when a command's length says there are more.
pub const MAX_SKIP: u32 = 4096;

/// A decoded command.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    ForceGc,
    DumpHeap,
    AllocSites {
        flags: u16,
        cutoff: f32,
    },
    HeapSummary,
    ExitVm,
    DumpTraces,
    CpuSamples {
        cutoff: f32,
    },
    AllocTracking(bool),
    /// `thread_object_id` 0 means all threads.
    CpuSampling {
        thread_object_id: u64,
        on: bool,
    },
    ClearCpuSamples,
    SetDepth(u16),
    Eof,
}

/// A command with the serial the front end gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub tag: u8,
    pub serial: u32,
    pub command: Command,
}

/// What went wrong reading a command. `Skipped` commands were bad but the stream is still in step;
/// `Fatal` ones leave the stream unusable (closed, or cut inside a command).
#[derive(Debug)]
pub enum ReadError {
    Skipped(String),
    Closed,
    Fatal(String),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Skipped(m) | ReadError::Fatal(m) => f.write_str(m),
            ReadError::Closed => f.write_str("connection closed"),
        }
    }
}

struct Source<'a, R: Read> {
    r: &'a mut R,
    consumed: u32,
}

impl<R: Read> Source<'_, R> {
    fn exact(&mut self, buf: &mut [u8], what: &str) -> Result<(), ReadError> {
        self.r.read_exact(buf).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => ReadError::Fatal(format!("connection closed in the middle of {what}")),
            _ => ReadError::Fatal(format!("reading {what}: {e}")),
        })?;
        self.consumed += buf.len() as u32;
        Ok(())
    }
    fn u2(&mut self, what: &str) -> Result<u16, ReadError> {
        let mut b = [0; 2];
        self.exact(&mut b, what)?;
        Ok(u16::from_be_bytes(b))
    }
    fn u4(&mut self, what: &str) -> Result<u32, ReadError> {
        let mut b = [0; 4];
        self.exact(&mut b, what)?;
        Ok(u32::from_be_bytes(b))
    }
    fn u8(&mut self, what: &str) -> Result<u64, ReadError> {
        let mut b = [0; 8];
        self.exact(&mut b, what)?;
        Ok(u64::from_be_bytes(b))
    }
    fn cutoff(&mut self, what: &str) -> Result<f32, ReadError> {
        let c = f32::from_bits(self.u4(what)?);
        if !(0.0..=1.0).contains(&c) {
            return Err(ReadError::Skipped(format!("{what}: cutoff {c} is not between 0 and 1")));
        }
        Ok(c)
    }
}

/// Reads one command. `id_size` is the identifier size of our stream (thread object ids in CONTROL).
pub fn read_command<R: Read>(r: &mut R, id_size: u32) -> Result<Request, ReadError> {
    let mut tag = [0u8; 1];
    match r.read(&mut tag) {
        Ok(0) => return Err(ReadError::Closed),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::Interrupted => return read_command(r, id_size),
        Err(e) if matches!(e.kind(), io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe) => {
            return Err(ReadError::Closed);
        }
        Err(e) => return Err(ReadError::Fatal(format!("reading a command: {e}"))),
    }
    let tag = tag[0];
    let mut src = Source { r, consumed: 0 };
    if tag == EOF {
        return Ok(Request { tag, serial: 0, command: Command::Eof });
    }
    let serial = src.u4("a command header")?;
    let length = src.u4("a command header")?;
    src.consumed = 0;
    let name = command_name(tag);
    let decoded: Result<Command, ReadError> = match tag {
        FORCE_GC => Ok(Command::ForceGc),
        DUMP_HEAP => Ok(Command::DumpHeap),
        HEAP_SUMMARY => Ok(Command::HeapSummary),
        EXIT_VM => Ok(Command::ExitVm),
        DUMP_TRACES => Ok(Command::DumpTraces),
        ALLOC_SITES => {
            let flags = src.u2(name)?;
            src.cutoff(name).map(|cutoff| Command::AllocSites { flags, cutoff })
        }
        CPU_SAMPLES => {
            src.u2(name)?;
            src.cutoff(name).map(|cutoff| Command::CpuSamples { cutoff })
        }
        CONTROL => decode_control(&mut src, id_size),
        other => {
            // Unknown: all we can do is trust a plausible length to stay in step.
            if length <= MAX_SKIP {
                skip(src.r, length).map_err(|e| ReadError::Fatal(format!("skipping unknown command: {e}")))?;
                return Err(ReadError::Skipped(format!(
                    "unknown command tag 0x{other:02X} (serial {serial}, {length} bytes); skipped"
                )));
            }
            return Err(ReadError::Fatal(format!(
                "unknown command tag 0x{other:02X} (serial {serial}) with an implausible length {length}; \
                 the command stream cannot be followed any further"
            )));
        }
    };
    // Extra bytes the length announces beyond what the tag defines: skip them if the length is plausible.
    if length > src.consumed && length <= MAX_SKIP {
        skip(src.r, length - src.consumed).map_err(|e| ReadError::Fatal(format!("skipping command payload: {e}")))?;
    }
    decoded.map(|command| Request { tag, serial, command })
}

fn decode_control<R: Read>(src: &mut Source<'_, R>, id_size: u32) -> Result<Command, ReadError> {
    let what = "CONTROL command";
    let sub = src.u2(what)?;
    let mut thread_id =
        || -> Result<u64, ReadError> { if id_size == 4 { src.u4(what).map(u64::from) } else { src.u8(what) } };
    match sub {
        control::ALLOC_TRACES_ON => Ok(Command::AllocTracking(true)),
        control::ALLOC_TRACES_OFF => Ok(Command::AllocTracking(false)),
        control::CPU_SAMPLING_ON => Ok(Command::CpuSampling { thread_object_id: thread_id()?, on: true }),
        control::CPU_SAMPLING_OFF => Ok(Command::CpuSampling { thread_object_id: thread_id()?, on: false }),
        control::CLEAR_CPU_SAMPLES => Ok(Command::ClearCpuSamples),
        control::SET_DEPTH | control::SET_DEPTH_OLD => Ok(Command::SetDepth(src.u2(what)?)),
        other => Err(ReadError::Skipped(format!("CONTROL sub-command 0x{other:X} is unknown; skipped"))),
    }
}

fn skip<R: Read>(r: &mut R, n: u32) -> io::Result<()> {
    let copied = io::copy(&mut r.take(n as u64), &mut io::sink())?;
    if copied < n as u64 { Err(io::ErrorKind::UnexpectedEof.into()) } else { Ok(()) }
}

pub fn command_name(tag: u8) -> &'static str {
    match tag {
        FORCE_GC => "FORCE GC",
        DUMP_HEAP => "DUMP HEAP",
        ALLOC_SITES => "ALLOC SITES",
        HEAP_SUMMARY => "HEAP SUMMARY",
        EXIT_VM => "EXIT THE VM",
        DUMP_TRACES => "DUMP TRACES",
        CPU_SAMPLES => "CPU SAMPLES",
        CONTROL => "CONTROL",
        EOF => "EOF",
        _ => "unknown command",
    }
}

/// Encodes a command (the front end's side; also used by tests).
pub fn encode(serial: u32, command: &Command, id_size: u32) -> Vec<u8> {
    let (tag, payload): (u8, Vec<u8>) = match command {
        Command::ForceGc => (FORCE_GC, vec![]),
        Command::DumpHeap => (DUMP_HEAP, vec![]),
        Command::HeapSummary => (HEAP_SUMMARY, vec![]),
        Command::ExitVm => (EXIT_VM, vec![]),
        Command::DumpTraces => (DUMP_TRACES, vec![]),
        Command::AllocSites { flags, cutoff } => {
            (ALLOC_SITES, [&flags.to_be_bytes()[..], &cutoff.to_bits().to_be_bytes()].concat())
        }
        Command::CpuSamples { cutoff } => (CPU_SAMPLES, [&[0u8, 0][..], &cutoff.to_bits().to_be_bytes()].concat()),
        Command::AllocTracking(on) => {
            (CONTROL, (if *on { control::ALLOC_TRACES_ON } else { control::ALLOC_TRACES_OFF }).to_be_bytes().to_vec())
        }
        Command::CpuSampling { thread_object_id, on } => {
            let sub = if *on { control::CPU_SAMPLING_ON } else { control::CPU_SAMPLING_OFF };
            let id: Vec<u8> = if id_size == 4 {
                (*thread_object_id as u32).to_be_bytes().to_vec()
            } else {
                thread_object_id.to_be_bytes().to_vec()
            };
            (CONTROL, [&sub.to_be_bytes()[..], &id].concat())
        }
        Command::ClearCpuSamples => (CONTROL, control::CLEAR_CPU_SAMPLES.to_be_bytes().to_vec()),
        Command::SetDepth(d) => (CONTROL, [control::SET_DEPTH.to_be_bytes(), d.to_be_bytes()].concat()),
        Command::Eof => return vec![EOF],
    };
    let mut out = vec![tag];
    out.extend_from_slice(&serial.to_be_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(&payload);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<Command> {
        vec![
            Command::ForceGc,
            Command::DumpHeap,
            Command::AllocSites { flags: 3, cutoff: 0.01 },
            Command::HeapSummary,
            Command::DumpTraces,
            Command::CpuSamples { cutoff: 0.5 },
            Command::AllocTracking(false),
            Command::CpuSampling { thread_object_id: 0x1234, on: true },
            Command::ClearCpuSamples,
            Command::SetDepth(9),
            Command::ExitVm,
            Command::Eof,
        ]
    }

    #[test]
    fn every_command_round_trips() {
        let mut stream = Vec::new();
        for (i, c) in all().iter().enumerate() {
            stream.extend(encode(i as u32, c, 8));
        }
        let mut r = &stream[..];
        for c in all() {
            assert_eq!(read_command(&mut r, 8).unwrap().command, c);
        }
        assert!(matches!(read_command(&mut r, 8), Err(ReadError::Closed)));
    }

    #[test]
    fn unknown_tag_with_plausible_length_is_skipped_and_stream_stays_in_step() {
        let mut stream = vec![0x42, 0, 0, 0, 7, 0, 0, 0, 3, 9, 9, 9];
        stream.extend(encode(8, &Command::ForceGc, 8));
        let mut r = &stream[..];
        assert!(matches!(read_command(&mut r, 8), Err(ReadError::Skipped(m)) if m.contains("0x42")));
        assert_eq!(read_command(&mut r, 8).unwrap().command, Command::ForceGc);
    }

    #[test]
    fn hostile_input_is_reported_not_trusted() {
        // Unknown tag with a 2 GiB length: not followed.
        let stream = [0x42, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff];
        assert!(matches!(read_command(&mut &stream[..], 8), Err(ReadError::Fatal(m)) if m.contains("implausible")));
        // Cut inside a command.
        let stream = [ALLOC_SITES, 0, 0, 0, 1, 0, 0, 0, 6, 0];
        assert!(matches!(read_command(&mut &stream[..], 8), Err(ReadError::Fatal(m)) if m.contains("middle")));
        // A cutoff that is not a ratio.
        let mut s = encode(1, &Command::CpuSamples { cutoff: 0.5 }, 8);
        s[11..15].copy_from_slice(&f32::NAN.to_bits().to_be_bytes());
        assert!(matches!(read_command(&mut &s[..], 8), Err(ReadError::Skipped(_))));
        // The original agent's front ends sent anything as length: a huge one is ignored for known tags.
        let mut s = encode(1, &Command::ForceGc, 8);
        s[5..9].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(read_command(&mut &s[..], 8).unwrap().command, Command::ForceGc);
    }

    #[test]
    fn unknown_control_sub_command_is_skipped() {
        let stream = [CONTROL, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0x33];
        assert!(matches!(read_command(&mut &stream[..], 8), Err(ReadError::Skipped(m)) if m.contains("0x33")));
    }
}
