//! Unique constraints (`#[unique]`): a value owned by at most one item, kept by *sentinel
//! items* written in the same `TransactWriteItems` as the item.
//!
//! ```
//! use ddb_model::prelude::*;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
//! #[entity(pk = "USER#<id>", sk = "PROFILE")]
//! struct User {
//!     id: String,
//!     #[unique]
//!     email: String,
//! }
//!
//! # #[cfg(feature = "local")]
//! # #[tokio::main]
//! # async fn main() -> Result<(), Error> {
//! # let db = ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?;
//! User { id: "ann".into(), email: "a@example.com".into() }.create(&db).await?;
//! let bob = User { id: "bob".into(), email: "a@example.com".into() };
//! let err = bob.create(&db).await.unwrap_err();
//! assert!(matches!(err, Error::Unique { entity: "User", field: "email", .. }));
//!
//! // Moving ann's address frees the old one.
//! User::update(&db, "ann").set(User::EMAIL, "ann@example.com").await?;
//! bob.create(&db).await?;
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "local"))]
//! # fn main() {}
//! ```
//!
//! # The sentinel
//!
//! The value of a constraint is its fields' key texts, escaped as in keys and joined by `#`
//! (see [`UniqueDef`]). Its sentinel is the item
//!
//! | attribute | value |
//! | --- | --- |
//! | partition key | `_unique#<scope, escaped>#<value>` |
//! | sort key (a table with one) | `_unique` |
//! | the table's type attribute | `<Owner>:unique` (bookkeeping: never read as an entity) |
//! | `_owner_pk`, `_owner_sk` | the owner's key |
//!
//! in a partition of its own: no query of an entity reads it, a scan of an entity type skips
//! it (its type is not the entity's) and the stream decoder reports it as
//! [`UnknownReason::Bookkeeping`](crate::stream::UnknownReason::Bookkeeping). Escaping makes
//! the key injective: a value holding `#`, `%`, any other separator or nothing at all has a
//! key of its own.
//!
//! # The writes, and what they cost
//!
//! | write | requests |
//! | --- | --- |
//! | `create` | 1 `TransactWriteItems`: the item (no item under its key) and a `Put` of each sentinel (no sentinel, or one this item owns) |
//! | `put`, `replace` | 1 consistent `GetItem` (the values the item holds), then 1 `TransactWriteItems`: the item, conditioned on holding those values; a `Put` of each new value's sentinel; a `Delete` of each old value's sentinel (conditioned on this item owning it). When no value changes, the transaction holds the item alone |
//! | `update` setting or removing a unique field | the same: 1 `GetItem`, then 1 `TransactWriteItems` (or 1 conditioned `UpdateItem`, returning its own result, when no value changes) |
//! | `update` not touching a unique field | unchanged: 1 `UpdateItem` |
//! | `delete` | 1 `GetItem`, then 1 `TransactWriteItems` freeing the sentinels (or 1 conditioned `DeleteItem` when the item holds no value; nothing more when there is no item) |
//!
//! Every item write is conditioned on the unique values as read (and on the version, for an
//! entity with one), so a concurrent writer that moved a value in between makes the
//! transaction fail; the write then reads again and tries again (up to 8 tries, also after a
//! `TransactionConflict` with another writer's transaction), and a value claimed by another
//! item meanwhile is [`Error::Unique`]. `None` (or an absent attribute) owns nothing, and a
//! composite constraint with a `None` part owns nothing. Two fields of one entity may share a
//! scope (a primary and a backup address): one value in both is [`Error::Unique`] before
//! sending, and a value moved from one to the other keeps its sentinel.
//!
//! An update that changes a unique value sends a transaction, which returns no item: the
//! entity it returns is the item as read, with every path the update set written as set (the
//! version as read plus one, the timestamps as set). For an entity with a version field
//! the write is conditioned on that version, so the result is exactly the stored state; without one,
//! the fields the update did not set are as read just before. Such an update cannot also
//! `add` or `append` while returning the entity ([`RequestProblem::UniqueComputed`]: send it
//! with `no_return()`). A returning `delete` returns the item as read just before it.
//!
//! # Where the guarantee cannot be kept
//!
//! Batch writes have no transactions: a batch put or delete of an entity with unique
//! constraints, and a query's `delete_all` of one, are refused before sending
//! ([`RequestProblem::UniqueUnenforced`]). A `#[hierarchy]` entity or an edge cannot declare
//! `#[unique]` (their layers write their items); that is a compile error.
//!
//! # Composed transactions
//!
//! In a transaction the caller composes ([`Db::transaction`]), a `create` adds a claim of each
//! value after its action; a `put`, `replace`, `delete` or an `update` that sets a unique field
//! reads the item (one consistent `GetItem` each) when the transaction is sent, then adds its
//! claims and releases after its action, which is conditioned on the values read. Every
//! sentinel action counts toward the 100 actions and the 4 MB; a claim that fails makes the
//! transaction's reason for that action [`Error::Unique`]. A value changed between the read
//! and the commit fails the transaction with the item's condition: send it again. One
//! transaction cannot free a value and claim it for another item (both touch the sentinel:
//! [`TransactionProblem::DuplicateItem`](crate::error::TransactionProblem::DuplicateItem)); use two.
//!
//! Values written before a constraint was declared have no sentinel: the constraint holds
//! for the values written since.
//!
//! [`RequestProblem::UniqueComputed`]: crate::error::RequestProblem::UniqueComputed
//! [`RequestProblem::UniqueUnenforced`]: crate::error::RequestProblem::UniqueUnenforced

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use super::action::{Action, Kind};
use super::put::PreparedPut;
use super::retry::{self, UNIQUE_CONFLICTS};
use super::transact::{ActionInfo, CancelReason, info};
use super::update::{PreparedUpdate, place};
use super::{Delete, NoReturn, Put, Rendered, Update, key_item};
use crate::db::Db;
use crate::error::{Error, RequestProblem};
use crate::escape::escape_into;
use crate::expr::{ExprBuilder, Node, Touch};
use crate::item::Item;
use crate::key::{Key, MAX_PARTITION_KEY_BYTES, check_key_value};
use crate::model::{Entity, Table, UniqueDef, from_item, identify};
use crate::ops::transact::{OWNER_PK, OWNER_SK, UniqueAction};
use crate::stats::Op;

