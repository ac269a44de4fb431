//! HotSpot from the inside: the structure tables every HotSpot JVM exports for debuggers
//! (`gHotSpotVMStructs`, `gHotSpotVMTypes`, `gHotSpotVMIntConstants` — what the Serviceability Agent and
//! async-profiler read), and what the agent builds on them: a walker that lists the current thread's
//! physical Java frames in tens of nanoseconds, where JVMTI's GetStackTrace takes a microsecond.
//!
//! The walker does not decode frames into methods and bytecode indexes. It identifies each frame — an
//! interpreted frame by its `Method*` and bytecode pointer, a compiled frame by its return address and the
//! nmethod's compile id — which is all a cache needs: equal identities mean equal JVMTI stack traces, so the
//! agent asks JVMTI once per distinct stack and remembers the answer (see `hprof-agent`'s allocation sites).
//!
//! [`heap`] holds every raw read of the Java heap a heap dump makes (callback wrapper words, object headers,
//! decoded field offsets, the heap's committed pieces), each checked against committed memory or made with
//! a read that cannot fault.
//!
//! Everything here reads memory of the running JVM, so every read is bounded: stack addresses must lie in
//! the current thread's stack, code addresses in a code heap. Anything unexpected ends the walk with a
//! [`WalkError`] and the caller falls back to JVMTI. Only x86-64 Linux is supported; elsewhere
//! [`Walker::new`] says so.

mod code_cache;
pub mod elf_symbols;
pub mod heap;
pub mod init_lock;
pub mod java_thread;
pub mod jni_handles;
mod layout;
pub mod loader;
pub mod object_layout;
mod per_thread;
mod structs;
mod vm_args;
mod walker;

pub use per_thread::WalkerThread;
pub use structs::{VmStructs, libjvm_symbol};
pub use vm_args::vm_input_arguments;
pub use walker::{FrameIds, WalkError, Walker};
