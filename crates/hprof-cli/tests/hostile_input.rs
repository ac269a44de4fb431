//! The front end on hostile input (docs/security.md, "Hostile input"): output linear in the input, memory
//! bounded by a small multiple of the file, decompression bounded, clear errors. Every dump here is written
//! by the test; each bound is asserted on the child's peak resident set (wait4) and wall time.

mod hostile;

use hostile::{Measured, NODE_BASE, deep_chain, deep_hierarchy, measure, write};
use std::time::Duration;

const MIB: u64 = 1024;

/// `hprof path` to the end of a `depth`-deep chain: output linear in the depth, peak RSS within 10x the
/// file (32 MiB at least: the process itself), within `time_bound`.
fn chain_path(depth: u64, time_bound: Duration) -> Measured {
    let dir = jvm_harness::scratch("hostile-chain");
    let (file, size) = write(dir.path(), "chain.hprof", deep_chain(depth));
    let rss_bound_kb = (10 * size / 1024).max(32 * MIB);
    let last = format!("0x{:x}", NODE_BASE + 16 * (depth - 1));
    let m = measure(&["path", &file, &last], time_bound * 2);
    assert_eq!(m.code, Some(0), "hprof path on a {depth}-deep chain: signal {:?}, {}", m.signal, m.stderr);
    // One line per step and a bounded width: linear in the depth, not quadratic.
    assert!(m.stdout_len < 120 * depth, "{depth}-deep path: {} bytes of output", m.stdout_len);
    assert!(m.stdout_head.contains("GC root (JNI global)"), "{}", m.stdout_head);
    assert!(m.peak_rss_kb < rss_bound_kb, "{depth}-deep path: peak RSS {} kB", m.peak_rss_kb);
    assert!(m.elapsed < time_bound, "{depth}-deep path took {:?}", m.elapsed);
    eprintln!("{depth}-deep path: {} bytes, peak RSS {} kB, {:?}", m.stdout_len, m.peak_rss_kb, m.elapsed);
    m
}

#[test]
fn path_of_a_20k_chain_is_linear() {
    let _serial = hostile::one_at_a_time();
    let m = chain_path(20_000, Duration::from_secs(20));
    // Each step on its own line, numbered once the indentation stops growing.
    let line =
        |n: usize| format!("\n{}[{n}] .next Node@0x{:x}  (retained", "  ".repeat(16), NODE_BASE + 16 * (n as u64 - 1));
    assert!(m.stdout_head.contains(&line(17)) && m.stdout_head.contains(&line(500)), "{}", m.stdout_head);
}

#[test]
fn path_of_a_1m_chain_is_linear() {
    let _serial = hostile::one_at_a_time();
    // A 33 MB file: the graph, the dominator tree and the path's million lines fit in 10x of it.
    chain_path(1_000_000, Duration::from_secs(60));
}

#[test]
fn deep_hierarchy_with_many_fields_stays_small() {
    let _serial = hostile::one_at_a_time();
    let dir = jvm_harness::scratch("hostile-hierarchy");
    let (file, size) = write(dir.path(), "hierarchy.hprof", deep_hierarchy(450, 450));
    for cmd in [vec!["histo", &file], vec!["dominators", &file], vec!["path", &file, "0x90000000"]] {
        let m = measure(&cmd, Duration::from_secs(120));
        assert_eq!(m.code, Some(0), "hprof {cmd:?}: signal {:?}, {}", m.signal, m.stderr);
        // The file is ~2.5 MB; flattened field lists took 2.9 GB.
        assert!(m.peak_rss_kb < 200 * MIB, "hprof {cmd:?}: peak RSS {} kB on a {} byte file", m.peak_rss_kb, size);
        assert!(m.elapsed < Duration::from_secs(60), "hprof {cmd:?} took {:?}", m.elapsed);
        eprintln!("450 x 450 hierarchy, {}: peak RSS {} kB, {:?}", cmd[0], m.peak_rss_kb, m.elapsed);
    }
}

