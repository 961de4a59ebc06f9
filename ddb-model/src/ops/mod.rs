//! Operations: get, put / create / replace, update, delete; query and scan; batches and
//! transactions; creating and deleting the table.
//!
//! Every operation goes through a [`Db`](crate::Db) (repository methods are thin wrappers)
//! and is a builder to `.await` (or `.send().await`).
//!
//! # Guards and errors
//!
//! Every write carries a guard condition built here: the item under the key must be of the
//! entity's type (a write never overwrites another entity's item,
//! [`Error::WrongEntityType`]), must exist or not as the operation requires (`create` requires
//! no item, [`Error::AlreadyExists`] with the stored item; `replace` and `update` require one,
//! [`Error::NotFound`]), and must have the expected version under optimistic locking
//! ([`Error::VersionConflict`]); the caller's own conditions are checked with it
//! ([`Error::ConditionFailed`]). When a guard fails, the item the service returns
//! (`ReturnValuesOnConditionCheckFailure`) tells which rule failed, and the error says so.
//! Checks that need no request (key sizes, empty keys, item size, expression mistakes) fail
//! before anything is sent.
//!
//! When the SDK retries a request whose response was lost, the write may already have been
//! applied. `add` and `append` would then apply twice, so updates that use them are made safe
//! to send again (see [`Update`]). A retried `create`, `put` or
//! `replace` whose guard fails against exactly the item it writes reports success. A retried
//! conditional `update` or `delete` may still report a failed condition for a write that was
//! applied; the error carries the stored item.
//!
//! # Batches, scans and transactions
//!
//! [`BatchGet`], [`BatchRead`] and [`BatchWrite`] (`BatchGetItem`, `BatchWriteItem`) are the
//! exception to the guards above: `BatchWriteItem` takes no conditions. [`Scan`] and
//! [`ScanItems`] read a whole table in parallel segments. A [`Transaction`]
//! (`TransactWriteItems`) keeps each action's guard and explains a cancellation per action;
//! [`TransactGet`] reads up to 100 keys atomically.

pub(crate) mod action;
mod batch;
mod cost;
mod delete;
pub(crate) mod dry;
pub(crate) mod fluent;
mod get;
mod intercepted;
pub(crate) mod migrate;
pub(crate) mod put;
mod query;
pub(crate) mod rekey;
pub(crate) mod retry;
pub(crate) mod scan;
mod slot;
mod startable;
mod table;
pub(crate) mod tenant;
pub(crate) mod transact;
pub mod unique;
mod update;
mod vector;
pub(crate) mod write;

use std::future::Future;
use std::pin::Pin;

use aws_sdk_dynamodb::types::AttributeValue;

