//! Java class files with no JVM inside: a bounds-checked reader, a model that writes back byte for byte,
//! and the rewrite cpu=times needs: a call to a static probe at every method's entry and exits.

pub mod class_file;
pub mod code;
pub mod constant_pool;
pub mod frame_inference;
pub mod instrument;
pub mod opcodes;
pub mod reader;
pub mod relocate;
pub mod stack_map;

pub use class_file::ClassFile;
pub use instrument::{Instrumented, MethodName, Probes, instrument};
pub use reader::ClassError;
