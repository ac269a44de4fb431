//! The profiling capabilities. Each is a [`Capability`] that subscribes to the JVMTI events it needs and
//! writes its own section of a dump; `build` picks them from the options.

pub mod alloc_sites;
pub mod cpu_samples;
pub mod cpu_times;
pub mod flat_profile;
pub mod heap_dump;
pub mod monitors;

use crate::hub::Capability;
use crate::options::{CpuMode, Options};
use crate::sampling;

pub fn build(options: &Options) -> Result<Vec<Box<dyn Capability>>, String> {
    let mut capabilities: Vec<Box<dyn Capability>> = Vec::new();
    if options.monitor {
        capabilities.push(Box::new(monitors::Monitors::new(options)));
    }
    if options.heap_dump {
        capabilities.push(Box::new(heap_dump::HeapDump::new()));
    }
    if options.alloc_sites {
        capabilities.push(Box::new(alloc_sites::AllocSites::new(options)));
    }
    if options.cpu == Some(CpuMode::Samples) {
        capabilities.push(Box::new(cpu_samples::CpuSamples::new(options)?));
    }
    if options.flat_profile() {
        capabilities.push(Box::new(flat_profile::FlatProfile::new(options)?));
    }
    // The consumers above installed the sampling engine if they need it; its service goes first, so that
    // clocks are armed before a consumer's own VMInit and stopped before its VMDeath.
    if let Some(engine) = sampling::installed() {
        capabilities.insert(0, Box::new(sampling::SamplingService::new(engine)));
    }
    if matches!(options.cpu, Some(CpuMode::Times | CpuMode::Old)) {
        capabilities.push(Box::new(cpu_times::CpuTimes::new(options)));
    }
    Ok(capabilities)
}
