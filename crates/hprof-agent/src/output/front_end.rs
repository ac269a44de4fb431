//! The profile's stream to a front end (`net=`), and where it goes when the front end does not take it.
//!
//! A front end that stops reading holds the program up [`STALL_LIMIT`] at most in all (a thread writing a
//! record waits for the socket, the others for the output). Past that the stream is not dropped: what the
//! front end has not taken is held in memory, in order, and offered to it again without waiting at each
//! write and at each flush (the worker flushes every second), so that a front end that reads again gets the
//! whole stream; the program never waits for that front end again (the limit is on all its stalls). When the front end is gone (the connection broken), or falls more than [`HOLD_LIMIT`]
//! behind, the rest of the stream goes to a file in the working directory instead (`java.hprof.unsent`,
//! created 0600 and new: `java.hprof.unsent.<pid>` if that name is taken, a symlink there never followed):
//! the front end's file and that one, put end to end, are the whole profile, byte for byte. At exit the
//! front end gets [`EXIT_GRACE`] more to take what is held; the rest goes to the file, and one line says
//! how many bytes went where.

use private_files::IfExists;
use std::fs::File;
use std::io::{self, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long in all a front end that stops reading may hold the program up. The limit is on the whole
/// stall, not on each write call (which a trickle would restart).
pub const STALL_LIMIT: Duration = Duration::from_secs(10);
/// A write that takes longer than this is a sign of a front end that is not keeping up.
const SLOW_WRITE: Duration = Duration::from_millis(100);
/// How much of the stream is held in memory for a stalled front end before it goes to the file instead.
const HOLD_LIMIT: usize = 64 << 20;
/// How long the exit waits for a stalled front end to take what is held.
pub const EXIT_GRACE: Duration = Duration::from_secs(5);

pub struct FrontEnd {
    stream: TcpStream,
    peer: String,
    /// [`STALL_LIMIT`] and [`HOLD_LIMIT`], smaller in tests.
    stall_limit: Duration,
    hold_limit: usize,
    /// Since when the front end has not been taking bytes as fast as they come.
    stalled_since: Option<Instant>,
    /// What the front end has not taken since a stall passed the limit: `held[held_from..]`.
    held: Vec<u8>,
    held_from: usize,
    /// When bytes began to be held, for the message when they are sent.
    holding_since: Option<Instant>,
    /// The stall limit was reached: from then on writes never wait for the front end.
    stopped_waiting: bool,
    /// Where the stream goes on once the front end is given up (the name it got once it is created).
    unsent_path: PathBuf,
    unsent: Option<File>,
    /// Bytes the connection took, and how many of them had been held first.
    sent: u64,
    sent_after_holding: u64,
    unsent_bytes: u64,
    /// Whether anything went otherwise than straight to the front end (then the exit says where it went).
    eventful: bool,
}

impl FrontEnd {
    /// `unsent_path`: the file the stream's rest goes to if the front end is given up.
    pub fn new(stream: TcpStream, peer: String, unsent_path: PathBuf) -> FrontEnd {
        FrontEnd {
            stream,
            peer,
            stall_limit: STALL_LIMIT,
            hold_limit: HOLD_LIMIT,
            stalled_since: None,
            held: Vec::new(),
            held_from: 0,
            holding_since: None,
            stopped_waiting: false,
            unsent_path,
            unsent: None,
            sent: 0,
            sent_after_holding: 0,
            unsent_bytes: 0,
            eventful: false,
        }
    }

    pub fn peer(&self) -> &str {
        &self.peer
    }

    /// A second handle on the socket, for reading the front end's commands.
    pub fn command_stream(&self) -> Option<TcpStream> {
        self.stream.try_clone().ok()
    }

    fn held_len(&self) -> usize {
        self.held.len() - self.held_from
    }

    /// At exit: gives a stalled front end [`EXIT_GRACE`] to take what is held, sends the rest to the file,
    /// and says where the stream went if it did not all go to the front end.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.unsent.is_none() && self.held_len() > 0 {
            let deadline = Instant::now() + EXIT_GRACE;
            while self.held_len() > 0 {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                self.stream.set_write_timeout(Some(left))?;
                match self.stream.write(&self.held[self.held_from..]) {
                    Ok(n) => self.taken(n),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) if is_timeout(&e) => break,
                    Err(e) => return self.give_up(&format!("is gone ({e})")),
                }
            }
            if self.held_len() > 0 {
                let s = EXIT_GRACE.as_secs();
                self.give_up(&format!("did not read again within {s} s of the exit"))?;
            } else {
                self.caught_up();
            }
        }
        if let Some(file) = &mut self.unsent {
            file.flush()?;
        }
        if self.eventful {
            crate::log::warning(&format!(
                "the profile's stream: {} bytes went to socket {}{}{}",
                self.sent,
                self.peer,
                if self.sent_after_holding > 0 {
                    format!(
                        " ({} of them after it stalled, held in memory until it took them)",
                        self.sent_after_holding
                    )
                } else {
                    String::new()
                },
                if self.unsent.is_some() {
                    format!(
                        ", the following {} bytes to {} (after the socket's bytes, they complete the profile)",
                        self.unsent_bytes,
                        self.unsent_path.display()
                    )
                } else {
                    "; nothing was lost".into()
                }
            ));
        }
        Ok(())
    }

    /// One write, given what is left of the stall budget: a stall begins with a slow write and lasts while
    /// writes stay slow; a write that goes through quickly ends it.
    fn write_within_stall_limit(&mut self, buf: &[u8]) -> io::Result<usize> {
        let start = Instant::now();
        let left = self.stall_limit.saturating_sub(self.stalled_since.map_or(Duration::ZERO, |s| start - s));
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "stall limit reached"));
        }
        self.stream.set_write_timeout(Some(left))?;
        let written = self.stream.write(buf);
        if start.elapsed() < SLOW_WRITE && written.is_ok() {
            self.stalled_since = None;
        } else if self.stalled_since.is_none() {
            self.stalled_since = Some(start);
        }
        written
    }

    /// Holds `buf` behind what is held already; too much held sends it all to the file.
    fn hold(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.held_from > 0 && self.held_from * 2 > self.held.len() {
            self.held.drain(..self.held_from);
            self.held_from = 0;
        }
        self.held.extend_from_slice(buf);
        if self.held_len() > self.hold_limit {
            self.give_up(&format!("fell more than {} MiB behind", self.hold_limit >> 20))?;
        }
        Ok(buf.len())
    }

    /// Offers what is held to the front end without waiting for it.
    fn offer_held(&mut self) -> io::Result<()> {
        while self.held_len() > 0 {
            let rest = &self.held[self.held_from..];
            // SAFETY: our own open socket and a live slice of `rest.len()` bytes; MSG_DONTWAIT makes this
            // one call non-blocking without touching the socket's flags, which the command reader shares.
            let n = unsafe {
                libc::send(
                    self.stream.as_raw_fd(),
                    rest.as_ptr().cast(),
                    rest.len(),
                    libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
                )
            };
            if n >= 0 {
                self.taken(n as usize);
                continue;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => return Ok(()),
                _ => return self.give_up(&format!("is gone ({e})")),
            }
        }
        self.caught_up();
        Ok(())
    }

    fn taken(&mut self, n: usize) {
        self.held_from += n;
        self.sent += n as u64;
        self.sent_after_holding += n as u64;
    }

    /// Everything held has been sent: the stall is over.
    fn caught_up(&mut self) {
        if let Some(since) = self.holding_since.take() {
            crate::log::warning(&format!(
                "the front end (socket {}) takes bytes again: all that was held for it over {:.1} s has been sent",
                self.peer,
                since.elapsed().as_secs_f64()
            ));
        }
        self.held.clear();
        self.held_from = 0;
        self.stalled_since = None;
    }

    /// The front end gets nothing more: what is held, and everything after, goes to the file.
    fn give_up(&mut self, why: &str) -> io::Result<()> {
        self.eventful = true;
        let base = self.unsent_path.to_string_lossy().into_owned();
        let pid = std::process::id();
        let numbered = |n| super::numbered(&base, pid, n);
        let file = private_files::create(&self.unsent_path, IfExists::PickName(&numbered));
        let mut file = match file {
            Ok(created) => {
                self.unsent_path = created.path;
                created.file
            }
            Err(e) => {
                let what = format!("cannot create {}: {e}", self.unsent_path.display());
                crate::log::error(&format!(
                    "the front end (socket {}) {why} after {} bytes, and the rest of the profile is lost: {what}",
                    self.peer, self.sent
                ));
                return Err(io::Error::other(what));
            }
        };
        crate::log::warning(&format!(
            "the front end (socket {}) {why} after {} bytes: the rest of the profile goes to {}",
            self.peer,
            self.sent,
            self.unsent_path.display()
        ));
        let rest = &self.held[self.held_from..];
        file.write_all(rest)?;
        self.unsent_bytes += rest.len() as u64;
        self.held = Vec::new();
        self.held_from = 0;
        self.holding_since = None;
        self.unsent = Some(file);
        Ok(())
    }
}

