//! cpu=flat (and `-Xprof`): HotSpot's flat profile, removed in JDK 10, rebuilt on the sampling engine.
//!
//! Two sources of ticks, as -Xprof had one:
//! - CPU ticks from the sampling engine (each thread's own CPU clock): the interrupted program counter says
//!   where the thread was — the template interpreter, a compiled method, a stub, or outside generated code
//!   (see `code_map`, fed by DynamicCodeGenerated and CompiledMethodLoad/Unload) — and AsyncGetCallTrace's
//!   top frame says for which method (see `classify`).
//! - A wall-clock ticker of our own (`ticker`), every interval: the global summary's received ticks, GC
//!   (JVMTI's GarbageCollectionStart/Finish) and other VM operations (the VM thread on a CPU), compilation
//!   (a compiler thread on a CPU), and a "Blocked" tick for each thread that is not runnable.
//!
//! Threads blocked in native code (I/O) are runnable for the JVM but use no CPU: unlike -Xprof's, they get
//! no ticks at all. The report is cumulative and written at exit, on Ctrl-\ and on the front end's CPU
//! SAMPLES command; as -Xprof's it is text only (with `net=`, whose stream is binary, it goes to stdout).

mod classify;
mod code_map;
mod tally;
mod ticker;

use crate::context::Context;
use crate::hub::{Capability, ControlCommand, DumpReason};
use crate::log;
use crate::options::Options;
use crate::sampling::{Engine, Frames, TickBatch, TickConsumer};
use crate::threads::ThreadRecord;
use classify::{Row, TopFrame};
use code_map::{Code, CodeMap};
use hprof_format::text::flat::{self as report, FlatProfile as FlatReport, GlobalSummary, NamedRow, ThreadProfile};
use jvmti::{CompiledMethodLoadArgs, Event, EventHandler, Interest, Jni, Jvmti, sys};
use rustc_hash::FxHashMap;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Instant;
use tally::{GlobalTally, ThreadTally};

/// One Java thread's part of the profile.
struct ThreadEntry {
    name: String,
    /// A global reference for the ticker's GetThreadState (0 once the thread ended).
    thread: usize,
    started: Instant,
    ended: Option<Instant>,
    tally: ThreadTally,
}

