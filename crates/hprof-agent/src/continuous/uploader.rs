//! The upload thread: a bounded queue of encoded windows, sent over HTTP(S) by ureq on a plain thread of its
//! own, so that a slow or dead backend costs the JVM nothing but the queue's memory.
//!
//! The queue holds at most [`MAX_WINDOWS`] uploads and [`MAX_BYTES`] bytes (plus the one in flight); a new
//! window beyond that pushes the oldest out, counted and reported once a minute. A failed upload is retried
//! with exponential backoff (0.5 s doubling to 30 s, ±50% jitter); an answer that says the request itself is
//! wrong (4xx other than 408/429) drops it. At exit, [`Uploader::flush`] sends what is queued until its
//! deadline, and then the JVM goes on exiting whatever the backend does.

use crate::log;
use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub const MAX_WINDOWS: usize = 16;
pub const MAX_BYTES: usize = 16 << 20;
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
const DROP_REPORT_EVERY: Duration = Duration::from_secs(60);

/// One HTTP POST.
pub struct Upload {
    /// `otlp` or `pyroscope`, for messages.
    pub target: &'static str,
    pub url: String,
    pub content_type: &'static str,
    pub headers: Arc<Vec<(String, String)>>,
    pub body: Vec<u8>,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Upload>,
    bytes: usize,
    in_flight: bool,
    /// Set by flush: send what is left until then, then stop.
    deadline: Option<Instant>,
    sent: u64,
    dropped: u64,
    dropped_reported: u64,
    failures: u64,
    peak_bytes: usize,
    peak_windows: usize,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the thread (new upload, flush) and the flusher (queue drained).
    changed: Condvar,
}

pub struct Uploader {
    shared: Arc<Shared>,
}

/// What the uploads came to, for the exit line.
pub struct Stats {
    pub sent: u64,
    pub dropped: u64,
    pub failures: u64,
    pub queued: usize,
    pub peak_bytes: usize,
    pub peak_windows: usize,
}

