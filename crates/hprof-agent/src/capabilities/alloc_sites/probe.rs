//! `alloc_probe=y`: allocations counted by probes in the bytecode instead of the JVM's SampledObjectAlloc
//! event at interval 0, whose machinery alone (every allocation leaving the inline path for the runtime,
//! JNI handles, thread state switches) cost more than the rest of the agent's work per allocation.
//!
//! The `classfile` crate puts a call to `java.lang.HprofAllocs.object(Object)` after every `new`'s
//! constructor call and every `newarray`/`anewarray`, and `arrays(Object, int)` after `multianewarray`
//! (whose inner arrays are counted here). The natives record the object as the event did, one frame deeper
//! (the probe's own). What the VM allocates itself (reflection, JNI, clone, `Array.newInstance`) still
//! comes through VMObjectAlloc.
//!
//! The class is defined in the boot loader at VMInit and its natives linked before any class gets
//! probes (as cpu=times does: linking runs Java code that must not call a probe); classes loaded before
//! are retransformed then.

use super::AllocSites;
use crate::context::{Context, current};
use crate::log;
use classfile::ClassFile;
use classfile::alloc_probes::{ARRAYS_DESCRIPTOR, AllocProbes, OBJECT_DESCRIPTOR};
use classfile::class_file::Member;
use classfile::constant_pool::ConstantPool;
use jvmti::{Jni, sys};
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

pub const CLASS_NAME: &str = "java/lang/HprofAllocs";
const OBJECT: &str = "object";
const ARRAYS: &str = "arrays";

pub const PROBES: AllocProbes = AllocProbes { class: CLASS_NAME, object: OBJECT, arrays: ARRAYS };

/// What the natives reach without a `self`.
struct Probes {
    sites: &'static AllocSites,
    /// The class is defined and linked: from now on classes get probes.
    ready: AtomicBool,
    /// Allocating instructions given a probe, and allocations left without one (with the first reasons).
    probed: AtomicU64,
    skipped: AtomicU64,
    notes: Mutex<Vec<String>>,
}

static PROBES_STATE: OnceLock<Probes> = OnceLock::new();

/// Makes `sites` the target of the probes (at most one heap=sites session per JVM uses them).
pub fn install(sites: &'static AllocSites) {
    let _ = PROBES_STATE.set(Probes {
        sites,
        ready: AtomicBool::new(false),
        probed: AtomicU64::new(0),
        skipped: AtomicU64::new(0),
        notes: Mutex::default(),
    });
}

pub fn enabled() -> bool {
    PROBES_STATE.get().is_some()
}

/// The probe class: `public final class java.lang.HprofAllocs` with `public static native void
/// object(Object)` and `arrays(Object, int)`. In java.lang for the reason `cpu_times::probe_class` gives:
/// a java.base package every module reads.
pub fn class_bytes() -> Vec<u8> {
    const ACC_PUBLIC: u16 = 0x0001;
    const ACC_STATIC: u16 = 0x0008;
    const ACC_FINAL: u16 = 0x0010;
    const ACC_SUPER: u16 = 0x0020;
    const ACC_NATIVE: u16 = 0x0100;
    let mut pool = ConstantPool::new();
    let this_class = pool.intern_class(CLASS_NAME).expect("a small pool");
    let super_class = pool.intern_class("java/lang/Object").expect("a small pool");
    let methods = [(OBJECT, OBJECT_DESCRIPTOR), (ARRAYS, ARRAYS_DESCRIPTOR)]
        .iter()
        .map(|(name, descriptor)| Member {
            access: ACC_PUBLIC | ACC_STATIC | ACC_NATIVE,
            name_index: pool.intern_utf8(name).expect("a small pool"),
            descriptor_index: pool.intern_utf8(descriptor).expect("a small pool"),
            attributes: Vec::new(),
        })
        .collect();
    ClassFile {
        minor: 0,
        major: 52,
        pool,
        access: ACC_PUBLIC | ACC_FINAL | ACC_SUPER,
        this_class,
        super_class,
        interfaces: Vec::new(),
        fields: Vec::new(),
        methods,
        attributes: Vec::new(),
    }
    .write()
}

