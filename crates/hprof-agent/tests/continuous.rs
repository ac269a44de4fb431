//! Continuous profiles (otlp=, pyroscope=) from real JVMs to a backend on 127.0.0.1 (scripts/otel/receiver.py)
//! that decodes with the official definitions: PyPI's opentelemetry-proto 1.45.2 for OTLP, profile.proto
//! compiled by grpcio-tools for Pyroscope's pprof. Never with hprof-rs's own decoder.

use jvm_harness::{Java, JavaRun, JvmSlot, all_jdks, jdk17, repo_root, scratch, skip};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The Python packages `make pyotel` installs; false (after a named skip) without them.
fn have_decoder() -> bool {
    let py = repo_root().join("target/pyotel");
    if py.join("opentelemetry/proto/collector/profiles").is_dir() && py.join("grpc_tools").is_dir() {
        return true;
    }
    skip(format!("{} lacks opentelemetry-proto and grpcio-tools (make pyotel)", py.display()));
    false
}

struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
}

impl Receiver {
    /// Starts the receiver; with `--start-after`, returns before it listens.
    fn start(dir: &Path, extra: &[&str]) -> Receiver {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let out = dir.join("received.jsonl");
        let mut child = Command::new("python3")
            .arg(repo_root().join("scripts/otel/receiver.py"))
            .arg(&out)
            .arg(port.to_string())
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        if !extra.contains(&"--start-after") && !extra.contains(&"--start-on") {
            use std::io::BufRead;
            let mut line = String::new();
            std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
            assert!(line.starts_with("listening"), "receiver: {line:?}");
        }
        Receiver { child, port, out }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn own_alpha(run: &JavaRun) -> f64 {
    let s = run.stdout.split("hotAlpha=").nth(1).unwrap_or_else(|| panic!("program result missing:\n{}", run.stdout));
    s.split(' ').next().unwrap().parse().unwrap()
}

/// (alpha, beta) sample counts of one decoded profile, by leaf function.
fn split(profile: &Value) -> (i64, i64) {
    let (mut a, mut b) = (0, 0);
    for s in profile["samples"].as_array().unwrap() {
        match s["frames"][0]["function"].as_str() {
            Some("CpuAccuracy.hotAlpha") => a += s["values"][0].as_i64().unwrap(),
            Some("CpuAccuracy.hotBeta") => b += s["values"][0].as_i64().unwrap(),
            _ => {}
        }
    }
    (a, b)
}

fn otlp_samples_profiles(requests: &[Value]) -> Vec<&Value> {
    requests
        .iter()
        .filter(|r| r["path"] == "/v1development/profiles")
        .map(|r| {
            assert!(r["error"].is_null(), "the receiver could not decode: {r}");
            let ps = r["decoded"]["profiles"].as_array().unwrap();
            ps.iter().find(|p| p["sample_type"][0] == "samples").expect("a samples profile")
        })
        .collect()
}

#[test]
fn otlp_windows_carry_the_cpu_split_attributes_labels_and_lines() {
    if !have_decoder() {
        return;
    }
    for jdk in all_jdks() {
        // A statistical check per 2-second window: one run beyond 3 points is retried once (printed).
        for attempt in 1..=2 {
            let what = format!("JDK {} (attempt {attempt})", jdk.version);
            let dir = scratch("continuous-otlp");
            let _alone = JvmSlot::acquire_n(2);
            let rx = Receiver::start(dir.path(), &[]);
            let opts = format!(
                "cpu=samples,interval=1,otlp={},service=checkout,labels=env:prod;team:db,upload_interval=2s",
                rx.url()
            );
            let run = Java::new(&jdk, dir.path())
                .agentpath(&opts)
                .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
                .class("CpuAccuracy")
                .arg("8")
                .spawn_holding(None)
                .wait();
            run.assert_success();
            let own = own_alpha(&run);
            let requests = rx.requests();
            let profiles = otlp_samples_profiles(&requests);
            assert!(profiles.len() >= 4, "{what}: {} windows over 8 s at 2 s", profiles.len());
            let mut full = 0;
            let mut off = Vec::new();
            for p in &profiles {
                let (a, b) = split(p);
                if a + b >= 400 {
                    full += 1;
                    let share = 100.0 * a as f64 / (a + b) as f64;
                    if (share - own).abs() > 3.0 {
                        off.push(format!("{share:.1}% of {}", a + b));
                    }
                }
            }
            assert!(full >= 3, "{what}: {full} windows with enough samples (cpu starved?)");
            if !off.is_empty() && attempt == 1 {
                eprintln!("{what}: windows {off:?} vs the program's {own}%; measuring once more");
                continue;
            }
            assert!(off.is_empty(), "{what}: windows {off:?} are more than 3 points from the program's {own}%");
            // Windows follow each other: each starts where the last ended, about 2 s long.
            for w in profiles.windows(2) {
                let (t0, d0, t1) = (
                    w[0]["time_nanos"].as_u64().unwrap(),
                    w[0]["duration_nanos"].as_u64().unwrap(),
                    w[1]["time_nanos"].as_u64().unwrap(),
                );
                assert_eq!(t0 + d0, t1, "{what}: windows are contiguous");
            }
            let mid = profiles[1];
            let d = mid["duration_nanos"].as_u64().unwrap();
            assert!((1_500_000_000..3_000_000_000).contains(&d), "{what}: window of {d} ns");
            assert_eq!(
                (mid["period"].as_i64(), &mid["period_type"]),
                (Some(1_000_000), &serde_json::json!(["cpu", "nanoseconds"])),
                "{what}"
            );
            let res = &mid["resource"];
            assert_eq!(res["service.name"], "checkout", "{what}: {res}");
            assert_eq!((&res["env"], &res["team"]), (&"prod".into(), &"db".into()), "{what}: labels: {res}");
            assert_eq!(res["deployment.environment"], "test", "{what}: OTEL_RESOURCE_ATTRIBUTES: {res}");
            assert!(res["process.pid"].as_i64().unwrap() > 0, "{what}: {res}");
            assert!(!res["host.name"].as_str().unwrap().is_empty(), "{what}: {res}");
            assert!(
                res["process.runtime.version"].as_str().unwrap().starts_with(&jdk.version.to_string()),
                "{what}: {res}"
            );
            assert_eq!(res["telemetry.sdk.name"], "hprof-rs", "{what}");
            assert_eq!(mid["scope"], "hprof-rs");
            let s = mid["samples"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["frames"][0]["function"] == "CpuAccuracy.hotAlpha")
                .unwrap();
            assert_eq!(s["attrs"]["thread.name"], "main", "{what}: {s}");
            assert!(s["attrs"]["thread.id"].as_i64().unwrap() > 0, "{what}: {s}");
            let top = &s["frames"][0];
            assert_eq!(
                (top["file"].as_str(), top["system_name"].as_str()),
                (Some("CpuAccuracy.java"), Some("CpuAccuracy.hotAlpha(J)J")),
                "{what}"
            );
            assert!(top["line"].as_i64().unwrap() > 0, "{what}: line numbers: {top}");
            assert_eq!(s["frames"][1]["function"], "CpuAccuracy.main", "{what}: the full stack");
            let unmapped = mid["samples"].as_array().unwrap().iter().flat_map(|s| s["frames"].as_array().unwrap());
            assert!(unmapped.clone().all(|f| f["mapping"] == "java"), "{what}: every location in the java mapping");
            break;
        }
    }
}

#[test]
fn pyroscope_gets_gzipped_pprof_named_by_service_type_and_labels() {
    if !have_decoder() {
        return;
    }
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("continuous-pyroscope");
        let rx = Receiver::start(dir.path(), &[]);
        let opts = format!("cpu=samples,pyroscope={},service=checkout,labels=env:prod,upload_interval=1s", rx.url());
        let run = Java::new(&jdk, dir.path()).agentpath(&opts).class("CpuAccuracy").arg("3").run();
        run.assert_success();
        let requests = rx.requests();
        let ingests: Vec<&Value> = requests.iter().filter(|r| r["path"] == "/ingest").collect();
        assert!(ingests.len() >= 3, "{what}: {} uploads", ingests.len());
        let mut total = (0, 0);
        for r in &ingests {
            assert!(r["error"].is_null(), "{what}: {r}");
            assert_eq!(r["gzipped"], true, "{what}");
            let q = &r["query"];
            assert_eq!(q["name"], "checkout.cpu{env=prod}", "{what}: {q}");
            assert_eq!(
                (&q["format"], &q["spyName"], &q["sampleRate"]),
                (&"pprof".into(), &"hprof-rs".into(), &"100".into()),
                "{what}"
            );
            let (from, until) = (
                q["from"].as_str().unwrap().parse::<u64>().unwrap(),
                q["until"].as_str().unwrap().parse::<u64>().unwrap(),
            );
            assert!(from <= until && until - from <= 3, "{what}: {from}..{until}");
            let p = &r["decoded"]["profiles"][0];
            assert_eq!(p["sample_types"], serde_json::json!([["samples", "count"], ["cpu", "nanoseconds"]]), "{what}");
            let (a, b) = split(p);
            total = (total.0 + a, total.1 + b);
            for s in p["samples"].as_array().unwrap() {
                assert_eq!(
                    s["values"][1].as_i64().unwrap(),
                    s["values"][0].as_i64().unwrap() * 10_000_000,
                    "{what}: cpu ns"
                );
            }
        }
        let share = 100.0 * total.0 as f64 / (total.0 + total.1) as f64;
        assert!((share - own_alpha(&run)).abs() <= 10.0, "{what}: {share:.1}% over all windows");
        let hot = ingests
            .iter()
            .flat_map(|r| r["decoded"]["profiles"][0]["samples"].as_array().unwrap())
            .find(|s| s["frames"][0]["function"] == "CpuAccuracy.hotBeta")
            .unwrap();
        assert!(
            hot["frames"][0]["line"].as_i64().unwrap() > 0 && hot["attrs"]["thread.name"] == "main",
            "{what}: {hot}"
        );
    }
}

/// The bound the exit line states and the peak it saw: `queue peak N bytes in W windows (bound B windows, X bytes)`.
fn queue_line(stderr: &str) -> (u64, u64, u64, u64) {
    let line = stderr.lines().find(|l| l.contains("queue peak")).unwrap_or_else(|| panic!("no stats line:\n{stderr}"));
    let nums: Vec<u64> =
        line.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    let n = nums.len();
    (nums[n - 4], nums[n - 3], nums[n - 2], nums[n - 1])
}

#[test]
fn a_backend_down_at_first_gets_the_later_windows_and_the_program_is_unaffected() {
    if !have_decoder() {
        return;
    }
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("continuous-down");
        // The backend comes up 5 s after the agent's first upload failed (timed from the agent, not from the
        // test: a loaded machine can take seconds to start a JVM).
        let up = dir.path().join("backend-up");
        let rx = Receiver::start(dir.path(), &["--start-on", up.to_str().unwrap()]);
        let opts = format!("cpu=samples,otlp={},upload_interval=1s", rx.url());
        let running = Java::new(&jdk, dir.path()).agentpath(&opts).class("CpuAccuracy").arg("12").spawn();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !running.stderr_so_far().contains("HPROF WARNING: continuous profiles: cannot upload to") {
            assert!(Instant::now() < deadline, "{what}: no failed upload in 60 s: {}", running.stderr_so_far());
            std::thread::sleep(Duration::from_millis(50));
        }
        let down_since = Instant::now();
        std::thread::sleep(Duration::from_secs(5));
        std::fs::write(&up, b"").unwrap();
        let run = running.wait();
        run.assert_success();
        assert!(own_alpha(&run) > 50.0, "{what}: the program's result: {}", run.stdout);
        assert!(!run.stderr.contains("HPROF ERROR"), "{what}: {}", run.stderr);
        let requests = rx.requests();
        let profiles = otlp_samples_profiles(&requests);
        // Up 5 s after the first failure, in a 12 s run at 1 s windows: the queued windows and the later ones
        // arrive.
        assert!(profiles.len() >= 5, "{what}: {} windows arrived", profiles.len());
        assert!(down_since.elapsed() > Duration::from_secs(5), "{what}");
        let (peak_bytes, peak_windows, bound_windows, bound_bytes) = queue_line(&run.stderr);
        assert!(
            peak_windows <= bound_windows && peak_bytes <= bound_bytes,
            "{what}: {peak_bytes} B / {peak_windows} windows"
        );
        assert!(peak_windows >= 2, "{what}: windows queued while the backend was down ({peak_windows})");
    }
}

