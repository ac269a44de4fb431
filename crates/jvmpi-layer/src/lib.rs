//! libjvmpi.so: JVMPI, the profiler interface of JDK 1.2–5, on JDK 17 and newer, for unmodified agents.
//!
//! Loaded as `-agentpath:libjvmpi.so` beside an `-Xrun<agent>` (the layer answers the agent's
//! `GetEnv(JVMPI_VERSION_1*)`), or as `-agentpath:libjvmpi.so=/abs/libagent.so[=options]` (the layer
//! loads the agent), either with the layer's own options in front (`options`: `locals=`, `verbose=`). Each JVMPI event is made from JVMTI events (`control` says which), each function
//! from JVMTI calls (`interface`); `include/jvmpi.h` is the header agents compile against and [`abi`]
//! its Rust mirror.

// JNI handles and IDs are opaque values the JVM resolves, not pointers this crate dereferences.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

/// The ABI, from its own crate.
pub use jvmpi_sys as abi;
mod alloc;
mod alloc_thread;
mod callbacks;
mod calltrace;
mod class_load;
mod classes;
mod control;
mod dump_buf;
mod entry;
mod event_hub;
mod gc;
mod guard;
mod heap_dump;
mod heap_figures;
mod ids;
mod interface;
mod invocation;
mod jni_refs;
mod jvm_get_env;
mod layer;
mod loader;
mod local_access;
mod log;
mod monitor_dump;
mod monitors;
mod object_records;
mod options;
mod system_thread;
mod threads;