impl Write for FrontEnd {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.unsent.is_none() && self.stopped_waiting {
            // Once the limit is reached the program never waits for this front end again (the limit is
            // on all its stalls together): everything goes behind what is held, and is offered from there.
            self.offer_held()?;
            if self.unsent.is_none() {
                self.hold(buf)?;
                if self.unsent.is_none() {
                    self.offer_held()?;
                }
                return Ok(buf.len());
            }
        }
        if let Some(file) = &mut self.unsent {
            file.write_all(buf)?;
            self.unsent_bytes += buf.len() as u64;
            return Ok(buf.len());
        }
        match self.write_within_stall_limit(buf) {
            Ok(n) => {
                self.sent += n as u64;
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Err(e),
            Err(e) if is_timeout(&e) => {
                self.eventful = true;
                self.stopped_waiting = true;
                self.holding_since = Some(Instant::now());
                crate::log::warning(&format!(
                    "the front end (socket {}) stopped reading: the program waited {:.0} s for it and goes on; \
                     the profile is held in memory for it until it reads again (or, at exit, written to {})",
                    self.peer,
                    self.stall_limit.as_secs_f64(),
                    self.unsent_path.display()
                ));
                self.hold(buf)
            }
            Err(e) => {
                self.give_up(&format!("is gone ({e})"))?;
                self.write(buf)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(file) = &mut self.unsent {
            file.flush()
        } else if self.held_len() > 0 {
            self.offer_held()
        } else {
            self.stream.flush()
        }
    }
}

/// A write given up on after its timeout.
fn is_timeout(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;

    /// A front end on a loopback socket that reads nothing until told to, with limits small enough for a
    /// test; returns it, the peer's end, and the file the rest would go to.
    fn connected(hold_limit: usize) -> (FrontEnd, TcpStream, PathBuf, tempfile::TempDir) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (peer, _) = listener.accept().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let unsent = dir.path().join("front-end.unsent");
        let mut front_end = FrontEnd::new(stream, "test".into(), unsent.clone());
        front_end.stall_limit = Duration::from_millis(300);
        front_end.hold_limit = hold_limit;
        (front_end, peer, unsent, dir)
    }

    /// Bytes that say where they are in the stream, so that any loss or reordering shows.
    fn stream_bytes(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    fn write_in_chunks(front_end: &mut FrontEnd, bytes: &[u8]) {
        for chunk in bytes.chunks(64 << 10) {
            front_end.write_all(chunk).unwrap();
        }
    }

    #[test]
    fn what_a_stalled_front_end_did_not_take_reaches_it_when_it_reads_again() {
        let (mut front_end, mut peer, unsent, _dir) = connected(64 << 20);
        let bytes = stream_bytes(16 << 20);
        let started = Instant::now();
        write_in_chunks(&mut front_end, &bytes);
        assert!(started.elapsed() < Duration::from_secs(5), "held up {:?} past the stall limit", started.elapsed());
        assert!(front_end.held_len() > 0, "more than the sockets' buffers: some is held");
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            peer.read_to_end(&mut got).unwrap();
            got
        });
        // The worker's flush every second offers what is held, without waiting.
        let deadline = Instant::now() + Duration::from_secs(30);
        while front_end.held_len() > 0 && Instant::now() < deadline {
            front_end.flush().unwrap();
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(front_end.held_len(), 0, "everything held was sent");
        front_end.write_all(b"after").unwrap();
        front_end.finish().unwrap();
        assert_eq!(front_end.sent, bytes.len() as u64 + 5);
        drop(front_end);
        let got = reader.join().unwrap();
        assert_eq!(got.len(), bytes.len() + 5);
        assert!(got[..bytes.len()] == bytes[..] && got.ends_with(b"after"), "in order, nothing lost");
        assert!(!unsent.exists(), "nothing for the file");
    }

    #[test]
    fn a_front_end_too_far_behind_leaves_the_rest_to_the_file() {
        let (mut front_end, mut peer, unsent, _dir) = connected(1 << 20);
        let bytes = stream_bytes(16 << 20);
        write_in_chunks(&mut front_end, &bytes);
        assert!(front_end.unsent.is_some(), "more than the hold limit: the file");
        front_end.finish().unwrap();
        let (sent, unsent_bytes) = (front_end.sent, front_end.unsent_bytes);
        drop(front_end);
        let mut got = Vec::new();
        peer.read_to_end(&mut got).unwrap();
        let rest = std::fs::read(&unsent).unwrap();
        std::fs::remove_file(&unsent).unwrap();
        assert_eq!((got.len() as u64, rest.len() as u64), (sent, unsent_bytes), "the counts say where each byte went");
        assert!([got, rest].concat() == bytes, "the socket's bytes and the file's, end to end, are the stream");
    }

    #[test]
    fn the_stream_to_a_front_end_that_is_gone_goes_on_in_the_file() {
        let (mut front_end, peer, unsent, _dir) = connected(64 << 20);
        front_end.write_all(b"header").unwrap();
        drop(peer);
        std::thread::sleep(Duration::from_millis(50));
        // The first write after the peer closes may still be taken by the kernel; the next ones fail.
        for _ in 0..4 {
            front_end.write_all(b"record").unwrap();
            std::thread::sleep(Duration::from_millis(20));
        }
        front_end.finish().unwrap();
        let rest = std::fs::read(&unsent).unwrap();
        std::fs::remove_file(&unsent).unwrap();
        assert_eq!(front_end.sent + front_end.unsent_bytes, 6 + 24, "every byte went one way or the other");
        assert!(!rest.is_empty() && rest.len() % 6 == 0, "whole writes went to the file: {rest:?}");
    }
}
