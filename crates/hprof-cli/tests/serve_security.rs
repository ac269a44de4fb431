//! `hprof serve` as an attacker on the same machine or network would try it (issue 26): a half request
//! must not block other clients, a huge request line must not grow the server, a foreign `Host:` (DNS
//! rebinding) gets nothing, a bind beyond loopback needs the printed token, and the flame graph goes
//! through no file. Each runs the real binary on a real dump (the corpus, or a profile the agent writes).

use jvm_harness::{Java, hprof_binary, scratch};
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

/// hyper closes a connection that has not sent a whole head within this time (HEADER_TIMEOUT in
/// src/analyze/serve/http.rs).
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// A running `hprof serve`, stopped when dropped.
struct Served {
    child: Child,
    /// What it printed: `serving FILE on URL …`.
    url: String,
    port: u16,
    _stdin: Option<ChildStdin>,
    /// Kept open: a server that prints more must not meet a closed pipe.
    _stdout: BufReader<std::process::ChildStdout>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    fn start(file: &Path, extra: &[&str]) -> Served {
        let child = Command::new(hprof_binary())
            .arg("serve")
            .arg(file)
            .args(["--port", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let srv = Served::ready(child, None);
        srv.wait_for_index();
        srv
    }

    /// Polls `/api/status` until the index is built (bounded: 60 s), so that measurements see a quiet
    /// server; returns the last status.
    fn wait_for_index(&self) -> serde_json::Value {
        let t = Instant::now();
        loop {
            let (code, _, body) = self.get_ok(&self.with_token("/api/status"));
            assert_eq!(code, 200, "{body}");
            let v: serde_json::Value = serde_json::from_str(&body).unwrap();
            if v["state"] != "building" {
                return v;
            }
            assert!(t.elapsed() < Duration::from_secs(60), "the index took over 60 s: {v}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `path` with the printed token, if there is one.
    fn with_token(&self, path: &str) -> String {
        match self.url.split_once("?token=") {
            Some((_, t)) => format!("{path}?token={t}"),
            None => path.to_owned(),
        }
    }

    /// Reads the line with the URL (the server prints it once it listens).
    fn ready(mut child: Child, stdin: Option<ChildStdin>) -> Served {
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let url = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap_or_else(|| panic!("{line}"));
        let port = url.trim_start_matches("http://").split('/').next().unwrap().rsplit(':').next().unwrap();
        Served { url: url.to_owned(), port: port.parse().unwrap(), child, _stdin: stdin, _stdout: out }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Where to connect: IPv6 loopback when it printed `[::1]`, else 127.0.0.1 (also for `0.0.0.0`).
    fn ip(&self) -> &'static str {
        if self.url.starts_with("http://[::1]") { "::1" } else { "127.0.0.1" }
    }

    fn host(&self) -> String {
        if self.ip() == "::1" { format!("[::1]:{}", self.port) } else { format!("127.0.0.1:{}", self.port) }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect((self.ip(), self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
        s
    }

    /// One request with these extra header lines; the answer's status, head and body.
    fn get(&self, target: &str, headers: &str) -> (u16, String, String) {
        let mut s = self.connect();
        write!(s, "GET {target} HTTP/1.1\r\n{headers}Connection: close\r\n\r\n").unwrap();
        read_answer(&mut s)
    }

    /// A GET with the right Host.
    fn get_ok(&self, target: &str) -> (u16, String, String) {
        self.get(target, &format!("Host: {}\r\n", self.host()))
    }
}

/// The answer on a connection the server closes after it (bounded: 64 MiB, the socket's timeouts).
fn read_answer(s: &mut TcpStream) -> (u16, String, String) {
    let mut raw = Vec::new();
    s.take(64 << 20).read_to_end(&mut raw).unwrap();
    parse(&raw)
}

fn parse(raw: &[u8]) -> (u16, String, String) {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let code =
        head.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or_else(|| panic!("no status: {head}"));
    (code, head.to_owned(), body.to_owned())
}

fn corpus_dump() -> Option<PathBuf> {
    Some(jvm_harness::corpus_dir()?.join("mat_oracle_jdk8_05_x64.hprof"))
}

/// A field of /proc/PID/status in KiB (VmRSS, VmHWM).
fn status_kib(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = s.lines().find(|l| l.starts_with(field)).unwrap_or_else(|| panic!("no {field}"));
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_half_request_does_not_block_another_client() {
    let Some(dump) = corpus_dump() else { return };
    let srv = Served::start(&dump, &[]);
    // One client sends half a head and keeps the connection open.
    let mut half = srv.connect();
    write!(half, "GET /histo HTTP/1.1\r\nHost: {}\r\nUser-Agent: slow", srv.host()).unwrap();
    half.flush().unwrap();
    // Another trickles its head a byte at a time: the timeout is for the whole head, not per byte.
    let mut trickle = srv.connect();
    let head = format!("GET /histo HTTP/1.1\r\nHost: {}\r\nX-Slow: {}\r\n\r\n", srv.host(), "z".repeat(100));
    let trickler = std::thread::spawn(move || {
        let t = Instant::now();
        // Bounded: at most 60 bytes, 500 ms apart; stops when the server has closed.
        for b in head.bytes().take(60) {
            if trickle.write_all(&[b]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        let mut got = Vec::new();
        let _ = (&mut trickle).take(1 << 20).read_to_end(&mut got);
        (t.elapsed(), got)
    });
    std::thread::sleep(Duration::from_millis(200));
    // Another gets a whole page meanwhile, in well under a second.
    let t = Instant::now();
    let (code, _, body) = srv.get_ok("/histo?filter=String");
    let took = t.elapsed();
    assert_eq!(code, 200);
    assert!(body.contains("java.lang.String"), "{body}");
    assert!(took < Duration::from_secs(1), "the full request took {took:?} beside a half one");
    // The half one is dropped after the header timeout, with nothing of the file.
    half.set_read_timeout(Some(HEADER_TIMEOUT + Duration::from_secs(10))).unwrap();
    let t = Instant::now();
    let mut got = Vec::new();
    let r = (&mut half).take(1 << 20).read_to_end(&mut got);
    let waited = t.elapsed();
    assert!(
        r.is_ok() || matches!(r.as_ref().unwrap_err().kind(), ErrorKind::ConnectionReset),
        "the half request's connection was not closed: {r:?} after {waited:?}"
    );
    assert!(waited < HEADER_TIMEOUT + Duration::from_secs(5), "closed only after {waited:?}");
    assert!(waited > HEADER_TIMEOUT - Duration::from_secs(2), "closed after {waited:?}, before the timeout");
    assert!(!String::from_utf8_lossy(&got).contains("java.lang"), "{}", String::from_utf8_lossy(&got));
    let (trickled, got) = trickler.join().unwrap();
    assert!(trickled < HEADER_TIMEOUT + Duration::from_secs(5), "the trickling client was held {trickled:?}");
    assert!(!String::from_utf8_lossy(&got).contains("java.lang"), "{}", String::from_utf8_lossy(&got));
}

#[test]
fn an_ipv6_loopback_bind_answers_its_own_name() {
    let Some(dump) = corpus_dump() else { return };
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        jvm_harness::skip("no IPv6 loopback on this machine");
        return;
    }
    let srv = Served::start(&dump, &["--bind", "::1"]);
    assert!(srv.url.starts_with("http://[::1]:") && !srv.url.contains("token"), "{}", srv.url);
    let get = |host: &str| srv.get("/api/histo", &format!("Host: {host}\r\n"));
    let p = srv.port;
    let (code, _, body) = get(&format!("[::1]:{p}"));
    assert_eq!(code, 200);
    assert!(body.contains("java.lang.String"));
    assert_eq!(get(&format!("localhost:{p}")).0, 200);
    let (code, _, body) = get(&format!("127.0.0.1:{p}"));
    assert_eq!(code, 421);
    assert!(!body.contains("java."));
}

/// The bound on what one huge request may add to the server's peak RSS. hyper's read buffer stops at
/// 72 KiB; the rest is allocator slack and the answer.
const HUGE_REQUEST_RSS_BOUND_KIB: u64 = 8 * 1024;

#[test]
fn a_256_mib_request_line_is_refused_and_the_server_does_not_grow() {
    let Some(dump) = corpus_dump() else { return };
    let srv = Served::start(&dump, &[]);
    let pid = srv.pid();
    assert_eq!(srv.get_ok("/").0, 200);
    let before = status_kib(pid, "VmRSS");
    // Reset the peak (VmHWM) to the current RSS, so that the peak below is this request's.
    let peak_reset = std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok();
    let s = srv.connect();
    let mut reader = s.try_clone().unwrap();
    // Read while writing: the answer comes while the client is still sending.
    let answer = std::thread::spawn(move || {
        let mut raw = Vec::new();
        let _ = (&mut reader).take(1 << 20).read_to_end(&mut raw);
        raw
    });
    let mut w = s;
    w.write_all(b"GET /").unwrap();
    let chunk = vec![b'a'; 64 * 1024];
    let (mut sent, limit) = (0usize, 256usize << 20);
    let t = Instant::now();
    while sent < limit && t.elapsed() < Duration::from_secs(60) {
        match w.write(&chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => sent += n,
        }
    }
    let _ = w.shutdown(Shutdown::Write);
    let raw = answer.join().unwrap();
    let after = status_kib(pid, "VmRSS");
    let peak = if peak_reset { status_kib(pid, "VmHWM") } else { after };
    eprintln!("256 MiB request line: sent {sent} bytes; RSS {before} KiB before, peak {peak} KiB, after {after} KiB");
    assert!(sent < 64 << 20, "the server read {sent} bytes of one request line");
    let (code, _, body) = parse(&raw);
    assert!(code == 414 || code == 431, "answered {code}: {}", String::from_utf8_lossy(&raw));
    assert!(!body.contains("java.lang"));
    assert!(
        peak.saturating_sub(before) < HUGE_REQUEST_RSS_BOUND_KIB,
        "RSS {before} KiB before, peak {peak} KiB (after {after} KiB): grew past {HUGE_REQUEST_RSS_BOUND_KIB} KiB"
    );
    // And it still serves.
    assert_eq!(srv.get_ok("/histo").0, 200);
}

#[test]
fn limits_methods_and_bodies() {
    let Some(dump) = corpus_dump() else { return };
    let srv = Served::start(&dump, &[]);
    let h = format!("Host: {}\r\n", srv.host());
    let long = format!("/histo?filter={}", "a".repeat(9 * 1024));
    assert_eq!(srv.get(&long, &h).0, 414);
    let big_headers: String = (0..70).map(|i| format!("X-Pad-{i}: {}\r\n", "b".repeat(1000))).collect();
    assert_eq!(srv.get("/", &format!("{h}{big_headers}")).0, 431);
    for (method, code) in [("POST", 413), ("PUT", 413), ("DELETE", 405), ("OPTIONS", 405)] {
        let mut s = srv.connect();
        let body = if code == 413 { "Content-Length: 3\r\n\r\nabc" } else { "\r\n" };
        write!(s, "{method} / HTTP/1.1\r\n{h}Connection: close\r\n{body}").unwrap();
        let (got, head, _) = read_answer(&mut s);
        assert_eq!(got, code, "{method}: {head}");
    }
    let mut s = srv.connect();
    write!(s, "HEAD /histo HTTP/1.1\r\n{h}Connection: close\r\n\r\n").unwrap();
    let (code, head, body) = read_answer(&mut s);
    assert_eq!(code, 200, "{head}");
    assert!(body.is_empty() && head.to_ascii_lowercase().contains("content-type: text/html"), "{head}\n{body}");
    let (code, _, body) = srv.get("http://127.0.0.1/histo", &h);
    assert_eq!(code, 400, "{body}");
}

#[test]
fn a_foreign_host_gets_nothing() {
    let Some(dump) = corpus_dump() else { return };
    let srv = Served::start(&dump, &[]);
    assert!(srv.url.starts_with("http://127.0.0.1:") && !srv.url.contains("token"), "{}", srv.url);
    let (code, _, body) = srv.get_ok("/api/histo");
    assert_eq!(code, 200);
    assert!(body.contains("java.lang.String"));
    let p = srv.port;
    let foreign = [
        format!("evil.example:{p}"),
        "evil.example".to_string(),
        format!("127.0.0.1:{}", p.wrapping_add(1)),
        format!("localhost.evil.example:{p}"),
        format!("[::1]:{p}"),
    ];
    for host in foreign {
        let (code, head, body) = srv.get("/api/histo", &format!("Host: {host}\r\n"));
        assert_eq!(code, 421, "Host: {host}: {head}");
        assert!(!body.contains("java.") && body.len() < 200, "Host: {host}: {body}");
    }
    let (code, _, body) = srv.get("/api/histo", "");
    assert_eq!(code, 400, "no Host: {body}");
    assert!(!body.contains("java."));
    assert_eq!(srv.get("/api/histo", &format!("Host: LOCALHOST:{p}\r\n")).0, 200);
}

/// Sockets the server `pid` holds: its listener and the connections it accepted.
fn sockets_of(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|l| l.to_string_lossy().starts_with("socket:"))
        .count()
}

/// 80 clients that connect and send nothing: the server takes 64 of them (its listener and those 64
/// sockets, no more), drops them at the header timeout, and then answers again.
#[test]
fn at_most_64_connections_are_served_at_once() {
    let Some(dump) = corpus_dump() else { return };
    let srv = Served::start(&dump, &[]);
    let start = Instant::now();
    let idle: Vec<TcpStream> = (0..80).map(|_| srv.connect()).collect();
    while sockets_of(srv.pid()) < 65 && start.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(sockets_of(srv.pid()), 65, "the listener and 64 connections");
    // The 64 are closed at the header timeout; the 16 left in the backlog and this one are taken then.
    let (code, _, body) = srv.get_ok("/api/histo");
    assert_eq!(code, 200, "{body}");
    let waited = start.elapsed();
    assert!(waited < HEADER_TIMEOUT + Duration::from_secs(5), "answered after {waited:?}");
    drop(idle);
}

/// Answers stay out of caches, other sites' frames and referrers, and no CORS header lets another origin
/// read them, even when it asks (`Origin:`).
#[test]
fn answers_are_kept_from_caches_frames_and_other_sites() {
    let Some(dump) = corpus_dump() else { return };
    let srv = Served::start(&dump, &[]);
    let host = format!("Host: {}\r\nOrigin: http://evil.example\r\n", srv.host());
    for page in ["/", "/histo", "/api/histo", "/api/summary", "/no-such-page"] {
        let (code, head, _) = srv.get(page, &host);
        assert!(code == 200 || code == 404, "{page}: {head}");
        let head = head.to_ascii_lowercase();
        for wanted in [
            "cache-control: no-store",
            "x-frame-options: deny",
            "referrer-policy: no-referrer",
            "x-content-type-options: nosniff",
            "frame-ancestors 'none'",
        ] {
            assert!(head.contains(wanted), "{page}: no {wanted:?} in\n{head}");
        }
        assert!(!head.contains("access-control-"), "{page}: a CORS header in\n{head}");
    }
}

#[test]
fn beyond_loopback_the_printed_token_is_required() {
    let Some(dump) = corpus_dump() else { return };
    let srv = Served::start(&dump, &["--bind", "0.0.0.0"]);
    let token = srv.url.split("?token=").nth(1).unwrap_or_else(|| panic!("no token in {}", srv.url)).to_owned();
    assert_eq!(token.len(), 32, "{token}");
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()), "{token}");
    let h = format!("Host: {}\r\n", srv.host());
    let (code, _, body) = srv.get("/api/histo", &h);
    assert_eq!(code, 403, "{body}");
    assert!(!body.contains("java."));
    let wrong: String = token.chars().rev().collect();
    assert_eq!(srv.get(&format!("/api/histo?token={wrong}"), &h).0, 403);
    let (code, head, body) = srv.get(&format!("/api/histo?token={token}"), &h);
    assert_eq!(code, 200, "{head}");
    assert!(body.contains("java.lang.String"));
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: ").or_else(|| l.strip_prefix("Set-Cookie: ")))
        .unwrap_or_else(|| panic!("no cookie: {head}"));
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "{cookie}");
    let pair = cookie.split(';').next().unwrap();
    assert_eq!(pair, format!("hprof_token_{}={token}", srv.port));
    // The pages' own links carry no token: the cookie lets them through.
    let (code, _, body) = srv.get("/histo?filter=String", &format!("{h}Cookie: {pair}\r\n"));
    assert_eq!(code, 200);
    assert!(body.contains("java.lang.String"));
    // The token does not make a foreign Host acceptable.
    assert_eq!(srv.get(&format!("/api/histo?token={token}"), "Host: evil.example\r\n").0, 421);
}

/// Makes a CPU-samples profile with the agent (JDK 17).
fn cpu_profile(dir: &Path) -> PathBuf {
    let jdk = jvm_harness::jdk17();
    Java::new(&jdk, dir)
        .agentpath("cpu=samples,interval=10,depth=8,format=b,file=cpu.hprof")
        .class("CpuAccuracy")
        .arg("1")
        .run()
        .assert_success();
    dir.join("cpu.hprof")
}

/// Everything under `dir`, with symlinks as links (not followed), sorted.
fn listing(dir: &Path) -> Vec<(PathBuf, bool)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let ty = e.file_type().unwrap();
            if ty.is_dir() {
                todo.push(e.path());
            }
            out.push((e.path(), ty.is_symlink()));
        }
    }
    out.sort();
    out
}

#[test]
fn the_flame_graph_goes_through_no_file() {
    let dir = scratch("serve-flame");
    let profile = cpu_profile(dir.path());
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    // A shell that says its pid and waits, then becomes hprof (same pid): the old predictable path,
    // $TMPDIR/hprof-serve-<pid>/flame.svg, is planted as a symlink before hprof starts.
    let script = format!("echo $$; read go; exec '{}' serve \"$1\" --port 0", hprof_binary().display());
    let mut child = Command::new("sh")
        .args(["-c", &script, "sh"])
        .arg(&profile)
        .env("TMPDIR", &tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut pid = String::new();
    out.read_line(&mut pid).unwrap();
    let planted = tmp.join(format!("hprof-serve-{}", pid.trim()));
    std::fs::create_dir(&planted).unwrap();
    std::os::unix::fs::symlink(&victim, planted.join("flame.svg")).unwrap();
    let before = listing(&tmp);
    writeln!(stdin, "go").unwrap();
    child.stdout = Some(out.into_inner());
    let srv = Served::ready(child, Some(stdin));
    assert_eq!(srv.wait_for_index()["state"], "ready");
    let (code, _, body) = srv.get_ok("/flame");
    assert_eq!(code, 200);
    assert!(body.contains("<svg") && body.contains("CpuAccuracy.hotAlpha"), "{}", &body[..body.len().min(2000)]);
    assert_eq!(listing(&tmp), before, "hprof serve created or removed files under TMPDIR");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n", "the planted symlink was followed");
    assert_eq!(std::fs::read_link(planted.join("flame.svg")).unwrap(), victim);
}

#[test]
fn a_file_it_cannot_read_is_an_error_page_and_the_server_lives_on() {
    let dir = scratch("serve-bad");
    let missing = dir.path().join("missing.hprof");
    let o = Command::new(hprof_binary()).arg("serve").arg(&missing).args(["--port", "0"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "a missing file is refused at once");
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.hprof"), "{}", String::from_utf8_lossy(&o.stderr));
    let bad = dir.path().join("notes.hprof");
    std::fs::write(&bad, "these are notes, not a heap dump\n".repeat(10)).unwrap();
    let srv = Served::start(&bad, &[]);
    let status = srv.wait_for_index();
    assert_eq!(status["state"], "failed", "{status}");
    for path in ["/", "/histo", "/flame"] {
        let (code, _, body) = srv.get_ok(path);
        assert_eq!(code, 500, "{path}: {body}");
        assert!(body.contains("notes.hprof") && body.contains("id=\"error\""), "{path}: {body}");
    }
    // Still there.
    assert_eq!(srv.get_ok("/api/status").0, 200);
    drop(srv);
    // Damaged dumps: what comes before the damage, and where it is.
    let Some(corpus) = jvm_harness::corpus_dir() else { return };
    let damaged = corpus.join("damaged");
    let srv = Served::start(&damaged.join("bad_len_first_record_mat_oracle_jdk8_05_x64.hprof"), &[]);
    let (code, _, body) = srv.get_ok("/");
    assert_eq!(code, 200);
    assert!(body.contains("damaged:") && body.contains("offset 31"), "{body}");
    let (code, _, body) = srv.get_ok("/histo");
    assert_eq!(code, 404);
    assert!(body.contains("before the file's damage") && body.contains("offset 31"), "{body}");
    drop(srv);
    let srv = Served::start(&damaged.join("trunc50_mat_oracle_jdk8_05_x64.hprof"), &[]);
    let (code, _, body) = srv.get_ok("/");
    assert_eq!(code, 200);
    assert!(body.contains("damaged:") && body.contains("offset 592076"), "{body}");
    let (code, _, body) = srv.get_ok("/histo");
    assert_eq!(code, 200);
    assert!(body.contains("java.lang.Class"), "{body}");
}

/// A heap dump of 2 million long[4]s, written by the agent at exit (JDK 17).
fn big_dump(dir: &Path) -> PathBuf {
    let jdk = jvm_harness::jdk17();
    Java::new(&jdk, dir)
        .vm_arg("-Xmx1g")
        .agentpath("heap=dump,format=b,file=big.hprof")
        .class("HeapFiller")
        .args(&["keep", "2000000"])
        .run()
        .assert_success();
    dir.join("big.hprof")
}

#[test]
fn the_url_comes_at_once_and_pages_answer_while_the_index_builds() {
    let dir = scratch("serve-big");
    let dump = big_dump(dir.path());
    let child = Command::new(hprof_binary())
        .arg("serve")
        .arg(&dump)
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let srv = Served::ready(child, None);
    // A page that needs the index waits for it on its own connection...
    let (ip, host) = (srv.ip(), srv.host());
    let port = srv.port;
    let waiting = std::thread::spawn(move || {
        let mut s = TcpStream::connect((ip, port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        write!(s, "GET /api/histo?filter=long HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
        read_answer(&mut s)
    });
    // ...while the front page and the status answer at once, with the progress.
    let t = Instant::now();
    let mut building_seen = 0;
    loop {
        let asked = Instant::now();
        let (code, _, body) = srv.get_ok("/api/status");
        let (front, _, page) = srv.get_ok("/");
        let took = asked.elapsed();
        assert!(code == 200 && front == 200, "{body}\n{page}");
        assert!(took < Duration::from_secs(1), "status and front page took {took:?} while indexing");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        if v["state"] != "building" {
            assert_eq!(v["state"], "ready", "{v}");
            break;
        }
        building_seen += 1;
        assert!(v["stage"].is_string() && v["total"].is_u64(), "{v}");
        assert!(page.contains("id=\"progress\"") || page.contains("objects,"), "{page}");
        assert!(t.elapsed() < Duration::from_secs(120), "the index took over 120 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("index of {dump:?} built in {:?}; {building_seen} status answers meanwhile", t.elapsed());
    assert!(building_seen > 0, "the index was ready before the first request: nothing shown");
    let (code, _, body) = waiting.join().unwrap();
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let longs = v["classes"].as_array().unwrap().iter().find(|c| c["class"] == "long[]").expect("long[] row");
    assert!(longs["instances"].as_u64().unwrap() >= 2_000_000, "{longs}");
}
