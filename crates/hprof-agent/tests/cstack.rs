//! cstack on real JVMs: native frames on top of Java ones — a JNI method's C function (`spin_in_c`, from
//! java/native/NativeStacks.c compiled here) under its Java native method, C frames between Java ones (a
//! JNI function calling a Java method back), libc's `read` under
//! FileInputStream for a thread reading a pipe, and the JVM's own GC threads sampled by name with their
//! collector's functions named, kernel frames under the pipe's read (perf call chains) — in folded stacks,
//! and in TRACEs with cstack=y. The same run checks virtual threads in cpu=samples (JDK 21+): a mounted
//! virtual thread's CPU samples are its own, by name, never its carrier's. One run per JDK.

mod report_support;

use jvm_harness::{Java, JvmSlot, all_jdks, scratch};
use report_support::{ranked_section, traces};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Builds java/native/NativeStacks.c into `dir`; `None` without a C compiler.
fn build_native(dir: &Path) -> Option<PathBuf> {
    let home = jvm_harness::jdk17().home;
    let lib = dir.join("libnativestacks.so");
    let status = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg(format!("-I{}", home.join("include").display()))
        .arg(format!("-I{}", home.join("include/linux").display()))
        .arg(jvm_harness::repo_root().join("java/native/NativeStacks.c"))
        .status()
        .ok()?;
    status.success().then_some(lib)
}

/// Whether this process may take kernel call chains: perf_event_paranoid at most 1, or CAP_PERFMON (38) or
/// CAP_SYS_ADMIN (21) among its effective capabilities.
fn kernel_stacks_allowed() -> bool {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let caps = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|c| u64::from_str_radix(c.trim(), 16).ok())
        .unwrap_or(0);
    paranoid.trim().parse::<i32>().is_ok_and(|p| p <= 1) || caps & (1 << 38 | 1 << 21) != 0
}

/// Folded stacks (`a;b;c count`), root first, with their counts.
fn folded(text: &str) -> Vec<(Vec<String>, u64)> {
    text.lines()
        .filter_map(|l| {
            let (stack, n) = l.rsplit_once(' ')?;
            Some((stack.split(';').map(str::to_owned).collect(), n.parse().ok()?))
        })
        .collect()
}

/// Samples of stacks where `callee` is called (at any depth above) by `caller`.
fn samples_under(stacks: &[(Vec<String>, u64)], caller: &str, callee: impl Fn(&str) -> bool) -> u64 {
    stacks
        .iter()
        .filter(|(frames, _)| {
            frames.iter().position(|f| f == caller).is_some_and(|at| frames[at + 1..].iter().any(|f| callee(f)))
        })
        .map(|(_, n)| n)
        .sum()
}

/// THREAD START names by thread serial, from a text report.
fn thread_names(text: &str) -> HashMap<u32, String> {
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("THREAD START (")?;
            let id = rest.split("id = ").nth(1)?.split(',').next()?.trim().parse().ok()?;
            let name = rest.split("name=\"").nth(1)?.split('"').next()?.to_owned();
            Some((id, name))
        })
        .collect()
}

/// CPU SAMPLES as (thread name, frames as printed, samples), from a text report with thread=y.
fn samples_by_thread(text: &str) -> Vec<(String, Vec<String>, u64)> {
    let names = thread_names(text);
    let traces = traces(text);
    let (_, rows) = ranked_section(text, "CPU SAMPLES", 0).expect("a CPU SAMPLES section");
    rows.iter()
        .map(|r| {
            let t = &traces[&r.trace];
            let name = t.thread.and_then(|s| names.get(&s)).cloned().unwrap_or_default();
            (name, t.frames.clone(), r.count)
        })
        .collect()
}