#[test]
fn a_backend_that_never_answers_does_not_hold_the_exit_past_the_flush_timeout() {
    if !have_decoder() {
        return;
    }
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("continuous-hang");
        let rx = Receiver::start(dir.path(), &["--hang"]);
        let opts = format!("cpu=samples,otlp={},upload_interval=1s,flush_timeout=2s", rx.url());
        let mut running = Java::new(&jdk, dir.path()).agentpath(&opts).class("CpuAccuracy").arg("3").spawn();
        running.wait_for_stdout("own-share", Duration::from_secs(60));
        let finished = Instant::now();
        let run = running.wait();
        let exit = finished.elapsed();
        run.assert_success();
        assert!(exit <= Duration::from_secs(3), "{what}: the JVM took {exit:?} to exit after main (flush_timeout=2s)");
        assert!(run.stderr.contains("not uploaded by the flush timeout"), "{what}: {}", run.stderr);
    }
}

#[test]
fn bad_urls_and_options_are_errors_at_load_naming_them() {
    let cases: &[(&str, &str)] = &[
        ("cpu=samples,otlp=collector:4318", "otlp=collector:4318"),
        ("cpu=samples,pyroscope=ftp://h", "pyroscope=ftp://h"),
        ("cpu=samples,otlp=http://h:99999", "otlp=http://h:99999"),
        ("cpu=samples,otlp=http://h,upload_interval=0s", "upload_interval=0s"),
        ("cpu=samples,otlp=http://h,labels=nocolon", "labels=nocolon"),
        ("cpu=times,otlp=http://h", "otlp= and pyroscope= need cpu=samples, heap=sites or monitor=y"),
        ("cpu=samples,otlp=env", "OTEL_EXPORTER_OTLP_ENDPOINT"),
    ];
    let jdk = jdk17();
    for (opts, needle) in cases {
        let dir = scratch("continuous-badopt");
        let run =
            Java::new(&jdk, dir.path()).agentpath(opts).env("OTEL_EXPORTER_OTLP_ENDPOINT", "").class("Hello").run();
        assert_ne!(run.code(), Some(0), "{opts} must fail");
        let errors: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("HPROF ERROR:")).collect();
        assert!(
            errors.len() == 1 && errors[0].contains(needle),
            "{opts}: want one HPROF ERROR naming {needle}:\n{}",
            run.stderr
        );
        assert!(!run.stderr.contains("panicked"), "{opts}:\n{}", run.stderr);
    }
}