/// The start of every sentinel's partition key.
pub const SENTINEL_PREFIX: &str = "_unique#";
/// The sort key of every sentinel, on a table with a sort key.
pub const SENTINEL_SK: &str = "_unique";
/// The end of a sentinel's entity type (`User:unique`).
pub const SENTINEL_TYPE_SUFFIX: &str = ":unique";

/// The partition and sort key of the sentinel of `text`, a value of `def` (checked against
/// the key limits: a value too long for a key is [`Error::InvalidKey`] naming the field).
pub fn sentinel_key<E: Entity>(
    def: &UniqueDef,
    text: &str,
) -> Result<(String, Option<String>), Error> {
    let mut pk = String::with_capacity(SENTINEL_PREFIX.len() + def.scope.len() + text.len() + 1);
    pk.push_str(SENTINEL_PREFIX);
    escape_into(def.scope, &mut pk);
    pk.push('#');
    pk.push_str(text);
    check_key_value(E::NAME, def.field, &pk, MAX_PARTITION_KEY_BYTES)?;
    Ok((pk, <E::Table as Table>::SK.map(|_| SENTINEL_SK.to_owned())))
}

/// The value texts of `E`'s constraints in `item` (all `None` without an item).
pub(crate) fn texts<E: Entity>(item: Option<&Item>) -> Result<Vec<Option<String>>, Error> {
    let mut out = vec![None; E::UNIQUES.len()];
    if let Some(item) = item {
        E::unique_texts(item, &mut |i, text| {
            if let Some(slot) = out.get_mut(i) {
                *slot = text;
            }
        })?;
    }
    Ok(out)
}