/// Virtual threads in cpu=samples (JDK 21+): NativeStacks' 200 virtual threads computing in virtualWork are
/// sampled under their own names, their stacks end at their own frames (not the carrier's ForkJoinPool
/// frames below the continuation), and no carrier sample holds their frames.
fn check_virtual_threads(what: &str, text: &str) {
    let samples = samples_by_thread(text);
    let working = |frames: &[String]| frames.iter().any(|f| f.starts_with("NativeStacks.virtualWork"));
    let on_carriers: Vec<&(String, Vec<String>, u64)> =
        samples.iter().filter(|s| s.0.starts_with("ForkJoinPool") && working(&s.1)).collect();
    assert!(on_carriers.is_empty(), "{what}: virtual threads' samples credited to carriers: {on_carriers:?}");
    let work: Vec<&(String, Vec<String>, u64)> = samples.iter().filter(|s| working(&s.1)).collect();
    let total: u64 = work.iter().map(|s| s.2).sum();
    let names: std::collections::HashSet<&str> = work.iter().map(|s| s.0.as_str()).collect();
    assert!(names.iter().all(|n| n.starts_with("vt-cpu-")), "{what}: virtualWork on {names:?}");
    assert!(
        total >= 20 && names.len() >= 10,
        "{what}: {total} samples in virtualWork on {} virtual threads",
        names.len()
    );
    let carrier_frames: Vec<&String> =
        work.iter().flat_map(|s| &s.1).filter(|f| f.starts_with("java.util.concurrent.ForkJoin")).collect();
    assert!(carrier_frames.is_empty(), "{what}: virtual threads' stacks run into their carriers': {carrier_frames:?}");
    println!("{what}: {total} samples in virtualWork on {} virtual threads, none on carriers", names.len());
}

