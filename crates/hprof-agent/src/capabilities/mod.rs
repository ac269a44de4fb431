//! The profiling capabilities. Each is a [`Capability`] that subscribes to the JVMTI events it needs and
//! writes its own section of a dump; `build` picks them from the options.

pub mod monitors;

use crate::hub::Capability;
use crate::options::Options;

pub fn build(options: &Options) -> Vec<Box<dyn Capability>> {
    let mut capabilities: Vec<Box<dyn Capability>> = Vec::new();
    if options.monitor {
        capabilities.push(Box::new(monitors::Monitors::new(options)));
    }
    capabilities
}