pub use crate::error::{BatchAction, BatchKey, UnprocessedWrite};
pub use batch::{
    BatchGet, BatchRead, BatchReadResult, BatchWrite, ByKey, InOrder, MAX_BATCH_GET_KEYS,
    MAX_BATCH_WRITES,
};
pub use delete::Delete;
pub use get::Get;
pub use migrate::{
    DEFAULT_MIGRATE_SEGMENTS, MAX_MIGRATE_SEGMENTS, Migrate, MigrateCheckpoint, MigrateCounts,
    MigrateFailure, MigrateProgress, MigrateReport, SegmentPosition,
};
pub use put::{Put, Target};
pub use query::{
    AsCollection, AsCollectionOnly, AsEntity, AsItem, AsProjection, Collection, Cursor, Decode,
    DeleteAll, EntityQuery, LevelArg, LevelQuery, OnIndex, OnTable, Page, Projection, Query,
};
pub(crate) use query::{Gate, query_from, table_query};
#[doc(hidden)]
pub use query::{KeyStart, Level, QueryFrom, item_type, unknown_type};
#[doc(hidden)]
pub use query::{
    ProjectedBy, ProjectedFields, ProjectsAs, Variant, collection_projection, projected_field,
    projection_variant,
};
pub use rekey::{
    DEFAULT_REKEY_SEGMENTS, REKEY_BATCH, Rekey, RekeyCheckpoint, RekeyCounts, RekeyFailure,
    RekeyPhase, RekeyProgress, RekeyReport, RekeyStep,
};
pub use scan::{Scan, ScanItems, ScanStream};
pub use slot::Slot;
pub use table::{
    ApplySync, CreateTable, IndexOptions, MAX_POLICY_BYTES, MAX_TAG_KEY_CHARS, MAX_TAG_VALUE_CHARS,
    MAX_TAGS, MIN_WARM_READ_UNITS, MIN_WARM_WRITE_UNITS, OnDemandMax, SyncTable, TableChange,
    TableDiff, TableOptions, ViewType, WarmThroughput,
};
pub use transact::{
    ActionReason, CancelReason, MAX_TOKEN_CHARS, MAX_TRANSACTION_ACTIONS, MAX_TRANSACTION_BYTES,
    TransactGet, TransactGetOutput, Transaction, TransactionProblem,
};
pub use update::Update;
pub(crate) use update::{with_index_keys, with_updated_at};
#[doc(hidden)]
pub use vector::nearest;
pub use vector::{MAX_TOP_K, Nearest, Scored};

use crate::error::Error;
use crate::expr::{Condition, ExprBuilder, Names, Node, Values};
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, Table};

/// The future of an operation builder's `.await`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The request a builder started when it was first polled as a future. The crate's one
/// await convention: **every** builder (items, queries, batches, transactions, tables,
/// migrations, trees, edges) is a future itself, not only `IntoFuture`, so that
/// `join_all(items.iter().map(|x| x.create(&db)))` works; polling one the first time takes
/// its settings out and starts `send`. (In a `Mutex` only to keep the builders `Sync`; it is
/// never locked.)
pub(crate) struct Running<'a, T>(std::sync::Mutex<Option<BoxFuture<'a, T>>>);

impl<T> Default for Running<'_, T> {
    fn default() -> Self {
        Running(std::sync::Mutex::new(None))
    }
}

impl<'a, T> Running<'a, T> {
    fn slot(&mut self) -> &mut Option<BoxFuture<'a, T>> {
        self.0.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The started request, taken out.
    pub(crate) fn take(&mut self) -> Option<BoxFuture<'a, T>> {
        self.slot().take()
    }

    /// Keeps `future` as the started request.
    pub(crate) fn insert(&mut self, future: BoxFuture<'a, T>) -> &mut BoxFuture<'a, T> {
        self.slot().insert(future)
    }
}

/// A builder that can be polled as a future: `start` sends it, `take_settings` moves its
/// settings out into a builder to start (leaving an emptied one behind, never used again).
pub(crate) trait Startable<'a>: Sized {
    /// What the started request returns (before the builder's own final mapping).
    type Raw: 'a;
    /// Whether a dry run of the builder sends the reads its writes depend on (a write), or
    /// withholds them (a read).
    const DRY_SENDS_READS: bool = false;
    fn running(&mut self) -> &mut Running<'a, Self::Raw>;
    fn take_settings(&mut self) -> Self;
    fn start(self) -> BoxFuture<'a, Self::Raw>;
}

/// The future `make` returns, in a box allocated before it is made, so that it is built in
/// place rather than moved there: the SDK's futures are kilobytes large, and every future
/// that holds one inline is copied whole each time it moves.
#[inline(always)]
pub(crate) fn boxed<F: Future>(make: impl FnOnce() -> F) -> Pin<Box<F>> {
    Box::into_pin(Box::write(Box::new_uninit(), make()))
}

/// Polls a builder as a future: starts it on the first poll.
pub(crate) fn poll_started<'a, B: Startable<'a>>(
    builder: &mut B,
    cx: &mut std::task::Context<'_>,
) -> std::task::Poll<B::Raw> {
    let future = match builder.running().take() {
        Some(future) => future,
        None => builder.take_settings().start(),
    };
    builder.running().insert(future).as_mut().poll(cx)
}

