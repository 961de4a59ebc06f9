//! The transport and the retry policy, in one place.
//!
//! Every request the library sends goes through [`send`] (or [`send_retrying`]): it counts the
//! call and every HTTP attempt the SDK makes (through [`Counting`](crate::trace::Counting),
//! the wrapper of every [`Db`]'s HTTP client, and the request's [`Trace`]), records what the
//! response reports ([`Response`]: capacity, items read) per operation and target ([`Call`]),
//! traces the call in a span ([`RequestSpan`], feature `tracing`), and types a failure with
//! [`Error::from_sdk`]: transport failures become [`Error::Transport`] (with the attempts made
//! and whether one may have reached the service); service errors are handed back for the
//! caller to map.
//!
//! What is retried, and how long to wait:
//! - the SDK retries every request on its own (its retry config: 3 attempts in standard
//!   mode), transport failures and throttling included;
//! - a write that carries an idempotency token (a `TransactWriteItems`, an update made
//!   idempotent by its marker) is safe to send again within the token's window, so when the
//!   SDK's attempts run out on a transient failure, [`send_retrying`] sends it again, under
//!   [`TOKEN_ROUNDS`];
//! - other writes are not sent again: their error says whether they may have been applied
//!   ([`Error::maybe_applied`]);
//! - an operation that reads, then writes conditioned on what it read (a tree's insert, move
//!   or delete) and meets a concurrent change is tried again by [`on_conflict`]: a bounded
//!   number of tries, then the typed error its last try named;
//! - loops with state of their own between tries (batch items left unprocessed, graph and
//!   unique-value writes that met a concurrent change) count their tries against their
//!   policy and wait with its [`Backoff::pause`].
//!
//! Every retry policy is one of the constants below, and this module is the only one that
//! waits: [`Backoff::pause`] (exponential backoff with full jitter) and [`Poll::pause`]
//! (exponential, no jitter) both go through one `sleep`. The pause after try `n` is at most
//! `min(max, base * 2^(n - 1))`.
//!
//! | Policy | What it tries again | Tries | Base | Max |
//! |---|---|---|---|---|
//! | [`TOKEN_ROUNDS`] | a token-carrying write whose SDK attempts ended on a transient failure | 5 | 50 ms | 2 s |
//! | [`UNPROCESSED`] | batch items or keys the service left unprocessed (the default of the batch builders' `max_attempts` and `backoff`) | 8 | 50 ms | 2 s |
//! | [`UNIQUE_CONFLICTS`] | a write of unique values whose read was overtaken or whose transaction met another; the update of a sealed entity's item written since it was read | 8 | 10 ms | 400 ms |
//! | [`EDGE_CONFLICTS`] | graph writes that met a concurrent transaction; a node's edge removal reading stale index entries | 12 | 4 ms | 256 ms |
//! | [`CONFLICTS`] | tree inserts, moves, deletes, replaces that met a concurrent change | 4 | 10 ms | 40 ms |
//! | [`MOVE_CONFLICTS`] | a tree move of a small subtree that concurrent writes cancel | 8 | 20 ms | 500 ms |
//! | [`INDEX_LAG`] | a tree subtree read again until the index caught up with it | 20 | 10 ms | 200 ms |
//! | [`REREAD_CONFLICTS`] | a transaction of a long protocol that reads again before each try and met a concurrent writer: a fenced tree step's chunk, a bulk load's last transaction, a re-key's chunk of copies or removals and its write of both copies, a stream aggregate's contribution | 8 | 10 ms | 640 ms |
//! | [`TABLE_ACTIVE`] | describing a table until it and its indexes are active (no jitter) | for 120 s | 20 ms | 500 ms |

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::RequestId;

use super::dry::{self, Decision};
use super::fluent::{Fluent, Response};
use super::intercepted;
use crate::db::Db;
use crate::error::Error;
use crate::intercept::{Additions, Outcome};
use crate::model::Table;
use crate::stats::{Finished, Op};
use crate::telemetry::{Answer, Failure, Request, RequestSpan};
use crate::trace::{Trace, Traced};

/// How a retry loop waits: `tries` in all (the first included; 0 counts as 1), pausing
/// [`delay`](Backoff::delay) after try `n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Backoff {
    /// Tries in all, the first included.
    pub(crate) tries: u32,
    /// The pause after the first try (at most; full jitter).
    pub(crate) base: Duration,
    /// The longest pause.
    pub(crate) max: Duration,
}