pub struct FlatProfile {
    engine: &'static Engine,
    interval_ms: u32,
    code: Mutex<CodeMap>,
    threads: Mutex<FxHashMap<u32, ThreadEntry>>,
    global: Mutex<GlobalTally>,
    /// Between GarbageCollectionStart and Finish; shared with the ticker, which must read it before any JNI
    /// call (a JNI call waits for the GC's safepoint to end).
    gc_active: Arc<AtomicBool>,
    /// When profiling began (VMInit).
    started: OnceLock<Instant>,
    ticker: ticker::Ticker,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl FlatProfile {
    /// Installs the sampling engine if need be and registers as one of its consumers.
    pub fn new(options: &Options) -> Result<Arc<FlatProfile>, String> {
        let engine = Engine::install(options.interval_ms, options.clock).map_err(|e| format!("cpu=flat: {e}"))?;
        let me = Arc::new(FlatProfile {
            engine,
            interval_ms: options.interval_ms,
            code: Mutex::default(),
            threads: Mutex::default(),
            global: Mutex::default(),
            gc_active: Arc::default(),
            started: OnceLock::new(),
            ticker: ticker::Ticker::default(),
        });
        engine.register(me.clone());
        Ok(me)
    }

    /// The top Java frame of a tick, with what the classification needs to know of its method.
    fn top_frame(&self, ctx: &Context, jni: Option<Jni>, frames: &Frames) -> Option<TopFrame> {
        let Frames::Walked(walked) = frames else { return None };
        let method = walked.first()?.method_id as sys::jmethodID;
        let info = ctx.method_info(jni, method)?;
        Some(TopFrame {
            method: method as usize,
            native: info.native,
            class_loading: info.native && info.class_name == "java.lang.ClassLoader",
        })
    }

    fn thread_entry<'a>(
        &self,
        ctx: &Context,
        threads: &'a mut FxHashMap<u32, ThreadEntry>,
        serial: u32,
    ) -> &'a mut ThreadEntry {
        threads.entry(serial).or_insert_with(|| ThreadEntry {
            name: ctx.thread_records().iter().find(|t| t.serial == serial).map(|t| t.name.clone()).unwrap_or_default(),
            thread: 0,
            started: *self.started.get_or_init(Instant::now),
            ended: None,
            tally: ThreadTally::default(),
        })
    }

    fn method_name(ctx: &Context, jni: Option<Jni>, method: usize) -> String {
        ctx.method_info(jni, method as sys::jmethodID)
            .map(|m| format!("{}.{}", m.class_name, m.name))
            .unwrap_or_else(|| "<unknown method>".into())
    }

    fn row_name(ctx: &Context, jni: Option<Jni>, row: &Row) -> String {
        match row {
            Row::Interpreted(m) | Row::StubMethod(m) | Row::Compiled { method: m, inlined_into: None } => {
                Self::method_name(ctx, jni, *m)
            }
            // -Xprof named the compiled method; the pc-to-scope map tells which inlined method ran in it.
            Row::Compiled { method, inlined_into: Some(outer) } => {
                format!("{}  (in {})", Self::method_name(ctx, jni, *method), Self::method_name(ctx, jni, *outer))
            }
            Row::StubNamed(name) => name.to_string(),
        }
    }

    fn write_report(&self, ctx: &Context, jni: Option<Jni>, cutoff: f64) {
        self.engine.drain(ctx, jni);
        let now = Instant::now();
        // Names are resolved outside our locks: resolving may call the JVM.
        let snapshot: Vec<(u32, String, f64, ThreadTally)> = lock(&self.threads)
            .iter()
            .map(|(&serial, t)| {
                let seconds = t.ended.unwrap_or(now).saturating_duration_since(t.started).as_secs_f64();
                (serial, t.name.clone(), seconds, t.tally.clone())
            })
            .collect();
        let mut snapshot = snapshot;
        snapshot.sort_by_key(|s| s.0);
        let global = *lock(&self.global);
        let mut summary = GlobalSummary {
            seconds: self.started.get().map_or(0.0, |s| now.saturating_duration_since(*s).as_secs_f64()),
            received: global.received,
            gc: global.gc,
            compilation: global.compilation,
            vm_operations: vec![("Other VM operations".into(), global.vm_operations)],
            ..Default::default()
        };
        let mut threads = Vec::new();
        for (_, name, seconds, tally) in snapshot {
            summary.class_loader += tally.class_loader;
            summary.interpreter += tally.interpreter;
            summary.unknown += tally.unknown;
            // The agent's own threads are not the program's.
            if name.starts_with("HPROF ") {
                continue;
            }
            let mut p = ThreadProfile {
                name,
                seconds,
                blocked: tally.blocked,
                class_loader: tally.class_loader,
                interpreter: tally.interpreter,
                compilation: tally.compilation,
                unknown: tally.unknown,
                ..Default::default()
            };
            for (row, counts) in &tally.rows {
                let named = NamedRow { name: Self::row_name(ctx, jni, row), code: counts.code, native: counts.native };
                match row {
                    Row::Interpreted(_) => p.interpreted.push(named),
                    Row::Compiled { .. } => p.compiled.push(named),
                    Row::StubMethod(_) | Row::StubNamed(_) => p.stub.push(named),
                }
            }
            threads.push(p);
        }
        let profile = FlatReport { threads, global: summary };
        if ctx.output.is_binary() {
            // net=: the stream carries binary records, which have none for this profile; print it as -Xprof did.
            let stdout = std::io::stdout();
            if let Err(e) = report::write_flat_profile(&mut stdout.lock(), &profile, cutoff) {
                log::error(&format!("cpu=flat: cannot print the flat profile: {e}"));
            }
        } else {
            ctx.output.flat_profile(&profile, cutoff);
        }
        if self.engine.dropped() > 0 {
            log::warning(&format!("cpu=flat: {} ticks dropped (sample buffer full)", self.engine.dropped()));
        }
    }
}

/// The engine's ticks, classified by program counter.
impl TickConsumer for FlatProfile {
    fn frames_wanted(&self, _agent: &Context) -> usize {
        // The top frame names the method; the classification needs no more.
        1
    }

    fn on_ticks(&self, ctx: &Context, jni: Option<Jni>, ticks: &TickBatch) {
        let mut buckets = Vec::with_capacity(ticks.len());
        for tick in ticks.iter() {
            let top = self.top_frame(ctx, jni, &tick.frames);
            let pc = tick.registers.pc;
            let bucket = {
                let code = lock(&self.code);
                let found = code.find(pc).cloned();
                classify::classify(
                    found.as_ref(),
                    top,
                    |m| code.is_compiled(m),
                    found.is_none() && hotspot::loader::in_library(pc),
                )
            };
            buckets.push((tick.thread_serial, bucket));
        }
        let mut threads = lock(&self.threads);
        for (serial, bucket) in &buckets {
            self.thread_entry(ctx, &mut threads, *serial).tally.add(bucket);
        }
    }
}

/// Where code lives (compiled methods, the interpreter, stubs), so that a tick's pc can be named; and
/// whether a collection is running.
impl EventHandler<Context> for Arc<FlatProfile> {
    fn compiled_method_load(&self, ctx: &Context, _: Jvmti, args: CompiledMethodLoadArgs) {
        let CompiledMethodLoadArgs { method, code_size, code_addr, .. } = args;
        let native = ctx.jvmti.is_method_native(method).unwrap_or(false);
        lock(&self.code).add(
            code_addr as usize,
            code_size.max(0) as usize,
            Code::Compiled { method: method as usize, native },
        );
    }

    fn compiled_method_unload(&self, _: &Context, _: Jvmti, _method: sys::jmethodID, code_addr: *const c_void) {
        lock(&self.code).remove(code_addr as usize);
    }

