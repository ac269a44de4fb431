//! cpu=wall on real JVMs (java/programs/WallClock.java): each thread's states against the program's own
//! clocks, virtual threads named by themselves (not their carriers), the SAMPLE TIMES record read back by
//! `hprof export --from/--to`, and the threads=/exclude= filters.

mod report_support;

use hprof_format::binary::Record;
use jvm_harness::{Java, all_jdks, hprof_binary, jdk17, scratch};
use report_support::{binary_records, program_figures, strings_by_id};
use std::collections::{HashMap, HashSet};
use std::process::Command;

/// A binary profile's samples: (thread name, frames top first — the state last —, samples), from its last
/// CPU SAMPLES record (which covers the run).
fn samples(bytes: &[u8]) -> Vec<(String, Vec<String>, u64)> {
    let records = binary_records(bytes);
    let strings = strings_by_id(&records);
    let mut classes = HashMap::new();
    let mut frames = HashMap::new();
    let mut traces = HashMap::new();
    let mut threads = HashMap::new();
    let mut last = None;
    for r in &records {
        match r {
            Record::LoadClass { serial, name_id, .. } => {
                classes.insert(*serial, strings[name_id].clone());
            }
            Record::Frame { id, method_name_id, class_serial, .. } => {
                let method = strings.get(method_name_id).cloned().unwrap_or_default();
                let name = match classes.get(class_serial) {
                    Some(class) => format!("{class}.{method}"),
                    None => method,
                };
                frames.insert(*id, name);
            }
            Record::Trace { serial, thread_serial, frame_ids } => {
                traces.insert(*serial, (*thread_serial, frame_ids.iter().map(|f| frames[f].clone()).collect()));
            }
            Record::StartThread { serial, name_id, .. } => {
                threads.insert(*serial, strings.get(name_id).cloned().unwrap_or_default());
            }
            Record::CpuSamples { samples, .. } => last = Some(samples.clone()),
            _ => {}
        }
    }
    last.expect("a CPU SAMPLES record")
        .into_iter()
        .map(|(count, trace)| {
            let (thread, frames): &(u32, Vec<String>) = &traces[&trace];
            (threads.get(thread).cloned().unwrap_or_default(), frames.clone(), count as u64)
        })
        .collect()
}

/// The share (percent) of a thread's samples whose state (root frame) is `state`.
fn state_share(samples: &[(String, Vec<String>, u64)], thread: &str, state: &str) -> f64 {
    let of_thread = samples.iter().filter(|s| s.0 == thread);
    let all: u64 = of_thread.clone().map(|s| s.2).sum();
    let in_state: u64 = of_thread.filter(|s| s.1.last().map(String::as_str) == Some(state)).map(|s| s.2).sum();
    assert!(all >= 100, "only {all} samples of {thread}");
    100.0 * in_state as f64 / all as f64
}

/// `phase NAME start-ms=… end-ms=…` from the program.
fn phase(stdout: &str, name: &str) -> (u64, u64) {
    let f = program_figures(stdout, &format!("phase {name} "));
    (f["start-ms"] as u64, f["end-ms"] as u64)
}

/// `hprof export --format collapsed --from … --to …`: (stack, samples) lines.
fn collapsed_between(file: &std::path::Path, from_ms: u64, to_ms: u64) -> Vec<(String, u64)> {
    let out = Command::new(hprof_binary())
        .args(["export", "--format", "collapsed", "--from", &format!("{from_ms}ms"), "--to", &format!("{to_ms}ms")])
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "hprof export: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').unwrap();
            (stack.to_owned(), n.parse().unwrap())
        })
        .collect()
}

