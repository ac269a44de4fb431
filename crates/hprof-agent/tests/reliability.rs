//! Never hang, never lose a profile (issue #16): exits racing dumps, exits on a full heap, SIGKILL, a
//! front end that stops reading, stacks deeper than the sampler walks, output files that cannot be written,
//! and the agent's own threads. Each test fails (or hangs into its timeout) without its fix.

use hprof_format::binary::{Record, Records, parse_header};
use jvm_harness::{Java, JavaRun, all_jdks, jdk17, scratch};
use std::io::Read;
use std::net::TcpListener;
use std::time::{Duration, Instant};

/// Every record of a binary profile; panics on a cut or undecodable one.
fn decode_all(bytes: &[u8]) -> Vec<Record<'_>> {
    let h = parse_header(bytes).expect("header");
    Records::new(bytes, &h).map(|r| Record::decode(&r.expect("complete record"), h.id_size).expect("decode")).collect()
}

fn cpu_totals(records: &[Record]) -> Vec<u32> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::CpuSamples { total, .. } => Some(*total),
            _ => None,
        })
        .collect()
}

/// Item 1. A SIGQUIT dump of allocation sites forces a collection; once the JVM exits, ZGC has stopped its
/// threads and never runs it, while VMDeath waits for that dump. Dumps are asked for every 0.2 s across the
/// exit, so that one is under way as it begins.
#[test]
fn sigquit_dumps_racing_the_exit_never_hang_it_under_zgc() {
    for jdk in all_jdks() {
        let dir = scratch("exit-race");
        let mut jvm = Java::new(&jdk, dir.path())
            .vm_arg("-XX:+UseZGC")
            .agentpath("heap=all,cpu=samples,format=b")
            .class("BusyThrowers")
            .arg("4")
            .timeout(Duration::from_secs(60))
            .spawn();
        jvm.wait_for_stdout("ready", Duration::from_secs(30));
        let started = Instant::now();
        std::thread::sleep(Duration::from_millis(3000));
        // Until well after the program's end (4 s): the JVM ignores a SIGQUIT once it has exited.
        while started.elapsed() < Duration::from_secs(7) && !jvm.stdout_so_far().contains("done") {
            jvm.signal(libc::SIGQUIT);
            std::thread::sleep(Duration::from_millis(200));
        }
        for _ in 0..5 {
            jvm.signal(libc::SIGQUIT);
            std::thread::sleep(Duration::from_millis(200));
        }
        let run = jvm.wait();
        run.assert_success();
        let bytes = run.read_bytes("java.hprof");
        let records = decode_all(&bytes);
        assert!(
            records.iter().any(|r| matches!(r, Record::HeapDumpEnd)),
            "JDK {}: no heap dump written:\n{}",
            jdk.version,
            run.stderr
        );
    }
}

fn run_heap_filler(jdk: &jvm_harness::Jdk, dir: &std::path::Path, options: &str, die: bool) -> JavaRun {
    let mut java = Java::new(jdk, dir)
        .vm_arg("-Xmx128m")
        .vm_arg("-XX:+UseG1GC")
        .agentpath(options)
        .class("HeapFiller")
        .timeout(Duration::from_secs(120));
    if die {
        java = java.arg("die");
    }
    let run = java.run();
    run.assert_no_crash_log();
    run
}

/// Item 2. With G1 and a full heap, the launcher's DestroyJavaVM cannot attach its thread (that needs a new
/// Thread object): no VMDeath, the process ends through exit(). The reports are still written.
#[test]
fn a_full_heap_at_exit_still_gets_its_reports() {
    for jdk in all_jdks() {
        let dir = scratch("heap-full");
        let run = run_heap_filler(&jdk, dir.path(), "cpu=samples", false);
        assert_eq!(run.code(), Some(0), "JDK {}: main returns normally:\n{}", jdk.version, run.stderr);
        let text = run.read("java.hprof.txt");
        assert!(text.contains("CPU SAMPLES BEGIN (total = "), "JDK {}: no CPU SAMPLES:\n{}", jdk.version, run.stderr);
        assert!(text.contains("CPU SAMPLES END"), "JDK {}: CPU SAMPLES cut off", jdk.version);
    }
}

