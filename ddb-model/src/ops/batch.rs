//! Batch operations: `BatchGetItem` and `BatchWriteItem`.
//!
//! Requests are split into chunks of the DynamoDB maximum (100 keys, 25 writes), chunks run
//! with bounded parallelism, and the keys or writes the service returns as unprocessed are sent
//! again with exponential backoff and full jitter, a bounded number of times. What is still
//! unprocessed after the last attempt is reported in a typed error
//! ([`Error::BatchGetIncomplete`], [`Error::BatchWriteIncomplete`]); nothing is dropped
//! silently.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::future::IntoFuture;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use aws_sdk_dynamodb::types::{
    AttributeValue, DeleteRequest, KeysAndAttributes, PutRequest, ReturnConsumedCapacity,
    WriteRequest,
};
use futures_util::stream::{FuturesUnordered, StreamExt};

use super::put::next_version;
use super::slot::Slot;
use super::{BoxFuture, key_item, retry};
use crate::db::Db;
use crate::error::{BatchAction, BatchKey, Error, UnprocessedWrite};
use crate::item::Item;
use crate::key::{Key, display_key};
use crate::model::{Entity, Table, from_item, to_item};
use crate::stats::Op;

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

const DEFAULT_CONCURRENCY: usize = 4;
const DEFAULT_MAX_ATTEMPTS: u32 = 8;
const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(50);
const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(2);

/// How a batch runs: parallel chunks, attempts per chunk, backoff between attempts.
#[derive(Debug, Clone, Copy)]
struct Retry {
    concurrency: usize,
    max_attempts: u32,
    base: Duration,
    max: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            concurrency: DEFAULT_CONCURRENCY,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            base: DEFAULT_BACKOFF_BASE,
            max: DEFAULT_BACKOFF_MAX,
        }
    }
}

impl Retry {
    /// At most `chunks` chunks in flight at once (0 counts as 1).
    fn concurrency(self, chunks: usize) -> Retry {
        Retry { concurrency: chunks.max(1), ..self }
    }

    /// At most `attempts` requests per chunk, the first included (0 counts as 1).
    fn max_attempts(self, attempts: u32) -> Retry {
        Retry { max_attempts: attempts.max(1), ..self }
    }

    /// The backoff between attempts (see [`delay`](Retry::delay)).
    fn backoff(self, base: Duration, max: Duration) -> Retry {
        Retry { base, max, ..self }
    }

    /// The pause after attempt `attempt` (1-based): full jitter, uniformly random between zero
    /// and `min(max, base * 2^(attempt - 1))`.
    fn delay(&self, attempt: u32) -> Duration {
        retry::delay(self.base, self.max, attempt)
    }
}

/// The identity of a stored item: its partition and sort key strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct RawKey {
    pk: String,
    sk: Option<String>,
}

impl RawKey {
    fn of<E>(key: &Key<E>) -> RawKey {
        RawKey { pk: key.pk().to_owned(), sk: key.sk().map(str::to_owned) }
    }

    /// The key attributes of `item` (a stored item or a key), if they are strings.
    fn from_item<T: Table>(item: &Item) -> Option<RawKey> {
        let string = |attr: &str| match item.get(attr) {
            Some(AttributeValue::S(s)) => Some(s.clone()),
            _ => None,
        };
        let pk = string(T::PK)?;
        let sk = match T::SK {
            Some(attr) => Some(string(attr)?),
            None => None,
        };
        Some(RawKey { pk, sk })
    }

    fn batch_key(&self, entity: &'static str) -> BatchKey {
        BatchKey { entity, pk: self.pk.clone(), sk: self.sk.clone() }
    }
}

// `BatchKey`, `BatchAction` and `UnprocessedWrite` are defined beside the errors that carry
// them (`error::batch`); the typed accessors, which need `Entity`, are here.
impl BatchKey {
    /// The typed key, when this key was given as an `E` (`None` for another entity type).
    ///
    /// ```
    /// # use ddb_model::{BatchKey, Entity};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// fn users(keys: &[BatchKey]) -> Vec<ddb_model::Key<User>> {
    ///     keys.iter().filter_map(|k| k.key::<User>()).collect()
    /// }
    /// ```
    pub fn key<E: Entity>(&self) -> Option<Key<E>> {
        (self.entity == E::NAME).then(|| Key::from_parts(self.pk.clone(), self.sk.clone()))
    }

    /// True when this is the key `key` of an `E`.
    ///
    /// ```
    /// # use ddb_model::{BatchKey, Entity};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// fn was_left_out(unprocessed: &[BatchKey], id: &str) -> bool {
    ///     unprocessed.iter().any(|k| k.is(&User::key(id)))
    /// }
    /// ```
    pub fn is<E: Entity>(&self, key: &Key<E>) -> bool {
        self.entity == E::NAME && self.pk == key.pk() && self.sk.as_deref() == key.sk()
    }
}

/// What to do after a chunk finished.
enum Flow {
    /// Go on.
    Continue,
    /// Start no more chunks; drive the ones in flight to their end (writes: their outcome
    /// must be known).
    Drain,
    /// Start no more chunks and drop the ones in flight (reads).
    Abort,
}

