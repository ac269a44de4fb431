//! `heap=sites`: every allocation counted by class and stack trace, with live and allocated figures.
//!
//! - Exact mode (the default): `SetHeapSamplingInterval(0)` makes the JVM report every allocation through
//!   SampledObjectAlloc, including those the interpreter and compiled code make inline — which HPROF's
//!   VMObjectAlloc-only design missed. VMObjectAlloc adds what the VM allocates itself and the sampler did
//!   not report; the object's tag tells whether it was counted already.
//! - Sampled mode (`alloc_interval=`): the JVM samples every N bytes on average and each sample is weighted
//!   into an unbiased estimate ([`weight`]).
//!
//! Each counted object is tagged with its site and size ([`tag`]); ObjectFree takes it off the live figures.
//! Before a report the agent forces a GC and flushes the pending ObjectFree events, so "live" means live.

mod priming;
mod report;
mod site_table;
mod tag;
mod thread_cache;
mod weight;

use crate::agent::Agent;
use crate::capabilities::cpu_samples::agent_work::{self, AgentWork};
use crate::hub::{Capability, ControlCommand, DumpReason};
use crate::options::Options;
use crate::traces::RawFrame;
use hprof_format::model::SiteOrder;
use hprof_format::serial_base;
use jvmti::{Event, Jni, sys};
use report::ReportRequest;
use site_table::{SiteKey, SiteTable};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use weight::Weighting;

/// Stacks up to this depth are taken into a buffer on the stack.
const INLINE_DEPTH: usize = 64;
/// Cache keys for stacks up to this depth are built on the stack (HPROF's default depth is 4).
const INLINE_KEY_DEPTH: usize = 16;

pub struct AllocSites {
    weighting: Weighting,
    sites: SiteTable,
    tracking: AtomicBool,
    /// Each site's allocated count at the last report, for incremental reports.
    last_reported: Mutex<Vec<u64>>,
}

impl AllocSites {
    pub fn new(options: &Options) -> AllocSites {
        AllocSites {
            weighting: Weighting::for_interval(options.alloc_interval),
            sites: SiteTable::default(),
            tracking: AtomicBool::new(true),
            last_reported: Mutex::default(),
        }
    }

    fn record(
        &self,
        agent: &Agent,
        jni: Jni,
        thread: sys::jthread,
        object: sys::jobject,
        class: sys::jclass,
        size: i64,
    ) {
        if priming::consume_priming_sample() {
            return;
        }
        let _cost = AgentWork::begin(agent_work::TRACKING_ALLOCATIONS);
        if !self.tracking.load(Ordering::Relaxed) || class.is_null() || object.is_null() {
            return;
        }
        let Some(class) = agent.classes.register(agent, class) else { return };
        let size = tag::recorded_size(size);
        let Some(site) = self.site_of(agent, jni, thread, class.serial) else {
            self.sites.record_dropped();
            return;
        };
        self.sites.record_alloc(site, self.weighting.of(size));
        // Without the tag the object would never leave the live figures; a failed SetTag is rare enough
        // (wrong phase at VM death) that we accept the skew.
        let _ = agent.jvmti.set_tag(object, tag::encode(site, size));
    }

    /// The site of an allocation of `class_serial` by the current thread.
    fn site_of(&self, agent: &Agent, jni: Jni, thread: sys::jthread, class_serial: u32) -> Option<u32> {
        let depth = agent.depth();
        // Per allocation: no zeroing of buffers GetStackTrace overwrites anyway.
        let mut inline = [std::mem::MaybeUninit::<sys::jvmtiFrameInfo>::uninit(); INLINE_DEPTH];
        let mut heap = Vec::new();
        let buf: &mut [std::mem::MaybeUninit<sys::jvmtiFrameInfo>] = if depth <= INLINE_DEPTH {
            &mut inline[..depth]
        } else {
            heap.resize(depth, std::mem::MaybeUninit::uninit());
            &mut heap
        };
        // A thread whose stack cannot be taken (e.g. still starting) gets HPROF's "no trace" serial.
        // depth=0 asks for no frames: skip GetStackTrace's fixed cost (a third of a microsecond).
        let taken =
            if depth == 0 { Some(&[][..]) } else { agent.jvmti.stack_trace_into(std::ptr::null_mut(), 0, buf).ok() };
        let n = taken.map(|f| f.len());
        let frames = taken.unwrap_or(&[]);

        let compute = || {
            let trace_serial = match n {
                None => serial_base::TRACE,
                Some(_) => {
                    let raw: Vec<RawFrame> = frames.iter().map(RawFrame::from_jvmti).collect();
                    let thread_serial = agent.trace_thread_serial(agent.threads.serial_of(agent, thread));
                    agent.traces.intern_raw(agent, Some(jni), thread_serial, &raw)
                }
            };
            self.sites.intern(SiteKey { class_serial, trace_serial })
        };
        // With thread=y a trace names its thread, and virtual threads share their carrier's cache: no cache.
        if agent.options.thread {
            return compute();
        }
        let mut key_inline = [0u64; 1 + 2 * INLINE_KEY_DEPTH];
        let mut key_heap = Vec::new();
        let key_len = 1 + 2 * frames.len();
        let key: &mut [u64] = if key_len <= key_inline.len() {
            &mut key_inline[..key_len]
        } else {
            key_heap.resize(key_len, 0);
            &mut key_heap
        };
        key[0] = class_serial as u64 | if n.is_none() { 1 << 32 } else { 0 };
        for (i, f) in frames.iter().enumerate() {
            key[1 + 2 * i] = f.method as u64;
            key[2 + 2 * i] = f.location as u64;
        }
        thread_cache::site_for(key, compute)
    }

