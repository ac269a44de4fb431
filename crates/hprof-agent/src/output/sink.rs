//! Where the profile goes: a file (HPROF's `file=` and `force=` rules) or a TCP connection (`net=`).

use crate::options::{Options, OutputFormat};
use std::fs::{File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The opened destination, unbuffered; [`super::Output`] buffers it.
pub enum Sink {
    File {
        file: File,
        path: PathBuf,
        /// Where the last checkpoint's records start: they stand in for the reports until the next bytes
        /// arrive, which replace them (see [`Sink::mark_checkpoint`]).
        checkpoint_at: Option<u64>,
    },
    Socket {
        stream: TcpStream,
        peer: String,
        /// Since when the front end has not been taking bytes as fast as they come (see [`STALL_LIMIT`]).
        stalled_since: Option<Instant>,
    },
    /// The file, lent to a heap dump that writes into it directly: what is written meanwhile waits here.
    Lent { path: PathBuf, held: Vec<u8> },
}

impl Sink {
    pub fn open(options: &Options) -> Result<Sink, String> {
        match &options.net {
            Some((host, port)) => Self::connect(host, *port),
            None => Self::create_file(options),
        }
    }

    /// `force=y` replaces an existing file; `force=n` keeps it and writes `<name>.<pid>[.txt]` instead.
    fn create_file(options: &Options) -> Result<Sink, String> {
        let mut path = PathBuf::from(options.output_file());
        if !options.force && path.exists() {
            path = unique_name(&path.to_string_lossy(), options.format, std::process::id());
        }
        // Readable too: a heap dump written into it in place may have to be moved (see heap_dump::in_place).
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| format!("cannot create output file {}: {e}", path.display()))?;
        Ok(Sink::file(file, path))
    }

    pub fn file(file: File, path: PathBuf) -> Sink {
        Sink::File { file, path, checkpoint_at: None }
    }

    fn connect(host: &str, port: u16) -> Result<Sink, String> {
        let peer = format!("{host}:{port}");
        let addrs = (host, port).to_socket_addrs().map_err(|e| format!("net={peer}: cannot resolve host: {e}"))?;
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, Duration::from_secs(5)) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(Sink::Socket { stream, peer, stalled_since: None });
                }
                Err(e) => last = Some(e),
            }
        }
        Err(format!(
            "net={peer}: cannot connect to the front end: {} (start one with: hprof listen {peer})",
            last.map(|e| e.to_string()).unwrap_or_else(|| "no address".into())
        ))
    }

    /// Takes the file out, for a heap dump written into it from its current offset on; what others write
    /// meanwhile is held in memory until [`Sink::give_back`]. `None`: not a file, or lent already.
    pub fn lend(&mut self) -> Option<File> {
        self.drop_checkpoint().ok()?;
        let Sink::File { path, .. } = self else { return None };
        let path = std::mem::take(path);
        match std::mem::replace(self, Sink::Lent { path, held: Vec::new() }) {
            Sink::File { file, .. } => Some(file),
            _ => None,
        }
    }

    /// What was written since the file was lent (0 if it is not), and that, taken out.
    pub fn held_len(&self) -> usize {
        if let Sink::Lent { held, .. } = self { held.len() } else { 0 }
    }

    pub fn take_held(&mut self) -> Vec<u8> {
        if let Sink::Lent { held, .. } = self { std::mem::take(held) } else { Vec::new() }
    }

    /// Takes the lent file back, its offset where writing goes on; what was written meanwhile and not taken
    /// ([`Sink::take_held`]) follows.
    pub fn give_back(&mut self, file: File) {
        let Sink::Lent { path, held } = self else { return };
        let (path, held) = (std::mem::take(path), std::mem::take(held));
        *self = Sink::file(file, path);
        // Not expected (the dump takes what was held first), but never lost: it goes after the dump.
        if !held.is_empty() {
            let _ = self.write_all(&held);
        }
    }

    /// Where the next byte goes in the file; `None` if this is no file (a socket cannot take bytes back, and
    /// a lent file belongs to a heap dump).
    pub fn checkpoint_start(&mut self) -> io::Result<Option<u64>> {
        self.drop_checkpoint()?;
        match self {
            Sink::File { file, .. } => file.stream_position().map(Some),
            _ => Ok(None),
        }
    }

    /// Makes what was written from `start` on a checkpoint: it stays at the end of the file only until
    /// anything else is written, which goes in its place. A JVM killed meanwhile (SIGKILL, a crash) leaves
    /// it as the profile's last records, so that the file holds the reports as of the last checkpoint; a JVM
    /// that exits replaces it by its exit dump, or drops it on close.
    pub fn mark_checkpoint(&mut self, start: u64) {
        if let Sink::File { checkpoint_at, .. } = self {
            *checkpoint_at = Some(start);
        }
    }

    /// Cuts the last checkpoint off, so that what comes next takes its place.
    pub fn drop_checkpoint(&mut self) -> io::Result<()> {
        match self {
            Sink::File { file, checkpoint_at, .. } => cut_checkpoint(file, checkpoint_at),
            _ => Ok(()),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Sink::File { path, .. } | Sink::Lent { path, .. } => path.display().to_string(),
            Sink::Socket { peer, .. } => format!("socket {peer}"),
        }
    }

    /// A second handle on the socket for reading the front end's commands.
    pub fn command_stream(&self) -> Option<TcpStream> {
        match self {
            Sink::Socket { stream, .. } => stream.try_clone().ok(),
            Sink::File { .. } | Sink::Lent { .. } => None,
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::File { file, checkpoint_at, .. } => {
                cut_checkpoint(file, checkpoint_at)?;
                file.write(buf)
            }
            Sink::Socket { stream, stalled_since, .. } => write_within_stall_limit(stream, stalled_since, buf),
            Sink::Lent { held, .. } => {
                held.extend_from_slice(buf);
                Ok(buf.len())
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::File { file, .. } => file.flush(),
            Sink::Socket { stream, .. } => stream.flush(),
            Sink::Lent { .. } => Ok(()),
        }
    }
}

