//! The agent's use of the event hub (`jvmti::hub`): the [`Capability`] trait every profiling capability
//! implements, the core's own subscription (threads, classes, dumps), and the host that lets the hub's
//! trampolines find the agent.
//!
//! A capability receives JVMTI events by implementing [`jvmti::EventHandler<Agent>`] for them and listing
//! them in [`Capability::events`]; it never touches the callback table itself. Adding an event to a
//! capability is adding one method in its module:
//!
//! ```ignore
//! impl EventHandler<Agent> for CpuTimes {
//!     // Rewrites each class as it is defined (cpu=times).
//!     fn class_file_load_hook(&self, agent: &Agent, jvmti: Jvmti, _jni: Jni, _redefined: sys::jclass,
//!         _loader: sys::jobject, name: *const c_char, _pd: sys::jobject, len: sys::jint, data: *const u8,
//!         new_len: *mut sys::jint, new_data: *mut *mut u8) {
//!         // SAFETY: the event's own arguments, during the event.
//!         let bytes = unsafe { jvmti::class_file_bytes(data, len) };
//!         if let Some(rewritten) = self.rewrite(unsafe { jvmti::event_str(name) }, bytes) {
//!             // SAFETY: the event's out-parameters.
//!             let _ = unsafe { jvmti.replace_class_file(&rewritten, new_len, new_data) };
//!         }
//!     }
//! }
//! // and in `Capability::events`: vec![Event::ClassFileLoadHook.on()]
//! ```
//!
//! The core subscribes first, so that a class or thread is in the shared tables before a capability
//! hears of it. VMInit, VMDeath, ThreadStart and ThreadEnd reach capabilities through the `on_*` hooks of
//! [`Capability`] instead, with the thread's record and after the core's bookkeeping (VMInit also replays
//! ThreadStart for the threads that predate it).

use crate::agent::{Agent, agent};
use crate::ids::main_tag;
use crate::threads::ThreadRecord;
use jvmti::{CapabilityFlag, Event, EventHandler, EventHost, EventHub, Interest, Jni, Jvmti, sys};

/// Why a dump is being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpReason {
    /// The VM is exiting (doe=y).
    Exit,
    /// Ctrl-\ / SIGQUIT (JVMTI DataDumpRequest).
    DataDumpRequest,
    /// A command from the front end over the socket.
    Command,
}

/// A request from the front end (the `net=` socket commands of HPROF's protocol, decoded). The agent core
/// handles FORCE GC, EXIT and DUMP TRACES itself; each capability handles the commands about its data and
/// ignores the rest.
#[derive(Debug, Clone, PartialEq)]
pub enum ControlCommand {
    /// DUMP HEAP (0x02): write a heap dump now.
    DumpHeap,
    /// ALLOC SITES (0x03): write the sites now. Flags: 0x1 incremental, 0x2 sort by allocated bytes,
    /// 0x4 force a GC first.
    AllocSites { flags: u16, cutoff: f32 },
    /// HEAP SUMMARY (0x04).
    HeapSummary,
    /// CPU SAMPLES (0x07): write the samples so far.
    CpuSamples { cutoff: f32 },
    /// CONTROL 0x1 / 0x2: allocation tracking on or off.
    AllocTracking(bool),
    /// CONTROL 0x3 / 0x4: CPU sampling on or off, for one thread (its object id in our output) or all.
    CpuSampling { thread_object_id: Option<u64>, on: bool },
    /// CONTROL 0x5: forget the CPU samples so far.
    ClearCpuSamples,
    /// CONTROL: forget the allocation sites so far.
    ResetSites,
}

/// One profiling capability: a subscriber to the hub (its JVMTI events arrive through its
/// [`EventHandler<Agent>`] methods) with hooks for the agent's own moments. Every method has an empty
/// default.
#[allow(unused_variables)]
pub trait Capability: EventHandler<Agent> {
    fn name(&self) -> &'static str;

