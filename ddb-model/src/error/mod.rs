//! The one error type of the crate, [`Error`] (also at the crate root), and every problem type
//! its variants carry: `ddb_model::error::{KeyProblem, RequestProblem, TransactionProblem, ..}`.
//! The prelude brings the problem types in too, for matching on.
//!
//! The problem types, and the values they name (a [`TreePath`], a [`TreeOp`], a [`BatchKey`]),
//! are defined here, beside the variants that carry them; some are also re-exported beside
//! the operations that raise them (`ddb_model::tree::TreeProblem`, `ddb_model::ops::..`).

mod aggregate;
mod answers;
mod batch;
mod crypto;
mod hook;
mod internal;
mod key;
mod local;
mod path;
mod reason;
mod rekey;
mod request;
mod service;
mod tenant;
mod throttle;
mod transaction;
mod transport;
mod tree;
mod vector;

use std::fmt;

pub use aggregate::AggregateProblem;
pub use batch::{BatchAction, BatchKey, UnprocessedWrite};
pub use crypto::EncryptionProblem;
pub use hook::HookProblem;
pub use internal::InternalProblem;
pub use key::KeyProblem;
pub use local::LocalProblem;
pub use path::{MAX_PATH_DEPTH, PATH_SEPARATOR, PathProblem, TreePath};
pub use reason::{
    CheckpointMismatch, CorruptReason, CursorReason, KeyParseReason, KeyPartError,
    StreamRecordReason, TableMismatchReason, UpsertReason, VectorLayout,
};
pub use rekey::{RekeyPhase, RekeyProblem};
pub use request::{RequestProblem, TagProblem};
pub use service::Capability;
pub(crate) use service::is_unknown_operation;
pub use tenant::TenantProblem;
pub use throttle::{RetryAdvice, Throttle, ThrottleLimit, ThrottledAccess};
pub use transaction::{ActionReason, CancelReason, TransactionProblem};
pub use transport::TransportKind;
pub(crate) use transport::{ServerAnswer, is_connect_failure};
pub use tree::{IntentReason, NodeReason, OpKind, OpPhase, TreeOp, TreeProblem};
pub use vector::VectorProblem;

