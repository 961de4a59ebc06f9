//! Request tracing: which HTTP attempts the SDK made for one request of the library, and
//! whether one may have reached the service.
//!
//! Every `Db`'s client sends through [`Counting`], a wrapper of its HTTP client installed when
//! the `Db` is made. A request of the library makes its [`Trace`] current while its future is
//! polled ([`Traced`]); the SDK asks the HTTP client for a connector once per attempt, inside
//! that poll, and the wrapper records the attempt (and whether it may have reached the
//! service) in the current trace and in the `Db`'s counters. `ops::retry` reads the trace to
//! type a failure (how many attempts, whether a write may have been applied).

use std::cell::RefCell;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;

use aws_sdk_dynamodb::config::http::HttpRequest;
use aws_sdk_dynamodb::config::{
    ConfigBag, HttpClient, ResolveCachedIdentity, RuntimeComponents, RuntimeComponentsBuilder,
    SharedHttpClient,
};
use aws_sdk_dynamodb::error::BoxError;
use aws_smithy_runtime_api::client::connector_metadata::ConnectorMetadata;
use aws_smithy_runtime_api::client::http::{
    HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpConnector,
};
use aws_smithy_runtime_api::client::identity::{IdentityFuture, SharedIdentityResolver};
use aws_smithy_runtime_api::client::orchestrator::HttpResponse;
use aws_smithy_runtime_api::client::result::ConnectorError;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::byte_stream::ByteStream;

use crate::error::is_connect_failure;
use crate::stats::{Counters, Op};

/// Follows one request through the SDK's attempts: counts each HTTP attempt (for the request
/// and in the `Db`'s statistics), and notes whether an attempt may have reached the service.
/// While the request's future is polled ([`Traced`]), the trace is the thread's current one,
/// where the client's [`Counting`] HTTP client finds it.
#[derive(Clone)]
pub(crate) struct Trace(Arc<TraceInner>);

thread_local! {
    /// The trace of the request whose future this thread is polling.
    static CURRENT: RefCell<Option<Trace>> = const { RefCell::new(None) };
}

pin_project_lite::pin_project! {
    /// `fut`, polled with `trace` as the thread's current trace (the SDK asks the HTTP client
    /// for each attempt's connector inside the poll of the request's future). The trace before is put back after each
    /// poll, so requests polled inside one another (or joined in one task) each see their
    /// own. A struct rather than an `async fn`: the SDK's request futures are large, and
    /// every move of one is a copy.
    pub(crate) struct Traced<'t, F> {
        pub(crate) trace: &'t Trace,
        #[pin]
        pub(crate) fut: F,
    }
}

impl<F: Future> Future for Traced<'_, F> {
    type Output = F::Output;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<F::Output> {
        struct Restore(Option<Trace>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let before = self.0.take();
                // The thread-local is gone only while the thread exits: nothing to restore.
                let _ = CURRENT.try_with(|c| *c.borrow_mut() = before);
            }
        }
        let this = self.project();
        let before =
            CURRENT.try_with(|c| c.borrow_mut().replace(this.trace.clone())).ok().flatten();
        let _restore = Restore(before);
        this.fut.poll(cx)
    }
}

/// Takes the current request's trace out of the thread, if a request of the library is being
/// polled (put it back with [`restore`]).
fn take_current() -> Option<Trace> {
    CURRENT.try_with(|c| c.borrow_mut().take()).ok().flatten()
}

fn restore(trace: Trace) {
    let _ = CURRENT.try_with(|c| *c.borrow_mut() = Some(trace));
}

/// The HTTP client every `Db`'s client sends through: the client's own HTTP client, wrapped
/// so that each HTTP attempt of the library's request being polled is recorded in its trace.
/// Requests the caller sends through `Db::client` directly pass through untouched.
///
/// A wrapper of the HTTP client rather than an interceptor: the SDK calls every hook of every
/// interceptor on every request, each with configuration lookups (about 1% of a request's
/// instructions), where the HTTP client is asked for a connector once per attempt anyway.
#[derive(Debug)]
pub(crate) struct Counting {
    inner: SharedHttpClient,
}

