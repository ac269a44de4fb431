//! Continuous profiles (`otlp=`, `pyroscope=`): every `upload_interval=` the samples since the last window
//! are encoded (hprof-format's OTLP and pprof encoders) and handed to the upload thread's bounded queue.
//!
//! - `resource`: the resource attributes and endpoint settings, from the options and OTEL_* variables.
//! - `window`: the window's profile types, one per capability ([`WindowSource`]: cpu, alloc, lock).
//! - `uploader`: the queue and the HTTP thread (retries, drops, flush at exit).
//!
//! The window is taken on an agent thread of its own ("HPROF uploads"), never on the sampler's; encoding
//! happens there too; the network only on the upload thread.

mod resource;
mod uploader;
mod window;

use crate::agent_thread::StopSwitch;
use crate::context::Context;
use crate::hub::Capability;
use crate::log;
use crate::options::Options;
use hprof_format::profiles::{Profile, otlp, pprof};
use jvmti::{EventHandler, Jni};
use resource::Settings;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use uploader::{Upload, Uploader};

pub use uploader::{MAX_BYTES, MAX_WINDOWS};
pub use window::{Alloc, Cpu, Lock, WindowSource};

/// Shared with the "HPROF uploads" thread.
pub struct Continuous(Arc<Inner>);

pub struct Inner {
    /// The profile types of every window, in the order they are sent.
    sources: Vec<Box<dyn WindowSource>>,
    interval: Duration,
    flush_timeout: Duration,
    settings: OnceLock<Settings>,
    uploader: OnceLock<Uploader>,
    collector: StopSwitch,
    /// Start of the current window, Unix nanoseconds.
    window_start: Mutex<u64>,
}

fn now_nanos() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

impl Continuous {
    pub fn new(options: &Options, sources: Vec<Box<dyn WindowSource>>) -> Continuous {
        Continuous(Arc::new(Inner {
            sources,
            interval: Duration::from_millis(options.continuous.upload_interval_ms as u64),
            flush_timeout: Duration::from_millis(options.continuous.flush_timeout_ms as u64),
            settings: OnceLock::new(),
            uploader: OnceLock::new(),
            collector: StopSwitch::default(),
            window_start: Mutex::new(now_nanos()),
        }))
    }
}

