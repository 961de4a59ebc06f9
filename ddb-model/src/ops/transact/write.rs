//! [`Transaction`]: `TransactWriteItems`.

use std::fmt;

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::reason::{ActionInfo, explain};
use super::{
    MAX_TOKEN_CHARS, MAX_TRANSACTION_ACTIONS, MAX_TRANSACTION_BYTES, TransactionProblem,
    map_cancellation,
};
use crate::db::Db;
use crate::error::Error;
use crate::expr::{Condition, ExprBuilder};
use crate::key::Key;
use crate::model::{Entity, Table, to_item};
use crate::ops::action::Kind;
use crate::ops::put::PreparedPut;
use crate::ops::retry::{self, SendError};
use crate::ops::unique;
use crate::ops::update::PreparedUpdate;
use crate::ops::{
    BoxFuture, Delete, Guard, Put, Rendered, Running, Startable, Target, Update, WriteKind,
    builder_future, check_expected_version, idempotency_token, key_item,
};
use crate::stats::Op;

/// Guarded writes of any entity types of one table that commit together or not at all:
/// one `TransactWriteItems` request. Made by [`Db::transaction`].
///
/// Each action keeps the guarantees of the single-item write of the same name: it never
/// touches an item of another entity type, `create` needs no item, `replace`, `update` and
/// the checks need one, versions are checked and incremented, conditions hold. When any of
/// them fails, nothing is written and the error,
/// [`Error::TransactionCanceled`], gives a reason per action: the failed one carries the
/// same error the single-item write would return (with the stored item), the others
/// [`CancelReason::None`](crate::error::CancelReason::None).
///
/// Checked before anything is sent (a typed error, no request): at most
/// [`MAX_TRANSACTION_ACTIONS`](crate::ops::MAX_TRANSACTION_ACTIONS) actions
/// ([`Error::InvalidTransaction`]); at most one action per item, whatever the entity types
/// (the error names both action indexes); each action's key, item size and expressions as for
/// the single-item write ([`Error::InvalidAction`] with the action's index); and at most
/// [`MAX_TRANSACTION_BYTES`](crate::ops::MAX_TRANSACTION_BYTES) in all, counted as DynamoDB
/// counts item sizes: whole items for `create`, `put` and `replace`, keys for `delete` and the
/// checks, keys and expression values for `update` (an update that grows a stored item past
/// the limits is refused by DynamoDB, in the cancellation reasons).
/// A transaction without actions succeeds without sending anything: there is nothing to
/// commit, and code that builds transactions in a loop need not special-case it.
///
/// Every commit carries an idempotency token (`ClientRequestToken`): when the SDK retries a
/// request whose response was lost, DynamoDB recognises the token and does not apply the
/// writes again, so `add` and `append` are safe. [`token`](Transaction::token) sets the token
/// yourself, to retry a whole transaction from your application.
///
/// After a successful commit, the entities passed as `&mut` hold the version they were
/// stored with, as after single-item writes.
///
/// ```
/// use ddb_model::prelude::*;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// #[entity(pk = "ACCOUNT#<id>", sk = "ACCOUNT", version = version)]
/// struct Account { id: String, balance: i64, version: u64 }
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// #[entity(pk = "ACCOUNT#<account>", sk = "TRANSFER#<id>")]
/// struct Transfer { account: String, id: String, amount: i64 }
///
/// async fn transfer(db: &Db, from: &str, to: &str, amount: i64) -> Result<(), Error> {
///     db.transaction()
///         .update(Account::key(from), |u| {
///             u.add(Account::BALANCE, -amount).condition(Account::BALANCE.ge(amount))
///         })
///         .update(Account::key(to), |u| u.add(Account::BALANCE, amount))
///         .create(&Transfer { account: from.into(), id: "t1".into(), amount })
///         .await
/// }
/// # #[cfg(feature = "local")]
/// # #[tokio::main]
/// # async fn main() -> Result<(), Error> {
/// # let db = ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?;
/// let mut ann = Account { id: "ann".into(), balance: 100, version: 0 };
/// let mut bob = Account { id: "bob".into(), balance: 0, version: 0 };
/// db.transaction().create(&mut ann).create(&mut bob).await?;
/// assert_eq!((ann.version, bob.version), (1, 1));
///
/// transfer(&db, "ann", "bob", 60).await?;
/// assert_eq!(Account::get(&db, "bob").await?.map(|a| a.balance), Some(60));
///
/// // Ann has 40 left: the condition fails, nothing is written.
/// let err = transfer(&db, "ann", "bob", 60).await.unwrap_err();
/// assert!(err.is_condition_failed());
/// assert_eq!(err.failed_action().map(|r| r.action), Some(0));
/// assert_eq!(Account::get(&db, "ann").await?.map(|a| a.balance), Some(40));
/// # Ok(())
/// # }
/// # #[cfg(not(feature = "local"))]
/// # fn main() {}
/// ```
#[must_use = "a transaction does nothing until it is awaited"]
pub struct Transaction<'a, T: Table> {
    db: &'a Db<T>,
    /// The actions in order; one that failed its checks is kept as its error, reported (with
    /// its index) when the transaction is sent.
    actions: Vec<Entry<'a>>,
    token: Option<String>,
    /// Renders the same actions again, for a token-carrying retry (see
    /// [`Transaction::rebuilt_by`]); without it the request is copied before it is sent.
    rebuild: Option<&'a Rebuild<'a>>,
    running: Running<'a, Result<(), Error>>,
}

