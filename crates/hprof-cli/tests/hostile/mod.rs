//! Hostile heap dumps written by the tests themselves, and a child process measured as it runs (peak
//! resident set from wait4, wall time, output size), for the "Hostile input" promises of docs/security.md.

use hprof_format::binary::{Body, FrameRecord, RecordWriter};
use hprof_format::tags::{BasicType, heap as sub};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const ID: u32 = 8;
const OBJECT: u64 = 0x1000;
const NODE: u64 = 0x1100;
/// The first node of a chain; node `i` is `NODE_BASE + 16 * i`.
pub const NODE_BASE: u64 = 0x10_0000;

fn writer() -> RecordWriter<Vec<u8>> {
    RecordWriter::new(Vec::new(), "JAVA PROFILE 1.0.2", ID, 1_700_000_000_000).unwrap()
}

fn class_dump(b: &mut Body, id: u64, super_id: u64, fields: &[(u64, BasicType)]) {
    b.u1(sub::CLASS_DUMP).id(id).u4(0).id(super_id).id(0).id(0).id(0).id(0).id(0);
    let bytes: u32 = fields.iter().map(|(_, t)| t.size(ID)).sum();
    b.u4(bytes).u2(0).u2(0).u2(fields.len() as u16);
    for &(name, ty) in fields {
        b.id(name).u1(ty as u8);
    }
}

/// A linked list of `depth` nodes (`Node { Object next; }`), the first held by a JNI global: the last
/// node's shortest path from a root is `depth` steps long.
pub fn deep_chain(depth: u64) -> Vec<u8> {
    let mut w = writer();
    w.utf8(1, "java.lang.Object").unwrap();
    w.utf8(2, "Node").unwrap();
    w.utf8(3, "next").unwrap();
    w.load_class(1, OBJECT, 0, 1).unwrap();
    w.load_class(2, NODE, 0, 2).unwrap();
    let mut b = Body::with_capacity(ID, depth as usize * 34 + 1024);
    class_dump(&mut b, OBJECT, 0, &[]);
    class_dump(&mut b, NODE, OBJECT, &[(3, BasicType::Object)]);
    b.u1(sub::ROOT_JNI_GLOBAL).id(NODE_BASE).id(0x9);
    for i in 0..depth {
        let next = if i + 1 < depth { NODE_BASE + 16 * (i + 1) } else { 0 };
        b.u1(sub::INSTANCE_DUMP).id(NODE_BASE + 16 * i).u4(0).id(NODE).u4(ID).id(next);
    }
    w.heap_dump_segment(b.as_slice()).unwrap();
    w.heap_dump_end().unwrap();
    w.into_inner()
}

/// `classes` classes, each the subclass of the one before, each declaring `fields` reference fields
/// (sharing one name), and one instance of the deepest, all of whose fields are null.
pub fn deep_hierarchy(classes: u64, fields: u64) -> Vec<u8> {
    let mut w = writer();
    w.utf8(1, "java.lang.Object").unwrap();
    w.utf8(2, "f").unwrap();
    w.load_class(1, OBJECT, 0, 1).unwrap();
    for i in 0..classes {
        w.utf8(100 + i, &format!("C{i}")).unwrap();
        w.load_class(2 + i as u32, 0x2000 + 16 * i, 0, 100 + i).unwrap();
    }
    let decls: Vec<(u64, BasicType)> = (0..fields).map(|_| (2, BasicType::Object)).collect();
    let mut b = Body::new(ID);
    class_dump(&mut b, OBJECT, 0, &[]);
    for i in 0..classes {
        let super_id = if i == 0 { OBJECT } else { 0x2000 + 16 * (i - 1) };
        class_dump(&mut b, 0x2000 + 16 * i, super_id, &decls);
    }
    let values = classes * fields * ID as u64;
    b.u1(sub::INSTANCE_DUMP).id(0x9000_0000).u4(0).id(0x2000 + 16 * (classes - 1)).u4(values as u32);
    b.bytes(&vec![0u8; values as usize]);
    b.u1(sub::ROOT_JNI_GLOBAL).id(0x9000_0000).id(0x9);
    w.heap_dump_segment(b.as_slice()).unwrap();
    w.heap_dump_end().unwrap();
    w.into_inner()
}

