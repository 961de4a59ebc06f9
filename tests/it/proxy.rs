//! A fault-injecting TCP proxy for the integration suite: it listens on a loopback port and
//! forwards HTTP/1.1 requests to the test endpoint (the embedded engine, or `DDB_ENDPOINT`).
//!
//! Faults are decided per request (request boundaries are parsed from `Content-Length`, or
//! chunked encoding, so keep-alive connections fail request by request), with rates drawn
//! from a seeded RNG:
//! - **drop before**: the connection is closed without forwarding (nothing is applied);
//! - **drop after**: the request is forwarded and its response read, then the connection is
//!   closed (the write is applied, the response lost);
//! - **500**: the proxy answers `500 Internal Server Error` without forwarding;
//! - **hold**: a request matching a [`Hold`] is parked until released, then forwarded even if
//!   its client has gone (a late writer: a killed process's in-flight request, a paused
//!   process that wakes up).
//!
//! Every decision is counted ([`Stats`]). Self-contained: this file depends only on tokio and
//! the crate under test.

#![allow(dead_code)] // Helpers shared with other suites; not every test uses every knob.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ddb_model::aws_sdk_dynamodb::Client;
use ddb_model::aws_sdk_dynamodb::config::retry::RetryConfig;
use ddb_model::aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use ddb_model::{Db, Table, local};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

/// Largest request or response head (request line and headers) the proxy accepts.
const MAX_HEAD: usize = 64 * 1024;
/// Largest body the proxy accepts.
const MAX_BODY: usize = 32 * 1024 * 1024;
/// Most client connections served at once.
const MAX_CONNECTIONS: usize = 256;

/// Fault rates, each the probability (0.0 ..= 1.0) that a request meets that fault. Checked in
/// the order drop-before, 500, drop-after, with one draw per request.
#[derive(Debug, Clone, Copy, Default)]
pub struct Faults {
    pub drop_before: f64,
    pub drop_after: f64,
    pub error_500: f64,
    pub seed: u64,
}

impl Faults {
    /// No faults.
    pub fn none() -> Faults {
        Faults::default()
    }

    /// The mix of the issue: 3% dropped before forwarding, 3% after, 4% answered with 500.
    pub fn issue_mix(seed: u64) -> Faults {
        Faults { drop_before: 0.03, drop_after: 0.03, error_500: 0.04, seed }
    }
}

/// What the proxy did, request by request.
#[derive(Debug, Default)]
pub struct Stats {
    /// Requests read from clients.
    pub requests: AtomicU64,
    /// Requests forwarded whose response was passed back.
    pub forwarded: AtomicU64,
    /// Requests whose connection was closed before forwarding.
    pub dropped_before: AtomicU64,
    /// Requests forwarded whose response was dropped (with the connection).
    pub dropped_after: AtomicU64,
    /// Requests answered with 500 without forwarding.
    pub errors_500: AtomicU64,
    /// Requests parked by a hold.
    pub held: AtomicU64,
}

/// A snapshot of [`Stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub requests: u64,
    pub forwarded: u64,
    pub dropped_before: u64,
    pub dropped_after: u64,
    pub errors_500: u64,
    pub held: u64,
}

impl Counts {
    /// Requests that met an injected fault (holds not included).
    pub fn faults(&self) -> u64 {
        self.dropped_before + self.dropped_after + self.errors_500
    }
}

/// Parks requests that match until [`release`](Hold::release) is called. Made by
/// [`Proxy::hold`].
#[derive(Clone)]
pub struct Hold {
    inner: Arc<HoldInner>,
}

struct HoldInner {
    /// A request matches when its body contains this text (and its `X-Amz-Target` header
    /// ends with `target`, when given).
    body_contains: String,
    target: Option<String>,
    /// How many requests to park, at most.
    remaining: AtomicU64,
    held: watch::Sender<u64>,
    released: watch::Sender<bool>,
}