/// Sends `chunks` with at most `concurrency` of them in flight. `run` turns a chunk into its
/// future, `done` takes its result.
async fn run_chunks<C, F, R>(
    chunks: impl Iterator<Item = C>,
    concurrency: usize,
    run: impl Fn(C) -> F,
    mut done: impl FnMut(R) -> Flow,
) where
    F: std::future::Future<Output = R>,
{
    let mut chunks = chunks.fuse();
    let mut in_flight = FuturesUnordered::new();
    let mut launch = true;
    loop {
        while launch && in_flight.len() < concurrency.max(1) {
            match chunks.next() {
                Some(chunk) => in_flight.push(run(chunk)),
                None => break,
            }
        }
        let Some(result) = in_flight.next().await else {
            return;
        };
        match done(result) {
            Flow::Continue => {}
            Flow::Drain => launch = false,
            Flow::Abort => return,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// BatchGetItem
// ---------------------------------------------------------------------------------------------

/// One distinct key of a batch get.
struct GetSpec {
    raw: RawKey,
    entity: &'static str,
    key: Item,
}

/// The distinct keys of a batch get, and for each input position the distinct key it asks for.
#[derive(Default)]
struct GetPlan {
    specs: Vec<GetSpec>,
    index: HashMap<RawKey, usize>,
    positions: Vec<usize>,
}

impl GetPlan {
    /// Adds `key`, merged with an equal key given before. Checks the key limits.
    fn add<E: Entity>(&mut self, key: &Key<E>) -> Result<usize, Error> {
        key.validate()?;
        let raw = RawKey::of(key);
        let unique = match self.index.entry(raw) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                let n = self.specs.len();
                self.specs.push(GetSpec {
                    raw: e.key().clone(),
                    entity: E::NAME,
                    key: key_item(key),
                });
                e.insert(n);
                n
            }
        };
        self.positions.push(unique);
        Ok(unique)
    }

    /// Reads every distinct key; the item of each (`None` when there is none), by distinct key.
    async fn run<T: Table>(
        &self,
        db: &Db<T>,
        consistent: bool,
        retry: Retry,
    ) -> Result<Vec<Option<Item>>, Error> {
        let mut found: HashMap<RawKey, Item> = HashMap::new();
        let mut unprocessed: Vec<usize> = Vec::new();
        let mut failure: Option<Error> = None;
        let chunks = self.specs.chunks(MAX_BATCH_GET_KEYS).enumerate();
        run_chunks(
            chunks,
            retry.concurrency,
            |(i, chunk)| get_chunk(db, chunk, i * MAX_BATCH_GET_KEYS, consistent, retry),
            |result| match result {
                Ok(chunk) => {
                    for item in chunk.found {
                        if let Some(raw) = RawKey::from_item::<T>(&item) {
                            found.insert(raw, item);
                        }
                    }
                    unprocessed.extend(chunk.unprocessed);
                    Flow::Continue
                }
                Err(e) => {
                    failure.get_or_insert(e);
                    Flow::Abort
                }
            },
        )
        .await;
        if let Some(e) = failure {
            return Err(e);
        }
        if !unprocessed.is_empty() {
            unprocessed.sort_unstable();
            return Err(Error::BatchGetIncomplete {
                processed: self.specs.len() - unprocessed.len(),
                attempts: retry.max_attempts,
                unprocessed: unprocessed
                    .into_iter()
                    .map(|i| self.specs[i].raw.batch_key(self.specs[i].entity))
                    .collect(),
            });
        }
        Ok(self.specs.iter().map(|spec| found.remove(&spec.raw)).collect())
    }
}

struct GetChunk {
    found: Vec<Item>,
    /// Indexes (into the whole plan) of the keys still unprocessed after the last attempt.
    unprocessed: Vec<usize>,
}

async fn get_chunk<T: Table>(
    db: &Db<T>,
    specs: &[GetSpec],
    offset: usize,
    consistent: bool,
    retry: Retry,
) -> Result<GetChunk, Error> {
    let mut found = Vec::new();
    let mut pending: Vec<usize> = (0..specs.len()).collect();
    let mut attempt = 0;
    loop {
        attempt += 1;
        let keys = KeysAndAttributes::builder()
            .set_keys(Some(pending.iter().map(|&i| specs[i].key.clone()).collect()))
            .consistent_read(consistent)
            .build()
            .map_err(|e| Error::InvalidExpression(e.to_string()))?;
        let request = db
            .client()
            .batch_get_item()
            .request_items(db.table_name(), keys)
            .return_consumed_capacity(ReturnConsumedCapacity::Total);
        let out = retry::send(db, Op::BatchGetItem, |t| request.customize().interceptor(t).send())
            .await?;
        for capacity in out.consumed_capacity() {
            db.record_capacity(Op::BatchGetItem, Some(capacity));
        }
        if let Some(items) = out.responses.and_then(|mut r| r.remove(db.table_name())) {
            db.record_items(items.len() as u64);
            found.extend(items);
        }
        let unprocessed: HashSet<RawKey> = out
            .unprocessed_keys
            .and_then(|mut u| u.remove(db.table_name()))
            .map(|k| k.keys.iter().filter_map(RawKey::from_item::<T>).collect())
            .unwrap_or_default();
        pending.retain(|&i| unprocessed.contains(&specs[i].raw));
        if pending.is_empty() || attempt >= retry.max_attempts {
            break;
        }
        tokio::time::sleep(retry.delay(attempt)).await;
    }
    Ok(GetChunk { found, unprocessed: pending.into_iter().map(|i| offset + i).collect() })
}

/// Marker: a [`BatchGet`] returns one `Option<E>` per key, in the order of the keys (the
/// default).
///
/// ```no_run
/// # use ddb_model::prelude::*;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// # struct User { id: String }
/// # async fn demo(db: &Db) -> Result<(), Error> {
/// let batch: ddb_model::ops::BatchGet<'_, User, ddb_model::ops::InOrder> =
///     db.batch_get([User::key("ann")]);
/// let users: Vec<Option<User>> = batch.await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy)]
pub enum InOrder {}
/// Marker: a [`BatchGet`] returns the entities found, by key ([`BatchGet::by_key`]).
///
/// ```no_run
/// # use ddb_model::prelude::*;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// # struct User { id: String }
/// # async fn demo(db: &Db) -> Result<(), Error> {
/// let batch: ddb_model::ops::BatchGet<'_, User, ddb_model::ops::ByKey> =
///     db.batch_get([User::key("ann")]).by_key();
/// let found: std::collections::HashMap<Key<User>, User> = batch.await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy)]
pub enum ByKey {}

/// Reads many items of one entity type with `BatchGetItem`. Made by [`Db::batch_get`];
/// `.await` it (or call [`send`](BatchGet::send)).
///
/// The result has one `Option<E>` per input key, in the order of the keys (`None` where there
/// is no item); [`by_key`](BatchGet::by_key) returns a map instead. Keys given more than once
/// are read once (DynamoDB rejects duplicates), and every position still gets its entity.
/// Keys are sent in chunks of 100, [`concurrency`](BatchGet::concurrency) chunks at a time;
/// keys the service leaves unprocessed are sent again after an exponential backoff with full
/// jitter, up to [`max_attempts`](BatchGet::max_attempts) requests per chunk, after which the
/// read fails with [`Error::BatchGetIncomplete`] naming them. A request that fails (after the
/// SDK's own retries, throttling included) fails the read with its error. An item of another
/// entity type under a key is [`Error::WrongEntityType`]. Every key is checked before anything
/// is sent.
///
/// ```
/// use ddb_model::prelude::*;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// # struct User { id: String, name: String }
///
/// async fn demo(db: &Db) -> Result<(), Error> {
///     let ann = User { id: "ann".into(), name: "Ann".into() };
///     let bob = User { id: "bob".into(), name: "Bob".into() };
///     db.batch_put([&ann, &bob]).await?;
///
///     let keys = ["bob", "nobody", "ann", "bob"].map(User::key);
///     let users = db.batch_get(keys).consistent().await?;
///     assert_eq!(users, [Some(bob.clone()), None, Some(ann), Some(bob)]);
///     assert_eq!(db.requests().get(ddb_model::Op::BatchGetItem), 1);
///     Ok(())
/// }
/// # #[cfg(feature = "local")]
/// # #[tokio::main]
/// # async fn main() -> Result<(), Error> {
/// #     demo(&ddb_model::local::isolated_db().await?).await
/// # }
/// # #[cfg(not(feature = "local"))]
/// # fn main() {}
/// ```
#[must_use = "an operation does nothing until it is awaited"]
pub struct BatchGet<'a, E: Entity, R = InOrder> {
    /// Reads the keys: a batch get is a batch read of keys of one entity type.
    read: BatchRead<'a, E::Table>,
    /// The keys as given, in order.
    keys: Vec<Key<E>>,
    _result: PhantomData<fn() -> R>,
}

