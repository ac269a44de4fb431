//! One connected agent: a thread copies what it sends into the output file while the user's (or the
//! script's) commands go the other way. The session ends when the agent disconnects or the user quits.

use super::console::{self, Line};
use super::scanner::Scanner;
use hprof_format::ID_SIZE;
use hprof_format::commands::{Command, encode};
use std::fs::File;
use std::io::{BufRead, BufWriter, IsTerminal, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::Path;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

enum Event {
    Line(String),
    StdinClosed,
    AgentGone(Result<Scanner, String>),
    Interrupted,
}

/// `start`: the first bytes the agent sent (its header, read by the listener).
pub fn run(
    stream: TcpStream,
    start: Vec<u8>,
    output: &Path,
    scripted: Vec<Line>,
    interactive: bool,
) -> Result<(), String> {
    // 0600, no symlink followed; an existing file is replaced when the session ends (private-files).
    let private_files::Created { file, mut finish, .. } =
        private_files::create(output, private_files::IfExists::Replace)
            .map_err(|e| format!("cannot create {}: {e}", output.display()))?;
    let reader_stream = stream.try_clone().map_err(|e| e.to_string())?;
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    let (tx, rx) = mpsc::channel();
    let tty = std::io::stderr().is_terminal();
    // Before any thread starts: they all leave SIGINT to the one that forwards it.
    super::interrupt::forward(tx.clone(), Event::Interrupted);

    let agent_tx = tx.clone();
    let receiver = thread::spawn(move || {
        let result = receive(reader_stream, start, file, tty);
        let _ = agent_tx.send(Event::AgentGone(result));
    });

    let mut sender = Sender { stream, serial: 1 };
    let mut quit = false;
    for line in scripted {
        if !sender.perform(line)? {
            quit = true;
            break;
        }
    }
    if interactive && !quit {
        let stdin_tx = tx.clone();
        thread::spawn(move || {
            let stdin = std::io::stdin();
            if stdin.is_terminal() {
                eprintln!("hprof: type `help` for commands");
            }
            for line in stdin.lock().lines() {
                match line {
                    Ok(l) => {
                        if stdin_tx.send(Event::Line(l)).is_err() {
                            return;
                        }
                    }
                    Err(_) => break,
                }
            }
            let _ = stdin_tx.send(Event::StdinClosed);
        });
    }
    drop(tx);

    let outcome = loop {
        if quit {
            let _ = sender.stream.shutdown(Shutdown::Both);
        }
        match rx.recv() {
            Ok(Event::Line(l)) => match console::parse(&l) {
                Ok(line) => match sender.perform(line) {
                    Ok(true) => {}
                    Ok(false) => quit = true,
                    Err(e) => eprintln!("hprof: {e}"),
                },
                Err(e) => eprintln!("hprof: {e}"),
            },
            Ok(Event::StdinClosed) => {}
            Ok(Event::Interrupted) => {
                eprintln!(
                    "hprof: interrupted: closing the connection and saving what arrived (Ctrl-C again ends at once)"
                );
                super::interrupt::second_ends_hprof();
                quit = true;
            }
            Ok(Event::AgentGone(result)) => break result,
            Err(_) => break Err("the receiving thread stopped".into()),
        }
    };
    let _ = receiver.join();
    // What arrived is the profile, even if the connection ended in an error.
    finish.commit().map_err(|e| e.to_string())?;
    let scanner = outcome?;
    if tty {
        eprintln!();
    }
    eprintln!("hprof: agent disconnected; {} written to {}", scanner.status(), output.display());
    for (name, n) in scanner.counts_by_name() {
        eprintln!("  {name:<20} {n}");
    }
    Ok(())
}

struct Sender {
    stream: TcpStream,
    serial: u32,
}

impl Sender {
    /// Carries out one line; false means the user quit.
    fn perform(&mut self, line: Line) -> Result<bool, String> {
        match line {
            Line::Empty => {}
            Line::Help => eprint!("{}", console::HELP),
            Line::Quit => return Ok(false),
            Line::Wait(s) => thread::sleep(Duration::from_secs_f64(s)),
            Line::Send(cmd) => self.send(&cmd)?,
        }
        Ok(true)
    }

    fn send(&mut self, cmd: &Command) -> Result<(), String> {
        let bytes = encode(self.serial, cmd, ID_SIZE);
        self.serial += 1;
        self.stream.write_all(&bytes).map_err(|e| format!("cannot send {cmd:?}: the agent is gone ({e})"))
    }
}

/// Copies the stream into the file, reporting what arrives. Ends when the agent closes the connection.
fn receive(mut stream: TcpStream, start: Vec<u8>, file: File, tty: bool) -> Result<Scanner, String> {
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut scanner = Scanner::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut last_status = std::time::Instant::now();
    let mut start = Some(start);
    loop {
        let read = match start.take() {
            Some(first) => {
                buf[..first.len()].copy_from_slice(&first);
                Ok(first.len())
            }
            None => stream.read(&mut buf),
        };
        let n = match read {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(e) => return Err(format!("receiving from the agent: {e}")),
        };
        out.write_all(&buf[..n]).map_err(|e| format!("writing the output file: {e}"))?;
        for event in scanner.feed(&buf[..n]) {
            if tty {
                eprint!("\r\x1b[K");
            }
            eprintln!("hprof: {event}");
        }
        if tty && last_status.elapsed() > Duration::from_millis(250) {
            eprint!("\r\x1b[Kreceived {}", scanner.status());
            last_status = std::time::Instant::now();
        }
        // Records arrive in bursts; keep the file readable by others while the run goes on.
        if n < buf.len() {
            out.flush().map_err(|e| format!("writing the output file: {e}"))?;
        }
    }
    out.flush().map_err(|e| format!("writing the output file: {e}"))?;
    Ok(scanner)
}
