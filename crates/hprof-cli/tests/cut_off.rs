//! A heap dump cut off before its HEAP DUMP END (a JVM killed mid-dump, a full disk) is called incomplete
//! by every command, and a reader that goes away (`| head`) ends a command quietly.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn hprof() -> PathBuf {
    jvm_harness::hprof_binary()
}

/// The JDK 11 jcmd dump of the corpus, decompressed: segments closed by a HEAP DUMP END.
fn jcmd_dump() -> Vec<u8> {
    let corpus = jvm_harness::corpus_dir().expect("the heap dump corpus (../shared/corpus/hprof) is missing");
    let gz = corpus.join("mat_openjdk_jdk11_04_x64.hprof.gz");
    let out = Command::new("gzip").arg("-dc").arg(&gz).output().expect("gzip");
    assert!(out.status.success(), "gzip -dc {}", gz.display());
    out.stdout
}

#[test]
fn every_command_says_a_cut_off_dump_is_incomplete() {
    let scratch = jvm_harness::scratch("frontend-cut-off");
    let whole = jcmd_dump();
    // The file ends with the 9-byte HEAP DUMP END record (tag 0x2C, no body).
    let end = whole.len() - 9;
    assert_eq!(whole[end], 0x2C, "the corpus file no longer ends with HEAP DUMP END");
    let cut = scratch.path().join("cut.hprof");
    std::fs::write(&cut, &whole[..end]).unwrap();
    let good = scratch.path().join("whole.hprof");
    std::fs::write(&good, &whole).unwrap();
    let expected = format!("incomplete: the dump ends without HEAP DUMP END at offset {end}");
    let f = cut.to_str().unwrap();
    for args in [
        vec!["summary", f],
        vec!["histo", f, "--top", "3"],
        vec!["print", f, "-o", "/dev/null"],
        vec!["dominators", f, "--top", "3"],
        vec!["leaks", f],
        vec!["diff", f, f],
        vec!["diff", "--objects", f, f],
        vec!["waste", f],
        vec!["loaders", f],
        vec!["threads", f],
    ] {
        let o = Command::new(hprof()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&expected), "hprof {args:?} did not warn: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // print closes the cut-off dump with what happened, not with an invented END.
    let o = Command::new(hprof()).args(["print", f]).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(!text.lines().any(|l| l == "HEAP DUMP END"), "print invented a HEAP DUMP END");
    assert!(text.contains(&format!("HEAP DUMP INCOMPLETE: the dump ends without HEAP DUMP END at offset {end}")));
    // JSON carries it; the whole file has none, with the same numbers.
    let json = |p: &Path, cmd: &str| -> serde_json::Value {
        let o = Command::new(hprof()).args([cmd, "--json", p.to_str().unwrap()]).output().unwrap();
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let (s_cut, s_good) = (json(&cut, "summary"), json(&good, "summary"));
    assert!(s_cut["incomplete"].as_str().unwrap().starts_with(&expected));
    assert!(s_good["incomplete"].is_null());
    assert_eq!(s_cut["heap"]["objects"], s_good["heap"]["objects"]);
    let h = json(&cut, "histo");
    assert!(h["incomplete"].as_str().unwrap().starts_with(&expected));
    let o = Command::new(hprof()).args(["summary", good.to_str().unwrap()]).output().unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("incomplete"));
}

#[test]
fn a_reader_that_goes_away_ends_each_command_quietly() {
    let scratch = jvm_harness::scratch("frontend-broken-pipe");
    let f = scratch.path().join("whole.hprof");
    std::fs::write(&f, jcmd_dump()).unwrap();
    let f = f.to_str().unwrap();
    for args in [vec!["histo", f], vec!["summary", f], vec!["dominators", f, "--top", "500"], vec!["print", f]] {
        let mut child =
            Command::new(hprof()).args(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        // Read one line, as `head -1` does, and go away.
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        assert!(!first.is_empty(), "hprof {args:?} printed nothing");
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "hprof {args:?}: {err}");
        use std::os::unix::process::ExitStatusExt;
        assert!(
            o.status.success() || o.status.signal() == Some(libc_sigpipe()),
            "hprof {args:?} ended with {:?}",
            o.status
        );
    }
}

fn libc_sigpipe() -> i32 {
    13
}
