//! The actions that write an item: `create`, `put`, `replace`, `update` and `delete`, each
//! with the guarantees of the single-item write of the same name; a write of an entity with
//! unique constraints brings its sentinel actions, rendered after a read when it needs the
//! values stored before.

use super::Transaction;
use super::action::for_wire;
use crate::db::Db;
use crate::key::Key;
use crate::model::{Entity, Table};
use crate::ops::write::{self, Planned, Write};
use crate::ops::{Delete, Put, Target, Update};

impl<'a, T: Table> Transaction<'a, T> {
    /// Writes `entity` if no item exists under its key, like [`Db::create`]; otherwise the
    /// transaction fails with [`Error::AlreadyExists`](crate::Error::AlreadyExists) (in its reasons). Through `&mut`, the
    /// entity's version field is updated after the commit. Example: [`Transaction`].
    pub fn create<E: Entity<Table = T>>(self, entity: impl Into<Target<'a, E>>) -> Self {
        self.create_with(entity, |w| w)
    }

    /// [`create`](Transaction::create) with options: `configure` receives the [`Put`]
    /// builder, for a [`condition`](Put::condition). Example: [`Transaction`].
    pub fn create_with<E: Entity<Table = T>>(
        self,
        entity: impl Into<Target<'a, E>>,
        configure: impl FnOnce(Put<'a, E>) -> Put<'a, E>,
    ) -> Self {
        self.push_put(Db::create, entity.into(), configure)
    }

    /// Writes `entity`, inserting it or overwriting an item of the same entity type, like
    /// [`Db::put`] (with a version field, the stored version must be the entity's).
    /// Example: [`Transaction`].
    pub fn put<E: Entity<Table = T>>(self, entity: impl Into<Target<'a, E>>) -> Self {
        self.put_with(entity, |w| w)
    }

    /// [`put`](Transaction::put) with options: `configure` receives the [`Put`] builder, for a
    /// [`condition`](Put::condition). Example: [`Transaction`].
    pub fn put_with<E: Entity<Table = T>>(
        self,
        entity: impl Into<Target<'a, E>>,
        configure: impl FnOnce(Put<'a, E>) -> Put<'a, E>,
    ) -> Self {
        self.push_put(Db::put, entity.into(), configure)
    }

    /// Overwrites the stored item of `entity`'s key, like [`Db::replace`]; the transaction
    /// fails with [`Error::NotFound`](crate::Error::NotFound) (in its reasons) when there is none.
    /// Example: [`Transaction`].
    pub fn replace<E: Entity<Table = T>>(self, entity: impl Into<Target<'a, E>>) -> Self {
        self.replace_with(entity, |w| w)
    }

    /// [`replace`](Transaction::replace) with options: `configure` receives the [`Put`]
    /// builder, for a [`condition`](Put::condition). Example: [`Transaction`].
    pub fn replace_with<E: Entity<Table = T>>(
        self,
        entity: impl Into<Target<'a, E>>,
        configure: impl FnOnce(Put<'a, E>) -> Put<'a, E>,
    ) -> Self {
        self.push_put(Db::replace, entity.into(), configure)
    }

    /// Updates the item of `key` in place, like [`Db::update`]: `configure` receives the
    /// [`Update`] builder for its actions (`set`, `add`, `append`, ...), a
    /// [`condition`](Update::condition) and [`expect_version`](Update::expect_version). The
    /// item must exist; a version field is incremented. Example: [`Transaction`].
    pub fn update<E: Entity<Table = T>>(
        self,
        key: Key<E>,
        configure: impl FnOnce(Update<'a, E>) -> Update<'a, E>,
    ) -> Self {
        let update = configure(self.db.update(key));
        self.push_write(update)
    }

    /// Deletes the item of `key`, like [`Db::delete`]: no item is fine, an item of another
    /// entity type fails the transaction with [`Error::WrongEntityType`](crate::Error::WrongEntityType).
    /// Example: [`Transaction`].
    pub fn delete<E: Entity<Table = T>>(self, key: Key<E>) -> Self {
        self.delete_with(key, |d| d)
    }

    /// [`delete`](Transaction::delete) with options: `configure` receives the [`Delete`]
    /// builder, for a [`condition`](Delete::condition) or
    /// [`expect_version`](Delete::expect_version) (then the item must exist).
    /// Example: [`Transaction`].
    pub fn delete_with<E: Entity<Table = T>>(
        self,
        key: Key<E>,
        configure: impl FnOnce(Delete<'a, E>) -> Delete<'a, E>,
    ) -> Self {
        let delete = configure(self.db.delete(key));
        self.push_write(delete)
    }

    /// Adds a whole-item write: `start` is the [`Db`] method of its kind (`create`, `put` or
    /// `replace`), `configure` the caller's options.
    fn push_put<E: Entity<Table = T>>(
        self,
        start: fn(&'a Db<T>, Target<'a, E>) -> Put<'a, E>,
        entity: Target<'a, E>,
        configure: impl FnOnce(Put<'a, E>) -> Put<'a, E>,
    ) -> Self {
        let put = configure(start(self.db, entity));
        self.push_write(put)
    }

    /// Adds a write's actions: its own and what the write pipeline's steps add (sentinels of
    /// unique values), rendered when the transaction is sent when they need a read.
    fn push_write<E: Entity<Table = T>, W: Write<E> + 'a>(self, w: W) -> Self {
        let table = self.db.table_name();
        match write::actions(w) {
            Err(e) => self.push(Err(e)),
            Ok(Planned::Ready(actions)) => {
                actions.into_iter().fold(self, |tx, a| tx.push(for_wire(table, a)))
            }
            Ok(Planned::Deferred(rendering)) => self.push_deferred(Box::pin(async move {
                rendering.await?.into_iter().map(|a| for_wire(table, a)).collect()
            })),
        }
    }
}