impl<T: Table> Db<T> {
    /// Reads the items of `keys` with `BatchGetItem`; see [`BatchGet`].
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let ids = ["ann", "bob"];
    /// let users: Vec<Option<User>> = db.batch_get(ids.map(User::key)).await?;
    /// # Ok(()) }
    /// ```
    pub fn batch_get<E: Entity<Table = T>>(
        &self,
        keys: impl IntoIterator<Item = Key<E>>,
    ) -> BatchGet<'_, E> {
        let keys: Vec<Key<E>> = keys.into_iter().collect();
        let mut read = self.batch_read();
        for key in &keys {
            read.add(key);
        }
        BatchGet { read, keys, _result: PhantomData }
    }
}

impl<'a, E: Entity, R> BatchGet<'a, E, R> {
    /// Strongly consistent reads (twice the read capacity).
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let users = db.batch_get([User::key("ann")]).consistent().await?;
    /// # Ok(()) }
    /// ```
    pub fn consistent(self) -> Self {
        BatchGet { read: self.read.consistent(), ..self }
    }

    /// How many chunks of 100 keys are in flight at once (default 4; 0 counts as 1).
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db, ids: Vec<String>) -> Result<(), Error> {
    /// let users = db.batch_get(ids.iter().map(User::key)).concurrency(8).await?;
    /// # Ok(()) }
    /// ```
    pub fn concurrency(self, chunks: usize) -> Self {
        BatchGet { read: self.read.concurrency(chunks), ..self }
    }

    /// Most requests per chunk, the first included, before keys still unprocessed are reported
    /// as [`Error::BatchGetIncomplete`] (default 8; 0 counts as 1).
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// match db.batch_get([User::key("ann")]).max_attempts(3).await {
    ///     Err(Error::BatchGetIncomplete { unprocessed, .. }) => { /* try these later */ }
    ///     other => { other?; }
    /// }
    /// # Ok(()) }
    /// ```
    pub fn max_attempts(self, attempts: u32) -> Self {
        BatchGet { read: self.read.max_attempts(attempts), ..self }
    }

    /// The backoff between attempts: after attempt `n` the pause is random between zero and
    /// `min(max, base * 2^(n-1))` (defaults: 50 ms, 2 s).
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let users = db
    ///     .batch_get([User::key("ann")])
    ///     .backoff(Duration::from_millis(100), Duration::from_secs(5))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn backoff(self, base: Duration, max: Duration) -> Self {
        BatchGet { read: self.read.backoff(base, max), ..self }
    }

    /// Returns the entities found, by key, instead of one `Option` per input key.
    ///
    /// ```no_run
    /// # use std::collections::HashMap;
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let found: HashMap<Key<User>, User> =
    ///     db.batch_get(["ann", "bob"].map(User::key)).by_key().await?;
    /// let ann = found.get(&User::key("ann"));
    /// # Ok(()) }
    /// ```
    pub fn by_key(self) -> BatchGet<'a, E, ByKey> {
        BatchGet { read: self.read, keys: self.keys, _result: PhantomData }
    }
}

