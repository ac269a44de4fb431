//! Raw monitors: JVMTI raw monitors, whose IDs serve as JVMPI_RawMonitor handles unchanged.
//!
//! JVMTI reports no contention on raw monitors, so JVMPI_EVENT_RAW_MONITOR_CONTENDED_* are not available.

use crate::abi::JVMPI_RawMonitor;
use crate::layer::layer;
use jvmti::sys;
use std::ffi::CString;

fn call(f: impl FnOnce(*mut sys::jvmtiEnv, &sys::jvmtiInterface_1_) -> sys::jvmtiError) {
    if let Some(l) = layer() {
        let env = l.jvmti.raw();
        // SAFETY: `env` is the layer's live JVMTI environment; its function table is valid for the VM's life.
        let table = unsafe { &**env };
        let _ = f(env, table);
    }
}

pub fn create(name: &str) -> JVMPI_RawMonitor {
    let name = CString::new(name.replace('\0', "?")).unwrap_or_default();
    let mut id: sys::jrawMonitorID = std::ptr::null_mut();
    call(|env, t| match t.CreateRawMonitor {
        // SAFETY: a NUL-terminated name and an out-parameter, as CreateRawMonitor takes.
        Some(f) => unsafe { f(env, name.as_ptr(), &mut id) },
        None => sys::JVMTI_ERROR_NOT_AVAILABLE,
    });
    id.cast()
}

macro_rules! raw_monitor_fn {
    ($name:ident, $jvmti:ident $(, $arg:ident : $ty:ty)*) => {
        pub fn $name(m: JVMPI_RawMonitor $(, $arg: $ty)*) {
            if m.is_null() {
                return;
            }
            call(|env, t| match t.$jvmti {
                // SAFETY: `m` came from RawMonitorCreate; JVMTI checks that it is a raw monitor.
                Some(f) => unsafe { f(env, m.cast() $(, $arg)*) },
                None => sys::JVMTI_ERROR_NOT_AVAILABLE,
            });
        }
    };
}

raw_monitor_fn!(enter, RawMonitorEnter);
raw_monitor_fn!(exit, RawMonitorExit);
raw_monitor_fn!(wait, RawMonitorWait, ms: sys::jlong);
raw_monitor_fn!(notify_all, RawMonitorNotifyAll);
raw_monitor_fn!(destroy, DestroyRawMonitor);