use service::{applied_note, describe_chain, describe_service, describe_throttles};
pub(crate) use service::{display_key, key_display};

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
    #[error(
        "version conflict for `{entity}` {key}: expected version {expected}, found {}",
        actual.map_or_else(|| "no item".to_owned(), |v| v.to_string())
    )]
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
    #[error(
        "`{entity}`.{field} is taken: another item{} owns the value in unique scope `{scope}`",
        owner.as_deref().map(|o| format!(" {o}")).unwrap_or_default()
    )]
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

    /// The item under the key belongs to another entity type (or has no entity type, or
    /// lacks one of the entity's constant attributes).
    #[error(
        "item {key} is a `{}`, not a `{expected}`",
        found.as_deref().unwrap_or("<item without the entity's type or constants>")
    )]
    WrongEntityType {
        /// The entity type that was asked for.
        expected: &'static str,
        /// The entity type stored on the item; `None` when it names none, or names the
        /// expected one but lacks one of its constant attributes (or holds another value).
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
        reason: CorruptReason,
    },

    /// An entity's hook refused a value before writing it (its validation: nothing was sent)
    /// or changed what the library owns after a read (the key or the version); see
    /// [`HookProblem`].
    #[error("`{entity}` {key}: {problem}")]
    Hook {
        /// The entity type.
        entity: &'static str,
        /// The key of the value, for display.
        key: String,
        /// What the hook did.
        #[source]
        problem: HookProblem,
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
        /// What is wrong (boxed: `match *reason`).
        reason: Box<KeyParseReason>,
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
        reason: TableMismatchReason,
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
        reason: CursorReason,
    },

    /// An item collection read an item of an entity type it does not list (and it has no
    /// `#[collection(other)]` variant).
    #[error(
        "`{collection}` has no variant for item {key} of type `{}`",
        found.as_deref().unwrap_or("<none>")
    )]
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
    #[error(
        "invalid stream record{}: {reason}",
        event_id.as_deref().map(|id| format!(" {id}")).unwrap_or_default()
    )]
    InvalidStreamRecord {
        /// The record's `eventID`, if it has one.
        event_id: Option<String>,
        /// What is wrong.
        reason: StreamRecordReason,
    },

    /// A stream-maintained aggregate or field copy
    /// ([`stream::aggregate`](crate::stream::aggregate)) refused its declaration, a record or
    /// one of its own items ([`AggregateProblem`]; `aggregate` is the declaration's name). A
    /// refused record wrote nothing.
    #[error("aggregate `{aggregate}`: {problem}")]
    Aggregate {
        /// The aggregate's name.
        aggregate: &'static str,
        /// What is wrong.
        problem: AggregateProblem,
    },

    /// The embedded local engine (feature `local`) could not be started: at which step, and
    /// the system's message.
    #[error("embedded DynamoDB: {0}")]
    Local(LocalProblem),

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
        match source {
            Some(_) => " because a request failed".to_owned(),
            None => format!(" (still unprocessed after {attempts} attempts)"),
        }
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

    /// A re-key ([`Db::rekey`](crate::Db::rekey)) was refused or stopped: the entity declares
    /// no old layout, another runner took over, an item kept changing.
    #[error("re-key of `{entity}`: {problem}")]
    Rekey {
        /// The entity re-keyed.
        entity: &'static str,
        /// What is wrong.
        problem: RekeyProblem,
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

    /// A handle scoped to a tenant ([`Db::for_tenant`](crate::Db::for_tenant)) was asked for
    /// a request outside the tenant's partitions: a key or cursor of another tenant, an item
    /// of an entity that is not tenant-scoped, or a request that reads every partition (a
    /// scan). Nothing was sent.
    #[error("outside tenant `{tenant}`: {problem}")]
    OutsideTenant {
        /// The tenant the handle is scoped to.
        tenant: String,
        /// What would have left its partitions.
        problem: TenantProblem,
    },

    /// The endpoint does not offer a capability: it answered one of its operations with
    /// `UnknownOperationException` (or, for vector search, created a table without the vector
    /// indexes it was asked for). Which endpoints lack what: DynamoDB Local (3.x) has no vector
    /// search, no point-in-time recovery, no tags and no resource policies; the embedded
    /// engine has no point-in-time recovery and no resource policies; DynamoDB has them all.
    #[error(
        "the endpoint does not support {capability} ({operation}: {}); use DynamoDB{}",
        source.as_deref().map_or_else(
            || "the table was created without its vector indexes".to_owned(),
            describe_service
        ),
        if *capability == Capability::VectorSearch { " or the embedded engine" } else { "" }
    )]
    Unsupported {
        /// What the endpoint lacks.
        capability: Capability,
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

    /// A condition an [`Interceptor`](crate::intercept::Interceptor) added to the write
    /// failed (checked alone after the write failed its condition): the library's own guard
    /// held. Nothing was written.
    #[error("the condition the interceptor added to {op:?}{} failed", action.map(|a| format!(" (action {a})")).unwrap_or_default())]
    AddedConditionFailed {
        /// The write's operation.
        op: Op,
        /// The action of a transaction whose added condition failed.
        action: Option<usize>,
    },

    /// A value or expression of the request is one DynamoDB would reject (a number it cannot
    /// store, an empty set, nesting too deep, a value or update too large for an item, an
    /// expression too long, overlapping update paths, ...). Nothing was sent.
    #[error(
        "{}{problem}",
        match path.as_str() {
            "" => "invalid request: ".to_owned(),
            path => format!("invalid value at `{path}`: "),
        }
    )]
    InvalidRequest {
        /// The attribute path the problem is at (`profile.tags[2]`), empty for a problem of
        /// a whole expression.
        path: String,
        /// What DynamoDB would reject, and the limit.
        problem: RequestProblem,
    },

    /// An entity with encrypted or signed fields (`#[encrypt]`, `#[sign_only]`) could not be
    /// written or read (see [`EncryptionProblem`]). Nothing was written; nothing unverified
    /// was returned.
    #[error("encrypted `{entity}`{}: {problem}", key.as_deref().map(|k| format!(" item {k}")).unwrap_or_default())]
    Encryption {
        /// The entity type.
        entity: &'static str,
        /// The item's key, for display, when an item was read.
        key: Option<String>,
        /// What went wrong.
        problem: EncryptionProblem,
        /// The SDK's error, when it refused.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync + 'static>>,
    },
}

#[cfg(test)]
mod tests;