/// Item 2, the heap dump: a program dying of the OutOfMemoryError with its heap full leaves a whole dump
/// holding the millions of arrays that filled it.
#[test]
fn a_program_dying_of_a_full_heap_leaves_a_whole_heap_dump() {
    let jdk = jdk17();
    let dir = scratch("heap-full-dump");
    let run = run_heap_filler(&jdk, dir.path(), "heap=dump,format=b", true);
    assert_eq!(run.code(), Some(1), "the OutOfMemoryError escapes main:\n{}", run.stderr);
    let bytes = run.read_bytes("java.hprof");
    let records = decode_all(&bytes);
    assert!(records.iter().any(|r| matches!(r, Record::HeapDumpEnd)), "no heap dump:\n{}", run.stderr);
    let histo = std::process::Command::new(jvm_harness::hprof_binary())
        .arg("histo")
        .arg(run.file("java.hprof"))
        .output()
        .expect("hprof histo");
    let histo = String::from_utf8_lossy(&histo.stdout);
    let long_arrays: u64 = histo
        .lines()
        .find(|l| l.trim_end().ends_with(" long[]"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no long[] row in:\n{histo}"));
    assert!(long_arrays > 1_000_000, "{long_arrays} long[]s: the heap full of them must be in the dump");
}

/// Item 4a. The reports are checkpointed every second: a JVM killed with SIGKILL leaves a profile that
/// parses and holds its samples, in binary and in text.
#[test]
fn a_sigkilled_jvm_leaves_a_readable_profile_with_samples() {
    for jdk in all_jdks() {
        for format in ["b", "a"] {
            let dir = scratch("sigkill");
            let jvm = Java::new(&jdk, dir.path())
                .agentpath(&format!("cpu=samples,heap=sites,format={format}"))
                .class("CpuAccuracy")
                .arg("60")
                .spawn();
            std::thread::sleep(Duration::from_millis(4000));
            jvm.signal(libc::SIGKILL);
            let run = jvm.wait();
            assert_eq!(run.status.code(), None, "killed");
            if format == "b" {
                let bytes = run.read_bytes("java.hprof");
                let records = decode_all(&bytes);
                let totals = cpu_totals(&records);
                assert_eq!(totals.len(), 1, "JDK {}: one checkpoint of CPU SAMPLES: {totals:?}", jdk.version);
                // ~3 s of a busy thread give ~300 samples on a quiet machine; a loaded one gives it less CPU.
                assert!(totals[0] >= 10, "JDK {}: ~3 s of a busy thread: {totals:?}", jdk.version);
                let sites = records.iter().filter(|r| matches!(r, Record::AllocSites { .. })).count();
                assert_eq!(sites, 1, "JDK {}: one checkpoint of ALLOC SITES", jdk.version);
            } else {
                let text = run.read("java.hprof.txt");
                let total: u64 = text
                    .split("CPU SAMPLES BEGIN (total = ")
                    .nth(1)
                    .and_then(|t| t.split(')').next())
                    .and_then(|t| t.parse().ok())
                    .unwrap_or_else(|| panic!("JDK {}: no CPU SAMPLES in the killed profile", jdk.version));
                assert!(total >= 10, "JDK {}: {total} samples", jdk.version);
                let end = text.trim_end();
                assert!(
                    end.ends_with("CPU SAMPLES END") || end.ends_with("SITES END"),
                    "JDK {}: whole reports",
                    jdk.version
                );
                assert_eq!(text.matches("CPU SAMPLES BEGIN").count(), 1, "checkpoints replace each other");
                assert_eq!(text.matches("SITES BEGIN").count(), 1, "checkpoints replace each other");
            }
        }
    }
}

/// Item 4a: the checkpoints do not stay behind in a profile that ends normally.
#[test]
fn checkpoints_leave_no_trace_after_a_normal_exit() {
    let dir = scratch("checkpoint-exit");
    let run = Java::new(&jdk17(), dir.path()).agentpath("cpu=samples,format=b").class("CpuAccuracy").arg("3").run();
    run.assert_success();
    let bytes = run.read_bytes("java.hprof");
    let totals = cpu_totals(&decode_all(&bytes));
    assert_eq!(totals.len(), 1, "only the exit dump's CPU SAMPLES: {totals:?}");
}

/// A front end on 127.0.0.1 that takes the agent's connection, reads as `pace` says (into the vector) until
/// `done` is set, then reads everything left until the agent closes; returns what it received.
fn slow_front_end(
    pace: impl Fn(&mut std::net::TcpStream, &mut Vec<u8>) + Send + 'static,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> (u16, std::thread::JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let reader = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let deadline = Instant::now() + Duration::from_secs(100);
        let mut received = Vec::new();
        while !done.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline {
            pace(&mut stream, &mut received);
        }
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        stream.read_to_end(&mut received).expect("the rest of the stream");
        received
    });
    (port, reader)
}

