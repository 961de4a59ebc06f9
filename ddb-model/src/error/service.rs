//! What an [`Error`] says about the service: throttling and its reasons, transaction
//! cancellations, retry advice, whether a write may have applied; and the mapping of SDK
//! errors (with the text that describes them) into an [`Error`].

use super::*;

/// A capability an endpoint may lack (in [`Error::Unsupported`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Capability {
    /// Vector indexes and `SearchVectors`.
    VectorSearch,
    /// Point-in-time recovery (`DescribeContinuousBackups`, `UpdateContinuousBackups`).
    PointInTimeRecovery,
    /// Tags (`ListTagsOfResource`, `TagResource`, `UntagResource`).
    Tags,
    /// Resource-based policies (`GetResourcePolicy`, `PutResourcePolicy`, ...).
    ResourcePolicy,
}

impl std::fmt::Display for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Capability::VectorSearch => "vector search",
            Capability::PointInTimeRecovery => "point-in-time recovery",
            Capability::Tags => "tags",
            Capability::ResourcePolicy => "resource policies",
        })
    }
}

/// True when the service's answer says it has no such operation.
pub(crate) fn is_unknown_operation(err: &aws_sdk_dynamodb::Error) -> bool {
    use aws_sdk_dynamodb::error::ProvideErrorMetadata;
    err.code() == Some("UnknownOperationException")
}

pub(super) fn describe_throttles(reasons: &[Throttle]) -> String {
    if reasons.is_empty() {
        return String::new();
    }
    let list: Vec<String> = reasons.iter().map(Throttle::to_string).collect();
    format!(": {}", list.join(", "))
}

/// A service error as code and message (the SDK displays errors it has no type for as
/// "unhandled error").
pub(super) fn describe_service(err: &aws_sdk_dynamodb::Error) -> String {
    use aws_sdk_dynamodb::error::ProvideErrorMetadata;
    let text = err.to_string();
    if !text.starts_with("unhandled error") {
        return text;
    }
    let code = err.code().unwrap_or("an error response without a code");
    match err.message() {
        Some(message) => format!("{code}: {message}"),
        None => code.to_owned(),
    }
}

