//! The agent's use of the event hub (`jvmti::hub`): the [`Capability`] trait every profiling capability
//! implements, and the chain of class-file rewriters. (The core's own subscription and the host that lets
//! the hub's trampolines find the session are the agent's, in `agent.rs`.)
//!
//! A capability receives JVMTI events by implementing [`jvmti::EventHandler<Context>`] for them and listing
//! them in [`Capability::events`]; it never touches the callback table itself. Adding an event to a
//! capability is adding one method in its module:
//!
//! ```ignore
//! impl EventHandler<Context> for FlatProfile {
//!     // Where the JIT put each method, so that a sampled pc can be named.
//!     // More than four arguments: they come as one struct (`jvmti::CompiledMethodLoadArgs`).
//!     fn compiled_method_load(&self, ctx: &Context, _: Jvmti, args: CompiledMethodLoadArgs) {
//!         self.code.insert(args.code_addr as usize, args.code_size as usize, args.method);
//!     }
//! }
//! // and in `Capability::events`: vec![Event::CompiledMethodLoad.on()]
//! ```
//!
//! Capabilities that rewrite class files (cpu=times) say so with [`Capability::rewrites_classes`] and get
//! the bytes in [`Capability::on_class_file_load`]: the agent chains them in one ClassFileLoadHook
//! subscription, each rewriter seeing the bytes the one before it returned. An observer that only reads
//! class files subscribes to ClassFileLoadHook like any event (`jvmti::class_file_bytes` gives the bytes).
//!
//! The core subscribes first, so that a class or thread is in the shared tables before a capability
//! hears of it. VMInit, VMDeath, ThreadStart and ThreadEnd reach capabilities through the `on_*` hooks of
//! [`Capability`] instead, with the thread's record and after the core's bookkeeping (VMInit also replays
//! ThreadStart for the threads that predate it).

pub use crate::commands::{ControlCommand, DumpReason};
use crate::context::Context;
use crate::threads::ThreadRecord;
use jvmti::{CapabilityFlag, ClassFileLoad, ClassFileLoadHookArgs, EventHandler, Interest, Jni, Jvmti, sys};
use std::ffi::CStr;

/// One profiling capability: a subscriber to the hub (its JVMTI events arrive through its
/// [`EventHandler<Context>`] methods) with hooks for the agent's own moments. Every method has an empty
/// default.
#[allow(unused_variables)]
pub trait Capability: EventHandler<Context> {
    fn name(&self) -> &'static str;

    /// The JVMTI events it handles through [`EventHandler`], each on from the start unless marked
    /// `.off()` (then [`Context::switch_events`] turns it on).
    fn events(&self) -> Vec<Interest> {
        Vec::new()
    }

    /// JVMTI capabilities it needs beyond those its events imply.
    fn jvmti_capabilities(&self) -> Vec<CapabilityFlag> {
        Vec::new()
    }

    /// After the callbacks are set, still in Agent_OnLoad: e.g. set the heap sampling interval.
    fn on_load(&self, ctx: &Context) -> Result<(), String> {
        Ok(())
    }

    /// VMInit, after the core has listed the classes and threads that predate it.
    fn on_vm_init(&self, ctx: &Context, jni: Jni) {}
    /// VMDeath, before the final dump: stop sampling, drain buffers.
    fn on_vm_death(&self, ctx: &Context, jni: Jni) {}
    /// A thread started (or, at VMInit, was found running: then `on_own_thread` is false unless it is the
    /// thread running VMInit).
    fn on_thread_start(
        &self,
        ctx: &Context,
        jni: Jni,
        thread: sys::jthread,
        record: &ThreadRecord,
        on_own_thread: bool,
    ) {
    }
    fn on_thread_end(&self, ctx: &Context, jni: Jni, thread: sys::jthread, record: &ThreadRecord) {}

    /// Whether it rewrites classes through [`Capability::on_class_file_load`]. Rewriters are chained: each
    /// sees the bytes the one before it returned, which separate ClassFileLoadHook handlers could not.
    fn rewrites_classes(&self) -> bool {
        false
    }

    /// A class is being loaded or retransformed (ClassFileLoadHook): `data` is its class file; returning
    /// new bytes replaces it. `class_being_redefined` is null for a first load; `name` is absent for some
    /// defined-at-run-time classes. Called only if [`Capability::rewrites_classes`].
    fn on_class_file_load(
        &self,
        ctx: &Context,
        jni: Option<Jni>,
        class_being_redefined: sys::jclass,
        loader: sys::jobject,
        name: Option<&CStr>,
        data: &[u8],
    ) -> Option<Vec<u8>> {
        None
    }

    /// Its position in a dump (HPROF's order: monitors 10, heap 20, sites 30, CPU 40), and the words the
    /// verbose "Dumping …" line uses for it. `None` if it writes nothing at dump time.
    fn dump_section(&self) -> Option<(u32, &'static str)> {
        None
    }

    /// Writes its part of a dump through `ctx.output`. `jni` is present when the dumping thread is a
    /// Java thread (always, except for some socket commands handled on a native thread).
    fn write_dump(&self, ctx: &Context, jni: Option<Jni>, reason: DumpReason) {}

    /// Its report so far, for the checkpoint written every second (see [`crate::worker`]).
    fn checkpoint(&self, ctx: &Context, jni: Jni) -> Option<crate::output::Checkpoint> {
        None
    }

    /// Acts on a front-end command that concerns it; returns true if it did.
    fn handle_command(&self, ctx: &Context, jni: Option<Jni>, command: &ControlCommand) -> bool {
        false
    }
}

/// ClassFileLoadHook for the capabilities that rewrite classes, chained in their order.
pub struct ClassFileChain {
    pub rewriters: Vec<&'static dyn Capability>,
}

// The pointers are the JVM's own arguments for this event, valid during it (see EventHandler's docs).
#[allow(clippy::not_unsafe_ptr_arg_deref)]
impl EventHandler<Context> for ClassFileChain {
    fn class_file_load_hook(&self, ctx: &Context, jvmti: Jvmti, args: ClassFileLoadHookArgs) {
        let ClassFileLoadHookArgs {
            jni,
            class_being_redefined,
            loader,
            name,
            class_data_len,
            class_data,
            new_class_data_len,
            new_class_data,
            ..
        } = args;
        // SAFETY: the event's own arguments, used only during this call.
        let Some(class_file) = (unsafe {
            ClassFileLoad::from_event(jvmti, name, class_data_len, class_data, new_class_data_len, new_class_data)
        }) else {
            return;
        };
        // Early in the start phase the JVM may pass no JNIEnv.
        let jni = (!jni.raw().is_null()).then_some(jni);
        let (name, original) = (class_file.name(), class_file.bytes());
        let mut current: Option<Vec<u8>> = None;
        for c in &self.rewriters {
            let data = current.as_deref().unwrap_or(original);
            if let Some(new) = c.on_class_file_load(ctx, jni, class_being_redefined, loader, name, data) {
                current = Some(new);
            }
        }
        if let Some(bytes) = current {
            let _ = class_file.replace(&bytes);
        }
    }
}
