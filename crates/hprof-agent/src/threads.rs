//! The thread table: a serial (from 200001) and names for every Java thread the agent has seen.
//!
//! Each thread's record is also reachable through JVMTI thread-local storage, so that event callbacks on
//! that thread find it without a lookup. Records live as long as the agent: reports (monitor dumps, traces
//! with thread=y) still name threads that have ended.

use crate::ids::ObjectIds;
use hprof_format::model::ThreadStart;
use hprof_format::serial_base;
use jvmti::{Jni, Jvmti, sys};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// What the thread table needs around it: JVMTI (thread information and thread-local storage), the object
/// identifiers, and the writer, told of each thread as it starts and ends. The agent's context provides it.
pub trait ThreadEnv {
    fn jvmti(&self) -> Jvmti;
    fn ids(&self) -> &ObjectIds;
    fn thread_started(&self, thread: &ThreadStart);
    fn thread_ended(&self, serial: u32);
}

#[derive(Debug)]
pub struct ThreadRecord {
    pub serial: u32,
    pub object_id: u64,
    pub name: String,
    pub group_name: String,
    pub parent_group_name: String,
    /// The OS thread id, known once the thread has run an event on itself (0 until then).
    pub os_tid: AtomicI32,
    pub alive: AtomicBool,
}

impl ThreadRecord {
    pub fn to_model(&self) -> ThreadStart {
        ThreadStart {
            serial: self.serial,
            object_id: self.object_id,
            trace_serial: serial_base::TRACE,
            name: self.name.clone(),
            group_name: self.group_name.clone(),
            parent_group_name: self.parent_group_name.clone(),
        }
    }
}

#[derive(Debug, Default)]
pub struct ThreadTable {
    next_serial: AtomicU32,
    all: Mutex<Vec<Arc<ThreadRecord>>>,
}

/// `java.lang.Thread.tid`, looked up on first use (which needs a thread with no exception pending).
pub fn java_thread_id_field(jni: Jni) -> Option<sys::jfieldID> {
    // As an address: a field ID is a plain pointer, and never changes.
    static TID: OnceLock<Option<usize>> = OnceLock::new();
    let field = *TID.get_or_init(|| {
        let class = jni.find_class(c"java/lang/Thread").ok()?;
        let field = jni.field_id(class, c"tid", c"J").ok();
        jni.delete_local_ref(class);
        field.map(|f| f as usize)
    });
    field.map(|f| f as sys::jfieldID)
}

/// A thread's Java id (what `getId()` and `threadId()` return, and JVMTI's heap walk reports), read from
/// the field: no Java code runs, whatever a subclass overrides.
pub fn java_thread_id(jni: Jni, thread: sys::jthread) -> Option<i64> {
    let field = java_thread_id_field(jni)?;
    (!thread.is_null()).then(|| jni.long_field(thread, field))
}

/// `java.lang.Thread.eetop`: the thread's `JavaThread*` in HotSpot, 0 before it starts and after it ends.
fn eetop_field(jni: Jni) -> Option<sys::jfieldID> {
    static EETOP: OnceLock<Option<usize>> = OnceLock::new();
    let field = *EETOP.get_or_init(|| {
        let class = jni.find_class(c"java/lang/Thread").ok()?;
        let field = jni.field_id(class, c"eetop", c"J").ok();
        jni.delete_local_ref(class);
        field.map(|f| f as usize)
    });
    field.map(|f| f as sys::jfieldID)
}

/// The kernel thread id of another running thread, read from HotSpot's structures (see
/// `hotspot::java_thread`): what an agent attached late needs to aim a CPU clock at a thread that started
/// before it. `None` if the thread has ended or this is not a HotSpot JVM whose tables say where to look.
pub fn os_tid_of(_agent: &(impl ThreadEnv + ?Sized), jni: Jni, thread: sys::jthread) -> Option<i32> {
    let vm = hotspot::VmStructs::get()?;
    let eetop = eetop_field(jni)?;
    let java_thread = jni.long_field(thread, eetop) as usize;
    let tid = hotspot::java_thread::os_thread_id(vm, java_thread)?;
    // HotSpot clears eetop before it frees a JavaThread: still the same value means the reads above read
    // a live thread.
    let still = jni.long_field(thread, eetop) as usize == java_thread;
    let in_process = std::path::Path::new(&format!("/proc/self/task/{tid}")).exists();
    (still && in_process).then_some(tid)
}

/// Whether a thread is one of the agent's own: their names begin with "HPROF " (see
/// [`crate::agent_thread::spawn`], [`crate::worker`]).
pub fn is_agent_thread(name: &str) -> bool {
    name.starts_with(AGENT_THREAD_PREFIX)
}

pub const AGENT_THREAD_PREFIX: &str = "HPROF ";

