use crate::env::{Jvmti, jvmti_call};
use crate::error::Result;
use jvmti_sys as sys;
use std::ffi::CString;

/// A JVMTI raw monitor: a lock (and condition) that is safe to use in any phase and in callbacks
/// where Rust's own mutexes could deadlock against the VM.
#[derive(Debug)]
pub struct RawMonitor {
    env: Jvmti,
    raw: sys::jrawMonitorID,
}

// SAFETY: a raw monitor is made for use from any thread (that is what it is for); the environment is
// shareable (see `Jvmti`).
unsafe impl Send for RawMonitor {}
// SAFETY: as for Send.
unsafe impl Sync for RawMonitor {}

/// Holds a raw monitor until dropped.
pub struct RawMonitorGuard<'a>(&'a RawMonitor);

impl Drop for RawMonitorGuard<'_> {
    fn drop(&mut self) {
        let _ = jvmti_call!(self.0.env, RawMonitorExit, self.0.raw);
    }
}

impl RawMonitor {
    pub fn enter(&self) -> Result<RawMonitorGuard<'_>> {
        jvmti_call!(self.env, RawMonitorEnter, self.raw)?;
        Ok(RawMonitorGuard(self))
    }

    /// Waits for a notify or `millis` (0 = forever). Must hold the monitor.
    pub fn wait(&self, _guard: &RawMonitorGuard<'_>, millis: i64) -> Result<()> {
        jvmti_call!(self.env, RawMonitorWait, self.raw, millis)
    }

    pub fn notify_all(&self, _guard: &RawMonitorGuard<'_>) -> Result<()> {
        jvmti_call!(self.env, RawMonitorNotifyAll, self.raw)
    }
}

impl Drop for RawMonitor {
    fn drop(&mut self) {
        let _ = jvmti_call!(self.env, DestroyRawMonitor, self.raw);
    }
}

/// `GetObjectMonitorUsage`, with the thread arrays copied out (local references).
#[derive(Debug, Clone)]
pub struct MonitorUsage {
    pub owner: sys::jthread,
    pub entry_count: i32,
    pub waiters: Vec<sys::jthread>,
    pub notify_waiters: Vec<sys::jthread>,
}

impl Jvmti {
    pub fn create_raw_monitor(self, name: &str) -> Result<RawMonitor> {
        let cname = CString::new(name).unwrap_or_default();
        let mut raw: sys::jrawMonitorID = std::ptr::null_mut();
        jvmti_call!(self, CreateRawMonitor, cname.as_ptr(), &mut raw)?;
        Ok(RawMonitor { env: self, raw })
    }

    pub fn object_monitor_usage(self, object: sys::jobject) -> Result<MonitorUsage> {
        // SAFETY: a plain C struct of integers and pointers, for which all zeroes is valid; JVMTI fills it.
        let mut usage: sys::jvmtiMonitorUsage = unsafe { std::mem::zeroed() };
        jvmti_call!(self, GetObjectMonitorUsage, object, &mut usage)?;
        Ok(MonitorUsage {
            owner: usage.owner,
            entry_count: usage.entry_count,
            // SAFETY: the JVMTI call succeeded, so `usage.waiters` is null or this environment's allocation of as many
            // elements as it said, ours to free.
            waiters: unsafe { self.take_array(usage.waiters, usage.waiter_count) },
            // SAFETY: the JVMTI call succeeded, so `usage.notify_waiters` is null or this environment's allocation of as many
            // elements as it said, ours to free.
            notify_waiters: unsafe { self.take_array(usage.notify_waiters, usage.notify_waiter_count) },
        })
    }

    /// Monitors the thread owns (local references).
    pub fn owned_monitor_info(self, thread: sys::jthread) -> Result<Vec<sys::jobject>> {
        let mut count: sys::jint = 0;
        let mut monitors: *mut sys::jobject = std::ptr::null_mut();
        jvmti_call!(self, GetOwnedMonitorInfo, thread, &mut count, &mut monitors)?;
        // SAFETY: the JVMTI call succeeded, so `monitors` is null or this environment's allocation of as many
        // elements as it said, ours to free.
        Ok(unsafe { self.take_array(monitors, count) })
    }

    /// The monitor the thread is blocked entering or waiting on, if any.
    pub fn current_contended_monitor(self, thread: sys::jthread) -> Result<sys::jobject> {
        let mut monitor: sys::jobject = std::ptr::null_mut();
        jvmti_call!(self, GetCurrentContendedMonitor, thread, &mut monitor)?;
        Ok(monitor)
    }
}
