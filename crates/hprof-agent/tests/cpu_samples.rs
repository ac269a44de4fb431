//! cpu=samples on real JVMs: shares against the program's own CPU clocks, no samples on a thread blocked
//! in accept(), the report's layout and options, binary records, SIGQUIT, flame graphs.

mod report_support;

use hprof_format::binary::{Record, Records, parse_header};
use jvm_harness::{Java, JavaRun, JvmSlot, all_jdks, jdk17, scratch};
use report_support::{program_figures, ranked_section, traces};
use std::collections::HashMap;
use std::time::Duration;

/// Runs CpuAccuracy alone on the machine (both JVM slots): CPU-time timers are checked on kernel ticks,
/// and another busy process would skew which instructions the ticks land on.
fn accuracy_run(jdk: &jvm_harness::Jdk, options: &str, seconds: &str) -> (JavaRun, jvm_harness::TempDir) {
    accuracy_run_of(jdk, options, "CpuAccuracy", seconds)
}

fn accuracy_run_of(
    jdk: &jvm_harness::Jdk,
    options: &str,
    class: &str,
    seconds: &str,
) -> (JavaRun, jvm_harness::TempDir) {
    let dir = scratch("cpu");
    let _alone = JvmSlot::acquire_n(2);
    let run = Java::new(jdk, dir.path()).agentpath(options).class(class).arg(seconds).spawn_holding(None).wait();
    run.assert_success();
    (run, dir)
}

/// Samples per top method, from the CPU SAMPLES rows.
fn samples_by_method(rows: &[report_support::RankedRow]) -> HashMap<String, u64> {
    let mut m = HashMap::new();
    for r in rows {
        *m.entry(r.name.clone()).or_default() += r.count;
    }
    m
}

#[test]
fn shares_match_the_programs_own_cpu_clocks_and_the_idle_thread_gets_nothing() {
    for jdk in all_jdks() {
        // 8 s: about 800 samples, so that the sampling error (binomial, σ ≈ 1.5 points) stays well inside
        // the 5-point tolerance.
        // A statistical check: one miss beyond 5 points is retried once (printed), two in a row fail. CI saw
        // one 5.1-point miss on JDK 21 in about ten runs after the sampling engine moved; see the stop-14 note.
        let mut attempt = 0;
        let (own, text, total, rows, alpha, beta, share, what) = loop {
            attempt += 1;
            let (run, _dir) = accuracy_run(&jdk, "cpu=samples,interval=10,depth=6", "8");
            let own = program_figures(&run.stdout, "own-share");
            let text = run.read("java.hprof.txt");
            let (total, rows) = ranked_section(&text, "CPU SAMPLES", 0).expect("CPU SAMPLES section");
            let by = samples_by_method(&rows);
            let alpha = by.get("CpuAccuracy.hotAlpha").copied().unwrap_or(0) as f64;
            let beta = by.get("CpuAccuracy.hotBeta").copied().unwrap_or(0) as f64;
            let share = 100.0 * alpha / (alpha + beta);
            let what = format!(
                "JDK {}: alpha {share:.1}% vs own {:.1}% ({alpha}+{beta} of {total})",
                jdk.version, own["hotAlpha"]
            );
            if (share - own["hotAlpha"]).abs() <= 5.0 || attempt == 2 {
                break (own, text, total, rows, alpha, beta, share, what);
            }
            eprintln!("shares: {what} is off by more than 5 points; measuring once more");
        };
        assert!((share - own["hotAlpha"]).abs() <= 5.0, "{what} (second attempt)");

        // The thread blocked in accept() uses no CPU and must get no samples.
        let all_traces = traces(&text);
        let idle: u64 = rows
            .iter()
            .filter(|r| all_traces[&r.trace].frames.iter().any(|f| f.contains("accept")))
            .map(|r| r.count)
            .sum();
        assert!((idle as f64) < 0.01 * total as f64, "{what}: {idle} samples in accept()");

        // Samples promised by the interval for the program's own CPU time; startup adds a little more.
        let promised = own["cpu-ms"] / 10.0;
        assert!(alpha + beta >= 0.7 * promised, "{what}: {} samples for {promised} promised", alpha + beta);
        assert!(total as f64 <= 2.0 * promised + 100.0, "{what}: too many samples ({total})");
    }
}

