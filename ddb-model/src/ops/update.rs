use std::marker::PhantomData;
use std::time::Duration;

use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use serde::Serialize;

use super::action::Action;
use super::transact::send_transact_write;
use super::{
    BoxFuture, Guard, NoReturn, Rendered, ReturnNew, Running, Startable, WriteKind, and_condition,
    builder_future, check_expected_version, idempotency_token, key_item, retry,
};
use crate::db::Db;
use crate::error::{Error, RequestProblem};
use crate::expr::{
    Condition, ExprBuilder, Marked, Node, Numeric, PathSegment, RemovePath, SetField,
    UpdateActions, UpdatePath, ValueArg,
};
use crate::item::Item;
use crate::key::{Key, MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES, check_key_value};
use crate::model::{Entity, MARKER_PREFIX, Stamp, Table, from_item};
use crate::stats::Op;

/// Changes attributes of an existing item in place. Made by `E::update(&db, ..)` or
/// [`Db::update`].
///
/// The item must exist and be of the entity's type ([`Error::NotFound`],
/// [`Error::WrongEntityType`]), unless the update is an [`upsert`](Update::upsert). Key fields and the version field cannot be changed (it does not
/// compile); the version, if any, is incremented by every update, and
/// [`expect_version`](Update::expect_version) adds optimistic locking.
///
/// `.await` returns the updated entity: the state this update's own write produced, never a
/// separate read. Updates made only of `set`, `set_if_not_exists`, `remove` and the set
/// element actions (`add_to_set`, `delete_from_set`, `replace_set`, idempotent by nature) are
/// one `UpdateItem` with `ReturnValues=ALL_NEW`. When an update also has `add` or `append`,
/// its set element actions ride along in the marked `UpdateItem`, unmarked: a retry that
/// finds the marker returns the set as stored then.
///
/// # `add` and `append`: the caller's own result, safe to retry
///
/// Updates with `add` or `append` are not idempotent: applied twice (an SDK retry of a
/// request whose response was lost), they would add twice. They are made safe to send again:
///
/// - **Returning the entity** (the default): one `UpdateItem` with `ReturnValues=ALL_NEW`
///   that also writes *marker* attributes, named after a token unique to the call
///   (`_ddbm.<time>.<random>.<n>`), holding every value the update computes (each `add` and
///   `append` result, each `set_if_not_exists` result, the new version), and is conditioned on
///   the marker being absent. `add` is sent as `SET n = if_not_exists(n, 0) + d`, which for
///   numbers is what `ADD n d` does. On success, `ALL_NEW` is this write's own state (a
///   concurrent `add` cannot slip in between, as it could with a separate read). When a retry
///   finds the marker (an earlier attempt was applied and its response lost), the update is
///   not applied again; it returns the item as stored at the retry with every path this
///   update wrote set to the value it wrote (computed values from the marker, set values as
///   given, removed paths removed): the fields this update wrote are its own result, the
///   others are as stored at the retry. A second `UpdateItem` then removes the markers (2
///   requests in all, `db.requests()` shows both). Transport failures are retried beyond the
///   SDK's attempts, like token-carrying transactions.
/// - **[`no_return`](Update::no_return)**: one `TransactWriteItems` with an idempotency token
///   (1 request), safe to send again within the token's 10-minute window.
///
/// Markers are never shown to entities (reads remove them before decoding) and a field may
/// not be named like one. If removing the markers fails (a transport failure after the
/// retries), they stay on the item, harmlessly; a later returning `add`/`append` update of
/// the item removes them once they are 15 minutes old.
///
/// The window that remains: the markers make every attempt of this call idempotent until
/// they are removed. An attempt that reaches the service only after that (a request held in
/// the network past the SDK's timeouts) would be applied again; so would a retry that lands
/// after another writer replaced or deleted and re-created the whole item (a `put` removes
/// the markers along with the rest of the item). The token of `no_return` has the same
/// window after its 10 minutes.
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

/// The actions of an update of `key` plus the index keys it rewrites because it changes
/// fields they are made of (see [`Entity::index_key_updates`]), and the names of those key
/// attributes.
///
/// For an upsert (`upsert`), a field given only with `set_if_not_exists` does not count as
/// changed: a created item gets the keys of those values (written with `if_not_exists`, like
/// the fields), an existing one keeps both its fields and its keys.
pub(crate) fn with_index_keys<E: Entity>(
    key: &Key<E>,
    actions: &UpdateActions<E>,
    upsert: bool,
) -> Result<(UpdateActions<E>, Vec<&'static str>), Error> {
    let mut changes: Vec<(&'static str, Option<String>)> = Vec::new();
    let mut sink = |attr, value| changes.push((attr, value));
    if upsert {
        E::index_key_updates(key, &actions.without_if_not_exists(), &mut sink)?;
    } else {
        E::index_key_updates(key, actions, &mut sink)?;
    }
    let mut out = actions.clone();
    let mut rewritten = Vec::with_capacity(changes.len());
    for (attr, value) in changes {
        out = match value {
            Some(text) => out.set_raw(attr, AttributeValue::S(text)),
            None => out.remove_raw(attr),
        };
        rewritten.push(attr);
    }
    Ok((out, rewritten))
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
            at_least_once: false,
            copies_handled: false,
            stamp: None,
            running: Running::default(),
            _return: PhantomData,
        }
    }
}