/// One sentinel action, rendered.
pub(crate) struct SentinelWrite {
    pub info: ActionInfo,
    pub item: TransactWriteItem,
    pub size: usize,
}

/// `sentinel owned by owner`, in `b`.
fn owned_by<E: Entity>(b: &mut ExprBuilder, owner: &Key<E>) -> String {
    let opk = b.name(OWNER_PK);
    let vpk = b.value(AttributeValue::S(owner.pk().to_owned()));
    let osk = b.name(OWNER_SK);
    match owner.sk() {
        Some(sk) => {
            let vsk = b.value(AttributeValue::S(sk.to_owned()));
            format!("({opk} = {vpk} AND {osk} = {vsk})")
        }
        None => format!("({opk} = {vpk} AND attribute_not_exists({osk}))"),
    }
}

/// The key item of a sentinel.
fn sentinel_item<E: Entity>(pk: &str, sk: Option<&str>) -> Item {
    let mut item = Item::with_capacity(6);
    item.insert(<E::Table as Table>::PK.to_owned(), AttributeValue::S(pk.to_owned()));
    if let (Some(attr), Some(sk)) = (<E::Table as Table>::SK, sk) {
        item.insert(attr.to_owned(), AttributeValue::S(sk.to_owned()));
    }
    item
}

/// Claims `text` for `owner`: a `Put` of the sentinel, on condition that there is none or
/// that `owner` owns it already.
fn claim<E: Entity>(
    table: &str,
    def: &'static UniqueDef,
    text: &str,
    owner: &Key<E>,
) -> Result<SentinelWrite, Error> {
    let (pk, sk) = sentinel_key::<E>(def, text)?;
    let mut item = sentinel_item::<E>(&pk, sk.as_deref());
    if let Some(attr) = <E::Table as Table>::TYPE_ATTR {
        let kind = format!("{}{SENTINEL_TYPE_SUFFIX}", E::NAME);
        item.insert(attr.to_owned(), AttributeValue::S(kind));
    }
    item.insert(OWNER_PK.to_owned(), AttributeValue::S(owner.pk().to_owned()));
    if let Some(sk) = owner.sk() {
        item.insert(OWNER_SK.to_owned(), AttributeValue::S(sk.to_owned()));
    }
    let mut b = ExprBuilder::default();
    let p = b.name(<E::Table as Table>::PK);
    let owned = owned_by(&mut b, owner);
    let action = Action::put(item)
        .guarded(format!("attribute_not_exists({p}) OR {owned}"), b)
        .return_old(true);
    rendered(table, E::NAME, pk, sk, action, UniqueAction { def, claim: true })
}

/// Releases the sentinel `pk` held by `owner`: a `Delete` of it, on condition that `owner`
/// owns it (or that there is none: a value written before the constraint was declared).
fn release_key<E: Entity>(
    table: &str,
    def: &'static UniqueDef,
    pk: String,
    owner: &Key<E>,
) -> Result<SentinelWrite, Error> {
    let sk = <E::Table as Table>::SK.map(|_| SENTINEL_SK.to_owned());
    let key = sentinel_item::<E>(&pk, sk.as_deref());
    let mut b = ExprBuilder::default();
    let p = b.name(<E::Table as Table>::PK);
    let owned = owned_by(&mut b, owner);
    let action = Action::delete(key)
        .guarded(format!("attribute_not_exists({p}) OR {owned}"), b)
        .return_old(true);
    rendered(table, E::NAME, pk, sk, action, UniqueAction { def, claim: false })
}