/// `impl Future` for a builder that is [`Startable`], mapping its raw result with `$map`.
macro_rules! builder_future {
    ([$($g:tt)*] $ty:ty => $out:ty, $map:expr) => {
        impl<$($g)*> Unpin for $ty {}

        impl<$($g)*> std::future::Future for $ty {
            type Output = $out;
            fn poll(
                self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<$out> {
                crate::ops::poll_started(std::pin::Pin::into_inner(self), cx).map($map)
            }
        }

        impl<$($g)*> $ty {
            /// The requests this operation would send, not sent: the SDK inputs, printable as
            /// DynamoDB JSON (see [`intercept`](crate::intercept)). A read withholds its
            /// request (a query, its first page's); a write sends the reads it depends on and
            /// withholds its writes. A refusal (an invalid key, a value DynamoDB would reject)
            /// is the same error as when sent.
            pub fn dry_run(
                self,
            ) -> crate::ops::BoxFuture<'a, Result<Vec<crate::intercept::Request>, crate::error::Error>> {
                crate::ops::dry::builder(self)
            }
        }
    };
}
pub(crate) use builder_future;

/// Marker: the operation returns the item as it is after the write.
#[derive(Debug, Clone, Copy)]
pub enum ReturnNew {}
/// Marker: the operation returns the item as it was before the write.
#[derive(Debug, Clone, Copy)]
pub enum ReturnOld {}
/// Marker: the operation returns nothing.
#[derive(Debug, Clone, Copy)]
pub enum NoReturn {}

/// Whether a return marker asks for an item back.
pub(crate) trait Returns: 'static {
    const WANT: bool;
}
impl Returns for ReturnNew {
    const WANT: bool = true;
}
impl Returns for ReturnOld {
    const WANT: bool = true;
}
impl Returns for NoReturn {
    const WANT: bool = false;
}

/// The primary key attributes of `key`.
pub(crate) fn key_item<E: Entity>(key: &Key<E>) -> Item {
    let mut item = Item::with_capacity(2);
    item.insert(<E::Table as Table>::PK.to_owned(), AttributeValue::S(key.pk().to_owned()));
    if let (Some(attr), Some(sk)) = (<E::Table as Table>::SK, key.sk()) {
        item.insert(attr.to_owned(), AttributeValue::S(sk.to_owned()));
    }
    item
}

/// What a write requires of the item stored under its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    /// There must be no item.
    Create,
    /// There may be an item; if there is, it must be of the entity's type.
    Put,
    /// There must be an item of the entity's type.
    Replace,
    /// There must be an item of the entity's type (and of its current schema version).
    Update,
    /// A condition check of a transaction: there must be an item of the entity's type (of
    /// any schema version: nothing is written).
    Check,
    /// An update that creates a missing item: there may be an item; if there is, it must be
    /// of the entity's type (and of its current schema version).
    Upsert,
    /// The migration's write of an upgraded item: there must be an item of the entity's type,
    /// still of the schema version `from` it was read with.
    Upgrade {
        /// The stored version the item was read with.
        from: u32,
    },
    /// There may be an item (must be, when a version or condition is given).
    Delete,
}

/// The guard of one write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Guard {
    pub kind: WriteKind,
    /// Optimistic locking: the version the stored item must have (0 = never written).
    pub expected_version: Option<u64>,
}

