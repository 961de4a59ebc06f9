//! [`AggregateProblem`]: why a stream-maintained aggregate or field copy refused a
//! declaration, a record or one of its own items (in [`Error::Aggregate`](super::Error::Aggregate)).

/// What is wrong with an aggregate's (or a field copy's) declaration, a stream record it was
/// given, or an item it keeps. Carried by [`Error::Aggregate`](super::Error::Aggregate); a record refused with one
/// of these wrote nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AggregateProblem {
    /// The aggregate's or a measure's name is empty, longer than 64 characters, or holds a
    /// character other than ASCII letters, digits, `_` and `-`.
    #[error("name {name:?} is not 1 to 64 ASCII letters, digits, `_` or `-`")]
    InvalidName {
        /// The name.
        name: String,
    },
    /// A measure's name is one of the attributes the aggregate's items already use (the
    /// table's key and type attributes, `_agg`, `_group`, `_seq`), or two measures share it.
    #[error("measure name {name:?} is taken")]
    NameTaken {
        /// The name.
        name: String,
    },
    /// The stream does not keep the images the aggregate reads: it needs the item after the
    /// change (`NEW_IMAGE` or `NEW_AND_OLD_IMAGES`).
    #[error("a stream of view type {view} has no new images; use NEW_IMAGE or NEW_AND_OLD_IMAGES")]
    ViewType {
        /// The view type (`KEYS_ONLY`, `OLD_IMAGE`).
        view: &'static str,
    },
    /// A record without a sequence number: it cannot be ordered against the ones applied.
    #[error("record {event_id:?} has no sequence number")]
    NoSequenceNumber {
        /// The record's `eventID`, if it has one.
        event_id: Option<String>,
    },
    /// A sequence number that is not 1 to 40 decimal digits.
    #[error("sequence number {found:?} is not 1 to 40 decimal digits")]
    InvalidSequenceNumber {
        /// What the record held.
        found: String,
    },
    /// A record of an `INSERT` or `MODIFY` without its new image (a record of another
    /// stream's view type, or a crafted one).
    #[error("record {event_id:?} of an insert or modify has no new image")]
    NoNewImage {
        /// The record's `eventID`, if it has one.
        event_id: Option<String>,
    },
    /// The record's keys are not the table's string keys.
    #[error("record {event_id:?} does not hold the table's string keys")]
    NoKeys {
        /// The record's `eventID`, if it has one.
        event_id: Option<String>,
    },
    /// The key of the item that records what a source item contributes (the source's key
    /// behind the aggregate's prefix) would be longer than DynamoDB allows.
    #[error("the bookkeeping key of source item {key} is {len} bytes, over {max}")]
    KeyTooLong {
        /// The source item's key, for display.
        key: String,
        /// The bookkeeping key's length in bytes.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// One of the aggregate's own items (a total or a contribution) holds an attribute it
    /// never writes that way (a measure that is not a whole number, a sequence number that is
    /// not one): written by something else.
    #[error("item {key} of the aggregate holds {attr:?} in a form it never writes")]
    CorruptItem {
        /// The item's key, for display.
        key: String,
        /// The attribute.
        attr: String,
    },
    /// A contribution or total left the range of a 64-bit integer.
    #[error("the {measure:?} total of group {group:?} overflows a 64-bit integer")]
    Overflow {
        /// The measure.
        measure: String,
        /// The group.
        group: String,
    },
    /// A request of the streams API failed (feature `streams-sdk`): the operation, and the
    /// service's error code and message (no code for a transport failure).
    #[error("DynamoDB Streams {operation} failed: {}{}", code.as_deref().unwrap_or("no error code"), message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    StreamsApi {
        /// The operation (`DescribeStream`, `GetShardIterator`, `GetRecords`).
        operation: &'static str,
        /// The service's error code, when it answered.
        code: Option<String>,
        /// The service's or the transport's message.
        message: Option<String>,
    },
}