/// The number in `text` right before `after` (e.g. "1234 bytes went to socket").
fn number_before(text: &str, after: &str) -> u64 {
    let head =
        text.split(after).next().filter(|h| h.len() < text.len()).unwrap_or_else(|| panic!("no {after:?} in:\n{text}"));
    head.rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number before {after:?}:\n{text}"))
}

/// Item 6. A front end that nearly stops reading (512 bytes a second) holds the program up at most 10 s in
/// all — not 10 s per write call, which a trickle resets for ever — and the agent says it stopped reading
/// rather than that it is gone. Nothing is lost: what the front end did not take is held, and at exit goes
/// to `java.hprof.unsent`; the front end's bytes and that file, end to end, are the whole profile, and the
/// agent's last message counts both exactly.
#[test]
fn a_front_end_that_stops_reading_holds_the_program_up_ten_seconds_at_most() {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let trickle = |stream: &mut std::net::TcpStream, received: &mut Vec<u8>| {
        stream.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let mut chunk = [0u8; 512];
        if let Ok(n) = stream.read(&mut chunk) {
            received.extend_from_slice(&chunk[..n]);
        }
        std::thread::sleep(Duration::from_secs(1));
    };
    let (port, front_end) = slow_front_end(trickle, done.clone());
    let dir = scratch("net-stall");
    // A heap dump of some 30 MB: more than the sockets' buffers hold.
    let jvm = Java::new(&jdk17(), dir.path())
        .agentpath(&format!("net=127.0.0.1:{port},heap=dump,format=b"))
        .class("HeapFiller")
        .args(&["keep", "500000"])
        .timeout(Duration::from_secs(90))
        .spawn();
    // The hold-up is timed from the exit dump's start (the program's own work, slower on a loaded machine,
    // is not the front end's doing): the dump, 10 s of stall at most, 5 s of grace at exit.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !jvm.stderr_so_far().contains("Dumping") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    let run = jvm.wait();
    let took = started.elapsed();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let received = front_end.join().unwrap();
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    assert!(took < Duration::from_secs(25), "held up {took:?} by a front end that does not read:\n{}", run.stderr);
    assert!(run.stderr.contains("stopped reading"), "the message must say what happened:\n{}", run.stderr);
    assert!(!run.stderr.contains("is gone"), "a stalled front end is not gone:\n{}", run.stderr);
    let unsent = run.read_bytes("java.hprof.unsent");
    assert_eq!(number_before(&run.stderr, " bytes went to socket"), received.len() as u64, "{}", run.stderr);
    assert_eq!(number_before(&run.stderr, " bytes to java.hprof.unsent"), unsent.len() as u64, "{}", run.stderr);
    assert!(unsent.len() > 1 << 20, "most of the dump was not taken: {} bytes unsent", unsent.len());
    let whole = [received, unsent].concat();
    let records = decode_all(&whole);
    assert!(records.iter().any(|r| matches!(r, Record::HeapDumpEnd)), "the whole dump, end to end");
}