#[test]
fn report_layout_cutoff_and_trace_options() {
    let (run, _dir) = accuracy_run(&jdk17(), "cpu=samples,cutoff=0.05,depth=2,thread=y,lineno=n", "1.5");
    let text = run.read("java.hprof.txt");
    assert!(text.contains("CPU SAMPLES BEGIN (total = "));
    assert!(text.contains("\nrank   self  accum   count trace method\n"));
    let (total, rows) = ranked_section(&text, "CPU SAMPLES", 0).unwrap();
    assert!(!rows.is_empty());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.rank as usize, i + 1);
        assert!(r.self_pct >= 5.0, "cutoff=0.05 keeps rows of 5% and more: {r:?}");
        let expected = 100.0 * r.count as f64 / total as f64;
        assert!((r.self_pct - expected).abs() < 0.01, "{r:?} of {total}");
    }
    let all = traces(&text);
    for r in &rows {
        let t = &all[&r.trace];
        assert!(t.frames.len() <= 2, "depth=2: {t:?}");
        assert!(t.thread.is_some_and(|s| s > 200_000), "thread=y: {t:?}");
        // lineno=n: file names but no line numbers.
        assert!(t.frames.iter().all(|f| f.ends_with(".java)") || f.ends_with("Native method)")), "{t:?}");
    }
    assert!(rows[0].name == "CpuAccuracy.hotAlpha", "{rows:?}");
}

/// Also: with HPROF_CPU_STATS=1 the agent times its own parts at exit (benches/cpu-samples/startup.sh).
#[test]
fn lines_are_resolved_by_default_and_the_agent_times_its_parts() {
    let dir = scratch("cpu");
    let run = {
        let _alone = JvmSlot::acquire_n(2);
        Java::new(&jdk17(), dir.path())
            .agentpath("cpu=samples")
            .env("HPROF_CPU_STATS", "1")
            .class("CpuAccuracy")
            .arg("1")
            .spawn_holding(None)
            .wait()
    };
    run.assert_success();
    let text = run.read("java.hprof.txt");
    let (_, rows) = ranked_section(&text, "CPU SAMPLES", 0).unwrap();
    let top = &traces(&text)[&rows[0].trace];
    assert!(top.frames[0].starts_with("CpuAccuracy.hotAlpha(CpuAccuracy.java:"), "{top:?}");
    assert!(top.frames.iter().any(|f| f.starts_with("CpuAccuracy.main(CpuAccuracy.java:")), "{top:?}");

    let parts = agent_parts(&run.stderr);
    assert!(parts["load"].0 > 0.0, "loading takes some CPU time: {parts:?}");
    // The program's own classes (CpuAccuracy's lambdas, ThreadMXBean's) are prepared after VMInit.
    assert!(parts["class prepares"].1 >= 5, "classes prepared after VMInit: {parts:?}");
    // CpuAccuracy's idle thread and the agent's own (worker, sampler) start after VMInit.
    assert!(parts["thread starts"].1 >= 3, "threads started after VMInit: {parts:?}");
    assert!(parts.contains_key("VMInit") && parts.contains_key("exit reports"), "{parts:?}");
}

/// The HPROF_CPU_STATS line `agent parts (…): load 4.8 ms, …, class prepares 9.1 ms (2950), …`: part → (ms,
/// count, 0 where none is printed).
fn agent_parts(stderr: &str) -> HashMap<String, (f64, u64)> {
    let line = stderr
        .lines()
        .find_map(|l| l.split_once("agent parts (CPU time of the threads doing them): "))
        .unwrap_or_else(|| panic!("no agent parts line in:\n{stderr}"))
        .1;
    line.split(", ")
        .map(|part| {
            let at = part.find(|c: char| c.is_ascii_digit()).unwrap_or_else(|| panic!("no figure in {part:?}"));
            let (name, figures) = (part[..at].trim(), &part[at..]);
            let ms: f64 = figures.split(" ms").next().unwrap().trim().parse().unwrap();
            let count = figures.split('(').nth(1).map_or(0, |c| c.trim_end_matches(')').parse().unwrap());
            (name.to_string(), (ms, count))
        })
        .collect()
}

