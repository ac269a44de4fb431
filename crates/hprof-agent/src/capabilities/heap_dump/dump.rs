//! One heap dump from start to end, in the order that keeps the VM safe and memory small:
//!
//! 1. Before the walk (JVMTI and JNI allowed): a JVMTI environment of the dump's own, so that its tags
//!    never meet those of the class table or of heap=sites, and can all be dropped at once by disposing
//!    of it; how objects are named ([`super::naming`]: by address, or by tag); the class plan and the
//!    threads ([`super::plan`]), with class objects, thread objects, class loaders and held monitors
//!    tagged (and, for a walk by address, remembered to be untagged before it, [`super::naming`]); the
//!    threads' stack traces written.
//! 2. The walk ([`super::walk`]), streaming records into a spool file (see [`super::sink::spool`]),
//!    holding nothing the program's threads could wait for. If object addresses fail a check on the way, the walk stops, its records
//!    are dropped, and the heap is walked again with tags.
//! 3. After the walk: the few objects whose classes the plan did not know, the CLASS DUMPs of classes
//!    the walk did not visit; then the spool is copied into the profile (a binary dump into a file was
//!    written there in place, [`super::sink::in_place`]), closed by HEAP DUMP END (or opened by HEAP
//!    DUMP BEGIN with the totals, in text).
//! 4. The environment is disposed of, releasing every tag at once, on a thread of its own.

use super::identify::Identifier;
use super::ids::Named;
use super::ids::{self, DumpIds};
use super::naming::Naming;
use super::plan::held::HeldByClasses;
use super::plan::layout::ClassPlan;
use super::plan::threads::{SeenFrame, ThreadRoots};
use super::plan::{DumpVm, Skipped};
use super::records::binary::{BinarySink, FieldNames};
use super::records::layout_note::layout_note;
use super::records::text::TextSink;
use super::sink::in_place::{Dumped, LentProfile};
use super::sink::spool::Spool;
use super::walk::heap_sink::{ClassValues, HeapSink, Root};
use super::walk::late::{LateObjects, Resolved};
use super::walk::{Walk, WalkStats};
use crate::context::Context;
use crate::panic_guard::guard;
use jvmti::{Jni, Jvmti, sys};
use rustc_hash::FxHashMap;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What a dump wrote, for messages and tests.
#[derive(Debug, Clone, Default)]
pub struct DumpReport {
    pub stats: WalkStats,
    pub classes: usize,
    /// Classes whose resolved-references arrays were held for the walk (see [`super::plan::resolved`]).
    pub resolved: usize,
    /// Milliseconds spent finding them (and the init locks).
    pub resolved_ms: u128,
    /// Init locks (`int[0]`) of classes not yet initialized held for the walk (see [`super::plan::init_locks`]).
    pub init_locks: usize,
    pub late_unplaced: u64,
    /// Milliseconds spent before the walk, in the walk, and in all.
    pub prep_ms: u128,
    /// Bytes of the dump's records.
    pub bytes: u64,
    pub walk_ms: u128,
    pub total_ms: u128,
    /// How objects were named: "object addresses", or "tags (why)".
    pub naming: String,
    /// Where the records went: "spooled" (then copied), "written in place" (see [`super::sink::in_place`]).
    pub placed: String,
    /// The dump left values unplaced and, as asked ([`Completeness::WholeOrNothing`]), was not written.
    pub discarded: bool,
    /// Which attempt of the caller's this was (1: the first).
    pub attempt: u32,
}

impl DumpReport {
    /// Values the dump could not place in their objects' layouts (0: the dump is whole).
    pub fn unplaced(&self) -> u64 {
        self.stats.mismatches + self.late_unplaced
    }
}

/// Whether a dump that could not place every value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completeness {
    /// Not written (the report says `discarded`): the caller dumps again.
    WholeOrNothing,
    /// Written, the last of the caller's attempts: the caller says loudly that it is not whole.
    WriteAnyway,
}

/// What a profile's dumps carry from one to the next.
#[derive(Debug, Default)]
pub struct FileState {
    /// The last dump had records written meanwhile that are likely to come again: spool the next one
    /// rather than write it in place ([`super::sink::in_place`]).
    pub spool_next: AtomicBool,
}