#[test]
fn a_gzip_bomb_stops_at_the_inflation_limit() {
    let _serial = hostile::one_at_a_time();
    let dir = jvm_harness::scratch("hostile-bomb");
    // 4 GiB of zeros behind a valid header, in a ~4 MB file: the default limit (64x, at least 1 GiB) stops it.
    let bomb = hostile::gzip_bomb(4, true);
    let (file, bomb_len) = write(dir.path(), "bomb.hprof.gz", bomb);
    for args in [vec!["summary", &file], vec!["histo", &file, "--max-inflated", "100M"]] {
        let m = measure(&args, Duration::from_secs(60));
        assert_eq!(m.code, Some(1), "hprof {args:?} on a {} byte bomb: signal {:?}, {}", bomb_len, m.signal, m.stderr);
        assert!(m.stderr.contains("--max-inflated"), "hprof {args:?}: {}", m.stderr);
        let limit = if args.len() > 2 { "100 MiB" } else { "1 GiB" };
        let bytes = if args.len() > 2 { 100u64 << 20 } else { 1 << 30 };
        assert!(m.stderr.contains(&format!("past {bytes} bytes")), "hprof {args:?} (limit {limit}): {}", m.stderr);
        assert!(m.elapsed < Duration::from_secs(20), "hprof {args:?} took {:?}", m.elapsed);
        assert!(m.peak_rss_kb < 100 * MIB, "hprof {args:?}: peak RSS {} kB", m.peak_rss_kb);
        eprintln!("gzip bomb, {args:?}: stopped in {:?}, peak RSS {} kB", m.elapsed, m.peak_rss_kb);
    }
    // Zeros from the first byte are not an HPROF file: stopped at once, whatever the limit.
    let (file, _) = write(dir.path(), "zeros.gz", hostile::gzip_bomb(4, false));
    let m = measure(&["summary", &file, "--max-inflated", "1T"], Duration::from_secs(60));
    assert_eq!(m.code, Some(1), "{}", m.stderr);
    assert!(m.stderr.contains("is not an HPROF file"), "{}", m.stderr);
    assert!(m.elapsed < Duration::from_secs(2), "took {:?}", m.elapsed);
}

#[test]
fn names_with_escape_sequences_are_printed_escaped() {
    let _serial = hostile::one_at_a_time();
    let dir = jvm_harness::scratch("hostile-names");
    let (file, _) = write(dir.path(), "evil.hprof", hostile::evil_names());
    let f = file.as_str();
    for args in [
        vec!["print", f],
        vec!["summary", f],
        vec!["histo", f],
        vec!["dominators", f],
        vec!["path", f, "0x3100"],
        vec!["leaks", f, "--threshold", "1"],
        vec!["diff", f, f],
        vec!["waste", f],
        vec!["loaders", f],
        vec!["threads", f],
        vec!["export", f, "--format", "collapsed"],
    ] {
        let m = measure(&args, Duration::from_secs(30));
        assert_eq!(m.code, Some(0), "hprof {args:?}: {}", m.stderr);
        let all = format!("{}{}", m.stdout_head, m.stderr);
        assert!(!all.contains('\x1b') && !all.contains('\x07'), "hprof {args:?} printed a raw escape: {all:?}");
        // Collapsed stacks rewrite spaces and semicolons; the escapes are the point.
        let shown = if args[0] == "export" { "evil\\x1b]0:owned\\x07\\x1b[2J\\r\\n" } else { hostile::EVIL_SHOWN };
        if !matches!(args[0], "leaks" | "diff" | "waste" | "loaders" | "threads") {
            assert!(all.contains(shown), "hprof {args:?} did not show the name escaped: {all}");
        }
    }
    // JSON stays JSON, the name in it escaped the same way.
    let m = measure(&["summary", "--json", f], Duration::from_secs(30));
    let v: serde_json::Value = serde_json::from_str(&m.stdout_head).expect("summary --json is JSON");
    assert!(v.to_string().contains("evil\\\\x1b]0;owned"), "{v}");
}

