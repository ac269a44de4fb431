//! HotSpot's attach protocol on Linux, as the JDK's own `jcmd` speaks it, without a JDK.
//!
//! A JVM starts its attach listener lazily: the client creates `.attach_pid<pid>` in the JVM's working
//! directory (or /tmp) and sends SIGQUIT; the JVM's signal handler sees the file (owned by the JVM's user)
//! and, instead of printing a thread dump, creates the UNIX socket `/tmp/.java_pid<pid>`. `<pid>` is the
//! pid inside the JVM's own namespace and /tmp is the JVM's, reached through /proc/PID/root when it lives in
//! a container. A request is the protocol version "1", the command and three arguments, each ended by a NUL;
//! the reply is the completion status as a decimal line, then the command's output. The JVM accepts a
//! peer of its own effective uid (or root) only, and the socket must be ours and private, or it is not the
//! JVM's.

use super::process::{Process, our_uid};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PROTOCOL_VERSION: &str = "1";
/// The JVM's answer to a protocol version it does not speak.
const ATTACH_ERROR_BADVERSION: i32 = 101;

/// The socket of `p`'s attach listener, starting the listener if it is not running yet. Fails after
/// `timeout` with no socket.
pub fn listener_socket(p: &Process, timeout: Duration) -> Result<PathBuf, String> {
    let socket = p.tmp().join(format!(".java_pid{}", p.ns_pid));
    if !socket.exists() {
        let trigger = create_trigger(p)?;
        let started = wait_for_listener(p, &socket, timeout);
        let _ = std::fs::remove_file(&trigger);
        started?;
    }
    check_owner(&socket)?;
    Ok(socket)
}

/// `.attach_pid<pid>` in the JVM's working directory, else in its /tmp (as the JDK does).
fn create_trigger(p: &Process) -> Result<PathBuf, String> {
    let name = format!(".attach_pid{}", p.ns_pid);
    let mut last_error = String::new();
    for dir in [p.cwd(), p.tmp()] {
        let path = dir.join(&name);
        match std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(&path) {
            Ok(_) => return Ok(path),
            Err(e) => last_error = format!("{}: {e}", path.display()),
        }
    }
    Err(format!("cannot create the attach trigger file for process {} ({last_error})", p.pid))
}