impl Backoff {
    /// The pause after try `attempt` (1-based): full jitter, uniformly random between zero
    /// and `min(max, base * 2^(attempt - 1))`.
    pub(crate) fn delay(self, attempt: u32) -> Duration {
        jitter(capped(self.base, self.max, attempt))
    }

    /// Waits the pause after try `attempt` (1-based).
    pub(crate) async fn pause(self, attempt: u32) {
        sleep(self.delay(attempt)).await;
    }
}

/// How a loop waits for something to become ready (nothing contends, so no jitter): pauses
/// of `min(max, base * 2^(n - 1))` after poll `n`, for as long as `timeout`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Poll {
    /// The pause after the first poll.
    pub(crate) base: Duration,
    /// The longest pause.
    pub(crate) max: Duration,
    /// How long the loop polls before it gives up.
    pub(crate) timeout: Duration,
}

impl Poll {
    /// Waits the pause after poll `poll` (1-based).
    pub(crate) async fn pause(self, poll: u32) {
        sleep(capped(self.base, self.max, poll)).await;
    }
}

// The policies: what each tries again, and its figures, are in the module's table (a unit
// test checks it against these constants).

/// Calls of a token-carrying write ([`send_retrying`]), each itself up to the SDK's attempts.
pub(crate) const TOKEN_ROUNDS: Backoff =
    Backoff { tries: 5, base: Duration::from_millis(50), max: Duration::from_secs(2) };

/// Requests per batch chunk, by default (the batch builders' `max_attempts` and `backoff`).
pub(crate) const UNPROCESSED: Backoff =
    Backoff { tries: 8, base: Duration::from_millis(50), max: Duration::from_secs(2) };

pub(crate) const UNIQUE_CONFLICTS: Backoff =
    Backoff { tries: 8, base: Duration::from_millis(10), max: Duration::from_millis(400) };

pub(crate) const EDGE_CONFLICTS: Backoff =
    Backoff { tries: 12, base: Duration::from_millis(4), max: Duration::from_millis(256) };

pub(crate) const CONFLICTS: Backoff =
    Backoff { tries: 4, base: Duration::from_millis(10), max: Duration::from_millis(40) };

/// Inserts under a moved subtree's new or old parent write that parent's item, so they cancel
/// the move's transaction; full jitter keeps a mover and a stream of writers out of step. After
/// about 1.5 s of pauses: [`TreeProblem::Contended`](crate::TreeProblem).
pub(crate) const MOVE_CONFLICTS: Backoff =
    Backoff { tries: 8, base: Duration::from_millis(20), max: Duration::from_millis(500) };

/// Also when the subtree changed between the reads.
pub(crate) const INDEX_LAG: Backoff =
    Backoff { tries: 20, base: Duration::from_millis(10), max: Duration::from_millis(200) };

/// Each try reads its state again (the intent record a concurrent insert also checks, the
/// items a concurrent writer changed, the contribution another processor applied), so few
/// tries meet the same writer; one policy for every such protocol.
pub(crate) const REREAD_CONFLICTS: Backoff =
    Backoff { tries: 8, base: Duration::from_millis(10), max: Duration::from_millis(640) };

/// How [`Db::create_table`] waits for the table and its indexes to become active.
pub(crate) const TABLE_ACTIVE: Poll = Poll {
    base: Duration::from_millis(20),
    max: Duration::from_millis(500),
    timeout: Duration::from_secs(120),
};

/// `min(max, base * 2^(attempt - 1))`, without overflow.
fn capped(base: Duration, max: Duration, attempt: u32) -> Duration {
    let factor = 1u32.checked_shl(attempt.saturating_sub(1)).unwrap_or(u32::MAX);
    base.saturating_mul(factor).min(max)
}

/// A random `u64` (jitter, idempotency tokens).
pub(crate) fn random() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    // RandomState is seeded from the OS's randomness; the counter makes every draw distinct.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    h.finish()
}

/// A uniformly random duration between zero and `max`.
fn jitter(max: Duration) -> Duration {
    // max * r / 2^64 in integers: no float rounding, no overflow.
    let nanos = u64::try_from(max.as_nanos()).unwrap_or(u64::MAX);
    let scaled = (u128::from(nanos) * u128::from(random())) >> 64;
    Duration::from_nanos(u64::try_from(scaled).unwrap_or(u64::MAX))
}

