//! `heap=sites`: every allocation counted by class and stack trace, with live and allocated figures.
//!
//! - Exact mode (the default): `SetHeapSamplingInterval(0)` makes the JVM report every allocation through
//!   SampledObjectAlloc, including those the interpreter and compiled code make inline — which HPROF's
//!   VMObjectAlloc-only design missed. VMObjectAlloc adds what the VM allocates itself and the sampler did
//!   not report (`liveness` remembers each thread's last sampled objects to tell).
//! - Probe mode (`alloc_probe=y`, exact): probes inserted into the bytecode after every allocation call
//!   the agent (`probe`) instead of the JVM's event; VMObjectAlloc as in exact mode.
//! - Sampled mode (`alloc_interval=`): the JVM samples every N bytes on average and each sample is weighted
//!   into an unbiased estimate (`weight`).
//!
//! Per allocation: the site comes from `site_finder` (a cheap frame walk and a per-thread cache, JVMTI
//! only for a stack never seen), the counters from `site_table`, and a weak reference lets `liveness`
//! take the object off the live figures when it dies. Before a report the agent forces a GC and checks every
//! tracked object, so "live" means live.

mod liveness;
mod per_thread;
pub mod probe;
use jvmti::sampler_priming as priming;
mod report;
mod site_finder;
mod site_table;
mod size;
mod thread_cache;
mod weight;
mod window;

use crate::context::Context;
use crate::hub::{Capability, ControlCommand, DumpReason};
use crate::log;
use crate::options::Options;
use crate::output::Checkpoint;
use crate::sampling::agent_work::{self, AgentWork};
use hprof_format::model::SiteOrder;
use jvmti::{Event, EventHandler, Interest, Jni, Jvmti, SampledObjectAllocArgs, VmObjectAllocArgs, sys};
use liveness::Liveness;
use report::ReportRequest;
use site_finder::{SiteFinder, SiteQuery};
use site_table::SiteTable;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use weight::Weighting;
pub use window::WindowSite;

/// What a report is asked for: at exit, on Ctrl-\, or by the front end's ALLOC SITES command.
struct Ask {
    order: SiteOrder,
    cutoff: f64,
    /// Only sites that allocated since the last report.
    incremental: bool,
    /// Collect first, so that live figures are exact.
    force_gc: bool,
    at_exit: bool,
}

pub struct AllocSites {
    weighting: Weighting,
    /// `alloc_probe=y`: bytecode probes count the allocations, not SampledObjectAlloc.
    probes: bool,
    sites: Arc<SiteTable>,
    finder: SiteFinder,
    liveness: Arc<Liveness>,
    tracking: AtomicBool,
    /// Each site's allocated count at the last report, for incremental reports.
    last_reported: Mutex<Vec<u64>>,
    /// Each site's allocated units and bytes when the last upload window was taken (otlp=, pyroscope=).
    last_window: Mutex<Vec<(u64, u64)>>,
}

impl AllocSites {
    pub fn new(options: &Options) -> AllocSites {
        AllocSites {
            weighting: Weighting::for_interval(options.alloc_interval),
            probes: options.alloc_probe,
            sites: Arc::default(),
            finder: SiteFinder::default(),
            liveness: Arc::default(),
            tracking: AtomicBool::new(true),
            last_reported: Mutex::default(),
            last_window: Mutex::default(),
        }
    }

    fn record(&self, ctx: &Context, jni: Jni, allocation: Allocation) {
        if allocation.sampled && allocation.skip == 0 && priming::consume_priming_sample() {
            return;
        }
        self.count(ctx, jni, allocation)
    }

    /// An allocation a bytecode probe reports (`probe`), from inside the probe's native method.
    pub(crate) fn record_probed(&self, ctx: &Context, jni: Jni, object: sys::jobject, class: sys::jclass, size: i64) {
        let thread = std::ptr::null_mut();
        self.count(ctx, jni, Allocation { thread, object, class, size, sampled: true, skip: 1 })
    }

