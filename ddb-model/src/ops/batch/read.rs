//! [`BatchRead`]: `BatchGetItem` of several entity types, read back through slots; the
//! plan and chunks of every batch get.

use crate::ops::startable::startable;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use aws_sdk_dynamodb::types::KeysAndAttributes;

use super::MAX_BATCH_GET_KEYS;
use super::keys::*;
use super::run::*;
use crate::db::{Db, Sealer};
use crate::error::Error;
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, Table};
use crate::ops::slot::Slot;
use crate::ops::{Running, key_item, retry};
use crate::stats::Op;

/// One distinct key of a batch get.
pub(super) struct GetSpec {
    pub(super) raw: RawKey,
    pub(super) entity: &'static str,
    pub(super) key: Item,
}

/// The distinct keys of a batch get, and for each input position the distinct key it asks for.
#[derive(Default)]
pub(super) struct GetPlan {
    pub(super) specs: Vec<GetSpec>,
    pub(super) index: HashMap<RawKey, usize>,
    pub(super) positions: Vec<usize>,
}

impl GetPlan {
    /// Adds `key`, merged with an equal key given before. Checks the key limits.
    pub(super) fn add<E: Entity>(&mut self, key: &Key<E>) -> Result<usize, Error> {
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
    pub(super) async fn run<T: Table>(
        &self,
        db: &Db<T>,
        consistent: bool,
        retry: Retry,
    ) -> Result<Vec<Option<Item>>, Error> {
        let mut found: HashMap<RawKey, Item> = HashMap::new();
        let mut unprocessed: Vec<usize> = Vec::new();
        let mut failure: Option<Error> = None;
        for spec in &self.specs {
            crate::ops::tenant::key(db, Op::BatchGetItem, &spec.key)?;
        }
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
                attempts: retry.policy.tries,
                unprocessed: unprocessed
                    .into_iter()
                    .map(|i| self.specs[i].raw.batch_key(self.specs[i].entity))
                    .collect(),
            });
        }
        Ok(self.specs.iter().map(|spec| found.remove(&spec.raw)).collect())
    }
}

pub(super) struct GetChunk {
    pub(super) found: Vec<Item>,
    /// Indexes (into the whole plan) of the keys still unprocessed after the last attempt.
    pub(super) unprocessed: Vec<usize>,
}

pub(super) async fn get_chunk<T: Table>(
    db: &Db<T>,
    specs: &[GetSpec],
    offset: usize,
    consistent: bool,
    retry: Retry,
) -> Result<GetChunk, Error> {
    let round = |pending: &[usize]| {
        let keys = KeysAndAttributes::builder()
            .set_keys(Some(pending.iter().map(|&i| specs[i].key.clone()).collect()))
            .set_consistent_read(consistent.then_some(true))
            .build()
            .map_err(Error::build);
        async move {
            let request = db
                .client()
                .batch_get_item()
                .request_items(db.table_name(), keys?)
                .set_return_consumed_capacity(db.capacity_mode());
            let call = retry::Call::of_all(Op::BatchGetItem, specs.iter().map(|s| s.entity));
            let out = retry::send(db, call, request).await?;
            let found = out.responses.and_then(|mut r| r.remove(db.table_name()));
            let unprocessed = out
                .unprocessed_keys
                .and_then(|mut u| u.remove(db.table_name()))
                .map(|k| k.keys.iter().filter_map(RawKey::from_item::<T>).collect())
                .unwrap_or_default();
            Ok((found.unwrap_or_default(), unprocessed))
        }
    };
    let (found, pending, error) =
        until_processed(specs.len(), |i| &specs[i].raw, retry.policy, round).await;
    match error {
        Some(e) => Err(e),
        None => {
            Ok(GetChunk { found, unprocessed: pending.into_iter().map(|i| offset + i).collect() })
        }
    }
}

/// Reads items of several entity types of one table in one batch. Made by
/// [`Db::batch_read`]; add keys with [`get`](BatchRead::get), which returns a typed
/// [`Slot`], then `.await` for a [`BatchReadResult`] to read each slot from.
///
/// Runs like [`BatchGet`](crate::ops::BatchGet): duplicates merged, chunks of 100 in
/// parallel, unprocessed keys retried and finally reported as [`Error::BatchGetIncomplete`].
/// Items are converted when a slot is read, so a foreign item under a key is
/// [`Error::WrongEntityType`] from [`BatchReadResult::get`].
///
/// ```
/// use std::time::Duration;
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
///     assert_eq!(found.get(user)?, Some(ann.clone()));
///     assert_eq!(found.get(first)?, Some(order));
///     assert_eq!(found.get(second)?, None);
///
///     // Two chunks in flight at most, three attempts, a shorter backoff; `send` for `.await`.
///     let mut batch = db.batch_read().concurrency(2).max_attempts(3);
///     let user = batch.get(User::key("ann"));
///     let found = batch.backoff(Duration::from_millis(10), Duration::from_secs(1)).send().await?;
///     assert!(found.item(user).is_some()); // the raw item
///
///     let mut batch = db.batch_read();
///     let slots: Vec<_> = ["ann", "bob"].into_iter().map(|id| batch.get(User::key(id))).collect();
///     let found = batch.await?;
///     let users: Vec<Option<User>> =
///         slots.into_iter().map(|s| found.get(s)).collect::<Result<_, _>>()?;
///     assert_eq!(users, [Some(ann), None]);
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
    pub(super) db: &'a Db<T>,
    pub(super) batch: u64,
    pub(super) plan: GetPlan,
    pub(super) error: Option<Error>,
    pub(super) consistent: bool,
    pub(super) retry: Retry,
    pub(super) running: Running<'a, Result<BatchReadResult, Error>>,
}

