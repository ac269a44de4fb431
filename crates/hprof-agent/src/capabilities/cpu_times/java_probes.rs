//! The probes that count in Java (the default): `java.lang.HprofCpuTimes` with bytecode `enter(int)` and
//! `exit(int)` that the JIT inlines into every instrumented method, so a call costs no JNI transition
//! (source: `java/probes/java/lang/HprofCpuTimes.java`, compiled by `scripts/probe-class.sh`). Each thread
//! keeps its tree in Java arrays; a dump asks the class for a snapshot of every thread's tree (a `long[]`,
//! read over JNI on the dumping thread). Its two natives (the thread's CPU clock, its serial) run once a
//! segment and once a thread.

use super::recorder::Snapshot;
use crate::clocks::thread_cpu_ns;
use jvmti::{Jni, sys};
use std::ffi::CString;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The class file, version 61 (JDK 17 and newer).
pub const CLASS_BYTES: &[u8] = include_bytes!("HprofCpuTimes.class");

/// A global reference to the defined class, for the dumps' snapshot calls.
static CLASS: AtomicPtr<sys::_jobject> = AtomicPtr::new(std::ptr::null_mut());

/// `HprofCpuTimes.cpuNow()`: the calling thread's CPU clock, once a segment (~0.5 ms).
#[unsafe(no_mangle)]
pub extern "system" fn Java_java_lang_HprofCpuTimes_cpuNow(_env: *mut sys::JNIEnv, _class: sys::jclass) -> sys::jlong {
    crate::panic_guard::guard(|| thread_cpu_ns() as sys::jlong, 0)
}

/// `HprofCpuTimes.threadSerial()`: the calling thread's serial with thread=y, else 0; once a thread.
#[unsafe(no_mangle)]
pub extern "system" fn Java_java_lang_HprofCpuTimes_threadSerial(
    _env: *mut sys::JNIEnv,
    _class: sys::jclass,
) -> sys::jint {
    crate::panic_guard::guard(|| super::shared().map(|s| super::thread_serial(s) as sys::jint).unwrap_or(0), 0)
}

fn c(s: &str) -> CString {
    CString::new(s).expect("no NUL")
}

/// Calls each native once, binding it: the JVM binds a native on its first call, by a lookup that runs
/// Java code, which must not happen inside a probe (see `super::install_probes`).
pub fn link(jni: Jni, class: sys::jclass) -> Result<(), String> {
    let id = jni.static_method_id(class, &c("cpuNow"), &c("()J")).map_err(|e| format!("cpuNow: {e}"))?;
    jni.call_static_long(class, id, &[]).map_err(|e| format!("cpuNow: {e}"))?;
    let id = jni.static_method_id(class, &c("threadSerial"), &c("()I")).map_err(|e| format!("threadSerial: {e}"))?;
    jni.call_static_int(class, id, &[]).map_err(|e| format!("threadSerial: {e}"))?;
    Ok(())
}

/// The probes record from now on; `segment_ns` is the segments' mean length; `by_carrier` keys threads
/// by their carrier (JDK 19+, which has `Thread.currentCarrierThread`).
pub fn start(jni: Jni, class: sys::jclass, segment_ns: u64) -> Result<(), String> {
    let thread = jni.find_class(&c("java/lang/Thread")).map_err(|e| format!("Thread: {e}"))?;
    let by_carrier = jni.static_method_id(thread, &c("currentCarrierThread"), &c("()Ljava/lang/Thread;")).is_ok();
    jni.exception_clear();
    jni.delete_local_ref(thread);
    let id = jni.static_method_id(class, &c("start"), &c("(JZ)V")).map_err(|e| format!("start: {e}"))?;
    jni.call_static_void(class, id, &[sys::jvalue { j: segment_ns as i64 }, sys::jvalue { z: by_carrier as u8 }])
        .map_err(|e| format!("start: {e}"))?;
    CLASS.store(jni.new_global_ref(class), Ordering::Release);
    Ok(())
}

