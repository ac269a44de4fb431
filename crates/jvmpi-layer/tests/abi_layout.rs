//! include/jvmpi.h against the JDK 1.4 ABI and against the layer's Rust mirror: a C program compiled against
//! the header prints every structure's size and every field's offset, which must equal Rust's, and the
//! x86-64 sizes of the old header's structures; the event numbers and constants must be the old ones.

use jvm_harness::{repo_root, scratch};
use jvmpi::abi::*;
use std::collections::HashMap;
use std::mem::{offset_of, size_of};
use std::process::Command;

/// (C expression, Rust value) pairs: sizes and offsets.
fn rust_layout() -> Vec<(&'static str, usize)> {
    vec![
        ("sizeof(JVMPI_Event)", size_of::<JVMPI_Event>()),
        ("sizeof(JVMPI_Interface)", size_of::<JVMPI_Interface>()),
        ("sizeof(JVMPI_Method)", size_of::<JVMPI_Method>()),
        ("sizeof(JVMPI_Field)", size_of::<JVMPI_Field>()),
        ("sizeof(JVMPI_CallFrame)", size_of::<JVMPI_CallFrame>()),
        ("sizeof(JVMPI_CallTrace)", size_of::<JVMPI_CallTrace>()),
        ("sizeof(JVMPI_Lineno)", size_of::<JVMPI_Lineno>()),
        ("sizeof(JVMPI_HeapDumpArg)", size_of::<JVMPI_HeapDumpArg>()),
        ("offsetof(JVMPI_Event, env_id)", offset_of!(JVMPI_Event, env_id)),
        ("offsetof(JVMPI_Event, u)", offset_of!(JVMPI_Event, u)),
        ("offsetof(JVMPI_Event, u.class_load.class_id)", offset_of!(JVMPI_Event, u) + offset_of!(ClassLoad, class_id)),
        ("offsetof(JVMPI_Event, u.class_load.methods)", offset_of!(JVMPI_Event, u) + offset_of!(ClassLoad, methods)),
        (
            "offsetof(JVMPI_Event, u.class_load.instances)",
            offset_of!(JVMPI_Event, u) + offset_of!(ClassLoad, instances),
        ),
        ("offsetof(JVMPI_Event, u.obj_alloc.class_id)", offset_of!(JVMPI_Event, u) + offset_of!(ObjAlloc, class_id)),
        ("offsetof(JVMPI_Event, u.obj_alloc.is_array)", offset_of!(JVMPI_Event, u) + offset_of!(ObjAlloc, is_array)),
        ("offsetof(JVMPI_Event, u.obj_alloc.size)", offset_of!(JVMPI_Event, u) + offset_of!(ObjAlloc, size)),
        ("offsetof(JVMPI_Event, u.obj_alloc.obj_id)", offset_of!(JVMPI_Event, u) + offset_of!(ObjAlloc, obj_id)),
        (
            "offsetof(JVMPI_Event, u.thread_start.thread_env_id)",
            offset_of!(JVMPI_Event, u) + offset_of!(ThreadStart, thread_env_id),
        ),
        ("offsetof(JVMPI_Event, u.heap_dump.traces)", offset_of!(JVMPI_Event, u) + offset_of!(HeapDump, traces)),
        (
            "offsetof(JVMPI_Event, u.class_load_hook.malloc_f)",
            offset_of!(JVMPI_Event, u) + offset_of!(ClassLoadHook, malloc_f),
        ),
        (
            "offsetof(JVMPI_Event, u.compiled_method_load.lineno_table)",
            offset_of!(JVMPI_Event, u) + offset_of!(CompiledMethodLoad, lineno_table),
        ),
        (
            "offsetof(JVMPI_Event, u.monitor_dump.threads_status)",
            offset_of!(JVMPI_Event, u) + offset_of!(MonitorDump, threads_status),
        ),
        (
            "offsetof(JVMPI_Event, u.monitor_wait.timeout)",
            offset_of!(JVMPI_Event, u) + offset_of!(MonitorWait, timeout),
        ),
        (
            "offsetof(JVMPI_Event, u.gc_info.total_object_space)",
            offset_of!(JVMPI_Event, u) + offset_of!(GcInfo, total_object_space),
        ),
        ("offsetof(JVMPI_Event, u.object_dump.data)", offset_of!(JVMPI_Event, u) + offset_of!(ObjectDump, data)),
        ("offsetof(JVMPI_Event, u.instruction.u)", offset_of!(JVMPI_Event, u) + offset_of!(Instruction, u)),
        ("offsetof(JVMPI_Method, method_id)", offset_of!(JVMPI_Method, method_id)),
        ("offsetof(JVMPI_CallTrace, frames)", offset_of!(JVMPI_CallTrace, frames)),
        ("offsetof(JVMPI_Interface, NotifyEvent)", offset_of!(JVMPI_Interface, NotifyEvent)),
        ("offsetof(JVMPI_Interface, GetCallTrace)", offset_of!(JVMPI_Interface, GetCallTrace)),
        ("offsetof(JVMPI_Interface, GetCurrentThreadCpuTime)", offset_of!(JVMPI_Interface, GetCurrentThreadCpuTime)),
        ("offsetof(JVMPI_Interface, CreateSystemThread)", offset_of!(JVMPI_Interface, CreateSystemThread)),
        ("offsetof(JVMPI_Interface, RunGC)", offset_of!(JVMPI_Interface, RunGC)),
        ("offsetof(JVMPI_Interface, jobject2jobjectID)", offset_of!(JVMPI_Interface, jobject2jobjectID)),
        ("offsetof(JVMPI_Interface, ResumeThreadList)", offset_of!(JVMPI_Interface, ResumeThreadList)),
    ]
}