impl Counting {
    /// `client`, sending through a counting wrapper of its HTTP client: the one its
    /// configuration names, or else the SDK's default for its configuration (behaviour version
    /// and compiled-in features), found by [`default_http_client`]. A client without any HTTP
    /// client (none configured, none compiled in) is returned as is: it cannot send.
    ///
    /// A client that already counts (the client of another `Db`) is wrapped again; the outer
    /// wrapper takes the trace while it asks the inner one for a connector, so each attempt is
    /// counted once.
    pub(crate) fn install(client: aws_sdk_dynamodb::Client) -> aws_sdk_dynamodb::Client {
        let config = client.config();
        let Some(inner) = config.http_client().or_else(|| default_http_client(config)) else {
            return client;
        };
        aws_sdk_dynamodb::Client::from_conf(
            config.to_builder().http_client(Counting { inner }).build(),
        )
    }
}

impl HttpClient for Counting {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        // Asked once per attempt, in the poll of the request's future, right before the
        // connector is called.
        let Some(trace) = take_current() else {
            return self.inner.http_connector(settings, components);
        };
        let inner = self.inner.http_connector(settings, components);
        let connector = SharedHttpConnector::new(Attempt { inner, trace: trace.clone() });
        restore(trace);
        connector
    }

    fn validate_base_client_config(
        &self,
        runtime_components: &RuntimeComponentsBuilder,
        cfg: &ConfigBag,
    ) -> Result<(), BoxError> {
        self.inner.validate_base_client_config(runtime_components, cfg)
    }

    fn validate_final_config(
        &self,
        runtime_components: &RuntimeComponents,
        cfg: &ConfigBag,
    ) -> Result<(), BoxError> {
        self.inner.validate_final_config(runtime_components, cfg)
    }

    fn connector_metadata(&self) -> Option<ConnectorMetadata> {
        self.inner.connector_metadata()
    }
}

/// One HTTP attempt of a traced request: counts it when it is sent and notes whether it may
/// have reached the service when it ends.
#[derive(Debug)]
struct Attempt {
    inner: SharedHttpConnector,
    trace: Trace,
}

impl HttpConnector for Attempt {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let t = &self.trace.0;
        t.attempts.fetch_add(1, Ordering::Relaxed);
        t.counters.record_attempt(t.op);
        let outcome = Outcome(Some(self.trace.clone()));
        let response = self.inner.call(request);
        HttpConnectorFuture::new(async move {
            let mut outcome = outcome;
            let mut result = response.await;
            if let Some(trace) = outcome.0.take() {
                let reached = match &result {
                    // A 4xx answer means the service refused the request; anything else may
                    // have been applied.
                    Ok(response) => !(400..500).contains(&response.status().as_u16()),
                    Err(e) => !is_connect_failure(e),
                };
                if reached {
                    trace.0.reached.store(true, Ordering::Relaxed);
                }
                if let (Ok(response), Some(noted)) = (&mut result, &trace.0.throttles)
                    && response.status().as_u16() == 400
                    && let Err(e) = note_throttles(noted, response).await
                {
                    result = Err(e);
                }
            }
            result
        })
    }
}

/// Reads the body of a 400 answer (and puts it back for the SDK, which deserializes it next)
/// and notes in `noted` the throttling reasons it names, when it is a throttling error: each
/// `reason` of its `ThrottlingReasons`, or its error code when it lists none. A body that
/// cannot be read fails the attempt as a transport error, as the SDK's own read would.
async fn note_throttles(
    noted: &Mutex<Vec<String>>,
    response: &mut HttpResponse,
) -> Result<(), ConnectorError> {
    let body = ByteStream::new(response.take_body()).collect().await;
    let body = body.map_err(|e| ConnectorError::io(e.into()))?.into_bytes();
    let reasons = throttles_named(&body);
    *response.body_mut() = SdkBody::from(body);
    if !reasons.is_empty()
        && let Ok(mut noted) = noted.lock()
    {
        noted.extend(reasons);
    }
    Ok(())
}

