//! [`BatchGet`]: `BatchGetItem` of one entity type, in order or by key.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::time::Duration;

use super::read::*;
use crate::db::Db;
use crate::error::Error;
use crate::key::Key;
use crate::model::{Entity, Table, is_expired};
use crate::ops::{BoxFuture, Running, Startable, builder_future};

/// Marker: a [`BatchGet`] returns one `Option<E>` per key, in the order of the keys (the
/// default). Example: [`BatchGet`].
#[derive(Debug, Clone, Copy)]
pub enum InOrder {}
/// Marker: a [`BatchGet`] returns the entities found, by key ([`BatchGet::by_key`]).
/// Example: [`BatchGet`].
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
/// use std::time::Duration;
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
///
///     // By key; two chunks in flight at most, a longer backoff, `send` instead of `.await`.
///     let found = db
///         .batch_get(["ann", "nobody"].map(User::key))
///         .by_key()
///         .concurrency(2)
///         .backoff(Duration::from_millis(100), Duration::from_secs(5))
///         .send()
///         .await?;
///     assert_eq!(found.get(&User::key("ann")).map(|u| u.name.as_str()), Some("Ann"));
///     assert_eq!(found.len(), 1);
///
///     match db.batch_get([User::key("ann")]).max_attempts(3).await {
///         Err(Error::BatchGetIncomplete { unprocessed, .. }) => { /* try these later */ }
///         other => { other?; }
///     }
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
    pub(super) read: BatchRead<'a, E::Table>,
    /// The keys as given, in order.
    pub(super) keys: Vec<Key<E>>,
    /// Expired items are returned (see [`include_expired`](BatchGet::include_expired)).
    pub(super) include_expired: bool,
    pub(super) running: Running<'a, ReadKeys<E>>,
    pub(super) _result: PhantomData<fn() -> R>,
}

/// What a started batch get returns before its final form: the read and the keys.
type ReadKeys<E> = Result<(BatchReadResult, Vec<Key<E>>), Error>;

impl<T: Table> Db<T> {
    /// Reads the items of `keys` with `BatchGetItem`; see [`BatchGet`].
    pub fn batch_get<E: Entity<Table = T>>(
        &self,
        keys: impl IntoIterator<Item = Key<E>>,
    ) -> BatchGet<'_, E> {
        let keys: Vec<Key<E>> = keys.into_iter().collect();
        let mut read = self.batch_read();
        for key in &keys {
            read.add(key);
        }
        BatchGet {
            read,
            keys,
            include_expired: false,
            running: Running::default(),
            _result: PhantomData,
        }
    }
}

impl<'a, E: Entity, R> BatchGet<'a, E, R> {
    /// Strongly consistent reads (twice the read capacity).
    pub fn consistent(self) -> Self {
        BatchGet { read: self.read.consistent(), ..self }
    }

    /// Returns items whose expiry time (`#[entity(ttl = ..)]`) has passed but which the
    /// service has not deleted yet. By default they read as absent (`None`, or no entry by
    /// key), as in [`Get::include_expired`](crate::ops::Get::include_expired); their read
    /// capacity is consumed either way.
    pub fn include_expired(self) -> Self {
        BatchGet { include_expired: true, ..self }
    }

    /// How many chunks of 100 keys are in flight at once (default 4; 0 counts as 1).
    pub fn concurrency(self, chunks: usize) -> Self {
        BatchGet { read: self.read.concurrency(chunks), ..self }
    }

    /// Most requests per chunk, the first included, before keys still unprocessed are reported
    /// as [`Error::BatchGetIncomplete`] (default 8; 0 counts as 1). Example: [`BatchGet`].
    pub fn max_attempts(self, attempts: u32) -> Self {
        BatchGet { read: self.read.max_attempts(attempts), ..self }
    }

    /// The backoff between attempts: after attempt `n` the pause is random between zero and
    /// `min(max, base * 2^(n-1))` (defaults: 50 ms, 2 s).
    pub fn backoff(self, base: Duration, max: Duration) -> Self {
        BatchGet { read: self.read.backoff(base, max), ..self }
    }