#[test]
fn hprof_attach_uploads_until_stop() {
    if !have_decoder() {
        return;
    }
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("continuous-attach");
        let rx = Receiver::start(dir.path(), &[]);
        let running = Java::new(&jdk, dir.path()).class("CpuAccuracy").arg("9").spawn();
        std::thread::sleep(Duration::from_millis(1500));
        let attach = |args: &str| {
            let o = Command::new(jvm_harness::hprof_binary())
                .args(["attach", &running.pid().to_string(), args])
                .output()
                .unwrap();
            assert!(o.status.success(), "{what}: hprof attach {args}: {}", String::from_utf8_lossy(&o.stderr));
        };
        attach(&format!("cpu=samples,otlp={},upload_interval=1s,service=attached", rx.url()));
        std::thread::sleep(Duration::from_millis(3500));
        attach("stop");
        let at_stop = otlp_samples_profiles(&rx.requests()).len();
        assert!(at_stop >= 3, "{what}: {at_stop} windows in 3.5 s at 1 s");
        let run = running.wait();
        run.assert_success();
        let requests = rx.requests();
        let profiles = otlp_samples_profiles(&requests);
        assert_eq!(profiles.len(), at_stop, "{what}: no upload after stop");
        assert_eq!(profiles[0]["resource"]["service.name"], "attached", "{what}");
        let (a, b) = profiles.iter().map(|p| split(p)).fold((0, 0), |t, (a, b)| (t.0 + a, t.1 + b));
        assert!(a > 2 * b && b > 0, "{what}: {a}:{b} over the attached windows");
    }
}