#[test]
fn interval_sets_the_sample_rate() {
    let (run, _dir) = accuracy_run(&jdk17(), "cpu=samples,interval=25", "2");
    let own = program_figures(&run.stdout, "own-share");
    let (_, rows) = ranked_section(&run.read("java.hprof.txt"), "CPU SAMPLES", 0).unwrap();
    let by = samples_by_method(&rows);
    let hot = (by["CpuAccuracy.hotAlpha"] + by["CpuAccuracy.hotBeta"]) as f64;
    let promised = own["cpu-ms"] / 25.0;
    assert!(hot >= 0.7 * promised && hot <= 1.3 * promised, "{hot} samples, {promised} promised");
}

#[test]
fn binary_cpu_samples_agree_with_the_traces_they_name() {
    for jdk in all_jdks() {
        let (run, _dir) = accuracy_run(&jdk, "cpu=samples,format=b", "4");
        let bytes = run.read_bytes("java.hprof");
        let h = parse_header(&bytes).unwrap();
        let records: Vec<Record> =
            Records::new(&bytes, &h).map(|r| Record::decode(&r.unwrap(), h.id_size).unwrap()).collect();
        let strings: HashMap<u64, String> = records
            .iter()
            .filter_map(|r| match r {
                Record::Utf8 { id, text } => Some((*id, String::from_utf8_lossy(text).into_owned())),
                _ => None,
            })
            .collect();
        let classes: HashMap<u32, &str> = records
            .iter()
            .filter_map(|r| match r {
                Record::LoadClass { serial, name_id, .. } => Some((*serial, strings[name_id].as_str())),
                _ => None,
            })
            .collect();
        let frames: HashMap<u64, String> = records
            .iter()
            .filter_map(|r| match r {
                Record::Frame { id, method_name_id, class_serial, line, source_file_id, .. } => {
                    assert!(*line > 0 || *line == -1 || *line == -3, "line {line}");
                    assert!(*source_file_id == 0 || !strings[source_file_id].is_empty());
                    // Pseudo-frames ([GC active] …) belong to no class: serial 0.
                    let name = match classes.get(class_serial) {
                        Some(class) => format!("{class}.{}", strings[method_name_id]),
                        None if *class_serial == 0 => strings[method_name_id].clone(),
                        None => panic!("frame {id} names class serial {class_serial} without LOAD CLASS"),
                    };
                    Some((*id, name))
                }
                _ => None,
            })
            .collect();
        let trace_tops: HashMap<u32, String> = records
            .iter()
            .filter_map(|r| match r {
                Record::Trace { serial, frame_ids, .. } => {
                    Some((*serial, frame_ids.first().map(|f| frames[f].clone()).unwrap_or_default()))
                }
                _ => None,
            })
            .collect();
        let samples: Vec<_> = records.iter().filter(|r| matches!(r, Record::CpuSamples { .. })).collect();
        assert_eq!(samples.len(), 1, "JDK {}", jdk.version);
        let Record::CpuSamples { total, samples } = samples[0] else { unreachable!() };
        assert_eq!(*total as u64, samples.iter().map(|&(c, _)| c as u64).sum::<u64>(), "default cutoff keeps all");
        let alpha: u32 = samples.iter().filter(|(_, t)| trace_tops[t] == "CpuAccuracy.hotAlpha").map(|(c, _)| c).sum();
        let beta: u32 = samples.iter().filter(|(_, t)| trace_tops[t] == "CpuAccuracy.hotBeta").map(|(c, _)| c).sum();
        let own = program_figures(&run.stdout, "own-share");
        let share = 100.0 * alpha as f64 / (alpha + beta) as f64;
        assert!((share - own["hotAlpha"]).abs() <= 10.0, "JDK {}: {share} vs {}", jdk.version, own["hotAlpha"]);
    }
}

