//! Where the profile goes: a file (HPROF's `file=` and `force=` rules) or a TCP connection (`net=`).

use super::front_end::FrontEnd;
use super::numbered;
use crate::options::{Options, OutputFormat};
use private_files::{Created, Finish, IfExists, Kind};
use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

/// The opened destination, unbuffered; [`super::Output`] buffers it.
pub enum Sink {
    File {
        file: File,
        path: PathBuf,
        /// Where the last checkpoint's records start: they stand in for the reports until the next bytes
        /// arrive, which replace them (see [`Sink::mark_checkpoint`]).
        checkpoint_at: Option<u64>,
        /// A regular file; not a pipe or a device (`file=/dev/stdout`), which cannot seek: no checkpoints
        /// there, and no heap dump written into it in place.
        seekable: bool,
    },
    Socket(FrontEnd),
    /// The file, lent to a heap dump that writes into it directly: what is written meanwhile waits here.
    Lent {
        path: PathBuf,
        held: Vec<u8>,
    },
}

impl Sink {
    /// Opens the destination; the [`Finish`] renames the file into place once the profile is written.
    pub fn open(options: &Options) -> Result<(Sink, Finish), String> {
        match &options.net {
            Some((host, port)) => Ok((Self::connect(host, *port, unsent_path(options))?, Finish::default())),
            None => Self::create_file(options),
        }
    }

    /// `force=y` replaces an existing file (a fresh one is written beside it and renamed over it by
    /// [`Finish::commit`]); `force=n` keeps it and writes `<name>.<pid>[.txt]` instead. Either way the
    /// file is new, 0600, and no symlink at the path is followed (see the `private-files` crate).
    fn create_file(options: &Options) -> Result<(Sink, Finish), String> {
        let name = options.output_file();
        let path = PathBuf::from(&name);
        let pid = std::process::id();
        let unique = |n| unique_name(&name, options.format, pid, n);
        let if_exists = if options.force { IfExists::Replace } else { IfExists::PickName(&unique) };
        let created = private_files::create(&path, if_exists)
            .map_err(|e| format!("cannot create output file {}: {e}", path.display()))?;
        let Created { file, path, kind, finish } = created;
        let mut sink = Sink::file(file, path);
        if let (Sink::File { seekable, .. }, Kind::Stream) = (&mut sink, kind) {
            // Our stdout may be a file the program writes too: never cut or rewritten behind its back.
            *seekable = false;
        }
        Ok((sink, finish))
    }

    pub fn file(file: File, path: PathBuf) -> Sink {
        let seekable = file.metadata().is_ok_and(|m| m.file_type().is_file());
        Sink::File { file, path, checkpoint_at: None, seekable }
    }

    fn connect(host: &str, port: u16, unsent: PathBuf) -> Result<Sink, String> {
        let peer = format!("{host}:{port}");
        let addrs = (host, port).to_socket_addrs().map_err(|e| format!("net={peer}: cannot resolve host: {e}"))?;
        let mut last = None;
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, Duration::from_secs(5)) {
                Ok(stream) => {
                    let _ = stream.set_nodelay(true);
                    return Ok(Sink::Socket(FrontEnd::new(stream, peer, unsent)));
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
        let Sink::File { path, seekable: true, .. } = self else { return None };
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
            Sink::File { file, seekable: true, .. } => file.stream_position().map(Some),
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
            Sink::Socket(front_end) => format!("socket {}", front_end.peer()),
        }
    }

    /// A second handle on the socket for reading the front end's commands.
    pub fn command_stream(&self) -> Option<TcpStream> {
        match self {
            Sink::Socket(front_end) => front_end.command_stream(),
            Sink::File { .. } | Sink::Lent { .. } => None,
        }
    }

    /// At exit: a stalled front end's last chance to take what is held for it (see `FrontEnd::finish`).
    pub fn finish(&mut self) -> io::Result<()> {
        match self {
            Sink::Socket(front_end) => front_end.finish(),
            _ => Ok(()),
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
            Sink::Socket(front_end) => front_end.write(buf),
            Sink::Lent { held, .. } => {
                held.extend_from_slice(buf);
                Ok(buf.len())
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::File { file, .. } => file.flush(),
            Sink::Socket(front_end) => front_end.flush(),
            Sink::Lent { .. } => Ok(()),
        }
    }
}

fn cut_checkpoint(file: &mut File, checkpoint_at: &mut Option<u64>) -> io::Result<()> {
    if let Some(start) = checkpoint_at.take() {
        // Cut first: a kill between the two steps leaves whole records, only without the checkpoint.
        file.set_len(start)?;
        file.seek(SeekFrom::Start(start))?;
    }
    Ok(())
}

/// Where the profile's stream goes if the front end is given up: `java.hprof.unsent` (or
/// `java.hprof.txt.unsent`) in the working directory; if that exists, the first of `<name>.<pid>`,
/// `<name>.<pid>.2`, … that does not ([`numbered`]).
fn unsent_path(options: &Options) -> PathBuf {
    PathBuf::from(format!("{}.unsent", options.output_file()))
}

/// `force=n`'s name for the `n`th try: `java.hprof.txt` → `java.hprof.<pid>.txt`, then
/// `java.hprof.<pid>.2.txt`, …; `out.hprof` → `out.hprof.<pid>`, `out.hprof.<pid>.2`, ….
fn unique_name(name: &str, format: OutputFormat, pid: u32, n: u32) -> PathBuf {
    if format == OutputFormat::Text
        && let Some(prefix) = name.strip_suffix(".txt")
    {
        let mut path = numbered(prefix, pid, n).into_os_string();
        path.push(".txt");
        return PathBuf::from(path);
    }
    numbered(name, pid, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lent_file_holds_what_is_written_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sink-lend");
        let file = private_files::create_new(&path).unwrap();
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
    }

    #[test]
    fn a_checkpoint_stays_until_the_next_bytes_replace_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sink-checkpoint");
        let file = private_files::create_new(&path).unwrap();
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
    }

    #[test]
    fn unique_names_keep_the_txt_suffix() {
        assert_eq!(unique_name("java.hprof.txt", OutputFormat::Text, 42, 1), PathBuf::from("java.hprof.42.txt"));
        assert_eq!(unique_name("java.hprof.txt", OutputFormat::Text, 42, 2), PathBuf::from("java.hprof.42.2.txt"));
        assert_eq!(unique_name("java.hprof", OutputFormat::Binary, 42, 1), PathBuf::from("java.hprof.42"));
        assert_eq!(unique_name("java.hprof", OutputFormat::Binary, 42, 3), PathBuf::from("java.hprof.42.3"));
        assert_eq!(unique_name("out", OutputFormat::Text, 7, 1), PathBuf::from("out.7"));
    }
}