/// The messages of an error and its causes, joined with ": " (repeats and the SDK's generic
/// labels left out).
pub(super) fn describe_chain(err: &(dyn std::error::Error + 'static)) -> String {
    const GENERIC: [&str; 6] =
        ["io error", "other", "timeout", "user error", "unhandled error", ""];
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(err);
    while let Some(e) = next {
        let text = e.to_string();
        if !GENERIC.contains(&text.as_str()) && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    if parts.is_empty() { "no details".to_owned() } else { parts.join(": ") }
}

pub(super) fn applied_note(operation: Op, maybe_applied: bool) -> &'static str {
    match (operation.is_write(), maybe_applied) {
        (false, _) => "",
        (true, true) => "; the write may have been applied",
        (true, false) => "; the write was not applied",
    }
}

/// Displays a stored key in messages: `("pk", "sk")`, or `("pk")` without a sort key.
pub(crate) fn display_key(f: &mut fmt::Formatter<'_>, pk: &str, sk: Option<&str>) -> fmt::Result {
    match sk {
        Some(sk) => write!(f, "({pk:?}, {sk:?})"),
        None => write!(f, "({pk:?})"),
    }
}

/// Displays a stored key for error messages (`(<no key>)` without a partition key).
pub(crate) fn key_display(pk: Option<&str>, sk: Option<&str>) -> String {
    match (pk, sk) {
        (Some(pk), Some(sk)) => format!("({pk:?}, {sk:?})"),
        (Some(pk), None) => format!("({pk:?})"),
        (None, _) => "(<no key>)".to_owned(),
    }
}

impl Error {
    /// True when DynamoDB throttled the request (after the SDK's own retries), or canceled a
    /// transaction because it throttled one of its actions.
    pub fn is_throttled(&self) -> bool {
        use aws_sdk_dynamodb::Error as E;
        match self {
            Error::Throttled { .. } => true,
            Error::Sdk { source, .. } => matches!(
                **source,
                E::ProvisionedThroughputExceededException(_)
                    | E::RequestLimitExceeded(_)
                    | E::ThrottlingException(_)
            ),
            _ => self.cancellations().any(|r| matches!(r, CancelReason::Throttled { .. })),
        }
    }

    /// The service's reasons for throttling the request ([`Error::Throttled`]); empty for
    /// every other error.
    pub fn throttle_reasons(&self) -> &[Throttle] {
        match self {
            Error::Throttled { reasons, .. } => reasons,
            _ => &[],
        }
    }

    /// True when the request was throttled because one partition key took more than a
    /// partition's throughput ([`ThrottleLimit::KeyRange`]): sending it again soon meets the
    /// same limit. Spread the key's load (sharded keys, the edge module's sharded counters)
    /// or cache its reads.
    pub fn is_hot_key(&self) -> bool {
        self.throttle_reasons().iter().any(|r| r.limit.is_hot_key())
    }

    /// What to do about the error: not to send the same request again (the input, the
    /// stored data or the model must change first), to send it again after a pause (and
    /// what to change if it keeps failing), or to read the item first because a write may
    /// have been applied.
    ///
    /// ```
    /// use ddb_model::{Error, error::{RequestProblem, RetryAdvice}};
    ///
    /// fn plan(err: &Error) -> &'static str {
    ///     match err.retry_advice() {
    ///         RetryAdvice::DoNotRetry => "fix the input",
    ///         RetryAdvice::RetryAfter { .. } => "back off and retry",
    ///         RetryAdvice::CheckThenRetry { .. } => "read the item, then decide",
    ///         _ => "unknown",
    ///     }
    /// }
    /// let err = Error::InvalidRequest { path: String::new(), problem: RequestProblem::EmptyUpdate };
    /// assert_eq!(plan(&err), "fix the input");
    /// ```
    pub fn retry_advice(&self) -> RetryAdvice {
        use std::time::Duration;
        let after = |ms: u64, why: &'static str| RetryAdvice::RetryAfter {
            after: Duration::from_millis(ms),
            why,
        };
        if self.maybe_applied() {
            return RetryAdvice::CheckThenRetry {
                why: "the write may have been applied before the failure",
            };
        }
        match self {
            Error::Throttled { reasons, .. } => RetryAdvice::for_throttle(reasons),
            Error::ReplicatedWriteConflict { .. } => {
                after(100, "another Region wrote the same item at the same time")
            }
            Error::Transport { kind, .. } if kind.is_transient() => {
                after(100, "the request did not get a usable answer")
            }
            _ if self.is_throttled() => after(200, "throttled: back off"),
            _ if self.is_transaction_conflict() => {
                after(50, "another transaction or write was in progress on one of the items")
            }
            _ if self.is_tree_busy() => after(
                1000,
                "a large tree operation is in progress: wait for it, or resume it if it was interrupted",
            ),
            _ if self.is_tree_contended() || self.is_tree_changed() => {
                after(100, "concurrent writes changed the tree while the operation read it")
            }
            _ => RetryAdvice::DoNotRetry,
        }
    }

    /// True when a transaction was canceled because another transaction or write was in
    /// progress on one of its items ([`CancelReason::TransactionConflict`], or a service
    /// `TransactionConflictException`). Sending it again may succeed.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "STOCK#<sku>", sk = "STOCK")]
    /// # struct Stock { sku: String, count: i64 }
    /// async fn reserve(db: &Db, sku: &str) -> Result<(), Error> {
    ///     let mut attempts = 0;
    ///     loop {
    ///         let tx = db.transaction().update(Stock::key(sku), |u| {
    ///             u.add(Stock::COUNT, -1).condition(Stock::COUNT.gt(0))
    ///         });
    ///         match tx.await {
    ///             Err(e) if e.is_transaction_conflict() && attempts < 3 => attempts += 1,
    ///             other => return other,
    ///         }
    ///     }
    /// }
    /// ```
    pub fn is_transaction_conflict(&self) -> bool {
        match self {
            Error::Sdk { source, .. } => {
                matches!(**source, aws_sdk_dynamodb::Error::TransactionConflictException(_))
            }
            _ => {
                self.cancellations().any(|r| matches!(r, CancelReason::TransactionConflict { .. }))
            }
        }
    }

    /// The per-action reasons of a canceled transaction ([`Error::TransactionCanceled`]);
    /// empty for every other error.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # #[cfg(feature = "local")]
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Error> {
    /// # let db = ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?;
    /// let ann = User { id: "ann".into() };
    /// ann.create(&db).await?;
    /// let err = db.transaction().create(&User { id: "bob".into() }).create(&ann).await.unwrap_err();
    /// let reasons = err.cancellation_reasons();
    /// assert!(!reasons[0].reason.is_failure()); // bob was fine
    /// assert!(reasons[1].reason.condition_error().is_some_and(Error::is_already_exists));
    /// assert_eq!(err.failed_action().map(|r| r.action), Some(1));
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "local"))]
    /// # fn main() {}
    /// ```
    pub fn cancellation_reasons(&self) -> &[ActionReason] {
        match self {
            Error::TransactionCanceled { reasons, .. } => reasons,
            _ => &[],
        }
    }

    /// The first action that failed in a canceled transaction (the first reason that is not
    /// [`CancelReason::None`]). Example on [`cancellation_reasons`](Error::cancellation_reasons).
    pub fn failed_action(&self) -> Option<&ActionReason> {
        self.cancellation_reasons().iter().find(|r| r.reason.is_failure())
    }

    /// The errors of the failed guards and conditions of a canceled transaction.
    pub(super) fn condition_errors(&self) -> impl Iterator<Item = &Error> {
        self.cancellations().filter_map(CancelReason::condition_error)
    }

    /// The reason of each action of a canceled transaction.
    fn cancellations(&self) -> impl Iterator<Item = &CancelReason> {
        self.cancellation_reasons().iter().map(|r| &r.reason)
    }

    /// The stored item carried by a failed conditional write, if any. For a canceled
    /// transaction, the item of the first action whose guard or condition failed.
    pub fn current_item(&self) -> Option<&Item> {
        match self {
            Error::AlreadyExists { current, .. } => Some(current),
            Error::ConditionFailed { current, .. } => current.as_deref(),
            _ => self.condition_errors().find_map(Error::current_item),
        }
    }

    /// True when sending the same request again may succeed: a transport failure
    /// ([`Error::Transport`], but not a request the SDK could not build), throttling, a
    /// transaction conflict, or a transaction still in progress.
    pub fn is_transient(&self) -> bool {
        match self {
            Error::Transport { kind, .. } => kind.is_transient(),
            Error::TransactionInProgress { .. } => true,
            Error::ReplicatedWriteConflict { .. } => true,
            _ => self.is_throttled() || self.is_transaction_conflict(),
        }
    }

    /// True when a write failed without knowing whether it was applied: a transport failure
    /// after one of its attempts may have reached the service, or a transaction still in
    /// progress. Read the item to find out (or, for writes that are safe to repeat, send it
    /// again). False for reads and for every error that means nothing was written.
    pub fn maybe_applied(&self) -> bool {
        match self {
            Error::Transport { maybe_applied, .. } => *maybe_applied,
            Error::TransactionInProgress { .. } => true,
            _ => false,
        }
    }

    /// The error of a service answer the library has no more specific variant for.
    pub(crate) fn service(operation: Op, err: aws_sdk_dynamodb::Error) -> Error {
        use aws_sdk_dynamodb::Error as E;
        if let E::ReplicatedWriteConflictException(_) = &err {
            return Error::ReplicatedWriteConflict { operation, source: Box::new(err) };
        }
        let reasons = throttling_reasons(&err);
        match reasons {
            Some(reasons) => {
                let reasons = reasons
                    .iter()
                    .map(|r| {
                        Throttle::parse(r.reason().unwrap_or(""), r.resource().map(str::to_owned))
                    })
                    .collect();
                Error::Throttled { operation, reasons, source: Box::new(err) }
            }
            None => Error::Sdk { operation, source: Box::new(err) },
        }
    }

    /// The one conversion of an SDK error: a failure of the transport (no usable answer, or
    /// an HTTP 5xx) becomes [`Error::Transport`] (`Err`); a service error is handed back
    /// (`Ok`) for the caller to map (a failed condition, a canceled transaction, ...) or to
    /// wrap with [`Error::service`].
    ///
    /// `attempts` and `reached` describe every attempt of the request (from the client's
    /// counting HTTP client): how many were made, and whether one may have reached the service.
    pub(crate) fn from_sdk<E>(
        operation: Op,
        err: aws_sdk_dynamodb::error::SdkError<E, aws_sdk_dynamodb::config::http::HttpResponse>,
        attempts: u32,
        reached: bool,
    ) -> Result<aws_sdk_dynamodb::Error, Error>
    where
        E: std::error::Error
            + aws_sdk_dynamodb::error::ProvideErrorMetadata
            + Send
            + Sync
            + 'static,
        aws_sdk_dynamodb::Error: From<
            aws_sdk_dynamodb::error::SdkError<E, aws_sdk_dynamodb::config::http::HttpResponse>,
        >,
    {
        use aws_sdk_dynamodb::error::SdkError;
        let kind = match &err {
            SdkError::ConstructionFailure(_) => TransportKind::Construction,
            SdkError::TimeoutError(_) => TransportKind::Timeout,
            SdkError::DispatchFailure(d) => match d.as_connector_error() {
                Some(c) if is_connect_failure(c) => TransportKind::Connect,
                Some(c) if c.is_timeout() => TransportKind::Timeout,
                _ => TransportKind::Dispatch,
            },
            SdkError::ResponseError(_) => TransportKind::Response,
            SdkError::ServiceError(s) if s.raw().status().as_u16() >= 500 => {
                TransportKind::Server { status: s.raw().status().as_u16() }
            }
            _ => return Ok(aws_sdk_dynamodb::Error::from(err)),
        };
        let source: Box<dyn std::error::Error + Send + Sync> = match err {
            SdkError::ServiceError(s) => {
                let status = s.raw().status().as_u16();
                let e = s.into_err();
                Box::new(ServerAnswer {
                    status,
                    code: e.code().map(str::to_owned),
                    message: e.message().map(str::to_owned),
                })
            }
            other => other.into_source().unwrap_or_else(|e| Box::new(e)),
        };
        let maybe_applied = operation.is_write() && (reached || kind.may_have_reached());
        Err(Error::Transport { operation, kind, maybe_applied, attempts: attempts.max(1), source })
    }
}

/// The throttling reasons of a throttling error (`None` for any other error; empty when the
/// service gave none).
pub(crate) fn throttling_reasons(
    err: &aws_sdk_dynamodb::Error,
) -> Option<&[aws_sdk_dynamodb::types::ThrottlingReason]> {
    use aws_sdk_dynamodb::Error as E;
    match err {
        E::ProvisionedThroughputExceededException(e) => Some(e.throttling_reasons()),
        E::RequestLimitExceeded(e) => Some(e.throttling_reasons()),
        E::ThrottlingException(e) => Some(e.throttling_reasons()),
        _ => None,
    }
}
