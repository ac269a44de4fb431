//! The first bytes from a peer: an agent's stream starts with the HPROF header (`JAVA PROFILE 1.0.2`, a
//! NUL, the identifier size and a timestamp). A peer that sends anything else, or no NUL within
//! [`MAX_HEADER`] bytes, or no whole header within [`HEADER_WAIT`] (however it trickles), is dropped with an error naming it and the
//! limit, and the listener waits for the next one: nothing is buffered without bound.

use std::io::Read;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// Most bytes read while looking for the header's NUL (real headers take 19).
pub const MAX_HEADER: usize = 1024;
/// How long a peer may take to send its header.
pub const HEADER_WAIT: Duration = Duration::from_secs(30);
const MAGIC: &[u8] = b"JAVA PROFILE ";

/// Reads up to the header's NUL; returns the bytes read (the header and whatever followed it in the same
/// reads), to be handled as the start of the stream.
pub fn read_header(stream: &mut TcpStream, peer: SocketAddr) -> Result<Vec<u8>, String> {
    // One deadline for the whole header: a peer trickling a byte at a time must not hold the listener.
    let deadline = std::time::Instant::now() + HEADER_WAIT;
    let too_slow = || format!("{peer} sent no HPROF header within {}s", HEADER_WAIT.as_secs());
    let mut got = Vec::with_capacity(256);
    let mut buf = [0u8; 256];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || stream.set_read_timeout(Some(left)).is_err() {
            return Err(too_slow());
        }
        let n = match stream.read(&mut buf) {
            Ok(0) => return Err(format!("{peer} closed the connection before sending an HPROF header")),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                return Err(too_slow());
            }
            Err(e) => return Err(format!("reading from {peer}: {e}")),
        };
        got.extend_from_slice(&buf[..n]);
        let seen = got.len().min(MAGIC.len());
        if got[..seen] != MAGIC[..seen] {
            return Err(format!("{peer} is not an hprof agent: its stream does not start with \"JAVA PROFILE\""));
        }
        if got.iter().take(MAX_HEADER).any(|&b| b == 0) {
            let _ = stream.set_read_timeout(None);
            return Ok(got);
        }
        if got.len() >= MAX_HEADER {
            return Err(format!(
                "{peer} sent {} bytes without ending the HPROF header (the limit is {MAX_HEADER})",
                got.len()
            ));
        }
    }
}