/// Sums value `i` of the samples of `profile` whose leaf is `leaf` (and, if given, whose next frame is `caller`).
fn sum_at(profile: &Value, leaf: &str, caller: Option<&str>) -> i64 {
    profile["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["frames"][0]["function"] == leaf && caller.is_none_or(|c| s["frames"][1]["function"] == c))
        .map(|s| s["values"][0].as_i64().unwrap())
        .sum()
}

/// A number the program printed: `name=N`.
fn printed(run: &JavaRun, name: &str) -> i64 {
    let s = run.stdout.split(&format!("{name}=")).nth(1).unwrap_or_else(|| panic!("no {name} in {}", run.stdout));
    s.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn alloc_and_lock_windows_go_to_both_backends_with_their_types_units_and_periods() {
    if !have_decoder() {
        return;
    }
    for jdk in all_jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = scratch("continuous-alloc-lock");
        let rx = Receiver::start(dir.path(), &[]);
        let opts = format!(
            "cpu=samples,heap=sites,alloc_interval=65536,monitor=y,otlp={url},pyroscope={url},service=mix,\
             upload_interval=2s",
            url = rx.url()
        );
        let run = Java::new(&jdk, dir.path()).agentpath(&opts).class("ContinuousMix").arg("6").run();
        run.assert_success();
        let (chunks, turns) = (printed(&run, "chunks"), printed(&run, "turns"));
        let requests = rx.requests();
        // OTLP: every window carries the three profile types, each sample type a profile of its own.
        let windows: Vec<&Vec<Value>> = requests
            .iter()
            .filter(|r| r["path"] == "/v1development/profiles")
            .map(|r| {
                assert!(r["error"].is_null(), "{what}: the receiver could not decode: {r}");
                r["decoded"]["profiles"].as_array().unwrap()
            })
            .collect();
        assert!(windows.len() >= 3, "{what}: {} windows over 6 s at 2 s", windows.len());
        let types = |w: &Vec<Value>| -> Vec<Value> { w.iter().map(|p| p["sample_type"].clone()).collect() };
        let expected = serde_json::json!([
            ["samples", "count"],
            ["cpu", "nanoseconds"],
            ["alloc_objects", "count"],
            ["alloc_space", "bytes"],
            ["inuse_objects", "count"],
            ["inuse_space", "bytes"],
            ["contentions", "count"],
            ["delay", "nanoseconds"]
        ]);
        let by_type = |w: &Vec<Value>, t: &str| w.iter().find(|p| p["sample_type"][0] == t).cloned().unwrap();
        let (mut chunk_objects, mut contentions, mut delay, mut inuse) = (0, 0, 0, 0);
        for w in &windows {
            assert_eq!(serde_json::Value::Array(types(w)), expected, "{what}: one window's profiles");
            let alloc = by_type(w, "alloc_objects");
            assert_eq!(
                (&alloc["period_type"], alloc["period"].as_i64()),
                (&serde_json::json!(["space", "bytes"]), Some(65536)),
                "{what}"
            );
            let lock = by_type(w, "contentions");
            assert_eq!(
                (&lock["period_type"], lock["period"].as_i64()),
                (&serde_json::json!(["contentions", "count"]), Some(1)),
                "{what}"
            );
            assert_eq!(alloc["time_nanos"], by_type(w, "samples")["time_nanos"], "{what}: one window, one time");
            chunk_objects += sum_at(&alloc, "byte[]", Some("ContinuousMix$Chunk.<init>"));
            inuse = inuse.max(sum_at(&by_type(w, "inuse_objects"), "byte[]", Some("ContinuousMix$Chunk.<init>")));
            contentions += sum_at(&lock, "java.lang.Object", Some("ContinuousMix.work"));
            delay += sum_at(&by_type(w, "delay"), "java.lang.Object", Some("ContinuousMix.work"));
            for p in w.iter() {
                for s in p["samples"].as_array().unwrap() {
                    assert!(s["frames"].as_array().unwrap().iter().all(|f| f["mapping"] == "java"), "{what}: {s}");
                }
            }
        }
        // Sampled every 64 KiB: the Chunks' 1 KiB arrays (some 4,000 samples) estimated within 20% of what
        // the program made.
        let ratio = chunk_objects as f64 / chunks as f64;
        assert!((0.8..1.2).contains(&ratio), "{what}: {chunk_objects} Chunk arrays estimated, {chunks} made");
        // The ring keeps 1,000 live; what is live is known as of the last collection checked.
        assert!(inuse > 0, "{what}: no Chunk array in use in any window");
        // Two threads taking turns on a lock held 2 ms: most turns block, each for up to 2 ms.
        assert!(contentions >= turns / 4 && contentions <= turns, "{what}: {contentions} contentions, {turns} turns");
        assert!(delay >= contentions * 500_000, "{what}: {delay} ns blocked over {contentions} contentions");
        let alloc_frame = windows
            .iter()
            .flat_map(|w| by_type(w, "alloc_space")["samples"].as_array().unwrap().clone())
            .find(|s| {
                s["frames"][0]["function"] == "ContinuousMix$Chunk"
                    && s["frames"][1]["function"] == "ContinuousMix.allocate"
            })
            .unwrap();
        assert!(alloc_frame["frames"][1]["line"].as_i64().unwrap() > 0, "{what}: line numbers: {alloc_frame}");

        // Pyroscope: one upload per type and window, named <service>.<type>, a sampling rate for cpu only.
        let ingests: Vec<&Value> = requests.iter().filter(|r| r["path"] == "/ingest").collect();
        for (kind, types) in [
            ("cpu", serde_json::json!([["samples", "count"], ["cpu", "nanoseconds"]])),
            (
                "alloc",
                serde_json::json!([
                    ["alloc_objects", "count"],
                    ["alloc_space", "bytes"],
                    ["inuse_objects", "count"],
                    ["inuse_space", "bytes"]
                ]),
            ),
            ("lock", serde_json::json!([["contentions", "count"], ["delay", "nanoseconds"]])),
        ] {
            let of_kind: Vec<&&Value> =
                ingests.iter().filter(|r| r["query"]["name"] == format!("mix.{kind}{{}}")).collect();
            assert!(of_kind.len() >= 2, "{what}: {} {kind} uploads", of_kind.len());
            for r in of_kind {
                assert!(r["error"].is_null() && r["gzipped"] == true, "{what}: {r}");
                assert_eq!(r["decoded"]["profiles"][0]["sample_types"], types, "{what}: {kind}");
                assert_eq!(r["query"].get("sampleRate").is_some(), kind == "cpu", "{what}: {kind}: {}", r["query"]);
            }
        }
    }
}

/// cpu=wall's windows go out as profile type `wall`: every thread whatever its state, the state as the root
/// frame, wall time as samples × interval; the sleeper about half asleep by the uploaded samples alone.
#[test]
fn wall_windows_go_out_as_type_wall_with_each_threads_state() {
    if !have_decoder() {
        return;
    }
    let jdk = jdk17();
    let dir = scratch("continuous-wall");
    let rx = Receiver::start(dir.path(), &[]);
    let opts = format!("cpu=wall,interval=10,pyroscope={},service=checkout,upload_interval=1s", rx.url());
    let run = Java::new(&jdk, dir.path()).agentpath(&opts).class("WallClock").args(&["4", "0"]).run();
    run.assert_success();
    let requests = rx.requests();
    let ingests: Vec<&Value> = requests.iter().filter(|r| r["path"] == "/ingest").collect();
    assert!(ingests.len() >= 3, "{} uploads over 4 s at 1 s", ingests.len());
    let (mut asleep, mut sleeper) = (0, 0);
    for r in &ingests {
        assert!(r["error"].is_null(), "{r}");
        assert_eq!(r["query"]["name"], "checkout.wall{}", "{r}");
        assert_eq!(r["query"]["sampleRate"], "100", "{r}");
        let p = &r["decoded"]["profiles"][0];
        assert_eq!(p["sample_types"], serde_json::json!([["samples", "count"], ["wall", "nanoseconds"]]));
        for s in p["samples"].as_array().unwrap() {
            let (count, ns) = (s["values"][0].as_i64().unwrap(), s["values"][1].as_i64().unwrap());
            assert_eq!(ns, count * 10_000_000, "wall ns: {s}");
            if s["attrs"]["thread.name"] == "sleeper" {
                sleeper += count;
                let root = s["frames"].as_array().unwrap().last().unwrap()["function"].as_str().unwrap();
                assert!(root.starts_with('['), "a state as the root frame: {s}");
                if root == "[sleeping]" {
                    asleep += count;
                }
            }
        }
    }
    let share = 100.0 * asleep as f64 / sleeper.max(1) as f64;
    assert!(sleeper >= 200 && (35.0..=65.0).contains(&share), "sleeper {asleep}/{sleeper} asleep ({share:.1}%)");
}