#[test]
fn wall_shares_match_the_programs_clocks_virtual_threads_are_named_and_time_ranges_select_phases() {
    for jdk in all_jdks() {
        let v = jdk.version;
        // A statistical check on a shared machine: a tick the scheduler delays samples the moment a CPU
        // frees, which correlates with the threads' own switches; one miss beyond 3 points is measured once
        // more (printed), two in a row fail.
        let mut attempt = 0;
        let (_dir, run, s) = loop {
            attempt += 1;
            let dir = scratch("wall");
            // 6 s of the platform phase at 10 ms: about 600 samples per thread.
            let run = Java::new(&jdk, dir.path())
                .agentpath("cpu=wall,interval=10,thread=y,depth=64,format=b,file=wall.hprof")
                .class("WallClock")
                .args(&["6", "2"])
                .run();
            run.assert_success();
            let own = program_figures(&run.stdout, "own ");
            let s = samples(&run.read_bytes("wall.hprof"));
            let misses: Vec<String> = [
                ("sleeper", "[sleeping]", "sleeper-sleeping"),
                ("blocker", "[blocked_on_monitor]", "blocker-blocked"),
                ("reader", "[in_native]", "reader-reading"),
            ]
            .into_iter()
            .filter_map(|(thread, state, own_key)| {
                let (ours, theirs) = (state_share(&s, thread, state), own[own_key]);
                ((ours - theirs).abs() > 3.0).then(|| format!("{thread} {state} {ours:.1}% vs its own {theirs:.1}%"))
            })
            .collect();
            if misses.is_empty() {
                break (dir, run, s);
            }
            assert!(attempt < 2, "JDK {v}, second attempt: {misses:?}");
            eprintln!("wall shares: JDK {v}: {misses:?}; measuring once more");
        };
        let spinning = state_share(&s, "spinner", "[running]");
        assert!(spinning >= 97.0, "JDK {v}: spinner running {spinning:.1}%");

        // Every trace ends in a state.
        assert!(s.iter().all(|x| x.1.last().is_some_and(|f| f.starts_with('['))), "JDK {v}: a trace without a state");

        // The platform phase, chosen by time, holds its threads' methods and nothing of the virtual phase.
        let (p_start, p_end) = phase(&run.stdout, "platform");
        let platform = collapsed_between(&run.file("wall.hprof"), p_start + 300, p_end - 300);
        let has = |lines: &[(String, u64)], m: &str| lines.iter().any(|(stack, _)| stack.contains(m));
        assert!(has(&platform, "WallClock.sleeperLoop") && has(&platform, "WallClock.spinnerLoop"), "JDK {v}");
        assert!(!has(&platform, "WallClock.virtualNap"), "JDK {v}: the virtual phase leaked into the platform's");
        // The flame graph of that range is titled by its mode.
        let svg = run.file("platform.svg");
        let flame = Command::new(hprof_binary())
            .args(["flame", "--from", &format!("{}ms", p_start + 300), "--to", &format!("{}ms", p_end - 300), "-o"])
            .arg(&svg)
            .arg(run.file("wall.hprof"))
            .output()
            .unwrap();
        assert!(flame.status.success(), "hprof flame: {}", String::from_utf8_lossy(&flame.stderr));
        assert!(std::fs::read_to_string(&svg).unwrap().contains("Wall clock (cpu=wall)"), "JDK {v}: flame title");

        if v == "17" {
            continue;
        }
        // 1,000 virtual threads parked in virtualNap: sampled by their own names (beyond the 256-thread cap,
        // by turns), and the two spinning ones by theirs, never as their carriers.
        let napping: HashSet<&str> =
            s.iter().filter(|x| x.1.iter().any(|f| f == "WallClock.virtualNap")).map(|x| x.0.as_str()).collect();
        assert!(napping.iter().all(|t| t.starts_with("vt-")), "JDK {v}: virtualNap on {napping:?}");
        assert!(napping.len() >= 990, "JDK {v}: only {} of 1000 virtual threads sampled", napping.len());
        let spin: HashSet<&str> =
            s.iter().filter(|x| x.1.iter().any(|f| f == "WallClock.virtualSpin")).map(|x| x.0.as_str()).collect();
        assert!(!spin.is_empty() && spin.iter().all(|t| t.starts_with("vt-spin-")), "JDK {v}: virtualSpin on {spin:?}");
        let nap_states: HashSet<&str> = s
            .iter()
            .filter(|x| x.1.iter().any(|f| f == "WallClock.virtualNap"))
            .filter_map(|x| x.1.last().map(String::as_str))
            .collect();
        assert!(nap_states.contains("[sleeping]"), "JDK {v}: napping virtual threads in {nap_states:?}");
        // Weights keep the shares: each thread weighs one sample per 10 ms of wall time, whether it was
        // walked in a tick (by turns beyond the cap) or a tick came late.
        let (v_start, v_end) = phase(&run.stdout, "virtual");
        let (from, to) = (v_start + 300, v_end - 300);
        let virtual_lines = collapsed_between(&run.file("wall.hprof"), from, to);
        assert!(has(&virtual_lines, "WallClock.virtualNap") && !has(&virtual_lines, "WallClock.sleeperLoop"));
        let nap_weight: u64 =
            virtual_lines.iter().filter(|(stack, _)| stack.contains("WallClock.virtualNap")).map(|l| l.1).sum();
        let expected = 1000.0 * (to - from) as f64 / 10.0;
        let ratio = nap_weight as f64 / expected;
        assert!((0.9..=1.1).contains(&ratio), "JDK {v}: napping threads weigh {nap_weight}, expected {expected:.0}");
    }
}

#[test]
fn a_thread_filter_keeps_only_matching_threads_and_exclude_drops_stacks() {
    let jdk = jdk17();
    let dir = scratch("wall");
    let run = Java::new(&jdk, dir.path())
        .agentpath("cpu=wall,interval=10,thread=y,depth=64,format=b,file=wall.hprof,threads=s*er,exclude=*.sleep0")
        .class("WallClock")
        .args(&["2", "0"])
        .run();
    run.assert_success();
    let s = samples(&run.read_bytes("wall.hprof"));
    let threads: HashSet<&str> = s.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(threads, HashSet::from(["sleeper", "spinner"]), "threads=s*er keeps sleeper and spinner only");
    assert!(s.iter().all(|x| !x.1.iter().any(|f| f.ends_with(".sleep0"))), "exclude=*.sleep0 dropped no stack");
    assert!(s.iter().any(|x| x.0 == "sleeper" && x.1.iter().any(|f| f == "WallClock.spinFor")));
}
