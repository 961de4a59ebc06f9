//! Reading the table's stream with the streams API (feature `streams-sdk`): every shard from
//! its checkpoint (an item of the aggregate or copy per shard), each page applied, then its
//! checkpoint moved past it.

use std::future::Future;

use aws_sdk_dynamodbstreams::Client as StreamsClient;
use aws_sdk_dynamodbstreams::error::{DisplayErrorContext, ProvideErrorMetadata};
use aws_sdk_dynamodbstreams::types::{Shard, ShardIteratorType};
use serde::Serialize;

use super::{Applied, CopyProcessor, Processor, SEQ_ATTR, s, tag};
use crate::db::Db;
use crate::error::{AggregateProblem, Error};
use crate::item::Item;
use crate::model::{Entity, Table, string_attr};
use crate::ops::action::Action;
use crate::ops::retry;
use crate::ops::write::read_item;
use crate::stats::Op;
use crate::stream::StreamRecord;

/// What [`Processor::drain`] read and applied.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Drained {
    /// Shards of the stream.
    pub shards: usize,
    /// Records read (past the checkpoints).
    pub records: usize,
    /// What applying them did, summed over the pages.
    pub applied: Applied,
}

/// A processor [`drain`] feeds: its handle, its name (the checkpoints are items of it) and what
/// it does with a page of records.
trait Feed {
    type Table: Table;
    fn db(&self) -> &Db<Self::Table>;
    fn name(&self) -> &'static str;
    fn apply_page(&self, records: &[StreamRecord]) -> impl Future<Output = Result<Applied, Error>>;
}

impl<E: Entity> Feed for Processor<'_, E> {
    type Table = E::Table;
    fn db(&self) -> &Db<E::Table> {
        self.db
    }
    fn name(&self) -> &'static str {
        self.aggregate.name
    }
    fn apply_page(&self, records: &[StreamRecord]) -> impl Future<Output = Result<Applied, Error>> {
        self.apply(records)
    }
}

impl<S, T, V> Feed for CopyProcessor<'_, S, T, V>
where
    S: Entity,
    T: Entity<Table = S::Table>,
    V: Serialize + 'static,
{
    type Table = S::Table;
    fn db(&self) -> &Db<S::Table> {
        self.db
    }
    fn name(&self) -> &'static str {
        self.copy.name()
    }
    fn apply_page(&self, records: &[StreamRecord]) -> impl Future<Output = Result<Applied, Error>> {
        self.apply(records)
    }
}

impl<E: Entity> Processor<'_, E> {
    /// Reads the table's stream `stream_arn` with `streams` (a client of the streams API, on
    /// the table's endpoint) until every shard is read to its end so far, applying each page
    /// of records ([`apply`](Processor::apply)) and then storing the shard's checkpoint (the
    /// page's last sequence number, in an item of the aggregate). A processor started again
    /// resumes after the checkpoints; a page applied whose checkpoint was not stored is read
    /// again and skipped, record by record, so a crash anywhere loses and repeats nothing. A
    /// page without a record of `E` stores no checkpoint, so the processor's own writes (which
    /// are in the stream too) never make it read on forever.
    /// Shards are read in any order: applying by state does not depend on it. Call it in a
    /// loop (with a pause) to follow the stream.
    ///
    /// Requests of the streams API are counted in the handle's [`requests`](crate::Db::requests)
    /// as [`Op::DescribeStream`], [`Op::GetShardIterator`] and [`Op::GetRecords`], one attempt
    /// per call (retries inside the streams client are not seen); their failures are
    /// [`AggregateProblem::StreamsApi`].
    pub async fn drain(&self, streams: &StreamsClient, stream_arn: &str) -> Result<Drained, Error> {
        drain(self, streams, stream_arn).await
    }
}

impl<S, T, V> CopyProcessor<'_, S, T, V>
where
    S: Entity,
    T: Entity<Table = S::Table>,
    V: Serialize + 'static,
{
    /// Reads the table's stream as [`Processor::drain`] does (checkpoints, resuming, counted
    /// requests), applying each page with [`apply`](CopyProcessor::apply). A page of only the
    /// processor's own writes of targets stores no checkpoint.
    pub async fn drain(&self, streams: &StreamsClient, stream_arn: &str) -> Result<Drained, Error> {
        drain(self, streams, stream_arn).await
    }
}