/// `java.lang.HprofAllocs.object(Object)`, found by the JVM's native lookup in the agent library.
#[unsafe(no_mangle)]
pub extern "system" fn Java_java_lang_HprofAllocs_object(
    env: *mut sys::JNIEnv,
    _class: sys::jclass,
    object: sys::jobject,
) {
    crate::panic_guard::guard(|| record(env, object, 1), ())
}

/// `java.lang.HprofAllocs.arrays(Object, int)`: a `multianewarray` array of `dimensions` dimensions.
#[unsafe(no_mangle)]
pub extern "system" fn Java_java_lang_HprofAllocs_arrays(
    env: *mut sys::JNIEnv,
    _class: sys::jclass,
    array: sys::jobject,
    dimensions: sys::jint,
) {
    crate::panic_guard::guard(|| record(env, array, dimensions.clamp(1, 255)), ())
}

/// Records `object` and, for the outer array of a `multianewarray`, the arrays inside it down to
/// `dimensions` levels (all made by the one instruction, at the one site).
fn record(env: *mut sys::JNIEnv, object: sys::jobject, dimensions: i32) {
    // The linking calls at VMInit pass null.
    if object.is_null() || env.is_null() {
        return;
    }
    let (Some(p), Some(ctx)) = (PROBES_STATE.get(), current()) else { return };
    if stop_at() == Stop::Entry {
        return;
    }
    // SAFETY: `env` is the JNIEnv the JVM passed this native method, on this thread.
    let jni = unsafe { Jni::from_raw(env) };
    record_one(p, ctx, jni, object);
    if dimensions > 1 {
        record_inner(p, ctx, jni, object, dimensions - 1);
    }
}

fn record_inner(p: &Probes, ctx: &Context, jni: Jni, array: sys::jobject, dimensions: i32) {
    for i in 0..jni.array_length(array) {
        // Each element's references (the array's, its class's) go with its frame: an array may hold many.
        let done = jni.with_local_frame(4, || {
            let Ok(inner) = jni.object_array_element(array, i) else { return true };
            if !inner.is_null() {
                record_one(p, ctx, jni, inner);
                if dimensions > 1 {
                    record_inner(p, ctx, jni, inner, dimensions - 1);
                }
            }
            false
        });
        if done {
            return;
        }
    }
}

fn record_one(p: &Probes, ctx: &Context, jni: Jni, object: sys::jobject) {
    // Its local reference goes when the native method returns.
    let class = jni.object_class(object);
    let size = ctx.jvmti.object_size(object).unwrap_or(0);
    p.sites.record_probed(ctx, jni, object, class, size);
}

/// Where a probe stops, for measuring what each part costs (`HPROF_ALLOC_PROBE_STOP=entry|site`; benchmarks
/// only): at its entry (the call and the inserted bytecode), after the site is found (no weak reference, no
/// record), or nowhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Entry,
    Site,
    Nowhere,
}

pub fn stop_at() -> Stop {
    static STOP: OnceLock<Stop> = OnceLock::new();
    *STOP.get_or_init(|| match std::env::var("HPROF_ALLOC_PROBE_STOP").as_deref() {
        Ok("entry") => Stop::Entry,
        Ok("site") => Stop::Site,
        _ => Stop::Nowhere,
    })
}

/// The JIT's intrinsics that allocate inline in place of code the probes or VMObjectAlloc see: `clone`,
/// `Arrays.copyOf(Range)`, `Array.newInstance`, `Unsafe.allocateInstance` and `allocateUninitializedArray`
/// (string concatenation, method handles' constructors), `StringUTF16.toBytes`. Turned off in Agent_OnLoad,
/// before the compilers read the list; string concatenation fused by C2 (`OptimizeStringConcat`) too.
const ALLOCATING_INTRINSICS: &str =
    "_clone,_copyOf,_copyOfRange,_newArray,_allocateInstance,_allocateUninitializedArray,_toBytesStringU";

/// Keeps the JIT from allocating where no probe sees it; `Err` says what could not be done (counts then
/// miss what compiled code allocates through those paths).
pub fn disable_allocating_intrinsics() -> Result<(), String> {
    let vm = hotspot::VmStructs::get().ok_or("the JVM exports no structure tables")?;
    vm.append_to_list_flag("DisableIntrinsic", ALLOCATING_INTRINSICS)?;
    // A JVM without C2 has no such flag, and nothing to turn off.
    let _ = vm.set_default_bool_flag("OptimizeStringConcat", false);
    Ok(())
}