impl<'a, E: Entity> BatchGet<'a, E, InOrder> {
    /// Sends the requests: one `Option<E>` per key, in the order of the keys.
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let users = db.batch_get([User::key("ann")]).send().await?;
    /// # Ok(()) }
    /// ```
    pub async fn send(self) -> Result<Vec<Option<E>>, Error> {
        let BatchReadResult { positions, mut items, .. } = self.read.send().await?;
        // A distinct key asked for several times is cloned for all but its last position.
        let mut remaining = vec![0usize; items.len()];
        for &u in &positions {
            remaining[u] += 1;
        }
        let mut out = Vec::with_capacity(positions.len());
        for &u in &positions {
            remaining[u] -= 1;
            let item = if remaining[u] == 0 { items[u].take() } else { items[u].clone() };
            out.push(item.map(from_item::<E>).transpose()?);
        }
        Ok(out)
    }
}

impl<'a, E: Entity> BatchGet<'a, E, ByKey> {
    /// Sends the requests: the entities found, by key.
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let found = db.batch_get([User::key("ann")]).by_key().send().await?;
    /// # Ok(()) }
    /// ```
    pub async fn send(self) -> Result<HashMap<Key<E>, E>, Error> {
        let BatchReadResult { positions, items, .. } = self.read.send().await?;
        let mut first_key: Vec<Option<Key<E>>> = vec![None; items.len()];
        for (key, &u) in self.keys.into_iter().zip(&positions) {
            first_key[u].get_or_insert(key);
        }
        let mut out = HashMap::with_capacity(items.len());
        for (key, item) in first_key.into_iter().zip(items) {
            if let (Some(key), Some(item)) = (key, item) {
                out.insert(key, from_item::<E>(item)?);
            }
        }
        Ok(out)
    }
}

impl<'a, E: Entity> IntoFuture for BatchGet<'a, E, InOrder> {
    type Output = Result<Vec<Option<E>>, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

impl<'a, E: Entity> IntoFuture for BatchGet<'a, E, ByKey> {
    type Output = Result<HashMap<Key<E>, E>, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

/// Reads items of several entity types of one table in one batch. Made by
/// [`Db::batch_read`]; add keys with [`get`](BatchRead::get), which returns a typed
/// [`Slot`], then `.await` for a [`BatchReadResult`] to read each slot from.
///
/// Runs like [`BatchGet`]: duplicates merged, chunks of 100 in parallel, unprocessed keys
/// retried and finally reported as [`Error::BatchGetIncomplete`]. Items are converted when a
/// slot is read, so a foreign item under a key is [`Error::WrongEntityType`] from
/// [`BatchReadResult::get`].
///
/// ```
/// use ddb_model::prelude::*;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// # struct User { id: String }
/// # #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// # #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
/// # struct Order { user: String, seq: u32, cents: u64 }
///
/// async fn demo(db: &Db) -> Result<(), Error> {
///     let ann = User { id: "ann".into() };
///     let order = Order { user: "ann".into(), seq: 1, cents: 990 };
///     db.batch_write().put(&ann).put(&order).await?;
///
///     let mut batch = db.batch_read();
///     let user = batch.get(User::key("ann"));
///     let first = batch.get(Order::key("ann", 1));
///     let second = batch.get(Order::key("ann", 2));
///     let found = batch.consistent().await?;
///     assert_eq!(found.get(user)?, Some(ann));
///     assert_eq!(found.get(first)?, Some(order));
///     assert_eq!(found.get(second)?, None);
///     Ok(())
/// }
/// # #[cfg(feature = "local")]
/// # #[tokio::main]
/// # async fn main() -> Result<(), Error> {
/// #     demo(&ddb_model::local::isolated_db().await?).await
/// # }
/// # #[cfg(not(feature = "local"))]
/// # fn main() {}
/// ```
#[must_use = "an operation does nothing until it is awaited"]
pub struct BatchRead<'a, T: Table> {
    db: &'a Db<T>,
    batch: u64,
    plan: GetPlan,
    error: Option<Error>,
    consistent: bool,
    retry: Retry,
}

/// What a [`BatchRead`] found: read each [`Slot`] with [`get`](BatchReadResult::get).
///
/// ```no_run
/// # use ddb_model::prelude::*;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// # struct User { id: String }
/// # async fn demo(db: &Db) -> Result<(), Error> {
/// let mut batch = db.batch_read();
/// let slot = batch.get(User::key("ann"));
/// let result: ddb_model::ops::BatchReadResult = batch.await?;
/// if let Some(item) = result.item(slot) {
///     println!("raw item: {item:?}");
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct BatchReadResult {
    batch: u64,
    positions: Vec<usize>,
    items: Vec<Option<Item>>,
}

impl<T: Table> Db<T> {
    /// Starts a batch read of items of any entity types of this table; see [`BatchRead`].
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let mut batch = db.batch_read();
    /// let ann = batch.get(User::key("ann"));
    /// let ann: Option<User> = batch.await?.get(ann)?;
    /// # Ok(()) }
    /// ```
    pub fn batch_read(&self) -> BatchRead<'_, T> {
        static BATCHES: AtomicU64 = AtomicU64::new(0);
        BatchRead {
            db: self,
            batch: BATCHES.fetch_add(1, Ordering::Relaxed),
            plan: GetPlan::default(),
            error: None,
            consistent: false,
            retry: Retry::default(),
        }
    }
}