impl Inner {
    /// Takes the window since the last one, encodes it for each backend and queues the uploads.
    fn collect(&self, ctx: &Context, jni: Option<Jni>) {
        let (Some(settings), Some(uploader)) = (self.settings.get(), self.uploader.get()) else { return };
        let taken: Vec<Profile> = self.sources.iter().map(|s| s.take(ctx, jni)).collect();
        let end = now_nanos();
        let start = std::mem::replace(&mut *self.window_start.lock().unwrap_or_else(|e| e.into_inner()), end);
        let profiles: Vec<(&'static str, Profile)> = self
            .sources
            .iter()
            .zip(taken)
            .map(|(s, p)| (s.kind(), Profile { time_nanos: start, duration_nanos: end.saturating_sub(start), ..p }))
            .collect();
        for u in uploads(settings, &profiles, start, end) {
            uploader.push(u);
        }
    }

    fn background(&self, ctx: &'static Context, jni: Jni) {
        while !self.collector.wait(self.interval) {
            jni.with_local_frame(16, || self.collect(ctx, Some(jni)));
        }
        self.collector.finished();
    }
}

/// The HTTP requests of one window: OTLP's protobuf (every profile type in one request), Pyroscope's
/// gzipped pprof (one per profile type that has samples, named `<service>.<type>`).
fn uploads(s: &Settings, profiles: &[(&'static str, Profile)], start: u64, end: u64) -> Vec<Upload> {
    let mut out = Vec::new();
    if let Some(base) = &s.otlp {
        let profiles: Vec<Profile> = profiles.iter().map(|(_, p)| p.clone()).collect();
        let origin =
            otlp::Origin { resource: &s.resource, scope_name: "hprof-rs", scope_version: env!("CARGO_PKG_VERSION") };
        out.push(Upload {
            target: "otlp",
            url: format!("{base}/v1development/profiles"),
            content_type: "application/x-protobuf",
            headers: Arc::new(s.otlp_headers.clone()),
            body: otlp::encode(&origin, &profiles),
        });
    }
    if let Some(base) = &s.pyroscope {
        for (kind, profile) in profiles.iter().filter(|(_, p)| !p.samples.is_empty()) {
            out.push(Upload {
                target: "pyroscope",
                url: pyroscope_url(base, &s.service, kind, &s.labels, start, end, profile),
                content_type: "application/octet-stream",
                headers: Arc::new(Vec::new()),
                body: pprof::encode_gzip(profile),
            });
        }
    }
    out
}

/// `<base>/ingest?name=<service>.<type>{k=v,…}&from=<s>&until=<s>&format=pprof&…`, as Pyroscope's clients
/// send it (the name's braces and commas percent-encoded).
fn pyroscope_url(
    base: &str,
    service: &str,
    kind: &str,
    labels: &[(String, String)],
    start: u64,
    end: u64,
    profile: &Profile,
) -> String {
    let tags: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let name = format!("{service}.{kind}{{{}}}", tags.join(","));
    // A sampling rate in Hz means something for time only (cpu, wall).
    let rate = match &profile.period_type {
        Some(t) if t.unit == "nanoseconds" && profile.period > 0 => {
            format!("&sampleRate={}", 1_000_000_000 / profile.period)
        }
        _ => String::new(),
    };
    format!(
        "{base}/ingest?name={}&from={}&until={}&format=pprof{rate}&spyName=hprof-rs",
        encode_query(&name),
        start / 1_000_000_000,
        end.div_ceil(1_000_000_000)
    )
}

fn encode_query(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl EventHandler<Context> for Continuous {}

impl Capability for Continuous {
    fn name(&self) -> &'static str {
        "continuous profiles"
    }

    fn on_load(&self, ctx: &Context) -> Result<(), String> {
        // At load only the java.vm.* properties exist (java.version comes with VM init).
        let runtime = (
            ctx.jvmti.system_property(c"java.vm.name").unwrap_or_else(|_| "Java".into()),
            ctx.jvmti.system_property(c"java.vm.version").unwrap_or_default(),
        );
        let env = |k: &str| std::env::var(k).ok();
        let settings = resource::settings(&ctx.options.continuous, &env, (&runtime.0, &runtime.1))?;
        let me = &self.0;
        let _ = me.uploader.set(Uploader::start()?);
        let _ = me.settings.set(settings);
        *me.window_start.lock().unwrap_or_else(|e| e.into_inner()) = now_nanos();
        Ok(())
    }

    fn on_vm_init(&self, ctx: &Context, jni: Jni) {
        if !self.0.collector.start() {
            return;
        }
        let me = self.0.clone();
        if let Err(e) = crate::agent_thread::spawn(ctx, jni, "HPROF uploads", move |ctx, jni| me.background(ctx, jni)) {
            self.0.collector.finished();
            log::error(&format!("continuous profiles: {e}"));
        }
    }

    fn on_vm_death(&self, ctx: &Context, jni: Jni) {
        let me = &self.0;
        me.collector.stop();
        me.collect(ctx, Some(jni));
        let Some(uploader) = me.uploader.get() else { return };
        let stats = uploader.flush(me.flush_timeout);
        if stats.queued > 0 {
            log::warning(&format!(
                "continuous profiles: {} windows not uploaded by the flush timeout ({} ms)",
                stats.queued,
                me.flush_timeout.as_millis()
            ));
        }
        log::verbose(
            ctx.options.verbose,
            &format!(
                "continuous profiles: {} uploads sent, {} windows dropped, {} failed attempts; queue peak {} bytes in {} \
                 windows (bound {MAX_WINDOWS} windows, {MAX_BYTES} bytes)\n",
                stats.sent, stats.dropped, stats.failures, stats.peak_bytes, stats.peak_windows
            ),
        );
    }
}
