//! `hprof print` and `hprof flame` on a text report holding a flat profile (cpu=flat, -Xprof): the last
//! profile of the file comes out again, and the flame graph weighs thread → table → method by ticks.

use hprof_format::text::flat::{GlobalSummary, NamedRow, ThreadProfile, write_global, write_thread};
use std::process::Command;

fn report(dir: &std::path::Path) -> std::path::PathBuf {
    let main = ThreadProfile {
        name: "main".into(),
        seconds: 2.0,
        compiled: vec![NamedRow { name: "Hot.alpha".into(), code: 75, native: 0 }],
        interpreted: vec![NamedRow { name: "Hot.spin".into(), code: 0, native: 25 }],
        blocked: 10,
        ..Default::default()
    };
    let global = GlobalSummary { seconds: 2.0, received: 200, gc: 4, ..Default::default() };
    let mut text = b"JAVA PROFILE 1.0.1, created Wed Nov 25 19:00:00 2026\n\nTHREAD START (obj=1, id = 200001, name=\"main\", group=\"main\")\n".to_vec();
    // A first dump (SIGQUIT) and the one at exit: the last one counts.
    write_thread(&mut text, &ThreadProfile { blocked: 1, ..main.clone() }, 0.0).unwrap();
    write_global(&mut text, &global).unwrap();
    write_thread(&mut text, &main, 0.0).unwrap();
    write_global(&mut text, &global).unwrap();
    let path = dir.join("java.hprof.txt");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn print_and_flame_read_a_flat_profile() {
    let dir = jvm_harness::scratch("flat-text");
    let file = report(dir.path());
    let out = Command::new(jvm_harness::hprof_binary()).arg("print").arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Flat profile of 2.00 secs (110 total ticks): main"), "{text}");
    assert!(text.contains(" 75.0%    75  +     0    Hot.alpha"), "{text}");
    assert!(text.contains(" 25.0%     0  +    25    Hot.spin"), "{text}");
    assert!(text.contains("Global summary of 2.00 seconds:"), "{text}");

    let html = dir.path().join("flat.html");
    let out = Command::new(jvm_harness::hprof_binary())
        .args(["flame", "--json", "-o"])
        .arg(&html)
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["total"], 110, "{summary}");
    assert_eq!(summary["unit"], "ticks");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Hot.alpha") && page.contains("Blocked"), "the flame graph names the rows");
}
