//! Sending a batch: two writes to one item refused, chunks of 25 sent with bounded
//! parallelism, unprocessed writes sent again after a backoff, and what was not written
//! reported exactly.

use std::collections::HashSet;

use aws_sdk_dynamodb::types::WriteRequest;

use super::BatchWrite;
use super::spec::WriteSpec;
use crate::db::Db;
use crate::error::{Error, UnprocessedWrite};
use crate::model::Table;
use crate::ops::batch::MAX_BATCH_WRITES;
use crate::ops::batch::keys::{DisplayRaw, RawKey};
use crate::ops::batch::run::{Flow, Retry, run_chunks, until_processed};
use crate::ops::retry;
use crate::stats::Op;

impl<'a, T: Table> BatchWrite<'a, T> {
    /// Sends the requests.
    pub async fn send(self) -> Result<(), Error> {
        let span = crate::telemetry::OperationSpan::new("batch_write", self.db.table_name());
        span.run(async move {
            let BatchWrite { db, writes, error, retry, .. } = self;
            if let Some(e) = error {
                return Err(e);
            }
            let mut seen = HashSet::with_capacity(writes.len());
            for w in &writes {
                if !seen.insert(&w.raw) {
                    let key = DisplayRaw(&w.raw).to_string();
                    return Err(Error::DuplicateBatchKey { entity: w.entity, key });
                }
            }
            drop(seen);
            crate::ops::tenant::batch_write(db, writes.iter().map(|w| &w.request))?;
            crate::telemetry::operation_items(writes.len());

            let entity = retry::Call::of_all(Op::BatchWriteItem, writes.iter().map(|w| w.entity));
            let Sent { written, mut unprocessed, failure } =
                send(db, &writes, retry, entity.entity).await;
            if unprocessed.is_empty() && failure.is_none() {
                return Ok(());
            }
            unprocessed.sort_unstable();
            Err(Error::BatchWriteIncomplete {
                written,
                attempts: retry.policy.tries,
                unprocessed: unprocessed
                    .into_iter()
                    .map(|i| UnprocessedWrite {
                        action: writes[i].action,
                        key: writes[i].raw.batch_key(writes[i].entity),
                    })
                    .collect(),
                source: failure.map(Box::new),
            })
        })
        .await
    }
}

/// What sending a list of writes ended with.
pub(in crate::ops::batch) struct Sent {
    /// How many writes were applied.
    pub(in crate::ops::batch) written: usize,
    /// Indexes of the writes not known to be applied (unprocessed after the last attempt,
    /// in a request that failed, or never sent after a request failed), in no order.
    pub(in crate::ops::batch) unprocessed: Vec<usize>,
    /// The first request that failed, if one did.
    pub(in crate::ops::batch) failure: Option<Error>,
}

/// Sends `writes` (distinct keys, checked) in chunks of 25, `retry.concurrency` at a time,
/// unprocessed writes again as `retry` says; no chunk is started after a request failed.
/// `entity` names the requests' entity for the cost report, when they are all one entity's.
pub(in crate::ops::batch) async fn send<T: Table>(
    db: &Db<T>,
    writes: &[WriteSpec],
    retry: Retry,
    entity: Option<&'static str>,
) -> Sent {
    let mut written = 0;
    let mut unprocessed: Vec<usize> = Vec::new();
    let mut failure: Option<Error> = None;
    let mut started = 0;
    let chunks = writes.chunks(MAX_BATCH_WRITES).enumerate().inspect(|(_, c)| started += c.len());
    run_chunks(
        chunks,
        retry.concurrency,
        |(i, chunk)| write_chunk(db, chunk, i * MAX_BATCH_WRITES, retry, entity),
        |chunk: WriteChunk| {
            written += chunk.written;
            unprocessed.extend(chunk.unprocessed);
            match chunk.error {
                Some(e) => {
                    failure.get_or_insert(e);
                    Flow::Drain
                }
                None => Flow::Continue,
            }
        },
    )
    .await;
    // Chunks never started after a request failed.
    unprocessed.extend(started..writes.len());
    Sent { written, unprocessed, failure }
}

struct WriteChunk {
    written: usize,
    /// Indexes (into the whole batch) of the writes not known to be applied.
    unprocessed: Vec<usize>,
    /// The error of the request that failed, if one did.
    error: Option<Error>,
}

async fn write_chunk<T: Table>(
    db: &Db<T>,
    specs: &[WriteSpec],
    offset: usize,
    retry: Retry,
    entity: Option<&'static str>,
) -> WriteChunk {
    let round = |pending: &[usize]| {
        let requests = pending.iter().map(|&i| specs[i].request.clone()).collect();
        let request = db
            .client()
            .batch_write_item()
            .request_items(db.table_name(), requests)
            .set_return_consumed_capacity(db.capacity_mode());
        async move {
            // On failure, what the request carried is not known to be applied.
            let call = retry::Call { entity, ..retry::Call::from(Op::BatchWriteItem) };
            let out = retry::send(db, call, request).await?;
            let unprocessed = out
                .unprocessed_items
                .and_then(|mut u| u.remove(db.table_name()))
                .map(|writes| writes.iter().filter_map(write_key::<T>).collect())
                .unwrap_or_default();
            Ok((Vec::new(), unprocessed))
        }
    };
    let (_, pending, error) =
        until_processed(specs.len(), |i| &specs[i].raw, retry.policy, round).await;
    WriteChunk {
        written: specs.len() - pending.len(),
        unprocessed: pending.into_iter().map(|i| offset + i).collect(),
        error,
    }
}

/// The key of the item a write request writes.
fn write_key<T: Table>(write: &WriteRequest) -> Option<RawKey> {
    if let Some(put) = write.put_request() {
        return RawKey::from_item::<T>(put.item());
    }
    write.delete_request().and_then(|d| RawKey::from_item::<T>(d.key()))
}