/// The throttling reasons an error body of DynamoDB's JSON protocol names (none when it is not
/// a throttling error, or not JSON).
fn throttles_named(body: &[u8]) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct ErrorBody {
        #[serde(rename = "__type", default)]
        kind: String,
        // `ThrottlingException` names them `throttlingReasons`, the others `ThrottlingReasons`.
        #[serde(rename = "ThrottlingReasons", alias = "throttlingReasons", default)]
        reasons: Vec<Reason>,
    }
    #[derive(serde::Deserialize)]
    struct Reason {
        #[serde(default)]
        reason: Option<String>,
    }
    let Ok(error) = serde_json::from_slice::<ErrorBody>(body) else { return Vec::new() };
    let code = error.kind.rsplit('#').next().unwrap_or_default();
    if !matches!(
        code,
        "ThrottlingException" | "ProvisionedThroughputExceededException" | "RequestLimitExceeded"
    ) {
        return Vec::new();
    }
    if error.reasons.is_empty() {
        return vec![code.to_owned()];
    }
    error.reasons.into_iter().map(|r| r.reason.unwrap_or_else(|| "throttled".to_owned())).collect()
}

/// Notes that an attempt may have reached the service when its future is dropped before it
/// ended (an attempt or operation timeout cancelled it in flight).
struct Outcome(Option<Trace>);

impl Drop for Outcome {
    fn drop(&mut self) {
        if let Some(trace) = self.0.take() {
            trace.0.reached.store(true, Ordering::Relaxed);
        }
    }
}

/// The HTTP client the SDK would use for a client of `config`, which names none: the SDK's
/// default, chosen by its behaviour version (not readable from the configuration) and the
/// features compiled in. Read off a client built from the same configuration, whose identity
/// cache is replaced by [`Probe`]: the SDK validates a new client's components, the identity
/// cache's validation sees them all, and nothing is sent.
fn default_http_client(config: &aws_sdk_dynamodb::Config) -> Option<SharedHttpClient> {
    let found = Arc::new(Mutex::new(None));
    let probe = Probe(Arc::clone(&found));
    drop(aws_sdk_dynamodb::Client::from_conf(config.to_builder().identity_cache(probe).build()));
    found.lock().ok().and_then(|mut f| f.take())
}

/// The identity cache of [`default_http_client`]'s probing client: notes the HTTP client among
/// the components it validates; resolves nothing (the probing client sends no request).
#[derive(Debug)]
struct Probe(Arc<Mutex<Option<SharedHttpClient>>>);

impl ResolveCachedIdentity for Probe {
    fn resolve_cached_identity<'a>(
        &'a self,
        _resolver: SharedIdentityResolver,
        _components: &'a RuntimeComponents,
        _cfg: &'a ConfigBag,
    ) -> IdentityFuture<'a> {
        IdentityFuture::ready(Err("ddb-model's probing client sends nothing".into()))
    }

    fn validate_base_client_config(
        &self,
        runtime_components: &RuntimeComponentsBuilder,
        _cfg: &ConfigBag,
    ) -> Result<(), BoxError> {
        if let Ok(mut found) = self.0.lock() {
            *found = runtime_components.http_client();
        }
        Ok(())
    }
}

struct TraceInner {
    op: Op,
    counters: Arc<Counters>,
    attempts: AtomicU32,
    /// An attempt may have reached the service.
    reached: AtomicBool,
    /// The throttling reasons of every attempt the service throttled, the SDK's retried ones
    /// included, for a request of a handle that keeps a cost report (`None`: not read).
    throttles: Option<Mutex<Vec<String>>>,
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trace")
            .field("op", &self.0.op)
            .field("attempts", &self.attempts())
            .field("reached", &self.reached())
            .finish()
    }
}

impl Trace {
    /// The trace of a request of `op`; `throttles`: read the throttling reasons of each
    /// throttled attempt (for a cost report).
    pub(crate) fn new(op: Op, counters: Arc<Counters>, throttles: bool) -> Trace {
        Trace(Arc::new(TraceInner {
            op,
            counters,
            attempts: AtomicU32::new(0),
            reached: AtomicBool::new(false),
            throttles: throttles.then(Mutex::default),
        }))
    }

    /// The throttling reasons of the attempts throttled so far (none when they are not read).
    pub(crate) fn throttles(&self) -> Vec<String> {
        let noted = self.0.throttles.as_ref().and_then(|n| n.lock().ok().map(|n| n.clone()));
        noted.unwrap_or_default()
    }

    /// The HTTP attempts made so far.
    pub(crate) fn attempts(&self) -> u32 {
        self.0.attempts.load(Ordering::Relaxed)
    }

    /// True when an attempt may have reached the service.
    pub(crate) fn reached(&self) -> bool {
        self.0.reached.load(Ordering::Relaxed)
    }
}
