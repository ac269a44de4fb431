//! The profiling capabilities. Each is a [`Capability`] that subscribes to the JVMTI events it needs and
//! writes its own section of a dump; `build` picks them from the options.

pub mod alloc_sites;
pub mod cpu_samples;
pub mod cpu_times;
pub mod flat_profile;
pub mod heap_dump;
pub mod monitors;

use crate::context::Context;
use crate::continuous::{self, WindowSource};
use crate::hub::Capability;
use crate::options::{CpuMode, Options};
use crate::sampling;
use jvmti::EventHandler;

/// A capability chosen for this run, as the agent sees it and as the event hub does. Capabilities live as
/// long as the process (the hub's dispatch reads them without a lock), so they are leaked.
pub struct Registered {
    pub capability: &'static dyn Capability,
    pub handler: &'static dyn EventHandler<Context>,
}

impl Registered {
    fn new<T: Capability + 'static>(capability: T) -> Registered {
        Self::of(Box::leak(Box::new(capability)))
    }

    fn of<T: Capability + 'static>(capability: &'static T) -> Registered {
        Registered { capability, handler: capability }
    }
}

pub fn build(options: &Options) -> Result<Vec<Registered>, String> {
    // A session after an earlier one (hprof attach): the engine is still installed, stopped.
    if let Some(engine) = sampling::installed() {
        engine.begin_session();
    }
    let mut capabilities = Vec::new();
    // The profile types uploaded every window (otlp=, pyroscope=), one per capability: cpu, alloc, lock.
    let mut windows: Vec<Box<dyn WindowSource>> = Vec::new();
    let mut lock_window = None;
    if options.monitor {
        let monitors: &'static monitors::Monitors = Box::leak(Box::new(monitors::Monitors::new(options)));
        capabilities.push(Registered::of(monitors));
        lock_window = Some(Box::new(continuous::Lock(monitors)) as Box<dyn WindowSource>);
    }
    if options.heap_dump {
        capabilities.push(Registered::new(heap_dump::HeapDump::new()));
    }
    if options.alloc_sites {
        let sites: &'static alloc_sites::AllocSites = Box::leak(Box::new(alloc_sites::AllocSites::new(options)));
        if options.alloc_probe {
            alloc_sites::probe::install(sites);
        }
        capabilities.push(Registered::of(sites));
        windows.push(Box::new(continuous::Alloc(sites)));
    }
    if options.cpu == Some(CpuMode::Samples) {
        let cpu = cpu_samples::CpuSamples::new(options)?;
        capabilities.push(Registered::new(cpu.clone()));
        windows.insert(0, Box::new(continuous::Cpu::new(cpu, options)));
    }
    windows.extend(lock_window);
    if options.flat_profile() {
        capabilities.push(Registered::new(flat_profile::FlatProfile::new(options)?));
    }
    // The consumers above installed the sampling engine if they need it; its service goes first, so that
    // clocks are armed before a consumer's own VMInit and stopped before its VMDeath.
    if let Some(engine) = sampling::installed().filter(|e| e.has_consumers()) {
        capabilities.insert(0, Registered::new(sampling::SamplingService::new(engine)));
    }
    if matches!(options.cpu, Some(CpuMode::Times | CpuMode::Old)) {
        capabilities.push(Registered::new(cpu_times::CpuTimes::new(options)));
    }
    if options.continuous.enabled() {
        // After the capabilities it uploads: its VMDeath takes the last window once their figures are in.
        capabilities.push(Registered::new(continuous::Continuous::new(options, windows)));
    }
    Ok(capabilities)
}
