//! monitor=y on real JVMs: MONITOR TIME against contention the program measured itself, no contention where
//! there is none, the live WAIT / WAITED lines, MONITOR DUMP on SIGQUIT, and the lock flame graph.

use jvm_harness::{Java, JavaRun, Jdk, all_jdks, jdk17, scratch};
use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// `name=value` lines a test program printed.
fn printed(stdout: &str, name: &str) -> u64 {
    let prefix = format!("{name}=");
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("the program did not print {name}=…:\n{stdout}"))
}

/// Thread serial by thread name, from THREAD START lines.
fn thread_serial(text: &str, name: &str) -> u32 {
    let needle = format!("name=\"{name}\"");
    text.lines()
        .filter(|l| l.starts_with("THREAD START") && l.contains(&needle))
        .find_map(|l| l.split("id = ").nth(1)?.split(',').next()?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no THREAD START for {name}"))
}

/// The frames of every TRACE, by serial.
fn traces(text: &str) -> HashMap<u32, Vec<String>> {
    let mut out = HashMap::new();
    let mut current: Option<(u32, Vec<String>)> = None;
    for line in text.lines() {
        if let Some(frame) = line.strip_prefix('\t')
            && let Some((_, frames)) = current.as_mut()
        {
            frames.push(frame.to_owned());
            continue;
        }
        if let Some((serial, frames)) = current.take() {
            out.insert(serial, frames);
        }
        if let Some(rest) = line.strip_prefix("TRACE ") {
            let serial = rest.split(':').next().unwrap().trim().parse().expect("trace serial");
            current = Some((serial, Vec::new()));
        }
    }
    if let Some((serial, frames)) = current {
        out.insert(serial, frames);
    }
    out
}

struct MonitorTimeRow {
    self_percent: f64,
    count: u64,
    trace: u32,
    monitor: String,
}

/// The last MONITOR TIME section: its total in ms and its rows.
fn last_monitor_time(text: &str) -> (u64, Vec<MonitorTimeRow>) {
    let start = text.rfind("MONITOR TIME BEGIN (total = ").expect("no MONITOR TIME section");
    monitor_time_at(text, start)
}

fn monitor_time_at(text: &str, start: usize) -> (u64, Vec<MonitorTimeRow>) {
    let section = &text[start..text[start..].find("MONITOR TIME END").expect("MONITOR TIME END") + start];
    let total = section["MONITOR TIME BEGIN (total = ".len()..].split(' ').next().unwrap().parse().unwrap();
    let rows = section
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("rank"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert!(f.len() >= 7 && l.ends_with(" (Java)"), "malformed MONITOR TIME row {l:?}");
            MonitorTimeRow {
                self_percent: f[1].trim_end_matches('%').parse().unwrap(),
                count: f[3].parse().unwrap(),
                trace: f[4].parse().unwrap(),
                monitor: f[5..f.len() - 1].join(" "),
            }
        })
        .collect();
    (total, rows)
}

fn run_monitored(jdk: &Jdk, dir: &Path, options: &str, class: &str, args: &[&str]) -> (JavaRun, String) {
    let java = Java::new(jdk, dir).agentpath(options).class(class);
    let run = args.iter().fold(java, |j, a| j.arg(a)).run();
    run.assert_success();
    let text = run.read("java.hprof.txt");
    (run, text)
}

