//! [`Transaction`]: `TransactWriteItems`. The builder and its state live here; the actions
//! that write an item are added in `writes.rs`, the checks in `checks.rs`, actions rendered
//! by other layers in `raw.rs`; `action.rs` renders a typed write as an action, `limits.rs`
//! checks the whole before sending and `send.rs` sends it.

mod action;
mod checks;
mod limits;
mod raw;
mod send;
mod writes;

use std::fmt;

use aws_sdk_dynamodb::types::TransactWriteItem;

use crate::db::Db;
use crate::error::Error;
use crate::model::Table;
use crate::ops::startable::startable;
use crate::ops::{BoxFuture, Running};

use action::Action;
pub(crate) use action::info;
pub(crate) use send::{canceled, send_transact_write};

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
///
/// // Both or neither: `ann` exists, so `carl` is not created either.
/// let carl = Account { id: "carl".into(), balance: 0, version: 0 };
/// let err = db.transaction().create(&carl).create(&ann).await.unwrap_err();
/// assert!(err.is_already_exists());
/// assert!(Account::get(&db, "carl").await?.is_none());
///
/// // The same token (say, the payment id of the client's request): a retried request
/// // pays once.
/// for _ in 0..2 {
///     db.transaction()
///         .update(Account::key("bob"), |u| u.add(Account::BALANCE, -10))
///         .token("pay-8d2f61c4")
///         .await?;
/// }
/// assert_eq!(Account::get(&db, "bob").await?.map(|a| a.balance), Some(50));
///
/// assert!(db.transaction().is_empty());
/// let tx = db.transaction().delete(Account::key("a")).delete(Account::key("b"));
/// assert_eq!(tx.len(), 2);
/// tx.send().await?; // the same as `.await`; deleting no item is fine
/// # Ok(())
/// # }
/// # #[cfg(not(feature = "local"))]
/// # fn main() {}
/// ```
///
/// Every action, each with the guard of the single-item write of its name:
///
/// ```
/// # use ddb_model::prelude::*;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE", version = version)]
/// # struct User { id: String, org: String, name: String, banned: bool, version: u64 }
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "ORG#<id>", sk = "ORG")]
/// # struct Org { id: String, active: bool }
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "POST#<id>", sk = "POST", version = version)]
/// # struct Post { id: String, likes: u64, title: String, locked: bool, version: u64 }
/// # async fn demo(db: &Db, [mut ann, mut eve]: [User; 2], users: [&User; 4], doc: &Post)
/// # -> Result<(), Error> {
/// # let [bob, carl, dan, fay] = users;
/// eve.name = "Eve".into();
/// db.transaction()
///     .create(&mut ann) // no item; `ann.version` is 1 after the commit
///     .create_with(bob, |c| c.condition(User::ORG.eq("acme")))
///     .put(carl) // inserts, or overwrites a `User` of the stored version
///     .put_with(dan, |p| p.condition(User::BANNED.ne(true)))
///     .replace(&mut eve) // an item must exist; a stale version is a conflict
///     .replace_with(fay, |r| r.condition(User::NAME.ne("root")))
///     .update(Post::key("p1"), |u| u.add(Post::LIKES, 1))
///     .update(Post::key("p2"), |u| u.set(Post::TITLE, "Hello").expect_version(3))
///     .delete(User::key("gus")) // no item is fine
///     .delete_with(Post::key("p3"), |d| d.expect_version(4).condition(Post::LOCKED.eq(false)))
///     // Conditions on items the transaction does not write.
///     .check(Org::key("acme"), Org::ACTIVE.eq(true))
///     .check_exists(User::key("hal"))
///     .check_not_exists(Post::key("p4"))
///     .check_version(doc.key(), doc.version) // the version the user saw
///     .await?;
/// # Ok(()) }
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

impl<T: Table> Db<T> {
    /// Starts a write transaction on this table: add actions, then `.await` it (see
    /// [`Transaction`]).
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
    /// Sets the idempotency token (`ClientRequestToken`, 1 to 36 characters) instead of a
    /// fresh random one.
    ///
    /// For application-level retries: when you cannot tell whether a transaction committed
    /// (a timeout, a crash after sending), send the same transaction again with the same
    /// token. Within 10 minutes of the first request, DynamoDB recognises it and does not
    /// apply it twice; after that, the token counts as new. The same token with different
    /// actions is [`Error::IdempotentParameterMismatch`]. Example: [`Transaction`].
    pub fn token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The number of actions added so far.
    pub fn len(&self) -> usize {
        self.actions.len()
    }

    /// True when no action was added (sending it does nothing).
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }

    fn push(mut self, action: Result<Action<'a>, Error>) -> Self {
        self.actions.push(Entry::Ready(action));
        self
    }

    fn push_deferred(mut self, entry: BoxFuture<'a, Result<Vec<Action<'a>>, Error>>) -> Self {
        self.actions.push(Entry::Deferred(entry));
        self
    }
}

startable!(writes ['a, T: Table] Transaction<'a, T> => Result<(), Error>, |t| t.db.transaction(), send);

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