/// Every shard of the stream read from its checkpoint, each page applied, then its checkpoint
/// moved (see [`Processor::drain`]).
async fn drain<F: Feed>(
    feed: &F,
    streams: &StreamsClient,
    stream_arn: &str,
) -> Result<Drained, Error> {
    let (db, name) = (feed.db(), feed.name());
    let mut drained = Drained::default();
    for shard in shards(feed, streams, stream_arn).await? {
        let Some(shard_id) = shard.shard_id() else { continue };
        drained.shards += 1;
        let key = checkpoint_key::<F::Table>(name, shard_id);
        let from = checkpoint(db, &key).await?;
        let request = streams.get_shard_iterator().stream_arn(stream_arn).shard_id(shard_id);
        let request = match &from {
            Some(seq) => request
                .shard_iterator_type(ShardIteratorType::AfterSequenceNumber)
                .sequence_number(seq),
            None => request.shard_iterator_type(ShardIteratorType::TrimHorizon),
        };
        sent(db, Op::GetShardIterator);
        let mut iterator = request
            .send()
            .await
            .map_err(|e| streams_error(name, Op::GetShardIterator, e))?
            .shard_iterator;
        while let Some(it) = iterator {
            sent(db, Op::GetRecords);
            let page = streams
                .get_records()
                .shard_iterator(it)
                .send()
                .await
                .map_err(|e| streams_error(name, Op::GetRecords, e))?;
            // An open shard always has a next iterator: its end so far is an empty page.
            let Some(last) = page.records().last() else { break };
            let last: Option<String> =
                last.dynamodb().and_then(|d| d.sequence_number()).map(String::from);
            let records = page
                .records()
                .iter()
                .cloned()
                .map(StreamRecord::try_from)
                .collect::<Result<Vec<_>, Error>>()?;
            drained.records += records.len();
            let applied = feed.apply_page(&records).await?;
            drained.applied += applied;
            // A page of other items only (the processors' own writes among them) moves
            // no checkpoint: storing one would write a record, read as the next page.
            let ours = applied.applied + applied.stale + applied.superseded;
            if let Some(last) = last.filter(|_| ours > 0) {
                store_checkpoint(db, name, &key, &last).await?;
            }
            iterator = page.next_shard_iterator;
        }
    }
    Ok(drained)
}

/// Every shard of the stream (`DescribeStream`, page by page).
async fn shards<F: Feed>(
    feed: &F,
    streams: &StreamsClient,
    arn: &str,
) -> Result<Vec<Shard>, Error> {
    let mut shards = Vec::new();
    let mut after: Option<String> = None;
    loop {
        sent(feed.db(), Op::DescribeStream);
        let described = streams
            .describe_stream()
            .stream_arn(arn)
            .set_exclusive_start_shard_id(after.take())
            .send()
            .await
            .map_err(|e| streams_error(feed.name(), Op::DescribeStream, e))?;
        let Some(description) = described.stream_description else { break };
        shards.extend(description.shards.unwrap_or_default());
        match description.last_evaluated_shard_id {
            Some(last) => after = Some(last),
            None => break,
        }
    }
    Ok(shards)
}

/// Counts a request of the streams API in the handle's statistics: a call and its attempt.
fn sent<T: Table>(db: &Db<T>, op: Op) {
    db.count(op);
    db.counters().record_attempt(op);
}

/// The sequence number a shard's checkpoint stores, as the service wrote it.
async fn checkpoint<T: Table>(db: &Db<T>, key: &Item) -> Result<Option<String>, Error> {
    let item = read_item(db, key.clone(), Op::GetItem).await?;
    Ok(item.as_ref().and_then(|i| string_attr(i, SEQ_ATTR)).map(str::to_owned))
}

async fn store_checkpoint<T: Table>(
    db: &Db<T>,
    name: &str,
    key: &Item,
    seq: &str,
) -> Result<(), Error> {
    let mut item = key.clone();
    tag::<T>(name, &mut item, "checkpoint", "aggregate-checkpoint");
    item.insert(SEQ_ATTR.into(), s(seq.into()));
    retry::send(db, Op::PutItem, Action::put(item).put_item(db)?).await?;
    Ok(())
}

/// The key of a shard's checkpoint.
fn checkpoint_key<T: Table>(name: &str, shard: &str) -> Item {
    let mut key = Item::new();
    let pk = format!("~agg@{name}");
    match T::SK {
        Some(sk) => {
            key.insert(T::PK.into(), s(pk));
            key.insert(sk.into(), s(shard.into()));
        }
        None => {
            key.insert(T::PK.into(), s(format!("{pk}#{shard}")));
        }
    }
    key
}

fn streams_error<Err, R>(
    name: &'static str,
    op: Op,
    e: aws_sdk_dynamodbstreams::error::SdkError<Err, R>,
) -> Error
where
    Err: ProvideErrorMetadata + std::error::Error + 'static,
    R: std::fmt::Debug,
{
    let code = e.code().map(str::to_owned);
    let message =
        e.message().map(str::to_owned).or_else(|| Some(DisplayErrorContext(&e).to_string()));
    let problem = AggregateProblem::StreamsApi { operation: op.name(), code, message };
    Error::Aggregate { aggregate: name, problem }
}