#[test]
fn monitor_time_is_the_true_blocked_time_on_the_synchronizing_trace() {
    for jdk in all_jdks() {
        let dir = scratch("monitors");
        let (run, text) = run_monitored(&jdk, dir.path(), "monitor=y", "LockContention", &[]);
        let what = format!("JDK {}", jdk.version);
        let expected_ms = printed(&run.stdout, "expected_wait_ns") as f64 / 1e6;
        let surely_contended = printed(&run.stdout, "surely_contended");
        let acquisitions = printed(&run.stdout, "acquisitions");
        assert!(expected_ms > 1000.0, "{what}: the program barely waited ({expected_ms} ms); the test proves nothing");

        let (total_ms, rows) = last_monitor_time(&text);
        let ratio = total_ms as f64 / expected_ms;
        assert!(
            (0.8..=1.2).contains(&ratio),
            "{what}: MONITOR TIME total {total_ms} ms, the program measured {expected_ms:.0} ms of waiting"
        );
        // One row per trace: compiled and interpreted frames may place the wait on different lines.
        let shared: Vec<&MonitorTimeRow> = rows.iter().filter(|r| r.monitor == "LockContention$SharedLock").collect();
        let share: f64 = shared.iter().map(|r| r.self_percent).sum();
        assert!(share > 90.0, "{what}: the shared lock has only {share}% of the time:\n{text}");
        let count: u64 = shared.iter().map(|r| r.count).sum();
        assert!(
            count >= surely_contended && count <= acquisitions,
            "{what}: count {count} must cover the {surely_contended} entries that certainly blocked, out of {acquisitions}"
        );
        let traces = traces(&text);
        for row in &shared {
            let frames = &traces[&row.trace];
            assert!(
                frames[0].starts_with("LockContention.transfer(LockContention.java:"),
                "{what}: TRACE {} must start at the synchronizing method: {frames:?}",
                row.trace
            );
        }
        assert!(
            !rows.iter().any(|r| r.monitor.contains("PrivateLock")),
            "{what}: the per-thread locks were never contended"
        );
    }
}

#[test]
fn virtual_threads_are_timed_even_when_they_change_carriers() {
    for jdk in all_jdks().into_iter().filter(|j| j.version != "17") {
        let dir = scratch("monitors");
        let (run, text) = run_monitored(&jdk, dir.path(), "monitor=y", "VirtualContention", &[]);
        let expected_ms = printed(&run.stdout, "expected_wait_ns") as f64 / 1e6;
        let (total_ms, rows) = last_monitor_time(&text);
        let share: f64 =
            rows.iter().filter(|r| r.monitor == "VirtualContention$VirtualLock").map(|r| r.self_percent).sum();
        let ours_ms = total_ms as f64 * share / 100.0;
        assert!(
            (ours_ms - expected_ms).abs() <= 20.0 + expected_ms * 0.2,
            "JDK {}: MONITOR TIME has {ours_ms:.0} ms on the lock, the virtual threads measured {expected_ms:.0} ms",
            jdk.version
        );
    }
}

#[test]
fn uncontended_locks_report_no_contention() {
    for jdk in all_jdks() {
        // One thread: the shared lock and its private lock are taken 50 000 times without a rival.
        let dir = scratch("monitors");
        let (_, text) = run_monitored(&jdk, dir.path(), "monitor=y", "LockContention", &["1", "50", "1"]);
        let (_, rows) = last_monitor_time(&text);
        let ours: Vec<&String> = rows.iter().map(|r| &r.monitor).filter(|m| m.starts_with("LockContention")).collect();
        assert!(ours.is_empty(), "JDK {}: false contention on {ours:?}", jdk.version);
    }
}

/// The number after `key=` in a line.
fn field(line: &str, key: &str) -> u64 {
    line.split(&format!("{key}=")).nth(1).and_then(|v| v.split(',').next()?.parse().ok()).unwrap()
}

#[test]
fn object_wait_prints_wait_and_waited_lines() {
    for jdk in all_jdks() {
        let dir = scratch("monitors");
        let (run, text) = run_monitored(&jdk, dir.path(), "monitor=y", "TimedWaiter", &[]);
        let what = format!("JDK {}", jdk.version);
        let main = thread_serial(&text, "main");
        let bell = thread_serial(&text, "bell-waiter");
        let line_index = |prefix: &str| {
            text.lines().position(|l| l.starts_with(prefix)).unwrap_or_else(|| panic!("{what}: no line {prefix:?}"))
        };
        let lines: Vec<&str> = text.lines().collect();

        let wait = line_index(&format!("WAIT: MONITOR LTimedWaiter$Mailbox;, timeout=300, thread {main}"));
        let waited = line_index("WAITED: MONITOR LTimedWaiter$Mailbox;");
        assert!(wait < waited && lines[waited].ends_with(&format!(", thread {main}")), "{what}: {}", lines[waited]);
        let waited_ms = field(lines[waited], "time_waited");
        let measured = printed(&run.stdout, "timed_wait_ms");
        assert!((250..=measured + 5).contains(&waited_ms), "{what}: timed wait {waited_ms} ms, measured {measured}");

        let wait = line_index(&format!("WAIT: MONITOR LTimedWaiter$Doorbell;, timeout=0, thread {bell}"));
        let waited = line_index("WAITED: MONITOR LTimedWaiter$Doorbell;");
        assert!(wait < waited && lines[waited].ends_with(&format!(", thread {bell}")), "{what}: {}", lines[waited]);
        let waited_ms = field(lines[waited], "time_waited");
        let measured = printed(&run.stdout, "bell_wait_ms");
        assert!((150..=measured + 5).contains(&waited_ms), "{what}: notified wait {waited_ms} ms, measured {measured}");

        // The program's main thread also sleeps 200 ms; the bell-waiter only waits, so it has no SLEEP line.
        let want = format!("SLEEP: timeout=200, thread {main}");
        assert!(text.lines().any(|l| l == want), "{what}: no {want:?}");
        let bell_tail = format!(", thread {bell}");
        let bell_sleeps = text.lines().filter(|l| l.starts_with("SLEEP:") && l.ends_with(&bell_tail)).count();
        assert_eq!(bell_sleeps, 0, "{what}: a wait is not a sleep");
    }
}

