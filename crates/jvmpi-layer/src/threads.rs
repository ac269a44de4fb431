//! Threads, named by their `JNIEnv *` as JVMPI does.
//!
//! JVMTI names threads by `jthread`; JVMPI by the thread's `JNIEnv *`, which JVMTI hands us only on the
//! thread itself. So each thread gets a record, keyed by its JNIEnv, the first time it is seen on its own
//! thread (its ThreadStart, or any event it causes), holding a global reference to its Thread object, the
//! agent's thread-local storage word, and its CPU time at its last suspension (ThreadHasRun).
//!
//! THREAD_START is sent lazily: on the thread's JVMTI ThreadStart, or, for threads that were running
//! before the agent enabled the event (main, the JDK's service threads), just before the first event the
//! thread causes — so that, as the specification promises, a thread is defined before it appears in other
//! events, and an agent that sets up its storage at THREAD_START (the specification's method counter)
//! always finds it.

use crate::abi::*;
use crate::layer::{Layer, deliver, layer};
use jvmti::{Jni, sys};
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::ffi::{CString, c_void};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicPtr, Ordering};
use std::sync::{Arc, RwLock};

pub struct ThreadRecord {
    pub env: usize,
    /// A JNI global reference to the java.lang.Thread.
    pub thread: usize,
    local_storage: AtomicPtr<c_void>,
    start_sent: AtomicBool,
    cpu_at_suspend: AtomicI64,
    /// When the current Object.wait began (nanoseconds, JVMTI GetTime), for MONITOR_WAITED.
    pub wait_began: AtomicI64,
}

impl ThreadRecord {
    pub fn jthread(&self) -> sys::jthread {
        self.thread as sys::jthread
    }
}

static THREADS: RwLock<Option<FxHashMap<usize, Arc<ThreadRecord>>>> = RwLock::new(None);

thread_local! {
    static CURRENT: RefCell<Option<Arc<ThreadRecord>>> = const { RefCell::new(None) };
}

/// The record of the thread whose JNIEnv is `env`, if it has been seen.
pub fn by_env(env: *mut sys::JNIEnv) -> Option<Arc<ThreadRecord>> {
    let cur = CURRENT.try_with(|c| c.borrow().clone()).ok().flatten();
    if let Some(r) = cur.filter(|r| r.env == env as usize) {
        return Some(r);
    }
    THREADS.read().unwrap_or_else(|e| e.into_inner()).as_ref()?.get(&(env as usize)).cloned()
}

/// The calling thread's record, made on first sight. `thread` may be null (then it is looked up).
pub fn current(layer: &Layer, jni: Jni, thread: sys::jthread) -> Option<Arc<ThreadRecord>> {
    let env = jni.raw() as usize;
    if let Some(r) = CURRENT.try_with(|c| c.borrow().clone()).ok().flatten().filter(|r| r.env == env) {
        return Some(r);
    }
    let existing = THREADS.read().unwrap_or_else(|e| e.into_inner()).as_ref().and_then(|m| m.get(&env).cloned());
    let record = match existing {
        Some(r) => r,
        None => {
            let thread = if thread.is_null() { layer.jvmti.current_thread().ok()? } else { thread };
            if thread.is_null() {
                return None;
            }
            let global = crate::jni_refs::quietly(|| jni.new_global_ref(thread));
            let r = Arc::new(ThreadRecord {
                env,
                thread: global as usize,
                local_storage: AtomicPtr::new(std::ptr::null_mut()),
                start_sent: AtomicBool::new(false),
                cpu_at_suspend: AtomicI64::new(0),
                wait_began: AtomicI64::new(0),
            });
            let mut map = THREADS.write().unwrap_or_else(|e| e.into_inner());
            map.get_or_insert_with(FxHashMap::default).entry(env).or_insert(r).clone()
        }
    };
    let _ = CURRENT.try_with(|c| *c.borrow_mut() = Some(record.clone()));
    Some(record)
}

/// Sends THREAD_START for the calling thread if the agent wants it and has not had it yet. False when the
/// thread cannot be defined yet, and so its event must not be delivered: in JVMTI's start phase the main
/// thread runs before its Thread object has a name (its class loads are replayed at VMInit).
pub fn ensure_started(layer: &Layer, jni: Jni, thread: sys::jthread) -> bool {
    if !layer.is_enabled(JVMPI_EVENT_THREAD_START) {
        return true;
    }
    let Some(r) = current(layer, jni, thread) else { return false };
    if r.start_sent.load(Ordering::Acquire) {
        return true;
    }
    if !layer.live.load(Ordering::Acquire)
        && layer.jvmti.thread_info(r.jthread()).map(|i| i.name.is_empty()).unwrap_or(true)
    {
        return false;
    }
    if !r.start_sent.swap(true, Ordering::AcqRel) {
        send_start(layer, jni, &r, false);
    }
    true
}

/// Builds and sends THREAD_START for `r` on the calling thread.
pub fn send_start(layer: &Layer, jni: Jni, r: &ThreadRecord, requested: bool) {
    let info = layer.jvmti.thread_info(r.jthread()).ok();
    let name = info.as_ref().map(|i| i.name.clone()).unwrap_or_default();
    let (group, parent) = info
        .as_ref()
        .filter(|i| !i.thread_group.is_null())
        .and_then(|i| layer.jvmti.thread_group_info(i.thread_group).ok())
        .map(|g| {
            let parent = if g.parent.is_null() {
                String::new()
            } else {
                layer.jvmti.thread_group_info(g.parent).map(|p| p.name).unwrap_or_default()
            };
            (g.name, parent)
        })
        .unwrap_or_default();
    let name = cstring(&name);
    let group = cstring(&group);
    let parent = cstring(&parent);
    let mut ev = JVMPI_Event::new(JVMPI_EVENT_THREAD_START, jni.raw());
    ev.u.thread_start = ThreadStart {
        thread_name: name.as_ptr() as *mut _,
        group_name: group.as_ptr() as *mut _,
        parent_name: parent.as_ptr() as *mut _,
        thread_id: crate::ids::id_of(layer, r.jthread()),
        thread_env_id: r.env as *mut sys::JNIEnv,
    };
    deliver(&mut ev, requested);
}