impl<'a, E: Entity, R> Update<'a, E, R> {
    /// `SET path = value`.
    pub fn set<V>(mut self, path: impl UpdatePath<E, V>, value: impl ValueArg<V>) -> Self {
        self.actions = self.actions.set(path, value);
        self
    }

    /// Sets the attribute only when it is absent.
    pub fn set_if_not_exists<V>(
        mut self,
        path: impl UpdatePath<E, V>,
        value: impl ValueArg<V>,
    ) -> Self {
        self.actions = self.actions.set_if_not_exists(path, value);
        self
    }

    /// Removes an `Option` attribute (it reads back as `None`).
    pub fn remove(mut self, path: impl RemovePath<E>) -> Self {
        self.actions = self.actions.remove(path);
        self
    }

    /// Adds to a number attribute (absent counts as 0).
    pub fn add<V: Numeric>(mut self, path: impl UpdatePath<E, V>, value: impl ValueArg<V>) -> Self {
        self.actions = self.actions.add(path, value);
        self
    }

    /// Appends to a list attribute (absent counts as empty).
    pub fn append<V: Serialize>(
        mut self,
        path: impl UpdatePath<E, Vec<V>>,
        items: impl IntoIterator<Item = V>,
    ) -> Self {
        self.actions = self.actions.append(path, items);
        self
    }

    /// Adds elements to a set attribute (`ADD`): see [`UpdateActions::add_to_set`]. An
    /// absent attribute becomes the set; idempotent, so it needs no marker.
    pub fn add_to_set<S: SetField, V: ValueArg<S::Element>>(
        mut self,
        path: impl UpdatePath<E, S>,
        elements: impl IntoIterator<Item = V>,
    ) -> Self {
        self.actions = self.actions.add_to_set(path, elements);
        self
    }

    /// Removes elements from a set attribute (`DELETE`): see
    /// [`UpdateActions::delete_from_set`]. Removing the last element removes the attribute.
    pub fn delete_from_set<S: SetField, V: ValueArg<S::Element>>(
        mut self,
        path: impl UpdatePath<E, S>,
        elements: impl IntoIterator<Item = V>,
    ) -> Self {
        self.actions = self.actions.delete_from_set(path, elements);
        self
    }

    /// Replaces a whole set attribute: see [`UpdateActions::replace_set`].
    pub fn replace_set<S: SetField, V: ValueArg<S::Element>>(
        mut self,
        path: impl UpdatePath<E, S>,
        elements: impl IntoIterator<Item = V>,
    ) -> Self {
        self.actions = self.actions.replace_set(path, elements);
        self
    }