fn rendered(
    table: &str,
    entity: &'static str,
    pk: String,
    sk: Option<String>,
    action: Action,
    unique: UniqueAction,
) -> Result<SentinelWrite, Error> {
    let size = action.size();
    let item = action.into_transact_item(table)?;
    Ok(SentinelWrite {
        info: ActionInfo { entity, pk, sk, explain: None, unique: Some(unique) },
        item,
        size,
    })
}

/// The sentinel writes that move `owner`'s constraints from the `old` texts to the `new`
/// ones: a claim of each new value, a release of each old one, nothing for a value whose
/// sentinel stays (the same value, or a value moved between two fields of one scope). Two
/// fields of one scope given one value are [`Error::Unique`] (the value would be owned twice).
pub(crate) fn moves<E: Entity>(
    table: &str,
    owner: &Key<E>,
    old: &[Option<String>],
    new: &[Option<String>],
) -> Result<Vec<SentinelWrite>, Error> {
    let keyed = |texts: &[Option<String>]| -> Result<Vec<(String, usize)>, Error> {
        let mut out: Vec<(String, usize)> = Vec::new();
        for (i, def) in E::UNIQUES.iter().enumerate() {
            if let Some(text) = texts.get(i).and_then(Option::as_deref) {
                out.push((sentinel_key::<E>(def, text)?.0, i));
            }
        }
        Ok(out)
    };
    let (old, new_keys) = (keyed(old)?, keyed(new)?);
    let mut out = Vec::new();
    for (n, (pk, i)) in new_keys.iter().enumerate() {
        let Some(def) = E::UNIQUES.get(*i) else { continue };
        if new_keys.iter().take(n).any(|(other, _)| other == pk) {
            return Err(Error::Unique {
                entity: E::NAME,
                field: def.field,
                scope: def.scope,
                owner: Some(owner.to_string()),
            });
        }
        if !old.iter().any(|(other, _)| other == pk) {
            let text = new.get(*i).and_then(Option::as_deref).unwrap_or_default();
            out.push(claim(table, def, text, owner)?);
        }
    }
    let mut released: Vec<&str> = Vec::new();
    for (pk, i) in &old {
        let Some(def) = E::UNIQUES.get(*i) else { continue };
        if new_keys.iter().any(|(other, _)| other == pk) || released.contains(&pk.as_str()) {
            continue;
        }
        released.push(pk);
        out.push(release_key::<E>(table, def, pk.clone(), owner)?);
    }
    Ok(out)
}

/// The condition that the attributes of the constraints `which` picks (and the version, for
/// an entity with one) hold what `item` holds: a concurrent writer that changed them makes
/// the write fail rather than leave a sentinel behind.
fn held<E: Entity>(item: Option<&Item>, which: impl Fn(usize) -> bool) -> Option<Node> {
    let mut attrs: Vec<&'static str> = Vec::new();
    for (i, def) in E::UNIQUES.iter().enumerate() {
        if which(i) {
            for attr in def.attrs {
                if !attrs.contains(attr) {
                    attrs.push(attr);
                }
            }
        }
    }
    if let Some(def) = E::VERSION {
        attrs.push(def.attr);
    }
    attrs
        .into_iter()
        .map(|attr| Node::attr_is(attr, item.and_then(|i| i.get(attr)).cloned()))
        .reduce(|a, b| a.combine(b, true))
}

/// Adds `node` to a builder's condition.
fn with_held(condition: Option<Node>, node: Option<Node>) -> Option<Node> {
    match (condition, node) {
        (Some(c), Some(n)) => Some(c.combine(n, true)),
        (c, n) => c.or(n),
    }
}

/// The item of `key` as stored (strongly consistent), with the library's markers; `None`
/// when there is none.
async fn read<E: Entity>(db: &Db<E::Table>, key: &Key<E>) -> Result<Option<Item>, Error> {
    let request = db
        .client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(key_item(key)))
        .consistent_read(true)
        .set_return_consumed_capacity(db.capacity_mode());
    let out = retry::send(db, Op::GetItem, || request.send()).await?;
    Ok(out.item)
}