/// Item 6, a front end that reads again: what was held while it stalled past the limit is sent to it, and
/// it gets the whole profile.
#[test]
fn a_front_end_that_reads_again_gets_what_was_held_during_its_stall() {
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (port, front_end) = slow_front_end(|_, _| std::thread::sleep(Duration::from_millis(50)), done.clone());
    let dir = scratch("net-stall-resume");
    let jvm = Java::new(&jdk17(), dir.path())
        .agentpath(&format!("net=127.0.0.1:{port},heap=dump,format=b"))
        .class("HeapFiller")
        .args(&["keep", "500000"])
        .timeout(Duration::from_secs(90))
        .spawn();
    // The front end reads again once the agent has given up waiting for it.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !jvm.stderr_so_far().contains("stopped reading") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let run = jvm.wait();
    let received = front_end.join().unwrap();
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    assert!(run.stderr.contains("stopped reading"), "the front end stalled past the limit:\n{}", run.stderr);
    assert!(run.stderr.contains("takes bytes again"), "{}", run.stderr);
    assert!(run.stderr.contains("nothing was lost"), "{}", run.stderr);
    assert!(!run.file("java.hprof.unsent").exists(), "nothing for the file:\n{}", run.stderr);
    assert_eq!(number_before(&run.stderr, " bytes went to socket"), received.len() as u64, "{}", run.stderr);
    assert!(number_before(&run.stderr, " of them after it stalled") > 1 << 20, "{}", run.stderr);
    let records = decode_all(&received);
    assert!(records.iter().any(|r| matches!(r, Record::HeapDumpEnd)), "the whole dump reached the front end");
}

/// Item 7. Stacks deeper than the sampler walks are marked `[truncated]` at the root, never passed off as
/// stacks whose root is a recursion frame.
#[test]
fn stacks_cut_at_the_walk_limit_are_marked_truncated() {
    let dir = scratch("deep");
    let run = Java::new(&jdk17(), dir.path())
        .agentpath("cpu=samples,depth=65535,collapsed=deep.txt")
        .class("DeepStack")
        .args(&["3000", "3"])
        .run();
    run.assert_success();
    let folded = run.read("deep.txt");
    let mut truncated = 0u64;
    let mut whole = 0u64;
    for line in folded.lines().filter(|l| l.contains("DeepStack.recurse")) {
        let (stack, count) = line.rsplit_once(' ').expect("folded line");
        let count: u64 = count.parse().expect("count");
        match stack.split(';').next() {
            Some("[truncated]") => truncated += count,
            Some(root) if root.starts_with("DeepStack.main") => whole += count,
            Some(root) => panic!("a stack whose root is {root}: cut without a mark:\n{line}"),
            None => unreachable!(),
        }
    }
    assert!(truncated >= 10, "3 s at 3000 frames deep: {truncated} truncated, {whole} whole samples");
    let docs = std::fs::read_to_string(jvm_harness::repo_root().join("docs/cpu-samples.md")).unwrap();
    assert!(docs.contains("[truncated]"), "docs/cpu-samples.md must say how cut stacks are shown");
}

/// Item 9. Output files that cannot be written are refused at load, like a bad option, not at exit with
/// exit code 0.
#[test]
fn output_files_that_cannot_be_written_are_refused_at_load() {
    let jdk = jdk17();
    let cases = [
        ("file=/dev/full,cpu=samples", "/dev/full"),
        ("cpu=samples,collapsed=no-such-dir/cpu.txt", "collapsed=no-such-dir/cpu.txt"),
        ("cpu=samples,flamegraph=/dev/full", "flamegraph=/dev/full"),
        ("cpu=samples,flamegraph=/proc/self/hprof.html", "flamegraph=/proc/self/hprof.html"),
    ];
    for (options, named) in cases {
        let dir = scratch("unwritable");
        let run = Java::new(&jdk, dir.path()).agentpath(options).class("Hello").run();
        assert_ne!(run.code(), Some(0), "{options}: the JVM must refuse to start:\n{}", run.stderr);
        assert!(!run.stdout.contains("hello"), "{options}: the program must not run");
        assert!(
            run.stderr.contains("HPROF ERROR") && run.stderr.contains(named),
            "{options}: an error naming {named}:\n{}",
            run.stderr
        );
        run.assert_no_crash_log();
    }
}