impl Guard {
    /// Renders the guard, with the caller's own condition (already rendered), into a
    /// condition expression.
    pub(crate) fn render<E: Entity>(&self, b: &mut ExprBuilder, user: Option<&str>) -> String {
        let mut extra = Vec::new();
        if let (Some(def), Some(v)) = (E::VERSION, self.expected_version) {
            let attr = b.name(def.attr);
            let value = b.value(AttributeValue::N(v.to_string()));
            extra.push(if v == 0 {
                format!("(attribute_not_exists({attr}) OR {attr} = {value})")
            } else {
                format!("{attr} = {value}")
            });
        }
        if let Some(clause) = self.schema_clause::<E>(b) {
            extra.push(clause);
        }
        if let Some(user) = user {
            extra.push(format!("({user})"));
        }
        let and_extra = |base: String| {
            if extra.is_empty() { base } else { format!("{base} AND {}", extra.join(" AND ")) }
        };
        let Some(tag) = E::IDENTITY.tag() else {
            return self.render_keys_identified::<E>(b, extra);
        };
        let pk = b.name(<E::Table as Table>::PK);
        if self.kind == WriteKind::Create {
            return and_extra(format!("attribute_not_exists({pk})"));
        }
        // The tag, and the constants with it: an item without them is not the entity's.
        let is_type = match E::CONSTANTS {
            [] => query::type_equals(b, tag),
            constants => {
                format!("({})", query::tags_equal(b, Some(tag), constants).unwrap_or_default())
            }
        };
        match self.kind {
            // Conditions are evaluated against the stored item, or against no item: a version
            // of 0 and most user conditions on absent attributes hold for a new item.
            // No parentheses unless the OR is joined to more: the service parses the
            // expression of every request.
            WriteKind::Create | WriteKind::Put | WriteKind::Upsert if extra.is_empty() => {
                format!("attribute_not_exists({pk}) OR {is_type}")
            }
            WriteKind::Create | WriteKind::Put | WriteKind::Upsert => {
                and_extra(format!("(attribute_not_exists({pk}) OR {is_type})"))
            }
            WriteKind::Replace
            | WriteKind::Update
            | WriteKind::Check
            | WriteKind::Upgrade { .. } => {
                and_extra(format!("attribute_exists({pk}) AND {is_type}"))
            }
            WriteKind::Delete if extra.is_empty() => {
                format!("attribute_not_exists({pk}) OR {is_type}")
            }
            WriteKind::Delete => and_extra(format!("attribute_exists({pk}) AND {is_type}")),
        }
    }

    /// The guard of an entity told apart by its keys ([`Identity::Keys`](crate::entity::Identity::Keys)): any item at the key
    /// is the entity's, unless it carries the table's type attribute (a tagged entity's
    /// item, which is left alone). No name is registered that the expression would not use:
    /// the service rejects that.
    fn render_keys_identified<E: Entity>(&self, b: &mut ExprBuilder, extra: Vec<String>) -> String {
        let mut parts = Vec::new();
        if matches!(
            self.kind,
            WriteKind::Create
                | WriteKind::Replace
                | WriteKind::Update
                | WriteKind::Check
                | WriteKind::Upgrade { .. }
        ) {
            let pk = b.name(<E::Table as Table>::PK);
            parts.push(if self.kind == WriteKind::Create {
                format!("attribute_not_exists({pk})")
            } else {
                format!("attribute_exists({pk})")
            });
        }
        if self.kind != WriteKind::Create
            && let Some(type_attr) = <E::Table as Table>::TYPE_ATTR
        {
            let type_attr = b.name(type_attr);
            parts.push(format!("attribute_not_exists({type_attr})"));
        }
        // An item at the key holds the constants (a write that may find none: or there is none).
        if self.kind != WriteKind::Create
            && let Some(held) = query::tags_equal(b, None, E::CONSTANTS)
        {
            let may_find_none =
                matches!(self.kind, WriteKind::Put | WriteKind::Upsert | WriteKind::Delete);
            parts.push(if may_find_none {
                let pk = b.name(<E::Table as Table>::PK);
                format!("(attribute_not_exists({pk}) OR ({held}))")
            } else {
                held
            });
        }
        parts.extend(extra);
        parts.join(" AND ")
    }