/// The texts of the item as read, counting an item of another entity type as holding
/// nothing (the write's guard refuses it).
fn read_texts<E: Entity>(item: Option<&Item>) -> Result<Vec<Option<String>>, Error> {
    match item {
        Some(i) if identify::<E>(i).is_ok() => texts::<E>(Some(i)),
        _ => texts::<E>(None),
    }
}

/// True when the item stored at the failure (`current`) no longer holds the values read
/// (`read`), or another version: a concurrent writer got in between, and the write is tried
/// again from a new read.
fn overtaken<E: Entity>(read: Option<&Item>, current: Option<&Item>) -> bool {
    let (Ok(a), Ok(b)) = (read_texts::<E>(read), read_texts::<E>(current)) else {
        return false;
    };
    fn version<E: Entity>(item: Option<&Item>) -> Option<&AttributeValue> {
        E::VERSION.and_then(|d| item.and_then(|i| i.get(d.attr)))
    }
    a != b || version::<E>(read) != version::<E>(current) || read.is_some() != current.is_some()
}

/// How a transaction of an item and its sentinels ended, when it did not commit.
enum Failed {
    /// Another transaction was in progress on one of the items: try again.
    Conflict(Error),
    /// The item's own write failed its guard or condition: this error, with the stored item.
    Item(Error),
    /// Anything else, as the write's error (a claimed value is [`Error::Unique`]).
    Other(Error),
}

/// Sends the item's write and its sentinel writes as one `TransactWriteItems`.
async fn commit<E: Entity>(
    db: &Db<E::Table>,
    item: (ActionInfo, Action),
    sentinels: Vec<SentinelWrite>,
) -> Result<(), Failed> {
    let (item_info, action) = item;
    let size = action.size();
    let mut tx = db.transaction();
    match action.into_transact_item(db.table_name()) {
        Ok(item) => tx = tx.push_raw(item_info, item, size),
        Err(e) => return Err(Failed::Other(e)),
    }
    for s in sentinels {
        tx = tx.push_raw(s.info, s.item, s.size);
    }
    match tx.send().await {
        Ok(()) => Ok(()),
        Err(e) if e.is_transaction_conflict() => Err(Failed::Conflict(e)),
        Err(Error::TransactionCanceled { reasons, source }) => {
            let mut item_error = None;
            let mut sentinel_error = None;
            let mut rest = Vec::with_capacity(reasons.len());
            for r in reasons {
                match r.reason {
                    CancelReason::Condition(e) if r.action == 0 && item_error.is_none() => {
                        item_error = Some(e)
                    }
                    CancelReason::Condition(e) if r.action > 0 && sentinel_error.is_none() => {
                        sentinel_error = Some(e)
                    }
                    reason => rest.push(crate::error::ActionReason { reason, ..r }),
                }
            }
            match (item_error, sentinel_error) {
                (Some(e), _) => Err(Failed::Item(e)),
                (None, Some(e)) => Err(Failed::Other(e)),
                (None, None) => {
                    Err(Failed::Other(Error::TransactionCanceled { reasons: rest, source }))
                }
            }
        }
        Err(e) => Err(Failed::Other(e)),
    }
}

