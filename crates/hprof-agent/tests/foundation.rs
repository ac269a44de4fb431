//! The agent foundation on real JVMs: loading forms, options, help, output files, flushing on every kind of
//! exit, and the binary records every capability shares.

use hprof_format::binary::{Record, Records, parse_header};
use jvm_harness::{Java, all_jdks, jdk17, scratch};
use std::collections::HashMap;
use std::time::Duration;

const OPTIONS: &[&str] = &[
    "heap=",
    "cpu=",
    "cpu=wall",
    "threads=",
    "include=",
    "exclude=",
    "monitor=",
    "format=",
    "file=",
    "net=",
    "depth=",
    "interval=",
    "cutoff=",
    "lineno=",
    "thread=",
    "doe=",
    "msa=",
    "force=",
    "verbose=",
    "gc_okay=",
];

fn thread_starts(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("THREAD START")).collect()
}

fn assert_profile_with_main(text: &str, what: &str) {
    assert!(
        text.starts_with("JAVA PROFILE 1.0.1, created "),
        "{what}: header missing:\n{}",
        &text[..text.len().min(200)]
    );
    assert!(text.contains("\n--------\n"), "{what}: no separator after the prelude");
    let starts = thread_starts(text);
    assert!(
        starts.iter().any(|l| l.contains("name=\"main\", group=\"main\"")),
        "{what}: no THREAD START for main in:\n{}",
        starts.join("\n")
    );
    for l in &starts {
        assert!(l.starts_with("THREAD START (obj=") && l.contains(", id = 2000"), "{what}: malformed line {l}");
    }
}

#[test]
fn help_lists_every_option_and_exits_zero() {
    for jdk in all_jdks() {
        let dir = scratch("help");
        let run = Java::new(&jdk, dir.path()).agentpath("help").main_args(&["-version"]).run();
        assert_eq!(run.code(), Some(0), "JDK {}: help must exit 0\n{}", jdk.version, run.stderr);
        run.assert_no_crash_log();
        for opt in OPTIONS {
            assert!(run.stdout.contains(opt), "JDK {}: help does not mention {opt}:\n{}", jdk.version, run.stdout);
        }
        for must in ["Default", "Examples", "Notes", "format=b cannot be used with cpu=old|times", "java.hprof"] {
            assert!(run.stdout.contains(must), "help lacks {must:?}");
        }
        assert!(
            !run.stdout.contains("Hello") && !run.stderr.contains("openjdk version"),
            "the VM must not go on running"
        );
    }
}

#[test]
fn three_loading_forms_write_a_profile_with_main() {
    for jdk in all_jdks() {
        type Form = fn(Java, &str) -> Java;
        let forms: [(&str, Form); 3] =
            [("agentpath", Java::agentpath), ("agentlib", Java::agentlib), ("Xrun", Java::xrun)];
        for (name, form) in forms {
            let dir = scratch(name);
            let run = form(Java::new(&jdk, dir.path()), "cpu=samples").class("Hello").run();
            run.assert_success();
            assert!(run.stdout.contains("hello from worker"), "{name}: the program must run");
            let text = run.read("java.hprof.txt");
            let what = format!("JDK {} -{name}", jdk.version);
            assert_profile_with_main(&text, &what);
            assert!(
                thread_starts(&text).iter().any(|l| l.contains("name=\"hello-worker\"")),
                "{what}: the worker thread is missing"
            );
            assert!(text.contains("THREAD END (id = "), "{what}: no THREAD END");
        }
    }
}

#[test]
fn javac_runs_with_the_agent_through_dash_j() {
    let jdk = jdk17();
    let dir = scratch("javac");
    let src = dir.path().join("Greeting.java");
    std::fs::write(
        &src,
        "public class Greeting { public static void main(String[] a) { System.out.println(\"hi\"); } }",
    )
    .unwrap();
    let lib_dir = jvm_harness::agent_library().parent().unwrap().to_path_buf();
    let _slot = jvm_harness::JvmSlot::acquire();
    let status = std::process::Command::new(jdk.bin("javac"))
        .arg("-J-agentlib:hprof=cpu=samples,file=javac.hprof.txt")
        .arg("Greeting.java")
        .current_dir(dir.path())
        .env("LD_LIBRARY_PATH", &lib_dir)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(dir.path().join("Greeting.class").is_file(), "javac must still compile");
    let text = std::fs::read_to_string(dir.path().join("javac.hprof.txt")).unwrap();
    assert_profile_with_main(&text, "javac -J-agentlib");
}