impl<'a, T: Table> BatchRead<'a, T> {
    /// Adds `key` to the batch. A key that breaks the DynamoDB limits fails the whole batch
    /// when it is sent, before anything is sent.
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let mut batch = db.batch_read();
    /// let slots: Vec<_> = ["ann", "bob"].into_iter().map(|id| batch.get(User::key(id))).collect();
    /// let found = batch.await?;
    /// for slot in slots {
    ///     let user: Option<User> = found.get(slot)?;
    /// }
    /// # Ok(()) }
    /// ```
    pub fn get<E: Entity<Table = T>>(&mut self, key: Key<E>) -> Slot<E> {
        Slot::new(self.batch, self.add(&key))
    }

    /// Adds `key`; its position among the keys added.
    fn add<E: Entity<Table = T>>(&mut self, key: &Key<E>) -> usize {
        let position = self.plan.positions.len();
        if let Err(e) = self.plan.add(key) {
            self.error.get_or_insert(e);
            // Keep positions aligned with slots; the batch fails when sent.
            self.plan.positions.push(usize::MAX);
        }
        position
    }

    /// Strongly consistent reads (twice the read capacity).
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let found = db.batch_read().consistent().await?;
    /// # Ok(()) }
    /// ```
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }

    /// How many chunks of 100 keys are in flight at once (default 4; 0 counts as 1).
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let found = db.batch_read().concurrency(2).await?;
    /// # Ok(()) }
    /// ```
    pub fn concurrency(self, chunks: usize) -> Self {
        BatchRead { retry: self.retry.concurrency(chunks), ..self }
    }

    /// Most requests per chunk before keys still unprocessed are reported as
    /// [`Error::BatchGetIncomplete`] (default 8; 0 counts as 1).
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let found = db.batch_read().max_attempts(3).await?;
    /// # Ok(()) }
    /// ```
    pub fn max_attempts(self, attempts: u32) -> Self {
        BatchRead { retry: self.retry.max_attempts(attempts), ..self }
    }

    /// The backoff between attempts (see [`BatchGet::backoff`]).
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # use ddb_model::prelude::*;
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let found =
    ///     db.batch_read().backoff(Duration::from_millis(10), Duration::from_secs(1)).await?;
    /// # Ok(()) }
    /// ```
    pub fn backoff(self, base: Duration, max: Duration) -> Self {
        BatchRead { retry: self.retry.backoff(base, max), ..self }
    }

    /// Sends the requests.
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let found = db.batch_read().send().await?;
    /// # Ok(()) }
    /// ```
    pub async fn send(self) -> Result<BatchReadResult, Error> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let items = if self.plan.specs.is_empty() {
            Vec::new()
        } else {
            self.plan.run(self.db, self.consistent, self.retry).await?
        };
        Ok(BatchReadResult { batch: self.batch, positions: self.plan.positions, items })
    }
}

impl<'a, T: Table> IntoFuture for BatchRead<'a, T> {
    type Output = Result<BatchReadResult, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

impl BatchReadResult {
    /// The raw item of `slot` (`None` when there is none, or the slot is of another batch).
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let mut batch = db.batch_read();
    /// let slot = batch.get(User::key("ann"));
    /// let found = batch.await?;
    /// let exists = found.item(slot).is_some();
    /// # Ok(()) }
    /// ```
    pub fn item<E>(&self, slot: Slot<E>) -> Option<&Item> {
        if slot.owner != self.batch {
            return None;
        }
        let unique = *self.positions.get(slot.position)?;
        self.items.get(unique)?.as_ref()
    }

