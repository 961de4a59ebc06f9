//! The typed reasons of [`Error::CorruptItem`](super::Error::CorruptItem),
//! [`Error::KeyParse`](super::Error::KeyParse), [`Error::TableMismatch`](super::Error::TableMismatch),
//! [`Error::InvalidStreamRecord`](super::Error::InvalidStreamRecord),
//! [`Error::InvalidCursor`](super::Error::InvalidCursor) and
//! [`RequestProblem::UpsertIncomplete`](super::RequestProblem::UpsertIncomplete), each holding
//! the values that made the check fail, and [`KeyPartError`] (re-exported from `key`), which a
//! key's reason carries.

use super::Error;
use crate::escape::UnescapeError;

/// A key component that could not be read back into its field type.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a key text of {type_name}: {reason}")]
pub struct KeyPartError {
    /// The Rust type that was expected.
    pub type_name: &'static str,
    /// The text that was read.
    pub text: String,
    /// What is wrong with it.
    pub reason: String,
}

impl KeyPartError {
    /// A parse failure of `text` as a `T`.
    pub fn new<T>(text: &str, reason: impl Into<String>) -> Self {
        KeyPartError {
            type_name: std::any::type_name::<T>(),
            text: text.to_owned(),
            reason: reason.into(),
        }
    }
}

/// `field `name`: ` before a problem of a named field, nothing otherwise.
fn field_prefix(field: &Option<String>) -> String {
    field.as_ref().map(|f| format!("field `{f}`: ")).unwrap_or_default()
}

/// Why a key string does not follow its template (in [`Error::KeyParse`], boxed there to keep
/// [`Error`] small).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyParseReason {
    /// The key does not hold the template's literal `literal` at byte `at`.
    #[error("expected `{literal}` at byte {at}")]
    Expected {
        /// The literal of the template.
        literal: String,
        /// The byte offset in the key.
        at: usize,
    },
    /// The key goes on after the template ends.
    #[error("unexpected text after byte {at}")]
    Trailing {
        /// The byte offset where the template ended.
        at: usize,
    },
    /// The entity has a sort key template, the item no sort key.
    #[error("the sort key is missing")]
    MissingSortKey,
    /// A placeholder's text holds a bad escape.
    #[error("field `{field}`: {problem}")]
    Unescape {
        /// The placeholder.
        field: String,
        /// The escape that is wrong.
        problem: UnescapeError,
    },
    /// A placeholder's text is not one its type reads.
    #[error("{}{problem}", field_prefix(field))]
    Part {
        /// The placeholder, when the text is one of several in the key.
        field: Option<String>,
        /// The type's error.
        problem: KeyPartError,
    },
    /// A placeholder's text is not one its format (`<n:unpadded>`, `<due:iso8601(ms)>`,
    /// `<name:lower>`) writes.
    #[error(
        "{}`{text}` is not a text the placeholder's format `{format}` writes",
        field_prefix(field)
    )]
    Format {
        /// The placeholder, when the text is one of several in the key.
        field: Option<String>,
        /// The format, as the template names it (`unpadded`, `iso8601(ms):lower`).
        format: String,
        /// The text in the key (unescaped).
        text: String,
    },
    /// A placeholder's text reads as a value that writes another text, so two keys would
    /// read as one value.
    #[error("{}`{text}` is not the canonical key text of {type_name}", field_prefix(field))]
    NotCanonical {
        /// The placeholder, when the text is one of several in the key.
        field: Option<String>,
        /// The text in the key.
        text: String,
        /// The Rust type of the value.
        type_name: &'static str,
    },
    /// A placeholder that appears twice in the template holds two different values.
    #[error(
        "placeholder `{placeholder}` appears twice with different values `{first}` and `{again}`"
    )]
    Repeated {
        /// The placeholder.
        placeholder: String,
        /// Its first text.
        first: String,
        /// Its second text.
        again: String,
    },
    /// The template cannot be read back: the literal after an escaped placeholder is empty
    /// or starts with the escape character.
    #[error(
        "the template cannot be read back: the literal `{literal}` after placeholder `{placeholder}` starts with the escape character or is empty"
    )]
    EscapedLiteral {
        /// The placeholder.
        placeholder: String,
        /// The literal after it.
        literal: &'static str,
    },
    /// The template cannot be read back: two placeholders with no literal between them.
    #[error(
        "the template cannot be read back: placeholder `{placeholder}` is followed by another placeholder"
    )]
    AdjacentPlaceholders {
        /// The first placeholder.
        placeholder: String,
    },
}