/// Waits `pause`: the one place the library sleeps.
async fn sleep(pause: Duration) {
    tokio::time::sleep(pause).await;
}

/// What one try of [`on_conflict`] ended with.
#[derive(Debug)]
pub(crate) enum Try<T> {
    /// Finished, with this result.
    Done(T),
    /// A concurrent change got in the way: tried again after a pause while tries remain;
    /// after the last try, this error is the result.
    Again(Error),
}

/// Runs `step` (given the try's number, from 1) until it is done, at most `policy.tries`
/// times, pausing between tries with exponential backoff and full jitter. An error of a try
/// ends the loop at once; a try that meets a conflict ([`Try::Again`]) is followed by another
/// while tries remain, and the last one's error is returned.
pub(crate) async fn on_conflict<T, F, Fut>(policy: Backoff, mut step: F) -> Result<T, Error>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<Try<T>, Error>>,
{
    let mut attempt = 1;
    loop {
        match step(attempt).await? {
            Try::Done(out) => return Ok(out),
            Try::Again(err) if attempt >= policy.tries => return Err(err),
            Try::Again(_) => {
                policy.pause(attempt).await;
                attempt += 1;
            }
        }
    }
}

/// One request as the statistics and its span name it: the operation, and for a query or
/// scan the index it reads (`None`: the table) and its segment of a parallel scan; and the
/// entity it was built for, where one was (the access pattern of the cost report).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Call<'a> {
    pub(crate) op: Op,
    pub(crate) index: Option<&'a str>,
    /// `(segment, total_segments)` of a parallel scan.
    pub(crate) segment: Option<(u32, u32)>,
    /// The entity (`E::NAME`) whose operation sends the request.
    pub(crate) entity: Option<&'static str>,
}

impl Call<'_> {
    /// The call of `op` for the entity all of `entities` name, when they name one (the cost
    /// report's entity of a batch or a transaction); of no entity otherwise.
    pub(crate) fn of_all(op: Op, entities: impl IntoIterator<Item = &'static str>) -> Self {
        let mut names = entities.into_iter();
        let first = names.next();
        let entity = first.filter(|first| names.all(|n| n == *first));
        Call { entity, ..Call::from(op) }
    }
}

impl From<Op> for Call<'_> {
    fn from(op: Op) -> Self {
        Call { op, index: None, segment: None, entity: None }
    }
}

impl Call<'_> {
    /// A request of `op` on the table, sent by an operation of the entity named `entity`.
    pub(crate) fn of(op: Op, entity: &'static str) -> Self {
        Call { op, index: None, segment: None, entity: Some(entity) }
    }
}

/// A request that failed: a service error for the caller to map, or an error already typed
/// (a transport failure).
#[derive(Debug)]
pub(crate) enum SendError {
    /// The service answered with an error.
    Service {
        op: Op,
        err: aws_sdk_dynamodb::Error,
        /// The HTTP attempts the SDK made (more than 1: it retried, and an earlier attempt
        /// may have been applied).
        attempts: u32,
    },
    /// A typed error (the transport failed).
    Typed(Error),
}

impl SendError {
    /// The service error, or the typed error.
    pub(crate) fn into_service(self) -> Result<aws_sdk_dynamodb::Error, Error> {
        match self {
            SendError::Service { err, .. } => Ok(err),
            SendError::Typed(e) => Err(e),
        }
    }

    /// The stored item a failed condition returned (`None` when there was none or it was not
    /// asked for), when the service answered `ConditionalCheckFailedException`; any other
    /// failure as its typed error.
    pub(crate) fn into_condition_failure(self) -> Result<Option<crate::item::Item>, Error> {
        match self {
            SendError::Service {
                err: aws_sdk_dynamodb::Error::ConditionalCheckFailedException(c),
                ..
            } => Ok(c.item),
            other => Err(other.into()),
        }
    }

    fn retryable(&self) -> bool {
        match self {
            SendError::Typed(e) => {
                matches!(e, Error::Transport { kind, .. } if kind.is_transient())
            }
            SendError::Service { err, .. } => {
                matches!(err, aws_sdk_dynamodb::Error::TransactionInProgressException(_))
            }
        }
    }
}

impl From<SendError> for Error {
    fn from(e: SendError) -> Error {
        match e {
            SendError::Service { op, err, .. } => Error::service(op, err),
            SendError::Typed(e) => e,
        }
    }
}