    /// The entity of `slot`: `None` when there is no item under its key,
    /// [`Error::WrongEntityType`] when the item is of another entity type. A slot of another
    /// batch is an error too.
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let mut batch = db.batch_read();
    /// let slot = batch.get(User::key("ann"));
    /// let ann: Option<User> = batch.await?.get(slot)?;
    /// # Ok(()) }
    /// ```
    pub fn get<E: Entity>(&self, slot: Slot<E>) -> Result<Option<E>, Error> {
        if slot.owner != self.batch || slot.position >= self.positions.len() {
            return Err(Error::InvalidExpression(format!(
                "a `{}` slot of another batch read",
                E::NAME
            )));
        }
        self.item(slot).cloned().map(from_item::<E>).transpose()
    }
}

// ---------------------------------------------------------------------------------------------
// BatchWriteItem
// ---------------------------------------------------------------------------------------------

/// One write of a batch, converted and checked.
struct WriteSpec {
    action: BatchAction,
    entity: &'static str,
    raw: RawKey,
    request: WriteRequest,
}

/// Puts and deletes of items of one table with `BatchWriteItem`. Made by
/// [`Db::batch_write`], [`Db::batch_put`] or [`Db::batch_delete`]; `.await` it (or call
/// [`send`](BatchWrite::send)).
///
/// **Batch writes have no conditions.** A put overwrites whatever is stored under its key and
/// a delete removes whatever is there, an item of another entity type included: the
/// entity-type guard of single-item writes does not apply. Entities with a version field are
/// refused by [`put`](BatchWrite::put) ([`Error::VersionedBatchPut`]), because the version
/// cannot be checked; [`put_unchecked`](BatchWrite::put_unchecked) writes them anyway.
/// Deletes do not check versions either (like a single-item delete without
/// `expect_version`).
///
/// Every write is converted and checked (keys, item size, attribute names) when it is added,
/// and the batch is checked for two writes to one item ([`Error::DuplicateBatchKey`]; DynamoDB
/// rejects such batches and a put and a delete of one item would be ambiguous): any bad input
/// fails the batch before anything is sent. Writes go out in chunks of 25,
/// [`concurrency`](BatchWrite::concurrency) chunks at a time, in no particular order. Writes
/// the service leaves unprocessed are sent again after an exponential backoff with full
/// jitter, up to [`max_attempts`](BatchWrite::max_attempts) requests per chunk.
///
/// The batch is not atomic. When it does not complete, the error is
/// [`Error::BatchWriteIncomplete`]: how many writes were applied and exactly which were not
/// (still unprocessed, in a request that failed, or never sent after a request failed). The
/// writes are plain puts and deletes, so sending the unprocessed ones again is safe.
///
/// ```
/// use ddb_model::prelude::*;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// # struct User { id: String }
/// # #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// # #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
/// # struct Order { user: String, seq: u32 }
///
/// async fn demo(db: &Db) -> Result<(), Error> {
///     let users: Vec<User> = (0..60).map(|i| User { id: format!("u{i}") }).collect();
///     db.batch_put(&users).await?; // 3 requests: 25 + 25 + 10
///     assert_eq!(db.requests().get(ddb_model::Op::BatchWriteItem), 3);
///
///     db.batch_write()
///         .put(&Order { user: "u1".into(), seq: 1 })
///         .delete(User::key("u2"))
///         .await?;
///     assert_eq!(User::get(db, "u2").await?, None);
///
///     // Two writes to one item: refused before anything is sent.
///     let err = db.batch_write().put(&users[0]).delete(User::key("u0")).await.unwrap_err();
///     assert!(matches!(err, Error::DuplicateBatchKey { .. }));
///     Ok(())
/// }
/// # #[cfg(feature = "local")]
/// # #[tokio::main]
/// # async fn main() -> Result<(), Error> {
/// #     demo(&ddb_model::local::isolated_db().await?).await
/// # }
/// # #[cfg(not(feature = "local"))]
/// # fn main() {}
/// ```
#[must_use = "an operation does nothing until it is awaited"]
pub struct BatchWrite<'a, T: Table> {
    db: &'a Db<T>,
    writes: Vec<WriteSpec>,
    error: Option<Error>,
    retry: Retry,
}

impl<T: Table> Db<T> {
    /// Starts an empty batch of puts and deletes; see [`BatchWrite`].
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// db.batch_write()
    ///     .put(&User { id: "ann".into() })
    ///     .delete(User::key("bob"))
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn batch_write(&self) -> BatchWrite<'_, T> {
        BatchWrite { db: self, writes: Vec::new(), error: None, retry: Retry::default() }
    }

    /// A batch putting every entity of `entities`; see [`BatchWrite`].
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let users: Vec<User> = (0..100).map(|i| User { id: i.to_string() }).collect();
    /// db.batch_put(&users).await?;
    /// # Ok(()) }
    /// ```
    pub fn batch_put<'e, E: Entity<Table = T>>(
        &self,
        entities: impl IntoIterator<Item = &'e E>,
    ) -> BatchWrite<'_, T> {
        self.batch_write().put_all(entities)
    }

    /// A batch deleting the items of `keys`; see [`BatchWrite`].
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// db.batch_delete(["ann", "bob"].map(User::key)).await?;
    /// # Ok(()) }
    /// ```
    pub fn batch_delete<E: Entity<Table = T>>(
        &self,
        keys: impl IntoIterator<Item = Key<E>>,
    ) -> BatchWrite<'_, T> {
        self.batch_write().delete_all(keys)
    }
}

impl<'a, T: Table> BatchWrite<'a, T> {
    fn push(&mut self, write: Result<WriteSpec, Error>) {
        match write {
            Ok(w) => self.writes.push(w),
            Err(e) => {
                self.error.get_or_insert(e);
            }
        }
    }

