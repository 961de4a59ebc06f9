//! Dry runs: an operation run with its requests withheld and handed back instead of sent.
//!
//! A dry run is the operation itself, run inside a scope ([`Scoped`], which makes its
//! [`DryRun`] current on the thread while the operation is polled): every request reaches
//! `ops/retry.rs` as it would be sent, and there, instead of being sent, it is recorded and
//! answered with an empty output ([`Fluent::withheld`](super::fluent::Fluent::withheld): no
//! item, no next page, nothing unprocessed). So what a dry run returns is what the operation
//! sends, by construction, and a refusal before sending is the same typed error.
//!
//! Reads: a read builder's dry run (get, query, scan, batch and transactional gets, vector
//! search, descendants) withholds its reads. A write's dry run sends the reads the write
//! depends on (a tree move reads its subtree, a write of unique values may read the item,
//! an edge's write may read the edge), and withholds its writes. Once a write was withheld,
//! a read would see a table the write did not change: the operation ends there, and the dry
//! run returns what it withheld so far (a large tree operation: its intent record).

use std::cell::RefCell;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use super::{BoxFuture, Startable};
use crate::db::Db;
use crate::error::{Error, InternalProblem};
use crate::intercept::{Request, is_read};
use crate::model::Table;
use crate::stats::Op;

thread_local! {
    /// The dry run whose operation this thread is polling, if any.
    static CURRENT: RefCell<Option<Arc<DryRun>>> = const { RefCell::new(None) };
}

/// One dry run: whether it sends reads, and what it withheld.
#[derive(Debug)]
pub(crate) struct DryRun {
    sends_reads: bool,
    withheld: Mutex<Vec<Request>>,
}

/// What the send path does with a request in a dry run.
pub(crate) enum Decision {
    /// Send it (a read a write depends on).
    Send,
    /// Record it and answer with an empty output.
    Withhold,
    /// End the operation (a read after a withheld write).
    End,
}

impl DryRun {
    /// What to do with a request of `op`.
    pub(crate) fn decide(&self, op: Op) -> Decision {
        match (is_read(op), self.sends_reads) {
            (true, true) if self.lock().is_empty() => Decision::Send,
            (true, true) => Decision::End,
            _ => Decision::Withhold,
        }
    }

    /// Records a withheld request.
    pub(crate) fn withhold(&self, request: Request) {
        self.lock().push(request);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Request>> {
        self.withheld.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The dry run of the operation being polled on this thread, if any.
pub(crate) fn current() -> Option<Arc<DryRun>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// The error that ends an operation at a read after a withheld write.
pub(crate) fn ended() -> Error {
    Error::Internal { problem: InternalProblem::DryRunEnded }
}

pin_project_lite::pin_project! {
    /// `fut`, polled with `dry` current.
    struct Scoped<F> {
        dry: Arc<DryRun>,
        #[pin]
        fut: F,
    }
}

impl<F: Future> Future for Scoped<F> {
    type Output = F::Output;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        /// Puts the previous dry run back, even on a panic.
        struct Restore(Option<Arc<DryRun>>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take();
                CURRENT.with(|c| *c.borrow_mut() = previous);
            }
        }
        let previous = CURRENT.with(|c| c.replace(Some(Arc::clone(this.dry))));
        let _restore = Restore(previous);
        this.fut.poll(cx)
    }
}

/// Runs `operation` dry: the requests it withheld, or the error that ended it before it
/// withheld any.
async fn run<T>(
    sends_reads: bool,
    operation: impl Future<Output = Result<T, Error>>,
) -> Result<Vec<Request>, Error> {
    let dry = Arc::new(DryRun { sends_reads, withheld: Mutex::new(Vec::new()) });
    let result = Scoped { dry: Arc::clone(&dry), fut: operation }.await;
    let withheld = std::mem::take(&mut *dry.lock());
    match result {
        Err(e) if withheld.is_empty() => Err(e),
        _ => Ok(withheld),
    }
}

/// What a builder's started request returns, as a dry run needs it: its error, if any.
pub(crate) trait Outcome {
    fn into_result(self) -> Result<(), Error>;
}

impl<T> Outcome for Result<T, Error> {
    fn into_result(self) -> Result<(), Error> {
        self.map(drop)
    }
}

/// The dry run of a builder (`dry_run()`, written by `builder_future!`).
pub(crate) fn builder<'a, B>(builder: B) -> BoxFuture<'a, Result<Vec<Request>, Error>>
where
    B: Startable<'a> + 'a,
    B::Raw: Outcome + Send,
{
    let started = builder.start();
    Box::pin(run(B::DRY_SENDS_READS, async move { started.await.into_result() }))
}

impl<T: Table> Db<T> {
    /// Runs `operation` dry: the requests it would send, not sent, as
    /// [`Request`]s (printable as DynamoDB JSON). For operations that are not builders (a
    /// tree's `insert`, ...); every builder has its own `dry_run()`. The reads the operation's
    /// writes depend on are sent (and counted); its writes are withheld, and the first read
    /// after one ends it (see [`intercept`](crate::intercept)). An error before anything was
    /// withheld (a refusal: an invalid key, a missing parent) is returned as it is.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::intercept::Request;
    /// use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// struct User { id: String }
    ///
    /// let db = local::isolated_db().await?;
    /// db.reset_requests();
    /// let ann = User { id: "ann".into() };
    /// let sent = db.dry_run(async { ann.create(&db).await }).await?;
    /// assert!(matches!(sent.as_slice(), [Request::PutItem(_)]));
    /// assert_eq!(db.requests().total(), 0);
    /// assert!(User::get(&db, "ann").await?.is_none());
    /// # Ok(()) }
    /// ```
    pub async fn dry_run<F, R>(&self, operation: F) -> Result<Vec<Request>, Error>
    where
        F: IntoFuture<Output = Result<R, Error>>,
    {
        // Boxed: the operation's future is not part of the caller's.
        run(true, super::boxed(|| operation.into_future())).await
    }
}