/// `create`, `put` or `replace` of an entity with unique constraints.
pub(crate) async fn put<E: Entity>(mut put: Put<'_, E>) -> Result<(), Error> {
    let db = put.db;
    let creating = put.kind == super::WriteKind::Create;
    let caller_condition = put.condition.take();
    let mut attempt = 1;
    loop {
        let key = put.target()?.get().key();
        key.validate()?;
        // A create needs no read: there must be no item, so it holds no value.
        let old = if creating { None } else { read::<E>(db, &key).await? };
        let old_texts = read_texts::<E>(old.as_ref())?;
        let held = if creating { None } else { held::<E>(old.as_ref(), |_| true) };
        put.condition = with_held(caller_condition.clone(), held);
        let PreparedPut { write, item, next_version, stamp } = put.prepare()?;
        let new_texts = texts::<E>(Some(&item))?;
        let sentinels = moves::<E>(db.table_name(), &key, &old_texts, &new_texts)?;

        if creating && sentinels.is_empty() {
            // Nothing to claim: the plain create.
            return put.send_item().await;
        }
        // The item's write and the sentinels' in one transaction (the item alone when no
        // value moves: still conditioned on the values as read).
        let item_info = info(&write);
        let action = write.into_action(Kind::Put(item));
        let failed = match commit::<E>(db, (item_info, action), sentinels).await {
            Ok(()) => {
                if let Some(target) = put.target.as_mut() {
                    target.written(next_version, stamp);
                }
                return Ok(());
            }
            Err(f) => f,
        };
        if creating && matches!(failed, Failed::Item(_)) {
            return Err(match failed {
                Failed::Item(e) | Failed::Conflict(e) | Failed::Other(e) => e,
            });
        }
        retry_or_fail::<E>(failed, attempt, old.as_ref())?;
        UNIQUE_CONFLICTS.pause(attempt).await;
        attempt += 1;
    }
}

/// The error of an update whose unique field (or, when it returns the entity, another
/// field) is computed from the stored item.
fn computed<E: Entity>(field: impl Into<String>) -> Error {
    Error::InvalidRequest {
        path: String::new(),
        problem: RequestProblem::UniqueComputed { entity: E::NAME, field: field.into() },
    }
}

/// An update of an entity with unique constraints. One that sets or removes none of their
/// fields is the plain update; one that does reads the item first (see the module).
pub(crate) async fn update<E: Entity>(
    mut update: Update<'_, E, NoReturn>,
    want_item: bool,
) -> Result<Option<E>, Error> {
    let mut touched = vec![false; E::UNIQUES.len()];
    for (i, def) in E::UNIQUES.iter().enumerate() {
        for attr in def.attrs {
            match update.actions.touch(attr) {
                Touch::Untouched => {}
                Touch::Set(_) | Touch::Removed => {
                    if let Some(t) = touched.get_mut(i) {
                        *t = true;
                    }
                }
                Touch::Computed => return Err(computed::<E>(*attr)),
            }
        }
    }
    if !touched.contains(&true) {
        return update.execute_item(want_item).await;
    }
    let db = update.db;
    let key = update.key.clone();
    key.validate()?;
    let caller_condition = update.condition.take();
    // One time for the write and for the entity it returns.
    if update.stamp.is_none() {
        update.stamp = Some(db.stamp(false));
    }
    let mut attempt = 1;
    loop {
        let old = read::<E>(db, &key).await?;
        let old_texts = read_texts::<E>(old.as_ref())?;
        // The values after the update: the item as read, with the values set placed on it.
        let mut after = old.clone().unwrap_or_default();
        for attr in E::UNIQUES.iter().flat_map(|d| d.attrs.iter()) {
            match update.actions.touch(attr) {
                Touch::Set(v) => {
                    after.insert((*attr).to_owned(), v.clone());
                }
                Touch::Removed => {
                    after.remove(*attr);
                }
                Touch::Untouched | Touch::Computed => {}
            }
        }
        let new_texts = texts::<E>(Some(&after))?;
        let sentinels = moves::<E>(db.table_name(), &key, &old_texts, &new_texts)?;
        update.condition =
            with_held(caller_condition.clone(), held::<E>(old.as_ref(), |i| touched[i]));
        let failed = if sentinels.is_empty() {
            // No value moves: the plain update (one request, its own result), conditioned on
            // the values as read.
            match update.duplicate().execute_item(want_item).await {
                Ok(out) => return Ok(out),
                Err(e) => Failed::Item(e),
            }
        } else {
            let produced =
                if want_item { Some(produced(&update, &key, old.as_ref())?) } else { None };
            let PreparedUpdate { write, update_expression, .. } = update.prepare()?;
            let item_info = info(&write);
            let expression = update_expression;
            let action = write.into_action(Kind::Update { key: key_item(&key), expression });
            match commit::<E>(db, (item_info, action), sentinels).await {
                Ok(()) => return produced.map(from_item).transpose(),
                Err(f) => f,
            }
        };
        retry_or_fail::<E>(failed, attempt, old.as_ref())?;
        UNIQUE_CONFLICTS.pause(attempt).await;
        attempt += 1;
    }
}