/// When the dump's tags are released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Release {
    /// On a thread of its own once the dump is complete: releasing millions of tags takes the JVM
    /// seconds, which the program need not wait for.
    Background,
    /// Not at all: the VM is exiting.
    Never,
}

/// A JVMTI environment for one dump; disposing of it releases all its tags at once.
struct DumpEnv(Jvmti);

impl DumpEnv {
    fn open(ctx: &Context) -> Result<DumpEnv, String> {
        let env = ctx
            .vm()
            .jvmti(sys::JVMTI_VERSION_1_2)
            .map_err(|e| format!("cannot create a JVMTI environment for the heap dump: {e}"))?;
        let mut caps = jvmti::no_capabilities();
        caps.set_can_tag_objects(1);
        if let Err(e) = env.add_capabilities(&caps) {
            let _ = env.dispose();
            return Err(format!("the JVM cannot tag objects for a heap dump: {e}"));
        }
        Ok(DumpEnv(env))
    }

    fn release(self, how: Release) {
        let env = self.0;
        if how == Release::Never {
            return;
        }
        // On the agent's worker, not a thread of its own per dump.
        let released = crate::worker::submit(move |_, _| {
            let started = Instant::now();
            let _ = env.dispose();
            // Give the freed tag map back to the system, not just to malloc.
            // SAFETY: no pointer arguments; glibc's allocator takes its own locks.
            unsafe { libc::malloc_trim(0) };
            if std::env::var_os("HPROF_HEAP_DUMP_STATS").is_some() {
                crate::log::warning(&format!("heap dump: tags released in {} ms", started.elapsed().as_millis()));
            }
        });
        if !released {
            let _ = env.dispose();
        }
    }
}

/// The parts of a walk that outlive it.
struct Walked {
    stats: WalkStats,
    emitted: Vec<bool>,
    seen_frames: Vec<SeenFrame>,
    thread_objects: Vec<(u64, u32)>,
    millis: u128,
}

/// Writes one complete heap dump to the agent's output.
pub fn write(
    ctx: &Context,
    jni: Jni,
    files: &FileState,
    release: Release,
    completeness: Completeness,
) -> Result<DumpReport, String> {
    let started = Instant::now();
    let env = DumpEnv::open(ctx)?;
    let result = write_with(ctx, jni, env.0, files, started, completeness);
    env.release(release);
    let mut report = result?;
    report.total_ms = started.elapsed().as_millis();
    Ok(report)
}

fn write_with(
    ctx: &Context,
    jni: Jni,
    env: Jvmti,
    files: &FileState,
    started: Instant,
    completeness: Completeness,
) -> Result<DumpReport, String> {
    let mut ids = DumpIds::new(ids::DUMP_BASE);
    let mut naming = Naming::choose(ctx, jni, env);
    if naming.addresses().is_some() {
        ids.named = Some(Named::default());
    }
    let vm = DumpVm { ctx, jni, env };
    let result =
        DumpSession::prepare(vm, &mut ids, &mut naming, files, completeness).and_then(|(mut session, prep)| {
            let prep_ms = started.elapsed().as_millis();
            let result = session.dump();
            session.plan.held.release(jni);
            let report = result?;
            Ok(DumpReport { classes: session.plan.len(), prep_ms, ..prep.into_report(report) })
        });
    if let Some(mut named) = ids.named.take() {
        named.release(jni);
    }
    result
}

/// One dump from its plan on: the JVM handles, the identifiers, the class plan, the threads and how
/// objects are named, which every stage after the plan reads (the walk, the records after it).
struct DumpSession<'a> {
    vm: DumpVm<'a>,
    ids: &'a mut DumpIds,
    plan: ClassPlan,
    threads: ThreadRoots,
    naming: Naming,
    files: &'a FileState,
    completeness: Completeness,
}

/// What the preparation of a dump found, for its report.
struct Prepared {
    resolved: usize,
    init_locks: usize,
    resolved_ms: u128,
}

impl Prepared {
    fn into_report(self, report: DumpReport) -> DumpReport {
        DumpReport { resolved: self.resolved, init_locks: self.init_locks, resolved_ms: self.resolved_ms, ..report }
    }
}

