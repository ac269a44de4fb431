//! Raw monitors: each JVMPI_RawMonitor is a JVMTI raw monitor with the bookkeeping JVMTI does not keep —
//! owner, entry count, threads waiting to enter and to be notified — so that the layer can send
//! RAW_MONITOR_CONTENDED_ENTER / ENTERED / EXIT and write JVMPI_MONITOR_RAW records in MONITOR_DUMP.
//!
//! A monitor whose name begins with '_' sends no contention events, as the specification says. Threads
//! that are not Java threads (an agent's GC_START handler runs on the collector's thread) may use raw
//! monitors too: ownership is kept by OS thread, and such a thread appears as a null JNIEnv.

use crate::abi::*;
use crate::layer::{Layer, deliver, layer};
use jvmti::sys;
use std::ffi::CString;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

struct RawMon {
    id: sys::jrawMonitorID,
    name: CString,
    silent: bool,
    /// pthread_self of the owner; 0 when free.
    owner: AtomicUsize,
    owner_env: AtomicUsize,
    entries: AtomicU32,
    enter_waiters: Mutex<Vec<usize>>,
    notify_waiters: Mutex<Vec<usize>>,
}

/// Live monitors (their handles), for MONITOR_DUMP.
static LIVE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

fn me() -> usize {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as usize }
}

fn my_env(l: &Layer) -> usize {
    l.current_jni().map(|j| j.raw() as usize).unwrap_or(0)
}

fn call(l: &Layer, f: impl FnOnce(*mut sys::jvmtiEnv, &sys::jvmtiInterface_1_) -> sys::jvmtiError) {
    let env = l.jvmti.raw();
    // SAFETY: the layer's live JVMTI environment; its function table is valid for the VM's life.
    let _ = f(env, unsafe { &**env });
}

/// # Safety
/// `m` must be a handle from [`create`] not yet destroyed.
unsafe fn get<'a>(m: JVMPI_RawMonitor) -> Option<&'a RawMon> {
    // SAFETY: non-null, and the caller guarantees a live handle from `create`, i.e. a leaked RawMon.
    if m.is_null() { None } else { Some(unsafe { &*m.cast::<RawMon>() }) }
}

pub fn create(name: &str) -> JVMPI_RawMonitor {
    let Some(l) = layer() else { return std::ptr::null_mut() };
    let name = CString::new(name.replace('\0', "?")).unwrap_or_default();
    let mut id: sys::jrawMonitorID = std::ptr::null_mut();
    call(l, |env, t| match t.CreateRawMonitor {
        // SAFETY: a NUL-terminated name and an out-parameter, as CreateRawMonitor takes.
        Some(f) => unsafe { f(env, name.as_ptr(), &mut id) },
        None => sys::JVMTI_ERROR_NOT_AVAILABLE,
    });
    if id.is_null() {
        return std::ptr::null_mut();
    }
    let silent = name.as_bytes().first() == Some(&b'_');
    let m = Box::into_raw(Box::new(RawMon {
        id,
        name,
        silent,
        owner: AtomicUsize::new(0),
        owner_env: AtomicUsize::new(0),
        entries: AtomicU32::new(0),
        enter_waiters: Mutex::new(Vec::new()),
        notify_waiters: Mutex::new(Vec::new()),
    }));
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).push(m as usize);
    m.cast()
}

fn send(l: &Layer, m: &RawMon, handle: JVMPI_RawMonitor, event_type: sys::jint) {
    if m.silent || !l.is_enabled(event_type) {
        return;
    }
    let mut ev = JVMPI_Event::new(event_type, my_env(l) as *mut sys::JNIEnv);
    ev.u.raw_monitor = RawMonitorEvent { name: m.name.as_ptr() as *mut _, id: handle };
    deliver(&mut ev, false);
}

pub fn enter(handle: JVMPI_RawMonitor) {
    // SAFETY: the agent passes a handle from RawMonitorCreate.
    let (Some(l), Some(m)) = (layer(), unsafe { get(handle) }) else { return };
    let me = me();
    if m.owner.load(Ordering::Acquire) == me {
        m.entries.fetch_add(1, Ordering::Relaxed);
        // SAFETY: JVMTI RawMonitorEnter (re-entered) on the monitor this handle owns.
        call(l, |env, t| t.RawMonitorEnter.map(|f| unsafe { f(env, m.id) }).unwrap_or(0));
        return;
    }
    let env = my_env(l);
    let contended = m.owner.load(Ordering::Acquire) != 0;
    if contended {
        send(l, m, handle, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTER);
    }
    m.enter_waiters.lock().unwrap_or_else(|e| e.into_inner()).push(env);
    // SAFETY: JVMTI RawMonitorEnter on the monitor this handle owns.
    call(l, |e, t| t.RawMonitorEnter.map(|f| unsafe { f(e, m.id) }).unwrap_or(0));
    remove(&m.enter_waiters, env);
    m.owner.store(me, Ordering::Release);
    m.owner_env.store(env, Ordering::Relaxed);
    m.entries.store(1, Ordering::Relaxed);
    if contended {
        send(l, m, handle, JVMPI_EVENT_RAW_MONITOR_CONTENDED_ENTERED);
    }
}

