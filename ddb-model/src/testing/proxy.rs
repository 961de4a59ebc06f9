//! [`Proxy`]: a fault-injecting HTTP proxy on a loopback port, in front of the embedded engine
//! or `DDB_ENDPOINT`, and its counts.
//!
//! Faults are decided per request (request boundaries are parsed from `Content-Length`, or
//! chunked encoding, so keep-alive connections fail request by request), by one draw of a
//! seeded generator per request, in the order requests arrive ([`Faults`] lists the kinds).
//! A request matching a [`Hold`] is parked until released, then forwarded even if its client
//! has gone (a late writer: a killed process's in-flight request, a paused process that
//! wakes up). Every decision is counted ([`Counts`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::retry::{RetryConfig, RetryPartition};
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

use super::faults::{Fate, Faults, Kind, cancel_body, throttle_body, unprocessed_body};
use super::http::{forward, header, host_port, read_message};
use crate::db::Db;
use crate::error::{Error, LocalProblem};
use crate::model::Table;

/// Most client connections served at once.
const MAX_CONNECTIONS: usize = 256;

/// Locks `m`, whatever a panicking holder left (the guarded values stay consistent: each
/// is replaced whole).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug, Default)]
struct Stats {
    requests: AtomicU64,
    forwarded: AtomicU64,
    dropped_before: AtomicU64,
    dropped_after: AtomicU64,
    errors_500: AtomicU64,
    throttled: AtomicU64,
    canceled: AtomicU64,
    unprocessed: AtomicU64,
    held: AtomicU64,
}

/// What a [`Proxy`] did so far, request by request ([`Proxy::counts`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Counts {
    /// Requests read from clients.
    pub requests: u64,
    /// Requests forwarded whose response was passed back.
    pub forwarded: u64,
    /// Requests whose connection was closed before forwarding (nothing applied).
    pub dropped_before: u64,
    /// Requests forwarded whose response was dropped with the connection (applied).
    pub dropped_after: u64,
    /// Requests answered with a 500 without forwarding.
    pub errors_500: u64,
    /// Requests answered with a throttling error without forwarding.
    pub throttled: u64,
    /// Transactions answered with `TransactionCanceledException` without forwarding.
    pub canceled: u64,
    /// Batches answered with every item unprocessed without forwarding.
    pub unprocessed: u64,
    /// Requests parked by a [`Hold`].
    pub held: u64,
}

impl Counts {
    /// Requests that met an injected fault (holds and latency not included).
    pub fn faults(&self) -> u64 {
        self.dropped_before
            + self.dropped_after
            + self.errors_500
            + self.throttled
            + self.canceled
            + self.unprocessed
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} requests: {} forwarded, {} dropped before the engine, {} dropped after it, \
             {} answered 500, {} throttled, {} transactions canceled, {} batches unprocessed, \
             {} held",
            self.requests,
            self.forwarded,
            self.dropped_before,
            self.dropped_after,
            self.errors_500,
            self.throttled,
            self.canceled,
            self.unprocessed,
            self.held
        )
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

/// A fault-injecting proxy: a listener on `127.0.0.1:0` forwarding HTTP/1.1 requests to an
/// endpoint, and the tasks serving it (they end with the runtime, or when the proxy is
/// dropped). Start one with [`Proxy::start`] (in front of [`local::endpoint`]), point handles
/// at it with [`Proxy::db`], and read what it did with [`Proxy::counts`]. [`Harness`]
/// bundles a proxy, a fresh table and both handles.
///
/// [`local::endpoint`]: crate::local::endpoint
/// [`Harness`]: super::Harness
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

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("endpoint", &self.endpoint)
            .field("upstream", &self.state.upstream)
            .field("counts", &self.counts())
            .finish()
    }
}

impl Proxy {
    /// Starts a proxy in front of [`local::endpoint`](crate::local::endpoint) (the embedded
    /// engine, or `DDB_ENDPOINT`). Call it inside a Tokio runtime, which runs the proxy.
    pub async fn start(faults: Faults) -> Result<Proxy, Error> {
        Proxy::start_for(&crate::local::endpoint()?, faults).await
    }

    /// Starts a proxy in front of `upstream` (`http://host:port`).
    pub async fn start_for(upstream: &str, faults: Faults) -> Result<Proxy, Error> {
        let port = |e: std::io::Error| Error::Local(LocalProblem::Port { reason: e.to_string() });
        let upstream = host_port(upstream);
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(port)?;
        let addr = listener.local_addr().map_err(port)?;
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
        Ok(Proxy { endpoint: format!("http://{addr}"), state, accept })
    }

    /// The URL clients connect to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Changes the faults. The generator restarts from the new seed when it differs, and
    /// keeps its state otherwise.
    pub fn set_faults(&self, faults: Faults) {
        let mut current = lock(&self.state.faults);
        if current.seed != faults.seed {
            *lock(&self.state.rng) = faults.seed ^ 0x9E37_79B9_7F4A_7C15;
        }
        *current = faults;
    }