/// Defines the probe class and calls each native once, so that both are linked before any method has a
/// probe (see `cpu_times::install_probes` for why).
pub fn define_and_link(jni: Jni) -> Result<(), String> {
    let name = CString::new(CLASS_NAME).expect("no NUL");
    let class = jni
        .define_class(&name, std::ptr::null_mut(), &class_bytes())
        .map_err(|e| format!("cannot define {CLASS_NAME}: {e}"))?;
    let link = || -> Result<(), String> {
        let object = jni
            .static_method_id(class, c"object", &CString::new(OBJECT_DESCRIPTOR).expect("no NUL"))
            .map_err(|e| format!("object: {e}"))?;
        jni.call_static_void(class, object, &[sys::jvalue { l: std::ptr::null_mut() }])
            .map_err(|e| format!("object: {e}"))?;
        let arrays = jni
            .static_method_id(class, c"arrays", &CString::new(ARRAYS_DESCRIPTOR).expect("no NUL"))
            .map_err(|e| format!("arrays: {e}"))?;
        jni.call_static_void(class, arrays, &[sys::jvalue { l: std::ptr::null_mut() }, sys::jvalue { i: 1 }])
            .map_err(|e| format!("arrays: {e}"))
    };
    let linked = link().or_else(|first| {
        crate::capabilities::cpu_times::load_agent_into_boot_loader(jni).map_err(|e| format!("{first}; and {e}"))?;
        link()
    });
    jni.delete_local_ref(class);
    linked.map_err(|e| format!("cannot link {CLASS_NAME}'s natives: {e}"))?;
    if let Some(p) = PROBES_STATE.get() {
        p.ready.store(true, Ordering::Release);
    }
    Ok(())
}

/// ClassFileLoadHook: the class with probes, or `None` to keep it as it is.
pub fn rewrite(name: Option<&std::ffi::CStr>, data: &[u8]) -> Option<Vec<u8>> {
    let p = PROBES_STATE.get()?;
    if !p.ready.load(Ordering::Acquire) {
        return None;
    }
    match classfile::instrument_allocations(data, &PROBES) {
        Ok(r) => {
            p.probed.fetch_add(r.probes as u64, Ordering::Relaxed);
            if !r.skipped.is_empty() {
                p.skipped.fetch_add(r.skipped.len() as u64, Ordering::Relaxed);
                let mut notes = p.notes.lock().unwrap_or_else(|e| e.into_inner());
                for (m, why) in r.skipped.iter().take(20usize.saturating_sub(notes.len())) {
                    notes.push(format!("{}.{}{}: {why}", r.class.replace('/', "."), m.name, m.descriptor));
                }
            }
            (r.probes > 0).then_some(r.bytes)
        }
        Err(e) => {
            if e.message != "a module-info class has no code" && e.message != "the probes' own class" {
                let name = name.map(|n| n.to_string_lossy().replace('/', ".")).unwrap_or_else(|| "<unnamed>".into());
                p.skipped.fetch_add(1, Ordering::Relaxed);
                let mut notes = p.notes.lock().unwrap_or_else(|e| e.into_inner());
                if notes.len() < 20 {
                    notes.push(format!("class {name}: {e}"));
                }
            }
            None
        }
    }
}

/// One line for HPROF_ALLOC_STATS: probes inserted and allocations left without one.
pub fn summary() -> Option<String> {
    let p = PROBES_STATE.get()?;
    let notes = p.notes.lock().unwrap_or_else(|e| e.into_inner());
    let mut line = format!(
        "alloc probes: {} inserted, {} allocations without one",
        p.probed.load(Ordering::Relaxed),
        p.skipped.load(Ordering::Relaxed)
    );
    for n in notes.iter().take(5) {
        line.push_str("\n  ");
        line.push_str(n);
    }
    Some(line)
}

/// Gives probes to the classes loaded before they could have them.
pub fn retransform_loaded(ctx: &Context, jni: Jni) {
    crate::capabilities::cpu_times::retransform_loaded_classes(ctx, jni, &mut |name, e| {
        log::verbose(
            ctx.options.verbose,
            &format!("alloc_probe: class {name}: the JVM refused to retransform it ({e})"),
        );
    });
}
