//! `hprof ps` and `hprof attach`: find the JVMs of this user and load the agent into one that is already
//! running, through HotSpot's own attach protocol (see `protocol`), with no JDK tool needed.
//!
//! The agent answers through a reply file: the client creates it, private and randomly named, in the JVM's
//! /tmp and names it in the option string (`reply=`); the agent writes one line there — what it started, a
//! session's status, or why it refused — since the protocol itself carries back only Agent_OnAttach's
//! return code. Every file hprof makes or uses in the JVM's /tmp goes through `JvmDir`, resolved inside
//! the JVM's root, so that a container's users cannot point it elsewhere.

mod agent_copy;
mod jvm_dir;
mod perfdata;
mod process;
mod protocol;
pub mod ps;

use clap::Args;
use jvm_dir::JvmDir;
use process::{Process, our_uid, user_name};
use protocol::Listener;
use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Args)]
pub struct AttachArgs {
    /// The JVM's process id (as `hprof ps` lists it).
    pub pid: i32,
    /// The agent's options (`cpu=samples,duration=30,flamegraph=cpu.html`, `heap=dump,format=b`, …), or
    /// `dump`, `stop` or `status` for the session already running in that JVM.
    pub what: String,
    /// Seconds to wait for the JVM to start its attach listener.
    #[arg(long, default_value_t = 10)]
    pub timeout: u64,
    /// The agent library (default: libhprof.so next to this program).
    #[arg(long, value_name = "FILE")]
    pub agent: Option<PathBuf>,
}

/// The commands a running session takes.
const COMMANDS: [&str; 3] = ["dump", "stop", "status"];
/// How long the JVM may take to carry out a load: Agent_OnAttach writes a heap dump before it returns.
const LOAD_TIMEOUT: Duration = Duration::from_secs(600);

pub fn run(args: &AttachArgs) -> Result<(), String> {
    let target = Target::find(args.pid)?;
    let library = target.agent_library(args.agent.as_deref())?;
    let socket = protocol::listener_socket(&target.process, &target.tmp, Duration::from_secs(args.timeout))?;
    let command = COMMANDS.contains(&args.what.trim());
    let options = if command { args.what.trim().to_owned() } else { absolute_paths(&target.process, &args.what) };
    let answer = target.load(&socket, &library, &options)?;
    println!("{answer}");
    if command {
        return Ok(());
    }
    if let Some(version) = target.java_major.filter(|&v| v >= 21)
        && !target.vm_args.contains("-XX:+EnableDynamicAgentLoading")
    {
        eprintln!(
            "hprof: note: JDK {version} prints a warning about a dynamically loaded agent on the JVM's stderr; start \
             it with -XX:+EnableDynamicAgentLoading to allow hprof attach without it"
        );
    }
    if let Some(seconds) = duration_of(&args.what) {
        wait_for_session_end(&target, &socket, &library, seconds)?;
    }
    Ok(())
}

/// A JVM we may attach to.
struct Target {
    process: Process,
    /// Its /tmp, resolved within its root.
    tmp: JvmDir,
    java_major: Option<u32>,
    vm_args: String,
}

impl Target {
    /// The JVM `pid`, or the one-line reason hprof cannot attach to it.
    fn find(pid: i32) -> Result<Target, String> {
        let process = Process::open(pid)?;
        if process.uid != our_uid() {
            return Err(format!(
                "process {pid} belongs to {}; hprof attaches only to JVMs of its own user ({}): run it as that user",
                user_name(process.uid),
                user_name(our_uid())
            ));
        }
        let perf = match process.perf_data() {
            Some(Ok(p)) => Some(p),
            Some(Err(e)) => {
                eprintln!("hprof: warning: unreadable performance data ({})", hprof_format::names::printable(&e));
                None
            }
            None => None,
        };
        if perf.is_none() && !process.maps_libjvm() {
            let name = process.cmdline().first().cloned().unwrap_or_default();
            return Err(format!("process {pid} ({name}) is not a Java VM"));
        }
        if perf.as_ref().and_then(|p| p.attach_supported()) == Some(false) {
            return Err(format!(
                "the JVM {pid} was started with -XX:+DisableAttachMechanism: it accepts no agent after its start"
            ));
        }
        Ok(Target {
            tmp: process.tmp()?,
            java_major: perf.as_ref().and_then(|p| p.java_version()).and_then(perfdata::major_version),
            vm_args: perf.as_ref().map(|p| p.vm_args().to_owned()).unwrap_or_default(),
            process,
        })
    }