#[test]
fn sigquit_writes_the_samples_so_far_and_the_program_goes_on() {
    let dir = scratch("cpu-sigquit");
    let jvm = Java::new(&jdk17(), dir.path()).agentpath("cpu=samples").class("CpuAccuracy").arg("4").spawn();
    std::thread::sleep(Duration::from_millis(1500));
    jvm.signal(3);
    let run = jvm.wait();
    run.assert_success();
    assert!(run.stdout.contains("own-share"), "the program must finish");
    let text = run.read("java.hprof.txt");
    let (first, _) = ranked_section(&text, "CPU SAMPLES", 0).expect("dump on SIGQUIT");
    let (last, rows) = ranked_section(&text, "CPU SAMPLES", 1).expect("dump at exit");
    assert!(first > 20 && last > first, "reports are cumulative: {first} then {last}");
    assert_eq!(rows[0].name, "CpuAccuracy.hotAlpha");
}

#[test]
fn collapsed_and_flame_graph_hold_full_stacks() {
    let dir = scratch("cpu-flame");
    let run = Java::new(&jdk17(), dir.path())
        .agentpath("cpu=samples,depth=1,collapsed=stacks.txt,flamegraph=cpu.html")
        .class("CpuAccuracy")
        .arg("1.5")
        .run();
    run.assert_success();
    let folded = run.read("stacks.txt");
    let first = folded.lines().next().expect("collapsed lines");
    assert!(first.starts_with("CpuAccuracy.main;CpuAccuracy.hotAlpha "), "root first, full depth: {first}");
    let weights: u64 = folded.lines().map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap()).sum();
    let (total, _) = ranked_section(&run.read("java.hprof.txt"), "CPU SAMPLES", 0).unwrap();
    assert_eq!(weights, total, "every sample is in the folded file");
    let html = run.read("cpu.html");
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("CpuAccuracy.hotAlpha") && html.contains("<svg"));
}

#[test]
fn safepoint_sampler_works_and_shows_hprofs_bias() {
    let (run, _dir) = accuracy_run(&jdk17(), "cpu=samples,sampler=safepoint,depth=4", "2");
    let text = run.read("java.hprof.txt");
    let (total, rows) = ranked_section(&text, "CPU SAMPLES", 0).unwrap();
    let by = samples_by_method(&rows);
    assert!(by.get("CpuAccuracy.hotAlpha").copied().unwrap_or(0) > 0);
    let all = traces(&text);
    let idle: u64 =
        rows.iter().filter(|r| all[&r.trace].frames.iter().any(|f| f.contains("accept"))).map(|r| r.count).sum();
    // HPROF's method counts a thread blocked in native accept() as running.
    assert!(idle as f64 > 0.1 * total as f64, "{idle} of {total}");
}

#[test]
fn inlined_methods_get_their_own_samples() {
    for jdk in all_jdks() {
        let (run, _dir) = accuracy_run_of(&jdk, "cpu=samples,interval=10", "InlinedHot", "4");
        let text = run.read("java.hprof.txt");
        let (_, rows) = ranked_section(&text, "CPU SAMPLES", 0).expect("CPU SAMPLES section");
        let by = samples_by_method(&rows);
        let alpha = by.get("InlinedHot.alpha").copied().unwrap_or(0) as f64;
        let beta = by.get("InlinedHot.beta").copied().unwrap_or(0) as f64;
        let main = by.get("InlinedHot.main").copied().unwrap_or(0) as f64;
        let what = format!("JDK {}: alpha {alpha}, beta {beta}, main {main}", jdk.version);
        // Without debug information between safepoints nearly all samples land on main (measured: 98.7%).
        assert!(main < 0.2 * (alpha + beta + main), "{what}: inlined work attributed to its caller");
        let share = 100.0 * alpha / (alpha + beta);
        assert!((60.0..=90.0).contains(&share), "{what}: alpha's share {share:.1}% (3:1 work)");
    }
}