    fn put_spec<E: Entity<Table = T>>(
        entity: &E,
        version: Option<u64>,
    ) -> Result<WriteSpec, Error> {
        let key = entity.key();
        let item = to_item(entity, version)?;
        let put = PutRequest::builder()
            .set_item(Some(item))
            .build()
            .map_err(|e| Error::InvalidExpression(e.to_string()))?;
        Ok(WriteSpec {
            action: BatchAction::Put,
            entity: E::NAME,
            raw: RawKey::of(&key),
            request: WriteRequest::builder().put_request(put).build(),
        })
    }

    /// Adds a put of `entity`: it is stored whole, overwriting whatever is stored under its
    /// key. An entity with a version field is refused ([`Error::VersionedBatchPut`], when the
    /// batch is sent, before anything is sent): use
    /// [`put_unchecked`](BatchWrite::put_unchecked), or the single-item writes.
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// db.batch_write().put(&User { id: "ann".into() }).await?;
    /// # Ok(()) }
    /// ```
    pub fn put<E: Entity<Table = T>>(mut self, entity: &E) -> Self {
        let write = if E::VERSION.is_some() {
            Err(Error::VersionedBatchPut { entity: E::NAME, key: entity.key().to_string() })
        } else {
            Self::put_spec(entity, None)
        };
        self.push(write);
        self
    }

    /// Adds a put of `entity` without optimistic locking: for an entity with a version
    /// field, the item is stored with the next version (the entity's version + 1, as a
    /// checked write would store), whatever version is stored. `entity` itself is not
    /// changed. For bulk loads and migrations; the same as [`put`](BatchWrite::put) for an
    /// entity without a version field.
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "DOC#<id>", sk = "DOC", version = version)]
    /// # struct Doc { id: String, version: u64 }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let imported = Doc { id: "d1".into(), version: 0 };
    /// db.batch_write().put_unchecked(&imported).await?; // stored at version 1
    /// # Ok(()) }
    /// ```
    pub fn put_unchecked<E: Entity<Table = T>>(mut self, entity: &E) -> Self {
        let write =
            next_version::<E>(entity.version()).and_then(|(_, next)| Self::put_spec(entity, next));
        self.push(write);
        self
    }

    /// Adds a put of every entity of `entities` (see [`put`](BatchWrite::put)).
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db, users: Vec<User>) -> Result<(), Error> {
    /// db.batch_write().put_all(&users).delete(User::key("old")).await?;
    /// # Ok(()) }
    /// ```
    pub fn put_all<'e, E: Entity<Table = T>>(
        mut self,
        entities: impl IntoIterator<Item = &'e E>,
    ) -> Self {
        for entity in entities {
            self = self.put(entity);
        }
        self
    }

    /// Adds a delete of the item of `key`, whatever its entity type. Deleting a missing item
    /// is not an error.
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// db.batch_write().delete(User::key("ann")).await?;
    /// # Ok(()) }
    /// ```
    pub fn delete<E: Entity<Table = T>>(mut self, key: Key<E>) -> Self {
        let write = key.validate().and_then(|()| {
            let delete = DeleteRequest::builder()
                .set_key(Some(key_item(&key)))
                .build()
                .map_err(|e| Error::InvalidExpression(e.to_string()))?;
            Ok(WriteSpec {
                action: BatchAction::Delete,
                entity: E::NAME,
                raw: RawKey::of(&key),
                request: WriteRequest::builder().delete_request(delete).build(),
            })
        });
        self.push(write);
        self
    }

    /// Adds a delete of the item of every key of `keys` (see [`delete`](BatchWrite::delete)).
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// db.batch_write().delete_all(["ann", "bob"].map(User::key)).await?;
    /// # Ok(()) }
    /// ```
    pub fn delete_all<E: Entity<Table = T>>(
        mut self,
        keys: impl IntoIterator<Item = Key<E>>,
    ) -> Self {
        for key in keys {
            self = self.delete(key);
        }
        self
    }

    /// The number of writes added so far (writes that failed their checks not included).
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # fn demo(db: &Db) {
    /// let batch = db.batch_delete(["ann", "bob"].map(User::key));
    /// assert_eq!(batch.len(), 2);
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.writes.len()
    }

    /// True when no write was added.
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # fn demo(db: &Db) {
    /// assert!(db.batch_write().is_empty());
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// How many chunks of 25 writes are in flight at once (default 4; 0 counts as 1).
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db, users: Vec<User>) -> Result<(), Error> {
    /// db.batch_put(&users).concurrency(1).await?; // one request at a time
    /// # Ok(()) }
    /// ```
    pub fn concurrency(self, chunks: usize) -> Self {
        BatchWrite { retry: self.retry.concurrency(chunks), ..self }
    }

    /// Most requests per chunk, the first included, before writes still unprocessed are
    /// reported as [`Error::BatchWriteIncomplete`] (default 8; 0 counts as 1).
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db, users: Vec<User>) -> Result<(), Error> {
    /// if let Err(Error::BatchWriteIncomplete { written, unprocessed, .. }) =
    ///     db.batch_put(&users).max_attempts(3).await
    /// {
    ///     eprintln!("{written} written; not written: {unprocessed:?}");
    /// }
    /// # Ok(()) }
    /// ```
    pub fn max_attempts(self, attempts: u32) -> Self {
        BatchWrite { retry: self.retry.max_attempts(attempts), ..self }
    }

    /// The backoff between attempts: after attempt `n` the pause is random between zero and
    /// `min(max, base * 2^(n-1))` (defaults: 50 ms, 2 s).
    ///
    /// ```no_run
    /// # use std::time::Duration;
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db, users: Vec<User>) -> Result<(), Error> {
    /// db.batch_put(&users).backoff(Duration::from_millis(25), Duration::from_secs(1)).await?;
    /// # Ok(()) }
    /// ```
    pub fn backoff(self, base: Duration, max: Duration) -> Self {
        BatchWrite { retry: self.retry.backoff(base, max), ..self }
    }

    /// Sends the requests.
    ///
    /// ```no_run
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db, users: Vec<User>) -> Result<(), Error> {
    /// db.batch_put(&users).send().await?;
    /// # Ok(()) }
    /// ```
    pub async fn send(self) -> Result<(), Error> {
        let BatchWrite { db, writes, error, retry } = self;
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

        let mut written = 0;
        let mut unprocessed: Vec<usize> = Vec::new();
        let mut failure: Option<Error> = None;
        let mut started = 0;
        let chunks =
            writes.chunks(MAX_BATCH_WRITES).enumerate().inspect(|(_, c)| started += c.len());
        run_chunks(
            chunks,
            retry.concurrency,
            |(i, chunk)| write_chunk(db, chunk, i * MAX_BATCH_WRITES, retry),
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
        if unprocessed.is_empty() && failure.is_none() {
            return Ok(());
        }
        unprocessed.sort_unstable();
        Err(Error::BatchWriteIncomplete {
            written,
            attempts: retry.max_attempts,
            unprocessed: unprocessed
                .into_iter()
                .map(|i| UnprocessedWrite {
                    action: writes[i].action,
                    key: writes[i].raw.batch_key(writes[i].entity),
                })
                .collect(),
            source: failure.map(Box::new),
        })
    }
}

struct DisplayRaw<'k>(&'k RawKey);

