//! Agent_OnAttach: the agent loaded into a running JVM (`hprof attach`, `jcmd PID JVMTI.agent_load`).
//!
//! HotSpot loads the library once and calls Agent_OnAttach again at every later attach, so one entry point
//! serves three requests: an option string starts a session (as at startup, plus what VMInit would have
//! done); `dump`, `stop` or `status` acts on the session running (which may also have been started with
//! the JVM); and after a session ended, an option string starts the next one. `duration=N` ends a session
//! by itself after N seconds.
//!
//! The attach protocol carries back only Agent_OnAttach's return code, so the front end names a file for
//! the answer (`reply=PATH`, created by the front end, private, in the JVM's /tmp): one line saying what
//! was started, the status, or why the request was refused. The same line goes to the JVM's stderr for
//! `jcmd` users, who pass no reply file.

use crate::context::{Context, current};
use crate::hub::DumpReason;
use crate::log;
use jvmti::{Jni, Vm, sys};
use std::io::Write;
use std::time::Duration;

/// A command for the running session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SessionCommand {
    /// Write the reports so far; the session goes on.
    Dump,
    /// Write the reports and end the session.
    Stop,
    Status,
}

/// What one Agent_OnAttach asks for.
#[derive(Debug, PartialEq)]
struct Request {
    command: Option<SessionCommand>,
    /// The agent's options without `reply=`.
    options: String,
    reply: Option<String>,
}

impl Request {
    fn parse(option_string: &str) -> Request {
        let mut reply = None;
        let mut rest = Vec::new();
        for item in option_string.split(',').filter(|s| !s.trim().is_empty()) {
            match item.trim().strip_prefix("reply=") {
                Some(path) => reply = Some(path.to_owned()),
                None => rest.push(item.trim()),
            }
        }
        let command = match rest.as_slice() {
            ["dump"] => Some(SessionCommand::Dump),
            ["stop"] => Some(SessionCommand::Stop),
            ["status"] => Some(SessionCommand::Status),
            _ => None,
        };
        Request { command, options: rest.join(","), reply }
    }
}

/// Agent_OnAttach's body: JNI_OK, or JNI_ERR after saying why. `start_session` is the agent's (the entry
/// point passes it in), which starts a session in the running VM.
pub fn on_attach(
    vm: Vm,
    option_string: Option<&str>,
    start_session: impl FnOnce(Vm, &str) -> Result<&'static Context, String>,
) -> sys::jint {
    crate::panic_guard::install_panic_hook();
    let request = Request::parse(option_string.unwrap_or(""));
    let outcome = match vm.jni() {
        None => Err("Agent_OnAttach: the attaching thread has no JNI environment".to_owned()),
        Some(jni) => match request.command {
            Some(command) => run_command(jni, command),
            None => start(jni, start_session(vm, &request.options)),
        },
    };
    let (line, code) = match outcome {
        Ok(line) => {
            log::verbose(true, &format!("HPROF: {line}\n"));
            (line, sys::JNI_OK as sys::jint)
        }
        Err(e) => {
            log::error(&e);
            (format!("error: {e}"), sys::JNI_ERR)
        }
    };
    if let Some(path) = &request.reply {
        answer(path, &line);
    }
    code
}

/// Writes the answer into the front end's reply file. Never creates a file: only the one the front end made,
/// never through a link at its name, and without waiting on a FIFO planted there (O_NONBLOCK).
fn answer(path: &str, line: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let written = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .and_then(|mut f| writeln!(f, "{line}"));
    if let Err(e) = written {
        log::warning(&format!("cannot answer the attaching front end in {path}: {e}"));
    }
}

fn start(jni: Jni, started: Result<&'static Context, String>) -> Result<String, String> {
    let ctx = started?;
    let out = destination(ctx);
    let o = &ctx.options;
    // A heap dump is a snapshot: asked for alone, it is taken now and the session is over.
    if o.heap_dump && !o.alloc_sites && o.cpu.is_none() && !o.monitor {
        ctx.end_session(jni);
        return Ok(format!("dumped: session {} wrote the heap dump to {out}", ctx.session()));
    }
    let ends = match o.duration_s {
        Some(s) => format!("after {s} s"),
        None => "at `hprof attach PID stop` or the JVM's exit".to_owned(),
    };
    Ok(format!("started: session {} ({}); reports go to {out} {ends}", ctx.session(), ctx.option_string()))
}