    /// Adds prepared actions.
    pub fn actions(mut self, actions: UpdateActions<E>) -> Self {
        self.actions = self.actions.merge(actions);
        self
    }

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
        Update {
            db: self.db,
            key: self.key,
            actions: self.actions,
            condition: self.condition,
            expected_version: self.expected_version,
            upsert: self.upsert,
            key_attrs: self.key_attrs,
            at_least_once: self.at_least_once,
            copies_handled: self.copies_handled,
            stamp: self.stamp,
            running: Running::default(),
            _return: PhantomData,
        }
    }

    /// Sends an update with `add` or `append` as one plain `UpdateItem`, without the markers
    /// (or the transaction, with [`no_return`](Update::no_return)) that make it safe to send
    /// again: one request instead of two, at the price of the guarantee. When a response is
    /// lost after the service applied the update, the SDK's retry applies it **again**, and
    /// the value returned is the retry's. Concurrent callers still each get a value no other
    /// caller gets (the service applies updates one at a time, and each returns the state
    /// its own write produced), so a counter that hands out numbers never hands out one
    /// twice, but after a lost response it may skip one.
    ///
    /// For number sequences where a gap is acceptable and a request is worth saving (an
    /// issue tracker's next issue number); not for balances or counts that must be exact.
    /// Idempotent updates are not affected.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Entity, Serialize, Deserialize, Debug)]
    /// #[entity(pk = "REPO#<name>", sk = "REPO")]
    /// struct Repo { name: String, last_issue: u64 }
    ///
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// # Repo { name: "kv".into(), last_issue: 0 }.create(db).await?;
    /// let before = db.requests().total();
    /// let repo = Repo::update(db, "kv").add(Repo::LAST_ISSUE, 1).at_least_once().await?;
    /// assert_eq!((repo.last_issue, db.requests().total() - before), (1, 1));
    /// # Ok(()) }
    /// # #[cfg(feature = "local")]
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Error> {
    /// #     demo(&ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?).await
    /// # }
    /// # #[cfg(not(feature = "local"))]
    /// # fn main() {}
    /// ```
    pub fn at_least_once(mut self) -> Self {
        self.at_least_once = true;
        self
    }

    /// Put-or-update: creates the item when it is missing, instead of failing with
    /// [`Error::NotFound`]. The created item gets its key, its entity type, its key fields,
    /// version 1 (versioned entities) and the index keys of the entity it reads back as;
    /// then every action applies as to an absent attribute (`set_if_not_exists` writes its
    /// default, `add` starts from 0, `append` from an empty list, `add_to_set` from an empty
    /// set). On an existing item of the entity's type it is the same update as without
    /// `upsert` (the entity type and key fields are written again, unchanged; index keys
    /// are kept). An item of another entity type is [`Error::WrongEntityType`].
    ///
    /// Refused before sending ([`Error::InvalidRequest`]), whether or not the item exists:
    /// an update whose created item would not read back as the entity
    /// ([`RequestProblem::UpsertIncomplete`](crate::error::RequestProblem::UpsertIncomplete): a
    /// required field that no action writes), and a nested path
    /// ([`RequestProblem::NestedPathInUpsert`](crate::error::RequestProblem::NestedPathInUpsert)),
    /// which DynamoDB rejects on an item being created. These checks come first: an
    /// incomplete upsert is `UpsertIncomplete` even over an item of an older schema version,
    /// and only a complete one reaches the service and learns that the stored item is
    /// outdated ([`Error::SchemaOutdated`]). The key fields are written only by an update
    /// started with the generated `E::update(&db, ..)` (which knows their attribute names);
    /// started from [`Db::update`] or in a transaction, an entity whose key fields are stored
    /// attributes is refused as incomplete: declare them `#[entity(from_key)]` (read back
    /// from the key, never stored) to upsert it there.
    ///
    /// Index keys: the created item's index keys are those of the entity it reads back as
    /// (key fields, written fields, serde defaults; an `Option` left `None` keeps it out of a
    /// sparse index), written with `if_not_exists`, so an existing item keeps its own. A key
    /// whose fields the update sets with `set` is written as they say (see
    /// [`Entity`](crate::Entity)'s index keys). A created item that would be in a sparse
    /// index (an `Option` part, or `when`) whose membership the update gives only as
    /// defaults is refused ([`RequestProblem::UpsertSparseIndex`](crate::error::RequestProblem)):
    /// on an existing item out of the index, the same request would put it in.
    ///
    /// Versions: an upsert bumps the version like any update (a created item has version
    /// 1). `expect_version(0)` holds only when the item is missing (or was never versioned);
    /// `expect_version(n)` with `n > 0` on a missing item is [`Error::VersionConflict`].
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Entity, Serialize, Deserialize, Debug)]
    /// #[entity(pk = "PAGE#<url>", sk = "STATS")]
    /// struct PageStats { url: String, title: String, views: u64 }
    ///
    /// # async fn demo(db: &Db) -> Result<(), Error> {
    /// // Created on the first view, counted on the others.
    /// let stats = PageStats::update(db, "/home")
    ///     .upsert()
    ///     .set_if_not_exists(PageStats::TITLE, "Home")
    ///     .add(PageStats::VIEWS, 1)
    ///     .await?;
    /// assert_eq!((stats.title.as_str(), stats.views), ("Home", 1));
    /// # Ok(()) }
    /// # #[cfg(feature = "local")]
    /// # #[tokio::main]
    /// # async fn main() -> Result<(), Error> {
    /// #     demo(&ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?).await
    /// # }
    /// # #[cfg(not(feature = "local"))]
    /// # fn main() {}
    /// ```
    pub fn upsert(mut self) -> Self
    where
        E::KeyFields: Serialize,
    {
        self.upsert = Some(key_field_values::<E>);
        self
    }

    /// The attribute names of the key fields (generated code).
    #[doc(hidden)]
    pub fn with_key_attrs(mut self, attrs: &'static [&'static str]) -> Self {
        self.key_attrs = Some(attrs);
        self
    }

    /// The actions to send and the guard: the caller's, or for an upsert the caller's plus
    /// the attributes of a created item, guarded like a put (no item, or one of the type).
    pub(crate) fn effective(&self) -> Result<(UpdateActions<E>, WriteKind), Error> {
        let (actions, rewritten) =
            with_index_keys(&self.key, &self.actions, self.upsert.is_some())?;
        let mut actions = vector_values(multi_index_values(actions)?)?;
        // The timestamps: `updated_at` set, `created_at` set only on an item the upsert
        // creates (an update of an existing item leaves it as stored).
        let mut stamps = Vec::new();
        let stamp = self.stamp.unwrap_or_else(|| self.db.stamp(false));
        E::stamp_attrs(stamp, &mut |attr, created, value| {
            stamps.push((attr, created, value));
        })?;
        for (attr, created, value) in &stamps {
            if !created {
                actions = actions.set_raw(attr, value.clone());
            } else if self.upsert.is_some() {
                actions = actions.set_raw_if_not_exists(attr, value.clone());
            }
        }
        let Some(key_values) = self.upsert else {
            return Ok((actions, WriteKind::Update));
        };
        let mut created = key_item(&self.key);
        for (attr, _, value) in stamps {
            created.insert(attr.to_owned(), value);
        }
        // The tag, for an entity that carries one (one told apart by its keys has none).
        if let Some(tag) = E::IDENTITY.tag() {
            let entity_type = AttributeValue::S(tag.value.to_owned());
            created.insert(tag.attr.to_owned(), entity_type.clone());
            actions = actions.set_raw(tag.attr, entity_type);
        }
        if let Some(names) = self.key_attrs {
            let values = match key_values(&self.key)? {
                AttributeValue::L(values) => values,
                other => vec![other],
            };
            for (name, value) in names.iter().zip(values) {
                // A key field stored as a key attribute itself is written by the key, and a
                // `from_key` field is stored only there.
                if created.contains_key(*name) || E::FROM_KEY_ATTRS.contains(name) {
                    continue;
                }
                created.insert((*name).to_owned(), value.clone());
                actions = actions.set_raw(name, value);
            }
        }
        for (name, value) in self.actions.created_values()? {
            created.insert(name, value);
        }
        if let Some(def) = E::VERSION {
            created.insert(def.attr.to_owned(), AttributeValue::N("1".into()));
        }
        // A created item is of the current schema version; an existing one must be already
        // (the guard), so setting it changes nothing there.
        if let Some((attr, version)) = crate::model::schema_attr_value::<E>() {
            created.insert(attr.to_owned(), version.clone());
            actions = actions.set_raw(attr, version);
        }
        let hint = if self.key_attrs.is_none() {
            " (only an upsert started with the entity's generated `update(&db, ..)` writes the \
             key fields; in a transaction or from `Db::update`, declare them \
             `#[entity(from_key)]`)"
        } else {
            ""
        };
        let entity: E = from_item(created).map_err(|e| match e {
            Error::Deserialize { .. } | Error::CorruptItem { .. } => Error::InvalidRequest {
                path: String::new(),
                problem: RequestProblem::UpsertIncomplete { reason: format!("{e}{hint}") },
            },
            other => other,
        })?;
        let mut index_keys = Vec::new();
        entity.index_keys(&mut |index, pk, sk| {
            index_keys.push((index.name, index.pk, pk, MAX_PARTITION_KEY_BYTES));
            if let (Some(attr), Some(sk)) = (index.sk, sk) {
                index_keys.push((index.name, attr, sk, MAX_SORT_KEY_BYTES));
            }
        })?;
        for (index, attr, value, max) in index_keys {
            // A key the update rewrites (it sets the key's fields) is written as it says.
            if rewritten.contains(&attr) {
                continue;
            }
            // `if_not_exists` would add the key to an existing item left out of the index.
            if E::SPARSE_INDEXES.contains(&index) {
                return Err(Error::InvalidRequest {
                    path: attr.to_owned(),
                    problem: RequestProblem::UpsertSparseIndex { index },
                });
            }
            check_key_value(E::NAME, attr, &value, max)?;
            actions = actions.set_raw_if_not_exists(attr, AttributeValue::S(value));
        }
        Ok((actions, WriteKind::Upsert))
    }

    /// Marks an update whose entity's copies ([`Entity::UPDATE_THROUGH`]) are written in the
    /// same transaction by the caller (the closure tree's update).
    /// Sets the timestamp fields from `stamp` rather than from the clock (a layer that
    /// writes copies of the item with the same times).
    pub(crate) fn at(mut self, stamp: Stamp) -> Self {
        self.stamp = Some(stamp);
        self
    }

    pub(crate) fn copies_handled(mut self) -> Self {
        self.copies_handled = true;
        self
    }

    /// Refuses a plain update of an entity whose fields are copied elsewhere.
    fn check_copies(&self) -> Result<(), Error> {
        match E::UPDATE_THROUGH {
            Some(through) if !self.copies_handled => Err(Error::InvalidRequest {
                path: String::new(),
                problem: RequestProblem::UpdateCopies { entity: E::NAME, through },
            }),
            _ => Ok(()),
        }
    }

    /// Checks the key and renders the update and its guarded condition.
    pub(crate) fn prepare(&self) -> Result<PreparedUpdate<E>, Error> {
        self.check_copies()?;
        self.key.validate()?;
        check_expected_version::<E>(self.expected_version)?;
        let (actions, kind) = self.effective()?;
        let mut b = ExprBuilder::default();
        let update_expression = actions.render(&mut b, E::VERSION.map(|v| v.attr))?;
        let guard = Guard { kind, expected_version: self.expected_version };
        let write = Rendered::new(b, self.key.clone(), guard, self.condition.as_ref())?;
        Ok(PreparedUpdate { write, update_expression, idempotent: actions.is_idempotent() })
    }

    async fn execute(self, want_item: bool) -> Result<Option<E>, Error> {
        if !E::UNIQUES.is_empty() {
            return super::unique::update(self.no_return(), want_item).await;
        }
        self.no_return().execute_item(want_item).await
    }

    /// A copy of the update's settings, to send again.
    pub(crate) fn duplicate(&self) -> Update<'a, E, NoReturn> {
        Update {
            db: self.db,
            key: self.key.clone(),
            actions: self.actions.clone(),
            condition: self.condition.clone(),
            expected_version: self.expected_version,
            upsert: self.upsert,
            key_attrs: self.key_attrs,
            at_least_once: self.at_least_once,
            copies_handled: self.copies_handled,
            stamp: self.stamp,
            running: Running::default(),
            _return: PhantomData,
        }
    }

    /// Sends the item's own update (without the sentinels of unique constraints).
    pub(crate) async fn execute_item(self, want_item: bool) -> Result<Option<E>, Error> {
        let db = self.db;
        if want_item && !self.actions.is_idempotent() && !self.at_least_once {
            return self.execute_marked().await.map(Some);
        }
        let prepared = self.prepare()?;
        if !prepared.idempotent && !self.at_least_once {
            return execute_transactional(db, prepared).await.map(|()| None);
        }
        let PreparedUpdate { write, update_expression, .. } = prepared;
        let Rendered { key, guard, condition: condition_expression, names, values } = write;
        let request = Action::update(key_item(&key), update_expression)
            .with_expressions(condition_expression, names, values)
            .return_old(true)
            .update_item(db.client().update_item(), db.table_name())
            .return_values(if want_item { ReturnValue::AllNew } else { ReturnValue::None })
            .set_return_consumed_capacity(self.db.capacity_mode());
        let result = retry::send(db, Op::UpdateItem, || request.send()).await;
        match result {
            Ok(out) => {
                if !want_item {
                    return Ok(None);
                }
                match out.attributes {
                    Some(item) => from_item(item).map(Some),
                    None => Err(no_attributes::<E>(&key)),
                }
            }
            Err(err) => Err(match err.into_service() {
                Err(e) => e,
                Ok(aws_sdk_dynamodb::Error::ConditionalCheckFailedException(e)) => {
                    guard.failure(&key, e.item)
                }
                Ok(other) => Error::service(Op::UpdateItem, other),
            }),
        }
    }

    /// A non-idempotent update that returns its result: one `UpdateItem` with
    /// `ReturnValues=ALL_NEW`, made safe to send again by marker attributes (see the type's
    /// documentation), then a second `UpdateItem` that removes the markers.
    async fn execute_marked(self) -> Result<E, Error> {
        let db = self.db;
        self.check_copies()?;
        self.key.validate()?;
        check_expected_version::<E>(self.expected_version)?;
        let (actions, kind) = self.effective()?;
        let marker = marker_base();
        let mut b = ExprBuilder::default();
        let marked = actions.render_marked(&mut b, E::VERSION.map(|v| v.attr), &marker)?;
        let guard = Guard { kind, expected_version: self.expected_version };
        let write = Rendered::new(b, self.key.clone(), guard, self.condition.as_ref())?;
        let Rendered { key, guard, condition, names, values } = write;
        let condition = format!("attribute_not_exists({}) AND ({condition})", marked.detect);
        let request = Action::update(key_item(&key), marked.expression.clone())
            .with_expressions(condition, names, values)
            .return_old(true)
            .update_item(db.client().update_item(), db.table_name())
            .return_values(ReturnValue::AllNew)
            .set_return_consumed_capacity(self.db.capacity_mode());
        let result = retry::send_retrying(db, Op::UpdateItem, || Ok(request.clone().send())).await;
        let produced = match result {
            Ok(out) => out.attributes.ok_or_else(|| no_attributes::<E>(&key))?,
            Err(err) => match err.into_service()? {
                aws_sdk_dynamodb::Error::ConditionalCheckFailedException(e) => match e.item {
                    // Our marker is stored: an earlier attempt of this update was applied (its
                    // response was lost). Its result: the item as stored now, with every path
                    // this update wrote set to the value it wrote.
                    Some(item) if marked.markers.first().is_some_and(|m| item.contains_key(m)) => {
                        produced_state(item, &marked)
                    }
                    current => return Err(guard.failure(&key, current)),
                },
                other => return Err(Error::service(Op::UpdateItem, other)),
            },
        };
        remove_markers(db, &key, &marked.markers, &produced).await;
        from_item(produced)
    }
}

