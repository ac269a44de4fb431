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
    for l in lines {
        // count callee caller time; a caller may be "<unknown caller>", with its space.
        let w: Vec<&str> = l.split(' ').collect();
        assert!(w.len() >= 4, "{l}");
        let count: u64 = w[0].parse().unwrap_or_else(|_| panic!("{l}"));
        let _ms: u64 = w[w.len() - 1].parse().unwrap_or_else(|_| panic!("{l}"));
        let caller = w[2..w.len() - 1].join(" ");
        *pairs.entry((w[1].to_owned(), caller)).or_default() += count;
    }
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
            .arg(format!("-J-agentpath:{}=cpu=times,file=javac.txt", jvm_harness::agent_library().display()))
            .arg("Hello.java")
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "JDK {}: {}", jdk.version, String::from_utf8_lossy(&out.stderr));
        assert!(dir.path().join("Hello.class").is_file(), "javac must still compile");
        let text = std::fs::read_to_string(dir.path().join("javac.txt")).unwrap();
        let calls = calls_by_method(&text);
        // javac compiles the one file once: JavaCompiler.compile runs exactly once.
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
