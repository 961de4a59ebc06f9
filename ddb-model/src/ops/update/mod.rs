//! [`Update`]: `UpdateItem` of an existing item (or an upsert), the builder and how it is
//! awaited. What the update writes is computed in `prepare.rs`, how it is sent in `send.rs`,
//! the marked `UpdateItem` of a non-idempotent update that returns its result in `marker.rs`.

mod marker;
mod place;
mod prepare;
mod sealed;
mod send;

use crate::ops::startable::startable;
use std::marker::PhantomData;

use aws_sdk_dynamodb::types::AttributeValue;
use serde::Serialize;

use super::{NoReturn, ReturnNew, Returns, Running, and_condition, builder_future};
use crate::db::Db;
use crate::error::Error;
use crate::expr::{Condition, Node, UpdateActions, UpdateVerbs};
use crate::key::Key;
use crate::model::{Entity, Stamp, Table};

pub(crate) use place::place;
pub(crate) use prepare::{PreparedUpdate, with_index_keys, with_updated_at};

/// Changes attributes of an existing item in place. Made by `E::update(&db, ..)` or
/// [`Db::update`].
///
/// The item must exist and be of the entity's type ([`Error::NotFound`],
/// [`Error::WrongEntityType`]), unless the update is an [`upsert`](Update::upsert). Key
/// fields and the version field cannot be changed (it does not compile); the version, if
/// any, is incremented by every update, and [`expect_version`](Update::expect_version) adds
/// optimistic locking.
///
/// `.await` returns the updated entity: the state this update's own write produced, never a
/// separate read. Updates made only of `set`, `set_if_not_exists`, `remove` and the set
/// element actions (`add_to_set`, `delete_from_set`, `replace_set`: idempotent) are one
/// `UpdateItem` with `ReturnValues=ALL_NEW`.
///
/// # `add` and `append`: the caller's own result, safe to retry
///
/// Applied twice (an SDK retry of a request whose response was lost), `add` and `append`
/// would add twice. So they are made safe to send again:
///
/// - **Returning the entity** (the default): one `UpdateItem` (`ALL_NEW`) that also writes
///   *marker* attributes, named after a token unique to the call (`_ddbm.<time>.<random>.<n>`)
///   and holding every value the update computes (each `add`, `append` and
///   `set_if_not_exists` result, the new version), conditioned on the marker being absent.
///   `add` is sent as `SET n = if_not_exists(n, 0) + d` (what `ADD n d` does for numbers);
///   set element actions ride along, unmarked. `ALL_NEW` is this write's own state (a
///   concurrent `add` cannot slip in, as it could before a separate read). A retry that
///   finds the marker (an earlier attempt was applied, its response lost) applies nothing and
///   returns the item as stored then with every path this update wrote set to what it wrote
///   (computed values from the marker, set values as given, removed paths removed; a set
///   as stored then). A second `UpdateItem` removes the markers (2 requests in all, both in
///   `db.requests()`). Transport failures are retried beyond the SDK's attempts, like
///   token-carrying transactions.
/// - **[`no_return`](Update::no_return)**: one `TransactWriteItems` with an idempotency token
///   (1 request), safe to send again within the token's 10-minute window.
///
/// Entities never see markers (reads remove them) and a field may not be named like one.
/// Markers a failed removal leaves (a transport failure after the retries) are harmless, and
/// a later returning `add`/`append` update of the item removes them once 15 minutes old.
///
/// What remains: an attempt that reaches the service only after the markers are removed (a
/// request held in the network past the SDK's timeouts) is applied again, and so is a retry
/// that lands after another writer replaced, or deleted and re-created, the whole item (a
/// `put` removes the markers with the rest). `no_return`'s token has the same window after
/// its 10 minutes.
///
/// ```
/// # use ddb_model::prelude::*;
/// # use serde::{Deserialize, Serialize};
/// #[derive(Entity, Serialize, Deserialize, Debug)]
/// #[entity(pk = "PAGE#<url>", sk = "STATS")]
/// struct PageStats { url: String, title: String, views: u64 }
///
/// # async fn demo(db: &Db) -> Result<(), Error> {
/// // `upsert`: created on the first view, counted on the others.
/// let stats = PageStats::update(db, "/home")
///     .upsert()
///     .set_if_not_exists(PageStats::TITLE, "Home")
///     .add(PageStats::VIEWS, 1)
///     .await?;
/// assert_eq!((stats.title.as_str(), stats.views), ("Home", 1));
/// // `at_least_once`: one request, without the markers.
/// let before = db.requests().total();
/// let stats = PageStats::update(db, "/home").add(PageStats::VIEWS, 1).at_least_once().await?;
/// assert_eq!((stats.views, db.requests().total() - before), (2, 1));
/// # Ok(()) }
/// # #[cfg(feature = "local")]
/// # #[tokio::main]
/// # async fn main() -> Result<(), Error> {
/// #     demo(&ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?).await
/// # }
/// # #[cfg(not(feature = "local"))]
/// # fn main() {}
/// ```
#[must_use = "an operation does nothing until it is awaited"]
pub struct Update<'a, E: Entity, R = ReturnNew> {
    pub(crate) db: &'a Db<E::Table>,
    pub(crate) key: Key<E>,
    pub(crate) actions: UpdateActions<E>,
    pub(crate) condition: Option<Node>,
    pub(crate) expected_version: Option<u64>,
    /// Put-or-update: how to read the key fields' values from the key.
    pub(crate) upsert: Option<KeyValues<E>>,
    /// The attribute names of the key fields, in the order of `E::KeyFields` (given by the
    /// generated `E::update`).
    key_attrs: Option<&'static [&'static str]>,
    /// The texts key fields store when their key texts keep less of the values given (a
    /// `CaseInsensitive`'s case), by key field: what an upsert writes instead of the value
    /// read back from the key. Empty for most entities (no allocation).
    stored_keys: Vec<(usize, String)>,
    /// `at_least_once()`: `add` and `append` as one plain `UpdateItem`, without markers.
    at_least_once: bool,
    /// The layer that copies the entity's fields ([`Entity::UPDATE_THROUGH`]) writes the
    /// copies in the same transaction: the update is not refused.
    copies_handled: bool,
    /// The time of the update, when the caller fixed it; else the handle's clock.
    pub(crate) stamp: Option<Stamp>,
    /// The started request (the entity, when asked for).
    running: Running<'a, Result<Option<E>, Error>>,
    _return: PhantomData<fn() -> R>,
}

