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

use super::jvm_dir::JvmDir;
use super::process::{Process, our_uid};
use rustix::fs::FileType;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

const PROTOCOL_VERSION: &str = "1";
/// The JVM's answer to a protocol version it does not speak.
const ATTACH_ERROR_BADVERSION: i32 = 101;

/// The attach listener of one JVM: its socket in the JVM's /tmp, reached through that directory's
/// descriptor.
pub struct Listener<'a> {
    tmp: &'a JvmDir,
    name: String,
    pid: i32,
}

/// The listener of `p`, whose /tmp is `tmp`, started if it is not running yet. Fails after `timeout`
/// with no socket.
pub fn listener_socket<'a>(p: &Process, tmp: &'a JvmDir, timeout: Duration) -> Result<Listener<'a>, String> {
    let listener = Listener { tmp, name: format!(".java_pid{}", p.ns_pid), pid: p.pid };
    if tmp.lstat(&listener.name).is_err() {
        let trigger = Trigger::create(p, tmp)?;
        let started = wait_for_listener(p, &listener, timeout, &trigger.passed_over);
        drop(trigger);
        started?;
    }
    listener.check_owner()?;
    Ok(listener)
}

/// `.attach_pid<pid>` in the JVM's working directory, else in its /tmp, as the JDK's `createNewFile`
/// makes it: O_EXCL, so never through a link, and never truncating a file already there. A regular file of
/// ours already at that name does as well (HotSpot looks only at its owner); anything else there (a link,
/// another user's file) is passed over for the next directory.
struct Trigger<'a> {
    cwd: Option<JvmDir>,
    tmp: &'a JvmDir,
    in_cwd: bool,
    name: String,
    /// Why directories were passed over, for the error if the JVM does not answer.
    passed_over: String,
}

impl<'a> Trigger<'a> {
    fn create(p: &Process, tmp: &'a JvmDir) -> Result<Trigger<'a>, String> {
        let name = format!(".attach_pid{}", p.ns_pid);
        let mut why = Vec::new();
        let cwd = JvmDir::cwd(p.pid).map_err(|e| why.push(e)).ok();
        let mut chosen = None;
        for (in_cwd, dir) in [(true, cwd.as_ref()), (false, Some(tmp))] {
            let Some(dir) = dir else { continue };
            match usable(dir, &name) {
                Ok(()) => {
                    chosen = Some(in_cwd);
                    break;
                }
                Err(e) => why.push(e),
            }
        }
        if let Some(in_cwd) = chosen {
            return Ok(Trigger { cwd, tmp, in_cwd, name, passed_over: why.join("; ") });
        }
        Err(format!("cannot create the attach trigger file for process {} ({})", p.pid, why.join("; ")))
    }

    fn dir(&self) -> &JvmDir {
        match (&self.cwd, self.in_cwd) {
            (Some(cwd), true) => cwd,
            _ => self.tmp,
        }
    }
}

/// Whether `name` in `dir` is now a trigger file we may use: a new one, or a regular file of ours.
fn usable(dir: &JvmDir, name: &str) -> Result<(), String> {
    match dir.create_new(name, 0o600) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let s = dir.lstat(name).map_err(|e| format!("{}/{name}: {e}", dir.shown))?;
            let kind = FileType::from_raw_mode(s.st_mode);
            if kind == FileType::RegularFile && s.st_uid == our_uid() {
                return Ok(());
            }
            let what = if kind == FileType::Symlink {
                "a symbolic link".to_owned()
            } else {
                format!("not a regular file of yours (uid {})", s.st_uid)
            };
            Err(format!("{}/{name} is {what}; hprof did not use it", dir.shown))
        }
        Err(e) => Err(format!("{}/{name}: {e}", dir.shown)),
    }
}

impl Drop for Trigger<'_> {
    /// The file has done its work once the listener runs (or will not run); the JDK removes it too.
    fn drop(&mut self) {
        let _ = self.dir().remove(&self.name);
    }
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
fn wait_for_listener(p: &Process, listener: &Listener, timeout: Duration, passed_over: &str) -> Result<(), String> {
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
    while listener.tmp.lstat(&listener.name).is_err() {
        if start.elapsed() >= timeout {
            let passed_over = if passed_over.is_empty() { String::new() } else { format!(" ({passed_over})") };
            return Err(format!(
                "process {} did not answer within {:.0} s (no {}/{} appeared): its attach mechanism is disabled \
                 (-XX:+DisableAttachMechanism) or it is not responding{passed_over}",
                p.pid,
                timeout.as_secs_f64(),
                listener.tmp.inside,
                listener.name
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

impl Listener<'_> {
    /// The socket must be a socket, ours, and not open to group or others: anything else is not a JVM's.
    fn check_owner(&self) -> Result<(), String> {
        let shown = format!("{}/{}", self.tmp.shown, self.name);
        let m = self.tmp.lstat(&self.name).map_err(|e| format!("{shown}: {e}"))?;
        if FileType::from_raw_mode(m.st_mode) != FileType::Socket {
            return Err(format!("{shown} is not a socket; refusing to talk to it"));
        }
        if m.st_uid != our_uid() {
            return Err(format!(
                "{shown} belongs to uid {}, not to you (uid {}); refusing to talk to it",
                m.st_uid,
                our_uid()
            ));
        }
        if m.st_mode & 0o077 != 0 {
            return Err(format!(
                "{shown} is open to other users (mode {:o}); refusing to talk to it",
                m.st_mode & 0o777
            ));
        }
        Ok(())
    }

    /// A connection to the JVM's listener, and to nothing else: the kernel's record of who listens on the
    /// socket (SO_PEERCRED) must be the JVM itself, whatever was swapped in at the socket's name since it
    /// was checked.
    fn connect(&self) -> Result<UnixStream, String> {
        let shown = format!("{}/{}", self.tmp.shown, self.name);
        let stream =
            UnixStream::connect(self.tmp.path_of(&self.name)).map_err(|e| format!("cannot connect to {shown}: {e}"))?;
        let peer = peer_credentials(&stream).map_err(|e| format!("{shown}: {e}"))?;
        if peer.pid != self.pid || peer.uid != our_uid() {
            return Err(format!(
                "{shown} is served by process {} of uid {}, not by the JVM {}; refusing to talk to it",
                peer.pid, peer.uid, self.pid
            ));
        }
        Ok(stream)
    }
}

/// Who listens on the other end of `stream`, as the kernel recorded it at listen(2): pid (0 when that
/// process is not in our PID namespace) and effective uid.
fn peer_credentials(stream: &UnixStream) -> std::io::Result<libc::ucred> {
    use std::os::fd::AsRawFd;
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are live locals of the size passed; the descriptor is the open stream's.
    // (libc rather than rustix, whose UCred holds a non-zero pid the kernel may answer 0 for.)
    let r = unsafe {
        libc::getsockopt(stream.as_raw_fd(), libc::SOL_SOCKET, libc::SO_PEERCRED, (&raw mut cred).cast(), &raw mut len)
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(cred)
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
pub fn execute(listener: &Listener, command: &str, args: &[&str], timeout: Duration) -> Result<Reply, String> {
    assert!(args.len() <= 3, "the protocol carries three arguments");
    let mut stream = listener.connect()?;
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
    // The JVM's words reach the terminal: control characters but line ends escaped.
    parse_reply(&hprof_format::names::printable_keeping(&String::from_utf8_lossy(&answer), &['\n']))
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
pub fn load_agent(listener: &Listener, library: &str, options: &str, timeout: Duration) -> Result<i32, String> {
    let reply = execute(listener, "load", &[library, "true", options], timeout)?;
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