fn run_command(jni: Jni, command: SessionCommand) -> Result<String, String> {
    let Some(ctx) = current() else {
        return match command {
            SessionCommand::Status => Ok("idle: hprof is loaded but no session has run".to_owned()),
            _ => Err("no hprof session runs in this JVM; start one with `hprof attach PID <options>`".to_owned()),
        };
    };
    let (session, out) = (ctx.session(), destination(ctx));
    match command {
        SessionCommand::Status if ctx.is_live() => {
            let ran = ctx.started().elapsed().as_secs_f64();
            let ends = match ctx.options.duration_s {
                Some(d) => format!(", ends in {:.0} s", (d as f64 - ran).max(0.0)),
                None => String::new(),
            };
            Ok(format!(
                "running: session {session} ({}) for {ran:.1} s{ends}; reports go to {out}",
                ctx.option_string()
            ))
        }
        SessionCommand::Status => {
            Ok(format!("stopped: session {session} ({}) has ended; its reports are in {out}", ctx.option_string()))
        }
        _ if !ctx.is_live() => {
            Err(format!("session {session} has already ended (its reports are in {out}); start a new one"))
        }
        SessionCommand::Dump => {
            ctx.dump(Some(jni), DumpReason::Command);
            Ok(format!("dumped: session {session} wrote its reports so far to {out}; it goes on"))
        }
        SessionCommand::Stop => {
            ctx.end_session(jni);
            Ok(format!("stopped: session {session} wrote its reports to {out}"))
        }
    }
}

/// Where a session's reports go, as an absolute path (the front end's shell is elsewhere), and its
/// flame graph and collapsed stacks.
fn destination(ctx: &Context) -> String {
    let absolute = |p: &str| {
        if p.starts_with('/') || p.starts_with("socket ") {
            p.to_owned()
        } else {
            std::env::current_dir().map(|d| d.join(p).display().to_string()).unwrap_or_else(|_| p.to_owned())
        }
    };
    let mut out = absolute(ctx.output.description());
    for (what, file) in [("flame graph", &ctx.options.flamegraph), ("collapsed stacks", &ctx.options.collapsed)] {
        if let Some(f) = file {
            out.push_str(&format!(", {what} {}", absolute(f)));
        }
    }
    out
}

/// `duration=`: a daemon thread that ends the session after `seconds`, unless it ended before.
pub fn end_after(ctx: &Context, jni: Jni, seconds: u32) {
    let mine = ctx as *const Context as usize;
    let spawned = crate::agent_thread::spawn(ctx, jni, "HPROF session timer", move |current, jni| {
        let deadline = std::time::Instant::now() + Duration::from_secs(seconds as u64);
        while std::time::Instant::now() < deadline {
            if !current.is_live() || current as *const Context as usize != mine {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        if current as *const Context as usize == mine && current.end_session(jni) {
            log::verbose(
                current.options.verbose,
                &format!("HPROF: session {} ended after {seconds} s\n", current.session()),
            );
        }
    });
    if let Err(e) = spawned {
        log::error(&format!("duration={seconds}: {e}; the session runs until the JVM exits"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests() {
        let r = Request::parse("cpu=samples,duration=5,reply=/tmp/.r");
        assert_eq!(
            (r.command, r.options.as_str(), r.reply.as_deref()),
            (None, "cpu=samples,duration=5", Some("/tmp/.r"))
        );
        assert_eq!(Request::parse("status,reply=/tmp/x").command, Some(SessionCommand::Status));
        assert_eq!(Request::parse("stop").command, Some(SessionCommand::Stop));
        assert_eq!(Request::parse("dump,heap=all").command, None);
    }
}