    /// Forces a GC and has the JVM deliver the ObjectFree events it holds back, so live figures are exact.
    fn settle_live_objects(&self, agent: &Agent) {
        agent.force_gc();
        // Re-enabling ObjectFree makes HotSpot post the pending events before it returns (JDK 17+).
        let _ = agent.jvmti.set_event_enabled(Event::ObjectFree, true, std::ptr::null_mut());
    }

    fn write_report(&self, agent: &Agent, order: SiteOrder, cutoff: f64, incremental: bool, force_gc: bool) {
        if force_gc {
            self.settle_live_objects(agent);
        }
        let figures = self.sites.snapshot();
        let mut last = self.last_reported.lock().unwrap_or_else(|e| e.into_inner());
        let request = ReportRequest {
            order,
            cutoff,
            since: incremental.then_some(last.as_slice()),
            forced_gc: force_gc,
            weighting: self.weighting,
            dropped: self.sites.dropped(),
        };
        let report = report::build(agent, &figures, &request);
        *last = figures.iter().map(|f| f.alloc_units).collect();
        drop(last);
        agent.output.sites(agent, &report);
        agent.output.heap_summary(
            report.total_live_bytes,
            report.total_live_instances,
            report.total_alloc_bytes,
            report.total_alloc_instances,
        );
    }

    fn set_tracking(&self, agent: &Agent, on: bool) {
        self.tracking.store(on, Ordering::Relaxed);
        for event in self.alloc_events() {
            let _ = agent.jvmti.set_event_enabled(event, on, std::ptr::null_mut());
        }
    }

    fn alloc_events(&self) -> Vec<Event> {
        if self.weighting.is_exact() {
            vec![Event::SampledObjectAlloc, Event::VmObjectAlloc]
        } else {
            // The sampler covers the VM's own allocations statistically; counting them all would bias.
            vec![Event::SampledObjectAlloc]
        }
    }
}

impl Capability for AllocSites {
    fn name(&self) -> &'static str {
        "sites"
    }

    fn events(&self) -> Vec<Event> {
        let mut events = self.alloc_events();
        events.push(Event::ObjectFree);
        events.push(Event::VmInit);
        events
    }

    fn on_load(&self, agent: &Agent) -> Result<(), String> {
        let interval = match self.weighting {
            Weighting::Exact => 0,
            Weighting::Sampled { interval } => interval as i32,
        };
        agent
            .jvmti
            .set_heap_sampling_interval(interval)
            .map_err(|e| format!("heap=sites: SetHeapSamplingInterval({interval}) failed: {e}"))
    }

    /// VMInit runs on the main thread, the one whose sample point predates our interval.
    fn on_vm_init(&self, agent: &Agent, jni: Jni) {
        if !priming::prime_current_thread(jni) {
            crate::log::verbose(agent.options.verbose, "heap=sites: could not reset the main thread's sampler");
        }
    }

    fn on_sampled_object_alloc(
        &self,
        agent: &Agent,
        jni: Jni,
        thread: sys::jthread,
        object: sys::jobject,
        class: sys::jclass,
        size: i64,
    ) {
        self.record(agent, jni, thread, object, class, size);
    }

    fn on_vm_object_alloc(
        &self,
        agent: &Agent,
        jni: Jni,
        thread: sys::jthread,
        object: sys::jobject,
        class: sys::jclass,
        size: i64,
    ) {
        // SampledObjectAlloc reports VM allocations too, and before this event: count only untagged ones.
        if matches!(agent.jvmti.tag(object), Ok(0)) {
            self.record(agent, jni, thread, object, class, size);
        }
    }

    fn on_object_free(&self, _agent: &Agent, tag: i64) {
        if let Some((site, size)) = tag::decode(tag) {
            self.sites.record_free(site, self.weighting.of(size));
        }
    }

    fn dump_section(&self) -> Option<(u32, &'static str)> {
        Some((30, "allocation sites"))
    }

    fn write_dump(&self, agent: &Agent, _jni: Option<Jni>, _reason: DumpReason) {
        self.write_report(agent, SiteOrder::LiveBytes, agent.options.cutoff, false, true);
    }

    fn handle_command(&self, agent: &Agent, _jni: Option<Jni>, command: &ControlCommand) -> bool {
        match *command {
            ControlCommand::AllocSites { flags, cutoff } => {
                let order = if flags & 0x2 != 0 { SiteOrder::AllocatedBytes } else { SiteOrder::LiveBytes };
                self.write_report(agent, order, cutoff as f64, flags & 0x1 != 0, flags & 0x4 != 0);
                true
            }
            ControlCommand::HeapSummary => {
                let (live_bytes, live_objects, alloc_bytes, alloc_objects) =
                    report::totals(&self.sites.snapshot(), self.weighting);
                agent.output.heap_summary(live_bytes, live_objects, alloc_bytes, alloc_objects);
                true
            }
            ControlCommand::AllocTracking(on) => {
                self.set_tracking(agent, on);
                true
            }
            ControlCommand::ResetSites => {
                self.sites.reset_allocated();
                true
            }
            _ => false,
        }
    }
}