/// The error of a write that returned no attributes although it asked for them.
fn no_attributes<E: Entity>(key: &Key<E>) -> Error {
    Error::CorruptItem {
        entity: E::NAME,
        key: key.to_string(),
        reason: "the service returned no attributes for the updated item".into(),
    }
}

/// Markers older than this are left over from an update whose marker removal failed; every
/// retry of that update ended long ago (the library's retries of one update take seconds), so
/// a later update of the item removes them.
const STALE_MARKER: Duration = Duration::from_secs(15 * 60);
/// The most leftover markers one marker removal also removes.
const MAX_STALE_REMOVED: usize = 32;

fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A fresh marker name: the prefix, the time in milliseconds (hex), a random token.
fn marker_base() -> String {
    let token = idempotency_token();
    let random = token.get(..16).unwrap_or(&token);
    format!("{MARKER_PREFIX}{:x}.{random}", now_millis())
}

/// True when marker attribute `name` was made more than [`STALE_MARKER`] ago.
fn is_stale_marker(name: &str, now: u64) -> bool {
    let Some(rest) = name.strip_prefix(MARKER_PREFIX) else { return false };
    let Some(Ok(made)) = rest.split('.').next().map(|t| u64::from_str_radix(t, 16)) else {
        return false;
    };
    let stale = u64::try_from(STALE_MARKER.as_millis()).unwrap_or(u64::MAX);
    now.saturating_sub(made) > stale
}

