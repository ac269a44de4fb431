//! heap=dump: complete heap dumps, binary (HEAP DUMP SEGMENT … HEAP DUMP END, as VisualVM and Eclipse MAT
//! read them) or text (HEAP DUMP BEGIN … END), at exit (doe=y), on Ctrl-\ (SIGQUIT → DataDumpRequest) and
//! on the front end's DUMP HEAP command. Each dump is complete and separate.
//!
//! One dump is a pipeline that flows one way: each stage is a directory that imports only the stages
//! before it (no module names a later one; `make lint` checks that no files import each other in a
//! cycle), and `dump.rs`'s `DumpSession` runs them in order, holding what they share (the JVM handles,
//! the identifiers, the class plan, the threads, how objects are named) instead of passing it from
//! function to function.
//!
//! - `ids/`: the dump's own identifiers, carried in JVMTI tags (`mod.rs`; an object array's tag carries its
//!   length too), and the objects tagged before the walk, remembered for a walk by address (`named.rs`);
//! - `plan/`: what the walk needs to know beforehand, gathered with JVMTI and JNI (its callbacks may call
//!   neither): the classes and their layouts (`layout.rs`, the class plan, from the dump's one
//!   GetLoadedClasses, and where a value goes in an instance's values), the threads, their traces and held
//!   monitors (`threads.rs`), and what the walk would not meet — what only class objects' own fields hold
//!   (`held.rs`, reading the plan's classes) and what only the classes' constant pools hold (`resolved.rs`,
//!   `init_locks.rs`);
//! - `naming/`: how the dump identifies its objects — by address (trusted after the `probe.rs` walk; every
//!   read of HotSpot's memory goes through the `hotspot` crate's `heap` module, checked against committed
//!   memory or made with a read that cannot fault; primitive values then read from memory,
//!   `field_offsets.rs`) or by tag (`ids/`); it finds the objects `ids/named.rs` remembered again by
//!   address, inside the walk;
//! - `walk/`: the JVMTI FollowReferences pass. `mod.rs` holds the general answer to each callback and,
//!   beside it, the short path for the commonest report that must answer as it does; what happens when the
//!   walk moves to the next object (`enter.rs`), the HPROF types of the values JVMTI reports to every walk,
//!   this one and the probe's, through `jvmti::heap_walk`'s safe visitor (`callbacks.rs`), object array
//!   sizes for the text output (`array_sizes.rs`), objects whose classes the walk met before the plan knew
//!   them (`late.rs`); each object, class and root, once whole, goes to a `HeapSink` (`heap_sink.rs`). Who a
//!   callback's objects are it asks through the `Identify` trait (`identity.rs`);
//! - `identify/`: the answer — a callback's raw objects turned into the dump's identifiers, by address or by
//!   tag (the walk is generic over the trait, so that its calls inline; see docs/architecture.md for why it
//!   is called from inside the walk rather than after it);
//! - `records/`: the two `HeapSink`s — binary sub-records (encoded by hprof-format's `HeapWriter`, cut into
//!   segments here, `binary.rs`) and text lines (`text.rs`) — writing their bytes to any `RecordBytes`;
//! - `sink/`: where those bytes go — a spool file filled by a thread of its own (`spool.rs`), or the profile
//!   itself where it is a file (`in_place.rs`);
//! - `dump.rs`: one dump from start to end, and why in that order.

mod dump;
mod identify;
mod ids;
mod naming;
mod plan;
mod records;
mod sink;
mod walk;

use crate::context::Context;
use crate::hub::{Capability, ControlCommand, DumpReason};
use crate::log;
use dump::{Completeness, DumpReport, FileState, Release};
use jvmti::{CapabilityFlag, EventHandler, Jni};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Default)]
pub struct HeapDump {
    /// A SIGQUIT and a socket command may ask at once: dumps never interleave.
    one_at_a_time: Mutex<()>,
    /// Set at VMDeath: only the exit dump may still start (a later one could not finish before the output
    /// closes).
    exiting: AtomicBool,
    files: FileState,
}

impl HeapDump {
    pub fn new() -> HeapDump {
        HeapDump::default()
    }