/// Reads the values of an entity's key fields from its key, as one list.
type KeyValues<E> = fn(&Key<E>) -> Result<AttributeValue, Error>;

fn key_field_values<E: Entity>(key: &Key<E>) -> Result<AttributeValue, Error>
where
    E::KeyFields: Serialize,
{
    let fields = E::parse_key(key.pk(), key.sk())?;
    crate::item::to_value(&fields)
        .map_err(|source| Error::Serialize { entity: E::NAME.to_owned(), source })
}

impl<T: Table> Db<T> {
    /// Starts an update of the item of `key`.
    pub fn update<E: Entity<Table = T>>(&self, key: Key<E>) -> Update<'_, E> {
        Update {
            db: self,
            key,
            actions: UpdateActions::new(),
            condition: None,
            expected_version: None,
            upsert: None,
            key_attrs: None,
            stored_keys: Vec::new(),
            at_least_once: false,
            copies_handled: false,
            stamp: None,
            running: Running::default(),
            _return: PhantomData,
        }
    }
}

impl<E: Entity, R> UpdateVerbs<E> for Update<'_, E, R> {
    fn update_actions(&mut self) -> &mut UpdateActions<E> {
        &mut self.actions
    }
}

impl<'a, E: Entity, R> Update<'a, E, R> {
    /// Adds a condition on the stored item (combined with AND).
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.condition = and_condition(self.condition.take(), condition);
        self
    }

    /// Optimistic locking: the update applies only if the stored version is `version`;
    /// otherwise it fails with [`Error::VersionConflict`] and changes nothing.
    pub fn expect_version(mut self, version: u64) -> Self {
        self.expected_version = Some(version);
        self
    }

    /// Returns nothing instead of the updated entity: saves response size, and makes an
    /// update with `add` or `append` one request (a `TransactWriteItems` with an idempotency
    /// token) instead of two.
    pub fn no_return(self) -> Update<'a, E, NoReturn> {
        self.returning()
    }

    /// The same update, returning what `R2` says.
    fn returning<R2>(self) -> Update<'a, E, R2> {
        Update {
            db: self.db,
            key: self.key,
            actions: self.actions,
            condition: self.condition,
            expected_version: self.expected_version,
            upsert: self.upsert,
            key_attrs: self.key_attrs,
            stored_keys: self.stored_keys,
            at_least_once: self.at_least_once,
            copies_handled: self.copies_handled,
            stamp: self.stamp,
            running: Running::default(),
            _return: PhantomData,
        }
    }

    /// Sends an update with `add` or `append` as one plain `UpdateItem`, without the markers
    /// (or the transaction of [`no_return`](Update::no_return)) that make it safe to send
    /// again: one request instead of two, at the price of the guarantee. After a lost
    /// response the SDK's retry applies the update **again**, and the value returned is the
    /// retry's. Concurrent callers still each get a value no other caller gets (each update
    /// returns the state its own write produced): a counter that hands out numbers never
    /// hands out one twice, but may skip one. For sequences where a gap is acceptable (an
    /// issue tracker's next number); not for balances or exact counts. Idempotent updates are
    /// not affected. Example: [`Update`].
    pub fn at_least_once(mut self) -> Self {
        self.at_least_once = true;
        self
    }

    /// Put-or-update: creates the item when it is missing, instead of failing with
    /// [`Error::NotFound`]. The created item gets its key, entity type, key fields, version 1
    /// (versioned entities) and the index keys of the entity it reads back as; then every
    /// action applies as to an absent attribute (`set_if_not_exists` writes its default,
    /// `add` starts from 0, `append` from an empty list, `add_to_set` from an empty set). On an
    /// existing item of the entity's type it is the same update as without `upsert` (entity
    /// type written again, key fields and index keys kept as stored); an item of another type
    /// is [`Error::WrongEntityType`]. A key field is stored as the value given to
    /// `E::update`, as a put stores it (a [`CaseInsensitive`](crate::key::CaseInsensitive)
    /// one in the case it was given, not its key's lower case).
    ///
    /// Refused before sending ([`Error::InvalidRequest`]), whether or not the item exists,
    /// and before the service could report [`Error::SchemaOutdated`]: a created item that
    /// would not read back as the entity
    /// ([`RequestProblem::UpsertIncomplete`](crate::error::RequestProblem::UpsertIncomplete):
    /// a required field no action writes), and a nested path
    /// ([`RequestProblem::NestedPathInUpsert`](crate::error::RequestProblem::NestedPathInUpsert)),
    /// which DynamoDB rejects on an item being created. Only the generated `E::update(&db, ..)`
    /// knows the key fields' attribute names and writes them: from [`Db::update`] or in a
    /// transaction, an entity whose key fields are stored attributes is incomplete; declare
    /// them `#[entity(from_key)]` (read from the key, never stored) to upsert it there.
    ///
    /// Index keys are written with `if_not_exists` (an existing item keeps its own), those of
    /// the entity the created item reads back as (key fields, written fields, serde defaults;
    /// an `Option` left `None` keeps it out of a sparse index); a key attribute whose fields
    /// the update `set`s is written as they say (see [`Entity`](crate::Entity)'s index keys). A created
    /// item that would be in a sparse index (an `Option` part, or `when`) through defaults
    /// only is refused
    /// ([`RequestProblem::UpsertSparseIndex`](crate::error::RequestProblem)): on an
    /// existing item out of the index, the same request would put it in.
    ///
    /// Versions: an upsert bumps the version like any update (a created item has version 1).
    /// `expect_version(0)` holds only when the item is missing (or was never versioned);
    /// `expect_version(n)` with `n > 0` on a missing item is [`Error::VersionConflict`].
    /// Example: [`Update`].
    pub fn upsert(mut self) -> Self
    where
        E::KeyFields: Serialize,
    {
        self.upsert = Some(key_field_values::<E>);
        self
    }

    /// The attribute names of the key fields, and the texts they store when their key texts
    /// keep less of the values given (generated code).
    #[doc(hidden)]
    pub fn with_key_attrs(
        mut self,
        attrs: &'static [&'static str],
        stored: impl IntoIterator<Item = Option<String>>,
    ) -> Self {
        self.key_attrs = Some(attrs);
        self.stored_keys =
            stored.into_iter().enumerate().filter_map(|(i, text)| Some((i, text?))).collect();
        self
    }

    /// Sets the timestamp fields from `stamp` rather than from the clock (a layer that
    /// writes copies of the item with the same times).
    pub(crate) fn at(mut self, stamp: Stamp) -> Self {
        self.stamp = Some(stamp);
        self
    }

    /// Marks an update whose entity's copies ([`Entity::UPDATE_THROUGH`]) are written in the
    /// same transaction by the caller (the closure tree's update).
    pub(crate) fn copies_handled(mut self) -> Self {
        self.copies_handled = true;
        self
    }
}