/// Renders a transaction's items again, the same as the first time (see
/// [`Transaction::rebuilt_by`]).
pub(crate) type Rebuild<'a> = dyn Fn() -> Result<Vec<TransactWriteItem>, Error> + Send + Sync + 'a;

/// An action as added: rendered (or refused), or, for a write of an entity with unique
/// constraints that needs the values stored before it, rendered when the transaction is sent
/// (after a read), with its sentinel actions.
#[expect(
    clippy::large_enum_variant,
    reason = "a ready action is as large as before; boxing each would cost every transaction an allocation per action"
)]
enum Entry<'a> {
    Ready(Result<Action<'a>, Error>),
    Deferred(BoxFuture<'a, Result<Vec<Action<'a>>, Error>>),
}

/// One action, rendered for the wire.
struct Action<'a> {
    info: ActionInfo,
    item: TransactWriteItem,
    /// What the action counts toward the 4 MB limit.
    size: usize,
    /// Stores the new version in a `&mut` entity after the commit.
    on_commit: Option<Box<dyn FnOnce() + Send + 'a>>,
}

impl<T: Table> Db<T> {
    /// Starts a write transaction on this table: add actions, then `.await` it (see
    /// [`Transaction`]).
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String, email: String }
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "EMAIL#<email>", sk = "EMAIL")]
    /// # struct Email { email: String, user: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// // A user and the item that reserves their e-mail address: both or neither.
    /// let user = User { id: "ann".into(), email: "ann@example.com".into() };
    /// db.transaction()
    ///     .create(&user)
    ///     .create(&Email { email: user.email.clone(), user: user.id.clone() })
    ///     .await?;
    /// # Ok(()) }
    /// # #[cfg(feature = "local")]
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Error> {
    /// #     let db = ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?;
    /// #     demo(&db).await?;
    /// #     assert!(demo(&db).await.unwrap_err().is_already_exists());
    /// #     Ok(())
    /// # }
    /// # #[cfg(not(feature = "local"))]
    /// # fn main() {}
    /// ```
    pub fn transaction(&self) -> Transaction<'_, T> {
        Transaction {
            db: self,
            actions: Vec::new(),
            token: None,
            rebuild: None,
            running: Running::default(),
        }
    }
}

