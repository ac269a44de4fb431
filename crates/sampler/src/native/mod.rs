//! Native frames (`cstack=`): the C and C++ frames on top of a sample's Java frames — JNI code, libc, the
//! JVM's own runtime, GC and compiler — unwound in the SIGPROF handler by samply's `framehop` from the
//! interrupted registers, with the objects' `.eh_frame` tables and frame pointers where there are none.
//!
//! What the handler needs is prepared off the signal path: the unwinder with its module list ([`NativeUnwinder::refresh`],
//! again whenever an object is loaded), a pool of framehop's rule caches (each used by one handler at a
//! time), and where Java code lies (HotSpot's code cache: interpreter, stubs, compiled methods), where the
//! native unwind stops and AsyncGetCallTrace's frames take over, as async-profiler merges them.
//!
//! `modules` reads the loaded objects, `unwind` holds the published unwinder and walks a stack,
//! `stack` says where a thread's stack is, so that the walk reads nothing else.

mod modules;
mod stack;
mod unwind;

pub use modules::{LoadedObject, loaded_objects, loader_generation};
pub use stack::{StackBounds, current_stack_bounds};
pub use unwind::{CallStub, JavaCode, MAX_KERNEL_FRAMES, MAX_NATIVE_FRAMES, NativeUnwinder, ObjectInfo, SEGMENT_END};
