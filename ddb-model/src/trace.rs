//! Request tracing: which HTTP attempts the SDK made for one request of the library, and
//! whether one may have reached the service.
//!
//! Every `Db`'s client carries one interceptor, [`Tracing`], installed when the `Db` is made.
//! A request of the library makes its [`Trace`] current while its future is polled
//! ([`Traced`]); the interceptor records each attempt in the current trace (and in the `Db`'s
//! counters). `ops::retry` reads the trace to type a failure (how many attempts, whether a
//! write may have been applied).

use std::cell::RefCell;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::task::Poll;

use aws_sdk_dynamodb::config::interceptors::{
    BeforeTransmitInterceptorContextRef, FinalizerInterceptorContextRef,
};
use aws_sdk_dynamodb::config::{ConfigBag, Intercept, RuntimeComponents};
use aws_sdk_dynamodb::error::BoxError;

use crate::error::is_connect_failure;
use crate::stats::{Counters, Op};

/// Follows one request through the SDK's attempts: counts each HTTP attempt (for the request
/// and in the `Db`'s statistics), and notes whether an attempt may have reached the service.
/// While the request's future is polled ([`Traced`]), the trace is the thread's current one,
/// where the client's [`Tracing`] interceptor finds it.
#[derive(Clone)]
pub(crate) struct Trace(Arc<TraceInner>);

thread_local! {
    /// The trace of the request whose future this thread is polling.
    static CURRENT: RefCell<Option<Trace>> = const { RefCell::new(None) };
}

pin_project_lite::pin_project! {
    /// `fut`, polled with `trace` as the thread's current trace (the SDK runs its interceptors
    /// inside the poll of the request's future). The trace before is put back after each
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

/// Runs `f` on the current request's trace, if a request of the library is being polled.
fn with_current(f: impl FnOnce(&TraceInner)) {
    let _ = CURRENT.try_with(|c| {
        if let Some(trace) = c.borrow().as_ref() {
            f(&trace.0);
        }
    });
}

/// The interceptor every `Db`'s client carries: it records each HTTP attempt in the trace
/// of the library's request being polled, and does nothing for requests the caller sends
/// through `Db::client` directly. Installed once per client (not per request: a
/// per-request interceptor makes the SDK layer a configuration override on every call).
#[derive(Debug)]
pub(crate) struct Tracing;

impl Tracing {
    /// The interceptor's name, by which a client that already carries it is recognised.
    pub(crate) const NAME: &'static str = "ddb_model::Tracing";

    /// `client`, carrying the interceptor (once: a client that carries it is returned as is).
    pub(crate) fn install(client: aws_sdk_dynamodb::Client) -> aws_sdk_dynamodb::Client {
        let config = client.config();
        if config.interceptors().any(|i| i.name() == Self::NAME) {
            return client;
        }
        aws_sdk_dynamodb::Client::from_conf(config.to_builder().interceptor(Tracing).build())
    }
}

struct TraceInner {
    op: Op,
    counters: Arc<Counters>,
    attempts: AtomicU32,
    /// The current attempt got as far as the HTTP client.
    transmitted: AtomicBool,
    /// An attempt may have reached the service.
    reached: AtomicBool,
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
    pub(crate) fn new(op: Op, counters: Arc<Counters>) -> Trace {
        Trace(Arc::new(TraceInner {
            op,
            counters,
            attempts: AtomicU32::new(0),
            transmitted: AtomicBool::new(false),
            reached: AtomicBool::new(false),
        }))
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

impl Intercept for Tracing {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn read_before_attempt(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        with_current(|t| {
            t.attempts.fetch_add(1, Ordering::Relaxed);
            t.transmitted.store(false, Ordering::Relaxed);
            t.counters.record_attempt(t.op);
        });
        Ok(())
    }

    fn read_before_transmit(
        &self,
        _context: &BeforeTransmitInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        with_current(|t| t.transmitted.store(true, Ordering::Relaxed));
        Ok(())
    }

    fn read_after_attempt(
        &self,
        context: &FinalizerInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        with_current(|t| {
            let reached = match context.response() {
                // A 4xx answer means the service refused the request; anything else may have
                // been applied.
                Some(response) => !(400..500).contains(&response.status().as_u16()),
                None if !t.transmitted.load(Ordering::Relaxed) => false,
                None => match context.output_or_error() {
                    Some(Err(e)) => e.as_connector_error().is_none_or(|c| !is_connect_failure(c)),
                    _ => true,
                },
            };
            if reached {
                t.reached.store(true, Ordering::Relaxed);
            }
        });
        Ok(())
    }
}