impl<'a, T: Table> Transaction<'a, T> {
    /// Writes `entity` if no item exists under its key, like [`Db::create`]; otherwise the
    /// transaction fails with [`Error::AlreadyExists`] (in its reasons). Through `&mut`, the
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
    /// fails with [`Error::NotFound`] (in its reasons) when there is none.
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
        let table = self.db.table_name();
        // An update that sets a unique field needs the value stored before (a read).
        let touches_unique = E::UNIQUES
            .iter()
            .flat_map(|d| d.attrs.iter())
            .any(|attr| !matches!(update.actions.touch(attr), crate::expr::Touch::Untouched));
        if touches_unique {
            // Moving the values needs them as stored: read when the transaction is sent.
            return self.push_deferred(Box::pin(async move {
                let (update, sentinels) = unique::prepare_update(update).await?;
                with_sentinels(update_action(table, update.prepare()?)?, sentinels)
            }));
        }
        self.push(update.prepare().and_then(|prepared| update_action(table, prepared)))
    }

    /// Deletes the item of `key`, like [`Db::delete`]: no item is fine, an item of another
    /// entity type fails the transaction with [`Error::WrongEntityType`].
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
        let table = self.db.table_name();
        if !E::UNIQUES.is_empty() {
            // Freeing the values needs the item as stored: read when the transaction is sent.
            return self.push_deferred(Box::pin(async move {
                let (delete, sentinels) = unique::prepare_delete(delete).await?;
                with_sentinels(delete_action(table, delete.prepare()?)?, sentinels)
            }));
        }
        self.push(delete.prepare().and_then(|rendered| delete_action(table, rendered)))
    }

    /// Requires the item of `key` to exist, to be of entity type `E` and to satisfy
    /// `condition`, without writing it (`ConditionCheck`). A failed check is
    /// [`Error::NotFound`], [`Error::WrongEntityType`] or [`Error::ConditionFailed`] in the
    /// reasons.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "ORG#<id>", sk = "ORG")]
    /// # struct Org { id: String, active: bool }
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "ORG#<org>", sk = "USER#<id>")]
    /// # struct Member { org: String, id: String }
    /// # async fn demo(db: &Db, member: &Member) -> Result<(), Error> {
    /// db.transaction().check(Org::key(&member.org), Org::ACTIVE.eq(true)).create(member).await?;
    /// # Ok(()) }
    /// ```
    pub fn check<E: Entity<Table = T>>(self, key: Key<E>, condition: Condition<E>) -> Self {
        let guard = Guard { kind: WriteKind::Check, expected_version: None };
        let node = condition.into_node();
        self.push_check(key, guard, Some(node))
    }

    /// Requires an item of entity type `E` under `key` ([`Error::NotFound`] or
    /// [`Error::WrongEntityType`] in the reasons otherwise), without writing it.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<user>", sk = "POST#<id>")]
    /// # struct Post { user: String, id: String }
    /// # async fn demo(db: &Db, post: &Post) -> Result<(), Error> {
    /// db.transaction().check_exists(User::key(&post.user)).create(post).await?;
    /// # Ok(()) }
    /// ```
    pub fn check_exists<E: Entity<Table = T>>(self, key: Key<E>) -> Self {
        let guard = Guard { kind: WriteKind::Check, expected_version: None };
        self.push_check(key, guard, None)
    }

    /// Requires that no item exists under `key` ([`Error::AlreadyExists`] with the stored
    /// item in the reasons otherwise), without writing it.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "BAN#<user>", sk = "BAN")]
    /// # struct Ban { user: String }
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<user>", sk = "COMMENT#<id>")]
    /// # struct Comment { user: String, id: String }
    /// # async fn demo(db: &Db, comment: &Comment) -> Result<(), Error> {
    /// db.transaction().check_not_exists(Ban::key(&comment.user)).create(comment).await?;
    /// # Ok(()) }
    /// ```
    pub fn check_not_exists<E: Entity<Table = T>>(self, key: Key<E>) -> Self {
        let guard = Guard { kind: WriteKind::Create, expected_version: None };
        self.push_check(key, guard, None)
    }

    /// Requires the item of `key` to be stored at `version` (optimistic locking on an item the
    /// transaction does not write): [`Error::VersionConflict`] in the reasons otherwise.
    /// `E` must have a version field.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "DOC#<id>", sk = "DOC", version = version)]
    /// # struct Doc { id: String, version: u64 }
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "DOC#<doc>", sk = "COMMENT#<id>")]
    /// # struct Comment { doc: String, id: String }
    /// # async fn demo(db: &Db, doc: &Doc, comment: &Comment) -> Result<(), Error> {
    /// // Comment on the version of the document the user saw.
    /// db.transaction().check_version(doc.key(), doc.version).create(comment).await?;
    /// # Ok(()) }
    /// ```
    pub fn check_version<E: Entity<Table = T>>(self, key: Key<E>, version: u64) -> Self {
        let guard = Guard { kind: WriteKind::Check, expected_version: Some(version) };
        self.push_check(key, guard, None)
    }

    /// Sets the idempotency token (`ClientRequestToken`, 1 to 36 characters) instead of a
    /// fresh random one.
    ///
    /// For application-level retries: when you cannot tell whether a transaction committed
    /// (a timeout, a crash after sending), send the same transaction again with the same
    /// token. Within 10 minutes of the first request, DynamoDB recognises it and does not
    /// apply it twice; after that, the token counts as new. The same token with different
    /// actions is [`Error::IdempotentParameterMismatch`].
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "WALLET#<id>", sk = "WALLET")]
    /// # struct Wallet { id: String, cents: i64 }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// // The payment id from the client's request: a retried request pays once.
    /// let payment_id = "pay-8d2f61c4";
    /// db.transaction()
    ///     .update(Wallet::key("ann"), |u| u.add(Wallet::CENTS, -500))
    ///     .update(Wallet::key("shop"), |u| u.add(Wallet::CENTS, 500))
    ///     .token(payment_id)
    ///     .await?;
    /// # Ok(()) }
    /// # #[cfg(feature = "local")]
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Error> {
    /// #     let db = ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?;
    /// #     Wallet { id: "ann".into(), cents: 1000 }.create(&db).await?;
    /// #     Wallet { id: "shop".into(), cents: 0 }.create(&db).await?;
    /// #     demo(&db).await?;
    /// #     demo(&db).await?;
    /// #     assert_eq!(Wallet::get(&db, "ann").await?.map(|w| w.cents), Some(500));
    /// #     Ok(())
    /// # }
    /// # #[cfg(not(feature = "local"))]
    /// # fn main() {}
    /// ```
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The number of actions added so far.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # fn demo(db: &Db) {
    /// let tx = db.transaction().delete(User::key("a")).delete(User::key("b"));
    /// assert_eq!(tx.len(), 2);
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.actions.len()
    }

    /// True when no action was added (sending it does nothing).
    ///
    /// ```
    /// # fn demo(db: &ddb_model::Db) {
    /// assert!(db.transaction().is_empty());
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    /// Adds an action rendered elsewhere (tree bookkeeping): `entity` and the key name it in
    /// errors; a failed condition is reported as `CancelReason::Other`.
    pub(crate) fn raw(
        self,
        entity: &'static str,
        (pk, sk): (String, Option<String>),
        item: TransactWriteItem,
        size: usize,
    ) -> Self {
        self.push_raw(ActionInfo { entity, pk, sk, explain: None, unique: None }, item, size)
    }

    fn push(mut self, action: Result<Action<'a>, Error>) -> Self {
        self.actions.push(Entry::Ready(action));
        self
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
        let table = self.db.table_name();
        if E::UNIQUES.is_empty() {
            return self.push(put_action(table, put));
        }
        // Unique constraints: a create claims its values in the same transaction; a put or
        // replace reads the values stored when the transaction is sent, then moves them.
        if put.kind != WriteKind::Create {
            return self.push_deferred(Box::pin(async move {
                let (put, sentinels) = unique::prepare_put(put).await?;
                with_sentinels(put_action(table, put)?, sentinels)
            }));
        }
        let claims = put.target().and_then(|target| {
            let entity = target.get();
            let new = unique::texts::<E>(Some(&to_item(entity, None)?))?;
            unique::moves::<E>(table, &entity.key(), &[], &new)
        });
        let mut tx = self.push(put_action(table, put));
        match claims {
            Ok(claims) => {
                for s in claims {
                    tx = tx.push_raw(s.info, s.item, s.size);
                }
            }
            Err(e) => tx = tx.push(Err(e)),
        }
        tx
    }

    fn push_deferred(mut self, entry: BoxFuture<'a, Result<Vec<Action<'a>>, Error>>) -> Self {
        self.actions.push(Entry::Deferred(entry));
        self
    }

    fn push_check<E: Entity<Table = T>>(
        self,
        key: Key<E>,
        guard: Guard,
        condition: Option<crate::expr::Node>,
    ) -> Self {
        let table = self.db.table_name();
        let action = key
            .validate()
            .and_then(|()| check_expected_version::<E>(guard.expected_version))
            .and_then(|()| Rendered::new(ExprBuilder::default(), key, guard, condition.as_ref()))
            .and_then(|rendered| check_action(table, rendered));
        self.push(action)
    }

    /// Checks the transaction and sends it: one `TransactWriteItems` request (none when it
    /// has no action).
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// # struct User { id: String }
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// db.transaction().delete(User::key("a")).delete(User::key("b")).send().await?;
    /// # Ok(()) }
    /// ```
    pub async fn send(self) -> Result<(), Error> {
        let Transaction { db, actions, token, rebuild, .. } = self;
        let token = match token {
            Some(token) => {
                let len = token.chars().count();
                if len == 0 || len > MAX_TOKEN_CHARS {
                    return Err(invalid(TransactionProblem::InvalidToken {
                        len,
                        max: MAX_TOKEN_CHARS,
                    }));
                }
                token
            }
            None => idempotency_token(),
        };
        let actions = checked(resolve(actions).await)?;
        if actions.is_empty() {
            return Ok(());
        }

        let mut items = Vec::with_capacity(actions.len());
        let mut infos = Vec::with_capacity(actions.len());
        let mut commits = Vec::new();
        for action in actions {
            items.push(action.item);
            infos.push(action.info);
            commits.extend(action.on_commit);
        }

        match send_transact_write(db, items, token.clone(), rebuild).await {
            Ok(()) => {
                for commit in commits {
                    commit();
                }
                Ok(())
            }
            Err(err) => Err(match err.into_service() {
                Ok(err) => transaction_error(err, &infos, token),
                Err(e) => e,
            }),
        }
    }
}