/// Why a stored item does not match its entity's rules (in [`Error::CorruptItem`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CorruptReason {
    /// The stored key is not the key the item's fields (or an edge's endpoints) make.
    #[error("the stored key does not match the key of the item's fields {expected}")]
    KeyMismatch {
        /// The key the fields make, for display.
        expected: String,
    },
    /// The stored key does not parse with the entity's templates.
    #[error("the stored key is not a key of the entity: {problem}")]
    ForeignKey {
        /// The parse error.
        problem: Box<Error>,
    },
    /// A closure tree's copy whose key does not name the node it holds.
    #[error("the copy's key does not name node {node:?} of this tree")]
    CopyKey {
        /// The node the copy holds, as key text.
        node: String,
    },
    /// The schema version attribute is not a positive integer.
    #[error("the schema version attribute `{attribute}` is not a positive integer")]
    SchemaVersion {
        /// The attribute.
        attribute: &'static str,
    },
    /// The item of a strict entity (`#[entity(strict)]`) holds attributes that are neither
    /// its fields nor the library's (keys, type tag, constants, bookkeeping).
    #[error("it holds attributes the strict entity does not declare: {}", attributes.join(", "))]
    UnknownAttributes {
        /// The attributes, sorted.
        attributes: Vec<String>,
    },
    /// A scan page's `LastEvaluatedKey` is not a string key of the table.
    #[error("the scan's position is not a string key of the table")]
    ScanPosition,
    /// A write that asked for the item's attributes got none back.
    #[error("the service returned no attributes for the updated item")]
    NoAttributes,
    /// `TransactGetItems` answered with another number of items than it was asked for.
    #[error("TransactGetItems returned {responses} responses for {keys} keys")]
    ResponseCount {
        /// The responses.
        responses: usize,
        /// The keys asked for.
        keys: usize,
    },
    /// The sentinel of a unique value the item held belongs to another item.
    #[error(
        "the sentinel of the value of `{field}` the item held (scope `{scope}`) is owned by another item{}",
        owner.as_ref().map(|o| format!(" ({o})")).unwrap_or_default()
    )]
    SentinelOwned {
        /// The unique field.
        field: &'static str,
        /// The unique scope.
        scope: &'static str,
        /// The owner's key, for display, when the sentinel says.
        owner: Option<String>,
    },
    /// A degree counter holds a number that is not a count.
    #[error("degree counter `{attribute}` is {value}, not a count")]
    NotACount {
        /// The counter attribute.
        attribute: &'static str,
        /// The stored number.
        value: String,
    },
    /// A degree counter holds a value that is not a number.
    #[error("degree counter `{attribute}` is not a number")]
    NotANumber {
        /// The counter attribute.
        attribute: &'static str,
    },
    /// A sharded degree counter's shards sum to a value that is not a count.
    #[error(
        "sharded degree counter `{attribute}` sums to {total} over the node item and its {shards} shards, not a count"
    )]
    ShardedCount {
        /// The counter attribute.
        attribute: &'static str,
        /// The sum, as DynamoDB writes numbers (text: an `i128` would make every `Error`
        /// 16-byte aligned).
        total: String,
        /// The shards.
        shards: u16,
    },
}

/// How a table in DynamoDB differs from its definition (in [`Error::TableMismatch`], and
/// in a [`TableDiff`](crate::ops::TableDiff) as a change that cannot be applied).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TableMismatchReason {
    /// The table's key schema (`index: None`), or an index's, is not the declared one.
    #[error(
        "{} {found:?}, the definition says {declared:?} (attribute, is partition key)",
        index.as_ref().map_or_else(|| "key schema is".to_owned(), |i| format!("index `{i}` is keyed by"))
    )]
    KeySchema {
        /// The index, `None` for the table.
        index: Option<String>,
        /// The key attributes found, in order, with whether each is a partition key attribute.
        found: Vec<(String, bool)>,
        /// The declared ones.
        declared: Vec<(String, bool)>,
    },
    /// A declared index (a vector index when `vector`) is missing.
    #[error("{}index `{index}` is missing", if *vector { "vector " } else { "" })]
    MissingIndex {
        /// The index.
        index: String,
        /// True for a vector index.
        vector: bool,
    },
    /// A vector index differs from its declaration.
    #[error("vector index `{index}` is {found:?}, the definition says {declared:?}")]
    VectorIndex {
        /// The index.
        index: String,
        /// What the table has.
        found: Box<VectorLayout>,
        /// What the definition says.
        declared: Box<VectorLayout>,
    },
    /// Time to Live is enabled on another attribute (a table has one).
    #[error(
        "Time to Live is enabled on attribute {found:?}, the definition says `{declared}` (a table has one)"
    )]
    TtlAttribute {
        /// The attribute it is enabled on.
        found: Option<String>,
        /// The declared attribute.
        declared: String,
    },
    /// Time to Live is being disabled; the service refuses to enable it until that is done.
    #[error(
        "Time to Live is being disabled (on attribute {found:?}); the service refuses to enable it on `{declared}` until that is done"
    )]
    TtlDisabling {
        /// The attribute it is being disabled on.
        found: Option<String>,
        /// The declared attribute.
        declared: String,
    },
}

