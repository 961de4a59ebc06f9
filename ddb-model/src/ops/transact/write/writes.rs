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
    /// entity's version field is updated after the commit.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE", version = version)]
    /// # struct User { id: String, version: u64 }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// let mut ann = User { id: "ann".into(), version: 0 };
    /// db.transaction().create(&mut ann).await?;
    /// assert_eq!(ann.version, 1);
    /// # Ok(()) }
    /// ```
    pub fn create<E: Entity<Table = T>>(self, entity: impl Into<Target<'a, E>>) -> Self {
        self.create_with(entity, |w| w)
    }

    /// [`create`](Transaction::create) with options: `configure` receives the [`Put`]
    /// builder, for a [`condition`](Put::condition).
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String, org: String }
    /// # async fn demo(db: &Db, user: &User) -> Result<(), Error> {
    /// db.transaction().create_with(user, |c| c.condition(User::ORG.eq("acme"))).await?;
    /// # Ok(()) }
    /// ```
    pub fn create_with<E: Entity<Table = T>>(
        self,
        entity: impl Into<Target<'a, E>>,
        configure: impl FnOnce(Put<'a, E>) -> Put<'a, E>,
    ) -> Self {
        self.push_put(Db::create, entity.into(), configure)
    }

    /// Writes `entity`, inserting it or overwriting an item of the same entity type, like
    /// [`Db::put`] (with a version field, the stored version must be the entity's).
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String, name: String }
    /// # async fn demo(db: &Db, ann: &User, bob: &User) -> Result<(), Error> {
    /// db.transaction().put(ann).put(bob).await?;
    /// # Ok(()) }
    /// ```
    pub fn put<E: Entity<Table = T>>(self, entity: impl Into<Target<'a, E>>) -> Self {
        self.put_with(entity, |w| w)
    }

    /// [`put`](Transaction::put) with options: `configure` receives the [`Put`] builder, for a
    /// [`condition`](Put::condition).
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String, banned: bool }
    /// # async fn demo(db: &Db, user: &User) -> Result<(), Error> {
    /// db.transaction().put_with(user, |p| p.condition(User::BANNED.ne(true))).await?;
    /// # Ok(()) }
    /// ```
    pub fn put_with<E: Entity<Table = T>>(
        self,
        entity: impl Into<Target<'a, E>>,
        configure: impl FnOnce(Put<'a, E>) -> Put<'a, E>,
    ) -> Self {
        self.push_put(Db::put, entity.into(), configure)
    }

    /// Overwrites the stored item of `entity`'s key, like [`Db::replace`]; the transaction
    /// fails with [`Error::NotFound`](crate::Error::NotFound) (in its reasons) when there is none.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE", version = version)]
    /// # struct User { id: String, name: String, version: u64 }
    /// # async fn demo(db: &Db, mut ann: User) -> Result<(), Error> {
    /// ann.name = "Ann".into();
    /// db.transaction().replace(&mut ann).await?; // stale versions are a conflict
    /// # Ok(()) }
    /// ```
    pub fn replace<E: Entity<Table = T>>(self, entity: impl Into<Target<'a, E>>) -> Self {
        self.replace_with(entity, |w| w)
    }

    /// [`replace`](Transaction::replace) with options: `configure` receives the [`Put`]
    /// builder, for a [`condition`](Put::condition).
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String, name: String }
    /// # async fn demo(db: &Db, user: &User) -> Result<(), Error> {
    /// db.transaction().replace_with(user, |r| r.condition(User::NAME.ne("root"))).await?;
    /// # Ok(()) }
    /// ```
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
    /// item must exist; a version field is incremented.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "POST#<id>", sk = "POST", version = version)]
    /// # struct Post { id: String, likes: u64, title: String, version: u64 }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// db.transaction()
    ///     .update(Post::key("p1"), |u| u.add(Post::LIKES, 1))
    ///     .update(Post::key("p2"), |u| u.set(Post::TITLE, "Hello").expect_version(3))
    ///     .await?;
    /// # Ok(()) }
    /// ```
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
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "CART#<id>", sk = "CART")]
    /// # struct Cart { id: String }
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "ORDER#<id>", sk = "ORDER")]
    /// # struct Order { id: String }
    /// # async fn demo(db: &Db, order: &Order) -> Result<(), Error> {
    /// db.transaction().create(order).delete(Cart::key("ann")).await?;
    /// # Ok(()) }
    /// ```
    pub fn delete<E: Entity<Table = T>>(self, key: Key<E>) -> Self {
        self.delete_with(key, |d| d)
    }

    /// [`delete`](Transaction::delete) with options: `configure` receives the [`Delete`]
    /// builder, for a [`condition`](Delete::condition) or
    /// [`expect_version`](Delete::expect_version) (then the item must exist).
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "DOC#<id>", sk = "DOC", version = version)]
    /// # struct Doc { id: String, locked: bool, version: u64 }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// db.transaction()
    ///     .delete_with(Doc::key("d1"), |d| d.expect_version(4).condition(Doc::LOCKED.eq(false)))
    ///     .await?;
    /// # Ok(()) }
    /// ```
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