/// `hprof listen` fed 100 MB without a NUL by a first peer: that peer is dropped with an error naming it
/// and the limit, memory stays small, and the agent that connects next is served, its names escaped.
#[test]
#[allow(clippy::zombie_processes, reason = "reaped by wait4, which also gives its rusage")]
fn listen_drops_a_peer_without_a_header_and_waits_on() {
    let _serial = hostile::one_at_a_time();
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpStream;
    let dir = jvm_harness::scratch("hostile-listen");
    let out = dir.path().join("got.hprof");
    let (mut cmd, report) = hostile::hprof_timed();
    let mut child = cmd
        .args(["listen", "127.0.0.1:0", "--no-stdin", "-o", out.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line.split_whitespace().nth(3).unwrap().trim_end_matches(';').to_owned();
    let lines = std::thread::spawn(move || {
        let mut all = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut all);
        all
    });
    // 100 MB of a header that never ends; the listener hangs up after its limit.
    let mut s = TcpStream::connect(&addr).unwrap();
    let mut sent = 0u64;
    let chunk = vec![b'x'; 1 << 20];
    let _ = s.write_all(b"JAVA PROFILE ");
    while sent < 100 << 20 && s.write_all(&chunk).is_ok() {
        sent += chunk.len() as u64;
    }
    let peer = s.local_addr().unwrap();
    drop(s);
    let mut agent = TcpStream::connect(&addr).unwrap();
    agent.write_all(&hostile::evil_stream()).unwrap();
    drop(agent);
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for our own unreaped child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let text = lines.join().unwrap();
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "listen: status {status}, {text}");
    let peak_kb = hostile::timed_report(&report).map_or(ru.ru_maxrss as u64, |t| t.0);
    assert!(
        text.contains(&format!("{peer} sent")) && text.contains("without ending the HPROF header (the limit is 1024)"),
        "{text}"
    );
    assert!(text.contains("connection dropped, still listening"), "{text}");
    assert!(text.contains(&format!("START THREAD 1 \"{}\"", hostile::EVIL_SHOWN)), "{text}");
    assert!(!text.contains('\x1b'), "a raw escape reached the terminal: {text:?}");
    assert!(peak_kb < 30 * MIB, "listen: peak RSS {peak_kb} kB");
    eprintln!("listen after {sent} bytes without a NUL: peak RSS {peak_kb} kB");
}