impl<'a> DumpSession<'a> {
    /// Before the walk: the class plan, the threads, what class data holds held for the walk, and where
    /// the objects named so far are.
    fn prepare(
        vm: DumpVm<'a>,
        ids: &'a mut DumpIds,
        naming: &mut Naming,
        files: &'a FileState,
        completeness: Completeness,
    ) -> Result<(DumpSession<'a>, Prepared), String> {
        let DumpVm { ctx, jni, env } = vm;
        let mut plan = ClassPlan::build(ctx, jni, env, ids)?;
        let threads = ThreadRoots::collect(ctx, jni, env, ids);
        let mut held = HeldByClasses::collect(ctx, jni, env, ids, plan.loaded());
        let search_started = Instant::now();
        static RESOLVED_TOLD: AtomicBool = AtomicBool::new(false);
        let resolved = super::plan::resolved::hold(vm, ids, &mut held, plan.loaded());
        let resolved = left_out(ctx, &RESOLVED_TOLD, "what only constant pools hold", resolved);
        static INIT_LOCKS_TOLD: AtomicBool = AtomicBool::new(false);
        let init_locks = super::plan::init_locks::hold(ctx, jni, env, ids, &mut held, plan.loaded());
        let init_locks = init_locks.map_err(Skipped::Limit);
        let init_locks = left_out(ctx, &INIT_LOCKS_TOLD, "the init locks of classes not yet initialized", init_locks);
        plan.held = held;
        plan.add_vm_statics();
        plan.release_loaded(jni);
        let resolved_ms = search_started.elapsed().as_millis();
        naming.locate(&mut plan);
        if let Some(mut named) = ids.named.take() {
            named.primitive_classes(jni, || ids.plain().1);
            ids.named = Some(named);
        }
        let naming = naming.clone();
        let session = DumpSession { vm, ids, plan, threads, naming, files, completeness };
        Ok((session, Prepared { resolved, init_locks, resolved_ms }))
    }

    /// The walk and the records after it, in the profile's format.
    fn dump(&mut self) -> Result<DumpReport, String> {
        if self.vm.ctx.output.is_binary() { self.binary_dump() } else { self.text_dump() }
    }
}

/// The count of objects held, or 0 and why none, said once (a limit with verbose=y, objects missing as a
/// warning): it holds for every dump of this JVM.
fn left_out(ctx: &Context, told: &AtomicBool, what: &str, held: Result<usize, Skipped>) -> usize {
    held.unwrap_or_else(|why| {
        if !told.swap(true, Ordering::Relaxed) {
            match why {
                Skipped::Limit(why) => {
                    crate::log::verbose(ctx.options.verbose, &format!("\nHPROF: heap dumps leave out {what}: {why}\n"))
                }
                Skipped::Missing(why) => crate::log::warning(&format!("heap dumps leave out {what}: {why}")),
            }
        }
        0
    })
}

/// Why a walk stopped short.
enum WalkFailure {
    /// Object addresses failed a check: the walk is to be made again with tags.
    Addresses(String),
    Other(String),
}

impl DumpSession<'_> {
    /// One walk of the heap into `sink`.
    fn walk(
        &mut self,
        side_lengths: &mut FxHashMap<u64, u32>,
        sink: &mut dyn HeapSink,
        late: &mut LateObjects,
    ) -> io::Result<Result<Walked, WalkFailure>> {
        let started = Instant::now();
        let identify = Identifier::new(&self.plan, self.ids, &self.naming);
        let mut walk = Walk::new(&self.plan, &self.threads, identify, &self.naming, side_lengths, sink, late);
        let outcome = walk.run(self.vm.env);
        if let Some(e) = walk.error.take() {
            return Err(e);
        }
        if let Some(why) = walk.failed.take() {
            return Ok(Err(WalkFailure::Addresses(why)));
        }
        let millis = started.elapsed().as_millis();
        Ok(outcome.map_err(WalkFailure::Other).map(|()| Walked {
            stats: walk.stats,
            emitted: std::mem::take(&mut walk.emitted),
            seen_frames: std::mem::take(&mut walk.seen_frames),
            thread_objects: std::mem::take(&mut walk.thread_objects),
            millis,
        }))
    }
}