/// The error of an update that asked for the entity and got none (cannot happen:
/// `execute(true)` returns the entity or an error).
fn no_entity<E: Entity>() -> Error {
    Error::CorruptItem {
        entity: E::NAME,
        key: String::new(),
        reason: crate::error::CorruptReason::NoAttributes,
    }
}

impl<'a, E: Entity> Update<'a, E, ReturnNew> {
    /// Sends the update and returns the entity as it is afterwards.
    pub async fn send(self) -> Result<E, Error> {
        self.execute(true).await?.ok_or_else(no_entity::<E>)
    }
}

impl<'a, E: Entity> Update<'a, E, NoReturn> {
    /// Sends the update.
    pub async fn send(self) -> Result<(), Error> {
        self.execute(false).await.map(|_| ())
    }
}

startable!(writes
    ['a, E: Entity, R: Returns] Update<'a, E, R> => Result<Option<E>, Error>,
    |u| u.db.update(u.key.clone()).returning(),
    |u| u.execute(R::WANT)
);
builder_future!(
    ['a, E: Entity] Update<'a, E, ReturnNew> => Result<E, Error>,
    |r: Result<Option<E>, Error>| r?.ok_or_else(no_entity::<E>)
);
builder_future!(['a, E: Entity] Update<'a, E, NoReturn> => Result<(), Error>, |r| r.map(|_| ()));