/// A peer that trickles its header a byte a second is dropped when 30 s have passed in all (not 30 s
/// between bytes, which would hold the listener for 1024 of them), and the next peer is followed.
#[test]
fn listen_drops_a_peer_that_trickles_its_header() {
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpStream;
    let dir = jvm_harness::scratch("hostile-listen-slow");
    let out = dir.path().join("got.hprof");
    let mut child = std::process::Command::new(jvm_harness::hprof_binary())
        .args(["listen", "127.0.0.1:0", "--no-stdin", "-o", out.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line.split_whitespace().nth(3).unwrap().trim_end_matches(';').to_owned();
    let start = std::time::Instant::now();
    let mut slow = TcpStream::connect(&addr).unwrap();
    let trickler = std::thread::spawn(move || {
        // 60 bytes, then it hangs up (the old listener took that as the end, after 60 s).
        for b in b"JAVA PROFILE ".iter().chain(&[b'x'; 47]) {
            if slow.write_all(&[*b]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    });
    let mut text = String::new();
    while !text.contains("sent no HPROF header within 30s") && !text.contains("closed the connection") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "listen ended: {text}");
        text.push_str(&line);
    }
    let dropped = start.elapsed();
    assert!(dropped < Duration::from_secs(40), "the trickling peer was dropped after {dropped:?}: {text}");
    let mut agent = TcpStream::connect(&addr).unwrap();
    agent.write_all(&hostile::evil_stream()).unwrap();
    drop(agent);
    let mut rest = String::new();
    let _ = std::io::Read::read_to_string(&mut err, &mut rest);
    assert!(child.wait().unwrap().success(), "{text}{rest}");
    assert!(rest.contains(&format!("START THREAD 1 \"{}\"", hostile::EVIL_SHOWN)), "{rest}");
    let _ = trickler.join();
    eprintln!("a peer trickling its header dropped after {dropped:?}");
}

#[test]
fn huge_declared_counts_fail_fast_and_small() {
    let _serial = hostile::one_at_a_time();
    let dir = jvm_harness::scratch("hostile-counts");
    for (name, bytes) in hostile::huge_counts() {
        let (file, _) = write(dir.path(), &format!("{name}.hprof"), bytes);
        for cmd in ["summary", "histo", "dominators", "print"] {
            let m = measure(&[cmd, &file], Duration::from_secs(30));
            assert!(m.code.is_some(), "hprof {cmd} {name}: killed by signal {:?}; {}", m.signal, m.stderr);
            assert!(!m.stderr.contains("panicked"), "hprof {cmd} {name}: {}", m.stderr);
            assert!(m.peak_rss_kb < 40 * MIB, "hprof {cmd} {name}: peak RSS {} kB", m.peak_rss_kb);
            assert!(m.elapsed < Duration::from_secs(5), "hprof {cmd} {name} took {:?}", m.elapsed);
            if name != "android-nodata" {
                // Damage is named with its offset; what came before it is still reported.
                let all = format!("{}{}", m.stdout_head, m.stderr);
                assert!(all.contains("offset") || all.contains("damage"), "hprof {cmd} {name}: {all}");
            }
        }
    }
}

/// One GET to `hprof serve` at `addr` (host:port): status and body.
fn http_get(addr: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    let mut resp = String::new();
    let _ = s.read_to_string(&mut resp);
    let code = resp.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (code, resp.split_once("\r\n\r\n").map(|x| x.1.to_owned()).unwrap_or_default())
}

/// A dump truncated while `hprof serve` maps it: the page that reads past the new end answers with an
/// error saying so (not SIGBUS), and the server goes on answering.
#[test]
fn serve_survives_its_file_shrinking_under_the_map() {
    let _serial = hostile::one_at_a_time();
    use std::io::{BufRead, BufReader};
    let dir = jvm_harness::scratch("hostile-shrink");
    let depth = 20_000u64;
    let (file, size) = write(dir.path(), "chain.hprof", deep_chain(depth));
    let mut child = std::process::Command::new(jvm_harness::hprof_binary())
        .args(["serve", &file, "--port", "0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .unwrap_or_else(|| panic!("{line}"))
        .trim_end_matches('/')
        .to_owned();
    let t = std::time::Instant::now();
    while http_get(&addr, "/api/status").1.contains("building") {
        assert!(t.elapsed() < Duration::from_secs(60), "serve did not finish its index");
        std::thread::sleep(Duration::from_millis(50));
    }
    let last = format!("0x{:x}", NODE_BASE + 16 * (depth - 1));
    // The path pages are linear in the depth too (the old /path grew quadratically and died the same way).
    for page in ["/path", "/api/path"] {
        let (code, body) = http_get(&addr, &format!("{page}?id={last}"));
        assert_eq!(code, 200, "{page}: {}", &body[..body.len().min(400)]);
        assert!(body.len() < 200 * depth as usize, "{page} of a {depth}-step path: {} bytes", body.len());
        eprintln!("{page} of a {depth}-step path: {} bytes", body.len());
    }
    // Cut the file to its first page: the path's field names are read from records past it.
    std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(4096).unwrap();
    let (code, body) = http_get(&addr, &format!("/api/path?id={last}"));
    assert!(child.try_wait().unwrap().is_none(), "serve died when its file shrank: {code} {body}");
    assert_eq!(code, 500, "{body}");
    assert!(body.contains(&format!("shrank from {size} to 4096 bytes while being read")), "{body}");
    let (code, _) = http_get(&addr, "/histo");
    assert!(code != 0 && child.try_wait().unwrap().is_none(), "serve stopped answering after its file shrank");
    let _ = child.kill();
    let _ = child.wait();
}

/// Memory is bounded by a small multiple of the file (docs/security.md states 10x): the densest file,
/// tiny objects with 4-byte ids, each referenced once and half of them roots, through every command that
/// builds the object graph.
#[test]
fn memory_stays_within_ten_times_the_file() {
    let _serial = hostile::one_at_a_time();
    let dir = jvm_harness::scratch("hostile-dense");
    let (file, size) = write(dir.path(), "dense.hprof", hostile::tiny_objects(2_000_000));
    let bound_kb = 10 * size / 1024;
    let commands = [
        vec!["summary", &file],
        vec!["histo", &file],
        vec!["dominators", &file],
        vec!["path", &file, "0x100010"],
        vec!["leaks", &file],
        vec!["diff", &file, &file],
        vec!["print", &file],
        vec!["waste", &file],
        vec!["loaders", &file],
        vec!["threads", &file],
        vec!["diff", "--objects", &file, &file],
    ];
    for cmd in commands {
        let m = measure(&cmd, Duration::from_secs(120));
        assert_eq!(m.code, Some(0), "hprof {cmd:?}: signal {:?}, {}", m.signal, m.stderr);
        eprintln!("dense {size} byte file, {}: peak RSS {} kB, {:?}", cmd[0], m.peak_rss_kb, m.elapsed);
        assert!(
            m.peak_rss_kb < bound_kb,
            "hprof {cmd:?}: peak RSS {} kB, over 10x the {} byte file",
            m.peak_rss_kb,
            size
        );
    }
}

/// A real JVM whose thread is named with escape sequences streams its profile to `hprof listen`: neither
/// `listen` nor `print` and `summary` of the saved profile let a raw escape reach the terminal,
/// and each shows the name escaped. JDK 17, 21 and 25.
#[test]
fn a_jvm_thread_named_with_escapes_is_shown_escaped() {
    use std::io::{BufRead, BufReader};
    let _serial = hostile::one_at_a_time();
    let shown = "evil\\x1b]0;owned\\x07\\x1b[2J\\r\\nfake line";
    for jdk in jvm_harness::all_jdks() {
        let dir = jvm_harness::scratch("hostile-jvm-names");
        let out = dir.path().join("run.hprof");
        let mut listener = std::process::Command::new(jvm_harness::hprof_binary())
            .args(["listen", "127.0.0.1:0", "--no-stdin", "-o", out.to_str().unwrap()])
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut err = BufReader::new(listener.stderr.take().unwrap());
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        let addr = line.split_whitespace().nth(3).unwrap().trim_end_matches(';').to_owned();
        let collected = std::thread::spawn(move || {
            let mut all = String::new();
            let _ = std::io::Read::read_to_string(&mut err, &mut all);
            all
        });
        let run = jvm_harness::Java::new(&jdk, dir.path())
            .agentpath(&format!("net={addr},cpu=samples,interval=1"))
            .class("EvilNames")
            .run();
        assert_eq!(run.code(), Some(0), "JDK {}: {}", jdk.version, run.stderr);
        let status = listener.wait().unwrap();
        let heard = collected.join().unwrap();
        assert!(status.success(), "JDK {}: listen {status}: {heard}", jdk.version);
        assert!(!heard.contains('\x1b') && !heard.contains('\x07'), "JDK {}: listen printed a raw escape", jdk.version);
        assert!(heard.contains("START THREAD") && heard.contains(shown), "JDK {}: {heard}", jdk.version);
        let f = out.to_str().unwrap();
        for args in [vec!["print", f], vec!["summary", f]] {
            let m = measure(&args, Duration::from_secs(60));
            assert_eq!(m.code, Some(0), "JDK {}: hprof {args:?}: {}", jdk.version, m.stderr);
            let all = format!("{}{}", m.stdout_head, m.stderr);
            assert!(!all.contains('\x1b') && !all.contains('\x07'), "JDK {}: hprof {args:?}: raw escape", jdk.version);
            assert!(all.contains("evil\\x1b]0"), "JDK {}: hprof {args:?} did not show the name: {all}", jdk.version);
        }
    }
}

/// `--max-memory` stops an analysis that needs more with an error naming the option, at once; with
/// enough, the same command runs, its heap within the cap.
#[test]
fn max_memory_stops_with_a_clear_error() {
    let _serial = hostile::one_at_a_time();
    let dir = jvm_harness::scratch("hostile-max-memory");
    let (file, _) = write(dir.path(), "dense.hprof", hostile::tiny_objects(2_000_000));
    let m = measure(&["dominators", &file, "--max-memory", "20M"], Duration::from_secs(60));
    assert_eq!(m.code, Some(1), "signal {:?}: {}", m.signal, m.stderr);
    assert!(m.stderr.contains("needs more than --max-memory 20.0 MiB (20971520 bytes)"), "{}", m.stderr);
    assert!(m.elapsed < Duration::from_secs(5), "took {:?}", m.elapsed);
    // The mapped file's pages come on top of the heap.
    assert!(m.peak_rss_kb < 20 * MIB + 41_000 + 8 * MIB, "peak RSS {} kB", m.peak_rss_kb);
    let m = measure(&["dominators", &file, "--max-memory", "200M"], Duration::from_secs(60));
    assert_eq!(m.code, Some(0), "{}", m.stderr);
    eprintln!("--max-memory 200M: dominators of the dense file, peak RSS {} kB, {:?}", m.peak_rss_kb, m.elapsed);
}