/// Returns the error of a failed try unless another try may succeed: a transaction conflict,
/// or a concurrent writer that changed the values read.
fn retry_or_fail<E: Entity>(failed: Failed, attempt: u32, old: Option<&Item>) -> Result<(), Error> {
    match failed {
        Failed::Conflict(e) if attempt >= UNIQUE_CONFLICTS.tries => Err(e),
        Failed::Conflict(_) => Ok(()),
        Failed::Item(e)
            if attempt < UNIQUE_CONFLICTS.tries && overtaken::<E>(old, e.current_item()) =>
        {
            Ok(())
        }
        Failed::Item(e) | Failed::Other(e) => Err(e),
    }
}

/// The item an update that changes a unique value produces, computed before sending (a
/// transaction returns nothing): the item as read with every path the update writes placed
/// on it, and the next version.
fn produced<E: Entity>(
    update: &Update<'_, E, NoReturn>,
    key: &Key<E>,
    old: Option<&Item>,
) -> Result<Item, Error> {
    let (actions, _) = update.effective()?;
    let writes = actions.plain_writes().ok_or_else(|| computed::<E>("an `add` or `append`"))?;
    let mut item = old.cloned().unwrap_or_default();
    item.extend(key_item(key));
    for (path, value, if_absent) in writes {
        if if_absent {
            match path.segments() {
                [crate::expr::PathSegment::Name(name)] if item.contains_key(name.as_ref()) => {
                    continue;
                }
                [crate::expr::PathSegment::Name(_)] => {}
                _ => return Err(computed::<E>(path.to_string())),
            }
        }
        place(&mut item, path.segments(), value);
    }
    if let Some(def) = E::VERSION {
        let stored = match old.and_then(|i| i.get(def.attr)) {
            Some(AttributeValue::N(n)) => n.parse::<u64>().unwrap_or(0),
            _ => 0,
        };
        item.insert(def.attr.to_owned(), AttributeValue::N(stored.saturating_add(1).to_string()));
    }
    Ok(item)
}

/// A delete of an entity with unique constraints: the item is read first, and its values'
/// sentinels are deleted with it (see the module).
pub(crate) async fn delete<E: Entity>(
    mut delete: Delete<'_, E, NoReturn>,
    want_old: bool,
) -> Result<Option<Item>, Error> {
    let db = delete.db;
    let key = delete.key.clone();
    key.validate()?;
    super::check_expected_version::<E>(delete.expected_version)?;
    let caller_condition = delete.condition.take();
    let mut attempt = 1;
    loop {
        let old = read::<E>(db, &key).await?;
        let Some(stored) = old.as_ref() else {
            // Nothing to delete: as the plain delete answers.
            if caller_condition.is_some() || delete.expected_version.is_some() {
                return Err(Error::NotFound { entity: E::NAME, key: key.to_string() });
            }
            return Ok(None);
        };
        let old_texts = read_texts::<E>(Some(stored))?;
        let none = vec![None; old_texts.len()];
        let sentinels = moves::<E>(db.table_name(), &key, &old_texts, &none)?;
        delete.condition = with_held(caller_condition.clone(), held::<E>(old.as_ref(), |_| true));
        let failed = if sentinels.is_empty() {
            match delete.duplicate().execute_item(want_old).await {
                Ok(out) => return Ok(out),
                Err(e) => Failed::Item(e),
            }
        } else {
            let rendered: Rendered<E> = delete.prepare()?;
            let item_info = info(&rendered);
            let action = rendered.into_action(Kind::Delete(key_item(&key)));
            match commit::<E>(db, (item_info, action), sentinels).await {
                Ok(()) => return Ok(if want_old { old } else { None }),
                Err(f) => f,
            }
        };
        retry_or_fail::<E>(failed, attempt, old.as_ref())?;
        UNIQUE_CONFLICTS.pause(attempt).await;
        attempt += 1;
    }
}

