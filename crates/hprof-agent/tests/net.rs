//! net=host:port against a real front end (`hprof listen`) and against hostile or vanishing peers.

use hprof_format::binary::{Record, Records, parse_header};
use hprof_format::commands::{Command, encode};
use jvm_harness::{Java, JvmSlot, all_jdks, hprof_binary, jdk17, scratch};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

/// Starts `hprof listen 127.0.0.1:0` with scripted commands; returns it and the port it chose.
// The caller waits for the returned child.
#[allow(clippy::zombie_processes)]
fn start_listener(dir: &Path, commands: &[&str]) -> (Child, u16) {
    start_listener_with_umask(dir, commands, None)
}

/// [`start_listener`], the listener's umask set to `umask`.
#[allow(clippy::zombie_processes)]
fn start_listener_with_umask(dir: &Path, commands: &[&str], umask: Option<libc::mode_t>) -> (Child, u16) {
    let stderr = dir.join("listen.stderr");
    let mut cmd = Process::new(hprof_binary());
    if let Some(mask) = umask {
        use std::os::unix::process::CommandExt;
        // SAFETY: umask is async-signal-safe; `mask` is copied in before the fork.
        unsafe {
            cmd.pre_exec(move || {
                libc::umask(mask);
                Ok(())
            })
        };
    }
    cmd.args(["listen", "127.0.0.1:0", "-o", "run.hprof", "--no-stdin"]);
    for c in commands {
        cmd.args(["--command", c]);
    }
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .expect("hprof listen");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(&stderr).unwrap_or_default();
        if let Some(rest) = text.split("listening on 127.0.0.1:").nth(1) {
            let port: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            return (child, port.parse().unwrap());
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hprof listen did not start:\n{text}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_child(mut child: Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{what} exited with {status}");
            return;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} did not finish");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn decode_all(bytes: &[u8]) -> Vec<Record<'_>> {
    let h = parse_header(bytes).expect("header");
    Records::new(bytes, &h).map(|r| Record::decode(&r.expect("complete record"), h.id_size).expect("decode")).collect()
}

#[test]
fn listen_receives_a_complete_profile_and_exit_vm_ends_the_program() {
    for jdk in all_jdks() {
        let dir = scratch("listen");
        let (listener, port) =
            start_listener(dir.path(), &["dump-traces", "force-gc", "depth 8", "wait 0.5", "exit-vm"]);
        let started = Instant::now();
        let run =
            Java::new(&jdk, dir.path()).agentpath(&format!("net=127.0.0.1:{port},cpu=samples")).class("Sleeper").run();
        assert_eq!(run.code(), Some(0), "JDK {}: exit-vm makes a normal exit\n{}", jdk.version, run.stderr);
        run.assert_no_crash_log();
        assert!(started.elapsed() < Duration::from_secs(60), "exit-vm must end the 120 s sleeper early");
        assert!(!run.stderr.contains("net:"), "no command may fail:\n{}", run.stderr);
        wait_child(listener, "hprof listen");

        let bytes = std::fs::read(dir.path().join("run.hprof")).unwrap();
        let records = decode_all(&bytes);
        let names: Vec<String> = records
            .iter()
            .filter_map(|r| match r {
                Record::Utf8 { text, .. } => Some(String::from_utf8_lossy(text).into_owned()),
                _ => None,
            })
            .collect();
        assert!(names.iter().any(|n| n == "napper"), "the sleeper's thread must be in the stream");
        assert!(records.iter().any(|r| matches!(r, Record::StartThread { .. })));
        assert!(records.iter().any(|r| matches!(r, Record::LoadClass { .. })));
        let summary = std::fs::read_to_string(dir.path().join("listen.stderr")).unwrap();
        assert!(summary.contains("agent disconnected") && summary.contains("START THREAD"), "{summary}");
    }
}

/// A raw peer that accepts the agent, sends `bytes`, then drains what the agent writes until it closes
/// (or, with `hang_up`, closes right away). Returns what it received.
fn raw_peer(bytes: Vec<u8>, hang_up: bool) -> (u16, std::thread::JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let _ = s.write_all(&bytes);
        let mut got = Vec::new();
        if hang_up {
            let mut head = [0u8; 64];
            let _ = s.read(&mut head);
            return got;
        }
        let _ = s.read_to_end(&mut got);
        got
    });
    (port, handle)
}