/// What a [`BatchRead`] found: read each [`Slot`] with [`get`](BatchReadResult::get).
/// Example: [`BatchRead`].
#[derive(Debug)]
pub struct BatchReadResult {
    pub(super) batch: u64,
    pub(super) positions: Vec<usize>,
    pub(super) items: Vec<Option<Item>>,
    /// Opens sealed entities' items.
    pub(super) sealer: Sealer,
}

impl<T: Table> Db<T> {
    /// Starts a batch read of items of any entity types of this table; see [`BatchRead`].
    pub fn batch_read(&self) -> BatchRead<'_, T> {
        static BATCHES: AtomicU64 = AtomicU64::new(0);
        BatchRead {
            db: self,
            batch: BATCHES.fetch_add(1, Ordering::Relaxed),
            plan: GetPlan::default(),
            error: None,
            consistent: false,
            retry: Retry::default(),
            running: Running::default(),
        }
    }
}

impl<'a, T: Table> BatchRead<'a, T> {
    /// Adds `key` to the batch. A key that breaks the DynamoDB limits fails the whole batch
    /// when it is sent, before anything is sent. Example: [`BatchRead`].
    pub fn get<E: Entity<Table = T>>(&mut self, key: Key<E>) -> Slot<E> {
        Slot::new(self.batch, self.add(&key))
    }

    /// Adds `key`; its position among the keys added.
    pub(super) fn add<E: Entity<Table = T>>(&mut self, key: &Key<E>) -> usize {
        let position = self.plan.positions.len();
        let refused = |()| {
            crate::ops::rekey::refuse_in::<E, T>(
                self.db,
                "a batch get",
                crate::ops::rekey::READS_OLD,
            )
        };
        if let Err(e) = self.db.can_seal::<E>().and_then(refused).and_then(|()| self.plan.add(key))
        {
            self.error.get_or_insert(e);
            // Keep positions aligned with slots; the batch fails when sent.
            self.plan.positions.push(usize::MAX);
        }
        position
    }

    /// Strongly consistent reads (twice the read capacity).
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }

    /// How many chunks of 100 keys are in flight at once (default 4; 0 counts as 1).
    pub fn concurrency(self, chunks: usize) -> Self {
        BatchRead { retry: self.retry.concurrency(chunks), ..self }
    }

    /// Most requests per chunk before keys still unprocessed are reported as
    /// [`Error::BatchGetIncomplete`] (default 8; 0 counts as 1).
    pub fn max_attempts(self, attempts: u32) -> Self {
        BatchRead { retry: self.retry.max_attempts(attempts), ..self }
    }

    /// The backoff between attempts (see [`BatchGet::backoff`](crate::ops::BatchGet::backoff)).
    pub fn backoff(self, base: Duration, max: Duration) -> Self {
        BatchRead { retry: self.retry.backoff(base, max), ..self }
    }

    /// Sends the requests.
    pub async fn send(self) -> Result<BatchReadResult, Error> {
        let span = crate::telemetry::OperationSpan::new("batch_get", self.db.table_name());
        span.run(async move {
            if let Some(e) = self.error {
                return Err(e);
            }
            let items = if self.plan.specs.is_empty() {
                Vec::new()
            } else {
                self.plan.run(self.db, self.consistent, self.retry).await?
            };
            let (batch, positions, sealer) = (self.batch, self.plan.positions, self.db.sealer());
            Ok(BatchReadResult { batch, positions, items, sealer })
        })
        .await
    }
}

startable!(
    ['a, T: Table] BatchRead<'a, T> => Result<BatchReadResult, Error>,
    |batch| batch.db.batch_read(),
    send
);

impl BatchReadResult {
    /// The raw item of `slot` (`None` when there is none, or the slot is of another batch).
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
    pub fn get<E: Entity>(&self, slot: Slot<E>) -> Result<Option<E>, Error> {
        if slot.owner != self.batch || slot.position >= self.positions.len() {
            return Err(Error::InvalidRequest {
                path: String::new(),
                problem: crate::error::RequestProblem::ForeignSlot { entity: E::NAME },
            });
        }
        self.item(slot).cloned().map(|item| self.sealer.open::<E>(item)).transpose()
    }
}