    fn count(&self, ctx: &Context, jni: Jni, allocation: Allocation) {
        let Allocation { thread, object, class, size, sampled, skip } = allocation;
        let _cost = AgentWork::begin(agent_work::TRACKING_ALLOCATIONS);
        if !self.tracking.load(Ordering::Relaxed) || class.is_null() || object.is_null() {
            return;
        }
        let words = size::words(size);
        let record_with = |t: Option<&mut per_thread::AllocThread>| {
            let mut t = t;
            if !sampled && self.liveness.already_tracked(t.as_deref_mut().map(|t| &mut t.records), jni, object, words) {
                return;
            }
            let Some(site) =
                self.finder.site_of(SiteQuery { ctx, sites: &self.sites, jni, thread, skip }, t.as_deref_mut(), class)
            else {
                self.sites.record_dropped();
                return;
            };
            if skip > 0 && probe::stop_at() == probe::Stop::Site {
                return;
            }
            let w = self.weighting.of(size::bytes(words));
            self.liveness.track(t.map(|t| &mut t.records), jni, object, &self.sites, site, w, words, sampled);
        };
        // An allocation made while another is recorded (or by an exiting thread) goes without the thread's
        // state: JVMTI for the stack, and no watching for its death.
        if per_thread::with(|t| record_with(Some(t))).is_none() {
            record_with(None);
        }
    }

    /// Every site's figures now, the threads' pending allocations included.
    fn figures(&self) -> Vec<site_table::SiteFigures> {
        self.liveness.flush_counts(&self.sites);
        self.sites.snapshot()
    }

    /// Forces a GC and checks every tracked object, so live figures are exact. Once the JVM exits a
    /// concurrent collector (ZGC, Shenandoah) has stopped its threads and a forced GC would never return —
    /// also for a report begun just before (a SIGQUIT dump racing the exit, which VMDeath then waits for):
    /// then the figures are those of the last collection; returns false.
    fn settle_live_objects(&self, ctx: &Context, jni: Option<Jni>, at_exit: bool) -> bool {
        let collect = if at_exit {
            // VMDeath: a stop-the-world collector still collects (in the VM thread); a concurrent one cannot.
            let can = !crate::collector::is_concurrent();
            if can {
                ctx.force_gc();
            }
            can
        } else {
            crate::worker::collect_garbage(ctx)
        };
        let (jni, attached) = match jni {
            Some(j) => (j, false),
            None => match ctx.vm().attach_daemon(c"HPROF liveness check") {
                Ok(j) => (j, true),
                Err(e) => {
                    log::warning(&format!("heap=sites: live figures not rechecked ({e})"));
                    return false;
                }
            },
        };
        let stats = self.liveness.check(jni, &self.sites, self.weighting, true);
        if attached {
            // SAFETY: this thread was attached above for this call only; `jni` and its local references
            // are not used past this point.
            unsafe { ctx.vm().detach() };
        }
        if std::env::var_os("HPROF_ALLOC_STATS").is_some() {
            log::verbose(
                true,
                &format!(
                    "heap=sites: {} tracked objects checked, {} dead, {} not trackable; {}",
                    stats.checked,
                    stats.dead,
                    self.liveness.untracked(),
                    self.finder.summary()
                ),
            );
            if let Some(line) = probe::summary() {
                log::verbose(true, &format!("heap=sites: {line}"));
            }
        }
        collect
    }

    fn write_report(&self, ctx: &Context, jni: Option<Jni>, ask: Ask) {
        let collected = ask.force_gc && self.settle_live_objects(ctx, jni, ask.at_exit);
        let figures = self.figures();
        let mut last = self.last_reported.lock().unwrap_or_else(|e| e.into_inner());
        let request = ReportRequest {
            order: ask.order,
            cutoff: ask.cutoff,
            since: ask.incremental.then_some(last.as_slice()),
            forced_gc: ask.force_gc,
            live_as_of_last_gc: ask.force_gc && !collected,
            weighting: self.weighting,
            dropped: self.sites.dropped(),
        };
        let report = report::build(ctx, &figures, &request);
        *last = figures.iter().map(|f| f.alloc_units).collect();
        drop(last);
        ctx.reports().sites(&report);
        ctx.output.heap_summary(
            report.total_live_bytes,
            report.total_live_instances,
            report.total_alloc_bytes,
            report.total_alloc_instances,
        );
    }