/// Sends one `TransactWriteItems` request carrying the idempotency `token`, counting the
/// request and the capacity it consumed. Shared by [`Transaction`] (and so by the tree and
/// graph protocols) and the updates that are sent as a one-action transaction.
///
/// The token makes the request safe to send again: when the SDK's attempts run out on a
/// transport failure, it is sent again under the token-carrying retry policy
/// ([`retry::send_retrying`]), with the items `rebuild` renders again (the first send takes
/// `items` as they are) or, without it, a copy of the request taken before each send.
pub(crate) async fn send_transact_write<T: Table>(
    db: &Db<T>,
    items: Vec<TransactWriteItem>,
    token: String,
    rebuild: Option<&Rebuild<'_>>,
) -> Result<(), SendError> {
    let request = |items| {
        db.client()
            .transact_write_items()
            .set_transact_items(Some(items))
            .client_request_token(token.clone())
            .set_return_consumed_capacity(db.capacity_mode())
    };
    let op = Op::TransactWriteItems;
    match rebuild {
        Some(rebuild) => {
            let mut first = Some(items);
            retry::send_retrying(db, op, || {
                let items = match first.take() {
                    Some(items) => items,
                    None => rebuild()?,
                };
                Ok(request(items).send())
            })
            .await?;
        }
        None => {
            let request = request(items);
            retry::send_retrying(db, op, || Ok(request.clone().send())).await?;
        }
    }
    Ok(())
}