#[test]
fn hostile_commands_are_reported_and_the_program_runs_on() {
    let mut bytes = Vec::new();
    bytes.extend([0x42, 0, 0, 0, 1, 0, 0, 0, 3, 1, 2, 3]); // unknown tag, plausible length
    bytes.extend([0x08, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0x33]); // unknown CONTROL sub-command
    bytes.extend(encode(3, &Command::CpuSampling { thread_object_id: 0xdead_beef, on: false }, 8));
    let mut nan = encode(4, &Command::CpuSamples { cutoff: 0.5 }, 8);
    nan[11..15].copy_from_slice(&f32::NAN.to_bits().to_be_bytes());
    bytes.extend(nan);
    bytes.extend(encode(5, &Command::DumpTraces, 8)); // a good one in between
    bytes.extend([0x99, 0, 0, 0, 6, 0x7f, 0xff, 0xff, 0xff]); // unknown tag, absurd length: stream abandoned
    bytes.extend(encode(7, &Command::ExitVm, 8)); // must not be obeyed after that
    let (port, peer) = raw_peer(bytes, false);
    let dir = scratch("hostile");
    let run = Java::new(&jdk17(), dir.path())
        .agentpath(&format!("net=127.0.0.1:{port},cpu=samples"))
        .class("Sleeper")
        .arg("2")
        .run();
    run.assert_success();
    assert!(run.stdout.contains("ready"));
    for needle in ["0x42", "0x33", "no thread has object id 0xdeadbeef", "cutoff", "implausible length"] {
        assert!(run.stderr.contains(needle), "stderr lacks {needle:?}:\n{}", run.stderr);
    }
    let received = peer.join().unwrap();
    let records = decode_all(&received);
    assert!(records.iter().any(|r| matches!(r, Record::EndThread { .. })), "the stream must be complete");
}

#[test]
fn a_vanishing_front_end_is_reported_once_and_the_program_runs_on() {
    let (port, peer) = raw_peer(Vec::new(), true);
    let dir = scratch("vanish");
    let _slot = JvmSlot::acquire();
    let run = Java::new(&jdk17(), dir.path())
        .agentpath(&format!("net=127.0.0.1:{port},cpu=samples"))
        .class("Sleeper")
        .arg("2")
        .spawn_holding(None)
        .wait();
    peer.join().unwrap();
    run.assert_success();
    assert!(run.stdout.contains("ready"), "the program must run to its end");
    let gone = run.stderr.matches("front end").count();
    assert_eq!(gone, 1, "say it once:\n{}", run.stderr);
}

#[test]
fn each_socket_command_answers_with_its_records() {
    let jdk = jdk17();
    let dir = scratch("net-commands");
    let script = [
        "wait 8", // AllocSites allocates in well under a second (ten times that on a busy machine), then sleeps
        "alloc-sites --force-gc --by-alloc 0",
        "alloc-sites --incremental 0",
        "heap-summary",
        "cpu-samples 0",
        "dump-heap",
        "exit-vm",
    ];
    let (listener, port) = start_listener(dir.path(), &script);
    let run = Java::new(&jdk, dir.path())
        .agentpath(&format!("net=127.0.0.1:{port},heap=all,cpu=samples"))
        .class("AllocSites")
        .args(&["1", "60"])
        .run();
    assert_eq!(run.code(), Some(0), "exit-vm ends the program normally:\n{}", run.stderr);
    assert!(run.stdout.contains("allocated"), "the program must have allocated:\n{}", run.stdout);
    assert!(!run.stderr.contains("net:"), "no command may fail:\n{}", run.stderr);
    wait_child(listener, "hprof listen");

    let bytes = std::fs::read(dir.path().join("run.hprof")).unwrap();
    let records = decode_all(&bytes);
    let strings: std::collections::HashMap<u64, String> = records
        .iter()
        .filter_map(|r| match r {
            Record::Utf8 { id, text } => Some((*id, String::from_utf8_lossy(text).into_owned())),
            _ => None,
        })
        .collect();
    let widget_serial = records
        .iter()
        .find_map(|r| match r {
            Record::LoadClass { serial, name_id, .. } if strings[name_id] == "AllocSites$Widget" => Some(*serial),
            _ => None,
        })
        .expect("LOAD CLASS AllocSites$Widget");
    // The command's ALLOC SITES carries its flags (by allocated bytes, GC first) and cutoff 0.
    let (sites, cutoff) = records
        .iter()
        .find_map(|r| match r {
            Record::AllocSites { flags: 0x6, sites, cutoff, .. } => Some((sites, *cutoff)),
            _ => None,
        })
        .expect("an ALLOC SITES record answering alloc-sites --force-gc --by-alloc 0");
    assert_eq!(cutoff, 0.0);
    let widgets = sites
        .iter()
        .filter(|s| s.class_serial == widget_serial)
        .fold((0, 0), |(l, a), s| (l + s.live_instances, a + s.alloc_instances));
    assert_eq!(widgets, (25_000, 100_000), "Widgets (live, allocated) when the command arrived");
    // The incremental report lists only sites that allocated since: not the Widgets, all made before.
    let incremental = records
        .iter()
        .find_map(|r| match r {
            Record::AllocSites { flags: 0x1, sites, .. } => Some(sites),
            _ => None,
        })
        .expect("an ALLOC SITES record answering alloc-sites --incremental");
    assert!(incremental.iter().all(|s| s.class_serial != widget_serial), "no Widget site is new");
    let count = |f: fn(&Record) -> bool| records.iter().filter(|r| f(r)).count();
    assert!(count(|r| matches!(r, Record::HeapSummary { .. })) >= 3, "heap-summary, after each ALLOC SITES");
    assert!(count(|r| matches!(r, Record::CpuSamples { .. })) >= 2, "cpu-samples and the exit dump");
    assert!(count(|r| matches!(r, Record::HeapDumpEnd)) >= 2, "dump-heap and the exit dump");
    assert!(count(|r| matches!(r, Record::HeapDump { segment: true, .. })) >= 2, "heap dump segments");
}

