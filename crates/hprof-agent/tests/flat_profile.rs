//! cpu=flat and -Xprof on real JVMs: a CPU-bound method under "Compiled" once warm and under "Interpreted"
//! with -Xint, its share against the program's own CPU clocks; a JNI method's time as native ticks of its
//! Java frame; GC ticks in the global summary and a blocked thread's "Blocked" ticks; -Xprof on the
//! command line.

mod report_support;

use hprof_format::text::flat::{FlatProfile, NamedRow, ThreadProfile, parse_flat_profile};
use jvm_harness::{Java, JavaRun, JvmSlot, all_jdks, scratch};
use report_support::program_figures;
use std::path::{Path, PathBuf};

/// Runs `class` with the agent's `options` and extra VM arguments, `alone` on the machine (both JVM slots)
/// where shares are compared with the program's own: another busy process skews which instructions a CPU
/// clock's ticks land on.
fn run_flat(
    jdk: &jvm_harness::Jdk,
    options: &str,
    vm_args: &[&str],
    class: &str,
    args: &[&str],
    alone: bool,
) -> (JavaRun, jvm_harness::TempDir) {
    let dir = scratch("flat");
    let _slots = JvmSlot::acquire_n(if alone { 2 } else { 1 });
    let mut java = Java::new(jdk, dir.path()).agentpath(options);
    for a in vm_args {
        java = java.vm_arg(a);
    }
    let run = java.class(class).args(args).spawn_holding(None).wait();
    run.assert_success();
    (run, dir)
}

fn profile_of(run: &JavaRun, what: &str) -> FlatProfile {
    let text = run.read("java.hprof.txt");
    parse_flat_profile(&text).unwrap_or_else(|| panic!("{what}: no flat profile in java.hprof.txt:\n{text}"))
}

fn thread<'a>(p: &'a FlatProfile, name: &str, what: &str) -> &'a ThreadProfile {
    p.threads.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("{what}: no profile for thread {name}: {p:#?}"))
}

/// Ticks (code and native) of the rows for `method`, itself or inlined into another.
fn ticks_of(rows: &[NamedRow], method: &str) -> u64 {
    rows.iter()
        .filter(|r| r.name == method || r.name.starts_with(&format!("{method}  (in ")))
        .map(|r| r.code + r.native)
        .sum()
}

fn active(t: &ThreadProfile) -> u64 {
    t.active()
}

#[test]
fn a_hot_method_is_compiled_once_warm_and_interpreted_with_xint_in_the_programs_own_split() {
    for jdk in all_jdks() {
        for (mode, vm_args, seconds) in [("compiled", &[][..], "6"), ("interpreted", &["-Xint"][..], "6")] {
            let what = format!("JDK {} {mode}", jdk.version);
            // interval=1: the shared machine may leave the program a fraction of a CPU, and the tolerance needs
            // hundreds of ticks (binomial error: sqrt(n * 0.75 * 0.25) ticks).
            let (run, _dir) = run_flat(&jdk, "cpu=flat,interval=1", vm_args, "CpuAccuracy", &[seconds], true);
            let own = program_figures(&run.stdout, "own-share");
            let p = profile_of(&run, &what);
            let main = thread(&p, "main", &what);
            let table = if mode == "compiled" { &main.compiled } else { &main.interpreted };
            let (alpha, beta) =
                (ticks_of(table, "CpuAccuracy.hotAlpha") as f64, ticks_of(table, "CpuAccuracy.hotBeta") as f64);
            let share = 100.0 * alpha / (alpha + beta).max(1.0);
            let detail = format!(
                "{what}: alpha {share:.1}% vs own {:.1}% ({alpha}+{beta} of {}): {main:#?}",
                own["hotAlpha"],
                active(main)
            );
            assert!((share - own["hotAlpha"]).abs() <= 5.0, "{detail}");
            // Nearly all of main's CPU time is in the two methods, and in the expected table.
            assert!(alpha + beta >= 0.8 * active(main) as f64, "{detail}");
            let promised = own["cpu-ms"];
            assert!(alpha + beta >= 0.7 * promised, "{detail}: {promised} ticks promised");
            // The global summary counted wall-clock ticks for the run (one per ms, fewer on a loaded machine).
            assert!(
                p.global.received as f64 >= 0.2 * seconds.parse::<f64>().unwrap() * 1000.0,
                "{what}: {:?}",
                p.global
            );
        }
    }
}

/// Builds java/native/FlatNative.c into `dir`; `None` without a C compiler.
fn build_native(dir: &Path) -> Option<PathBuf> {
    let home = jvm_harness::jdk17().home;
    let lib = dir.join("libflatnative.so");
    let status = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg(format!("-I{}", home.join("include").display()))
        .arg(format!("-I{}", home.join("include/linux").display()))
        .arg(jvm_harness::repo_root().join("java/native/FlatNative.c"))
        .status()
        .ok()?;
    status.success().then_some(lib)
}

