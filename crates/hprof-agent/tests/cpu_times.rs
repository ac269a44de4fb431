//! cpu=times and cpu=old on real JVMs: exact call counts against what the program says it made, self-time
//! shares against the program's own CPU clocks, cpu=old's caller/callee lines, javac through -J, and every
//! JDK class verified after our rewrite.

mod report_support;

use jvm_harness::{Java, JvmSlot, all_jdks, jdk17, scratch};
use report_support::{program_figures, ranked_section, traces};
use std::collections::HashMap;
use std::time::Duration;

/// Calls per top method over all CPU TIME rows (cutoff=0 keeps every row).
fn calls_by_method(text: &str) -> HashMap<String, u64> {
    let (_, rows) = ranked_section(text, "CPU TIME (ms)", 0).expect("a CPU TIME (ms) section");
    let mut m = HashMap::new();
    for r in rows {
        *m.entry(r.name.clone()).or_default() += r.count;
    }
    m
}

#[test]
fn call_counts_are_exact_through_recursion_exceptions_constructors_lambdas_and_virtual_threads() {
    for jdk in all_jdks() {
        let dir = scratch("cputimes");
        let run = Java::new(&jdk, dir.path())
            .agentpath("cpu=times,cutoff=0,depth=4")
            .class("CallCounts")
            .timeout(Duration::from_secs(300))
            .run();
        run.assert_success().assert_no_crash_log();
        let expected = program_figures(&run.stdout, "expected-calls");
        assert!(expected.len() >= 9, "JDK {}: {}", jdk.version, run.stdout);
        if jdk.version != "17" {
            assert!(expected.contains_key("CallCounts.virtualBody"), "JDK {}: no virtual threads", jdk.version);
        }
        let text = run.read("java.hprof.txt");
        let got = calls_by_method(&text);
        for (method, &want) in &expected {
            assert_eq!(got.get(method).copied(), Some(want as u64), "JDK {}: calls of {method}", jdk.version);
        }
        // A method called once right after 5,000 exceptions left through middle() and thrower(): its trace
        // must be [afterExceptions, main], so every exceptional exit was seen.
        let (_, rows) = ranked_section(&text, "CPU TIME (ms)", 0).unwrap();
        let all = traces(&text);
        let row = rows.iter().find(|r| r.name == "CallCounts.afterExceptions").expect("afterExceptions row");
        let frames = &all[&row.trace].frames;
        assert_eq!(frames.len(), 2, "JDK {}: {frames:?}", jdk.version);
        assert!(frames[0].starts_with("CallCounts.afterExceptions(CallCounts.java:"), "{frames:?}");
        assert!(frames[1].starts_with("CallCounts.main(CallCounts.java:"), "{frames:?}");
        // depth=4 and the recursion: the deepest recursive trace is four recurse frames.
        assert!(
            all.values().any(|t| t.frames.len() == 4 && t.frames.iter().all(|f| f.starts_with("CallCounts.recurse(")))
        );
    }
}

#[test]
fn self_times_split_three_to_one_as_the_programs_own_cpu_clocks_say() {
    for jdk in all_jdks() {
        let dir = scratch("cputimes");
        let _alone = JvmSlot::acquire_n(2);
        let run = Java::new(&jdk, dir.path())
            .agentpath("cpu=times,depth=2")
            .class("CpuAccuracy")
            .arg("3")
            .timeout(Duration::from_secs(300))
            .spawn_holding(None)
            .wait();
        run.assert_success();
        let own = program_figures(&run.stdout, "own-share");
        let text = run.read("java.hprof.txt");
        let (total_ms, rows) = ranked_section(&text, "CPU TIME (ms)", 0).expect("CPU TIME section");
        let pct = |m: &str| rows.iter().filter(|r| r.name == m).map(|r| r.self_pct).sum::<f64>();
        let (alpha, beta) = (pct("CpuAccuracy.hotAlpha"), pct("CpuAccuracy.hotBeta"));
        let share = 100.0 * alpha / (alpha + beta);
        let what =
            format!("JDK {}: alpha {share:.1}% vs own {:.1}% (total {total_ms} ms)", jdk.version, own["hotAlpha"]);
        assert!((share - own["hotAlpha"]).abs() <= 5.0, "{what}");
        // The two methods are nearly all of the program's CPU time, which the total must cover.
        assert!(total_ms as f64 >= 0.8 * own["cpu-ms"], "{what}: own cpu-ms {}", own["cpu-ms"]);
        assert!(total_ms as f64 <= 1.5 * own["cpu-ms"] + 2000.0, "{what}: own cpu-ms {}", own["cpu-ms"]);
    }
}