#[test]
fn bad_options_fail_with_one_clear_line() {
    let cases: &[(&str, &str)] = &[
        ("bogus=1", "unknown option 'bogus'"),
        ("heap=lots", "heap=lots"),
        ("depth=-3", "depth=-3"),
        ("interval=fast", "interval=fast"),
        ("cpu=old,format=b", "cpu=old"),
        ("cutoff=7", "cutoff=7"),
        ("net=localhost", "net=localhost"),
        ("cpu=wall,cstack=y", "cstack=y does not go with cpu=wall"),
    ];
    for jdk in all_jdks() {
        for (opts, needle) in cases {
            let dir = scratch("badopt");
            let run = Java::new(&jdk, dir.path()).agentpath(opts).class("Hello").timeout(Duration::from_secs(60)).run();
            assert_ne!(run.code(), Some(0), "JDK {}: {opts} must fail", jdk.version);
            run.assert_no_crash_log();
            let errors: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("HPROF ERROR:")).collect();
            assert_eq!(errors.len(), 1, "JDK {}: {opts}: want one HPROF ERROR line, got:\n{}", jdk.version, run.stderr);
            assert!(errors[0].contains(needle), "{opts}: {:?} does not name {needle:?}", errors[0]);
            assert!(!run.stdout.contains("Hello"), "{opts}: the program must not run");
            assert!(!run.stderr.contains("panicked"), "{opts}: panic:\n{}", run.stderr);
        }
    }
}

#[test]
fn obsolete_and_solaris_options_warn_but_run() {
    let dir = scratch("warn");
    let run = Java::new(&jdk17(), dir.path()).agentpath("cpu=samples,gc_okay=y,msa=y").class("Hello").run();
    run.assert_success();
    assert!(run.stderr.contains("gc_okay is obsolete"), "{}", run.stderr);
    assert!(run.stderr.contains("Solaris"), "{}", run.stderr);
}

#[test]
fn force_n_keeps_an_existing_file() {
    let dir = scratch("force");
    std::fs::write(dir.path().join("java.hprof.txt"), "precious").unwrap();
    let run = Java::new(&jdk17(), dir.path()).agentpath("cpu=samples,force=n").class("Hello").run();
    run.assert_success();
    assert_eq!(run.read("java.hprof.txt"), "precious", "force=n must not overwrite");
    let alt: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("java.hprof.") && n.ends_with(".txt") && n != "java.hprof.txt")
        .collect();
    assert_eq!(alt.len(), 1, "want java.hprof.<pid>.txt, found {alt:?}");
    assert_profile_with_main(&run.read(&alt[0]), "force=n");

    let run = Java::new(&jdk17(), dir.path()).agentpath("cpu=samples,force=y").class("Hello").run();
    run.assert_success();
    assert_profile_with_main(&run.read("java.hprof.txt"), "force=y");
}

#[test]
fn file_option_and_unwritable_file() {
    let dir = scratch("file");
    let run = Java::new(&jdk17(), dir.path()).agentpath("cpu=samples,file=custom.txt").class("Hello").run();
    run.assert_success();
    assert_profile_with_main(&run.read("custom.txt"), "file=");

    let run = Java::new(&jdk17(), dir.path()).agentpath("cpu=samples,file=/nonexistent/dir/x.txt").class("Hello").run();
    assert_ne!(run.code(), Some(0));
    run.assert_no_crash_log();
    assert!(run.stderr.contains("HPROF ERROR: cannot create output file /nonexistent/dir/x.txt"), "{}", run.stderr);
}

#[test]
fn net_to_a_closed_port_is_a_clear_error() {
    // Bind and drop to find a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = scratch("net");
    let run =
        Java::new(&jdk17(), dir.path()).agentpath(&format!("cpu=samples,net=127.0.0.1:{port}")).class("Hello").run();
    assert_ne!(run.code(), Some(0));
    run.assert_no_crash_log();
    assert!(run.stderr.contains(&format!("net=127.0.0.1:{port}: cannot connect")), "{}", run.stderr);
}

#[test]
fn output_is_complete_after_system_exit() {
    for jdk in all_jdks() {
        let dir = scratch("exit");
        let run = Java::new(&jdk, dir.path()).agentpath("cpu=samples").class("Exiter").run();
        assert_eq!(run.code(), Some(3), "System.exit(3) must be kept");
        run.assert_no_crash_log();
        let text = run.read("java.hprof.txt");
        assert_profile_with_main(&text, "System.exit");
        assert!(thread_starts(&text).iter().any(|l| l.contains("\"spinner\"")));
    }
}