#[test]
fn native_frames_show_c_code_under_its_java_method_and_between_java_frames_libc_read_gc_threads_and_virtual_threads_own_samples()
 {
    let build = scratch("cstack-lib");
    let Some(lib) = build_native(build.path()) else {
        return jvm_harness::skip("no C compiler (cc) to build java/native/NativeStacks.c");
    };
    for jdk in all_jdks() {
        // JDK 17 runs the Parallel collector, the others G1: both collectors' functions must be named.
        let (gc, gc_prefixes): (&str, &[&str]) =
            if jdk.version == "17" { ("-XX:+UseParallelGC", &["PS", "Parallel"]) } else { ("-XX:+UseG1GC", &["G1"]) };
        let what = format!("JDK {} {gc}", jdk.version);
        let dir = scratch("cstack");
        let _slots = JvmSlot::acquire_n(2);
        let run = Java::new(&jdk, dir.path())
            .agentpath("cpu=samples,cstack=y,thread=y,depth=48,interval=5,collapsed=stacks.txt")
            .vm_arg(gc)
            .vm_arg("-Xmx256m")
            .class("NativeStacks")
            .args(&[lib.to_str().unwrap(), "4"])
            .spawn_holding(None)
            .wait();
        run.assert_success();
        let stacks = folded(&run.read("stacks.txt"));
        let total: u64 = stacks.iter().map(|(_, n)| n).sum();
        let detail = |label: &str| {
            let mut top: Vec<_> = stacks.iter().collect();
            top.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
            let lines: Vec<String> = top.iter().take(25).map(|(f, n)| format!("{n} {}", f.join(";"))).collect();
            format!("{what}: {label}; {total} samples, the most frequent stacks:\n{}", lines.join("\n"))
        };

        // The C function, under the Java native method that called it: most of the spinner's time.
        let spin = samples_under(&stacks, "NativeStacks.spinInC", |f| f == "spin_in_c");
        let spinner: u64 =
            stacks.iter().filter(|(f, _)| f.iter().any(|f| f == "NativeStacks.spinInC")).map(|(_, n)| n).sum();
        assert!(spin >= 20 && spin * 10 >= spinner * 8, "{}", detail(&format!("spin_in_c {spin} of {spinner}")));

        // Native frames between Java frames: callIntoC's C code calling javaCallback back through JNI shows
        // as Java caller → native method → its C functions → the JVM's JNI call → the Java callback.
        let between = |frames: &[String]| {
            let Some(at) = frames.iter().position(|f| f == "NativeStacks.callIntoC") else { return false };
            let Some(back) = frames[at..].iter().position(|f| f == "NativeStacks.javaCallback") else { return false };
            let middle = &frames[at + 1..at + back];
            middle.first().is_some_and(|f| f == "Java_NativeStacks_callIntoC")
                && middle.iter().any(|f| f == "call_back_from_c")
                && middle.iter().any(|f| f.starts_with("jni_Call"))
                && middle.iter().all(|f| !f.contains('.'))
        };
        let called_back: u64 = stacks.iter().filter(|(f, _)| between(f)).map(|(_, n)| n).sum();
        let in_callback: u64 =
            stacks.iter().filter(|(f, _)| f.iter().any(|f| f == "NativeStacks.javaCallback")).map(|(_, n)| n).sum();
        assert!(
            called_back >= 10 && called_back * 10 >= in_callback * 8,
            "{}",
            detail(&format!("{called_back} of {in_callback} callback samples with the C frames between"))
        );

        // libc's read, under FileInputStream's native readBytes.
        let reads = samples_under(&stacks, "java.io.FileInputStream.readBytes", |f| {
            matches!(f, "read" | "__read" | "__libc_read" | "__read_nocancel")
        });
        assert!(reads >= 5, "{}", detail(&format!("{reads} samples in read under readBytes")));

        // The kernel's frames under read (the pipe's copy), from perf call chains where the kernel lets this
        // process see them; else one warning that says why.
        let warnings = run.stderr.matches("cstack: no kernel frames").count();
        let in_kernel = samples_under(&stacks, "java.io.FileInputStream.readBytes", |f| f.ends_with("_[k]"));
        if kernel_stacks_allowed() {
            assert!(warnings == 0 && in_kernel >= 3, "{}", detail(&format!("{in_kernel} kernel samples under read")));
            assert!(
                stacks.iter().any(|(f, _)| f.iter().any(|f| f.ends_with("_read_[k]"))),
                "{}",
                detail("no kernel read function named")
            );
        } else {
            assert!(warnings == 1 && in_kernel == 0, "{what}: {warnings} warnings, {in_kernel}: {}", run.stderr);
        }

        // GC worker threads, sampled by name, in their collector's functions (TRACEs hold native frames with
        // cstack=y, and name their thread with thread=y).
        let text = run.read("java.hprof.txt");
        let names = thread_names(&text);
        let gc_frames: Vec<(String, String)> = traces(&text)
            .values()
            .filter_map(|t| Some((names.get(&t.thread?)?, t)))
            .filter(|(name, _)| name.starts_with("GC Thread") || name.starts_with("G1 "))
            .flat_map(|(name, t)| t.frames.iter().map(move |f| (name.clone(), f.clone())))
            .filter(|(_, f)| gc_prefixes.iter().any(|p| f.starts_with(p)))
            .collect();
        assert!(
            gc_frames.len() >= 3,
            "{}",
            detail(&format!("GC threads {:?} hold only {gc_frames:?}", names.values().collect::<Vec<_>>()))
        );
        println!(
            "{what}: spin_in_c {spin}/{spinner}, C between Java {called_back}/{in_callback}, read {reads}, GC frames \
             e.g. {:?}",
            gc_frames.first()
        );

        if jdk.version == "17" {
            assert!(!run.stdout.contains("virtual threads="), "{what}: {}", run.stdout);
        } else {
            assert!(run.stdout.contains("virtual threads=200"), "{what}: {}", run.stdout);
            check_virtual_threads(&what, &text);
        }
    }
    if all_jdks().iter().any(|j| j.version == "17") {
        jvm_harness::skip("JDK 17 has no virtual threads: their part of this test ran on JDK 21+ only");
    }
}

/// Where kernel frames cannot be had — here POSIX CPU timers, which have no call chains — cstack says so once
/// and the profile goes on with native frames.
#[test]
fn without_kernel_call_chains_cstack_says_so_once() {
    let dir = scratch("cstack-posix");
    let run = Java::new(&jvm_harness::jdk17(), dir.path())
        .agentpath("cpu=samples,cstack=y,clock=posix,collapsed=stacks.txt")
        .class("Hello")
        .run();
    run.assert_success();
    let warnings: Vec<&str> = run.stderr.lines().filter(|l| l.contains("cstack: no kernel frames")).collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    assert!(warnings[0].contains("POSIX timers"), "{}", warnings[0]);
}