#[test]
fn cpu_old_prints_callee_caller_pairs_with_exact_counts_and_nothing_else() {
    let dir = scratch("cputimes");
    let run = Java::new(&jdk17(), dir.path())
        .agentpath("cpu=old")
        .class("CallCounts")
        .timeout(Duration::from_secs(300))
        .run();
    run.assert_success();
    let text = run.read("java.hprof.txt");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("count callee caller time"), "{}", &text[..text.len().min(300)]);
    assert!(!text.contains("JAVA PROFILE") && !text.contains("THREAD START") && !text.contains("TRACE "));
    let mut pairs: HashMap<(String, String), u64> = HashMap::new();
    // The pairs, then the methods not timed (natives at least).
    let lines: Vec<&str> = lines.collect();
    let notes = lines.iter().position(|l| l.starts_with("(not timed: ")).expect("notes after the pairs");
    assert!(lines[notes].ends_with(" native methods, which have no bytecode)"), "{}", lines[notes]);
    assert!(lines[notes..].iter().all(|l| l.starts_with("(not timed: ")), "{:?}", &lines[notes..]);
    for l in &lines[..notes] {
        // count callee caller time; a caller may be "<unknown caller>", with its space.
        let w: Vec<&str> = l.split(' ').collect();
        assert!(w.len() >= 4, "{l}");
        let count: u64 = w[0].parse().unwrap_or_else(|_| panic!("{l}"));
        let _ms: u64 = w[w.len() - 1].parse().unwrap_or_else(|_| panic!("{l}"));
        let caller = w[2..w.len() - 1].join(" ");
        *pairs.entry((w[1].to_owned(), caller)).or_default() += count;
    }
    // `hprof print` shows cpu=old's file as it is.
    assert_eq!(hprof_print(&dir.path().join("java.hprof.txt")), text);
    let main = "CallCounts.main([Ljava/lang/String;)V";
    let want = [
        ("CallCounts.middle(I)V", main, 5000),
        ("CallCounts.thrower(I)V", "CallCounts.middle(I)V", 5000),
        ("CallCounts.recurse(I)I", main, 1000),
        ("CallCounts.recurse(I)I", "CallCounts.recurse(I)I", 99_000),
        ("CallCounts$Point.<init>(I)V", main, 30_000),
        ("CallCounts.syncInc()V", main, 50_000),
        ("CallCounts.lambdaBody()V", "CallCounts.lambda$main$0()V", 40_000),
    ];
    for (callee, caller, n) in want {
        assert_eq!(pairs.get(&(callee.to_owned(), caller.to_owned())).copied(), Some(n), "{callee} from {caller}");
    }
}

#[test]
fn javac_with_cpu_times_through_dash_j_writes_a_cpu_time_section() {
    for jdk in all_jdks() {
        if !jdk.bin("javac").is_file() {
            jvm_harness::skip(format!("JDK {} has no javac: javac -J-agentpath ran on the others only", jdk.version));
            continue;
        }
        let dir = scratch("cputimes-javac");
        std::fs::write(
            dir.path().join("Hello.java"),
            "public class Hello { public static void main(String[] a) { System.out.println(\"hi\"); } }",
        )
        .unwrap();
        let _slot = JvmSlot::acquire();
        let out = std::process::Command::new(jdk.bin("javac"))
            .arg(format!("-J-agentpath:{}=cpu=times,cutoff=0,file=javac.txt", jvm_harness::agent_library().display()))
            .arg("Hello.java")
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "JDK {}: {}", jdk.version, String::from_utf8_lossy(&out.stderr));
        assert!(dir.path().join("Hello.class").is_file(), "javac must still compile");
        let text = std::fs::read_to_string(dir.path().join("javac.txt")).unwrap();
        let calls = calls_by_method(&text);
        // javac compiles the one file once: JavaCompiler.compile runs exactly once (cutoff=0: its own
        // time is too small a share to be sure of a row under the default cutoff).
        let compile = calls.get("com.sun.tools.javac.main.JavaCompiler.compile").copied();
        assert_eq!(compile, Some(1), "JDK {}: JavaCompiler.compile calls", jdk.version);
        assert!(calls.len() > 50, "JDK {}: only {} methods in CPU TIME", jdk.version, calls.len());
    }
}