/// A finished walk, with what the records after it need.
struct WalkedInto<S> {
    sink: S,
    walked: Walked,
    late: LateObjects,
    side_lengths: FxHashMap<u64, u32>,
}

/// Walks the heap into a sink from `new_sink`, named as `naming` says; if object addresses fail a check,
/// into a fresh sink again with tags (`new_sink` gets the abandoned one back), and `naming` says why.
impl DumpSession<'_> {
    fn walk_into<S: HeapSink>(
        &mut self,
        mut new_sink: impl FnMut(Option<S>) -> Result<S, String>,
    ) -> Result<WalkedInto<S>, String> {
        let env = self.vm.env;
        let mut sink = new_sink(None)?;
        loop {
            let mut side_lengths = FxHashMap::default();
            let mut late = LateObjects::default();
            if let Some(named) = &self.ids.named {
                match self.naming.addresses() {
                    // java.lang.Class keeps its tag where class words in the headers cannot tell class objects.
                    Some(a) => {
                        named.untag(env, if a.heap().class_word.is_some() { 0 } else { self.plan.class_class_id() })
                    }
                    // After a failed check: tags again.
                    None => named.retag(env),
                }
            }
            match self.walk(&mut side_lengths, &mut sink, &mut late).map_err(spool_error)? {
                Ok(walked) => return Ok(WalkedInto { sink, walked, late, side_lengths }),
                Err(WalkFailure::Addresses(why)) if self.naming.addresses().is_some() => {
                    let why = format!("object addresses failed a check: {why}");
                    crate::log::warning(&format!("heap dump: {why}; the heap is walked again, with tags"));
                    self.naming = Naming::Tags(why);
                    sink = new_sink(Some(sink))?;
                }
                Err(WalkFailure::Addresses(why) | WalkFailure::Other(why)) => return Err(why),
            }
        }
    }
}

/// A walk's records, all written.
struct Completed<S> {
    sink: S,
    walked: Walked,
    /// Values of late objects that could not be placed.
    unplaced: u64,
}

impl<S> Completed<S> {
    /// The report of the dump, but for its bytes (known once the sink is finished).
    fn report(&self, naming: &Naming) -> DumpReport {
        DumpReport {
            stats: self.walked.stats,
            late_unplaced: self.unplaced,
            walk_ms: self.walked.millis,
            naming: naming.to_string(),
            ..Default::default()
        }
    }
}

/// After the walk, in either format and in this order: the classes of the objects the plan did not know
/// are looked up (JVMTI and JNI may be called again), and `late_classes` is told how many the plan had
/// before (the binary dump writes the new ones' field names); the threads' traces are settled against
/// what the walk saw and written to the profile (before the dump, which names them); then the records
/// still missing are written ([`complete`]).
impl DumpSession<'_> {
    fn finish_walk<S: HeapSink>(
        &mut self,
        into: WalkedInto<S>,
        late_classes: impl FnOnce(&mut S, &ClassPlan, usize) -> Result<(), String>,
    ) -> Result<Completed<S>, String> {
        let DumpVm { ctx, jni, env } = self.vm;
        let WalkedInto { mut sink, mut walked, late, side_lengths } = into;
        let plan = &mut self.plan;
        let planned = plan.len();
        let resolved = late.resolve(ctx, jni, env, plan, self.ids);
        late_classes(&mut sink, plan, planned)?;
        let traces = self.threads.settle_traces(ctx, jni, &walked.seen_frames);
        ctx.reports().traces(traces.values().copied());
        let unplaced =
            complete(plan, &late, &resolved, &side_lengths, &traces, &mut walked, &mut sink).map_err(spool_error)?;
        Ok(Completed { sink, walked, unplaced })
    }
}

/// For tests of the dumps made again: `HPROF_HEAP_DUMP_TEST_UNPLACED=n` makes the first `n` dump attempts of
/// the JVM report one value they could not place.
fn test_unplaced() -> u64 {
    static LEFT: std::sync::OnceLock<std::sync::atomic::AtomicU64> = std::sync::OnceLock::new();
    let left = LEFT.get_or_init(|| {
        let n = std::env::var("HPROF_HEAP_DUMP_TEST_UNPLACED").ok().and_then(|v| v.parse().ok()).unwrap_or(0);
        std::sync::atomic::AtomicU64::new(n)
    });
    left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1)).map_or(0, |_| 1)
}