/// The state an applied update produced, from the item stored when its retry found its
/// marker: each computed path set to the value its marker holds, each set path to the value
/// set, each removed path removed.
fn produced_state(mut item: Item, marked: &Marked) -> Item {
    for (path, marker) in &marked.computed {
        if let Some(value) = item.get(marker).cloned() {
            place(&mut item, path.segments(), Some(value));
        }
    }
    for (path, value) in &marked.plain {
        place(&mut item, path.segments(), Some(value.clone()));
    }
    for path in &marked.removed {
        place(&mut item, path.segments(), None);
    }
    item
}

/// Sets (or, with `None`, removes) the value at `segments` of `item`. A path whose parent is
/// missing or not a map or list is left as it is.
pub(crate) fn place(item: &mut Item, segments: &[PathSegment], value: Option<AttributeValue>) {
    let Some((PathSegment::Name(first), rest)) = segments.split_first() else { return };
    if rest.is_empty() {
        match value {
            Some(v) => {
                item.insert(first.to_string(), v);
            }
            None => {
                item.remove(first.as_ref());
            }
        }
        return;
    }
    if let Some(slot) = item.get_mut(first.as_ref()) {
        place_in(slot, rest, value);
    }
}

fn place_in(slot: &mut AttributeValue, segments: &[PathSegment], value: Option<AttributeValue>) {
    let Some((segment, rest)) = segments.split_first() else { return };
    match (slot, segment) {
        (AttributeValue::M(map), PathSegment::Name(name)) => {
            if rest.is_empty() {
                match value {
                    Some(v) => {
                        map.insert(name.to_string(), v);
                    }
                    None => {
                        map.remove(name.as_ref());
                    }
                }
            } else if let Some(child) = map.get_mut(name.as_ref()) {
                place_in(child, rest, value);
            }
        }
        (AttributeValue::L(list), PathSegment::Index(i)) => {
            if rest.is_empty() {
                match value {
                    Some(v) => match list.get_mut(*i) {
                        Some(slot) => *slot = v,
                        None => list.push(v),
                    },
                    None if *i < list.len() => {
                        list.remove(*i);
                    }
                    None => {}
                }
            } else if let Some(child) = list.get_mut(*i) {
                place_in(child, rest, value);
            }
        }
        _ => {}
    }
}