#[test]
fn a_jni_methods_time_is_native_ticks_of_its_java_frame() {
    let build = scratch("flat-native-lib");
    let Some(lib) = build_native(build.path()) else {
        jvm_harness::skip("no C compiler (cc) to build java/native/FlatNative.c");
        return;
    };
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let (run, _dir) = run_flat(&jdk, "cpu=flat,interval=1", &[], "FlatNative", &[lib.to_str().unwrap(), "5"], true);
        let own = program_figures(&run.stdout, "own-share");
        let p = profile_of(&run, &what);
        let main = thread(&p, "main", &what);
        // The native method is interpreted (its native entry) or compiled (its wrapper, shown under Stub as
        // -Xprof did): either way its ticks are native ticks, not code ticks.
        let rows: Vec<&NamedRow> = main
            .interpreted
            .iter()
            .chain(&main.stub)
            .chain(&main.compiled)
            .filter(|r| r.name == "FlatNative.spin")
            .collect();
        let native: u64 = rows.iter().map(|r| r.native).sum();
        let code: u64 = rows.iter().map(|r| r.code).sum();
        let java = ticks_of(&main.compiled, "FlatNative.javaWork") + ticks_of(&main.interpreted, "FlatNative.javaWork");
        let share = 100.0 * native as f64 / (native + java).max(1) as f64;
        let detail = format!(
            "{what}: native {native} (code {code}), javaWork {java}, share {share:.1}% vs own {:.1}%: {main:#?}",
            own["native"]
        );
        assert!(native > 0 && code <= native / 10, "{detail}");
        assert!((share - own["native"]).abs() <= 5.0, "{detail}");
    }
}

#[test]
fn gc_ticks_in_the_global_summary_and_a_waiting_thread_blocked() {
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let (run, _dir) = run_flat(&jdk, "cpu=flat", &["-Xmx64m"], "FlatGcBlocked", &["3"], false);
        let gcs = run.stdout.trim().strip_prefix("gcs=").and_then(|n| n.parse::<u64>().ok()).expect("gcs=");
        let p = profile_of(&run, &what);
        assert!(gcs >= 20, "{what}: only {gcs} collections");
        assert!(p.global.gc >= 5, "{what}: {gcs} full collections but {} GC ticks: {:?}", p.global.gc, p.global);
        let waiter = thread(&p, "flat-waiter", &what);
        // Blocked at every tick that looked at threads (not during GCs or other VM operations).
        let looked = p.global.received - p.global.gc - p.global.vm_operations.iter().map(|v| v.1).sum::<u64>();
        assert!(waiter.blocked as f64 >= 0.8 * looked as f64, "{what}: {waiter:?} of {looked} ticks: {:?}", p.global);
        assert_eq!(waiter.active(), 0, "{what}: a waiting thread uses no CPU: {waiter:?}");
    }
}

#[test]
fn xprof_on_the_command_line_writes_the_flat_profile() {
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        // `java -agentlib:hprof -Xprof App`, as the issue has it.
        let dir = scratch("flat-xprof");
        let run = {
            let _alone = JvmSlot::acquire_n(2);
            Java::new(&jdk, dir.path())
                .agentlib("")
                .vm_arg("-Xprof")
                .class("CpuAccuracy")
                .arg("1")
                .spawn_holding(None)
                .wait()
        };
        run.assert_success();
        assert!(run.stderr.contains("-Xprof"), "{what}: the JVM's own warning: {}", run.stderr);
        let text = run.read("java.hprof.txt");
        let p = profile_of(&run, &what);
        let main = thread(&p, "main", &what);
        assert!(ticks_of(&main.compiled, "CpuAccuracy.hotAlpha") > 0, "{what}: {main:#?}");
        // -Xprof means cpu=flat, so the default heap=all does not apply.
        assert!(!text.contains("HEAP DUMP BEGIN") && !text.contains("SITES BEGIN"), "{what}: {text}");
    }
}

#[test]
fn sigquit_writes_the_profile_so_far_and_cutoff_elides_small_rows() {
    let dir = scratch("flat-sigquit");
    let jvm = Java::new(&jvm_harness::jdk17(), dir.path())
        .agentpath("cpu=flat,cutoff=0.05")
        .class("CpuAccuracy")
        .arg("4")
        .spawn();
    std::thread::sleep(std::time::Duration::from_millis(2000));
    jvm.signal(3);
    let run = jvm.wait();
    run.assert_success();
    assert!(run.stdout.contains("own-share"), "the program must finish");
    let text = run.read("java.hprof.txt");
    let dumps: Vec<&str> = text.split("Global summary of ").collect();
    assert_eq!(dumps.len(), 3, "one profile on SIGQUIT, one at exit: {text}");
    let first = parse_flat_profile(&format!("{}Global summary of {}", dumps[0], dumps[1])).expect("SIGQUIT's profile");
    let last = profile_of(&run, "exit");
    assert!(last.global.received > first.global.received, "cumulative: {:?} then {:?}", first.global, last.global);
    let main = thread(&last, "main", "exit");
    let active = main.active() as f64;
    for r in main.interpreted.iter().chain(&main.compiled).chain(&main.stub) {
        assert!((r.code + r.native) as f64 >= 0.05 * active, "cutoff=0.05 leaves out {r:?} of {active}");
    }
    assert!(text.contains("(including elided)"), "start-up rows were left out and said so: {text}");
}