fn invalid(problem: TransactionProblem) -> Error {
    Error::InvalidTransaction { problem }
}

/// The checks that need no request: every action valid, the number of actions, one action
/// per item, the aggregate size.
/// The actions with every deferred one rendered (its read sent), in order; a deferred one
/// that failed is kept as its error, reported with its index.
async fn resolve(entries: Vec<Entry<'_>>) -> Vec<Result<Action<'_>, Error>> {
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        match entry {
            Entry::Ready(action) => out.push(action),
            Entry::Deferred(rendering) => match rendering.await {
                Ok(actions) => out.extend(actions.into_iter().map(Ok)),
                Err(e) => out.push(Err(e)),
            },
        }
    }
    out
}

/// A write's action followed by its sentinel actions.
fn with_sentinels(
    action: Action<'_>,
    sentinels: Vec<unique::SentinelWrite>,
) -> Result<Vec<Action<'_>>, Error> {
    let mut out = Vec::with_capacity(1 + sentinels.len());
    out.push(action);
    out.extend(sentinels.into_iter().map(|s| Action {
        info: s.info,
        item: s.item,
        size: s.size,
        on_commit: None,
    }));
    Ok(out)
}

fn checked(actions: Vec<Result<Action<'_>, Error>>) -> Result<Vec<Action<'_>>, Error> {
    if actions.len() > MAX_TRANSACTION_ACTIONS {
        return Err(invalid(TransactionProblem::TooManyActions {
            actions: actions.len(),
            max: MAX_TRANSACTION_ACTIONS,
        }));
    }
    let mut valid = Vec::with_capacity(actions.len());
    for (i, action) in actions.into_iter().enumerate() {
        match action {
            Ok(action) => valid.push(action),
            Err(source) => {
                return Err(Error::InvalidAction { action: i, source: Box::new(source) });
            }
        }
    }
    let keys: Vec<(&str, Option<&str>)> =
        valid.iter().map(|a| (a.info.pk.as_str(), a.info.sk.as_deref())).collect();
    if let Some((first, second)) = first_duplicate(&keys) {
        return Err(invalid(TransactionProblem::DuplicateItem {
            key: valid.get(second).map(|a| a.info.key_text()).unwrap_or_default(),
            first,
            second,
        }));
    }
    let size: usize = valid.iter().map(|a| a.size).sum();
    if size > MAX_TRANSACTION_BYTES {
        return Err(invalid(TransactionProblem::TooLarge { size, max: MAX_TRANSACTION_BYTES }));
    }
    Ok(valid)
}

/// The first position (in order) whose key an earlier position holds too, with that earlier
/// position: `(first, second)`. Sorted by key and then position, the positions of one key are
/// neighbours, the earliest first, so the pair with the smallest `second` is the answer. No
/// hashing: a transaction holds at most 100 actions, and sorting them costs less than hashing
/// every key.
fn first_duplicate<K: Ord>(keys: &[K]) -> Option<(usize, usize)> {
    let mut order: Vec<(&K, usize)> = keys.iter().zip(0..).collect();
    order.sort_unstable();
    order
        .windows(2)
        .filter_map(|pair| match pair {
            [(a, first), (b, second)] if a == b => Some((*first, *second)),
            _ => None,
        })
        .min_by_key(|&(_, second)| second)
}

/// Maps a canceled transaction to [`Error::TransactionCanceled`], with a reason per action.
pub(crate) fn canceled(
    e: aws_sdk_dynamodb::types::error::TransactionCanceledException,
    infos: &[ActionInfo],
) -> Error {
    let reasons = map_cancellation(e.cancellation_reasons(), infos);
    Error::TransactionCanceled {
        reasons,
        source: Box::new(aws_sdk_dynamodb::Error::TransactionCanceledException(e)),
    }
}

/// Maps a failed `TransactWriteItems` to a typed error.
fn transaction_error(err: aws_sdk_dynamodb::Error, infos: &[ActionInfo], token: String) -> Error {
    use aws_sdk_dynamodb::Error as E;
    match err {
        E::TransactionCanceledException(e) => canceled(e, infos),
        E::TransactionInProgressException(e) => Error::TransactionInProgress {
            token,
            source: Box::new(E::TransactionInProgressException(e)),
        },
        E::IdempotentParameterMismatchException(e) => Error::IdempotentParameterMismatch {
            token,
            source: Box::new(E::IdempotentParameterMismatchException(e)),
        },
        other => Error::service(Op::TransactWriteItems, other),
    }
}

pub(crate) fn info<E: Entity>(rendered: &Rendered<E>) -> ActionInfo {
    ActionInfo {
        entity: E::NAME,
        pk: rendered.key.pk().to_owned(),
        sk: rendered.key.sk().map(str::to_owned),
        explain: Some((rendered.guard, explain::<E>)),
        unique: None,
    }
}

/// Renders a typed write for the wire: `kind` guarded by `write` (a failed guard returns the
/// stored item).
fn action<'a, E: Entity>(
    table: &str,
    write: Rendered<E>,
    kind: Kind,
    on_commit: Option<Box<dyn FnOnce() + Send + 'a>>,
) -> Result<Action<'a>, Error> {
    let info = info(&write);
    let action = write.into_action(kind);
    let size = action.size();
    Ok(Action { info, item: action.into_transact_item(table)?, size, on_commit })
}