/// A write that fails at exit, when the program's exit code is already decided (a file system that fills
/// up during the run: here a file size limit, EFBIG): an error names the file and the errno and says the
/// file is incomplete; the exit code stays the program's. HPROF ended the JVM with exit code 9 on any
/// failed write: `errorexit=y` (an HPROF option) does that for scripts that want it.
#[test]
fn a_profile_that_cannot_be_written_at_exit_is_named_and_errorexit_makes_it_exit_9() {
    for jdk in all_jdks() {
        for (extra, code) in [("", 0), (",errorexit=y", 9)] {
            let dir = scratch("full-at-exit");
            // Room for the header (written at load), not for the exit dump.
            let run = Java::new(&jdk, dir.path())
                .agentpath(&format!("heap=dump,format=b,file=out.hprof{extra}"))
                .file_size_limit(64 << 10)
                .class("Hello")
                .run();
            assert!(run.stdout.contains("Hello"), "JDK {}: the program ran:\n{}", jdk.version, run.stderr);
            assert_eq!(run.code(), Some(code), "JDK {} {extra}: exit code:\n{}", jdk.version, run.stderr);
            let named = "HPROF ERROR: cannot write the profile to out.hprof: File too large (os error 27)";
            assert!(
                run.stderr.contains(named),
                "JDK {}: an error naming the file and errno:\n{}",
                jdk.version,
                run.stderr
            );
            assert!(run.stderr.contains("incomplete"), "{}", run.stderr);
            assert_eq!(run.stderr.contains("HPROF TERMINATED PROCESS"), code == 9, "{}", run.stderr);
            run.assert_no_crash_log();
        }
    }
}

/// `file=` on a pipe whose reader goes away (`java … file=/dev/stdout | head -c 100`): the write fails with
/// EPIPE and says so. Opened for reading too, the pipe had the JVM itself as a reader: its writes never
/// failed, and waited for ever once the pipe was full.
#[test]
fn a_pipe_closed_by_its_reader_fails_the_write_instead_of_hanging_the_jvm() {
    let dir = scratch("closed-pipe");
    let fifo = dir.path().join("profile.fifo");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    let reader_path = fifo.clone();
    let reader = std::thread::spawn(move || {
        let mut head = [0u8; 100];
        let mut pipe = std::fs::File::open(reader_path).unwrap();
        pipe.read_exact(&mut head).unwrap();
        head
    });
    let run = Java::new(&jdk17(), dir.path())
        .agentpath(&format!("heap=dump,file={}", fifo.display()))
        .class("Hello")
        .timeout(Duration::from_secs(60))
        .run();
    let head = reader.join().unwrap();
    assert!(head.starts_with(b"JAVA PROFILE 1.0.1"), "the reader got the header");
    assert_eq!(run.code(), Some(0), "the program's exit code:\n{}", run.stderr);
    let named = format!("cannot write the profile to {}: Broken pipe (os error 32)", fifo.display());
    assert!(run.stderr.contains(&named), "an error naming the pipe and errno:\n{}", run.stderr);
}

/// Item 10. The agent's own threads (sampler, worker, heap dump helpers) are not in the profile, and heap
/// dumps start no thread of their own each.
#[test]
fn the_agents_own_threads_stay_out_of_the_profile() {
    for jdk in all_jdks() {
        let dir = scratch("own-threads");
        let mut jvm = Java::new(&jdk, dir.path())
            .agentpath("cpu=samples,heap=all,format=a,thread=y")
            .class("BusyThrowers")
            .arg("3")
            .spawn();
        jvm.wait_for_stdout("ready", Duration::from_secs(30));
        for _ in 0..3 {
            std::thread::sleep(Duration::from_millis(500));
            jvm.signal(libc::SIGQUIT);
        }
        let run = jvm.wait();
        run.assert_success();
        let text = run.read("java.hprof.txt");
        assert!(text.matches("HEAP DUMP BEGIN").count() >= 2, "JDK {}: the SIGQUIT dumps", jdk.version);
        let ours: Vec<&str> =
            text.lines().filter(|l| l.starts_with("THREAD START") && l.contains("name=\"HPROF")).collect();
        assert!(ours.is_empty(), "JDK {}: the agent's threads in the profile:\n{}", jdk.version, ours.join("\n"));
        assert!(text.contains("name=\"thrower-0\""), "JDK {}: the program's threads are", jdk.version);
    }
}