/// Tests of this file run one at a time: a child's peak RSS from wait4 starts from the RSS of the test
/// process that spawned it (exec records the old address space's peak), so no other test may be holding
/// a big dump while one measures; each test drops its dump once written (see [`write`]).
pub fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a child did: exit status, output, peak resident set and wall time.
pub struct Measured {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout_len: u64,
    pub stdout_head: String,
    pub stderr: String,
    pub peak_rss_kb: u64,
    pub elapsed: Duration,
}

/// Where GNU time is: it reports its child's own peak RSS. A child's peak from our own wait4 would start
/// at this (large) test process's: exec records the address space it replaces, and Rust spawns with
/// vfork, so that is ours.
const GNU_TIME: &str = "/usr/bin/time";

/// Resets this process's peak RSS to its current RSS (Linux 4.0+), so that a child spawned next starts
/// from what we hold now, not from our peak. Only matters without GNU time.
fn reset_own_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// A command that runs hprof (add its arguments) under GNU time when there is one, writing the child's
/// peak RSS to the returned file (read it with [`timed_report`]).
pub fn hprof_timed() -> (Command, Option<tempfile::NamedTempFile>) {
    if Path::new(GNU_TIME).exists() {
        let report = tempfile::NamedTempFile::new().unwrap();
        let mut c = Command::new(GNU_TIME);
        c.args(["-f", "%M", "-o"]).arg(report.path()).arg(jvm_harness::hprof_binary());
        (c, Some(report))
    } else {
        reset_own_peak();
        (Command::new(jvm_harness::hprof_binary()), None)
    }
}

/// GNU time's report: the child's peak RSS in kB, and the signal that ended it, if one did.
pub fn timed_report(report: &Option<tempfile::NamedTempFile>) -> Option<(u64, Option<i32>)> {
    let text = std::fs::read_to_string(report.as_ref()?.path()).ok()?;
    let mut signal = None;
    let mut kb = None;
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("Command terminated by signal ") {
            signal = n.trim().parse().ok();
        } else if let Ok(k) = line.trim().parse::<u64>() {
            kb = Some(k);
        }
    }
    Some((kb?, signal))
}

/// Runs `hprof args`, counting (not keeping) its standard output beyond the first 64 KiB, killing it
/// after `limit`. The peak resident set is the child's own as GNU time reports it; without GNU time, it
/// is wait4's, an upper bound (it includes what this test process held when it spawned the child).
#[allow(clippy::zombie_processes, reason = "reaped by wait4, which also gives its rusage")]
pub fn measure(args: &[&str], limit: Duration) -> Measured {
    let start = Instant::now();
    let (mut cmd, report) = hprof_timed();
    let mut child = cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let (mut n, mut head, mut buf) = (0u64, Vec::new(), vec![0u8; 1 << 16]);
        while let Ok(k) = out.read(&mut buf) {
            if k == 0 {
                break;
            }
            if head.len() < 1 << 16 {
                head.extend_from_slice(&buf[..k.min((1 << 16) - head.len())]);
            }
            n += k as u64;
        }
        (n, String::from_utf8_lossy(&head).into_owned())
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let (status, rusage) = loop {
        let mut status = 0;
        // SAFETY: an all-zero rusage is valid; wait4 fills it for our own child.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: pid is our child, not yet reaped (Child::wait is never called).
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            break (status, ru);
        }
        if start.elapsed() > limit {
            // SAFETY: our own unreaped child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    let (stdout_len, stdout_head) = reader.join().unwrap();
    let stderr = err_reader.join().unwrap();
    let mut code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let mut signal = libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status));
    let mut peak_rss_kb = rusage.ru_maxrss as u64;
    if let Some(t) = timed_report(&report) {
        (peak_rss_kb, signal) = (t.0, t.1.or(signal));
        if signal.is_some() {
            code = None;
        }
    }
    Measured { code, signal, stdout_len, stdout_head, stderr, peak_rss_kb, elapsed }
}

