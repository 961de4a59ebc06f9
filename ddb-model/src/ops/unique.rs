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
//! | `put`, `replace` | 1 consistent `GetItem` (the values the item holds), then 1 `TransactWriteItems`: the item, conditioned on holding those values; a `Put` of each new value's sentinel; a `Delete` of each old value's sentinel (conditioned on this item owning it). When no value changes, 1 `PutItem` conditioned on them instead of the transaction |
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
//! In a transaction the caller composes ([`Db::transaction`](crate::Db::transaction)), a `create` adds a claim of each
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

use aws_sdk_dynamodb::types::AttributeValue;

use super::action::Action;
use super::transact::ActionInfo;
use crate::error::{Error, RequestProblem};
use crate::escape::escape_into;
use crate::expr::{ExprBuilder, Node, Touch, UpdateActions};
use crate::item::Item;
use crate::key::{Key, MAX_PARTITION_KEY_BYTES, check_key_value};
use crate::model::{Entity, Table, UniqueDef, identify};
use crate::ops::transact::{OWNER_PK, OWNER_SK, UniqueAction};

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
    def: &'static UniqueDef,
    text: &str,
    owner: &Key<E>,
) -> Result<(ActionInfo, Action), Error> {
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
    Ok(sentinel_action(UniqueAction { def, claim: true }, (pk, sk), Action::put(item), owner))
}

/// Releases the sentinel `pk` held by `owner`: a `Delete` of it, on condition that `owner`
/// owns it (or that there is none: a value written before the constraint was declared).
fn release_key<E: Entity>(
    def: &'static UniqueDef,
    pk: String,
    owner: &Key<E>,
) -> (ActionInfo, Action) {
    let sk = <E::Table as Table>::SK.map(|_| SENTINEL_SK.to_owned());
    let key = sentinel_item::<E>(&pk, sk.as_deref());
    sentinel_action(UniqueAction { def, claim: false }, (pk, sk), Action::delete(key), owner)
}

/// `action` on the sentinel at `pk` and `sk` (a claim's put, a release's delete), on condition
/// that there is no sentinel or that `owner` owns it; a failure returns the sentinel.
fn sentinel_action<E: Entity>(
    unique: UniqueAction,
    (pk, sk): (String, Option<String>),
    action: Action,
    owner: &Key<E>,
) -> (ActionInfo, Action) {
    let mut b = ExprBuilder::default();
    let p = b.name(<E::Table as Table>::PK);
    let owned = owned_by(&mut b, owner);
    let action =
        action.guarded(format!("attribute_not_exists({p}) OR {owned}"), b).return_old(true);
    (ActionInfo { entity: E::NAME, pk, sk, explain: None, unique: Some(unique) }, action)
}

/// The sentinel writes that move `owner`'s constraints from the `old` texts to the `new`
/// ones: a claim of each new value, a release of each old one, nothing for a value whose
/// sentinel stays (the same value, or a value moved between two fields of one scope). Two
/// fields of one scope given one value are [`Error::Unique`] (the value would be owned twice).
fn moves<E: Entity>(
    owner: &Key<E>,
    old: &[Option<String>],
    new: &[Option<String>],
) -> Result<Vec<(ActionInfo, Action)>, Error> {
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
            out.push(claim(def, text, owner)?);
        }
    }
    let mut released: Vec<&str> = Vec::new();
    for (pk, i) in &old {
        let Some(def) = E::UNIQUES.get(*i) else { continue };
        if new_keys.iter().any(|(other, _)| other == pk) || released.contains(&pk.as_str()) {
            continue;
        }
        released.push(pk);
        out.push(release_key::<E>(def, pk.clone(), owner));
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
pub(crate) fn overtaken<E: Entity>(read: Option<&Item>, current: Option<&Item>) -> bool {
    let (Ok(a), Ok(b)) = (read_texts::<E>(read), read_texts::<E>(current)) else {
        return false;
    };
    fn version<E: Entity>(item: Option<&Item>) -> Option<&AttributeValue> {
        E::VERSION.and_then(|d| item.and_then(|i| i.get(d.attr)))
    }
    a != b || version::<E>(read) != version::<E>(current) || read.is_some() != current.is_some()
}

/// What a write does to the values of unique constraints.
pub(crate) enum Change<'x, E> {
    /// Writes the whole `item`; a `create` (no item may exist) reads nothing.
    Put { item: Item, creating: bool },
    /// Applies `actions`, which set or remove the fields of the constraints `touched` picks.
    Update { actions: &'x UpdateActions<E>, touched: Vec<bool> },
    /// Deletes the item.
    Delete,
}

impl<'x, E: Entity> Change<'x, E> {
    /// What an update does to unique values; one that computes a unique field from the
    /// stored item (`add`, `append`) is refused.
    pub(crate) fn update(actions: &'x UpdateActions<E>) -> Result<Self, Error> {
        let mut touched = vec![false; E::UNIQUES.len()];
        for (t, def) in touched.iter_mut().zip(E::UNIQUES) {
            for attr in def.attrs {
                match actions.touch(attr) {
                    Touch::Untouched => {}
                    Touch::Set(_) | Touch::Removed => *t = true,
                    Touch::Computed => return Err(computed::<E>(*attr)),
                }
            }
        }
        Ok(Change::Update { actions, touched })
    }

    /// Whether the values the write moves depend on the item as stored (a read first).
    pub(crate) fn reads(&self) -> bool {
        match self {
            Change::Put { creating, .. } => !creating,
            Change::Update { touched, .. } => touched.contains(&true),
            Change::Delete => true,
        }
    }
}

/// What the unique step adds to a write: a condition that the values it read still hold,
/// and the sentinel actions that move them.
#[derive(Default)]
pub(crate) struct Additions {
    pub held: Option<Node>,
    pub actions: Vec<(ActionInfo, Action)>,
}

/// The additions of `change` to the write of `owner`, given the item as stored (`None`
/// when the write did not read, or there is none).
pub(crate) fn additions<E: Entity>(
    owner: &Key<E>,
    change: &Change<'_, E>,
    stored: Option<&Item>,
) -> Result<Additions, Error> {
    let (new, held) = match change {
        Change::Put { item, creating } => {
            (texts::<E>(Some(item))?, if *creating { None } else { held::<E>(stored, |_| true) })
        }
        Change::Update { touched, .. } if !touched.contains(&true) => {
            return Ok(Additions::default());
        }
        Change::Update { actions, touched } => {
            // The values after the update: the item as read, with the values set placed on it.
            let mut after = stored.cloned().unwrap_or_default();
            for attr in E::UNIQUES.iter().flat_map(|d| d.attrs.iter()) {
                match actions.touch(attr) {
                    Touch::Set(v) => {
                        after.insert((*attr).to_owned(), v.clone());
                    }
                    Touch::Removed => {
                        after.remove(*attr);
                    }
                    Touch::Untouched | Touch::Computed => {}
                }
            }
            let which = |i: usize| touched.get(i).copied().unwrap_or(false);
            (texts::<E>(Some(&after))?, held::<E>(stored, which))
        }
        Change::Delete => (vec![None; E::UNIQUES.len()], held::<E>(stored, |_| true)),
    };
    let actions = moves::<E>(owner, &read_texts::<E>(stored)?, &new)?;
    Ok(Additions { held, actions })
}

/// The error of an update whose unique field (or, when it returns the entity, another
/// field) is computed from the stored item.
pub(crate) fn computed<E: Entity>(field: impl Into<String>) -> Error {
    Error::InvalidRequest {
        path: String::new(),
        problem: RequestProblem::UniqueComputed { entity: E::NAME, field: field.into() },
    }
}