    fn dump(&self, ctx: &Context, jni: Option<Jni>, reason: DumpReason) {
        let _one = self.one_at_a_time.lock().unwrap_or_else(|e| e.into_inner());
        let last = matches!(reason, DumpReason::Exit | DumpReason::SessionEnd);
        if !ctx.is_live() || (!last && self.exiting.load(Ordering::Relaxed)) {
            return;
        }
        // At exit the process is about to give all its memory back.
        let release = if reason == DumpReason::Exit { Release::Never } else { Release::Background };
        with_jni(ctx, jni, |jni| match write_whole(ctx, jni, &self.files, release) {
            Ok(report) => {
                if report.unplaced() > 0 {
                    log::error(&format!(
                        "heap dump is not whole: {} field values could not be placed in their objects' layouts \
                         (in each of {ATTEMPTS} attempts); the last attempt was written",
                        report.unplaced()
                    ));
                }
                if std::env::var_os("HPROF_HEAP_DUMP_STATS").is_some() {
                    log::warning(&format!(
                        "heap dump: {} objects, {} roots, {} classes ({} resolved-references arrays and {} init locks held, found in {} ms), {} bytes in {} ms ({} ms before the walk, {} ms walking); ids: {}; {}; {}",
                        report.stats.objects,
                        report.stats.roots,
                        report.classes,
                        report.resolved,
                        report.init_locks,
                        report.resolved_ms,
                        report.bytes,
                        report.total_ms,
                        report.prep_ms,
                        report.walk_ms,
                        report.naming,
                        if report.placed.is_empty() { "spooled" } else { &report.placed },
                        match report.attempt {
                            1 => "first attempt".to_string(),
                            n => format!("attempt {n}"),
                        },
                    ));
                }
            }
            Err(msg) => log::error(&format!("heap dump failed: {msg}")),
        });
    }
}

/// Dumps made before one is written whole. Classes load and objects are allocated between a dump's plan
/// and its walk; what the plan could not foresee is resolved after the walk, and should that still leave a
/// value without its place, the dump is not written and made again (its plan then knows those classes).
const ATTEMPTS: u32 = 3;

/// One dump, whole, or after [`ATTEMPTS`] the last attempt however it came out (the caller says so).
fn write_whole(ctx: &Context, jni: Jni, files: &FileState, release: Release) -> Result<DumpReport, String> {
    for attempt in 1..=ATTEMPTS {
        let completeness = if attempt < ATTEMPTS { Completeness::WholeOrNothing } else { Completeness::WriteAnyway };
        let mut report = dump::write(ctx, jni, files, release, completeness)?;
        report.attempt = attempt;
        if !report.discarded {
            return Ok(report);
        }
        log::warning(&format!(
            "heap dump: {} field values could not be placed in their objects' layouts; dumping again",
            report.unplaced()
        ));
    }
    unreachable!("the last attempt is always written")
}

/// Runs `f` with a JNI environment, attaching the calling native thread for the time of the dump if it
/// has none (a socket command handled on a native thread).
fn with_jni(ctx: &Context, jni: Option<Jni>, f: impl FnOnce(Jni)) {
    if let Some(jni) = jni.or_else(|| ctx.vm().jni()) {
        return f(jni);
    }
    match ctx.vm().attach_daemon(c"HPROF heap dump") {
        Ok(jni) => {
            f(jni);
            // SAFETY: this thread was attached above for this call only; `jni` and its local references
            // are not used past this point.
            unsafe { ctx.vm().detach() };
        }
        Err(e) => log::error(&format!("heap dump failed: cannot attach to the JVM: {e}")),
    }
}

/// Its JVMTI work happens in the dumps it is asked for, not in events.
impl EventHandler<Context> for HeapDump {}

impl Capability for HeapDump {
    fn name(&self) -> &'static str {
        "heap=dump"
    }

    fn on_vm_init(&self, ctx: &Context, jni: Jni) {
        let started = std::time::Instant::now();
        let n = plan::layout::link_unprepared(ctx, jni);
        if std::env::var_os("HPROF_HEAP_DUMP_STATS").is_some() {
            log::warning(&format!("heap dump: {n} classes linked in {} ms", started.elapsed().as_millis()));
        }
    }

    /// A dump asked for by Ctrl-\ or the socket may still be writing into the profile's file, which it has
    /// borrowed (see `in_place`): the output is closed after it has given the file back, `doe=n` or not.
    fn on_vm_death(&self, _agent: &Context, _jni: Jni) {
        let _one = self.one_at_a_time.lock().unwrap_or_else(|e| e.into_inner());
        self.exiting.store(true, Ordering::Relaxed);
    }

    /// Held monitors are ROOT MONITOR USED: the main environment asks at load time, the only time the
    /// JVM grants this capability.
    fn jvmti_capabilities(&self) -> Vec<CapabilityFlag> {
        vec![CapabilityFlag::CanGetOwnedMonitorInfo]
    }

    fn dump_section(&self) -> Option<(u32, &'static str)> {
        Some((20, "Java heap"))
    }

    fn write_dump(&self, ctx: &Context, jni: Option<Jni>, reason: DumpReason) {
        self.dump(ctx, jni, reason);
    }

    fn handle_command(&self, ctx: &Context, jni: Option<Jni>, command: &ControlCommand) -> bool {
        if *command != ControlCommand::DumpHeap {
            return false;
        }
        log::verbose(ctx.options.verbose, "Dumping Java heap ...");
        self.dump(ctx, jni, DumpReason::Command);
        ctx.output.flush();
        log::verbose(ctx.options.verbose, " done.\n");
        true
    }
}
