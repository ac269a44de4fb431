//! Safe wrappers over JVMTI and JNI.
//!
//! Every call into the JVM goes through [`Jvmti`], [`Jni`] or [`Vm`]: each returns a `Result` carrying the
//! JVMTI/JNI error code, frees JVMTI-allocated memory, and turns C strings into Rust ones. The modules
//! follow the function categories of the JVMTI specification.
//!
//! [`hub`] is an event hub a library builds over its JVMTI environment: every JVMTI event, with all its
//! arguments, delivered to the modules that subscribed to it, enabled and disabled at run time with counts
//! per subscriber, and the JVMTI capabilities derived from the subscriptions. The events come from one table
//! (`events.rs`) that generates [`Event`], [`EventHandler`] and the trampolines.
//!
//! The handles are plain pointers and `Copy`. A JVMTI environment may be used from any thread attached to
//! the VM; a `Jni` handle only on the thread it belongs to (the type system does not enforce the latter, as
//! JNI handles arrive in callbacks on the right thread anyway).

// JNI handles (jobject, jclass, jthread…) are opaque references that the JVM resolves, not pointers this crate
// dereferences; marking every wrapper `unsafe` for taking one would make the whole API unsafe for no gain.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

mod capabilities;
mod classes;
mod env;
mod error;
mod events;
mod exports;
mod extension_events;
#[cfg(test)]
mod fake_env;
mod heap;
pub mod heap_walk;
pub mod hub;
mod instrument;
mod jni;
pub mod jvm_sleep;
mod monitors;
pub mod panic_guard;
pub mod sampler_priming;
mod stack;
mod threads;
mod vm;

pub use capabilities::{CapabilityFlag, capability_names, no_capabilities};
pub use classes::{FieldInfo, LineTable, MethodName};
pub use env::{Jvmti, JvmtiVersion};
pub use error::{JniError, JvmtiError, Result};
pub use events::{
    ClassFileLoad, ClassFileLoadHookArgs, CompiledMethodLoadArgs, Event, EventArg, EventHandler, ExceptionArgs,
    ExceptionCatchArgs, FieldAccessArgs, FieldModificationArgs, MethodExitArgs, NativeMethodBindArgs,
    SampledObjectAllocArgs, VmObjectAllocArgs, class_file_bytes, event_callbacks, event_str,
};
pub use exports::AsyncGetCallTrace;
pub use extension_events::ThreadExtensionCallback;
pub use heap::HeapCallbacks;
pub use hub::{EventHost, EventHub, EventHubBuilder, HubError, Interest, Need, SubscriberId, Subscription};
pub use jni::Jni;
pub use monitors::{MonitorUsage, RawMonitor, RawMonitorGuard};
pub use stack::StackInfo;
pub use threads::{ThreadGroupInfo, ThreadInfo, ThreadState};
pub use vm::Vm;

/// The raw bindings, for callback signatures and structures the wrappers pass through.
pub use jvmti_sys as sys;