    /// The JVMTI events it handles through [`EventHandler`], each on from the start unless marked
    /// `.off()` (then [`Agent::switch_events`] turns it on).
    fn events(&self) -> Vec<Interest> {
        Vec::new()
    }

    /// JVMTI capabilities it needs beyond those its events imply.
    fn jvmti_capabilities(&self) -> Vec<CapabilityFlag> {
        Vec::new()
    }

    /// After the callbacks are set, still in Agent_OnLoad: e.g. set the heap sampling interval.
    fn on_load(&self, agent: &Agent) -> Result<(), String> {
        Ok(())
    }

    /// VMInit, after the core has listed the classes and threads that predate it.
    fn on_vm_init(&self, agent: &Agent, jni: Jni) {}
    /// VMDeath, before the final dump: stop sampling, drain buffers.
    fn on_vm_death(&self, agent: &Agent, jni: Jni) {}
    /// A thread started (or, at VMInit, was found running: then `on_own_thread` is false unless it is the
    /// thread running VMInit).
    fn on_thread_start(
        &self,
        agent: &Agent,
        jni: Jni,
        thread: sys::jthread,
        record: &ThreadRecord,
        on_own_thread: bool,
    ) {
    }
    fn on_thread_end(&self, agent: &Agent, jni: Jni, thread: sys::jthread, record: &ThreadRecord) {}

    /// Its position in a dump (HPROF's order: monitors 10, heap 20, sites 30, CPU 40), and the words the
    /// verbose "Dumping …" line uses for it. `None` if it writes nothing at dump time.
    fn dump_section(&self) -> Option<(u32, &'static str)> {
        None
    }

    /// Writes its part of a dump through `agent.output`. `jni` is present when the dumping thread is a
    /// Java thread (always, except for some socket commands handled on a native thread).
    fn write_dump(&self, agent: &Agent, jni: Option<Jni>, reason: DumpReason) {}

    /// Acts on a front-end command that concerns it; returns true if it did.
    fn handle_command(&self, agent: &Agent, jni: Option<Jni>, command: &ControlCommand) -> bool {
        false
    }
}

/// The events the agent's core always handles.
pub const CORE_EVENTS: [Event; 7] = [
    Event::VmInit,
    Event::VmDeath,
    Event::ThreadStart,
    Event::ThreadEnd,
    Event::ClassPrepare,
    Event::DataDumpRequest,
    Event::ObjectFree,
];

/// The core's subscription: the shared tables and dumps.
pub struct Core;

impl EventHandler<Agent> for Core {
    fn vm_init(&self, agent: &Agent, _: Jvmti, jni: Jni, thread: sys::jthread) {
        agent.on_vm_init(jni, thread);
    }

    fn vm_death(&self, agent: &Agent, _: Jvmti, jni: Jni) {
        agent.on_vm_death(jni);
    }

    fn thread_start(&self, agent: &Agent, _: Jvmti, jni: Jni, thread: sys::jthread) {
        agent.on_thread_start(jni, thread);
    }

    fn thread_end(&self, agent: &Agent, _: Jvmti, jni: Jni, thread: sys::jthread) {
        agent.on_thread_end(jni, thread);
    }

    fn class_prepare(&self, agent: &Agent, _: Jvmti, _jni: Jni, _thread: sys::jthread, class: sys::jclass) {
        agent.classes.register(agent, class);
    }

    fn data_dump_request(&self, agent: &Agent, _: Jvmti) {
        agent.on_data_dump_request();
    }

    /// Class tags are the core's; other tags belong to capabilities that subscribe to ObjectFree.
    fn object_free(&self, agent: &Agent, _: Jvmti, tag: sys::jlong) {
        if main_tag::is_class(tag) {
            agent.classes.on_class_freed(agent, tag);
        }
    }
}

/// Lets the trampolines find the agent.
pub struct AgentHost;

impl EventHost for AgentHost {
    type Context = Agent;

    #[inline]
    fn hub() -> Option<(&'static EventHub<Agent>, &'static Agent)> {
        agent().map(|a| (a.hub(), a))
    }
}