    /// The condition on the stored schema version: a partial write (update, upsert) needs an
    /// item of the current version (or none, for an upsert); the migration's write needs the
    /// version it read. `None` when `E` has no schema or the write needs nothing of it.
    fn schema_clause<E: Entity>(&self, b: &mut ExprBuilder) -> Option<String> {
        let schema = E::SCHEMA?;
        let version = match self.kind {
            // Version 1 is the first: no item can be older.
            WriteKind::Update | WriteKind::Upsert if schema.version > crate::model::UNVERSIONED => {
                schema.version
            }
            WriteKind::Upgrade { from } => from,
            _ => return None,
        };
        let attr = b.name(<E::Table as Table>::SCHEMA_ATTR);
        let value = b.value(AttributeValue::N(version.to_string()));
        if self.kind == WriteKind::Upsert {
            // No item (the upsert creates it at the current version), or a current one.
            let pk = b.name(<E::Table as Table>::PK);
            return Some(format!("(attribute_not_exists({pk}) OR {attr} = {value})"));
        }
        Some(if version == crate::model::UNVERSIONED {
            format!("(attribute_not_exists({attr}) OR {attr} = {value})")
        } else {
            format!("{attr} = {value}")
        })
    }

    /// Explains a failed guard from the item that was stored when it was checked.
    pub(crate) fn failure<E: Entity>(&self, key: &Key<E>, mut current: Option<Item>) -> Error {
        if let Some(item) = current.as_mut() {
            crate::model::strip_markers(item);
        }
        let key_text = key.to_string();
        let Some(current) = current else {
            return match (self.kind, self.expected_version) {
                (WriteKind::Put | WriteKind::Upsert, Some(v)) if v > 0 => Error::VersionConflict {
                    entity: E::NAME,
                    key: key_text,
                    expected: v,
                    actual: None,
                },
                (WriteKind::Create | WriteKind::Put | WriteKind::Upsert, _) => {
                    Error::ConditionFailed { entity: E::NAME, key: key_text, current: None }
                }
                (
                    WriteKind::Replace
                    | WriteKind::Update
                    | WriteKind::Check
                    | WriteKind::Delete
                    | WriteKind::Upgrade { .. },
                    _,
                ) => Error::NotFound { entity: E::NAME, key: key_text },
            };
        };
        if self.kind == WriteKind::Create {
            return Error::AlreadyExists {
                entity: E::NAME,
                key: key_text,
                current: Box::new(current),
            };
        }
        if let Err(found) = crate::model::identify::<E>(&current) {
            return Error::WrongEntityType { expected: E::NAME, found, key: key_text };
        }
        // The migration re-reads the item a concurrent writer changed: it needs the item.
        if let WriteKind::Upgrade { .. } = self.kind {
            return Error::ConditionFailed {
                entity: E::NAME,
                key: key_text,
                current: Some(Box::new(current)),
            };
        }
        if matches!(self.kind, WriteKind::Update | WriteKind::Upsert)
            && let Some(schema) = E::SCHEMA
            && let Ok(found) = crate::model::stored_version::<E>(&current)
            && found != schema.version
        {
            return Error::SchemaOutdated {
                entity: E::NAME,
                key: key_text,
                found,
                current: schema.version,
            };
        }
        if let (Some(def), Some(expected)) = (E::VERSION, self.expected_version) {
            let actual = match current.get(def.attr) {
                Some(AttributeValue::N(n)) => n.parse::<u64>().ok(),
                None => Some(0),
                _ => None,
            };
            if actual != Some(expected) {
                return Error::VersionConflict { entity: E::NAME, key: key_text, expected, actual };
            }
        }
        Error::ConditionFailed { entity: E::NAME, key: key_text, current: Some(Box::new(current)) }
    }
}