fn put_action<'a, E: Entity>(table: &str, put: Put<'a, E>) -> Result<Action<'a>, Error> {
    let PreparedPut { write, item, next_version, stamp } = put.prepare()?;
    let on_commit: Option<Box<dyn FnOnce() + Send + 'a>> = match put.into_target() {
        Some(mut target @ Target::Exclusive(_))
            if next_version.is_some() || E::TIMESTAMPS.any() =>
        {
            Some(Box::new(move || target.written(next_version, stamp)))
        }
        _ => None,
    };
    action(table, write, Kind::Put(item), on_commit)
}

fn update_action<'a, E: Entity>(
    table: &str,
    prepared: PreparedUpdate<E>,
) -> Result<Action<'a>, Error> {
    let PreparedUpdate { write, update_expression, .. } = prepared;
    let key = key_item(&write.key);
    action(table, write, Kind::Update { key, expression: update_expression }, None)
}

fn delete_action<'a, E: Entity>(table: &str, rendered: Rendered<E>) -> Result<Action<'a>, Error> {
    let key = key_item(&rendered.key);
    action(table, rendered, Kind::Delete(key), None)
}

fn check_action<'a, E: Entity>(table: &str, rendered: Rendered<E>) -> Result<Action<'a>, Error> {
    let key = key_item(&rendered.key);
    action(table, rendered, Kind::Check(key), None)
}

