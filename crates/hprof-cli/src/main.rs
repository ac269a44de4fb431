//! `hprof`: the command-line front end.

mod install;
mod listen;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "hprof", version, about = "Front end for HPROF profiles and heap dumps (hprof-rs)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Copy libhprof.so into a JDK's lib directory, where HPROF once lived, so that
    /// `java -agentlib:hprof` and `-Xrunhprof` find it without LD_LIBRARY_PATH.
    InstallAgent(install::InstallArgs),
    /// Wait for an agent started with net=HOST:PORT, save what it streams, and send it commands.
    Listen(listen::ListenArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::InstallAgent(args) => install::run(&args),
        Command::Listen(args) => listen::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hprof: error: {e}");
            ExitCode::FAILURE
        }
    }
}