    /// Returns the entities found, by key, instead of one `Option` per input key.
    pub fn by_key(self) -> BatchGet<'a, E, ByKey> {
        BatchGet {
            read: self.read,
            keys: self.keys,
            include_expired: self.include_expired,
            running: Running::default(),
            _result: PhantomData,
        }
    }
}

impl<'a, E: Entity> BatchGet<'a, E, InOrder> {
    /// Sends the requests: one `Option<E>` per key, in the order of the keys.
    pub async fn send(self) -> Result<Vec<Option<E>>, Error> {
        in_order(self.read_keys().await?)
    }
}

impl<'a, E: Entity> BatchGet<'a, E, ByKey> {
    /// Sends the requests: the entities found, by key.
    pub async fn send(self) -> Result<HashMap<Key<E>, E>, Error> {
        by_key(self.read_keys().await?)
    }
}

impl<E: Entity, R> BatchGet<'_, E, R> {
    /// Reads the items (those expired read as absent, unless asked for), with the keys.
    async fn read_keys(self) -> ReadKeys<E> {
        let cutoff = if self.include_expired { None } else { self.read.db.expiry_cutoff::<E>() };
        let mut result = self.read.send().await?;
        if let Some((attr, now)) = cutoff {
            for item in &mut result.items {
                if item.as_ref().is_some_and(|i| is_expired(i, attr, now)) {
                    *item = None;
                }
            }
        }
        Ok((result, self.keys))
    }
}

/// The entities of a batch read, one per key in the order of the keys.
fn in_order<E: Entity>(
    (result, _): (BatchReadResult, Vec<Key<E>>),
) -> Result<Vec<Option<E>>, Error> {
    let BatchReadResult { positions, mut items, sealer, .. } = result;
    // A distinct key asked for several times is cloned for all but its last position.
    let mut remaining = vec![0usize; items.len()];
    for &u in &positions {
        remaining[u] += 1;
    }
    let mut out = Vec::with_capacity(positions.len());
    for &u in &positions {
        remaining[u] -= 1;
        let item = if remaining[u] == 0 { items[u].take() } else { items[u].clone() };
        out.push(item.map(|item| sealer.open::<E>(item)).transpose()?);
    }
    Ok(out)
}

/// The entities of a batch read of `keys`, by key.
fn by_key<E: Entity>(
    (result, keys): (BatchReadResult, Vec<Key<E>>),
) -> Result<HashMap<Key<E>, E>, Error> {
    let BatchReadResult { positions, items, sealer, .. } = result;
    let mut first_key: Vec<Option<Key<E>>> = vec![None; items.len()];
    for (key, &u) in keys.into_iter().zip(&positions) {
        first_key[u].get_or_insert(key);
    }
    let mut out = HashMap::with_capacity(items.len());
    for (key, item) in first_key.into_iter().zip(items) {
        if let (Some(key), Some(item)) = (key, item) {
            out.insert(key, sealer.open::<E>(item)?);
        }
    }
    Ok(out)
}

impl<'a, E: Entity, R: 'a> Startable<'a> for BatchGet<'a, E, R> {
    type Raw = ReadKeys<E>;
    fn running(&mut self) -> &mut Running<'a, Self::Raw> {
        &mut self.running
    }
    fn take_settings(&mut self) -> Self {
        BatchGet {
            read: self.read.take_settings(),
            keys: std::mem::take(&mut self.keys),
            include_expired: self.include_expired,
            running: Running::default(),
            _result: PhantomData,
        }
    }
    fn start(self) -> BoxFuture<'a, Self::Raw> {
        crate::ops::boxed(|| self.read_keys())
    }
}

builder_future!(
    ['a, E: Entity] BatchGet<'a, E, InOrder> => Result<Vec<Option<E>>, Error>,
    |r: ReadKeys<E>| in_order(r?)
);
builder_future!(
    ['a, E: Entity] BatchGet<'a, E, ByKey> => Result<HashMap<Key<E>, E>, Error>,
    |r: ReadKeys<E>| by_key(r?)
);