/// Sends one request (an SDK fluent builder). Counts the call, each attempt through the
/// request's trace, and what the response reports; traces the request in a span (feature
/// `tracing`); shows it and its answer to the `Db`'s interceptor; in a dry run, withholds it.
pub(crate) async fn send<'c, T, F>(
    db: &Db<T>,
    call: impl Into<Call<'c>>,
    request: F,
) -> Result<F::Output, SendError>
where
    T: Table,
    F: Fluent,
    aws_sdk_dynamodb::Error: From<SdkError<F::Err, HttpResponse>>,
{
    let call = call.into();
    let span = request_span(db, &call);
    let (mut attempts, mut reached) = (0, false);
    let dry = dry::current();
    if dry.is_none() && db.interceptor().is_none() {
        return plain!(db, &call, &span, request, 1, &mut attempts, &mut reached);
    }
    // Boxed: the futures of a request sent as it is do not hold this path's.
    Box::pin(seen(db, &call, &span, request, 1, &mut attempts, &mut reached, dry)).await
}

/// Sends a request that carries an idempotency token (sending it again within the token's
/// window cannot apply it twice): when the SDK's attempts end on a transient transport
/// failure, or the service says the same token's request is still in progress, it is sent
/// again, under [`TOKEN_ROUNDS`] (exponential backoff and full jitter between calls).
/// `request` must build the same request every time; an error building it ends the loop with
/// that error. Each round is a request of its own to the interceptor.
pub(crate) async fn send_retrying<'c, T, F>(
    db: &Db<T>,
    call: impl Into<Call<'c>>,
    mut request: impl FnMut() -> Result<F, Error>,
) -> Result<F::Output, SendError>
where
    T: Table,
    F: Fluent,
    aws_sdk_dynamodb::Error: From<SdkError<F::Err, HttpResponse>>,
{
    let call = call.into();
    let span = request_span(db, &call);
    let (mut attempts, mut reached) = (0u32, false);
    let mut round = 1;
    loop {
        let built = request().map_err(SendError::Typed)?;
        let last = round >= TOKEN_ROUNDS.tries;
        let dry = dry::current();
        let result = if dry.is_none() && db.interceptor().is_none() {
            plain!(db, &call, &span, built, round, &mut attempts, &mut reached)
        } else {
            let seen = seen(db, &call, &span, built, round, &mut attempts, &mut reached, dry);
            Box::pin(seen).await
        };
        match result {
            Err(err) if !last && err.retryable() => {
                TOKEN_ROUNDS.pause(round).await;
                round += 1;
            }
            done => return done,
        }
    }
}

/// One request of `send` or `send_retrying` (the `round`th; `attempts` and `reached` add up
/// over rounds) that a dry run (`dry`) or the `Db`'s interceptor has to see.
#[allow(clippy::too_many_arguments)]
async fn seen<T, F>(
    db: &Db<T>,
    call: &Call<'_>,
    span: &RequestSpan,
    request: F,
    round: u32,
    attempts: &mut u32,
    reached: &mut bool,
    dry: Option<std::sync::Arc<dry::DryRun>>,
) -> Result<F::Output, SendError>
where
    T: Table,
    F: Fluent,
    aws_sdk_dynamodb::Error: From<SdkError<F::Err, HttpResponse>>,
{
    let view = request.request().map_err(SendError::Typed)?;
    if let Some(dry) = dry {
        match dry.decide(call.op) {
            Decision::Withhold => {
                dry.withhold(view);
                return Ok(F::withheld());
            }
            Decision::End => return Err(SendError::Typed(dry::ended())),
            Decision::Send => {}
        }
    }
    let Some(hook) = db.interceptor() else {
        return plain!(db, call, span, request, round, attempts, reached);
    };
    let mut additions = Additions::default();
    hook.before(&view, &mut additions);
    let (request, checks) = match request.add(&additions.added, (T::PK, T::SK)) {
        Ok(added) => added,
        Err(problem) => {
            let e = Error::InvalidRequest { path: String::new(), problem };
            hook.after(&view, Outcome::Failed(&e));
            return Err(SendError::Typed(e));
        }
    };
    let result = plain!(db, call, span, request, round, attempts, reached);
    match &result {
        Ok(out) => hook.after(&view, Outcome::Answered(F::reply(out))),
        Err(SendError::Service { err, .. }) => hook.after(&view, Outcome::Refused(err)),
        Err(SendError::Typed(e)) => hook.after(&view, Outcome::Failed(e)),
    }
    match result {
        Err(err) if !checks.is_empty() => {
            Err(intercepted::attribute(db, call.op, err, checks).await)
        }
        done => done,
    }
}

