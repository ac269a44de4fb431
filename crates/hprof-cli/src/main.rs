//! `hprof`: the command-line front end.

mod analyze;
mod attach;
mod install;
mod listen;
mod memory_cap;
mod size_arg;
mod tables;
mod time_arg;

use clap::{Parser, Subcommand};

#[global_allocator]
static ALLOCATOR: memory_cap::Capped = memory_cap::Capped;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "hprof", version, about = "Front end for HPROF profiles and heap dumps (hprof-rs)")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Most bytes a compressed input (gzip, bzip2, xz, zstd) may inflate to, e.g. 200G. By default 64 times
    /// its compressed size, at least 1 GiB; past it, reading stops with an error.
    #[arg(long, global = true, value_name = "SIZE", value_parser = size_arg::parse_size)]
    max_inflated: Option<u64>,
    /// Most heap memory hprof may allocate, e.g. 8G (the mapped file is not counted); past it, it stops with
    /// an error. Without it, analysis needs up to about 10 times the (uncompressed) file's size.
    #[arg(long, global = true, value_name = "SIZE", value_parser = size_arg::parse_size)]
    max_memory: Option<u64>,
}

#[derive(Subcommand)]
enum Command {
    /// Header, record counts, heap totals and threads of a profile or heap dump.
    Summary(analyze::summary::Args),
    /// Class histogram: instances and shallow bytes per class.
    Histo(analyze::histo::Args),
    /// Render a binary profile as the HPROF text report (format=a).
    Print(analyze::print::Args),
    /// Dominator tree with retained sizes: biggest objects and classes, or one class's objects.
    ///
    /// An object's retained size is what a collection would free if it went: itself and every object
    /// reachable only through it. Only strong references count: the `referent` of a weak, soft, phantom
    /// or final reference retains nothing. Objects no GC root reaches are left out of the tree and
    /// counted apart, as Eclipse MAT does (`--keep-unreachable` keeps them under the root); shares are of
    /// the heap in the tree.
    Dominators(analyze::dominators::Args),
    /// Shortest path from a GC root to an object.
    Path(analyze::path::Args),
    /// Leak suspects: what retains a large share of the heap, its accumulation point, and the path to it.
    Leaks(analyze::leaks::Args),
    /// Per-class growth between two heap dumps; `--objects`: the new objects, grouped by what keeps them.
    Diff(analyze::diff::Args),
    /// Memory spent on nothing: duplicate strings, empty and underused collections, boxed primitives in
    /// collections, zero-filled and duplicate primitive arrays, each with its share of the heap.
    Waste(analyze::waste::Args),
    /// Class loaders: their classes, retained bytes and parents; classes several loaders defined; loaders
    /// closed (undeployed) yet still held, with the path that holds each.
    Loaders(analyze::loaders::Args),
    /// Each thread's stack with the objects its frames hold, and what each thread and frame retains.
    Threads(analyze::threads::Args),
    /// Flame graph (HTML or SVG) of CPU samples or allocation sites.
    Flame(analyze::flame::FlameArgs),
    /// Export CPU samples or allocation sites as pprof (gzipped profile.proto), OTLP profiles or collapsed
    /// stacks; or a heap dump or profile as Parquet tables (`--format parquet --output DIR`) for SQL.
    Export(analyze::flame::ExportArgs),
    /// A local web view of a heap dump or profile on 127.0.0.1.
    Serve(analyze::serve::Args),
    /// Copy libhprof.so into a JDK's lib directory, where HPROF once lived, so that
    /// `java -agentlib:hprof` and `-Xrunhprof` find it without LD_LIBRARY_PATH.
    InstallAgent(install::InstallArgs),
    /// The JVMs of this user that `hprof attach` can profile: pid, JDK version, main class or jar.
    Ps,
    /// Profile a running JVM: load the agent with OPTIONS (`cpu=samples,duration=30`), or send `dump`,
    /// `stop` or `status` to the session running in it.
    Attach(attach::AttachArgs),
    /// Wait for an agent started with net=HOST:PORT, save what it streams, and send it commands.
    Listen(listen::ListenArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    memory_cap::give_back_at_once();
    hprof_analysis::source::set_max_inflated(cli.max_inflated);
    if let Some(bytes) = cli.max_memory {
        memory_cap::set(bytes, &analyze::human(bytes));
    }
    if !matches!(cli.command, Command::Listen(_) | Command::Serve(_)) {
        end_quietly_on_broken_pipe();
    }
    let result = match cli.command {
        Command::Summary(a) => analyze::summary::run(&a),
        Command::Histo(a) => analyze::histo::run(&a),
        Command::Print(a) => analyze::print::run(&a),
        Command::Dominators(a) => analyze::dominators::run(&a),
        Command::Path(a) => analyze::path::run(&a),
        Command::Leaks(a) => analyze::leaks::run(&a),
        Command::Diff(a) => analyze::diff::run(&a),
        Command::Waste(a) => analyze::waste::run(&a),
        Command::Loaders(a) => analyze::loaders::run(&a),
        Command::Threads(a) => analyze::threads::run(&a),
        Command::Flame(a) => analyze::flame::run_flame(&a),
        Command::Export(a) => analyze::flame::run_export(&a),
        Command::Serve(a) => analyze::serve::run(&a),
        Command::InstallAgent(args) => install::run(&args),
        Command::Listen(args) => listen::run(&args),
        Command::Ps => attach::ps::run(),
        Command::Attach(args) => attach::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // An error may quote what a file, a peer or another process chose: shown inert on the terminal.
            eprintln!("hprof: error: {}", hprof_format::names::printable_keeping(&e, &['\n', '\t']));
            ExitCode::FAILURE
        }
    }
}

/// `hprof histo dump.hprof | head`: when the reader goes away, end as `cat` does, killed by SIGPIPE
/// without a word, instead of a panic in `println!` (Rust ignores SIGPIPE by default). Not for the
/// commands that talk over sockets, where a peer that goes away is an error to report.
fn end_quietly_on_broken_pipe() {
    // SAFETY: restoring a signal's default disposition at the start of main, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