/// The text between the first MONITOR DUMP BEGIN and its END.
fn first_monitor_dump(text: &str) -> &str {
    let start = text.find("MONITOR DUMP BEGIN").expect("no MONITOR DUMP");
    let end = text[start..].find("MONITOR DUMP END").expect("unfinished MONITOR DUMP") + start;
    &text[start..end]
}

#[test]
fn sigquit_dump_shows_the_blocked_thread_the_owner_and_the_waiters() {
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("monitor-dump");
        let file = dir.path().join("java.hprof.txt");
        let mut jvm = Java::new(&jdk, dir.path()).agentpath("monitor=y").class("HeldLockDump").spawn();
        jvm.wait_for_stdout("ready", Duration::from_secs(60));
        jvm.signal(3); // SIGQUIT
        let deadline = Instant::now() + Duration::from_secs(60);
        while !std::fs::read_to_string(&file).unwrap_or_default().contains("MONITOR DUMP END") {
            assert!(Instant::now() < deadline, "{what}: no MONITOR DUMP after SIGQUIT");
            std::thread::sleep(Duration::from_millis(50));
        }
        std::fs::write(dir.path().join("release"), b"").unwrap();
        let run = jvm.wait();
        run.assert_success();
        assert!(run.stdout.contains("released"), "{what}: the program must go on after the dump");

        let text = run.read("java.hprof.txt");
        let dump = first_monitor_dump(&text);
        let (main, taker, waiter) = (
            thread_serial(&text, "main"),
            thread_serial(&text, "blocked-taker"),
            thread_serial(&text, "notify-waiter"),
        );
        let thread_line = |serial: u32| {
            dump.lines()
                .find(|l| l.starts_with(&format!("    THREAD {serial}, trace ")))
                .unwrap_or_else(|| panic!("{what}: thread {serial} missing from\n{dump}"))
        };
        let taker_line = thread_line(taker);
        assert!(taker_line.ends_with("status: MW"), "{what}: {taker_line}");
        assert!(thread_line(waiter).ends_with("status: CW"), "{what}: {}", thread_line(waiter));
        let trace: u32 = taker_line.split("trace ").nth(1).unwrap().split(',').next().unwrap().parse().unwrap();
        let trace_at = text.find(&format!("TRACE {trace}:\n")).expect("the taker's trace is printed");
        assert!(trace_at < text.find("MONITOR DUMP BEGIN").unwrap(), "{what}: traces come before the dump");
        assert!(
            traces(&text)[&trace][0].starts_with("HeldLockDump.takeLock(HeldLockDump.java:"),
            "{what}: the blocked thread's trace: {:?}",
            traces(&text)[&trace]
        );
        let monitor = format!(
            "    MONITOR HeldLockDump$HeldLock\n\towner: thread {main}, entry count: 1\n\
             \twaiting to enter: thread {taker}\n\twaiting to be notified: thread {waiter}\n"
        );
        assert!(dump.contains(&monitor), "{what}: want\n{monitor}in\n{dump}");

        // The same dump's MONITOR TIME already counts the wait in progress: a thread stuck for good (a
        // deadlock) shows too.
        let (_, rows) = monitor_time_at(&text, text.find("MONITOR TIME BEGIN").unwrap());
        let held: Vec<&MonitorTimeRow> = rows.iter().filter(|r| r.monitor == "HeldLockDump$HeldLock").collect();
        assert!(
            held.len() == 1 && held[0].count == 1 && held[0].trace == trace,
            "{what}: want the taker's wait in progress, on its trace {trace}, in the first MONITOR TIME:\n{text}"
        );
    }
}

