//! The profiling capabilities. Each is a [`Capability`] that subscribes to the JVMTI events it needs and
//! writes its own section of a dump; `build` picks them from the options.

use crate::hub::Capability;
use crate::options::Options;

pub fn build(_options: &Options) -> Vec<Box<dyn Capability>> {
    Vec::new()
}
