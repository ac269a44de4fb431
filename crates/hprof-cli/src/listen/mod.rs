//! `hprof listen`: the front end's side of `net=`. Waits for an agent, writes everything it sends to a
//! file that the other commands read, shows what arrives, and sends commands typed at the prompt or given
//! with `--command`.

mod console;
mod handshake;
mod interrupt;
mod scanner;
mod session;

use clap::Args;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::path::PathBuf;

#[derive(Args)]
#[command(after_help = console::HELP)]
pub struct ListenArgs {
    /// Address to listen on, e.g. 127.0.0.1:9000 (port 0 picks a free port and prints it).
    pub address: String,
    /// File to write the received profile to.
    #[arg(short, long, value_name = "FILE", default_value = "java.hprof")]
    pub output: PathBuf,
    /// A command to send once the agent is connected (repeatable, sent in order); see below.
    #[arg(long = "command", value_name = "COMMAND")]
    pub commands: Vec<String>,
    /// Do not read commands from the terminal (only --command ones are sent).
    #[arg(long)]
    pub no_stdin: bool,
    /// Allow listening on an address other than loopback (the protocol has no authentication).
    #[arg(long)]
    pub allow_remote: bool,
}

pub fn run(args: &ListenArgs) -> Result<(), String> {
    // Commands are checked before anyone connects, so that a typo fails fast.
    let scripted = args.commands.iter().map(|c| console::parse(c)).collect::<Result<Vec<_>, _>>()?;
    let addr = resolve(&args.address)?;
    if !addr.ip().is_loopback() && !args.allow_remote {
        return Err(format!(
            "{addr} is not a loopback address; anyone who can reach it could control the JVM. \
             Pass --allow-remote to listen there anyway"
        ));
    }
    let listener = TcpListener::bind(addr).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!("hprof: listening on {local}; start the JVM with -agentlib:hprof=net={local},…");
    // A peer that is not an agent is dropped and the listener waits on (see `handshake`).
    let (stream, peer, start) = loop {
        let (mut stream, peer) = listener.accept().map_err(|e| format!("accept on {local}: {e}"))?;
        match handshake::read_header(&mut stream, peer) {
            Ok(start) => break (stream, peer, start),
            Err(e) => eprintln!("hprof: {e}; connection dropped, still listening on {local}"),
        }
    };
    eprintln!("hprof: agent connected from {peer}; writing {}", args.output.display());
    session::run(stream, start, &args.output, scripted, !args.no_stdin)
}

fn resolve(address: &str) -> Result<SocketAddr, String> {
    address
        .to_socket_addrs()
        .map_err(|e| format!("bad address {address:?}: {e} (expected host:port, e.g. 127.0.0.1:9000)"))?
        .next()
        .ok_or_else(|| format!("address {address:?} resolves to nothing"))
}
