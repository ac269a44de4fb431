//! The command reader: one agent thread that reads the front end's commands and carries them out.
//! Bad commands are reported and skipped; a closed connection ends the reader, never the program.

use crate::context::Context;
use crate::hub::ControlCommand;
use crate::log;
use crate::output::ID_SIZE;
use hprof_format::commands::{Command, ReadError, Request, command_name, read_command};
use jvmti::Jni;
use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::time::Duration;

/// How often buffered records are pushed to the front end while no command arrives.
const FLUSH_EVERY: Duration = Duration::from_millis(500);
/// How long the rest of a command may take once its first byte has arrived.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// Starts the reader if the output goes to a socket.
pub fn start(ctx: &Context, jni: Jni) {
    let Some(stream) = ctx.output.command_stream() else { return };
    if let Err(e) =
        crate::agent_thread::spawn(ctx, jni, "HPROF net command reader", move |ctx, jni| serve(ctx, jni, stream))
    {
        log::error(&format!("net: {e}; front-end commands will not be read"));
    }
}

fn serve(ctx: &Context, jni: Jni, stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(COMMAND_TIMEOUT));
    let mut reader = BufReader::new(stream);
    while ctx.is_live() {
        if reader.buffer().is_empty() && !readable(reader.get_ref(), FLUSH_EVERY) {
            ctx.output.flush();
            continue;
        }
        match read_command(&mut reader, ID_SIZE) {
            Ok(request) => {
                if request.command == Command::Eof {
                    log::verbose(ctx.options.verbose, "HPROF: the front end sent EOF; no more commands are read\n");
                    return;
                }
                execute(ctx, jni, &request);
                ctx.output.flush();
            }
            Err(ReadError::Skipped(msg)) => log::error(&format!("net: {msg}")),
            // The front end stopped sending. It may still read (a half-closed socket); if it is really gone,
            // the next write fails and the output says so, once.
            Err(ReadError::Closed) => return,
            Err(ReadError::Fatal(msg)) => {
                log::error(&format!("net: {msg}; no more commands are read"));
                return;
            }
        }
        // Keep the buffer from hiding bytes that arrive later (poll only sees the socket).
        let _ = reader.fill_buf().map(|_| ()).ok();
    }
}

/// Waits until the socket has data (or is closed), up to `timeout`.
fn readable(stream: &TcpStream, timeout: Duration) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let mut fds = [PollFd::new(stream, PollFlags::IN)];
    let timeout = Timespec { tv_sec: timeout.as_secs() as _, tv_nsec: timeout.subsec_nanos() as _ };
    poll(&mut fds, Some(&timeout)).is_ok_and(|n| n > 0)
}

fn execute(ctx: &Context, jni: Jni, request: &Request) {
    let name = command_name(request.tag);
    let handled = match &request.command {
        Command::ForceGc => {
            ctx.force_gc();
            true
        }
        Command::DumpTraces => {
            ctx.dump_traces();
            true
        }
        Command::SetDepth(d) => {
            ctx.set_depth(*d as u32);
            true
        }
        Command::ExitVm => {
            ctx.output.flush();
            exit_vm(jni);
            true
        }
        Command::DumpHeap => ctx.command(Some(jni), &ControlCommand::DumpHeap),
        Command::AllocSites { flags, cutoff } => {
            ctx.command(Some(jni), &ControlCommand::AllocSites { flags: *flags, cutoff: *cutoff })
        }
        Command::HeapSummary => ctx.command(Some(jni), &ControlCommand::HeapSummary),
        Command::CpuSamples { cutoff } => ctx.command(Some(jni), &ControlCommand::CpuSamples { cutoff: *cutoff }),
        Command::AllocTracking(on) => ctx.command(Some(jni), &ControlCommand::AllocTracking(*on)),
        Command::ClearCpuSamples => ctx.command(Some(jni), &ControlCommand::ClearCpuSamples),
        Command::CpuSampling { thread_object_id, on } => {
            let thread = (*thread_object_id != 0).then_some(*thread_object_id);
            if let Some(id) = thread
                && !ctx.thread_records().iter().any(|t| t.object_id == id)
            {
                log::error(&format!(
                    "net: {name} (serial {}): no thread has object id 0x{id:x}; skipped",
                    request.serial
                ));
                return;
            }
            ctx.command(Some(jni), &ControlCommand::CpuSampling { thread_object_id: thread, on: *on })
        }
        Command::Eof => true,
    };
    if !handled {
        log::warning(&format!("net: {name} (serial {}) ignored: {}", request.serial, why_unhandled(&request.command)));
    }
}

fn why_unhandled(command: &Command) -> &'static str {
    match command {
        Command::DumpHeap => "heap dumps are off (start the agent with heap=dump or heap=all)",
        Command::AllocSites { .. } | Command::HeapSummary | Command::AllocTracking(_) => {
            "allocation sites are off (start the agent with heap=sites or heap=all)"
        }
        Command::CpuSamples { .. } | Command::CpuSampling { .. } | Command::ClearCpuSamples => {
            "CPU sampling is off (start the agent with cpu=samples)"
        }
        _ => "not available",
    }
}

/// EXIT THE VM: a normal `System.exit(0)`, so that shutdown hooks run and the final dump is written.
fn exit_vm(jni: Jni) {
    let result = jni
        .find_class(c"java/lang/System")
        .and_then(|system| jni.static_method_id(system, c"exit", c"(I)V").map(|m| (system, m)))
        .and_then(|(system, exit)| jni.call_static_void(system, exit, &[jvmti::sys::jvalue { i: 0 }]));
    if let Err(e) = result {
        log::error(&format!("net: EXIT THE VM failed: {e}"));
    }
}
