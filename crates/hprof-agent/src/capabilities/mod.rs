//! The profiling capabilities. Each is a [`Capability`] that subscribes to the JVMTI events it needs and
//! writes its own section of a dump; `build` picks them from the options.

pub mod alloc_sites;
pub mod cpu_samples;
pub mod heap_dump;
pub mod monitors;

use crate::agent::Agent;
use crate::hub::Capability;
use crate::options::{CpuMode, Options};
use jvmti::EventHandler;
use std::sync::Arc;

/// A capability chosen for this run, as the agent sees it and as the event hub does. Capabilities live as
/// long as the process (the hub's dispatch reads them without a lock), so they are leaked.
pub struct Registered {
    pub capability: &'static dyn Capability,
    pub handler: &'static dyn EventHandler<Agent>,
}

fn register<T: Capability + 'static>(list: &mut Vec<Registered>, capability: T) {
    let capability: &'static T = Box::leak(Box::new(capability));
    list.push(Registered { capability, handler: capability });
}

pub fn build(options: &Options) -> Result<Vec<Registered>, String> {
    let mut capabilities = Vec::new();
    if options.monitor {
        register(&mut capabilities, monitors::Monitors::new(options));
    }
    if options.heap_dump {
        register(&mut capabilities, heap_dump::HeapDump::new());
    }
    if options.alloc_sites {
        register(&mut capabilities, alloc_sites::AllocSites::new(options));
    }
    if options.cpu == Some(CpuMode::Samples) {
        register(&mut capabilities, Arc::new(cpu_samples::CpuSamples::new(options)?));
    }
    Ok(capabilities)
}