impl<'a, T: Table> Startable<'a> for Transaction<'a, T> {
    type Raw = Result<(), Error>;
    fn running(&mut self) -> &mut Running<'a, Self::Raw> {
        &mut self.running
    }
    fn take_settings(&mut self) -> Self {
        Transaction {
            db: self.db,
            actions: std::mem::take(&mut self.actions),
            token: self.token.take(),
            rebuild: self.rebuild.take(),
            running: Running::default(),
        }
    }
    fn start(self) -> BoxFuture<'a, Self::Raw> {
        Box::pin(self.send())
    }
}

builder_future!(['a, T: Table] Transaction<'a, T> => Result<(), Error>, |r| r);

impl<T: Table> fmt::Debug for Transaction<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let actions: Vec<String> = self
            .actions
            .iter()
            .map(|a| match a {
                Entry::Ready(Ok(a)) => format!("`{}` {}", a.info.entity, a.info.key_text()),
                Entry::Ready(Err(e)) => format!("invalid: {e}"),
                Entry::Deferred(_) => "a write rendered after a read, with its sentinels".into(),
            })
            .collect();
        f.debug_struct("Transaction")
            .field("table", &self.db.table_name())
            .field("actions", &actions)
            .field("token", &self.token)
            .finish()
    }
}

// Raw actions for the graph layer (`crate::edge`), which writes items that are not one
// entity's plain item (inverse edges, counters on node items) with guards of its own.
impl<'a, T: Table> Transaction<'a, T> {
    /// Adds a rendered action: `info` names its item and explains a failed condition,
    /// `size` is what it counts toward the 4 MB limit.
    pub(crate) fn push_raw(self, info: ActionInfo, item: TransactWriteItem, size: usize) -> Self {
        self.push(Ok(Action { info, item, size, on_commit: None }))
    }

    /// Adds an action that failed its checks before sending (reported with its index).
    pub(crate) fn push_invalid(self, error: Error) -> Self {
        self.push(Err(error))
    }