/// After the walk: the thread objects, the late objects and the CLASS DUMPs not yet written.
fn complete(
    plan: &ClassPlan,
    late: &LateObjects,
    resolved: &Resolved,
    side_lengths: &FxHashMap<u64, u32>,
    traces: &FxHashMap<u32, u32>,
    walked: &mut Walked,
    sink: &mut dyn HeapSink,
) -> io::Result<u64> {
    for &(id, thread) in &walked.thread_objects {
        let trace = traces.get(&thread).copied().unwrap_or(hprof_format::serial_base::TRACE);
        sink.root(&Root::ThreadObject { id, thread, trace })?;
    }
    let (written, unplaced) = late.write(resolved, plan, side_lengths, sink)?;
    let unplaced = unplaced + test_unplaced();
    walked.emitted.resize(plan.len(), false);
    for k in written {
        walked.emitted[k as usize] = true;
    }
    let mut values = ClassValues::default();
    for (k, class) in plan.classes.iter().enumerate() {
        if !walked.emitted[k] {
            values.reset(class);
            sink.class_dump(k as u32, class, &values)?;
        }
    }
    Ok(unplaced)
}

impl DumpSession<'_> {
    fn binary_dump(&mut self) -> Result<DumpReport, String> {
        let (ctx, files, completeness) = (self.vm.ctx, self.files, self.completeness);
        let plan = &self.plan;
        let closed = || format!("the heap dump could not be written to {}", ctx.output.description());
        // The field names' STRING records, before any segment; the object layout's once per file.
        ctx.output.empty_trace();
        if let Some(note) = layout_note() {
            ctx.output.string_ids([note.text().as_str()]).ok_or_else(closed)?;
        }
        let mut names = FieldNames::default();
        names.add(&ctx.output, plan, 0..plan.len()).ok_or_else(closed)?;
        // The threads' traces too: usually nothing is then left to write before the dump after its walk.
        let mut traces: Vec<u32> = self.threads.traces().collect();
        traces.sort_unstable();
        ctx.reports().traces(traces);
        let mut lent = match ctx.options.net {
            None => LentProfile::lend(&ctx.output, Some(ctx.options.output_file())),
            Some(_) => None,
        };
        let in_place = lent.is_some() && !files.spool_next.load(Ordering::Relaxed);
        let target = match lent.as_mut() {
            Some(lent) if in_place => Target::Profile(lent),
            Some(lent) => Target::Aside(lent),
            None => Target::Socket,
        };
        // Whatever happens in there, the profile's file must be given back: a panic becomes a failed dump.
        let dumped =
            guard(|| self.binary_walk(names, target), Err("the heap dump stopped on an internal error".into()));
        let discard = |report: &DumpReport| completeness == Completeness::WholeOrNothing && report.unplaced() > 0;
        let Some(lent) = lent else {
            let (spool, mut report, _) = dumped?;
            if discard(&report) {
                report.discarded = true;
                return Ok(report);
            }
            report.placed = "spooled".into();
            let len = spool.written();
            let records = spool.into_file().map_err(spool_error)?;
            return if ctx.output.spooled_heap_dump(&records, len) { Ok(report) } else { Err(closed()) };
        };
        let dumped = dumped.and_then(|(spool, report, late_names)| match in_place {
            true => spool.into_file().map(|_| (Dumped::InPlace, report, late_names)).map_err(spool_error),
            false => Ok((Dumped::Spooled(spool), report, late_names)),
        });
        let (dumped, mut report, late_names) = match dumped {
            Ok(done) if discard(&done.1) => {
                lent.give_back(&ctx.output, Dumped::Failed);
                let mut report = done.1;
                report.discarded = true;
                return Ok(report);
            }
            Ok(done) => done,
            Err(e) => {
                lent.give_back(&ctx.output, Dumped::Failed);
                return Err(e);
            }
        };
        let held = lent.give_back(&ctx.output, dumped).ok_or_else(closed)?;
        // Names of classes met late are written once; other records written meanwhile (threads that
        // start, stacks that change) are likely to come again.
        files.spool_next.store(held > late_names, Ordering::Relaxed);
        report.placed = match (in_place, held) {
            (true, 0) => "written in place".into(),
            (true, _) => format!("written in place, moved behind {held} bytes written meanwhile"),
            (false, _) => format!("spooled ({held} bytes written meanwhile)"),
        };
        if ctx.output.heap_dump_end() { Ok(report) } else { Err(closed()) }
    }
}