    /// The faults injected now.
    pub fn faults(&self) -> Faults {
        lock(&self.state.faults).clone()
    }

    /// Parks up to `max` requests whose body contains `body_contains` (and whose
    /// `X-Amz-Target` ends with `target`, e.g. `"BatchWriteItem"`), until the hold is
    /// released. Held requests meet no other fault.
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
        lock(&self.state.holds).push(hold.clone());
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
            throttled: s.throttled.load(Ordering::SeqCst),
            canceled: s.canceled.load(Ordering::SeqCst),
            unprocessed: s.unprocessed.load(Ordering::SeqCst),
            held: s.held.load(Ordering::SeqCst),
        }
    }

    /// An SDK client whose requests go through the proxy. The SDK keeps its standard retry
    /// mode (3 attempts) with a short backoff (2 to 50 ms) so that tests stay fast, and a
    /// retry partition of its own (its retry budget is not shared with other clients).
    pub fn client(&self) -> Client {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let partition =
            format!("ddb-model-proxy-{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let config = aws_sdk_dynamodb::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("local", "local", None, None, "proxy"))
            .endpoint_url(&self.endpoint)
            .retry_partition(RetryPartition::new(partition))
            .retry_config(
                RetryConfig::standard()
                    .with_initial_backoff(Duration::from_millis(2))
                    .with_max_backoff(Duration::from_millis(50)),
            )
            .build();
        Client::from_conf(config)
    }

    /// A [`Db`] on the same physical table as `direct`, whose requests go through the proxy
    /// (with its own client, from [`client`](Proxy::client), and its own request counters).
    /// Check invariants on `direct`, a clean connection.
    pub fn db<T: Table>(&self, direct: &Db<T>) -> Db<T> {
        Db::with_table_name(self.client(), direct.table_name())
    }
}

impl State {
    /// One draw of the seeded generator (xorshift64*), in [0, 1).
    fn draw(&self) -> f64 {
        let mut s = lock(&self.rng);
        let mut x = *s;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *s = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn matching_hold(&self, target: Option<&str>, body: &[u8]) -> Option<Hold> {
        let holds = lock(&self.holds);
        holds
            .iter()
            .find(|h| !*h.inner.released.borrow() && h.matches(target, body) && h.take_slot())
            .cloned()
    }
}

/// An answer of `status` (`400 Bad Request`) with a DynamoDB JSON body.
fn answer(status: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/x-amz-json-1.0\r\n\
         content-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// What an injected error answer needs from the request body: its table, the index it
/// reads, and the number of actions of a transaction.
fn request_facts(body: &[u8]) -> (String, Option<String>, usize) {
    let json: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let text = |key: &str| json.get(key).and_then(|v| v.as_str()).map(str::to_owned);
    let table = text("TableName")
        .or_else(|| {
            // Batches name their tables as keys; transactions inside each action.
            let first = json.get("RequestItems").and_then(|r| r.as_object())?.keys().next()?;
            Some(first.clone())
        })
        .or_else(|| {
            let action = json.get("TransactItems")?.as_array()?.first()?.as_object()?;
            let (_, inner) = action.iter().next()?;
            inner.get("TableName")?.as_str().map(str::to_owned)
        })
        .unwrap_or_default();
    let actions = json.get("TransactItems").and_then(|t| t.as_array()).map_or(1, Vec::len).max(1);
    (table, text("IndexName"), actions)
}

/// Serves one client connection: request by request until it closes or a fault closes it.
async fn serve(mut client: TcpStream, state: Arc<State>) -> std::io::Result<()> {
    let mut buf = Vec::new();
    loop {
        let Some(message) = read_message(&mut client, &mut buf, true).await? else {
            return Ok(());
        };
        let n = state.stats.requests.fetch_add(1, Ordering::SeqCst);
        let target = header(&message.head, "x-amz-target").unwrap_or_default();
        if let Some(hold) = state.matching_hold(Some(&target), &message.body) {
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
        let faults = lock(&state.faults).clone();
        let fate = faults.fate(n, state.draw(), Kind::of(&target));
        if !faults.latency.is_zero() {
            tokio::time::sleep(faults.latency).await;
        }
        match fate {
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
            Fate::Throttle => {
                state.stats.throttled.fetch_add(1, Ordering::SeqCst);
                let (table, index, _) = request_facts(&message.body);
                let body = throttle_body(&faults.throttle_limit, &target, &table, index.as_deref());
                client.write_all(&answer("400 Bad Request", &body)).await?;
            }
            Fate::Cancel => {
                state.stats.canceled.fetch_add(1, Ordering::SeqCst);
                let (_, _, actions) = request_facts(&message.body);
                let at = (state.draw() * actions as f64) as usize;
                let body = cancel_body(faults.cancel_code, actions, at.min(actions - 1));
                client.write_all(&answer("400 Bad Request", &body)).await?;
            }
            Fate::Unprocessed => {
                state.stats.unprocessed.fetch_add(1, Ordering::SeqCst);
                let body = unprocessed_body(&target, &message.body);
                client.write_all(&answer("200 OK", &body)).await?;
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