/// Writes `bytes` to `dir/name` and drops them (see [`one_at_a_time`]); returns the path and the size.
pub fn write(dir: &Path, name: &str, bytes: Vec<u8>) -> (String, u64) {
    let p = dir.join(name);
    std::fs::write(&p, &bytes).unwrap();
    (p.to_str().unwrap().to_owned(), bytes.len() as u64)
}

/// A gzip file of an HPROF header and then `gib` GiB of zeros: one small member repeated (a multi-member
/// gzip file, as `cat a.gz b.gz` makes), so the test writes it in milliseconds.
pub fn gzip_bomb(gib: u64, with_header: bool) -> Vec<u8> {
    use flate2::{Compression, write::GzEncoder};
    use std::io::Write;
    let gz = |data: &[u8]| {
        let mut e = GzEncoder::new(Vec::new(), Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    };
    let mut out = if with_header { gz(&writer().into_inner()) } else { Vec::new() };
    let member = gz(&vec![0u8; 64 << 20]);
    for _ in 0..gib * 16 {
        out.extend_from_slice(&member);
    }
    out
}

/// A name that retitles and clears a terminal if printed raw.
pub const EVIL: &str = "evil\x1b]0;owned\x07\x1b[2J\r\nfake line";
/// How it must be shown.
pub const EVIL_SHOWN: &str = "evil\\x1b]0;owned\\x07\\x1b[2J\\r\\nfake line";

/// A small profile whose thread, class, method and source file are all named [`EVIL`], with a CPU sample
/// in that method, an instance of that class and the thread as a root.
pub fn evil_names() -> Vec<u8> {
    let mut w = writer();
    w.utf8(1, "java.lang.Object").unwrap();
    w.utf8(2, EVIL).unwrap();
    w.utf8(3, "()V").unwrap();
    w.utf8(4, "main").unwrap();
    w.load_class(1, OBJECT, 0, 1).unwrap();
    w.load_class(2, NODE, 0, 2).unwrap();
    w.frame(&FrameRecord {
        frame_id: 0x50,
        method_name_id: 2,
        signature_id: 3,
        source_file_id: 2,
        class_serial: 2,
        line: 12,
    })
    .unwrap();
    w.trace(300001, 1, &[0x50]).unwrap();
    w.start_thread(1, 0x3000, 300001, 2, 4, 4).unwrap();
    w.cpu_samples(5, &[(5, 300001)]).unwrap();
    let mut b = Body::new(ID);
    class_dump(&mut b, OBJECT, 0, &[]);
    class_dump(&mut b, NODE, OBJECT, &[(2, BasicType::Object)]);
    b.u1(sub::ROOT_THREAD_OBJECT).id(0x3000).u4(1).u4(300001);
    b.u1(sub::ROOT_JAVA_FRAME).id(0x3100).u4(1).u4(0);
    b.u1(sub::INSTANCE_DUMP).id(0x3000).u4(0).id(NODE).u4(ID).id(0x3100);
    b.u1(sub::INSTANCE_DUMP).id(0x3100).u4(0).id(NODE).u4(ID).id(0);
    w.heap_dump_segment(b.as_slice()).unwrap();
    w.heap_dump_end().unwrap();
    w.into_inner()
}

/// The records of [`evil_names`] without the heap dump, as an agent streams them.
pub fn evil_stream() -> Vec<u8> {
    let mut w = writer();
    w.utf8(2, EVIL).unwrap();
    w.utf8(4, "main").unwrap();
    w.start_thread(1, 0x3000, 300001, 2, 4, 4).unwrap();
    w.into_inner()
}

/// Small dumps whose declared counts are huge: an instance claiming 2^31 bytes of fields, an object array
/// and a primitive array claiming 2^31 elements, an Android array without data claiming 2^31 longs, a
/// class claiming 65535 fields, and a segment claiming 4 GB. Each (name, bytes).
pub fn huge_counts() -> Vec<(&'static str, Vec<u8>)> {
    let base = |f: &dyn Fn(&mut Body)| {
        let mut w = writer();
        w.utf8(1, "java.lang.Object").unwrap();
        w.load_class(1, OBJECT, 0, 1).unwrap();
        let mut b = Body::new(ID);
        class_dump(&mut b, OBJECT, 0, &[]);
        b.u1(sub::INSTANCE_DUMP).id(0x3000).u4(0).id(OBJECT).u4(0);
        f(&mut b);
        w.heap_dump_segment(b.as_slice()).unwrap();
        w.heap_dump_end().unwrap();
        w.into_inner()
    };
    let big = 1u32 << 31;
    let mut out = vec![
        (
            "instance",
            base(&|b| {
                b.u1(sub::INSTANCE_DUMP).id(0x3100).u4(0).id(OBJECT).u4(big).u8(0);
            }),
        ),
        (
            "object-array",
            base(&|b| {
                b.u1(sub::OBJECT_ARRAY_DUMP).id(0x3200).u4(0).u4(big).id(OBJECT).id(0);
            }),
        ),
        (
            "int-array",
            base(&|b| {
                b.u1(sub::PRIMITIVE_ARRAY_DUMP).id(0x3300).u4(0).u4(big).u1(10).u4(1);
            }),
        ),
        (
            "class-fields",
            base(&|b| {
                b.u1(sub::CLASS_DUMP).id(0x1200).u4(0).id(OBJECT).id(0).id(0).id(0).id(0).id(0);
                b.u4(0).u2(0).u2(0).u2(u16::MAX).id(1).u1(2);
            }),
        ),
    ];
    // Android's array without data: 2^31 longs declared, 13 bytes in the file.
    let mut w = RecordWriter::new(Vec::new(), "JAVA PROFILE 1.0.3", 4, 0).unwrap();
    let mut b = Body::new(4);
    b.u1(sub::PRIMITIVE_ARRAY_NODATA).id(0x3600).u4(0).u4(big).u1(11);
    b.u1(sub::ROOT_UNKNOWN).id(0x3600);
    w.heap_dump_segment(b.as_slice()).unwrap();
    w.heap_dump_end().unwrap();
    out.push(("android-nodata", w.into_inner()));
    // A segment whose length says 4 GB, in a file of a few hundred bytes.
    let mut seg = base(&|_| {});
    let head = seg.iter().rposition(|&t| t == 0x1C).unwrap();
    seg[head + 5..head + 9].copy_from_slice(&u32::MAX.to_be_bytes());
    out.push(("segment-4g", seg));
    out
}

/// `n` empty int arrays with 4-byte ids, every other one a GC root, all held by one object array: the
/// most objects (and references) per byte of file, for the memory bound.
pub fn tiny_objects(n: u64) -> Vec<u8> {
    let mut w = RecordWriter::new(Vec::new(), "JAVA PROFILE 1.0.2", 4, 0).unwrap();
    w.utf8(1, "java.lang.Object").unwrap();
    w.utf8(2, "[Ljava/lang/Object;").unwrap();
    w.load_class(1, 0x100, 0, 1).unwrap();
    w.load_class(2, 0x200, 0, 2).unwrap();
    let mut b = Body::with_capacity(4, n as usize * 24);
    for (id, sup) in [(0x100u64, 0u64), (0x200, 0x100)] {
        b.u1(sub::CLASS_DUMP).id(id).u4(0).id(sup).id(0).id(0).id(0).id(0).id(0).u4(0).u2(0).u2(0).u2(0);
    }
    b.u1(sub::OBJECT_ARRAY_DUMP).id(0x1000).u4(0).u4(n as u32).id(0x200);
    for i in 0..n {
        b.id(0x10_0000 + 16 * i);
    }
    b.u1(sub::ROOT_JNI_GLOBAL).id(0x1000).id(0);
    for i in 0..n {
        let id = 0x10_0000 + 16 * i;
        b.u1(sub::PRIMITIVE_ARRAY_DUMP).id(id).u4(0).u4(0).u1(BasicType::Int as u8);
        if i % 2 == 0 {
            b.u1(sub::ROOT_UNKNOWN).id(id);
        }
    }
    w.heap_dump_segment(b.as_slice()).unwrap();
    w.heap_dump_end().unwrap();
    w.into_inner()
}