    fn set_tracking(&self, ctx: &Context, on: bool) {
        self.tracking.store(on, Ordering::Relaxed);
        if let Err(e) = ctx.switch_events(self.name(), &self.alloc_events(), on) {
            log::error(&format!("heap=sites: allocation tracking {}: {e}", if on { "on" } else { "off" }));
        }
    }

    fn alloc_events(&self) -> Vec<Event> {
        if self.probes {
            // The probes count what bytecode allocates; the VM's own allocations come as before.
            vec![Event::VmObjectAlloc]
        } else if self.weighting.is_exact() {
            vec![Event::SampledObjectAlloc, Event::VmObjectAlloc]
        } else {
            // The sampler covers the VM's own allocations statistically; counting them all would bias.
            vec![Event::SampledObjectAlloc]
        }
    }
}

/// An allocation event's arguments, whether the heap sampler (or a bytecode probe) saw the object, and
/// the frames on top of the stack that are not the allocation's (a probe's own).
#[derive(Debug, Clone, Copy)]
struct Allocation {
    thread: sys::jthread,
    object: sys::jobject,
    class: sys::jclass,
    size: i64,
    sampled: bool,
    skip: usize,
}

/// SampledObjectAlloc and VMObjectAlloc pass the same arguments; the one difference for us is whether the
/// heap sampler saw the object.
macro_rules! allocation_event {
    ($event:ident($args:ident), sampled: $sampled:literal) => {
        fn $event(&self, ctx: &Context, _: Jvmti, args: $args) {
            let $args { jni, thread, object, class, size } = args;
            self.record(ctx, jni, Allocation { thread, object, class, size, sampled: $sampled, skip: 0 });
        }
    };
}

impl EventHandler<Context> for AllocSites {
    fn garbage_collection_start(&self, _: &Context, _: Jvmti) {
        self.finder.on_gc_start();
    }

    fn garbage_collection_finish(&self, _: &Context, _: Jvmti) {
        self.liveness.on_gc_finish();
    }

    allocation_event!(sampled_object_alloc(SampledObjectAllocArgs), sampled: true);
    allocation_event!(vm_object_alloc(VmObjectAllocArgs), sampled: false);
}