/// One guarded write rendered for the wire: what a single-item request and a transaction
/// action both need.
pub(crate) struct Rendered<E> {
    pub key: Key<E>,
    pub guard: Guard,
    /// The guard and the caller's condition, as one condition expression.
    pub condition: String,
    pub names: Option<Names>,
    pub values: Option<Values>,
}

impl<E: Entity> Rendered<E> {
    /// Renders the guard of `kind`, the caller's `condition` and what a step of the write
    /// pipeline `held` (the unique values as read) for the item of `key`, after whatever `b`
    /// already holds (an update expression).
    pub(crate) fn new(
        mut b: ExprBuilder,
        key: Key<E>,
        guard: Guard,
        condition: Option<&Node>,
        held: Option<&Node>,
    ) -> Result<Rendered<E>, Error> {
        let user = match (condition.map(|c| c.render(&mut b)).transpose()?, held) {
            (user, None) => user,
            (None, Some(held)) => Some(held.render(&mut b)?),
            (Some(user), Some(held)) => Some(format!("({user}) AND ({})", held.render(&mut b)?)),
        };
        let condition = guard.render::<E>(&mut b, user.as_deref());
        crate::expr::check_expression("ConditionExpression", &condition)?;
        let (names, values) = b.finish();
        Ok(Rendered { key, guard, condition, names, values })
    }

    /// The guarded write as an action of `kind`; a failed guard returns the stored item.
    pub(crate) fn into_action(self, kind: action::Kind) -> action::Action {
        action::Action::new(kind)
            .with_expressions(self.condition, self.names, self.values)
            .return_old(true)
    }
}

/// A fresh idempotency token for `TransactWriteItems` (32 hex characters).
pub(crate) fn idempotency_token() -> String {
    format!("{:016x}{:016x}", retry::random(), retry::random())
}

/// `filter` and the clause that keeps the items not expired at `now` (whole seconds): their
/// expiry attribute `attr` is absent, not a number, or at least `now` (the service expires
/// an item whose number is less than the current time). Its placeholders (`#ddb_exp`,
/// `:ddb_exp_n`, `:ddb_exp_now`) cannot clash with the builders' numbered ones; they are
/// added to `names` and `values`. The one expiry filter of queries and scans.
pub(crate) fn and_expiry_filter(
    filter: Option<String>,
    names: &mut Option<crate::expr::Names>,
    values: &mut Option<crate::expr::Values>,
    attr: &str,
    now: i64,
) -> String {
    use aws_sdk_dynamodb::types::AttributeValue;
    names.get_or_insert_with(Default::default).insert("#ddb_exp".to_owned(), attr.to_owned());
    let values = values.get_or_insert_with(Default::default);
    values.insert(":ddb_exp_n".to_owned(), AttributeValue::S("N".to_owned()));
    values.insert(":ddb_exp_now".to_owned(), AttributeValue::N(now.to_string()));
    let clause = "(NOT attribute_type(#ddb_exp, :ddb_exp_n) OR #ddb_exp >= :ddb_exp_now)";
    match filter {
        Some(f) => format!("{f} AND {clause}"),
        None => clause.to_owned(),
    }
}

/// Adds `condition` to the conditions a builder already holds (combined with AND).
pub(crate) fn and_condition<E>(existing: Option<Node>, condition: Condition<E>) -> Option<Node> {
    let node = condition.into_node();
    Some(match existing {
        Some(existing) => existing.combine(node, true),
        None => node,
    })
}

/// `expect_version` needs a version field to check.
pub(crate) fn check_expected_version<E: Entity>(expected: Option<u64>) -> Result<(), Error> {
    if expected.is_some() && E::VERSION.is_none() {
        return Err(Error::InvalidRequest {
            path: String::new(),
            problem: crate::error::RequestProblem::NoVersionField { entity: E::NAME },
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_distinct_and_fit_the_limit() {
        let a = idempotency_token();
        let b = idempotency_token();
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.len() <= 36, "ClientRequestToken is at most 36 characters");
    }
}