/// The values the old header gives, as (name, value); each is printed by the C program too.
fn constants() -> Vec<(&'static str, i64)> {
    vec![
        ("JVMPI_VERSION_1", JVMPI_VERSION_1 as i64),
        ("JVMPI_VERSION_1_1", JVMPI_VERSION_1_1 as i64),
        ("JVMPI_VERSION_1_2", JVMPI_VERSION_1_2 as i64),
        ("JVMPI_EVENT_METHOD_ENTRY", JVMPI_EVENT_METHOD_ENTRY as i64),
        ("JVMPI_EVENT_OBJECT_ALLOC", JVMPI_EVENT_OBJECT_ALLOC as i64),
        ("JVMPI_EVENT_THREAD_START", JVMPI_EVENT_THREAD_START as i64),
        ("JVMPI_EVENT_HEAP_DUMP", JVMPI_EVENT_HEAP_DUMP as i64),
        ("JVMPI_EVENT_CLASS_LOAD", JVMPI_EVENT_CLASS_LOAD as i64),
        ("JVMPI_EVENT_JVM_SHUT_DOWN", JVMPI_EVENT_JVM_SHUT_DOWN as i64),
        ("JVMPI_EVENT_OBJECT_DUMP", JVMPI_EVENT_OBJECT_DUMP as i64),
        ("JVMPI_EVENT_MONITOR_DUMP", JVMPI_EVENT_MONITOR_DUMP as i64),
        ("JVMPI_EVENT_GC_FINISH", JVMPI_EVENT_GC_FINISH as i64),
        ("JVMPI_REQUESTED_EVENT", JVMPI_REQUESTED_EVENT as i64),
        ("JVMPI_NOT_AVAILABLE", JVMPI_NOT_AVAILABLE as i64),
        ("JVMPI_FAIL", JVMPI_FAIL as i64),
        ("JVMPI_THREAD_SUSPENDED", JVMPI_THREAD_SUSPENDED as i64),
        ("JVMPI_CLASS", JVMPI_CLASS as i64),
        ("JVMPI_LONG", JVMPI_LONG as i64),
        ("JVMPI_GC_ROOT_UNKNOWN", JVMPI_GC_ROOT_UNKNOWN as i64),
        ("JVMPI_GC_PRIM_ARRAY_DUMP", JVMPI_GC_PRIM_ARRAY_DUMP as i64),
        ("JVMPI_MONITOR_RAW", JVMPI_MONITOR_RAW as i64),
    ]
}

/// Compiles and runs a C program that prints `expr=value` for each size, offset and constant.
fn c_values() -> HashMap<String, i64> {
    let dir = scratch("jvmpi-abi");
    let home = jvm_harness::jdk17().home;
    let mut src = String::from("#include <stddef.h>\n#include <stdio.h>\n#include <jvmpi.h>\nint main(void) {\n");
    for (expr, _) in rust_layout() {
        src.push_str(&format!("    printf(\"%s=%ld\\n\", \"{expr}\", (long)({expr}));\n"));
    }
    for (name, _) in constants() {
        src.push_str(&format!("    printf(\"%s=%ld\\n\", \"{name}\", (long)({name}));\n"));
    }
    src.push_str("    return 0;\n}\n");
    let c = dir.path().join("layout.c");
    std::fs::write(&c, src).unwrap();
    let exe = dir.path().join("layout");
    let out = Command::new("cc")
        .args(["-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(format!("-I{}", repo_root().join("include").display()))
        .arg(format!("-I{}", home.join("include").display()))
        .arg(format!("-I{}", home.join("include/linux").display()))
        .arg(&c)
        .output()
        .unwrap_or_else(|e| panic!("the ABI test needs a C compiler: cannot run `cc` ({e})"));
    assert!(out.status.success(), "include/jvmpi.h does not compile:\n{}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(&exe).output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.rsplit_once('=').map(|(k, v)| (k.to_owned(), v.parse().unwrap())))
        .collect()
}

#[test]
fn header_and_rust_mirror_agree_on_every_size_and_offset() {
    let c = c_values();
    for (expr, rust) in rust_layout() {
        assert_eq!(c[expr], rust as i64, "{expr}: C says {}, Rust says {rust}", c[expr]);
    }
    for (name, rust) in constants() {
        assert_eq!(c[name], rust, "{name}");
    }
}

#[test]
fn the_layout_is_the_jdk_1_4_one_on_x86_64() {
    // JVMPI_Event: jint + pad, JNIEnv*, then the union whose largest member is class_load (72 bytes).
    assert_eq!(size_of::<JVMPI_Event>(), 88);
    assert_eq!(offset_of!(JVMPI_Event, u), 16);
    // JVMPI_Interface: jint version + pad, then 29 function pointers in the specification's order.
    assert_eq!(size_of::<JVMPI_Interface>(), 8 + 29 * 8);
    assert_eq!(offset_of!(JVMPI_Interface, SuspendThreadList), 8 + 27 * 8);
    assert_eq!(size_of::<JVMPI_Method>(), 32);
    // The event numbers agents were compiled with.
    assert_eq!(
        [
            JVMPI_EVENT_METHOD_ENTRY,
            JVMPI_EVENT_INSTRUCTION_START,
            JVMPI_EVENT_THREAD_START,
            JVMPI_EVENT_CLASS_LOAD_HOOK
        ],
        [1, 9, 33, 35]
    );
    assert_eq!([JVMPI_EVENT_CLASS_LOAD, JVMPI_EVENT_JVM_INIT_DONE, JVMPI_EVENT_GC_START], [42, 46, 60]);
    assert_eq!([JVMPI_VERSION_1, JVMPI_VERSION_1_1, JVMPI_VERSION_1_2], [0x10000001, 0x10000002, 0x10000003]);
}