/// The totals of the CPU SAMPLES records in the profile `hprof listen` wrote into `dir`, in order.
fn cpu_sample_totals(dir: &Path) -> Vec<u32> {
    let bytes = std::fs::read(dir.join("run.hprof")).unwrap();
    decode_all(&bytes)
        .iter()
        .filter_map(|r| match r {
            Record::CpuSamples { total, .. } => Some(*total),
            _ => None,
        })
        .collect()
}

/// `sampling off` must stop the threads' CPU clocks — no signals at all, not merely no samples — and
/// `sampling on` must start them again; for perf task clocks (running on by themselves, or re-armed by each
/// sample where their ring buffer is refused) and for the POSIX timers used where perf events are forbidden. The agent counts its signals (HPROF_CPU_STATS): with the clocks left running, the
/// three seconds off would cost some 300 signals that take no sample.
#[test]
fn sampling_off_stops_the_clocks_and_on_starts_them_again() {
    let jdk = jdk17();
    for clock in ["perf", "perf-refresh", "posix"] {
        let dir = scratch(&format!("net-sampling-{clock}"));
        let script =
            ["wait 1", "sampling off", "wait 3", "cpu-samples 0", "sampling on", "wait 2", "cpu-samples 0", "exit-vm"];
        let (listener, port) = start_listener(dir.path(), &script);
        let option = if clock == "posix" { ",clock=posix" } else { "" };
        let mut java = Java::new(&jdk, dir.path())
            .agentpath(&format!("net=127.0.0.1:{port},cpu=samples,interval=10{option}"))
            .env("HPROF_CPU_STATS", "1")
            .class("CpuAccuracy")
            .args(&["60"]);
        if clock == "perf-refresh" {
            java = java.env("HPROF_PERF_REFRESH", "1");
        }
        let run = java.run();
        assert_eq!(run.code(), Some(0), "exit-vm ends the program normally:\n{}", run.stderr);
        wait_child(listener, "hprof listen");

        let totals = cpu_sample_totals(dir.path());
        let [after_off, after_on, at_exit] = totals[..] else {
            panic!("{clock}: three CPU SAMPLES records (two commands, the exit), got {totals:?}")
        };
        assert!(after_on >= after_off + 40, "{clock}: sampling resumes after `sampling on`: {totals:?}");
        let signals: u32 = run
            .stderr
            .split(" samples, ")
            .next()
            .and_then(|s| s.rsplit(" over ").next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{clock}: HPROF_CPU_STATS line in:\n{}", run.stderr));
        let clocks = if clock == "posix" { "perf clocks 0, with POSIX timers" } else { "with POSIX timers 0)" };
        assert!(run.stderr.contains(clocks), "{clock}: the clock asked for:\n{}", run.stderr);
        assert!(
            signals >= at_exit && signals <= at_exit + 20,
            "{clock}: {signals} signals for {at_exit} samples: the clocks ran while sampling was off"
        );
    }
}

/// sampler=safepoint obeys `sampling off` and `sampling on` too (it shares the engine's on/off rules): no
/// sample while off, samples again once on. CpuAccuracy keeps several threads RUNNABLE, so two seconds on
/// at interval=10 take hundreds.
#[test]
fn safepoint_sampler_obeys_sampling_off_and_on() {
    let jdk = jdk17();
    let dir = scratch("net-sampling-safepoint");
    let script = [
        "wait 1",
        "cpu-samples 0",
        "sampling off",
        "wait 2",
        "cpu-samples 0",
        "sampling on",
        "wait 2",
        "cpu-samples 0",
        "exit-vm",
    ];
    let (listener, port) = start_listener(dir.path(), &script);
    let run = Java::new(&jdk, dir.path())
        .agentpath(&format!("net=127.0.0.1:{port},cpu=samples,sampler=safepoint,interval=10"))
        .class("CpuAccuracy")
        .args(&["60"])
        .run();
    assert_eq!(run.code(), Some(0), "exit-vm ends the program normally:\n{}", run.stderr);
    wait_child(listener, "hprof listen");

    let totals = cpu_sample_totals(dir.path());
    let [before_off, after_off, after_on, ..] = totals[..] else {
        panic!("three CPU SAMPLES records for three commands (and one at exit), got {totals:?}")
    };
    assert!(before_off >= 20, "samples before `sampling off`: {totals:?}");
    // A round already under way when the command arrives may still count.
    assert!(after_off <= before_off + 10, "no samples while sampling is off: {totals:?}");
    assert!(after_on >= after_off + 40, "sampling resumes after `sampling on`: {totals:?}");
}

/// Without a flame graph the signal handler walks only as many frames as the report keeps; a new depth
/// from the front end must reach it, or the samples after `depth 4` would still hold one frame each.
#[test]
fn a_new_depth_reaches_the_sampler() {
    let dir = scratch("net-depth");
    let script = ["wait 1", "depth 4", "wait 1", "clear-samples", "wait 2", "cpu-samples 0", "exit-vm"];
    let (listener, port) = start_listener(dir.path(), &script);
    let run = Java::new(&jdk17(), dir.path())
        .agentpath(&format!("net=127.0.0.1:{port},cpu=samples,interval=10,depth=1"))
        .class("CpuAccuracy")
        .args(&["60"])
        .run();
    assert_eq!(run.code(), Some(0), "exit-vm ends the program normally:\n{}", run.stderr);
    wait_child(listener, "hprof listen");

    let bytes = std::fs::read(dir.path().join("run.hprof")).unwrap();
    let records = decode_all(&bytes);
    let frames_of: std::collections::HashMap<u32, usize> = records
        .iter()
        .filter_map(|r| match r {
            Record::Trace { serial, frame_ids, .. } => Some((*serial, frame_ids.len())),
            _ => None,
        })
        .collect();
    let samples = records
        .iter()
        .find_map(|r| match r {
            Record::CpuSamples { samples, .. } => Some(samples),
            _ => None,
        })
        .expect("CPU SAMPLES answering cpu-samples");
    let total: u32 = samples.iter().map(|(count, _)| count).sum();
    let deep: u32 =
        samples.iter().filter(|(_, trace)| frames_of.get(trace).is_some_and(|&n| n >= 2)).map(|(c, _)| c).sum();
    assert!(total >= 50, "two seconds of a busy thread: {total} samples");
    assert!(deep * 10 >= total * 9, "{deep} of {total} samples after `depth 4` have two frames or more");
}

/// Issue 26: under umask 000, the file `hprof listen` saves is 0600 and replaces a symlink planted at
/// its path without writing through it; the agent's heap dump spool (net=, HPROF's predictable
/// `$TMPDIR/hprof-heap-dump.<pid>.TMP`) has no name: $TMPDIR stays empty.
#[test]
fn listen_saves_a_private_file_and_the_net_spool_has_no_name() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = scratch("listen-private");
    let d = dir.path();
    let victim = d.join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink(&victim, d.join("run.hprof")).unwrap();
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // The dump waits until the spool's old name (which needs the pid) is planted.
    let (listener, port) = start_listener_with_umask(d, &["wait 4", "dump-heap", "wait 1", "exit-vm"], Some(0));
    let mut jvm = Java::new(&jdk17(), d)
        .umask(0)
        .env("TMPDIR", tmp.to_str().unwrap())
        .agentpath(&format!("net=127.0.0.1:{port},heap=dump"))
        .class("Sleeper")
        .spawn();
    jvm.wait_for_stdout("ready", Duration::from_secs(30));
    let spool_victim = d.join("spool-victim.txt");
    std::fs::write(&spool_victim, "precious").unwrap();
    std::os::unix::fs::symlink(&spool_victim, tmp.join(format!("hprof-heap-dump.{}.TMP", jvm.pid()))).unwrap();
    let run = jvm.wait();
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    wait_child(listener, "hprof listen");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "the victim's content");
    assert_eq!(std::fs::metadata(&victim).unwrap().mode() & 0o7777, 0o644, "the victim's mode");
    assert_eq!(std::fs::read_to_string(&spool_victim).unwrap(), "precious", "the spool wrote through a link");
    let saved = std::fs::symlink_metadata(d.join("run.hprof")).unwrap();
    assert!(saved.is_file(), "the link replaced by the saved profile");
    assert_eq!(saved.mode() & 0o7777, 0o600, "the saved profile's mode");
    let bytes = std::fs::read(d.join("run.hprof")).unwrap();
    let dumps = decode_all(&bytes).iter().filter(|r| matches!(r, Record::HeapDumpEnd)).count();
    assert_eq!(dumps, 2, "the requested and the exit heap dumps arrived");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "nothing named in $TMPDIR but the planted link: {left:?}");
    let beside: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp") || n.ends_with(".TMP"))
        .collect();
    assert!(beside.is_empty(), "no temporary file left: {beside:?}");
}

