//! The one error type of the crate, [`Error`] (also at the crate root), and every problem type
//! its variants carry: `ddb_model::error::{KeyProblem, RequestProblem, TransactionProblem, ..}`.
//! The prelude brings the problem types in too, for matching on.
//!
//! The bottom of the module graph: `error` imports only the leaves `item` (the raw [`Item`]
//! a failed write reports), `stats` ([`Op`], the operation that failed) and `escape` (the
//! key-component escaping of a [`TreePath`]'s text). The problem types, and the values they
//! name (a [`TreePath`], a [`TreeOp`], a [`BatchKey`]), are defined here, beside the variants
//! that carry them; some are also re-exported beside the operations that raise them
//! (`ddb_model::tree::TreeProblem`, `ddb_model::ops::TransactionProblem`, ...). Behaviour that
//! needs a higher layer (reading a carried item as an entity, a batch key as a typed key) is
//! implemented in that layer.

mod batch;
mod internal;
mod key;
mod path;
mod request;
mod throttle;
mod transaction;
mod transport;
mod tree;
mod vector;

use std::fmt;

pub use batch::{BatchAction, BatchKey, UnprocessedWrite};
pub use internal::InternalProblem;
pub use key::KeyProblem;
pub use path::{MAX_PATH_DEPTH, PATH_SEPARATOR, PathProblem, TreePath};
pub use request::RequestProblem;
pub use throttle::{RetryAdvice, Throttle, ThrottleLimit, ThrottledAccess};
pub use transaction::{ActionReason, CancelReason, TransactionProblem};
pub use transport::TransportKind;
pub(crate) use transport::{ServerAnswer, is_connect_failure};
pub use tree::{OpKind, OpPhase, TreeOp, TreeProblem};
pub use vector::VectorProblem;

use crate::item::Item;
use crate::stats::Op;