/// How long in all a front end that stops reading may hold the program up (a thread writing a record waits
/// for the socket, and others for the output). The limit is on the whole stall, not on each write call.
pub const STALL_LIMIT: Duration = Duration::from_secs(10);
/// A write that takes longer than this is a sign of a front end that is not keeping up.
const SLOW_WRITE: Duration = Duration::from_millis(100);

/// The error of a write given up on: [`super::Output`] names the stall from it.
pub fn is_stall(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock)
}

/// One write, given what is left of the stall budget: a stall begins with a slow write and lasts while
/// writes stay slow; a write that goes through quickly ends it.
fn write_within_stall_limit(
    stream: &mut TcpStream,
    stalled_since: &mut Option<Instant>,
    buf: &[u8],
) -> io::Result<usize> {
    let start = Instant::now();
    let left = STALL_LIMIT.saturating_sub(stalled_since.map_or(Duration::ZERO, |s| start - s));
    if left.is_zero() {
        return Err(io::Error::new(io::ErrorKind::TimedOut, "stall limit reached"));
    }
    stream.set_write_timeout(Some(left))?;
    let written = stream.write(buf);
    if start.elapsed() < SLOW_WRITE && written.is_ok() {
        *stalled_since = None;
    } else if stalled_since.is_none() {
        *stalled_since = Some(start);
    }
    written
}

fn cut_checkpoint(file: &mut File, checkpoint_at: &mut Option<u64>) -> io::Result<()> {
    if let Some(start) = checkpoint_at.take() {
        // Cut first: a kill between the two steps leaves whole records, only without the checkpoint.
        file.set_len(start)?;
        file.seek(SeekFrom::Start(start))?;
    }
    Ok(())
}

/// `java.hprof.txt` → `java.hprof.<pid>.txt`; `out.hprof` → `out.hprof.<pid>`.
fn unique_name(name: &str, format: OutputFormat, pid: u32) -> PathBuf {
    if format == OutputFormat::Text
        && let Some(prefix) = name.strip_suffix(".txt")
    {
        return PathBuf::from(format!("{prefix}.{pid}.txt"));
    }
    PathBuf::from(format!("{name}.{pid}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lent_file_holds_what_is_written_meanwhile() {
        let path = std::env::temp_dir().join(format!("sink-lend-{}", std::process::id()));
        let file = File::create(&path).unwrap();
        let mut sink = Sink::file(file, path.clone());
        sink.write_all(b"before ").unwrap();
        let mut lent = sink.lend().unwrap();
        assert!(sink.lend().is_none(), "lent once");
        assert_eq!(sink.describe(), path.display().to_string());
        sink.write_all(b"meanwhile").unwrap();
        lent.write_all(b"dump ").unwrap();
        assert_eq!(sink.held_len(), 9);
        assert_eq!(sink.take_held(), b"meanwhile");
        sink.give_back(lent);
        sink.write_all(b"after").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"before dump after");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_checkpoint_stays_until_the_next_bytes_replace_it() {
        let path = std::env::temp_dir().join(format!("sink-checkpoint-{}", std::process::id()));
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        let mut sink = Sink::file(file, path.clone());
        sink.write_all(b"records ").unwrap();
        let start = sink.checkpoint_start().unwrap().unwrap();
        sink.write_all(b"report-1").unwrap();
        sink.mark_checkpoint(start);
        assert_eq!(std::fs::read(&path).unwrap(), b"records report-1", "a kill now leaves the checkpoint");
        let start = sink.checkpoint_start().unwrap().unwrap();
        sink.write_all(b"report-2").unwrap();
        sink.mark_checkpoint(start);
        assert_eq!(std::fs::read(&path).unwrap(), b"records report-2", "one checkpoint at a time");
        sink.write_all(b"more").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"records more", "the next bytes take its place");
        let start = sink.checkpoint_start().unwrap().unwrap();
        sink.write_all(b"report-3").unwrap();
        sink.mark_checkpoint(start);
        let lent = sink.lend().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"records more", "a heap dump starts where it started");
        sink.give_back(lent);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn unique_names_keep_the_txt_suffix() {
        assert_eq!(unique_name("java.hprof.txt", OutputFormat::Text, 42), PathBuf::from("java.hprof.42.txt"));
        assert_eq!(unique_name("java.hprof", OutputFormat::Binary, 42), PathBuf::from("java.hprof.42"));
        assert_eq!(unique_name("out", OutputFormat::Text, 7), PathBuf::from("out.7"));
    }
}