#[test]
fn output_is_complete_after_sigterm() {
    for jdk in all_jdks() {
        let dir = scratch("sigterm");
        let mut jvm = Java::new(&jdk, dir.path()).agentpath("cpu=samples").class("Sleeper").spawn();
        jvm.wait_for_stdout("ready", Duration::from_secs(60));
        jvm.signal(libc_sigterm());
        let run = jvm.wait();
        assert_eq!(run.code(), Some(143), "JDK {}: SIGTERM exit status", jdk.version);
        run.assert_no_crash_log();
        let text = run.read("java.hprof.txt");
        assert_profile_with_main(&text, "SIGTERM");
        assert!(thread_starts(&text).iter().any(|l| l.contains("\"napper\"")));
    }
}

#[test]
fn output_is_complete_after_out_of_memory() {
    let dir = scratch("oom");
    let run = Java::new(&jdk17(), dir.path()).agentpath("cpu=samples").vm_arg("-Xmx32m").class("OomThrower").run();
    assert_eq!(run.code(), Some(1));
    assert!(run.stderr.contains("OutOfMemoryError"), "{}", run.stderr);
    run.assert_no_crash_log();
    assert_profile_with_main(&run.read("java.hprof.txt"), "OutOfMemoryError");
}

fn libc_sigterm() -> i32 {
    15
}

/// Decodes a binary profile completely; panics on any malformed record.
fn decode(bytes: &[u8]) -> (String, Vec<Record<'_>>) {
    let h = parse_header(bytes).expect("header");
    assert_eq!(h.id_size, 8);
    let recs =
        Records::new(bytes, &h).map(|r| Record::decode(&r.expect("record"), h.id_size).expect("decode")).collect();
    (h.version, recs)
}

#[test]
fn binary_output_has_strings_classes_and_threads() {
    for jdk in all_jdks() {
        let dir = scratch("binary");
        let run = Java::new(&jdk, dir.path()).agentpath("cpu=samples,format=b").class("Hello").run();
        run.assert_success();
        let bytes = run.read_bytes("java.hprof");
        let (version, recs) = decode(&bytes);
        assert_eq!(version, "JAVA PROFILE 1.0.1", "no heap dump segments, so 1.0.1");
        let strings: HashMap<u64, String> = recs
            .iter()
            .filter_map(|r| match r {
                Record::Utf8 { id, text } => Some((*id, String::from_utf8_lossy(text).into_owned())),
                _ => None,
            })
            .collect();
        let class_names: Vec<&str> = recs
            .iter()
            .filter_map(|r| match r {
                Record::LoadClass { name_id, .. } => Some(strings[name_id].as_str()),
                _ => None,
            })
            .collect();
        for want in ["java.lang.String", "java.lang.Object[]", "byte[]", "Hello"] {
            assert!(class_names.contains(&want), "JDK {}: no LOAD CLASS for {want}", jdk.version);
        }
        assert!(class_names.iter().all(|n| !n.contains('/') && !n.starts_with('[')), "names must be in Java form");
        let mut serials: Vec<u32> = recs
            .iter()
            .filter_map(|r| match r {
                Record::LoadClass { serial, .. } => Some(*serial),
                _ => None,
            })
            .collect();
        serials.sort();
        serials.dedup();
        assert_eq!(serials.len(), class_names.len(), "one LOAD CLASS per class");
        let threads: Vec<&str> = recs
            .iter()
            .filter_map(|r| match r {
                Record::StartThread { name_id, .. } => Some(strings[name_id].as_str()),
                _ => None,
            })
            .collect();
        assert!(threads.contains(&"main") && threads.contains(&"hello-worker"), "threads: {threads:?}");
        assert!(recs.iter().any(|r| matches!(r, Record::EndThread { .. })));
    }
}

#[test]
fn binary_header_announces_segments_when_dumping_the_heap() {
    let dir = scratch("binary-102");
    let run = Java::new(&jdk17(), dir.path()).agentpath("heap=dump,format=b,doe=n").class("Hello").run();
    run.assert_success();
    let bytes = run.read_bytes("java.hprof");
    assert_eq!(decode(&bytes).0, "JAVA PROFILE 1.0.2");
}