/// Every class of the JDK's own modules loaded and linked under -Xverify:all with our probes in them.
#[test]
fn every_jdk_class_verifies_after_the_rewrite() {
    let jdk = jdk17();
    let dir = scratch("cputimes-verify");
    let run = Java::new(&jdk, dir.path())
        .vm_arg("-Xverify:all")
        .agentpath("cpu=times,file=verify.txt")
        .class("LinkAll")
        .arg("jrt")
        .timeout(Duration::from_secs(600))
        .run();
    run.assert_success().assert_no_crash_log();
    let summary = run.stdout.lines().find(|l| l.starts_with("checked ")).expect("LinkAll's summary");
    eprintln!("JDK {}: {summary}", jdk.version);
    let n: Vec<u64> = summary.split(|c: char| !c.is_ascii_digit()).filter_map(|w| w.parse().ok()).collect();
    let (checked, linked, verify_errors) = (n[0], n[1], n[2]);
    let errors: Vec<&str> = run.stdout.lines().filter(|l| l.starts_with("VerifyError")).take(20).collect();
    assert_eq!(verify_errors, 0, "{summary}\n{}", errors.join("\n"));
    assert!(checked > 20_000, "{summary}");
    assert!(linked as f64 > 0.85 * checked as f64, "{summary}");
    // The probes were really there: over a hundred thousand methods rewritten.
    let timed: u64 = run
        .stderr
        .split("cpu=times: ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    assert!(timed > 100_000, "only {timed} methods rewritten:\n{}", run.stderr);
}

#[test]
fn sigquit_writes_the_times_so_far_and_thread_y_keeps_threads_apart() {
    let dir = scratch("cputimes-sigquit");
    let jvm = Java::new(&jdk17(), dir.path())
        .agentpath("cpu=times,thread=y,depth=2")
        .class("CpuAccuracy")
        .arg("4")
        .timeout(Duration::from_secs(300))
        .spawn();
    std::thread::sleep(Duration::from_millis(2500));
    jvm.signal(3);
    let run = jvm.wait();
    run.assert_success();
    assert!(run.stdout.contains("own-share"), "the program must finish");
    let text = run.read("java.hprof.txt");
    let (first, _) = ranked_section(&text, "CPU TIME (ms)", 0).expect("dump on SIGQUIT");
    let (last, rows) = ranked_section(&text, "CPU TIME (ms)", 1).expect("dump at exit");
    assert!(last > first, "reports are cumulative: {first} then {last} ms");
    // (On a loaded machine the signal may come while the JVM is still starting: no more is asked of the
    // first report.)
    let alpha = rows.iter().find(|r| r.name == "CpuAccuracy.hotAlpha").expect("hotAlpha at exit");
    assert!(alpha.self_pct > 30.0, "hotAlpha's share at exit: {}%", alpha.self_pct);
    // thread=y: the hot methods' traces name main's thread; depth=2 cuts them to two frames.
    let all = traces(&text);
    let hot = &all[&alpha.trace];
    assert!(hot.thread.is_some(), "thread=y traces carry a thread");
    assert_eq!(hot.frames.len(), 2, "{:?}", hot.frames);

    // `hprof print` shows both sections again, row for row, with the traces they name.
    let printed = hprof_print(&dir.path().join("java.hprof.txt"));
    for n in 0..2 {
        assert_eq!(ranked_section(&printed, "CPU TIME (ms)", n), ranked_section(&text, "CPU TIME (ms)", n), "{n}");
    }
    assert!(ranked_section(&printed, "CPU TIME (ms)", 2).is_none());
    assert_eq!(traces(&printed)[&alpha.trace], *hot);
    assert!(printed.contains("(not timed: "), "the notes are printed too");
}

/// `hprof print FILE`'s output.
fn hprof_print(file: &std::path::Path) -> String {
    let out = std::process::Command::new(jvm_harness::hprof_binary()).arg("print").arg(file).output().unwrap();
    assert!(out.status.success(), "hprof print {}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Java source of a class with two methods of about 33 KB of bytecode, each with 100 returns whose probes
/// push a 16-bit jump out of reach. In `big` the `goto` that ends the if-branch jumps over an else-branch of
/// 32,405 bytes: the rewriter widens it to `goto_w`. In `bigIf` the `ifgt` that skips the if-branch does,
/// and nothing branches to the instruction after it, so javac wrote no stack map frame there: widening it
/// into `ifle +8; goto_w` needs a frame inferred (locals int, int, long, String). `huge` is 65,524 bytes,
/// too big for its probes: it must be named in the report's notes.
fn big_method_source() -> String {
    let mut s = String::from("public class BigMethod {\n  static int big(int x) {\n    int r;\n");
    s.push_str("    if (x > 0) { r = x; } else {\n      r = 0;\n");
    for k in 0..100 {
        for _ in 0..45 {
            s.push_str("      r += x * 7;\n");
        }
        s.push_str(&format!("      if (x == -{}) return {};\n", k + 1, k + 1));
    }
    s.push_str("    }\n    return r;\n  }\n");
    s.push_str("  static int bigIf(int x) {\n    int r = x;\n    long acc = x * 3L;\n    String tag = \"t\" + x;\n");
    s.push_str("    if (x <= 0) {\n");
    for k in 0..100 {
        for _ in 0..44 {
            s.push_str("      r += x * 7;\n");
        }
        s.push_str(&format!("      if (x == -{}) return {} + tag.length() + (int) acc;\n", k + 1, k + 1));
    }
    s.push_str("    }\n    return r + tag.length();\n  }\n");
    s.push_str("  static int huge(int x) {\n    int r = x;\n");
    for _ in 0..9360 {
        s.push_str("    r += x * 7;\n");
    }
    s.push_str("    return r;\n  }\n");
    s.push_str(
        "  public static void main(String[] a) {\n    long sum = 0;\n    \
         for (int i = -150; i <= 150; i++) sum += big(i) + bigIf(i);\n    sum += huge(3);\n    \
         System.out.println(\"sum \" + sum);\n  }\n}\n",
    );
    s
}

#[test]
fn methods_whose_branches_must_widen_keep_their_meaning_and_are_counted() {
    let dir = scratch("cputimes-big");
    std::fs::write(dir.path().join("BigMethod.java"), big_method_source()).unwrap();
    let javac = std::process::Command::new(jdk17().bin("javac"))
        .arg("BigMethod.java")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(javac.status.success(), "{}", String::from_utf8_lossy(&javac.stderr));
    // javac itself must not have needed wide jumps, or the rewriter would have nothing to widen; and
    // bigIf's far conditional must have no frame after it, or there would be nothing to infer.
    let bytes = std::fs::read(dir.path().join("BigMethod.class")).unwrap();
    let class = classfile::ClassFile::parse(&bytes).unwrap();
    for name in ["big", "bigIf"] {
        let m = class.methods.iter().find(|m| class.pool.utf8(m.name_index).unwrap() == name).unwrap();
        let (_, code) = class.find_attribute(&m.attributes, "Code").unwrap();
        let code = classfile::code::CodeAttribute::parse(&code.info).unwrap();
        let insns = classfile::opcodes::decode(&code.code).unwrap();
        assert!(insns.iter().all(|i| i.opcode != classfile::opcodes::GOTO_W), "javac used goto_w already");
        assert!(code.code.len() > 32_000, "{name}: {} bytes", code.code.len());
        if name == "bigIf" {
            let far = insns.iter().find(|i| i.opcode == 0x9d).expect("bigIf's ifgt");
            let (_, smt) = class.find_attribute(&code.attributes, "StackMapTable").unwrap();
            let frames = classfile::stack_map::decode(&smt.info).unwrap();
            assert!(frames.iter().all(|f| f.offset != far.offset + 3), "javac wrote a frame after ifgt");
            let classfile::opcodes::Kind::Branch(t) = far.kind else { panic!() };
            assert!(t - far.offset > 32_767 - 600, "ifgt jumps {} bytes: too near to widen", t - far.offset);
        }
    }

    for jdk in all_jdks() {
        let _slot = JvmSlot::acquire();
        let plain = std::process::Command::new(jdk.java())
            .args(["-Xverify:all", "-cp", ".", "BigMethod"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let profiled = std::process::Command::new(jdk.java())
            .arg("-Xverify:all")
            .arg(format!("-agentpath:{}=cpu=times,cutoff=0", jvm_harness::agent_library().display()))
            .args(["-cp", ".", "BigMethod"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let (plain_out, profiled_out) =
            (String::from_utf8_lossy(&plain.stdout), String::from_utf8_lossy(&profiled.stdout));
        let stderr = String::from_utf8_lossy(&profiled.stderr);
        assert!(plain_out.starts_with("sum "), "JDK {}: {plain_out}", jdk.version);
        assert_eq!(profiled_out, plain_out, "JDK {}: {stderr}", jdk.version);
        assert!(!stderr.contains("BigMethod.big"), "JDK {}: a big method was left out:\n{stderr}", jdk.version);
        let text = std::fs::read_to_string(dir.path().join("java.hprof.txt")).unwrap();
        // The method too big for probes is in the report's notes, once, with its reason, and has no row.
        let huge: Vec<&str> = text.lines().filter(|l| l.contains("BigMethod.huge")).collect();
        assert_eq!(
            huge,
            ["(not timed: BigMethod.huge(I)I: the code would grow to 65543 bytes, over the 65535 limit)"],
            "JDK {}",
            jdk.version
        );
        assert!(
            text.lines()
                .any(|l| l.starts_with("(not timed: ") && l.ends_with(" native methods, which have no bytecode)"))
        );
        let calls = calls_by_method(&text);
        assert_eq!(calls.get("BigMethod.big").copied(), Some(301), "JDK {}", jdk.version);
        assert_eq!(calls.get("BigMethod.bigIf").copied(), Some(301), "JDK {}", jdk.version);
    }
}

/// The report is whole and its counts exact when the JVM ends abruptly: System.exit from another thread
/// while main sleeps inside a call, and SIGTERM (the probes' trees are read at VM death, over JNI).
#[test]
fn counts_are_exact_after_system_exit_and_sigterm() {
    for jdk in all_jdks() {
        for mode in ["exit", "term"] {
            let dir = scratch("cputimes-exit");
            let mut jvm = Java::new(&jdk, dir.path())
                .agentpath("cpu=times,cutoff=0")
                .class("TimedExit")
                .arg(mode)
                .timeout(Duration::from_secs(300))
                .spawn();
            let what = format!("JDK {} {mode}", jdk.version);
            if mode == "term" {
                jvm.wait_for_stdout("ready", Duration::from_secs(240));
                jvm.signal(15);
            }
            let run = jvm.wait();
            assert_eq!(run.code(), Some(if mode == "exit" { 0 } else { 143 }), "{what}: {}", run.stderr);
            let expected = program_figures(&run.stdout, "expected-calls");
            let text = run.read("java.hprof.txt");
            assert!(text.contains("CPU TIME (ms) END"), "{what}: the report is whole");
            let got = calls_by_method(&text);
            for (method, &want) in &expected {
                assert_eq!(got.get(method).copied(), Some(want as u64), "{what}: calls of {method}");
            }
            assert_eq!(got.get("TimedExit.waitForever").copied(), Some(1), "{what}: the call still running");
        }
    }
}