/// Issue 26: the rest of the stream of a vanished front end goes to a new, 0600 file: a symlink planted at
/// `java.hprof.unsent` is kept and its victim untouched; the rest goes to `java.hprof.unsent.<pid>`.
#[test]
fn the_unsent_file_is_private_and_never_written_through_a_link() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let (port, peer) = raw_peer(Vec::new(), true);
    let dir = scratch("unsent-private");
    let d = dir.path();
    let victim = d.join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::os::unix::fs::symlink(&victim, d.join("java.hprof.unsent")).unwrap();
    let _slot = JvmSlot::acquire();
    let jvm = Java::new(&jdk17(), d)
        .umask(0)
        .agentpath(&format!("net=127.0.0.1:{port},cpu=samples"))
        .class("Sleeper")
        .arg("2")
        .spawn_holding(None);
    let pid = jvm.pid();
    let run = jvm.wait();
    peer.join().unwrap();
    run.assert_success();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "the victim's content");
    assert_eq!(std::fs::metadata(&victim).unwrap().mode() & 0o7777, 0o644, "the victim's mode");
    assert!(std::fs::symlink_metadata(d.join("java.hprof.unsent")).unwrap().is_symlink(), "the link kept");
    let unsent = d.join(format!("java.hprof.unsent.{pid}"));
    assert!(run.stderr.contains(&format!("goes to java.hprof.unsent.{pid}")), "{}", run.stderr);
    let meta = std::fs::symlink_metadata(&unsent).unwrap();
    assert!(meta.is_file() && meta.len() > 0, "the rest of the stream is in {}", unsent.display());
    assert_eq!(meta.mode() & 0o7777, 0o600, "its mode under umask 000");
}