impl Hold {
    /// Waits until `n` requests are parked (bounded by `timeout`); false on timeout.
    pub async fn wait_held(&self, n: u64, timeout: Duration) -> bool {
        let mut rx = self.inner.held.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|&held| held >= n)).await.is_ok()
    }

    /// How many requests are parked (or were, before release).
    pub fn held(&self) -> u64 {
        *self.inner.held.borrow()
    }

    /// Forwards the parked requests (and lets later matches through without parking).
    pub fn release(&self) {
        self.inner.released.send_replace(true);
    }

    fn matches(&self, target: Option<&str>, body: &[u8]) -> bool {
        if let Some(want) = &self.inner.target
            && !target.is_some_and(|t| t.ends_with(want.as_str()))
        {
            return false;
        }
        let needle = self.inner.body_contains.as_bytes();
        needle.is_empty() || body.windows(needle.len()).any(|w| w == needle)
    }

    /// Takes one parking slot, if any is left.
    fn take_slot(&self) -> bool {
        self.inner
            .remaining
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
    }
}

struct State {
    upstream: String,
    faults: Mutex<Faults>,
    rng: Mutex<u64>,
    stats: Stats,
    holds: Mutex<Vec<Hold>>,
}

/// The proxy: a listener on `127.0.0.1:0` and the tasks serving it (they end with the runtime
/// or when the proxy is dropped).
pub struct Proxy {
    endpoint: String,
    state: Arc<State>,
    accept: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

impl Proxy {
    /// Starts a proxy in front of the test endpoint.
    pub async fn start(faults: Faults) -> Proxy {
        let upstream = match local::endpoint() {
            Ok(url) => url,
            Err(e) => panic!("no test endpoint: {e}"),
        };
        Proxy::start_for(&upstream, faults).await
    }

    /// Starts a proxy in front of `upstream` (`http://host:port`).
    pub async fn start_for(upstream: &str, faults: Faults) -> Proxy {
        let upstream = host_port(upstream);
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(State {
            upstream,
            rng: Mutex::new(faults.seed ^ 0x9E37_79B9_7F4A_7C15),
            faults: Mutex::new(faults),
            stats: Stats::default(),
            holds: Mutex::new(Vec::new()),
        });
        let limit = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        let accept = tokio::spawn({
            let state = Arc::clone(&state);
            async move {
                loop {
                    let Ok(permit) = Arc::clone(&limit).acquire_owned().await else { return };
                    let Ok((client, _)) = listener.accept().await else { return };
                    let state = Arc::clone(&state);
                    tokio::spawn(async move {
                        let _ = serve(client, state).await;
                        drop(permit);
                    });
                }
            }
        });
        Proxy { endpoint: format!("http://{addr}"), state, accept }
    }

    /// The URL clients connect to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Changes the fault rates (the RNG keeps its state).
    pub fn set_faults(&self, faults: Faults) {
        *self.state.faults.lock().expect("faults") = faults;
    }

    /// Parks up to `max` requests whose body contains `body_contains` (and whose
    /// `X-Amz-Target` ends with `target`, e.g. `"BatchWriteItem"`), until the hold is
    /// released.
    pub fn hold(&self, target: Option<&str>, body_contains: &str, max: u64) -> Hold {
        let hold = Hold {
            inner: Arc::new(HoldInner {
                body_contains: body_contains.to_owned(),
                target: target.map(str::to_owned),
                remaining: AtomicU64::new(max),
                held: watch::Sender::new(0),
                released: watch::Sender::new(false),
            }),
        };
        self.state.holds.lock().expect("holds").push(hold.clone());
        hold
    }

    /// What the proxy did so far.
    pub fn counts(&self) -> Counts {
        let s = &self.state.stats;
        Counts {
            requests: s.requests.load(Ordering::SeqCst),
            forwarded: s.forwarded.load(Ordering::SeqCst),
            dropped_before: s.dropped_before.load(Ordering::SeqCst),
            dropped_after: s.dropped_after.load(Ordering::SeqCst),
            errors_500: s.errors_500.load(Ordering::SeqCst),
            held: s.held.load(Ordering::SeqCst),
        }
    }

    /// An SDK client whose requests go through the proxy. The SDK keeps its standard retry
    /// mode (3 attempts), with a short backoff so that tests stay fast.
    pub fn client(&self) -> Client {
        let config = ddb_model::aws_sdk_dynamodb::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("local", "local", None, None, "proxy"))
            .endpoint_url(&self.endpoint)
            .retry_partition(crate::support::own_retry_partition())
            .retry_config(
                RetryConfig::standard()
                    .with_initial_backoff(Duration::from_millis(2))
                    .with_max_backoff(Duration::from_millis(50)),
            )
            .build();
        Client::from_conf(config)
    }