/// The running probes record no more (a session ended before the JVM).
pub fn stop(jni: Jni) {
    let class = CLASS.load(Ordering::Acquire);
    if class.is_null() {
        return;
    }
    if let Ok(id) = jni.static_method_id(class, &c("stop"), &c("()V")) {
        let _ = jni.call_static_void(class, id, &[]);
    }
    jni.exception_clear();
}

/// Every thread's tree as the Java side holds it now; empty without a JNI environment or when the
/// snapshot cannot be taken (its array cannot be allocated).
pub fn snapshots(jni: Option<Jni>) -> Vec<Snapshot> {
    let class = CLASS.load(Ordering::Acquire);
    let Some(jni) = jni.filter(|_| !class.is_null()) else { return Vec::new() };
    let taken = jni.with_local_frame(4, || {
        let id = jni.static_method_id(class, &c("snapshot"), &c("()[J")).map_err(|e| e.to_string())?;
        let array = jni.call_static_object(class, id, &[]).map_err(|e| e.to_string())?;
        if array.is_null() {
            return Err("no snapshot".to_string());
        }
        jni.long_array(array).map_err(|e| e.to_string())
    });
    match taken {
        Ok(flat) => decode(&flat),
        Err(e) => {
            jni.exception_clear();
            crate::log::warning(&format!("cpu=times: cannot read the threads' times: {e}"));
            Vec::new()
        }
    }
}

/// The snapshot's layout: [threads, then per thread: serial, nodes, then per node: parent, method, calls,
/// self ns]. Node i of a thread is its (i + 1)th node; 0 is the root. Cut short or out-of-order entries
/// (a node being added while read) end that thread's list.
fn decode(flat: &[i64]) -> Vec<Snapshot> {
    let mut out = Vec::new();
    let mut it = flat.iter().copied();
    let threads = it.next().unwrap_or(0).max(0);
    for _ in 0..threads {
        let (Some(serial), Some(n)) = (it.next(), it.next()) else { break };
        let mut nodes = Vec::with_capacity(n.max(0) as usize + 1);
        nodes.push((0, u32::MAX, 0, 0.0));
        for i in 0..n.max(0) {
            let (Some(parent), Some(method), Some(calls), Some(self_ns)) = (it.next(), it.next(), it.next(), it.next())
            else {
                break;
            };
            // A parent always comes before its child; anything else was read mid-update.
            let parent = if (0..=i).contains(&parent) { parent as u32 } else { 0 };
            nodes.push((parent, method as u32, calls.max(0) as u64, self_ns.max(0) as f64));
        }
        out.push(Snapshot { thread_serial: serial as u32, nodes });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_class_has_bytecode_probes_and_the_agents_natives() {
        let c = classfile::ClassFile::parse(CLASS_BYTES).unwrap();
        assert_eq!(c.name().unwrap(), "java/lang/HprofCpuTimes");
        assert!(c.major <= 61, "JDK 17 must load it: major {}", c.major);
        let method = |name: &str| {
            c.methods.iter().find(|m| c.pool.utf8(m.name_index).unwrap() == name).map(|m| m.access & 0x0100 != 0)
        };
        assert_eq!(method("enter"), Some(false), "enter is bytecode");
        assert_eq!(method("exit"), Some(false), "exit is bytecode");
        assert_eq!(method("cpuNow"), Some(true));
        assert_eq!(method("threadSerial"), Some(true));
        assert_eq!(method("snapshot"), Some(false));
    }

    #[test]
    fn snapshots_decode_per_thread_and_cut_half_written_nodes() {
        // Two threads: serial 7 with two nodes (1 under root, 2 under 1); serial 0 with a node whose parent
        // is out of order (read mid-update) and a cut-off last node.
        let flat = [2, 7, 2, 0, 5, 10, 1000, 1, 6, 3, 500, 0, 2, 9, 5, 1, 1, 0, 6];
        let s = decode(&flat);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].thread_serial, 7);
        assert_eq!(s[0].nodes[1..], [(0, 5, 10, 1000.0), (1, 6, 3, 500.0)]);
        assert_eq!(s[1].nodes[1..], [(0, 5, 1, 1.0)]);
    }
}