/// The layout of a vector index, as compared with its definition.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VectorLayout {
    /// The vector attribute.
    pub attribute: Option<String>,
    /// The dimensions.
    pub dimensions: Option<i64>,
    /// The distance function (`COSINE`, ...).
    pub metric: Option<String>,
    /// The search schema: attribute and element type (`HASH`, `INLINE_FILTER`).
    pub search_schema: Vec<(String, String)>,
}

/// What no DynamoDB stream writes (in [`Error::InvalidStreamRecord`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StreamRecordReason {
    /// An event name other than `INSERT`, `MODIFY` and `REMOVE`.
    #[error("unknown event name {name:?}")]
    UnknownEventName {
        /// The event name.
        name: String,
    },
    /// A view type the service does not have.
    #[error("unknown stream view type {name:?}")]
    UnknownViewType {
        /// The view type.
        name: String,
    },
    /// An attribute value of a type this SDK version does not know.
    #[error("an attribute value of a type this SDK version does not know")]
    UnknownAttributeType,
}

/// Why a page cursor or a migration checkpoint was refused (in [`Error::InvalidCursor`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CursorReason {
    /// The text is not a cursor ddb-model wrote.
    #[error("the text is not a ddb-model cursor")]
    NotACursor,
    /// A cursor of another format version.
    #[error("unknown cursor version")]
    UnknownVersion,
    /// The cursor was made by another query, or edited.
    #[error(
        "the cursor belongs to another query (or was altered); use it with the query that returned it"
    )]
    OtherQuery,
    /// The cursor's key is not a key the query can return.
    #[error("the cursor points outside the query")]
    OutsideQuery,
    /// The query the cursor is given to is itself invalid.
    #[error("the query is invalid")]
    InvalidQuery,
    /// The cursor's payload ends early or holds an unreadable key attribute.
    #[error("the cursor's key is truncated or malformed")]
    Malformed,
    /// A key attribute of the page's last item cannot be written into a cursor (not a string,
    /// number or binary, or over 64 KB).
    #[error("the service returned a key attribute a cursor cannot hold")]
    KeyAttribute,
    /// A migration checkpoint ([`MigrateCheckpoint`](crate::ops::MigrateCheckpoint)) of
    /// another migration.
    #[error(
        "the checkpoint cannot resume the migration of `{entity}` to version {version}: {mismatch}"
    )]
    Checkpoint {
        /// The entity being migrated.
        entity: &'static str,
        /// The schema version it migrates to.
        version: u32,
        /// How the checkpoint differs.
        mismatch: CheckpointMismatch,
    },
    /// A re-key checkpoint given to [`Rekey::resume`](crate::ops::Rekey::resume) is not one
    /// of this re-key: another entity, the other step, or an invalid number of segments.
    #[error("the checkpoint cannot resume the re-key of `{entity}`: {mismatch}")]
    RekeyCheckpoint {
        /// The entity being re-keyed.
        entity: &'static str,
        /// How the checkpoint differs.
        mismatch: CheckpointMismatch,
    },
}

/// How a migration checkpoint differs from the migration it is given to
/// ([`CursorReason::Checkpoint`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CheckpointMismatch {
    /// It is a migration of another entity.
    #[error("it is a migration of `{0}`")]
    Entity(String),
    /// It upgrades to another schema version.
    #[error("it upgrades to version {0}")]
    Version(u32),
    /// Its number of segments is 0 or over the limit.
    #[error("it has {0} segments")]
    Segments(usize),
    /// It is a checkpoint of the other step of a re-key (the copy's given to the cleanup, or
    /// the reverse).
    #[error("it is a checkpoint of the other re-key step")]
    Step,
}

/// Why the item an upsert would create would not read back as its entity (in
/// [`RequestProblem::UpsertIncomplete`](super::RequestProblem::UpsertIncomplete)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UpsertReason {
    /// It does not deserialize: a field it requires is never written.
    #[error("cannot read `{entity}` item {key}: {message}")]
    Unreadable {
        /// The entity type.
        entity: &'static str,
        /// The key, for display.
        key: String,
        /// The deserializer's message (`missing field `title``).
        message: String,
    },
    /// Its fields make another key than the one the upsert writes.
    #[error(
        "corrupt `{entity}` item {key}: the stored key does not match the key of the item's fields {expected}"
    )]
    KeyMismatch {
        /// The entity type.
        entity: &'static str,
        /// The key the upsert writes, for display.
        key: String,
        /// The key the fields make, for display.
        expected: String,
    },
}