/// Ctrl-C in `hprof listen` ends the session as `quit` does: an existing output is replaced by what
/// arrived (written beside it until then), nothing temporary is left, and the program goes on.
#[test]
fn ctrl_c_in_listen_saves_what_arrived_under_its_name() {
    let dir = scratch("listen-ctrl-c");
    let d = dir.path();
    std::fs::write(d.join("run.hprof"), "an old profile").unwrap();
    let (listener, port) = start_listener(d, &[]);
    let jvm = Java::new(&jdk17(), d)
        .agentpath(&format!("net=127.0.0.1:{port},cpu=samples"))
        .class("Sleeper")
        .arg("4")
        .spawn();
    let stderr = d.join("listen.stderr");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&stderr).unwrap_or_default().contains("agent connected") {
        assert!(Instant::now() < deadline, "the agent never connected");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill sends a signal to our own child, which has not been waited for.
    assert_eq!(unsafe { libc::kill(listener.id() as i32, libc::SIGINT) }, 0);
    wait_child(listener, "hprof listen after Ctrl-C");
    let said = std::fs::read_to_string(&stderr).unwrap();
    assert!(said.contains("interrupted") && said.contains("agent disconnected"), "{said}");
    let bytes = std::fs::read(d.join("run.hprof")).unwrap();
    assert!(bytes.starts_with(b"JAVA PROFILE 1.0."), "what arrived replaced the old file");
    assert!(decode_all(&bytes).iter().any(|r| matches!(r, Record::StartThread { .. })));
    let run = jvm.wait();
    assert_eq!(run.code(), Some(0), "the program goes on without its front end:\n{}", run.stderr);
    let left: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}
