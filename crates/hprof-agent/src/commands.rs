//! What the agent is asked to do from outside a capability: why a dump is being written, and the front
//! end's commands. Plain data, so that the context, the hub and the socket reader share it without
//! depending on one another.

/// Why a dump is being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpReason {
    /// The VM is exiting (doe=y).
    Exit,
    /// Ctrl-\ / SIGQUIT (JVMTI DataDumpRequest).
    DataDumpRequest,
    /// A command from the front end over the socket.
    Command,
    /// The session ends before the JVM does (`duration=`, `hprof attach PID stop`): the last reports, with
    /// the capabilities already stopped as at exit, and the JVM runs on.
    SessionEnd,
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