    /// A [`Db`] on the same physical table as `direct`, whose requests go through the proxy.
    /// Check invariants on `direct` (a clean connection).
    pub fn db<T: Table>(&self, direct: &Db<T>) -> Db<T> {
        Db::with_table_name(self.client(), direct.table_name())
    }
}

/// A fresh test table, a proxy with `faults` in front of the test endpoint, and a `Db` on the
/// same table through the proxy: `(proxy, through the proxy, direct)`.
pub async fn proxied_db<T: Table>(faults: Faults) -> (Proxy, Db<T>, Db<T>) {
    let direct = crate::support::db::<T>().await;
    let proxy = Proxy::start(faults).await;
    let through = proxy.db(&direct);
    (proxy, through, direct)
}

/// `http://host:port/...` -> `host:port` (port 80 when absent).
fn host_port(url: &str) -> String {
    let rest = url.trim().trim_start_matches("http://");
    let authority = rest.split('/').next().unwrap_or(rest);
    if authority.contains(':') { authority.to_owned() } else { format!("{authority}:80") }
}

enum Fate {
    Forward,
    DropBefore,
    DropAfter,
    Error500,
}

impl State {
    /// One draw of the seeded RNG (xorshift64*), in [0, 1).
    fn draw(&self) -> f64 {
        let mut s = self.rng.lock().expect("rng");
        let mut x = *s;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *s = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn fate(&self) -> Fate {
        let f = *self.faults.lock().expect("faults");
        let r = self.draw();
        if r < f.drop_before {
            Fate::DropBefore
        } else if r < f.drop_before + f.error_500 {
            Fate::Error500
        } else if r < f.drop_before + f.error_500 + f.drop_after {
            Fate::DropAfter
        } else {
            Fate::Forward
        }
    }

    fn matching_hold(&self, target: Option<&str>, body: &[u8]) -> Option<Hold> {
        let holds = self.holds.lock().expect("holds");
        holds
            .iter()
            .find(|h| !*h.inner.released.borrow() && h.matches(target, body) && h.take_slot())
            .cloned()
    }
}

/// Serves one client connection: request by request until it closes or a fault closes it.
async fn serve(mut client: TcpStream, state: Arc<State>) -> std::io::Result<()> {
    let mut buf = Vec::new();
    loop {
        let Some(message) = read_message(&mut client, &mut buf, true).await? else {
            return Ok(());
        };
        state.stats.requests.fetch_add(1, Ordering::SeqCst);
        let target = header(&message.head, "x-amz-target");
        if let Some(hold) = state.matching_hold(target.as_deref(), &message.body) {
            state.stats.held.fetch_add(1, Ordering::SeqCst);
            hold.inner.held.send_modify(|n| *n += 1);
            let mut released = hold.inner.released.subscribe();
            // The client may give up meanwhile: the request is still forwarded when released,
            // as a late writer's would land.
            let upstream = state.upstream.clone();
            let bytes = message.bytes();
            let late = tokio::spawn(async move {
                let _ = released.wait_for(|&r| r).await;
                forward(&upstream, &bytes).await
            });
            match late.await {
                Ok(Ok(response)) => client.write_all(&response).await?,
                _ => return Ok(()),
            }
            state.stats.forwarded.fetch_add(1, Ordering::SeqCst);
            continue;
        }
        match state.fate() {
            Fate::DropBefore => {
                state.stats.dropped_before.fetch_add(1, Ordering::SeqCst);
                return Ok(());
            }
            Fate::Error500 => {
                state.stats.errors_500.fetch_add(1, Ordering::SeqCst);
                client
                    .write_all(
                        b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\n\
                          content-length: 14\r\n\r\ninjected fault",
                    )
                    .await?;
            }
            Fate::DropAfter => {
                let _ = forward(&state.upstream, &message.bytes()).await;
                state.stats.dropped_after.fetch_add(1, Ordering::SeqCst);
                return Ok(());
            }
            Fate::Forward => {
                let response = forward(&state.upstream, &message.bytes()).await?;
                client.write_all(&response).await?;
                state.stats.forwarded.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
}

/// Sends one request on a fresh upstream connection and reads its whole response.
async fn forward(upstream: &str, request: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut conn = TcpStream::connect(upstream).await?;
    conn.write_all(request).await?;
    let mut buf = Vec::new();
    match read_message(&mut conn, &mut buf, false).await? {
        Some(response) => Ok(response.bytes()),
        None => Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "no response")),
    }
}

/// One HTTP/1.1 message: its head (up to and including the blank line) and its body, as
/// received (chunked bodies keep their framing).
struct Message {
    head: Vec<u8>,
    body: Vec<u8>,
}

impl Message {
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.head.len() + self.body.len());
        out.extend_from_slice(&self.head);
        out.extend_from_slice(&self.body);
        out
    }
}