/// Removes the markers of an applied update (and stale leftovers of others seen in
/// `produced`). Best effort: a failure leaves the markers, which reads never show to entities
/// and which a later returning update of the item removes once they are stale.
/// The actions with the values of multi-attribute index keys checked: a field that keys such
/// an index is the key attribute itself, so a value the index cannot hold (empty, too long,
/// of another type) is refused here rather than by the service, and a `None` (which serde
/// writes as `NULL`, a type no key attribute has) removes the attribute: the item leaves the
/// index, as an item put with `None` is not in it.
fn multi_index_values<E: Entity>(mut actions: UpdateActions<E>) -> Result<UpdateActions<E>, Error> {
    for (_, attr, in_pk) in crate::model::multi_index_attrs::<E::Table>() {
        let null = match actions.touch(attr.name) {
            crate::expr::Touch::Set(AttributeValue::Null(_)) => true,
            crate::expr::Touch::Set(v) => {
                crate::model::check_index_value(E::NAME, attr, in_pk, v)?;
                false
            }
            _ => false,
        };
        if null {
            let name = attr.name;
            actions = actions
                .retain_paths(
                    |p| !matches!(p.segments(), [crate::expr::PathSegment::Name(n)] if n == name),
                )
                .remove_raw(name);
        }
    }
    Ok(actions)
}

