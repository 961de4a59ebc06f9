//! Batch operations: `BatchGetItem` and `BatchWriteItem`.
//!
//! Requests are split into chunks of the DynamoDB maximum (100 keys, 25 writes), chunks run
//! with bounded parallelism, and the keys or writes the service returns as unprocessed are sent
//! again with exponential backoff and full jitter, a bounded number of times. What is still
//! unprocessed after the last attempt is reported in a typed error
//! ([`Error::BatchGetIncomplete`](crate::Error::BatchGetIncomplete),
//! [`Error::BatchWriteIncomplete`](crate::Error::BatchWriteIncomplete)); nothing is dropped
//! silently.

mod coalesce;
mod get;
mod keys;
mod read;
mod run;
mod write;

pub(crate) use coalesce::{get as coalesced_get, write as coalesced_write};
pub use get::{BatchGet, ByKey, InOrder};
pub use read::{BatchRead, BatchReadResult};
pub use write::BatchWrite;

/// Most keys DynamoDB accepts in one `BatchGetItem` request: the chunk size of batch gets.
///
/// ```
/// assert_eq!(ddb_model::ops::MAX_BATCH_GET_KEYS, 100);
/// ```
pub const MAX_BATCH_GET_KEYS: usize = 100;
/// Most writes DynamoDB accepts in one `BatchWriteItem` request: the chunk size of batch
/// writes.
///
/// ```
/// // 60 writes are sent as 3 requests.
/// assert_eq!(60_usize.div_ceil(ddb_model::ops::MAX_BATCH_WRITES), 3);
/// ```
pub const MAX_BATCH_WRITES: usize = 25;
