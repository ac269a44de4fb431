//! Java class files with no JVM inside: read through the workspace's bounds-checked byte cursor ([`bytes`]),
//! a model that writes back byte for byte, and the rewrite cpu=times needs: a call to a static probe at
//! every method's entry and exits, and the one heap=sites' `alloc_probe=y` needs: a call with each new object.

pub mod alloc_probes;
pub mod bytes;
pub mod class_file;
pub mod code;
pub mod constant_pool;
pub mod frame_inference;
pub mod instrument;
pub mod opcodes;
pub mod relocate;
pub mod stack_map;

pub use alloc_probes::{AllocInstrumented, AllocProbes, instrument_allocations};
pub use bytes::ClassError;
pub use class_file::ClassFile;
pub use instrument::{Instrumented, MethodName, Probes, instrument};