/// The actions with the vectors they set checked against their vector indexes (length,
/// finite elements): a `None` (serde's `NULL`, which no vector index takes) removes the
/// attribute instead, and the item leaves the index.
fn vector_values<E: Entity>(mut actions: UpdateActions<E>) -> Result<UpdateActions<E>, Error> {
    for index in <E::Table as crate::model::Table>::VECTOR_INDEXES {
        // The vector, then the filter attributes (of the declared type).
        let attrs = std::iter::once((index.attr, None))
            .chain(index.filters.iter().map(|f| (f.name, Some(f))));
        for (name, filter) in attrs {
            let null = match actions.touch(name) {
                crate::expr::Touch::Set(AttributeValue::Null(_)) => true,
                crate::expr::Touch::Set(v) => {
                    let checked = match filter {
                        None => crate::model::check_vector_value(v, index),
                        Some(filter) => crate::model::check_filter_value(v, filter),
                    };
                    checked.map_err(|problem| Error::InvalidVector {
                        entity: E::NAME,
                        index: index.name,
                        problem,
                    })?;
                    false
                }
                _ => false,
            };
            if !null {
                continue;
            }
            actions = actions
                .retain_paths(
                    |p| !matches!(p.segments(), [crate::expr::PathSegment::Name(n)] if n == name),
                )
                .remove_raw(name);
        }
    }
    Ok(actions)
}

async fn remove_markers<E: Entity>(
    db: &Db<E::Table>,
    key: &Key<E>,
    markers: &[String],
    produced: &Item,
) {
    let now = now_millis();
    let stale = produced
        .keys()
        .filter(|k| !markers.contains(k) && is_stale_marker(k, now))
        .take(MAX_STALE_REMOVED);
    let mut b = ExprBuilder::default();
    let removed: Vec<String> = markers.iter().chain(stale).map(|m| b.name(m)).collect();
    let pk = b.name(<E::Table as Table>::PK);
    // Never creates the item again if it was deleted meanwhile.
    let request = Action::update(key_item(key), format!("REMOVE {}", removed.join(", ")))
        .guarded(format!("attribute_exists({pk})"), b)
        .update_item(db.client().update_item(), db.table_name())
        .set_return_consumed_capacity(db.capacity_mode());
    // REMOVE is idempotent: safe to send again.
    // A marker left behind costs nothing but its bytes: a failure here is not the update's.
    let _ = retry::send_retrying(db, Op::UpdateItem, || Ok(request.clone().send())).await;
}

/// An update rendered for the wire.
pub(crate) struct PreparedUpdate<E> {
    pub write: Rendered<E>,
    pub update_expression: String,
    /// No `add` or `append`: applying it twice is applying it once.
    pub idempotent: bool,
}

/// Sends a non-idempotent update whose result is not wanted as a one-action
/// `TransactWriteItems` with an idempotency token: one request, safe to send again within the
/// token's window.
async fn execute_transactional<E: Entity>(
    db: &Db<E::Table>,
    prepared: PreparedUpdate<E>,
) -> Result<(), Error> {
    let PreparedUpdate { write, update_expression, .. } = prepared;
    let Rendered { key, guard, condition, names, values } = write;
    let action = Action::update(key_item(&key), update_expression)
        .with_expressions(condition, names, values)
        .return_old(true);
    let items = vec![action.into_transact_item(db.table_name())?];
    match send_transact_write(db, items, idempotency_token(), None).await {
        Ok(()) => Ok(()),
        Err(err) => Err(match err.into_service()? {
            aws_sdk_dynamodb::Error::TransactionCanceledException(e)
                if e.cancellation_reasons().first().and_then(|r| r.code())
                    == Some("ConditionalCheckFailed") =>
            {
                let current = e
                    .cancellation_reasons
                    .and_then(|mut r| r.drain(..).next())
                    .and_then(|r| r.item);
                guard.failure(&key, current)
            }
            other => Error::service(Op::TransactWriteItems, other),
        }),
    }
}