    /// The transaction, sent again after a transport failure (the token-carrying retry) with
    /// the items `rebuild` renders instead of a copy of its request taken before the first
    /// send. `rebuild` must render the same items as this transaction's actions (the retry
    /// carries the same token); it runs only if the transaction is sent again.
    pub(crate) fn rebuilt_by(self, rebuild: &'a Rebuild<'a>) -> Self {
        Transaction { rebuild: Some(rebuild), ..self }
    }

    /// The items of the transaction's actions, in order, after the checks of
    /// [`send`](Transaction::send) (for a [`Rebuild`]).
    pub(crate) fn into_items(self) -> Result<Vec<TransactWriteItem>, Error> {
        let actions = self
            .actions
            .into_iter()
            .map(|entry| match entry {
                Entry::Ready(action) => action,
                // Only unique constraints defer, and no layer that rebuilds has them.
                Entry::Deferred(_) => {
                    Err(Error::Internal { problem: crate::error::InternalProblem::DeferredRebuild })
                }
            })
            .collect();
        Ok(checked(actions)?.into_iter().map(|a| a.item).collect())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use aws_sdk_dynamodb::types::error::{
        IdempotentParameterMismatchException, TransactionInProgressException,
    };

    use super::*;

    /// What `checked` reported before it sorted: the first position whose key was seen
    /// before, with the position where it was first seen.
    fn first_duplicate_by_hashing(keys: &[(String, Option<String>)]) -> Option<(usize, usize)> {
        let mut seen = HashMap::new();
        for (i, key) in keys.iter().enumerate() {
            if let Some(&first) = seen.get(key) {
                return Some((first, i));
            }
            seen.insert(key, i);
        }
        None
    }

    #[test]
    fn first_duplicate_is_the_earliest_repeat() {
        let k = |pk: &str, sk: Option<&str>| (pk.to_owned(), sk.map(str::to_owned));
        assert_eq!(first_duplicate::<(String, Option<String>)>(&[]), None);
        assert_eq!(first_duplicate(&[k("a", None)]), None);
        assert_eq!(first_duplicate(&[k("a", None), k("a", Some(""))]), None);
        // "b" repeats at 3, before "a" repeats at 4; "b" was first at 1.
        let keys = [k("a", None), k("b", Some("x")), k("c", None), k("b", Some("x")), k("a", None)];
        assert_eq!(first_duplicate(&keys), Some((1, 3)));
        // Three of one key: the first two.
        let keys = [k("z", None), k("z", None), k("z", None)];
        assert_eq!(first_duplicate(&keys), Some((0, 1)));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 2048,
            failure_persistence: None,
            ..proptest::prelude::ProptestConfig::default()
        })]
        /// Over arbitrary keys (few distinct ones, so that repeats are common, and any
        /// Unicode), sorting reports what hashing reported.
        #[test]
        fn first_duplicate_agrees_with_hashing(
            keys in proptest::collection::vec(
                (
                    proptest::prop_oneof![proptest::strategy::Just(String::new()), "[ab#\\\\%]{0,2}", "\\PC{0,3}"],
                    proptest::option::of("[a#]{0,2}"),
                ),
                0..120,
            )
        ) {
            proptest::prop_assert_eq!(first_duplicate(&keys), first_duplicate_by_hashing(&keys));
        }
    }

    #[test]
    fn token_errors_name_the_token() {
        let in_progress = transaction_error(
            aws_sdk_dynamodb::Error::TransactionInProgressException(
                TransactionInProgressException::builder().build(),
            ),
            &[],
            "tok-1".to_owned(),
        );
        assert!(
            matches!(&in_progress, Error::TransactionInProgress { token, .. } if token == "tok-1")
        );
        let mismatch = transaction_error(
            aws_sdk_dynamodb::Error::IdempotentParameterMismatchException(
                IdempotentParameterMismatchException::builder().build(),
            ),
            &[],
            "tok-2".to_owned(),
        );
        assert!(
            matches!(&mismatch, Error::IdempotentParameterMismatch { token, .. } if token == "tok-2")
        );
        assert!(mismatch.to_string().contains("tok-2"), "{mismatch}");
    }
}