fn invalid(msg: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, msg.to_owned())
}

/// The value of header `name` (case-insensitive) in `head`.
fn header(head: &[u8], name: &str) -> Option<String> {
    let text = std::str::from_utf8(head).ok()?;
    text.split("\r\n").skip(1).find_map(|line| {
        let (k, v) = line.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
    })
}

/// Reads more bytes into `buf`; false at end of stream.
async fn fill(stream: &mut (impl AsyncRead + Unpin), buf: &mut Vec<u8>) -> std::io::Result<bool> {
    let mut chunk = [0u8; 16 * 1024];
    let n = stream.read(&mut chunk).await?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n > 0)
}

/// Reads one message from `stream` (bytes after it stay in `buf`). `None` when the stream
/// ends cleanly before a message starts. A response without a length is read to the end of
/// the stream.
async fn read_message(
    stream: &mut (impl AsyncRead + Unpin),
    buf: &mut Vec<u8>,
    request: bool,
) -> std::io::Result<Option<Message>> {
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_HEAD {
            return Err(invalid("head too large"));
        }
        if !fill(stream, buf).await? {
            return if buf.is_empty() { Ok(None) } else { Err(invalid("truncated head")) };
        }
    };
    let head: Vec<u8> = buf.drain(..head_end).collect();
    let chunked = header(&head, "transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let length = match header(&head, "content-length") {
        Some(v) => Some(v.parse::<usize>().map_err(|_| invalid("bad content-length"))?),
        None => None,
    };
    let status_without_body = !request
        && std::str::from_utf8(&head)
            .ok()
            .and_then(|t| t.split(' ').nth(1))
            .is_some_and(|code| code.starts_with('1') || code == "204" || code == "304");
    let body = if status_without_body {
        Vec::new()
    } else if chunked {
        read_chunked(stream, buf).await?
    } else if let Some(len) = length {
        if len > MAX_BODY {
            return Err(invalid("body too large"));
        }
        while buf.len() < len {
            if !fill(stream, buf).await? {
                return Err(invalid("truncated body"));
            }
        }
        buf.drain(..len).collect()
    } else if request {
        Vec::new()
    } else {
        while fill(stream, buf).await? {
            if buf.len() > MAX_BODY {
                return Err(invalid("body too large"));
            }
        }
        std::mem::take(buf)
    };
    Ok(Some(Message { head, body }))
}

/// Reads a chunked body, framing included, up to and including its last chunk and trailers.
async fn read_chunked(
    stream: &mut (impl AsyncRead + Unpin),
    buf: &mut Vec<u8>,
) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = loop {
            if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                break i + 2;
            }
            if buf.len() > MAX_HEAD || !fill(stream, buf).await? {
                return Err(invalid("bad chunk header"));
            }
        };
        let line = std::str::from_utf8(&buf[..line_end - 2]).map_err(|_| invalid("chunk"))?;
        let size_text = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| invalid("chunk size"))?;
        if body.len() + size > MAX_BODY {
            return Err(invalid("body too large"));
        }
        body.extend(buf.drain(..line_end));
        if size == 0 {
            // Trailers, then a blank line.
            loop {
                let end = loop {
                    if let Some(i) = buf.windows(2).position(|w| w == b"\r\n") {
                        break i + 2;
                    }
                    if buf.len() > MAX_HEAD || !fill(stream, buf).await? {
                        return Err(invalid("bad trailer"));
                    }
                };
                let blank = end == 2;
                body.extend(buf.drain(..end));
                if blank {
                    return Ok(body);
                }
            }
        }
        while buf.len() < size + 2 {
            if !fill(stream, buf).await? {
                return Err(invalid("truncated chunk"));
            }
        }
        body.extend(buf.drain(..size + 2));
    }
}