impl Uploader {
    pub fn start() -> Result<Uploader, String> {
        let shared = Arc::new(Shared::default());
        let s = shared.clone();
        std::thread::Builder::new()
            .name("hprof-upload".into())
            .spawn(move || crate::panic_guard::guard(|| run(&s), ()))
            .map_err(|e| format!("cannot start the upload thread: {e}"))?;
        Ok(Uploader { shared })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Queues an upload, pushing the oldest out when the queue is full. Never blocks on the network.
    pub fn push(&self, upload: Upload) {
        let mut s = self.lock();
        s.bytes += upload.body.len();
        s.queue.push_back(upload);
        while s.queue.len() > MAX_WINDOWS || (s.bytes > MAX_BYTES && s.queue.len() > 1) {
            if let Some(old) = s.queue.pop_front() {
                s.bytes -= old.body.len();
                s.dropped += 1;
            }
        }
        s.peak_bytes = s.peak_bytes.max(s.bytes);
        s.peak_windows = s.peak_windows.max(s.queue.len());
        self.shared.changed.notify_all();
    }

    /// Sends what is queued for at most `timeout`, then returns whatever the backend does.
    pub fn flush(&self, timeout: Duration) -> Stats {
        let deadline = Instant::now() + timeout;
        let mut s = self.lock();
        s.deadline = Some(deadline);
        self.shared.changed.notify_all();
        while (!s.queue.is_empty() || s.in_flight) && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            s = self.shared.changed.wait_timeout(s, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        Stats {
            sent: s.sent,
            dropped: s.dropped,
            failures: s.failures,
            queued: s.queue.len() + s.in_flight as usize,
            peak_bytes: s.peak_bytes,
            peak_windows: s.peak_windows,
        }
    }
}

fn jitter(d: Duration) -> Duration {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    // 50% to 150% of d.
    d.mul_f64(0.5 + (h.finish() % 1000) as f64 / 1000.0)
}

enum Outcome {
    Sent,
    Retry(String),
    Refused(String),
}

fn send(agent: &ureq::Agent, u: &Upload, timeout: Duration) -> Outcome {
    let mut req = agent.post(&u.url).content_type(u.content_type);
    for (k, v) in u.headers.iter() {
        req = req.header(k.as_str(), v.as_str());
    }
    let req = req.config().timeout_global(Some(timeout)).build();
    match req.send(u.body.as_slice()) {
        Ok(resp) => {
            let status = resp.status().as_u16();
            match status {
                200..=299 => Outcome::Sent,
                408 | 429 | 500..=599 => Outcome::Retry(format!("HTTP {status}")),
                _ => Outcome::Refused(format!("HTTP {status}")),
            }
        }
        Err(e) => Outcome::Retry(e.to_string()),
    }
}

fn run(shared: &Shared) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(Duration::from_secs(3)))
        .build()
        .into();
    let mut last_report = Instant::now();
    let mut failing: Option<&'static str> = None;
    let mut refused_reported = false;
    let mut backoff = FIRST_BACKOFF;
    let mut retry_at: Option<Instant> = None;
    let lock = || shared.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        // Wait for work (or the retry time, or the next drop report).
        let upload = {
            let mut s = lock();
            loop {
                let now = Instant::now();
                if s.dropped > s.dropped_reported && now.duration_since(last_report) >= DROP_REPORT_EVERY {
                    log::warning(&format!(
                        "continuous profiles: {} windows dropped so far (backend unreachable or slow; the queue holds \
                         at most {MAX_WINDOWS} windows and {} MiB)",
                        s.dropped,
                        MAX_BYTES >> 20
                    ));
                    s.dropped_reported = s.dropped;
                    last_report = now;
                }
                let flushing = s.deadline.is_some();
                if flushing && (s.queue.is_empty() || s.deadline.is_some_and(|d| now >= d)) {
                    shared.changed.notify_all();
                    return;
                }
                let due = retry_at.is_none_or(|t| now >= t);
                if due && let Some(u) = s.queue.pop_front() {
                    s.bytes -= u.body.len();
                    s.in_flight = true;
                    break u;
                }
                let wake = retry_at.filter(|_| !s.queue.is_empty()).map_or(DROP_REPORT_EVERY, |t| t - now.min(t));
                s = shared
                    .changed
                    .wait_timeout(s, wake.max(Duration::from_millis(1)))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        };
        let deadline = lock().deadline;
        let timeout =
            deadline.map_or(REQUEST_TIMEOUT, |d| d.saturating_duration_since(Instant::now()).min(REQUEST_TIMEOUT));
        let outcome = send(&agent, &upload, timeout.max(Duration::from_millis(1)));
        let mut s = lock();
        s.in_flight = false;
        match outcome {
            Outcome::Sent => {
                s.sent += 1;
                backoff = FIRST_BACKOFF;
                retry_at = None;
                if failing.take().is_some() {
                    log::warning(&format!(
                        "continuous profiles: {} uploads to {} work again",
                        upload.target, upload.url
                    ));
                }
            }
            Outcome::Retry(why) => {
                s.failures += 1;
                if failing.is_none() {
                    log::warning(&format!(
                        "continuous profiles: cannot upload to {} ({why}); retrying with backoff",
                        upload.url
                    ));
                    failing = Some(upload.target);
                }
                // While flushing, the deadline bounds the retries: a short pause instead of the backoff.
                let pause = if s.deadline.is_some() { Duration::from_millis(100) } else { jitter(backoff) };
                retry_at = Some(Instant::now() + pause);
                backoff = (backoff * 2).min(MAX_BACKOFF);
                // Back at the head of the queue, unless newer windows filled it meanwhile.
                if s.queue.len() < MAX_WINDOWS && s.bytes + upload.body.len() <= MAX_BYTES {
                    s.bytes += upload.body.len();
                    s.queue.push_front(upload);
                } else {
                    s.dropped += 1;
                }
            }
            Outcome::Refused(why) => {
                s.dropped += 1;
                if !refused_reported {
                    log::error(&format!(
                        "continuous profiles: {} refused the upload ({why}); window dropped",
                        upload.url
                    ));
                    refused_reported = true;
                }
            }
        }
        shared.changed.notify_all();
    }
}
