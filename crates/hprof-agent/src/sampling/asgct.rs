//! AsyncGetCallTrace's failure codes, named.

use jvmti::sys;

/// The pseudo-frame shown for a sample the walker could not take, so that such samples are counted and
/// visible instead of silently dropped.
pub fn failure_label(code: i32) -> &'static str {
    match code {
        sys::ASGCT_NO_JAVA_FRAME => "[no Java frames]",
        sys::ASGCT_NO_CLASS_LOAD => "[class load events disabled]",
        sys::ASGCT_GC_ACTIVE => "[GC active]",
        sys::ASGCT_UNKNOWN_NOT_JAVA => "[unknown, not Java]",
        sys::ASGCT_NOT_WALKABLE_NOT_JAVA => "[not walkable, not Java]",
        sys::ASGCT_UNKNOWN_JAVA => "[unknown Java]",
        sys::ASGCT_NOT_WALKABLE_JAVA => "[not walkable Java]",
        sys::ASGCT_UNKNOWN_STATE => "[unknown thread state]",
        sys::ASGCT_THREAD_EXIT => "[thread exiting]",
        sys::ASGCT_DEOPT => "[deoptimizing]",
        sys::ASGCT_SAFEPOINT => "[at safepoint]",
        sampler::agent_work::TRACKING_ALLOCATIONS => "[hprof: tracking allocations]",
        sampler::NOT_A_JAVA_THREAD => "[not a Java thread]",
        _ => "[stack walk failed]",
    }
}
