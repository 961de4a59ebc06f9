//! The one error type of the crate.

use std::fmt;

use crate::item::Item;
use crate::stats::Op;

/// What is wrong with a key attribute value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeyProblem {
    /// The encoded key is the empty string, which DynamoDB rejects.
    Empty,
    /// The encoded key is longer than DynamoDB allows.
    TooLong {
        /// Its length in UTF-8 bytes.
        len: usize,
        /// The limit in UTF-8 bytes.
        max: usize,
    },
}

impl fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyProblem::Empty => f.write_str("the key is empty"),
            KeyProblem::TooLong { len, max } => {
                write!(f, "the key is {len} bytes long; the limit is {max} bytes")
            }
        }
    }
}

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

    /// An expression could not be built (an empty update, a value that does not serialise, ...).
    #[error("invalid expression: {0}")]
    InvalidExpression(String),

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

    /// DynamoDB (or the SDK) returned an error.
    #[error("DynamoDB {operation} failed: {source}")]
    Sdk {
        /// The operation that failed.
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
        unprocessed: Vec<crate::ops::BatchKey>,
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
        unprocessed: Vec<crate::ops::UnprocessedWrite>,
        /// The error of the request that failed, if one did (after the SDK's own retries;
        /// check it for throttling).
        #[source]
        source: Option<Box<Error>>,
    },
}

fn incomplete_reason(attempts: u32, failed: bool) -> String {
    if failed {
        " because a request failed".to_owned()
    } else {
        format!(" (still unprocessed after {attempts} attempts)")
    }
}

fn display_version(v: Option<u64>) -> String {
    match v {
        Some(v) => v.to_string(),
        None => "no item".to_owned(),
    }
}

impl Error {
    /// True when a condition of a write did not hold: [`Error::ConditionFailed`],
    /// [`Error::AlreadyExists`], [`Error::NotFound`] or [`Error::VersionConflict`] (and a
    /// service `ConditionalCheckFailedException` that was not mapped to one of them).
    pub fn is_condition_failed(&self) -> bool {
        match self {
            Error::ConditionFailed { .. }
            | Error::AlreadyExists { .. }
            | Error::NotFound { .. }
            | Error::VersionConflict { .. } => true,
            Error::Sdk { source, .. } => {
                matches!(**source, aws_sdk_dynamodb::Error::ConditionalCheckFailedException(_))
            }
            _ => false,
        }
    }

    /// True for [`Error::AlreadyExists`].
    pub fn is_already_exists(&self) -> bool {
        matches!(self, Error::AlreadyExists { .. })
    }

    /// True for [`Error::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound { .. })
    }

    /// True for [`Error::VersionConflict`].
    pub fn is_version_conflict(&self) -> bool {
        matches!(self, Error::VersionConflict { .. })
    }

    /// True when the input was rejected before anything was sent (key, size, serialisation,
    /// expression errors).
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            Error::InvalidKey { .. }
                | Error::ItemTooLarge { .. }
                | Error::AttributeCollision { .. }
                | Error::Serialize { .. }
                | Error::KeyParse { .. }
                | Error::InvalidExpression(_)
                | Error::InvalidCursor { .. }
                | Error::DuplicateBatchKey { .. }
                | Error::VersionedBatchPut { .. }
        )
    }

    /// True when DynamoDB throttled the request (after the SDK's own retries).
    pub fn is_throttled(&self) -> bool {
        use aws_sdk_dynamodb::Error as E;
        match self {
            Error::Sdk { source, .. } => matches!(
                **source,
                E::ProvisionedThroughputExceededException(_)
                    | E::RequestLimitExceeded(_)
                    | E::ThrottlingException(_)
            ),
            _ => false,
        }
    }

    /// The stored item carried by a failed conditional write, if any.
    pub fn current_item(&self) -> Option<&Item> {
        match self {
            Error::AlreadyExists { current, .. } => Some(current),
            Error::ConditionFailed { current, .. } => current.as_deref(),
            _ => None,
        }
    }

    /// The stored item carried by a failed conditional write, read as entity `E`.
    pub fn current<E: crate::Entity>(&self) -> Option<Result<E, Error>> {
        self.current_item().map(|item| crate::entity::from_item::<E>(item.clone()))
    }

    pub(crate) fn sdk<Err>(operation: Op, err: Err) -> Error
    where
        aws_sdk_dynamodb::Error: From<Err>,
    {
        Error::Sdk { operation, source: Box::new(aws_sdk_dynamodb::Error::from(err)) }
    }
}
