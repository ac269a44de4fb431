//! The profile's stream to a front end (`net=`), and where it goes when the front end does not take it.
//!
//! A front end that stops reading holds the program up [`STALL_LIMIT`] at most in all (a thread writing a
//! record waits for the socket, the others for the output). Past that the stream is not dropped: what the
//! front end has not taken is held in memory, in order, and offered to it again without waiting at each
//! write and at each flush (the worker flushes every second), so that a front end that reads again gets the
//! whole stream. When the front end is gone (the connection broken), or falls more than [`HOLD_LIMIT`]
//! behind, the rest of the stream goes to a file in the working directory instead (`java.hprof.unsent`):
//! the front end's file and that one, put end to end, are the whole profile, byte for byte. At exit the
//! front end gets [`EXIT_GRACE`] more to take what is held; the rest goes to the file, and one line says
//! how many bytes went where.

use std::fs::{File, OpenOptions};
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
    /// Since when the front end has not been taking bytes as fast as they come.
    stalled_since: Option<Instant>,
    /// What the front end has not taken since a stall passed the limit: `held[held_from..]`.
    held: Vec<u8>,
    held_from: usize,
    /// When bytes began to be held, for the message when they are sent.
    holding_since: Option<Instant>,
    /// Where the stream goes on once the front end is given up.
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
            stalled_since: None,
            held: Vec::new(),
            held_from: 0,
            holding_since: None,
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
                    format!(" ({} of them held in memory while it stalled)", self.sent_after_holding)
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
        let left = STALL_LIMIT.saturating_sub(self.stalled_since.map_or(Duration::ZERO, |s| start - s));
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
        if self.held_len() > HOLD_LIMIT {
            self.give_up(&format!("fell more than {} MiB behind", HOLD_LIMIT >> 20))?;
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
                "the front end (socket {}) reads again: the bytes held for it over {:.1} s have been sent",
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
        let file = OpenOptions::new().write(true).create(true).truncate(true).open(&self.unsent_path);
        let mut file = match file {
            Ok(f) => f,
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
        if self.unsent.is_none() && self.held_len() > 0 {
            self.offer_held()?;
            if self.unsent.is_none() && self.held_len() > 0 {
                return self.hold(buf);
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
                self.holding_since = Some(Instant::now());
                crate::log::warning(&format!(
                    "the front end (socket {}) stopped reading: the program waited {} s for it and goes on; \
                     the profile is held in memory for it until it reads again (or, at exit, written to {})",
                    self.peer,
                    STALL_LIMIT.as_secs(),
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