/// What an upgrade function (`#[entity(schema = .., upgrade = ..)]`) returns when it cannot
/// upgrade an item: any error, or a message (`Err("no `name` attribute".into())`). Reads
/// report it as [`Error::SchemaUpgrade`], naming the entity, the versions and the key.
///
/// The migration that upgrades every stored item in place lives in [`ops`](crate::ops) with
/// its types: `db.migrate::<E>()` ([`Migrate`](crate::ops::Migrate)), its progress
/// ([`MigrateProgress`](crate::ops::MigrateProgress)), its result
/// ([`MigrateReport`](crate::ops::MigrateReport)) and the checkpoint it resumes from
/// ([`MigrateCheckpoint`](crate::ops::MigrateCheckpoint)).
pub type UpgradeError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Every failure of ddb-model.
///
/// Inputs are checked before anything is sent, so an error of a check (`InvalidKey`,
/// `ItemTooLarge`, `Serialize`, ...) means nothing was written. Errors of the service keep the
/// SDK error as their [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A key attribute (table or index) is empty or over the DynamoDB size limit.
    #[error("invalid key for `{entity}`, attribute `{attribute}`: {problem}")]
    InvalidKey {
        /// The entity type.
        entity: &'static str,
        /// The key attribute (`pk`, `sk`, `gsi1pk`, ...).
        attribute: String,
        /// What is wrong.
        problem: KeyProblem,
    },

    /// The item is larger than the 400 KB DynamoDB allows.
    #[error("item of `{entity}` is {size} bytes; DynamoDB items are limited to {max} bytes")]
    ItemTooLarge {
        /// The entity type.
        entity: &'static str,
        /// The item size as DynamoDB counts it.
        size: usize,
        /// The limit.
        max: usize,
    },

    /// A field of the entity serialises to the name of a key or bookkeeping attribute.
    #[error(
        "`{entity}` writes an attribute `{attribute}` that the table uses for keys or the entity type; rename the field"
    )]
    AttributeCollision {
        /// The entity type.
        entity: &'static str,
        /// The colliding attribute name.
        attribute: String,
    },

    /// `create` found an item under the key.
    #[error("`{entity}` {key} already exists")]
    AlreadyExists {
        /// The entity type.
        entity: &'static str,
        /// The key, for display.
        key: String,
        /// The item that is stored under the key.
        current: Box<Item>,
    },

    /// A write that needs an existing item (`replace`, `update`, conditional `delete`) found
    /// none.
    #[error("`{entity}` {key} does not exist")]
    NotFound {
        /// The entity type.
        entity: &'static str,
        /// The key, for display.
        key: String,
    },

    /// A condition of a write did not hold. Nothing was written.
    #[error("condition failed for `{entity}` {key}")]
    ConditionFailed {
        /// The entity type.
        entity: &'static str,
        /// The key, for display.
        key: String,
        /// The item as stored when the condition was checked, if there was one.
        current: Option<Box<Item>>,
    },

    /// Optimistic locking: the stored version is not the one the write expected. Nothing was
    /// written.
    #[error("version conflict for `{entity}` {key}: expected version {expected}, found {}", display_version(*.actual))]
    VersionConflict {
        /// The entity type.
        entity: &'static str,
        /// The key, for display.
        key: String,
        /// The version the write expected.
        expected: u64,
        /// The stored version (`None` when there is no item).
        actual: Option<u64>,
    },

    /// A unique constraint (`#[unique]`) refused the write: another item owns the value of
    /// `field` in `scope`. Nothing was written. Sending the same write again fails the same
    /// way ([`retry_advice`](Error::retry_advice) is `DoNotRetry`): change the value, or free
    /// it first (update or delete its owner).
    #[error("`{entity}`.{field} is taken: another item{} owns the value in unique scope `{scope}`", owner.as_deref().map(|o| format!(" {o}")).unwrap_or_default())]
    Unique {
        /// The entity type that was written.
        entity: &'static str,
        /// The field (the fields of a composite constraint, joined by `", "`).
        field: &'static str,
        /// The namespace of the values: `#[unique(scope = ..)]`, else `"<Entity>.<field>"`
        /// (a composite constraint's fields joined by `+`: `"Member.org+nick"`).
        scope: &'static str,
        /// The key of the item that owns the value, for display (`("USER#ann", "PROFILE")`),
        /// when the service said.
        owner: Option<String>,
    },

    /// The item under the key belongs to another entity type (or has no entity type).
    #[error("item {key} is a `{}`, not a `{expected}`", found.as_deref().unwrap_or("<item without entity type>"))]
    WrongEntityType {
        /// The entity type that was asked for.
        expected: &'static str,
        /// The entity type stored on the item.
        found: Option<String>,
        /// The key, for display.
        key: String,
    },

    /// A stored item was written by a newer schema version of its entity than this code
    /// declares (`#[entity(schema = ..)]`): reading it would drop or misread the fields the
    /// newer version added, so it is refused. Deploy the newer code to read it.
    #[error(
        "`{entity}` item {key} has schema version {found}, newer than this code's version {current}"
    )]
    SchemaTooNew {
        /// The entity type.
        entity: &'static str,
        /// The key, for display.
        key: String,
        /// The version stored on the item.
        found: u32,
        /// The version the entity declares.
        current: u32,
    },

    /// The upgrade function of an entity (`#[entity(schema = .., upgrade = ..)]`) failed on a
    /// stored item, going from version `from` to `from + 1`.
    #[error("cannot upgrade `{entity}` item {key} from schema version {from} to {to}: {source}")]
    SchemaUpgrade {
        /// The entity type.
        entity: &'static str,
        /// The key, for display.
        key: String,
        /// The version the failed step started from.
        from: u32,
        /// The version the failed step was to produce (`from + 1`).
        to: u32,
        /// What the upgrade function returned.
        #[source]
        source: UpgradeError,
    },

    /// A partial write (an update, an upsert) met an item of an older schema version of its
    /// entity: changing some fields of an item of another shape could be undone or misread
    /// by its upgrade, so nothing was written. Migrate the table (`Db::migrate`), or read the
    /// item (which upgrades it) and write it whole (`replace`).
    #[error(
        "`{entity}` item {key} has schema version {found}, older than version {current}; migrate it, or read it and replace it, before updating it"
    )]
    SchemaOutdated {
        /// The entity type.
        entity: &'static str,
        /// The key, for display.
        key: String,
        /// The version stored on the item.
        found: u32,
        /// The version the entity declares.
        current: u32,
    },

    /// A stored item does not match its entity's rules (its keys disagree with its fields, an
    /// attribute has the wrong type, ...).
    #[error("corrupt `{entity}` item {key}: {reason}")]
    CorruptItem {
        /// The entity type.
        entity: &'static str,
        /// The key, for display.
        key: String,
        /// What is wrong.
        reason: String,
    },

    /// A value could not be converted into a DynamoDB attribute.
    #[error("cannot serialise `{entity}`: {source}")]
    Serialize {
        /// The entity type (or the attribute path for expression values).
        entity: String,
        /// The serde_dynamo error.
        #[source]
        source: serde_dynamo::Error,
    },

    /// A stored item could not be converted into the entity.
    #[error("cannot read `{entity}` item {key}: {source}")]
    Deserialize {
        /// The entity type.
        entity: &'static str,
        /// The key, for display.
        key: String,
        /// The serde_dynamo error.
        #[source]
        source: serde_dynamo::Error,
    },

    /// A key string does not follow the entity's key template.
    #[error(
        "cannot parse `{entity}` attribute `{attribute}` {input:?} with template {template:?}: {reason}"
    )]
    KeyParse {
        /// The entity type.
        entity: &'static str,
        /// The key attribute.
        attribute: &'static str,
        /// The template.
        template: &'static str,
        /// The key string.
        input: String,
        /// What is wrong.
        reason: String,
    },

    /// A request the library built could not be made: a bug of ddb-model (see
    /// [`InternalProblem`]), not a problem of the input, the data or the service. Kept apart
    /// so that a bug is not mistaken for bad input; nothing was sent. Please report it.
    #[error("internal error of ddb-model (please report it): {problem}")]
    Internal {
        /// What went wrong.
        problem: InternalProblem,
    },

    /// The table in DynamoDB does not have the layout its [`Table`](crate::Table) declares.
    #[error("table `{table}` does not match its definition: {reason}")]
    TableMismatch {
        /// The physical table name.
        table: String,
        /// What differs.
        reason: String,
    },

    /// The table did not become active in time.
    #[error("table `{table}` did not become active within {seconds} s")]
    TableNotActive {
        /// The physical table name.
        table: String,
        /// How long we waited.
        seconds: u64,
    },

    /// DynamoDB answered with an error the library does not map to a more specific variant
    /// (a `ValidationException`, a throttling error after the SDK's retries, ...). Displayed
    /// with the service's error code and message.
    #[error("DynamoDB {operation} failed: {}", describe_service(source))]
    Sdk {
        /// The operation that failed.
        operation: Op,
        /// The SDK error.
        #[source]
        source: Box<aws_sdk_dynamodb::Error>,
    },

    /// DynamoDB throttled the request, after the SDK's own retries: the table's or an index's
    /// capacity, the account's quota, the on-demand maximum, or the throughput of one hot
    /// partition key. `reasons` are the service's throttling reasons (empty from a service or
    /// emulator that sends none); [`retry_advice`](Error::retry_advice) says what to do.
    #[error("DynamoDB throttled {operation}{}", describe_throttles(reasons))]
    Throttled {
        /// The operation that was throttled.
        operation: Op,
        /// Why, per table or index.
        reasons: Vec<Throttle>,
        /// The SDK error.
        #[source]
        source: Box<aws_sdk_dynamodb::Error>,
    },

    /// A write to a table with multi-Region strong consistency met a concurrent write to the
    /// same item in another Region (`ReplicatedWriteConflictException`). Nothing was written;
    /// sending it again may succeed.
    #[error(
        "DynamoDB {operation} conflicted with a write to the same item in another Region; sending it again may succeed"
    )]
    ReplicatedWriteConflict {
        /// The write that conflicted.
        operation: Op,
        /// The SDK error.
        #[source]
        source: Box<aws_sdk_dynamodb::Error>,
    },

    /// A page cursor is not one this query made: another query's, partition's or entity's
    /// cursor, an edited one, or not a cursor at all. Nothing was read.
    #[error("invalid cursor: {reason}")]
    InvalidCursor {
        /// What is wrong.
        reason: String,
    },

    /// An item collection read an item of an entity type it does not list (and it has no
    /// `#[collection(other)]` variant).
    #[error("`{collection}` has no variant for item {key} of type `{}`", found.as_deref().unwrap_or("<none>"))]
    UnknownEntityType {
        /// The collection type.
        collection: &'static str,
        /// The entity type stored on the item.
        found: Option<String>,
        /// The item's key, for display.
        key: String,
    },

    /// A DynamoDB Streams record that no stream writes: an event name other than `INSERT`,
    /// `MODIFY` and `REMOVE`, an unknown view type, or (from the streams API) an attribute
    /// value of a type this SDK version does not know.
    #[error("invalid stream record{}: {reason}", event_id.as_deref().map(|id| format!(" {id}")).unwrap_or_default())]
    InvalidStreamRecord {
        /// The record's `eventID`, if it has one.
        event_id: Option<String>,
        /// What is wrong.
        reason: String,
    },

    /// The embedded local engine could not be started.
    #[error("embedded DynamoDB: {0}")]
    Local(String),

    /// A batch write names one item twice (two puts, or a put and a delete, of one key).
    /// DynamoDB rejects such a batch, and which write should win is ambiguous; nothing was
    /// sent.
    #[error(
        "the batch writes `{entity}` {key} more than once; a batch may write each item only once"
    )]
    DuplicateBatchKey {
        /// The entity type of the second write.
        entity: &'static str,
        /// The key, for display.
        key: String,
    },

    /// A batch put of an entity with a version field: `BatchWriteItem` cannot check versions,
    /// so the put would bypass optimistic locking. Nothing was sent. Use the single-item
    /// writes, or `put_unchecked` for a deliberate overwrite.
    #[error(
        "`{entity}` {key} has a version field, which a batch put cannot check; use put/replace, or put_unchecked to overwrite"
    )]
    VersionedBatchPut {
        /// The entity type.
        entity: &'static str,
        /// The key, for display.
        key: String,
    },

    /// A batch get ended with keys the service still returned as unprocessed after the last
    /// attempt. The keys not listed were read.
    #[error(
        "BatchGetItem left {} keys unprocessed after {attempts} attempts ({processed} keys read)",
        unprocessed.len()
    )]
    BatchGetIncomplete {
        /// How many distinct keys were read (found or not).
        processed: usize,
        /// The requests sent for a chunk before giving up (`max_attempts`).
        attempts: u32,
        /// Exactly the keys that were not read, in the order they were given.
        unprocessed: Vec<BatchKey>,
    },

    /// A batch write did not complete: writes the service still returned as unprocessed after
    /// the last attempt, or a request that failed (`source`; the writes of chunks not sent yet
    /// were then not sent). The writes not listed were applied.
    #[error(
        "BatchWriteItem incomplete: {written} writes applied, {} not applied{}",
        unprocessed.len(),
        incomplete_reason(*attempts, source.is_some())
    )]
    BatchWriteIncomplete {
        /// How many writes were applied.
        written: usize,
        /// The most requests per chunk (`max_attempts`).
        attempts: u32,
        /// Exactly the writes not known to be applied, in the order they were added. A write
        /// of a request that failed may or may not have been applied; batch writes are plain
        /// puts and deletes, so sending them again is safe.
        unprocessed: Vec<UnprocessedWrite>,
        /// The error of the request that failed, if one did (after the SDK's own retries;
        /// check it for throttling).
        #[source]
        source: Option<Box<Error>>,
    },

    /// A transaction was rejected before anything was sent: too many actions, two actions on
    /// one item, too large, an invalid token.
    #[error("invalid transaction: {problem}")]
    InvalidTransaction {
        /// What is wrong.
        problem: TransactionProblem,
    },

    /// A tree operation was refused: a missing parent, a move into the node's own subtree, a
    /// path too deep for the tree, another large operation in progress, ... Nothing was
    /// written for it (a refused large operation removes its own intent record again).
    #[error("tree of `{entity}`: {problem}")]
    Tree {
        /// The node entity type.
        entity: &'static str,
        /// What is wrong.
        problem: TreeProblem,
    },

    /// A [`TreePath`] could not be made or parsed (an empty segment, too
    /// deep, a malformed escape); `?` converts a [`PathProblem`].
    #[error("invalid tree path: {0}")]
    InvalidPath(#[from] PathProblem),

    /// One action of a transaction failed the checks made before sending (an invalid key, an
    /// item too large, an expression mistake, ...). Nothing was sent.
    #[error("invalid transaction action {action}: {source}")]
    InvalidAction {
        /// The action's index in the transaction (from 0).
        action: usize,
        /// What is wrong with it.
        #[source]
        source: Box<Error>,
    },

    /// DynamoDB canceled a transaction; nothing was written. There is one reason per action,
    /// in order: the action that failed says why (a failed guard or condition is the error
    /// the single-item write would return), the others are [`CancelReason::None`].
    ///
    /// `is_condition_failed`, `is_already_exists`, `is_not_found`, `is_version_conflict`,
    /// `is_throttled` and `is_transaction_conflict` are true when any action failed that way;
    /// [`failed_action`](Error::failed_action) is the first action that failed.
    #[error("{}", transaction::describe_canceled(reasons))]
    TransactionCanceled {
        /// One reason per action, in the order the actions were added.
        reasons: Vec<ActionReason>,
        /// The SDK error.
        #[source]
        source: Box<aws_sdk_dynamodb::Error>,
    },

    /// A transaction with the same idempotency token is still being applied. Send the same
    /// transaction with the same token again to learn its outcome.
    #[error("a transaction with token {token:?} is still in progress")]
    TransactionInProgress {
        /// The transaction's idempotency token.
        token: String,
        /// The SDK error.
        #[source]
        source: Box<aws_sdk_dynamodb::Error>,
    },

    /// The idempotency token was used, within the last 10 minutes, by a transaction with
    /// other actions. Nothing was written.
    #[error("idempotency token {token:?} was already used by a different transaction")]
    IdempotentParameterMismatch {
        /// The token.
        token: String,
        /// The SDK error.
        #[source]
        source: Box<aws_sdk_dynamodb::Error>,
    },

    /// The request got no usable answer: the connection could not be made or broke, no
    /// response came in time, the response could not be read, or the service answered with an
    /// HTTP 5xx status. Returned after the SDK's own attempts (and, for writes that carry an
    /// idempotency token, the library's further retries) ran out.
    ///
    /// [`maybe_applied`](Error::maybe_applied) tells whether a write may have been applied
    /// all the same; [`is_transient`](Error::is_transient) whether sending again may succeed.
    #[error(
        "DynamoDB {operation} failed after {attempts} attempt{}: {kind}: {}{}",
        if *attempts == 1 { "" } else { "s" },
        describe_chain(source.as_ref()),
        applied_note(*operation, *maybe_applied)
    )]
    Transport {
        /// The operation that failed.
        operation: Op,
        /// How the last attempt failed.
        kind: TransportKind,
        /// True when the operation is a write and one of its attempts may have reached the
        /// service (false when every attempt provably never left, e.g. the connection was
        /// refused, and for reads).
        maybe_applied: bool,
        /// The HTTP attempts made, over all retries.
        attempts: u32,
        /// The SDK's error of the last attempt (a `ConnectorError` and its causes, or the
        /// service's 5xx answer).
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    // Graph edges (`crate::edge`).
    /// A graph read (a neighbourhood, a shortest path, recommendations) needed more requests
    /// than its budget; it stopped before sending the request over budget. Graph reads write
    /// nothing.
    #[error("the {operation} needed more than its budget of {budget} requests")]
    BudgetExhausted {
        /// The graph read that stopped.
        operation: &'static str,
        /// The budget, in requests.
        budget: u64,
    },

    /// A vector written to a vector index, or searched for, is not one the index takes (see
    /// [`VectorProblem`]): the wrong length, an element that is not a finite `f32`, a number
    /// of results out of bounds. Nothing was sent.
    #[error("invalid vector for `{entity}`, index `{index}`: {problem}")]
    InvalidVector {
        /// The entity type.
        entity: &'static str,
        /// The vector index.
        index: &'static str,
        /// What is wrong.
        problem: VectorProblem,
    },

    /// The endpoint does not offer vector search: it answered `SearchVectors` with
    /// `UnknownOperationException`, or created a table without the vector indexes it was
    /// asked for. DynamoDB Local (3.x) is such an endpoint; the embedded engine and DynamoDB
    /// itself are not.
    #[error(
        "the endpoint does not support vector search ({operation}: {}); use DynamoDB or the embedded engine",
        describe_unsupported(source.as_deref())
    )]
    VectorSearchUnsupported {
        /// The operation that showed it.
        operation: Op,
        /// The service's answer, when it was an error.
        #[source]
        source: Option<Box<aws_sdk_dynamodb::Error>>,
    },

    /// The vector index is still being built (added to a live table, it refuses searches
    /// while it backfills, and for a while after it reports `ACTIVE`): search again later.
    #[error("vector index `{index}` is still being built; search again later")]
    VectorIndexBackfilling {
        /// The vector index.
        index: &'static str,
        /// The SDK error.
        #[source]
        source: Box<aws_sdk_dynamodb::Error>,
    },

    /// A value or expression of the request is one DynamoDB would reject (a number it cannot
    /// store, an empty set, nesting too deep, a value or update too large for an item, an
    /// expression too long, overlapping update paths, ...). Nothing was sent.
    #[error("{}", describe_invalid_request(path, problem))]
    InvalidRequest {
        /// The attribute path the problem is at (`profile.tags[2]`), empty for a problem of
        /// a whole expression.
        path: String,
        /// What DynamoDB would reject, and the limit.
        problem: RequestProblem,
    },
}