pub fn exit(handle: JVMPI_RawMonitor) {
    // SAFETY: as above.
    let (Some(l), Some(m)) = (layer(), unsafe { get(handle) }) else { return };
    if m.owner.load(Ordering::Acquire) != me() {
        return; // Not ours: JVMTI would refuse too.
    }
    let contended = if m.entries.fetch_sub(1, Ordering::Relaxed) <= 1 {
        m.owner_env.store(0, Ordering::Relaxed);
        m.owner.store(0, Ordering::Release);
        !m.enter_waiters.lock().unwrap_or_else(|e| e.into_inner()).is_empty()
    } else {
        false
    };
    // SAFETY: JVMTI RawMonitorExit on the monitor this thread owns.
    call(l, |e, t| t.RawMonitorExit.map(|f| unsafe { f(e, m.id) }).unwrap_or(0));
    if contended {
        send(l, m, handle, JVMPI_EVENT_RAW_MONITOR_CONTENDED_EXIT);
    }
}

pub fn wait(handle: JVMPI_RawMonitor, ms: sys::jlong) {
    // SAFETY: as above.
    let (Some(l), Some(m)) = (layer(), unsafe { get(handle) }) else { return };
    let me = me();
    if m.owner.load(Ordering::Acquire) != me {
        return; // HotSpot note in the specification: no wait without ownership.
    }
    let env = my_env(l);
    let entries = m.entries.load(Ordering::Relaxed);
    m.owner_env.store(0, Ordering::Relaxed);
    m.owner.store(0, Ordering::Release);
    m.notify_waiters.lock().unwrap_or_else(|e| e.into_inner()).push(env);
    // SAFETY: JVMTI RawMonitorWait on the monitor this thread owns.
    call(l, |e, t| t.RawMonitorWait.map(|f| unsafe { f(e, m.id, ms) }).unwrap_or(0));
    remove(&m.notify_waiters, env);
    m.owner.store(me, Ordering::Release);
    m.owner_env.store(env, Ordering::Relaxed);
    m.entries.store(entries, Ordering::Relaxed);
}

pub fn notify_all(handle: JVMPI_RawMonitor) {
    // SAFETY: as above.
    let (Some(l), Some(m)) = (layer(), unsafe { get(handle) }) else { return };
    // SAFETY: JVMTI RawMonitorNotifyAll on the monitor this handle owns.
    call(l, |e, t| t.RawMonitorNotifyAll.map(|f| unsafe { f(e, m.id) }).unwrap_or(0));
}

pub fn destroy(handle: JVMPI_RawMonitor) {
    let Some(l) = layer() else { return };
    if handle.is_null() {
        return;
    }
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(pos) = live.iter().position(|&h| h == handle as usize) else { return };
    live.remove(pos);
    drop(live);
    // SAFETY: the handle was made by Box::into_raw in `create` and is now out of the live list.
    let m = unsafe { Box::from_raw(handle.cast::<RawMon>()) };
    // SAFETY: JVMTI DestroyRawMonitor on the monitor this handle owned.
    call(l, |e, t| t.DestroyRawMonitor.map(|f| unsafe { f(e, m.id) }).unwrap_or(0));
}

fn remove(list: &Mutex<Vec<usize>>, env: usize) {
    let mut v = list.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = v.iter().position(|&x| x == env) {
        v.swap_remove(p);
    }
}

/// JVMPI_MONITOR_RAW records for the raw monitors in use (owned, or with threads waiting).
pub fn write_dump_records(out: &mut crate::dump_buf::DumpBuf) {
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    for &h in live.iter() {
        // SAFETY: live handles are valid until `destroy` takes them out of this list, which we hold.
        let m = unsafe { &*(h as *const RawMon) };
        let enter = m.enter_waiters.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let notify = m.notify_waiters.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let owned = m.owner.load(Ordering::Acquire) != 0;
        if !owned && enter.is_empty() && notify.is_empty() {
            continue;
        }
        out.u1(JVMPI_MONITOR_RAW);
        out.id(m.name.as_ptr() as *mut u8);
        out.id(h as *mut u8);
        out.id(m.owner_env.load(Ordering::Relaxed) as *mut u8);
        out.u4(if owned { m.entries.load(Ordering::Relaxed) } else { 0 });
        for list in [&enter, &notify] {
            out.u4(list.len() as u32);
            for &env in list {
                out.id(env as *mut u8);
            }
        }
    }
}