    /// The agent's path as the JVM sees it. A JVM in another mount namespace (a container) cannot see ours:
    /// the library is copied into its /tmp (see `agent_copy`), and a second attach finds that copy again, so
    /// that it reaches the running agent rather than loading a second one.
    fn agent_library(&self, given: Option<&Path>) -> Result<String, String> {
        let library = match given {
            Some(a) => a.to_path_buf(),
            None => std::env::current_exe()
                .map_err(|e| format!("cannot find this program's directory: {e}"))?
                .with_file_name("libhprof.so"),
        };
        let library = std::fs::canonicalize(&library).map_err(|e| {
            format!("agent library {}: {e}; build it with `cargo build --release` or pass --agent", library.display())
        })?;
        if self.process.same_root {
            return Ok(library.to_string_lossy().into_owned());
        }
        let library = agent_copy::Library::read(&library)?;
        agent_copy::place(&self.tmp, &library, &agent_copy::mapped_copies(self.process.pid), our_uid())
    }

    /// Loads the agent with `options` and returns the agent's one-line answer; the answer of a refusal
    /// becomes the error.
    fn load(&self, socket: &Listener, library: &str, options: &str) -> Result<String, String> {
        let mut reply = ReplyFile::create(&self.tmp)?;
        let options = format!("{options},reply={}", reply.inside);
        let code = protocol::load_agent(socket, library, &options, LOAD_TIMEOUT)?;
        let answer = reply.read();
        if code != 0 {
            return Err(if answer.is_empty() {
                format!("the agent refused (Agent_OnAttach returned {code}); see the JVM's stderr")
            } else {
                answer.strip_prefix("error: ").unwrap_or(&answer).to_owned()
            });
        }
        Ok(if answer.is_empty() { "the agent started; it said nothing".to_owned() } else { answer })
    }
}

/// The private file the agent answers in, created in the JVM's /tmp under a random name (so that no one
/// can have planted anything there) and read back through the descriptor it was created with.
struct ReplyFile<'a> {
    dir: &'a JvmDir,
    name: String,
    file: std::fs::File,
    /// Its path in the JVM's file system.
    inside: String,
}

impl<'a> ReplyFile<'a> {
    fn create(dir: &'a JvmDir) -> Result<ReplyFile<'a>, String> {
        let name = format!(".hprof_reply_{}", agent_copy::random_hex()?);
        let file = dir.create_new(&name, 0o600).map_err(|e| format!("cannot create {}/{name}: {e}", dir.shown))?;
        let inside = format!("{}/{name}", dir.inside.trim_end_matches('/'));
        Ok(ReplyFile { dir, name, file, inside })
    }

    /// The answer, control characters but line ends escaped: the JVM it comes from may be hostile.
    fn read(&mut self) -> String {
        let mut bytes = Vec::new();
        let _ = self.file.rewind().and_then(|()| self.file.read_to_end(&mut bytes));
        hprof_format::names::printable_keeping(String::from_utf8_lossy(&bytes).trim(), &['\n']).into_owned()
    }
}

impl Drop for ReplyFile<'_> {
    fn drop(&mut self) {
        let _ = self.dir.remove(&self.name);
    }
}

/// Output files given relative to this shell's directory, as the user means them (the JVM's working
/// directory may be anywhere). A JVM in another mount namespace gets them unchanged: our paths mean
/// nothing there.
fn absolute_paths(p: &Process, options: &str) -> String {
    let cwd = std::env::current_dir().ok().filter(|_| p.same_root);
    options
        .split(',')
        .map(|item| match (item.split_once('='), &cwd) {
            (Some((name @ ("file" | "flamegraph" | "collapsed"), value)), Some(cwd))
                if !value.is_empty() && !value.starts_with('/') =>
            {
                format!("{name}={}", cwd.join(value).display())
            }
            _ => item.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// `duration=N` of an option string, in seconds.
fn duration_of(options: &str) -> Option<u64> {
    options.split(',').find_map(|item| item.trim().strip_prefix("duration=")?.trim().parse().ok())
}

/// Waits out a session's duration, then until the agent reports it stopped (its reports are written then),
/// so that the files exist when `hprof attach` returns.
fn wait_for_session_end(target: &Target, socket: &Listener, library: &str, seconds: u64) -> Result<(), String> {
    std::thread::sleep(Duration::from_secs(seconds));
    let pid = target.process.pid;
    for _ in 0..600 {
        if std::fs::metadata(format!("/proc/{pid}")).is_err() {
            println!("the JVM {pid} exited; its reports were written at its exit");
            return Ok(());
        }
        let status = target.load(socket, library, "status")?;
        if !status.starts_with("running") {
            println!("{status}");
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Err(format!("the session in JVM {pid} did not stop within 150 s of its duration"))
}

#[cfg(test)]
mod tests {
    use super::duration_of;

    #[test]
    fn durations() {
        assert_eq!(duration_of("cpu=samples,duration=30"), Some(30));
        assert_eq!(duration_of("cpu=samples"), None);
    }
}