pub fn current_os_tid() -> i32 {
    sampler::current_tid()
}

impl ThreadTable {
    pub fn new() -> ThreadTable {
        ThreadTable { next_serial: AtomicU32::new(serial_base::THREAD + 1), all: Mutex::new(Vec::new()) }
    }

    /// The record of `thread`, registering it (and writing THREAD START) if it is new.
    /// `on_own_thread` says whether the caller runs on that thread, so its OS id can be recorded.
    /// The agent's own threads (named "HPROF …") get none: as in HPROF, they are not part of the profile
    /// (no THREAD START, no samples, no stacks, no monitor records).
    pub fn register(
        &self,
        ctx: &(impl ThreadEnv + ?Sized),
        thread: sys::jthread,
        on_own_thread: bool,
    ) -> Option<(Arc<ThreadRecord>, bool)> {
        if let Some(existing) = self.of(ctx, thread) {
            return Some((existing, false));
        }
        let jvmti = ctx.jvmti();
        let info = jvmti.thread_info(thread).ok()?;
        if is_agent_thread(&info.name) {
            return None;
        }
        let (group_name, parent_group_name) = match jvmti.thread_group_info(info.thread_group) {
            Ok(g) => {
                let parent = if g.parent.is_null() {
                    String::new()
                } else {
                    jvmti.thread_group_info(g.parent).map(|p| p.name).unwrap_or_default()
                };
                (g.name, parent)
            }
            Err(_) => (String::new(), String::new()),
        };
        let record = Arc::new(ThreadRecord {
            serial: self.next_serial.fetch_add(1, Ordering::Relaxed),
            object_id: ctx.ids().next(),
            name: info.name,
            group_name,
            parent_group_name,
            os_tid: AtomicI32::new(if on_own_thread { current_os_tid() } else { 0 }),
            alive: AtomicBool::new(true),
        });
        {
            let mut all = self.all.lock().unwrap_or_else(|e| e.into_inner());
            // Another event may have registered the thread meanwhile; keep the first record.
            if let Some(existing) = self.of(ctx, thread) {
                return Some((existing, false));
            }
            jvmti.set_thread_local_storage(thread, Arc::as_ptr(&record) as *const _).ok()?;
            all.push(record.clone());
        }
        ctx.thread_started(&record.to_model());
        Some((record, true))
    }

    /// A record for one of the JVM's own threads (GC workers, compiler threads), which JVMTI does not show:
    /// known by its kernel id and name only, sampled for its native frames (`cstack`). Writes THREAD START.
    pub fn register_jvm_thread(&self, ctx: &(impl ThreadEnv + ?Sized), name: &str, tid: i32) -> Arc<ThreadRecord> {
        let record = Arc::new(ThreadRecord {
            serial: self.next_serial.fetch_add(1, Ordering::Relaxed),
            object_id: ctx.ids().next(),
            name: name.to_owned(),
            group_name: "system".into(),
            parent_group_name: String::new(),
            os_tid: AtomicI32::new(tid),
            alive: AtomicBool::new(true),
        });
        self.all.lock().unwrap_or_else(|e| e.into_inner()).push(record.clone());
        ctx.thread_started(&record.to_model());
        record
    }

    /// The record of a registered thread (null = the current thread).
    pub fn of(&self, ctx: &(impl ThreadEnv + ?Sized), thread: sys::jthread) -> Option<Arc<ThreadRecord>> {
        let ptr = ctx.jvmti().thread_local_storage(thread).ok()? as *const ThreadRecord;
        if ptr.is_null() {
            return None;
        }
        // SAFETY: the JVM hands back the pointer we stored, Arc::as_ptr of a record that `all` keeps (it never
        // shrinks), so the record lives for the agent's lifetime; the extra strong count is the one the returned
        // Arc gives back when dropped.
        unsafe {
            Arc::increment_strong_count(ptr);
            Some(Arc::from_raw(ptr))
        }
    }

    /// Serial of a thread, 0 if unknown.
    pub fn serial_of(&self, ctx: &(impl ThreadEnv + ?Sized), thread: sys::jthread) -> u32 {
        self.of(ctx, thread).map(|r| r.serial).unwrap_or(0)
    }

    pub fn mark_ended(&self, ctx: &(impl ThreadEnv + ?Sized), record: &ThreadRecord) {
        if record.alive.swap(false, Ordering::Relaxed) {
            ctx.thread_ended(record.serial);
        }
    }

    /// Every thread seen so far, in order of registration.
    pub fn all(&self) -> Vec<Arc<ThreadRecord>> {
        self.all.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn by_serial(&self, serial: u32) -> Option<Arc<ThreadRecord>> {
        self.all.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|r| r.serial == serial).cloned()
    }
}