// Composed transactions ([`Db::transaction`]): the writes that need the stored values read
// them when the transaction is sent, and add their sentinel actions after their own.

/// A `put` or `replace` of a composed transaction: the write conditioned on the values
/// stored now, and the sentinel writes that move them (a `create` reads nothing).
pub(crate) async fn prepare_put<'a, E: Entity>(
    mut put: Put<'a, E>,
) -> Result<(Put<'a, E>, Vec<SentinelWrite>), Error> {
    let db = put.db;
    let key = put.target()?.get().key();
    key.validate()?;
    let creating = put.kind == super::WriteKind::Create;
    let old = if creating { None } else { read::<E>(db, &key).await? };
    if !creating {
        put.condition = with_held(put.condition.take(), held::<E>(old.as_ref(), |_| true));
    }
    let new = texts::<E>(Some(&crate::model::to_item(put.target()?.get(), None)?))?;
    let sentinels = moves::<E>(db.table_name(), &key, &read_texts::<E>(old.as_ref())?, &new)?;
    Ok((put, sentinels))
}

/// An `update` of a composed transaction that sets or removes a unique field: the update
/// conditioned on the values stored now, and the sentinel writes that move them.
pub(crate) async fn prepare_update<'a, E: Entity>(
    mut update: Update<'a, E>,
) -> Result<(Update<'a, E>, Vec<SentinelWrite>), Error> {
    let db = update.db;
    let key = update.key.clone();
    key.validate()?;
    let mut touched = vec![false; E::UNIQUES.len()];
    let old = read::<E>(db, &key).await?;
    let mut after = old.clone().unwrap_or_default();
    for (i, def) in E::UNIQUES.iter().enumerate() {
        for attr in def.attrs {
            match update.actions.touch(attr) {
                Touch::Untouched => continue,
                Touch::Set(v) => {
                    after.insert((*attr).to_owned(), v.clone());
                }
                Touch::Removed => {
                    after.remove(*attr);
                }
                Touch::Computed => return Err(computed::<E>(*attr)),
            }
            if let Some(t) = touched.get_mut(i) {
                *t = true;
            }
        }
    }
    let held = held::<E>(old.as_ref(), |i| touched.get(i).copied().unwrap_or(false));
    update.condition = with_held(update.condition.take(), held);
    let new = texts::<E>(Some(&after))?;
    let sentinels = moves::<E>(db.table_name(), &key, &read_texts::<E>(old.as_ref())?, &new)?;
    Ok((update, sentinels))
}

/// A `delete` of a composed transaction: the delete conditioned on the values stored now,
/// and the sentinel writes that free them.
pub(crate) async fn prepare_delete<'a, E: Entity>(
    mut delete: Delete<'a, E>,
) -> Result<(Delete<'a, E>, Vec<SentinelWrite>), Error> {
    let db = delete.db;
    let key = delete.key.clone();
    key.validate()?;
    let old = read::<E>(db, &key).await?;
    delete.condition = with_held(delete.condition.take(), held::<E>(old.as_ref(), |_| true));
    let old_texts = read_texts::<E>(old.as_ref())?;
    let none = vec![None; old_texts.len()];
    let sentinels = moves::<E>(db.table_name(), &key, &old_texts, &none)?;
    Ok((delete, sentinels))
}