impl Capability for AllocSites {
    fn name(&self) -> &'static str {
        "sites"
    }

    fn events(&self) -> Vec<Interest> {
        let mut events = self.alloc_events();
        events.extend([Event::GarbageCollectionStart, Event::GarbageCollectionFinish]);
        events.into_iter().map(Event::on).collect()
    }

    fn jvmti_capabilities(&self) -> Vec<jvmti::CapabilityFlag> {
        if self.probes {
            vec![jvmti::CapabilityFlag::CanRetransformClasses, jvmti::CapabilityFlag::CanRetransformAnyClass]
        } else {
            Vec::new()
        }
    }

    fn rewrites_classes(&self) -> bool {
        self.probes
    }

    fn on_class_file_load(
        &self,
        _ctx: &Context,
        _jni: Option<Jni>,
        _class_being_redefined: sys::jclass,
        _loader: sys::jobject,
        name: Option<&std::ffi::CStr>,
        data: &[u8],
    ) -> Option<Vec<u8>> {
        probe::rewrite(name, data)
    }

    fn on_load(&self, ctx: &Context) -> Result<(), String> {
        if self.probes {
            if ctx.load_kind() == crate::context::LoadKind::Attach {
                // The compilers read the intrinsics' list once, long before an attach.
                log::warning(
                    "heap=sites: alloc_probe=y in a running JVM: clone, Arrays.copyOf and Array.newInstance in code \
                     the JIT compiled already go uncounted; start the JVM with the agent for exact counts",
                );
            } else if let Err(e) = probe::disable_allocating_intrinsics() {
                log::warning(&format!(
                    "heap=sites: alloc_probe: cannot keep the JIT's allocating intrinsics off ({e}); clone, \
                     Arrays.copyOf and Array.newInstance in compiled code go uncounted"
                ));
            }
            return Ok(());
        }
        let interval = match self.weighting {
            Weighting::Exact => 0,
            Weighting::Sampled { interval } => interval as i32,
        };
        ctx.jvmti
            .set_heap_sampling_interval(interval)
            .map_err(|e| format!("heap=sites: SetHeapSamplingInterval({interval}) failed: {e}"))
    }

    /// VMInit runs on the main thread, the one whose sample point predates our interval.
    fn on_vm_init(&self, ctx: &Context, jni: Jni) {
        if self.probes {
            match probe::define_and_link(jni) {
                Ok(()) => probe::retransform_loaded(ctx, jni),
                Err(e) => {
                    log::error(&format!("heap=sites: alloc_probe: {e}; only the VM's own allocations are counted"))
                }
            }
        } else if !priming::prime_current_thread(jni) {
            log::verbose(ctx.options.verbose, "heap=sites: could not reset the main thread's sampler");
        }
        self.finder.init(ctx, jni);
        let (liveness, sites, weighting) = (self.liveness.clone(), self.sites.clone(), self.weighting);
        let checker = move |_: &'static Context, jni: Jni| liveness.run_checker(jni, &sites, weighting);
        if let Err(e) = crate::agent_thread::spawn(ctx, jni, "HPROF allocation liveness", checker) {
            log::error(&format!("heap=sites: {e}; live figures are checked only at reports"));
        }
    }

    fn on_vm_death(&self, _agent: &Context, _jni: Jni) {
        self.liveness.stop();
    }

    fn dump_section(&self) -> Option<(u32, &'static str)> {
        Some((30, "allocation sites"))
    }

    fn write_dump(&self, ctx: &Context, jni: Option<Jni>, reason: DumpReason) {
        let ask = Ask {
            order: SiteOrder::LiveBytes,
            cutoff: ctx.options.cutoff,
            incremental: false,
            force_gc: true,
            at_exit: reason == DumpReason::Exit,
        };
        self.write_report(ctx, jni, ask);
    }

    fn checkpoint(&self, ctx: &Context, _jni: Jni) -> Option<Checkpoint> {
        // Live figures as of the last collection: a checkpoint forces none.
        let figures = self.figures();
        let request = ReportRequest {
            order: SiteOrder::LiveBytes,
            cutoff: ctx.options.cutoff,
            since: None,
            forced_gc: false,
            live_as_of_last_gc: false,
            weighting: self.weighting,
            dropped: self.sites.dropped(),
        };
        Some(Checkpoint::Sites(report::build(ctx, &figures, &request)))
    }

    fn handle_command(&self, ctx: &Context, jni: Option<Jni>, command: &ControlCommand) -> bool {
        match *command {
            ControlCommand::AllocSites { flags, cutoff } => {
                let order = if flags & 0x2 != 0 { SiteOrder::AllocatedBytes } else { SiteOrder::LiveBytes };
                let ask = Ask {
                    order,
                    cutoff: cutoff as f64,
                    incremental: flags & 0x1 != 0,
                    force_gc: flags & 0x4 != 0,
                    at_exit: false,
                };
                self.write_report(ctx, jni, ask);
                true
            }
            ControlCommand::HeapSummary => {
                let (live_bytes, live_objects, alloc_bytes, alloc_objects) =
                    report::totals(&self.figures(), self.weighting);
                ctx.output.heap_summary(live_bytes, live_objects, alloc_bytes, alloc_objects);
                true
            }
            ControlCommand::AllocTracking(on) => {
                self.set_tracking(ctx, on);
                true
            }
            ControlCommand::ResetSites => {
                self.liveness.flush_counts(&self.sites);
                self.sites.reset_allocated();
                true
            }
            _ => false,
        }
    }
}