/// The thread is ending (JVMTI ThreadEnd, on the thread): THREAD_END if wanted, then the record goes.
pub fn end(layer: &Layer, jni: Jni, thread: sys::jthread) {
    if layer.is_enabled(JVMPI_EVENT_THREAD_END) && ensure_started(layer, jni, thread) {
        let mut ev = JVMPI_Event::new(JVMPI_EVENT_THREAD_END, jni.raw());
        deliver(&mut ev, false);
    }
    let env = jni.raw() as usize;
    let removed = THREADS.write().unwrap_or_else(|e| e.into_inner()).as_mut().and_then(|m| m.remove(&env));
    if let Some(r) = removed {
        crate::jni_refs::quietly(|| jni.delete_global_ref(r.jthread()));
    }
    let _ = CURRENT.try_with(|c| c.borrow_mut().take());
}

pub fn set_local_storage(env: *mut sys::JNIEnv, ptr: *mut c_void) {
    if let Some(r) = record_for(env) {
        r.local_storage.store(ptr, Ordering::Release);
    }
}

pub fn local_storage(env: *mut sys::JNIEnv) -> *mut c_void {
    record_for(env).map(|r| r.local_storage.load(Ordering::Acquire)).unwrap_or(std::ptr::null_mut())
}

/// The record for `env`, making it if `env` is the calling thread's own.
fn record_for(env: *mut sys::JNIEnv) -> Option<Arc<ThreadRecord>> {
    if let Some(r) = by_env(env) {
        return Some(r);
    }
    let l = layer()?;
    let jni = l.current_jni()?;
    (jni.raw() == env).then(|| current(l, jni, std::ptr::null_mut())).flatten()
}

pub fn thread_object_id(env: *mut sys::JNIEnv) -> jobjectID {
    match (layer(), record_for(env)) {
        (Some(l), Some(r)) => crate::ids::id_of(l, r.jthread()),
        _ => std::ptr::null_mut(),
    }
}

pub fn suspend(env: *mut sys::JNIEnv) -> Result<(), ()> {
    let (l, r) = (layer().ok_or(())?, record_for(env).ok_or(())?);
    if let Ok(t) = l.jvmti.thread_cpu_time(r.jthread()) {
        r.cpu_at_suspend.store(t, Ordering::Relaxed);
    }
    l.jvmti.suspend_thread(r.jthread()).map_err(|_| ())
}

pub fn resume(env: *mut sys::JNIEnv) -> Result<(), ()> {
    let (l, r) = (layer().ok_or(())?, record_for(env).ok_or(())?);
    l.jvmti.resume_thread(r.jthread()).map_err(|_| ())
}

/// Applies `f` to each thread of a SuspendThreadList/ResumeThreadList request, writing 0 or 1 per thread.
pub fn for_each_in_list(
    count: sys::jint,
    list: *mut *mut sys::JNIEnv,
    results: *mut sys::jint,
    f: fn(*mut sys::JNIEnv) -> Result<(), ()>,
) {
    if list.is_null() || count <= 0 {
        return;
    }
    for i in 0..count as usize {
        // SAFETY: the agent passes `count` thread IDs and room for `count` results.
        let env = unsafe { *list.add(i) };
        let rc = if f(env).is_ok() { 0 } else { 1 };
        if !results.is_null() {
            // SAFETY: as above.
            unsafe { *results.add(i) = rc };
        }
    }
}

/// JVMPI's status word from JVMTI's thread state.
pub fn status(env: *mut sys::JNIEnv) -> sys::jint {
    let (Some(l), Some(r)) = (layer(), record_for(env)) else { return JVMPI_THREAD_RUNNABLE };
    let Ok(state) = l.jvmti.thread_state(r.jthread()) else { return JVMPI_THREAD_RUNNABLE };
    let s = state.0;
    let mut out = if s & sys::JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER != 0 {
        JVMPI_THREAD_MONITOR_WAIT
    } else if s & sys::JVMTI_THREAD_STATE_WAITING != 0 {
        JVMPI_THREAD_CONDVAR_WAIT
    } else {
        JVMPI_THREAD_RUNNABLE
    };
    if s & sys::JVMTI_THREAD_STATE_SUSPENDED != 0 {
        out |= JVMPI_THREAD_SUSPENDED;
    }
    if s & sys::JVMTI_THREAD_STATE_INTERRUPTED != 0 {
        out |= JVMPI_THREAD_INTERRUPTED;
    }
    out
}

/// Whether the thread used CPU time since it was last suspended.
pub fn has_run(env: *mut sys::JNIEnv) -> bool {
    let (Some(l), Some(r)) = (layer(), record_for(env)) else { return false };
    let Ok(now) = l.jvmti.thread_cpu_time(r.jthread()) else { return false };
    now > r.cpu_at_suspend.load(Ordering::Relaxed)
}

/// Every thread seen so far.
pub fn all() -> Vec<Arc<ThreadRecord>> {
    THREADS
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map(|m| m.values().cloned().collect())
        .unwrap_or_default()
}

/// The record of a Thread object, if that thread has been seen.
pub fn by_thread_object(jni: Jni, thread: sys::jobject) -> Option<Arc<ThreadRecord>> {
    all().into_iter().find(|r| jni.is_same_object(r.jthread(), thread))
}

pub fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "?")).unwrap_or_default()
}