fn send_quit(pid: i32) -> Result<(), String> {
    // SAFETY: kill has no memory preconditions; the pid was checked to be a JVM of ours.
    if unsafe { libc::kill(pid, libc::SIGQUIT) } != 0 {
        return Err(format!("cannot signal process {pid}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Sends SIGQUIT and polls for the socket, a second time at half the timeout, as the JDK does: the first
/// signal may arrive before the JVM's handler is installed.
fn wait_for_listener(p: &Process, socket: &Path, timeout: Duration) -> Result<(), String> {
    let start = Instant::now();
    // SIGQUIT's default action ends the process: send it only once the JVM catches it.
    while !catches_sigquit(p.pid) {
        if start.elapsed() >= timeout {
            return Err(format!(
                "process {} did not become ready for attach within {:.0} s (it does not handle SIGQUIT yet)",
                p.pid,
                timeout.as_secs_f64()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    send_quit(p.pid)?;
    let mut delay = Duration::ZERO;
    let mut resent = false;
    while !socket.exists() {
        if start.elapsed() >= timeout {
            return Err(format!(
                "process {} did not answer within {:.0} s (no {} appeared): its attach mechanism is disabled \
                 (-XX:+DisableAttachMechanism) or it is not responding",
                p.pid,
                timeout.as_secs_f64(),
                socket.display()
            ));
        }
        if !resent && start.elapsed() >= timeout / 2 {
            resent = true;
            send_quit(p.pid)?;
        }
        if std::fs::metadata(format!("/proc/{}", p.pid)).is_err() {
            return Err(format!("process {} exited while hprof was attaching", p.pid));
        }
        delay = (delay + Duration::from_millis(20)).min(Duration::from_millis(200));
        std::thread::sleep(delay);
    }
    Ok(())
}

/// Whether the process has a handler for SIGQUIT (bit 3 of `SigCgt` in /proc/PID/status), which HotSpot
/// installs while it starts.
fn catches_sigquit(pid: i32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGQUIT - 1)) != 0)
}

/// The socket must be a socket, ours, and not open to group or others: anything else is not a JVM's.
fn check_owner(socket: &Path) -> Result<(), String> {
    let m = std::fs::symlink_metadata(socket).map_err(|e| format!("{}: {e}", socket.display()))?;
    if !m.file_type().is_socket() {
        return Err(format!("{} is not a socket; refusing to talk to it", socket.display()));
    }
    if m.uid() != our_uid() {
        return Err(format!(
            "{} belongs to uid {}, not to you (uid {}); refusing to talk to it",
            socket.display(),
            m.uid(),
            our_uid()
        ));
    }
    if m.mode() & 0o077 != 0 {
        return Err(format!(
            "{} is open to other users (mode {:o}); refusing to talk to it",
            socket.display(),
            m.mode() & 0o777
        ));
    }
    Ok(())
}

/// The JVM's answer to one command.
#[derive(Debug)]
pub struct Reply {
    /// The completion status: 0 when the JVM carried the command out.
    pub status: i32,
    /// What followed the status line.
    pub output: String,
}

/// Sends one command with up to three arguments and reads the whole reply, waiting at most `timeout`
/// for it.
pub fn execute(socket: &Path, command: &str, args: &[&str], timeout: Duration) -> Result<Reply, String> {
    assert!(args.len() <= 3, "the protocol carries three arguments");
    let mut stream = UnixStream::connect(socket).map_err(|e| format!("cannot connect to {}: {e}", socket.display()))?;
    let mut request = Vec::new();
    for part in [PROTOCOL_VERSION, command].iter().chain(args).chain(std::iter::repeat_n(&"", 3 - args.len())) {
        if part.contains('\0') {
            return Err(format!("an argument contains a NUL byte: {part:?}"));
        }
        request.extend_from_slice(part.as_bytes());
        request.push(0);
    }
    stream.set_write_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    stream.write_all(&request).map_err(|e| format!("cannot send the {command} command: {e}"))?;
    stream.set_read_timeout(Some(timeout)).map_err(|e| e.to_string())?;
    let mut answer = Vec::new();
    if let Err(e) = stream.read_to_end(&mut answer) {
        return Err(if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) {
            format!("the JVM did not finish the {command} command within {:.0} s", timeout.as_secs_f64())
        } else {
            format!("reading the JVM's answer to {command}: {e}")
        });
    }
    parse_reply(&String::from_utf8_lossy(&answer))
}

fn parse_reply(answer: &str) -> Result<Reply, String> {
    let (first, rest) = answer.split_once('\n').unwrap_or((answer, ""));
    let status = first.trim().parse().map_err(|_| {
        format!("the JVM's answer does not start with a status: {:?}", first.chars().take(80).collect::<String>())
    })?;
    if status == ATTACH_ERROR_BADVERSION {
        return Err("the JVM does not speak attach protocol version 1".into());
    }
    Ok(Reply { status, output: rest.to_owned() })
}

/// `load <library> true <options>`: loads the agent library by absolute path into the JVM and calls its
/// `Agent_OnAttach` (or, when it is loaded already, calls that again). Returns Agent_OnAttach's return code.
pub fn load_agent(socket: &Path, library: &str, options: &str, timeout: Duration) -> Result<i32, String> {
    let reply = execute(socket, "load", &[library, "true", options], timeout)?;
    let output = reply.output.trim();
    if reply.status != 0 {
        let why = if output.is_empty() { format!("status {}", reply.status) } else { output.replace('\n', "; ") };
        return Err(format!("the JVM could not load {library}: {why}"));
    }
    agent_return_code(output).ok_or_else(|| format!("unexpected answer to load: {output:?}"))
}

/// JDK 9+ answers "return code: N"; older JVMs answered the number alone.
fn agent_return_code(output: &str) -> Option<i32> {
    let line = output.lines().next()?.trim();
    line.strip_prefix("return code:").unwrap_or(line).trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies() {
        let r = parse_reply("0\nreturn code: -1\n").unwrap();
        assert_eq!((r.status, agent_return_code(&r.output)), (0, Some(-1)));
        assert_eq!(agent_return_code("0\n"), Some(0));
        assert!(parse_reply("101\n").is_err());
        assert!(parse_reply("").is_err());
        let failed = parse_reply("100\n/x/libhprof.so was not loaded.\n").unwrap();
        assert_eq!(failed.status, 100);
    }
}