/// Lines of a collapsed file that end in the shared lock's frame, and their summed weight.
fn shared_lock_stacks(collapsed: &str) -> (Vec<&str>, u64) {
    let lines: Vec<&str> = collapsed.lines().filter(|l| l.contains(";[lock:LockContention$SharedLock] ")).collect();
    let weight = lines.iter().map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap()).sum();
    (lines, weight)
}

#[test]
fn lock_flame_graph_holds_the_contended_stack_weighted_by_blocked_time() {
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        // With cpu=samples the CPU graph owns flamegraph=/collapsed=; the lock graph goes beside it.
        let options = "monitor=y,cpu=samples,flamegraph=cpu.html,collapsed=cpu.txt";
        let dir = scratch("monitors");
        let (run, text) = run_monitored(&jdk, dir.path(), options, "LockContention", &["4", "20", "5"]);
        let collapsed = run.read("cpu.locks.txt");
        let (lines, weight_ns) = shared_lock_stacks(&collapsed);
        assert!(!lines.is_empty(), "{what}: no stack blocked on the shared lock in\n{collapsed}");
        for l in &lines {
            assert!(
                l.starts_with("java.lang.Thread.run;")
                    && l.contains(";LockContention.descend;")
                    && l.contains(";LockContention.transfer;[lock:"),
                "{what}: stacks must be whole, root first: {l}"
            );
        }
        let (total_ms, rows) = last_monitor_time(&text);
        let share: f64 = rows.iter().filter(|r| r.monitor == "LockContention$SharedLock").map(|r| r.self_percent).sum();
        let shared_ms = total_ms as f64 * share / 100.0;
        let graph_ms = weight_ns as f64 / 1e6;
        assert!(
            (graph_ms - shared_ms).abs() <= 2.0 + shared_ms * 0.02,
            "{what}: the graph weighs {graph_ms:.1} ms, MONITOR TIME says {shared_ms:.1} ms"
        );
        let html = run.read("cpu.locks.html");
        assert!(html.starts_with("<!DOCTYPE html>") && html.contains("LockContention.transfer"), "{what}: html graph");
    }
}

#[test]
fn lock_flame_graph_takes_the_given_names_and_whole_deep_stacks() {
    let dir = scratch("monitors");
    // The workers block 300 calls down.
    let (run, _) = run_monitored(
        &jdk17(),
        dir.path(),
        "monitor=y,flamegraph=locks.svg,collapsed=locks.folded",
        "LockContention",
        &["4", "10", "5", "300"],
    );
    let folded = run.read("locks.folded");
    let (lines, _) = shared_lock_stacks(&folded);
    assert!(!lines.is_empty(), "no stack blocked on the shared lock in\n{folded}");
    for l in lines {
        assert!(l.starts_with("java.lang.Thread.run;"), "the root frame is lost: {}", &l[..200]);
        let levels = l.split(';').filter(|f| *f == "LockContention.descend").count();
        assert_eq!(levels, 301, "every level of the recursion must be in the stack");
    }
    let svg = run.read("locks.svg");
    assert!(svg.contains("<svg") && svg.contains("LockContention.transfer"));
    assert!(!run.file("locks.locks.svg").exists(), "without cpu=samples the names are kept");
}

#[test]
fn thread_sleep_prints_sleep_lines_with_the_timeout_and_thread() {
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("sleep-lines");
        // Sleeper's "napper" thread sleeps 1 s.
        let (_, text) = run_monitored(&jdk, dir.path(), "monitor=y", "Sleeper", &["1"]);
        let napper = thread_serial(&text, "napper");
        let sleeps: Vec<&str> = text.lines().filter(|l| l.starts_with("SLEEP: ")).collect();
        let want = format!("SLEEP: timeout=1000, thread {napper}");
        assert!(sleeps.contains(&want.as_str()), "{what}: no {want:?} among {sleeps:?}");
        // Only sleeps print SLEEP: the program's join is a WAIT on the Thread object.
        assert!(sleeps.iter().all(|l| l.starts_with("SLEEP: timeout=")), "{what}: {sleeps:?}");
    }
}