/// Sends `request` (a [`Fluent`]) and records it: where a request reaches the SDK. A macro,
/// so that it adds no future around the SDK's (their nesting is the depth of every caller's
/// future type).
macro_rules! plain {
    ($db:expr, $call:expr, $span:expr, $request:expr, $round:expr, $attempts:expr, $reached:expr) => {{
        let (db, call, span, attempts, reached): (_, &Call<'_>, &RequestSpan, &mut u32, &mut bool) =
            ($db, $call, $span, $attempts, $reached);
        let request = $request;
        // The request as sent, only for a handle that keeps a cost report.
        let sent = match db.cost() {
            Some(_) => Fluent::request(&request).ok(),
            None => None,
        };
        let trace = Trace::new(call.op, db.counters(), db.cost().is_some());
        let traced = Traced { trace: &trace, fut: Fluent::dispatch(request) };
        db.count(call.op);
        let result = span.run(traced).await;
        *attempts = attempts.saturating_add(trace.attempts());
        *reached |= trace.reached();
        let result = finish(db, call, span, &trace, $round, result, *attempts, *reached);
        if db.cost().is_some() {
            $crate::ops::cost::record(db, call, sent.as_ref(), &result, &trace);
        }
        result
    }};
}
pub(super) use plain;

/// Records a finished call of `call` (the `round`th, its trace's attempts) in the `Db`'s
/// statistics and its span, and types its failure.
#[allow(clippy::too_many_arguments, clippy::result_large_err)] // what `send` returns
pub(super) fn finish<T, O, E>(
    db: &Db<T>,
    call: &Call<'_>,
    span: &RequestSpan,
    trace: &Trace,
    round: u32,
    result: Result<O, SdkError<E, HttpResponse>>,
    attempts: u32,
    reached: bool,
) -> Result<O, SendError>
where
    T: Table,
    O: Response,
    E: std::error::Error + ProvideErrorMetadata + Send + Sync + 'static,
    aws_sdk_dynamodb::Error: From<SdkError<E, HttpResponse>>,
{
    let (items_read, capacity) = match &result {
        Ok(out) => (out.items_read(), out.consumed()),
        Err(_) => (0, &[][..]),
    };
    db.record_finished(&Finished {
        op: call.op,
        index: call.index,
        attempts: trace.attempts(),
        items_read,
        capacity,
    });
    match result {
        Ok(out) => {
            if span.is_enabled() {
                span.answered(&Answer {
                    round,
                    attempts,
                    counts: out.counts(),
                    request_id: out.request_id(),
                    capacity: out.consumed(),
                });
            }
            Ok(out)
        }
        Err(err) => {
            let err = classify(call.op, err, attempts, reached);
            if span.is_enabled() {
                let (code, request_id) = match &err {
                    SendError::Service { err, .. } => {
                        (err.code().unwrap_or("service"), RequestId::request_id(err))
                    }
                    SendError::Typed(_) => ("transport", None),
                };
                span.failed(&Failure { round, attempts, code, request_id });
            }
            Err(err)
        }
    }
}

/// The span of a request of `call` to `db`'s table.
pub(super) fn request_span<T: Table>(db: &Db<T>, call: &Call<'_>) -> RequestSpan {
    RequestSpan::new(&Request {
        table: db.table_name(),
        op: call.op,
        index: call.index,
        segment: call.segment,
    })
}

fn classify<E>(op: Op, err: SdkError<E, HttpResponse>, attempts: u32, reached: bool) -> SendError
where
    E: std::error::Error + ProvideErrorMetadata + Send + Sync + 'static,
    aws_sdk_dynamodb::Error: From<SdkError<E, HttpResponse>>,
{
    match Error::from_sdk(op, err, attempts, reached) {
        Ok(err) => SendError::Service { op, err, attempts },
        Err(e) => SendError::Typed(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delay(base: Duration, max: Duration, attempt: u32) -> Duration {
        Backoff { tries: 1, base, max }.delay(attempt)
    }

    /// `10 ms`, `2 s`.
    fn text(d: Duration) -> String {
        match d.as_millis() {
            ms if ms % 1000 == 0 => format!("{} s", ms / 1000),
            ms => format!("{ms} ms"),
        }
    }

    #[test]
    fn the_documented_policies_are_the_constants() {
        let backoff =
            |name: &str, b: Backoff| (name.to_owned(), b.tries.to_string(), b.base, b.max);
        let policies = [
            backoff("TOKEN_ROUNDS", TOKEN_ROUNDS),
            backoff("UNPROCESSED", UNPROCESSED),
            backoff("UNIQUE_CONFLICTS", UNIQUE_CONFLICTS),
            backoff("EDGE_CONFLICTS", EDGE_CONFLICTS),
            backoff("CONFLICTS", CONFLICTS),
            backoff("MOVE_CONFLICTS", MOVE_CONFLICTS),
            backoff("INDEX_LAG", INDEX_LAG),
            backoff("REREAD_CONFLICTS", REREAD_CONFLICTS),
            (
                "TABLE_ACTIVE".to_owned(),
                format!("for {}", text(TABLE_ACTIVE.timeout)),
                TABLE_ACTIVE.base,
                TABLE_ACTIVE.max,
            ),
        ];
        let rows: Vec<Vec<&str>> = include_str!("retry.rs")
            .lines()
            .filter_map(|l| l.strip_prefix("//! | [`"))
            .map(|row| row.split(" | ").map(|c| c.trim_end_matches(" |")).collect())
            .collect();
        assert_eq!(rows.len(), policies.len(), "one row per policy");
        for (row, (name, tries, base, max)) in rows.iter().zip(&policies) {
            let documented = [row[0], row[2], row[3], row[4]].map(str::to_owned);
            assert_eq!(documented, [format!("{name}`]"), tries.clone(), text(*base), text(*max)]);
        }
    }

    #[test]
    fn delay_is_bounded_by_the_exponential_and_the_cap() {
        let base = Duration::from_millis(10);
        let max = Duration::from_millis(100);
        for attempt in 1..40 {
            let bound = base.saturating_mul(1u32 << (attempt - 1).min(20)).min(max);
            for _ in 0..20 {
                assert!(delay(base, max, attempt) <= bound);
            }
        }
        assert!(delay(Duration::MAX, Duration::MAX, u32::MAX) <= Duration::MAX);
    }

    fn quick(tries: u32) -> Backoff {
        Backoff { tries, base: Duration::from_millis(1), max: Duration::from_millis(2) }
    }

    fn conflict(n: u32) -> Error {
        Error::NotFound { entity: "conflict", key: n.to_string() }
    }

    #[tokio::test]
    async fn on_conflict_is_bounded_and_returns_the_last_tries_error() {
        let mut seen = Vec::new();
        let out: Result<(), Error> = on_conflict(quick(4), |n| {
            seen.push(n);
            std::future::ready(Ok(Try::Again(conflict(n))))
        })
        .await;
        assert_eq!(seen, [1, 2, 3, 4]);
        assert!(matches!(out, Err(Error::NotFound { key, .. }) if key == "4"));

        // Done on a later try; an error ends the loop at once; 0 tries is one.
        let out = on_conflict(quick(4), |n| {
            std::future::ready(Ok(if n < 3 { Try::Again(conflict(n)) } else { Try::Done(n) }))
        })
        .await;
        assert_eq!(out.ok(), Some(3));
        let mut calls = 0;
        let out: Result<(), Error> = on_conflict(quick(4), |n| {
            calls += 1;
            std::future::ready(Err(conflict(n)))
        })
        .await;
        assert!(out.is_err());
        assert_eq!(calls, 1);
        let mut calls = 0;
        let out: Result<(), Error> = on_conflict(quick(0), |n| {
            calls += 1;
            std::future::ready(Ok(Try::Again(conflict(n))))
        })
        .await;
        assert!(out.is_err());
        assert_eq!(calls, 1);
    }

    #[test]
    fn jitter_spreads_over_the_range() {
        let max = Duration::from_millis(100);
        let draws: Vec<Duration> = (0..200).map(|_| jitter(max)).collect();
        assert!(draws.iter().all(|d| *d <= max));
        assert!(draws.iter().any(|d| *d < max / 4) && draws.iter().any(|d| *d > max * 3 / 4));
        assert_eq!(jitter(Duration::ZERO), Duration::ZERO);
    }
}