/// The error of an update that asked for the entity and got none (cannot happen:
/// `execute(true)` returns the entity or an error).
fn no_entity<E: Entity>() -> Error {
    Error::CorruptItem {
        entity: E::NAME,
        key: String::new(),
        reason: "the update returned no item".into(),
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

impl<'a, E: Entity, R> Update<'a, E, R> {
    fn take_update(&mut self) -> Self {
        Update {
            db: self.db,
            key: self.key.clone(),
            actions: std::mem::take(&mut self.actions),
            condition: self.condition.take(),
            expected_version: self.expected_version,
            upsert: self.upsert,
            key_attrs: self.key_attrs,
            at_least_once: self.at_least_once,
            copies_handled: self.copies_handled,
            stamp: self.stamp,
            running: Running::default(),
            _return: PhantomData,
        }
    }
}

impl<'a, E: Entity> Startable<'a> for Update<'a, E, ReturnNew> {
    type Raw = Result<Option<E>, Error>;
    fn running(&mut self) -> &mut Running<'a, Self::Raw> {
        &mut self.running
    }
    fn take_settings(&mut self) -> Self {
        self.take_update()
    }
    fn start(self) -> BoxFuture<'a, Self::Raw> {
        Box::pin(self.execute(true))
    }
}

impl<'a, E: Entity> Startable<'a> for Update<'a, E, NoReturn> {
    type Raw = Result<Option<E>, Error>;
    fn running(&mut self) -> &mut Running<'a, Self::Raw> {
        &mut self.running
    }
    fn take_settings(&mut self) -> Self {
        self.take_update()
    }
    fn start(self) -> BoxFuture<'a, Self::Raw> {
        Box::pin(self.execute(false))
    }
}

builder_future!(
    ['a, E: Entity] Update<'a, E, ReturnNew> => Result<E, Error>,
    |r: Result<Option<E>, Error>| r?.ok_or_else(no_entity::<E>)
);
builder_future!(['a, E: Entity] Update<'a, E, NoReturn> => Result<(), Error>, |r| r.map(|_| ()));

/// `actions` with the `updated_at` field set to `stamp`'s time: what a layer that renders an
/// entity's update itself (a closure tree's copies, an edge's two items) adds, as
/// [`Update`] does.
pub(crate) fn with_updated_at<E: Entity>(
    mut actions: UpdateActions<E>,
    stamp: Stamp,
) -> Result<UpdateActions<E>, Error> {
    let mut updated = Vec::new();
    E::stamp_attrs(stamp, &mut |attr, created, value| {
        if !created {
            updated.push((attr, value));
        }
    })?;
    for (attr, value) in updated {
        actions = actions.set_raw(attr, value);
    }
    Ok(actions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::{Attr, Path};

    struct T;
    const ADDRESS: Attr<T, std::collections::BTreeMap<String, String>> = Attr::new("address");
    const LIST: Attr<T, Vec<i64>> = Attr::new("list");

    fn n(v: i64) -> AttributeValue {
        AttributeValue::N(v.to_string())
    }

    #[test]
    fn markers_are_stale_after_fifteen_minutes() {
        let now = now_millis();
        let base = marker_base();
        assert!(base.starts_with(MARKER_PREFIX));
        assert!(!is_stale_marker(&format!("{base}.0"), now));
        assert!(is_stale_marker(&format!("{base}.0"), now + 16 * 60 * 1000));
        assert!(!is_stale_marker("_ddbm.zz.0", now), "not a time");
        assert!(!is_stale_marker("other", now));
    }

    #[test]
    fn the_produced_state_overlays_what_the_update_wrote() {
        let mut item = Item::new();
        item.insert("n".into(), n(7)); // a later add made it 7
        item.insert("_ddbm.1.a.0".into(), n(5)); // this update produced 5
        item.insert("name".into(), AttributeValue::S("later".into()));
        item.insert("nick".into(), AttributeValue::S("x".into()));
        let mut inner = std::collections::HashMap::new();
        inner.insert("city".to_string(), AttributeValue::S("Paris".into()));
        item.insert("address".into(), AttributeValue::M(inner));
        item.insert("list".into(), AttributeValue::L(vec![n(1), n(2)]));
        let marked = Marked {
            expression: String::new(),
            detect: String::new(),
            markers: vec!["_ddbm.1.a.0".into()],
            computed: vec![(Path::attr("n"), "_ddbm.1.a.0".into())],
            plain: vec![
                (Path::attr("name"), AttributeValue::S("mine".into())),
                (
                    UpdatePath::<T, String>::update_path(&ADDRESS.at::<String>("city")),
                    AttributeValue::S("Lyon".into()),
                ),
                (UpdatePath::<T, i64>::update_path(&LIST.index::<i64>(1)), n(9)),
            ],
            removed: vec![Path::attr("nick")],
        };
        let out = produced_state(item, &marked);
        assert_eq!(out["n"], n(5));
        assert_eq!(out["name"], AttributeValue::S("mine".into()));
        assert!(!out.contains_key("nick"));
        let AttributeValue::M(address) = &out["address"] else { panic!("a map") };
        assert_eq!(address["city"], AttributeValue::S("Lyon".into()));
        assert_eq!(out["list"], AttributeValue::L(vec![n(1), n(9)]));
    }
}