/// Where a binary dump's walk writes.
enum Target<'a> {
    /// Into the lent profile.
    Profile(&'a mut LentProfile),
    /// Into a spool, the profile lent meanwhile.
    Aside(&'a mut LentProfile),
    /// Into a spool (the profile is a socket).
    Socket,
}

/// The walk of a binary dump and the records after it, spooled (into the profile's file, in place).
/// Returns the spool, the report and the bytes of the names of classes met late.
impl DumpSession<'_> {
    fn binary_walk(&mut self, names: FieldNames, mut target: Target<'_>) -> Result<(Spool, DumpReport, usize), String> {
        let ctx = self.vm.ctx;
        let closed = || format!("the heap dump could not be written to {}", ctx.output.description());
        let mut names = Some(names);
        let new_sink = |old: Option<BinarySink<Spool>>| -> Result<BinarySink<Spool>, String> {
            // An abandoned sink is dropped (its writes finished) before the file is reused.
            let names = old.map(|s| s.names).or_else(|| names.take()).ok_or_else(closed)?;
            let spool = match &mut target {
                Target::Profile(lent) => lent.spool_in_place().map_err(spool_error)?,
                Target::Aside(lent) => lent.spool_aside().map_err(spool_error)?,
                Target::Socket => open_spool(ctx)?,
            };
            Ok(BinarySink::new(spool, names))
        };
        let walked = self.walk_into(new_sink)?;
        let mut late_names = None;
        let write_names = |sink: &mut BinarySink<Spool>, plan: &ClassPlan, planned: usize| {
            let before = ctx.output.held_since_lent().ok_or_else(closed)?;
            // Classes added after the walk, and those laid out again (a late class's superclass, say).
            let added = (0..plan.len()).filter(|&k| k >= planned || plan.relaid.contains(&(k as u32)));
            sink.names.add(&ctx.output, plan, added).ok_or_else(closed)?;
            late_names = Some(ctx.output.held_since_lent().ok_or_else(closed)? - before);
            Ok(())
        };
        let completed = self.finish_walk(walked, write_names)?;
        let late_names = late_names.ok_or_else(closed)?;
        let report = completed.report(&self.naming);
        let spool = completed.sink.finish().map_err(spool_error)?;
        let report = DumpReport { bytes: spool.written(), ..report };
        Ok((spool, report, late_names))
    }
}

fn open_spool(ctx: &Context) -> Result<Spool, String> {
    let near = ctx.options.net.is_none().then(|| ctx.options.output_file());
    Spool::open(near.as_deref()).map_err(|e| format!("cannot create the heap dump spool file: {e}"))
}

fn spool_error(e: io::Error) -> String {
    format!("cannot write the heap dump spool file: {e}")
}

impl DumpSession<'_> {
    fn text_dump(&mut self) -> Result<DumpReport, String> {
        let (ctx, completeness) = (self.vm.ctx, self.completeness);
        let new_sink = |_: Option<TextSink<Spool>>| Ok(TextSink::new(open_spool(ctx)?));
        let walked = self.walk_into(new_sink)?;
        let completed = self.finish_walk(walked, |_, _, _| Ok(()))?;
        let (stats, unplaced) = (completed.walked.stats, completed.unplaced);
        let report = completed.report(&self.naming);
        let (objects, bytes) = (completed.sink.objects, completed.sink.bytes);
        let spool = completed.sink.finish();
        let spooled = spool.written();
        if completeness == Completeness::WholeOrNothing && stats.mismatches + unplaced > 0 {
            return Ok(DumpReport { stats, late_unplaced: unplaced, discarded: true, ..Default::default() });
        }
        let records = spool.into_file().map_err(spool_error)?;
        ctx.output.text_heap_dump(objects, bytes, &records, spooled);
        Ok(DumpReport { bytes: spooled, ..report })
    }
}