impl fmt::Display for DisplayRaw<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        display_key(f, &self.0.pk, self.0.sk.as_deref())
    }
}

impl<'a, T: Table> IntoFuture for BatchWrite<'a, T> {
    type Output = Result<(), Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
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
) -> WriteChunk {
    let mut pending: Vec<usize> = (0..specs.len()).collect();
    let mut attempt = 0;
    let mut error = None;
    loop {
        attempt += 1;
        let requests = pending.iter().map(|&i| specs[i].request.clone()).collect();
        let request = db
            .client()
            .batch_write_item()
            .request_items(db.table_name(), requests)
            .return_consumed_capacity(ReturnConsumedCapacity::Total);
        let result =
            retry::send(db, Op::BatchWriteItem, |t| request.customize().interceptor(t).send())
                .await;
        let out = match result {
            Ok(out) => out,
            Err(e) => {
                // The SDK has retried what it could (throttling included); what this request
                // carried is not known to be applied.
                error = Some(Error::from(e));
                break;
            }
        };
        for capacity in out.consumed_capacity() {
            db.record_capacity(Op::BatchWriteItem, Some(capacity));
        }
        let unprocessed: HashSet<RawKey> = out
            .unprocessed_items
            .and_then(|mut u| u.remove(db.table_name()))
            .map(|writes| writes.iter().filter_map(write_key::<T>).collect())
            .unwrap_or_default();
        pending.retain(|&i| unprocessed.contains(&specs[i].raw));
        if pending.is_empty() || attempt >= retry.max_attempts {
            break;
        }
        tokio::time::sleep(retry.delay(attempt)).await;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_is_bounded_by_the_exponential_and_the_cap() {
        let retry = Retry {
            concurrency: 1,
            max_attempts: 40,
            base: Duration::from_millis(10),
            max: Duration::from_millis(300),
        };
        for attempt in 1..40 {
            let bound = Duration::from_millis(10)
                .saturating_mul(1u32.checked_shl(attempt - 1).unwrap_or(u32::MAX))
                .min(Duration::from_millis(300));
            for _ in 0..20 {
                assert!(retry.delay(attempt) <= bound, "attempt {attempt}");
            }
        }
    }

    #[test]
    fn huge_backoffs_neither_overflow_nor_panic() {
        let retry = Retry { base: Duration::MAX, max: Duration::MAX, ..Retry::default() };
        assert!(retry.delay(u32::MAX) <= Duration::MAX);
    }

    #[test]
    fn raw_keys_are_read_from_string_attributes() {
        use crate::DefaultTable;
        let mut item = Item::new();
        item.insert("pk".into(), AttributeValue::S("A".into()));
        assert_eq!(RawKey::from_item::<DefaultTable>(&item), None, "the sort key is missing");
        item.insert("sk".into(), AttributeValue::S("B".into()));
        assert_eq!(
            RawKey::from_item::<DefaultTable>(&item),
            Some(RawKey { pk: "A".into(), sk: Some("B".into()) })
        );
        item.insert("pk".into(), AttributeValue::N("1".into()));
        assert_eq!(RawKey::from_item::<DefaultTable>(&item), None);
    }
}