    // `name` is the JVM's argument for this event, valid during it.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn dynamic_code_generated(
        &self,
        _: &Context,
        _: Jvmti,
        name: *const c_char,
        address: *const c_void,
        length: sys::jint,
    ) {
        // SAFETY: the event's own name argument, during the event.
        let name = unsafe { jvmti::event_str(name) }.to_string_lossy();
        let code = if name == "Interpreter" { Code::Interpreter } else { Code::Stub(name.into()) };
        lock(&self.code).add(address as usize, length.max(0) as usize, code);
    }

    fn garbage_collection_start(&self, _: &Context, _: Jvmti) {
        self.gc_active.store(true, Ordering::Relaxed);
    }

    fn garbage_collection_finish(&self, _: &Context, _: Jvmti) {
        self.gc_active.store(false, Ordering::Relaxed);
    }
}

impl Capability for Arc<FlatProfile> {
    fn name(&self) -> &'static str {
        "cpu=flat"
    }

    fn events(&self) -> Vec<Interest> {
        vec![
            Event::CompiledMethodLoad.on(),
            Event::CompiledMethodUnload.on(),
            Event::DynamicCodeGenerated.on(),
            Event::GarbageCollectionStart.on(),
            Event::GarbageCollectionFinish.on(),
        ]
    }

    fn on_vm_init(&self, ctx: &Context, jni: Jni) {
        self.started.get_or_init(Instant::now);
        // Code generated before our events were on (the interpreter, early stubs and methods).
        for event in [Event::DynamicCodeGenerated, Event::CompiledMethodLoad] {
            if let Err(e) = ctx.jvmti.generate_events(event) {
                log::warning(&format!("cpu=flat: cannot list the code generated so far ({event:?}): {e}"));
            }
        }
        if !lock(&self.code).has_interpreter() {
            log::warning(
                "cpu=flat: the JVM did not report its interpreter's code; interpreted ticks will show as unknown",
            );
        }
        let me = self.clone();
        let gc_active = self.gc_active.clone();
        self.ticker.start(ctx, jni, self.interval_ms, gc_active, move |ctx, jni, tick| me.on_wall_tick(ctx, jni, tick));
    }

    fn on_vm_death(&self, _agent: &Context, _jni: Jni) {
        self.ticker.stop();
    }

    fn on_thread_start(&self, ctx: &Context, jni: Jni, thread: sys::jthread, record: &ThreadRecord, _own: bool) {
        let global = jni.new_global_ref(thread) as usize;
        let mut threads = lock(&self.threads);
        let entry = self.thread_entry(ctx, &mut threads, record.serial);
        entry.name = record.name.clone();
        if entry.thread == 0 && entry.ended.is_none() {
            entry.thread = global;
        } else if global != 0 {
            jni.delete_global_ref(global as sys::jobject);
        }
    }

    fn on_thread_end(&self, _agent: &Context, jni: Jni, _thread: sys::jthread, record: &ThreadRecord) {
        let mut threads = lock(&self.threads);
        if let Some(entry) = threads.get_mut(&record.serial) {
            entry.ended = Some(Instant::now());
            // Under the lock: the ticker uses the reference only while holding it.
            if entry.thread != 0 {
                jni.delete_global_ref(entry.thread as sys::jobject);
                entry.thread = 0;
            }
        }
    }

    fn dump_section(&self) -> Option<(u32, &'static str)> {
        Some((41, "flat profile"))
    }

    fn write_dump(&self, ctx: &Context, jni: Option<Jni>, _reason: DumpReason) {
        self.write_report(ctx, jni, ctx.options.cutoff);
    }

    fn handle_command(&self, ctx: &Context, jni: Option<Jni>, command: &ControlCommand) -> bool {
        match command {
            ControlCommand::CpuSamples { cutoff } => {
                self.write_report(ctx, jni, *cutoff as f64);
                true
            }
            _ => false,
        }
    }
}

impl FlatProfile {
    /// One wall-clock tick of the ticker: what the VM and each thread is doing now.
    fn on_wall_tick(&self, ctx: &Context, _jni: Jni, vm: &ticker::VmNow) {
        {
            let mut g = lock(&self.global);
            g.received += 1;
            if vm.gc {
                g.gc += 1;
                return;
            }
            // As -Xprof: while a VM operation runs (mostly at a safepoint), threads are not looked at.
            if vm.vm_operation {
                g.vm_operations += 1;
                return;
            }
            if vm.compiling {
                g.compilation += 1;
            }
        }
        let mut threads = lock(&self.threads);
        for entry in threads.values_mut() {
            if entry.thread == 0 {
                continue;
            }
            // Under our lock, so that ThreadEnd cannot delete the reference meanwhile; GetThreadState waits
            // for nothing.
            if let Ok(state) = ctx.jvmti.thread_state(entry.thread as sys::jthread)
                && state.alive()
                && !state.runnable()
            {
                entry.tally.blocked += 1;
            }
        }
    }
}
