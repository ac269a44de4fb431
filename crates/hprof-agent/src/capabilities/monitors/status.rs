//! JVMTI thread-state bits to HPROF's status codes, in the order HPROF tested them.

use hprof_format::text::{RunState, ThreadStatus};
use jvmti::sys;

pub fn from_jvmti(state: u32) -> ThreadStatus {
    let has = |bit: u32| state & bit != 0;
    let run_state = if !has(sys::JVMTI_THREAD_STATE_ALIVE) {
        if has(sys::JVMTI_THREAD_STATE_TERMINATED) { RunState::Terminated } else { RunState::NotStarted }
    } else if has(sys::JVMTI_THREAD_STATE_SLEEPING) {
        RunState::Sleeping
    } else if has(sys::JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) {
        RunState::MonitorWait
    } else if has(sys::JVMTI_THREAD_STATE_WAITING) {
        RunState::ConditionWait
    } else if has(sys::JVMTI_THREAD_STATE_RUNNABLE) {
        RunState::Runnable
    } else {
        RunState::Unknown
    };
    ThreadStatus {
        suspended: has(sys::JVMTI_THREAD_STATE_SUSPENDED),
        interrupted: has(sys::JVMTI_THREAD_STATE_INTERRUPTED),
        in_native: has(sys::JVMTI_THREAD_STATE_IN_NATIVE),
        state: run_state,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_for_typical_states() {
        let alive = sys::JVMTI_THREAD_STATE_ALIVE;
        let code = |bits: u32| from_jvmti(bits).code();
        assert_eq!(code(sys::JVMTI_THREAD_STATE_TERMINATED), "ZO");
        assert_eq!(code(0), "NS");
        assert_eq!(code(alive | sys::JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER), "MW");
        assert_eq!(
            code(alive | sys::JVMTI_THREAD_STATE_WAITING | sys::JVMTI_THREAD_STATE_SLEEPING),
            "SL",
            "sleeping threads are also waiting; SL wins"
        );
        assert_eq!(code(alive | sys::JVMTI_THREAD_STATE_WAITING | sys::JVMTI_THREAD_STATE_IN_OBJECT_WAIT), "CW");
        assert_eq!(code(alive | sys::JVMTI_THREAD_STATE_RUNNABLE | sys::JVMTI_THREAD_STATE_IN_NATIVE), "native|R");
        assert_eq!(code(alive | sys::JVMTI_THREAD_STATE_SUSPENDED | sys::JVMTI_THREAD_STATE_INTERRUPTED), "S|intr|UN");
    }
}
