//! The HTTP side of `hprof serve`: hyper's HTTP/1 server on a one-thread tokio runtime.
//!
//! Why hyper: it is the HTTP implementation under axum, reqwest and most of Rust's web stack, so its
//! parser is fuzzed and maintained; it gives the limits and timeouts we need (bounded read buffer,
//! header read timeout) without a framework on top — routing here is one `match` (routes.rs), so
//! axum's router and tower layers would only add build time. Default features are off: HTTP/1 server
//! only, and tokio with just its single-thread runtime, sockets, timers and a semaphore.
//!
//! Connections are served concurrently on the runtime's one thread; the routes (some walk the whole
//! heap graph) run on tokio's blocking pool, so a slow page never holds up another connection.

use super::app::{App, Reply};
use super::guard::{Access, Verdict};
use super::index::Index;
use super::{api, spa};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// The longest request target (the URL in the request line) answered; longer ones get 414.
pub const MAX_TARGET: usize = 8 * 1024;
/// The most header bytes (names, values and separators) answered; more get 431.
pub const MAX_HEADERS: usize = 64 * 1024;
/// hyper's read buffer: a request head that has not ended within this many bytes is answered 431 and the
/// connection closed, so a client never makes the server hold more than this per connection.
pub const MAX_HEAD: usize = MAX_TARGET + MAX_HEADERS;
/// A client must send a whole request head within this time of the connection becoming ready for one
/// (also the idle time allowed between two requests of a kept-alive connection).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// No connection lives longer than this, however it is used (a client that never reads its answer).
pub const CONNECTION_LIFETIME: Duration = Duration::from_secs(300);
/// Connections served at once; further ones wait in the kernel's listen queue.
pub const MAX_CONNECTIONS: usize = 64;
/// Threads that run routes at once (the machine may have 2 cores; more only thrash).
const ROUTE_THREADS: usize = 4;

pub struct Server {
    /// One per file, in command-line order (`f=` in a request picks one).
    pub indexes: Vec<Arc<Index>>,
    pub access: Access,
}

/// Serves until the process is stopped.
pub fn run(listener: std::net::TcpListener, server: Server) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .max_blocking_threads(ROUTE_THREADS)
        .build()
        .map_err(|e| format!("serve: no runtime: {e}"))?;
    let server = Arc::new(server);
    rt.block_on(async move {
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
        loop {
            let Ok(slot) = slots.clone().acquire_owned().await else { return Ok(()) };
            let stream = match listener.accept().await {
                Ok((s, _)) => s,
                Err(e) => {
                    // Out of descriptors and the like: say so and breathe rather than spin.
                    eprintln!("hprof: serve: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let server = server.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| answer(server.clone(), req));
                let conn = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(HEADER_TIMEOUT)
                    .max_buf_size(MAX_HEAD)
                    .max_header_size(MAX_HEAD)
                    .serve_connection(TokioIo::new(stream), service);
                // Errors are the client's (timeouts, resets, malformed heads hyper answered already).
                let _ = tokio::time::timeout(CONNECTION_LIFETIME, conn).await;
                drop(slot);
            });
        }
    })
}

async fn answer(server: Arc<Server>, req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    if let Some(refusal) = refuse(&req) {
        return Ok(refusal);
    }
    let verdict = {
        let h = req.headers();
        let text = |name| h.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
        let cookies = h.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok());
        server.access.check(text(header::HOST), req.uri().query().unwrap_or(""), cookies, text(header::AUTHORIZATION))
    };
    let set_cookie = match verdict {
        Verdict::Deny { status, message } => return Ok(plain(status, message)),
        Verdict::Allow { set_cookie } => set_cookie,
    };
    if req.method() != Method::GET && req.method() != Method::HEAD {
        let mut r = plain(405, "only GET and HEAD");
        r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Ok(r);
    }
    let reply = page(&server.indexes, req.uri().path(), req.uri().query().unwrap_or("")).await;
    let mut r = respond(reply);
    if let Some(c) = set_cookie.and_then(|c| HeaderValue::from_str(&c).ok()) {
        r.headers_mut().insert(header::SET_COOKIE, c);
    }
    Ok(r)
}

