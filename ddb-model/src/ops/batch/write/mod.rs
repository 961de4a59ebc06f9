//! [`BatchWrite`]: puts and deletes with `BatchWriteItem`. The builder lives here; each write
//! is converted and checked as it is added (`spec.rs`), and the batch is checked and sent in
//! chunks by `send.rs`.

mod send;
mod spec;

use crate::ops::rekey;
use crate::ops::startable::startable;
use std::time::Duration;

use super::keys::RawKey;
use super::run::Retry;
use crate::db::Db;
use crate::error::Error;
use crate::key::Key;
use crate::model::{Entity, Table};
use crate::ops::put::next_version;
use crate::ops::{Running, key_item};

pub(super) use send::{Sent, send as send_writes};
pub(super) use spec::WriteSpec;
use spec::unique_allowed;

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
/// use std::time::Duration;
/// use ddb_model::prelude::*;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// # struct User { id: String }
/// # #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// # #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
/// # struct Order { user: String, seq: u32 }
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "DOC#<id>", sk = "DOC", version = version)]
/// # struct Doc { id: String, version: u64 }
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
///
///     // Puts and deletes of many; one chunk at a time, a shorter backoff; `send` for `.await`.
///     let batch = db
///         .batch_write()
///         .put_all(&users[..2])
///         .delete_all(["u3", "u4"].map(User::key))
///         .concurrency(1)
///         .backoff(Duration::from_millis(25), Duration::from_secs(1));
///     assert_eq!(batch.len(), 4);
///     batch.send().await?;
///     assert!(db.batch_write().is_empty());
///     db.batch_delete(users.iter().map(|u| User::key(&u.id))).await?;
///     assert!(db.scan::<User>().all().await?.is_empty());
///
///     // A versioned entity, without the check: stored at version 1.
///     db.batch_write().put_unchecked(&Doc { id: "d1".into(), version: 0 }).await?;
///     if let Err(Error::BatchWriteIncomplete { written, unprocessed, .. }) =
///         db.batch_put(&users).max_attempts(3).await
///     {
///         eprintln!("{written} written; not written: {unprocessed:?}");
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
pub struct BatchWrite<'a, T: Table> {
    db: &'a Db<T>,
    writes: Vec<WriteSpec>,
    error: Option<Error>,
    retry: Retry,
    running: Running<'a, Result<(), Error>>,
}

impl<T: Table> Db<T> {
    /// Starts an empty batch of puts and deletes; see [`BatchWrite`].
    pub fn batch_write(&self) -> BatchWrite<'_, T> {
        BatchWrite {
            db: self,
            writes: Vec::new(),
            error: None,
            retry: Retry::default(),
            running: Running::default(),
        }
    }

    /// A batch putting every entity of `entities`; see [`BatchWrite`].
    pub fn batch_put<'e, E: Entity<Table = T>>(
        &self,
        entities: impl IntoIterator<Item = &'e E>,
    ) -> BatchWrite<'_, T> {
        self.batch_write().put_all(entities)
    }

    /// A batch deleting the items of `keys`; see [`BatchWrite`].
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

    /// Adds a put of `entity`: it is stored whole, overwriting whatever is stored under its
    /// key. An entity with a version field is refused ([`Error::VersionedBatchPut`], when the
    /// batch is sent, before anything is sent): use
    /// [`put_unchecked`](BatchWrite::put_unchecked), or the single-item writes.
    ///
    /// Timestamp fields are set from the handle's clock as a single-item `put` sets them
    /// (`updated_at` now, `created_at` the value's own unless unset); `entity` itself is not
    /// changed, so read the item back to see them.
    pub fn put<E: Entity<Table = T>>(mut self, entity: &E) -> Self {
        let write = unique_allowed::<E>("a batch put")
            .and_then(|()| rekey::refuse_in::<E, T>(self.db, "a batch put", rekey::PAIRED))
            .and_then(|()| match E::VERSION {
                Some(_) => {
                    Err(Error::VersionedBatchPut { entity: E::NAME, key: entity.key().to_string() })
                }
                None => self.put_spec(entity, None, self.db.stamp(false)),
            });
        self.push(write);
        self
    }

    /// Adds a put of `entity` without optimistic locking: for an entity with a version
    /// field, the item is stored with the next version (the entity's version + 1, as a
    /// checked write would store), whatever version is stored. `entity` itself is not
    /// changed. For bulk loads and migrations; the same as [`put`](BatchWrite::put) for an
    /// entity without a version field. Example: [`BatchWrite`].
    pub fn put_unchecked<E: Entity<Table = T>>(mut self, entity: &E) -> Self {
        let stamp = self.db.stamp(false);
        let write = unique_allowed::<E>("a batch put")
            .and_then(|()| rekey::refuse_in::<E, T>(self.db, "a batch put", rekey::PAIRED))
            .and_then(|()| next_version::<E>(entity.version()))
            .and_then(|(_, next)| self.put_spec(entity, next, stamp));
        self.push(write);
        self
    }

    /// Adds a put of every entity of `entities` (see [`put`](BatchWrite::put)).
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
    pub fn delete<E: Entity<Table = T>>(mut self, key: Key<E>) -> Self {
        let write = unique_allowed::<E>("a batch delete")
            .and_then(|()| rekey::refuse_in::<E, T>(self.db, "a batch delete", rekey::PAIRED))
            .and_then(|()| key.validate())
            .and_then(|()| WriteSpec::delete(E::NAME, RawKey::of(&key), key_item(&key)));
        self.push(write);
        self
    }

    /// Adds a delete of the item of every key of `keys` (see [`delete`](BatchWrite::delete)).
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
    pub fn len(&self) -> usize {
        self.writes.len()
    }

    /// True when no write was added.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// How many chunks of 25 writes are in flight at once (default 4; 0 counts as 1).
    pub fn concurrency(self, chunks: usize) -> Self {
        BatchWrite { retry: self.retry.concurrency(chunks), ..self }
    }

    /// Most requests per chunk, the first included, before writes still unprocessed are
    /// reported as [`Error::BatchWriteIncomplete`] (default 8; 0 counts as 1).
    /// Example: [`BatchWrite`].
    pub fn max_attempts(self, attempts: u32) -> Self {
        BatchWrite { retry: self.retry.max_attempts(attempts), ..self }
    }

    /// The backoff between attempts: after attempt `n` the pause is random between zero and
    /// `min(max, base * 2^(n-1))` (defaults: 50 ms, 2 s).
    pub fn backoff(self, base: Duration, max: Duration) -> Self {
        BatchWrite { retry: self.retry.backoff(base, max), ..self }
    }
}

startable!(writes
    ['a, T: Table] BatchWrite<'a, T> => Result<(), Error>,
    |batch| batch.db.batch_write(),
    send
);