fn describe_unsupported(err: Option<&aws_sdk_dynamodb::Error>) -> String {
    match err {
        Some(err) => describe_service(err),
        None => "the table was created without its vector indexes".to_owned(),
    }
}

fn describe_invalid_request(path: &str, problem: &RequestProblem) -> String {
    if path.is_empty() {
        format!("invalid request: {problem}")
    } else {
        format!("invalid value at `{path}`: {problem}")
    }
}

/// A service error as code and message (the SDK displays errors it has no type for as
/// "unhandled error").
fn describe_throttles(reasons: &[Throttle]) -> String {
    if reasons.is_empty() {
        return String::new();
    }
    let list: Vec<String> = reasons.iter().map(Throttle::to_string).collect();
    format!(": {}", list.join(", "))
}

fn describe_service(err: &aws_sdk_dynamodb::Error) -> String {
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
fn describe_chain(err: &(dyn std::error::Error + 'static)) -> String {
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

fn applied_note(operation: Op, maybe_applied: bool) -> &'static str {
    match (operation.is_write(), maybe_applied) {
        (false, _) => "",
        (true, true) => "; the write may have been applied",
        (true, false) => "; the write was not applied",
    }
}

fn incomplete_reason(attempts: u32, failed: bool) -> String {
    if failed {
        " because a request failed".to_owned()
    } else {
        format!(" (still unprocessed after {attempts} attempts)")
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

fn display_version(v: Option<u64>) -> String {
    match v {
        Some(v) => v.to_string(),
        None => "no item".to_owned(),
    }
}

impl Error {
    /// True when a unique constraint refused the write ([`Error::Unique`]), alone or as the
    /// reason of an action of a canceled transaction.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String, #[unique] email: String }
    /// # #[cfg(feature = "local")]
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Error> {
    /// # let db = ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?;
    /// User { id: "ann".into(), email: "a@example.com".into() }.create(&db).await?;
    /// let err = User { id: "bob".into(), email: "a@example.com".into() }
    ///     .create(&db)
    ///     .await
    ///     .unwrap_err();
    /// assert!(err.is_unique_violation());
    /// assert!(matches!(err, Error::Unique { field: "email", .. }));
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "local"))]
    /// # fn main() {}
    /// ```
    pub fn is_unique_violation(&self) -> bool {
        let unique = |e: &Error| matches!(e, Error::Unique { .. });
        unique(self) || self.condition_errors().any(unique)
    }

    /// True when a condition of a write did not hold: [`Error::ConditionFailed`],
    /// [`Error::AlreadyExists`], [`Error::NotFound`] or [`Error::VersionConflict`] (and a
    /// service `ConditionalCheckFailedException` that was not mapped to one of them), or a
    /// transaction canceled because a condition of one of its actions did not hold.
    ///
    /// To retry when the caller's own condition failed, use
    /// [`is_own_condition_failed`](Error::is_own_condition_failed): this one is also true
    /// once the item is gone.
    pub fn is_condition_failed(&self) -> bool {
        match self {
            Error::ConditionFailed { .. }
            | Error::AlreadyExists { .. }
            | Error::NotFound { .. }
            | Error::VersionConflict { .. } => true,
            Error::Sdk { source, .. } => {
                matches!(**source, aws_sdk_dynamodb::Error::ConditionalCheckFailedException(_))
            }
            _ => self.condition_errors().any(Error::is_condition_failed),
        }
    }

    /// True only when the caller's own condition did not hold: the
    /// [`condition`](crate::ops::Update::condition) of a write, or of a transaction action
    /// ([`Error::ConditionFailed`], also inside [`Error::TransactionCanceled`]). The checks
    /// the library adds never make it true: a missing item is [`Error::NotFound`] (even when
    /// the caller's condition would have failed too), an existing one
    /// [`Error::AlreadyExists`], another version [`Error::VersionConflict`], another entity
    /// type [`Error::WrongEntityType`]. So a loop that retries while its own condition fails
    /// ends when the item is deleted:
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize, Debug)]
    /// # #[entity(pk = "JOB#<id>", sk = "JOB")]
    /// # struct Job { id: String, state: String }
    /// /// Claims a job once it is ready; `Ok(false)` when the job is gone.
    /// async fn claim(db: &Db, id: &str) -> Result<bool, Error> {
    ///     loop {
    ///         let claimed = Job::update(db, id)
    ///             .set(Job::STATE, "claimed")
    ///             .condition(Job::STATE.eq("ready"))
    ///             .no_return()
    ///             .await;
    ///         match claimed {
    ///             Ok(()) => return Ok(true),
    ///             Err(e) if e.is_own_condition_failed() => {
    ///                 tokio::time::sleep(std::time::Duration::from_millis(10)).await
    ///             }
    ///             Err(e) if e.is_not_found() => return Ok(false),
    ///             Err(e) => return Err(e),
    ///         }
    ///     }
    /// }
    /// # #[cfg(feature = "local")]
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Error> {
    /// # let db = ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?;
    /// Job { id: "j".into(), state: "waiting".into() }.create(&db).await?;
    /// let err = Job::update(&db, "j").set(Job::STATE, "claimed")
    ///     .condition(Job::STATE.eq("ready")).await.unwrap_err();
    /// assert!(err.is_own_condition_failed() && err.is_condition_failed());
    /// Job::delete(&db, "j").await?;
    /// assert!(!claim(&db, "j").await?); // ends: the job is gone
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "local"))]
    /// # fn main() {}
    /// ```
    pub fn is_own_condition_failed(&self) -> bool {
        let own = |e: &Error| matches!(e, Error::ConditionFailed { .. });
        own(self) || self.condition_errors().any(own)
    }

    /// True for a tree operation refused because another large operation (a move, rename or
    /// delete of a subtree) is in progress ([`TreeProblem::Busy`]):
    /// wait and try again, or finish an interrupted one with `resume`.
    ///
    /// A shorthand for matching on [`tree_problem`](Error::tree_problem).
    pub fn is_tree_busy(&self) -> bool {
        matches!(self.tree_problem(), Some(TreeProblem::Busy { .. }))
    }

    /// True for a tree insert or move whose parent (or destination parent) does not exist
    /// (`TreeProblem::ParentMissing`, `TreeProblem::NoParent`).
    ///
    /// A shorthand for matching on [`tree_problem`](Error::tree_problem).
    pub fn is_parent_missing(&self) -> bool {
        use TreeProblem as P;
        matches!(self.tree_problem(), Some(P::ParentMissing { .. } | P::NoParent { .. }))
    }

    /// True for a tree move or delete of a node that does not exist
    /// (`TreeProblem::NodeMissing`, `TreeProblem::NoNode`).
    ///
    /// A shorthand for matching on [`tree_problem`](Error::tree_problem).
    pub fn is_node_missing(&self) -> bool {
        use TreeProblem as P;
        matches!(self.tree_problem(), Some(P::NodeMissing { .. } | P::NoNode { .. }))
    }

    /// True for a tree move whose destination exists already
    /// (`TreeProblem::DestinationExists`).
    ///
    /// A shorthand for matching on [`tree_problem`](Error::tree_problem).
    pub fn is_destination_exists(&self) -> bool {
        matches!(self.tree_problem(), Some(TreeProblem::DestinationExists { .. }))
    }

    /// True for a tree move into the node's own subtree (`TreeProblem::IntoOwnSubtree`,
    /// `TreeProblem::Cycle`).
    ///
    /// A shorthand for matching on [`tree_problem`](Error::tree_problem).
    pub fn is_tree_cycle(&self) -> bool {
        use TreeProblem as P;
        matches!(self.tree_problem(), Some(P::IntoOwnSubtree { .. } | P::Cycle { .. }))
    }

    /// True for a tree operation that gave up because the subtree kept changing under it
    /// (`TreeProblem::Changed`, `TreeProblem::NodeChanged`, and a move's
    /// `TreeProblem::Contended`, see [`is_tree_contended`](Error::is_tree_contended)); nothing
    /// was written, and trying again later may succeed.
    ///
    /// A shorthand for matching on [`tree_problem`](Error::tree_problem).
    pub fn is_tree_changed(&self) -> bool {
        use TreeProblem as P;
        matches!(
            self.tree_problem(),
            Some(P::Changed { .. } | P::NodeChanged { .. } | P::Contended { .. })
        )
    }

    /// True for a move of a small subtree that gave up because concurrent writes kept
    /// canceling its transaction (`TreeProblem::Contended`): it was tried a bounded number
    /// of times, with exponential backoff and jitter between tries, and wrote nothing.
    ///
    /// A shorthand for matching on [`tree_problem`](Error::tree_problem).
    pub fn is_tree_contended(&self) -> bool {
        matches!(self.tree_problem(), Some(TreeProblem::Contended { .. }))
    }

    /// True for a node that would be deeper than the tree allows (`TreeProblem::TooDeep`, or
    /// a path over the tree's `max_depth`).
    ///
    /// A shorthand for matching on [`tree_problem`](Error::tree_problem).
    pub fn is_tree_too_deep(&self) -> bool {
        use TreeProblem as P;
        match self.tree_problem() {
            Some(P::TooDeep { .. }) => true,
            Some(P::Path { problem, .. }) => matches!(problem, PathProblem::TooDeep { .. }),
            _ => false,
        }
    }

    /// What is wrong with a refused tree operation: the problem of an [`Error::Tree`],
    /// `None` for every other error. The one way to ask about tree problems; the `is_tree_*`,
    /// `is_parent_missing`, `is_node_missing` and `is_destination_exists` predicates are
    /// shorthands for matching on it.
    ///
    /// ```
    /// use ddb_model::{Error, tree::TreeProblem};
    ///
    /// fn advice(err: &Error) -> &'static str {
    ///     match err.tree_problem() {
    ///         Some(TreeProblem::Busy { .. }) => "wait, or resume the interrupted operation",
    ///         Some(TreeProblem::ParentMissing { .. } | TreeProblem::NoParent { .. }) => {
    ///             "create the parent first"
    ///         }
    ///         Some(_) => "see the problem",
    ///         None => "not a tree problem",
    ///     }
    /// }
    /// let err = Error::Tree { entity: "Dir", problem: TreeProblem::NoParent { parent: "a".into() } };
    /// assert_eq!(advice(&err), "create the parent first");
    /// assert!(err.is_parent_missing());
    /// ```
    pub fn tree_problem(&self) -> Option<&TreeProblem> {
        match self {
            Error::Tree { problem, .. } => Some(problem),
            _ => None,
        }
    }

    /// True for [`Error::AlreadyExists`], for a transaction canceled because an action
    /// found an item where it required none, and for a tree bulk load that names a node
    /// twice or a node the tree has (`TreeProblem::Duplicate`).
    pub fn is_already_exists(&self) -> bool {
        matches!(self, Error::AlreadyExists { .. })
            || matches!(self.tree_problem(), Some(TreeProblem::Duplicate { .. }))
            || self.condition_errors().any(Error::is_already_exists)
    }

    /// True for [`Error::NotFound`], and for a transaction canceled because an action found
    /// no item where it required one.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. }) || self.condition_errors().any(Error::is_not_found)
    }

    /// True for [`Error::VersionConflict`], and for a transaction canceled because of a
    /// version conflict on one of its actions.
    pub fn is_version_conflict(&self) -> bool {
        matches!(self, Error::VersionConflict { .. })
            || self.condition_errors().any(Error::is_version_conflict)
    }

    /// True for the errors of schema versions ([`Error::SchemaTooNew`],
    /// [`Error::SchemaUpgrade`], [`Error::SchemaOutdated`]), also when a transaction was
    /// canceled because an action met an outdated item.
    pub fn is_schema_error(&self) -> bool {
        matches!(
            self,
            Error::SchemaTooNew { .. } | Error::SchemaUpgrade { .. } | Error::SchemaOutdated { .. }
        ) || self.condition_errors().any(Error::is_schema_error)
    }

    /// True for [`Error::InvalidStreamRecord`]: a stream record that no DynamoDB stream
    /// writes (see [`stream`](crate::stream)).
    pub fn is_invalid_stream_record(&self) -> bool {
        matches!(self, Error::InvalidStreamRecord { .. })
    }

    /// True when the input was rejected before anything was sent (key, size, serialisation,
    /// expression errors, transaction limits; also [`Error::Internal`], where nothing was
    /// sent either).
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            Error::InvalidKey { .. }
                | Error::ItemTooLarge { .. }
                | Error::AttributeCollision { .. }
                | Error::Serialize { .. }
                | Error::KeyParse { .. }
                | Error::Internal { .. }
                | Error::InvalidCursor { .. }
                | Error::DuplicateBatchKey { .. }
                | Error::VersionedBatchPut { .. }
                | Error::InvalidTransaction { .. }
                | Error::InvalidAction { .. }
                | Error::InvalidPath(_)
                | Error::InvalidRequest { .. }
                | Error::InvalidVector { .. }
        ) || matches!(self, Error::Tree { problem, .. } if problem.is_invalid_input())
    }

    /// True for [`Error::VectorIndexBackfilling`]: the vector index refuses searches until it
    /// is built.
    pub fn is_vector_index_backfilling(&self) -> bool {
        matches!(self, Error::VectorIndexBackfilling { .. })
    }

    /// True for [`Error::VectorSearchUnsupported`]: the endpoint has no vector search
    /// (DynamoDB Local).
    pub fn is_vector_search_unsupported(&self) -> bool {
        matches!(self, Error::VectorSearchUnsupported { .. })
    }

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
            Error::TransactionCanceled { reasons, .. } => {
                reasons.iter().any(|r| matches!(r.reason, CancelReason::Throttled { .. }))
            }
            _ => false,
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

    /// True when a write met a concurrent write to the same item in another Region of a
    /// multi-Region strongly consistent table ([`Error::ReplicatedWriteConflict`]).
    pub fn is_replicated_write_conflict(&self) -> bool {
        matches!(self, Error::ReplicatedWriteConflict { .. })
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
            Error::TransactionCanceled { reasons, .. } => {
                reasons.iter().any(|r| matches!(r.reason, CancelReason::TransactionConflict { .. }))
            }
            _ => false,
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
    /// [`CancelReason::None`]).
    ///
    /// ```
    /// # use ddb_model::Error;
    /// fn report(err: &Error) {
    ///     match err.failed_action() {
    ///         Some(failed) => eprintln!("action {} failed: {}", failed.action, failed.reason),
    ///         None => eprintln!("{err}"),
    ///     }
    /// }
    /// ```
    pub fn failed_action(&self) -> Option<&ActionReason> {
        self.cancellation_reasons().iter().find(|r| r.reason.is_failure())
    }

    /// The errors of the failed guards and conditions of a canceled transaction.
    fn condition_errors(&self) -> impl Iterator<Item = &Error> {
        self.cancellation_reasons().iter().filter_map(|r| r.reason.condition_error())
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
        let reasons = match &err {
            E::ProvisionedThroughputExceededException(e) => Some(e.throttling_reasons()),
            E::RequestLimitExceeded(e) => Some(e.throttling_reasons()),
            E::ThrottlingException(e) => Some(e.throttling_reasons()),
            E::ReplicatedWriteConflictException(_) => {
                return Error::ReplicatedWriteConflict { operation, source: Box::new(err) };
            }
            _ => None,
        };
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

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::error::ErrorMetadata;
    use aws_sdk_dynamodb::operation::put_item::PutItemError;

    use super::*;

    fn throttled(reasons: &[(&str, &str)]) -> Error {
        use aws_sdk_dynamodb::types::ThrottlingReason;
        use aws_sdk_dynamodb::types::error::ThrottlingException;
        let mut e = ThrottlingException::builder().message("slow down");
        for (reason, resource) in reasons {
            e = e.throttling_reasons(
                ThrottlingReason::builder().reason(*reason).resource(*resource).build(),
            );
        }
        Error::service(Op::PutItem, aws_sdk_dynamodb::Error::ThrottlingException(e.build()))
    }

    #[test]
    fn throttling_errors_carry_their_reasons_and_advice() {
        let arn = "arn:aws:dynamodb:us-east-1:1:table/app";
        let hot = throttled(&[("TableWriteKeyRangeThroughputExceeded", arn)]);
        assert!(hot.is_throttled() && hot.is_hot_key() && hot.is_transient());
        assert!(!hot.maybe_applied());
        let reasons = hot.throttle_reasons();
        assert_eq!(reasons.len(), 1);
        assert_eq!(reasons[0].limit, ThrottleLimit::KeyRange);
        assert_eq!(reasons[0].access, Some(ThrottledAccess::Write));
        assert!(!reasons[0].on_index);
        assert_eq!(reasons[0].resource.as_deref(), Some(arn));
        assert_eq!(
            hot.to_string(),
            format!("DynamoDB throttled PutItem: TableWriteKeyRangeThroughputExceeded on {arn}")
        );
        assert!(
            matches!(hot.retry_advice(), RetryAdvice::RetryAfter { why, .. } if why.contains("hot partition key"))
        );

        // The worst of several reasons decides the advice; an index is told apart.
        let both = throttled(&[
            ("IndexReadProvisionedThroughputExceeded", "arn:x/index/gsi1"),
            ("TableReadAccountLimitExceeded", arn),
        ]);
        assert!(!both.is_hot_key());
        assert!(both.throttle_reasons()[0].on_index);
        assert!(
            matches!(both.retry_advice(), RetryAdvice::RetryAfter { why, .. } if why.contains("quota"))
        );

        // No reasons (an emulator, an older service): still typed and throttled.
        let bare = throttled(&[]);
        assert!(matches!(&bare, Error::Throttled { reasons, .. } if reasons.is_empty()));
        assert_eq!(bare.to_string(), "DynamoDB throttled PutItem");
        assert!(bare.retry_advice().may_retry());
    }

    #[test]
    fn replicated_write_conflicts_are_typed_and_transient() {
        use aws_sdk_dynamodb::types::error::ReplicatedWriteConflictException;
        let e = Error::service(
            Op::UpdateItem,
            aws_sdk_dynamodb::Error::ReplicatedWriteConflictException(
                ReplicatedWriteConflictException::builder().message("conflict").build(),
            ),
        );
        assert!(e.is_replicated_write_conflict() && e.is_transient() && !e.is_throttled());
        assert!(matches!(e.retry_advice(), RetryAdvice::RetryAfter { .. }));
        assert!(e.to_string().contains("another Region"));
    }

    #[test]
    fn errors_that_cannot_succeed_again_advise_against_retrying() {
        let e = Error::InvalidRequest { path: String::new(), problem: RequestProblem::EmptyUpdate };
        assert_eq!(e.retry_advice(), RetryAdvice::DoNotRetry);
        assert!(!e.retry_advice().may_retry());
        let e = Error::Transport {
            operation: Op::PutItem,
            kind: TransportKind::Timeout,
            maybe_applied: true,
            attempts: 3,
            source: "timed out".into(),
        };
        assert!(matches!(e.retry_advice(), RetryAdvice::CheckThenRetry { .. }));
        let e = Error::Transport {
            operation: Op::GetItem,
            kind: TransportKind::Timeout,
            maybe_applied: false,
            attempts: 3,
            source: "timed out".into(),
        };
        assert!(matches!(e.retry_advice(), RetryAdvice::RetryAfter { .. }));
    }

    proptest::proptest! {
        /// Any reason text parses without panicking, keeps the text, and reads back the
        /// parts it is made of.
        #[test]
        fn throttle_reasons_parse_any_text(
            resource in "(Table|Index|)",
            access in "(Read|Write|)",
            limit in "(ProvisionedThroughputExceeded|AccountLimitExceeded|KeyRangeThroughputExceeded|MaxOnDemandThroughputExceeded|\\PC*)",
            noise in "\\PC*",
        ) {
            let reason = format!("{resource}{access}{limit}");
            let t = Throttle::parse(&reason, None);
            proptest::prop_assert_eq!(&t.reason, &reason);
            let known = !resource.is_empty() && !access.is_empty() && !matches!(t.limit, ThrottleLimit::Other(_));
            if known {
                proptest::prop_assert_eq!(t.on_index, resource == "Index");
                proptest::prop_assert_eq!(t.access == Some(ThrottledAccess::Read), access == "Read");
            }
            let t = Throttle::parse(&noise, Some(noise.clone()));
            proptest::prop_assert_eq!(t.to_string(), format!("{noise} on {noise}"));
        }
    }

    fn unhandled(code: Option<&str>, message: Option<&str>) -> aws_sdk_dynamodb::Error {
        let mut meta = ErrorMetadata::builder();
        if let Some(code) = code {
            meta = meta.code(code);
        }
        if let Some(message) = message {
            meta = meta.message(message);
        }
        aws_sdk_dynamodb::Error::from(PutItemError::generic(meta.build()))
    }

    #[test]
    fn service_errors_without_a_type_display_their_code_and_message() {
        let raw = unhandled(Some("ValidationException"), Some("Item size has exceeded"));
        assert!(raw.to_string().contains("unhandled error"), "the SDK's own display: {raw}");
        let err = Error::service(Op::PutItem, raw);
        assert_eq!(
            err.to_string(),
            "DynamoDB PutItem failed: ValidationException: Item size has exceeded"
        );
        let err = Error::service(Op::GetItem, unhandled(None, None));
        assert_eq!(err.to_string(), "DynamoDB GetItem failed: an error response without a code");
    }

    #[test]
    fn transport_errors_say_how_they_failed_and_whether_a_write_may_have_applied() {
        let err = |operation, kind, maybe_applied, attempts| Error::Transport {
            operation,
            kind,
            maybe_applied,
            attempts,
            source: Box::new(ServerAnswer {
                status: 503,
                code: Some("ServiceUnavailable".into()),
                message: None,
            }),
        };
        let e = err(Op::UpdateItem, TransportKind::Server { status: 503 }, true, 3);
        assert_eq!(
            e.to_string(),
            "DynamoDB UpdateItem failed after 3 attempts: server error (HTTP 503): \
             HTTP 503 ServiceUnavailable; the write may have been applied"
        );
        assert!(e.is_transient() && e.maybe_applied());
        let e = err(Op::GetItem, TransportKind::Timeout, false, 1);
        assert_eq!(
            e.to_string(),
            "DynamoDB GetItem failed after 1 attempt: timed out: HTTP 503 ServiceUnavailable"
        );
        assert!(e.is_transient() && !e.maybe_applied());
        let e = err(Op::PutItem, TransportKind::Construction, false, 1);
        assert!(!e.is_transient() && e.to_string().contains("the write was not applied"));
        for kind in [
            TransportKind::Connect,
            TransportKind::Dispatch,
            TransportKind::Timeout,
            TransportKind::Response,
            TransportKind::Server { status: 500 },
            TransportKind::Construction,
        ] {
            assert!(!err(Op::PutItem, kind, true, 2).to_string().contains("unhandled"));
        }
    }
}