/// The index of the file that `key=` (`f`, `b`) names, if any.
fn file_of<'a>(indexes: &'a [Arc<Index>], query: &str, key: &str) -> Option<Result<&'a Arc<Index>, Reply>> {
    let n = super::pages::query(query, key)?;
    Some(n.parse::<usize>().ok().and_then(|i| indexes.get(i)).ok_or(Reply {
        status: 404,
        content_type: "text/plain; charset=utf-8",
        body: format!("no file {key}={n}\n"),
    }))
}

/// The built index, or the error page saying why there is none.
async fn built(index: &Index) -> Result<Arc<App>, Reply> {
    let built = match index.get() {
        Some(built) => built,
        None => index.wait().await,
    };
    built.map_err(|e| index.failed_page(&e))
}

/// The page at `path?query`: the application and its assets at once; the rest computed on the blocking
/// pool once the index of its file (and of `b=`'s, for a diff) is there.
async fn page(indexes: &[Arc<Index>], path: &str, query: &str) -> Reply {
    if path == "/api/status" {
        return Index::status_all(indexes);
    }
    if let Some(asset) = spa::asset(path) {
        return asset;
    }
    let index = match file_of(indexes, query, "f").unwrap_or(Ok(&indexes[0])) {
        Ok(i) => i,
        Err(r) => return r,
    };
    if path == "/" {
        return spa::shell(index);
    }
    let app = match built(index).await {
        Ok(app) => app,
        Err(r) => return r,
    };
    let other = match file_of(indexes, query, "b") {
        None => None,
        Some(Err(r)) => return r,
        Some(Ok(b)) => match built(b).await {
            Ok(app) => Some(app),
            Err(r) => return r,
        },
    };
    let (p, q) = (path.to_owned(), query.to_owned());
    let answer = move || {
        let reply = match p.strip_prefix("/api/") {
            Some(what) => {
                let (status, v) = api::answer(&app, what, &q, other.as_ref());
                Reply { status, content_type: "application/json", body: v.to_string() }
            }
            None => app.page(&p, &q),
        };
        app.checked(reply)
    };
    match tokio::task::spawn_blocking(answer).await {
        Ok(reply) => reply,
        Err(e) => {
            eprintln!("hprof: serve: {path} failed: {e}");
            Reply {
                status: 500,
                content_type: "text/plain; charset=utf-8",
                body: "this page failed; the server goes on\n".into(),
            }
        }
    }
}

/// Requests refused on their shape alone, before anything is looked up: too long, with a body, or
/// naming another server in an absolute URL.
fn refuse(req: &Request<Incoming>) -> Option<Response<Full<Bytes>>> {
    let uri = req.uri();
    let target = uri.path_and_query().map_or(0, |p| p.as_str().len());
    if target > MAX_TARGET {
        return Some(closing(plain(414, "the request target is longer than 8 KiB")));
    }
    if uri.scheme().is_some() || uri.authority().is_some() {
        return Some(closing(plain(400, "only origin-form request targets (/path?query)")));
    }
    let header_bytes: usize = req.headers().iter().map(|(k, v)| k.as_str().len() + v.len() + 4).sum();
    if header_bytes > MAX_HEADERS {
        return Some(closing(plain(431, "the request headers exceed 64 KiB")));
    }
    let h = req.headers();
    let has_body = h.contains_key(header::TRANSFER_ENCODING)
        || h.get(header::CONTENT_LENGTH).is_some_and(|v| v.as_bytes() != b"0");
    if has_body {
        // Never read: the connection closes after this answer.
        return Some(closing(plain(413, "request bodies are not accepted")));
    }
    None
}

fn closing(mut r: Response<Full<Bytes>>) -> Response<Full<Bytes>> {
    r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// A short text answer (errors and refusals: nothing of the file in them).
fn plain(status: u16, message: &'static str) -> Response<Full<Bytes>> {
    respond(Reply { status, content_type: "text/plain; charset=utf-8", body: format!("{message}\n") })
}

fn respond(reply: Reply) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(reply.body)));
    *r.status_mut() = StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(reply.content_type));
    // What a heap dump shows stays out of caches and other sites' frames and referrers.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // Inline script and style: inferno's flame graph carries its own.
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; \
             img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
        ),
    );
    r
}
