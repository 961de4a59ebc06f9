//! Queries fixed level by level from a sort-key template: the runtime half of the generated
//! level types (`StoreQuery<'_, L>`).

use std::borrow::Cow;
use std::future::Future;
use std::marker::PhantomData;
use std::ops::Bound;

use futures_util::stream::BoxStream;
use serde::de::DeserializeOwned;

use super::{
    AsCollection, AsItem, AsProjection, Collection, Cursor, EntityQuery, KeyStart, Level, OnIndex,
    OnTable, Page, Query, QueryFrom, Running,
};
use crate::db::Db;
use crate::error::Error;
use crate::expr::{Condition, Path};
use crate::key::{IndexArg, KeyArg};
use crate::model::{AttrArg, AttrPrefix, Entity};
use aws_sdk_dynamodb::types::AttributeValue;

use super::attrs::AttrRange;
use crate::ops::BoxFuture;

/// A value for a placeholder of type `T` of a query on the table (`KeyArg`) or on an index
/// (`IndexArg`, which also takes the `KeyPart` inside an `Option` field).
pub trait LevelArg<On, T> {
    /// The key text of the value, before escaping.
    fn level_text(&self) -> Cow<'_, str>;
}

impl<T, A: KeyArg<T>> LevelArg<OnTable, T> for A {
    fn level_text(&self) -> Cow<'_, str> {
        self.arg_key_text()
    }
}

impl<T, A: IndexArg<T>> LevelArg<OnIndex, T> for A {
    fn level_text(&self) -> Cow<'_, str> {
        self.index_arg_text()
    }
}

/// `LevelQuery`'s methods that run [`into_query`](LevelQuery::into_query), then the
/// [`Query`] method of the same name (generic parameters in brackets).
macro_rules! forward {
    ($($(#[$doc:meta])* fn $name:ident $([$($g:tt)*])? ($($a:ident: $ty:ty)?) -> $out:ty;)*) => {$(
        $(#[$doc])*
        pub fn $name $(<$($g)*>)? (&self $(, $a: $ty)?) -> $out {
            self.into_query().$name($($a)?)
        }
    )*};
}

/// `LevelQuery`'s one-sided ranges on a level, `value` giving the bounds as `v`.
macro_rules! one_sided {
    ($($(#[$doc:meta])* $name:ident: |$v:ident| $lower:expr, $upper:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name<T>(
            this: Self,
            value: impl LevelArg<On, T>,
            level: impl Into<Level>,
        ) -> EntityQuery<'a, E, On> {
            let $v = &*value.level_text();
            Self::query_from(this).range($lower, $upper, level.into())
        }
    )*};
}

/// A query of `E` whose sort key is fixed level by level: the partition and the placeholders
/// fixed so far.
///
/// The generated level types (`StoreQuery<'_, L>` for `Store`, `UserGsi1Query<'_, L>` for
/// index `gsi1` of `User`) wrap it, add one method per operation on their own placeholder
/// (`state`, `state_between`, ...), and dereference to it for the methods that finish the
/// query: every method below runs the query with the sort keys that start with the levels
/// fixed so far (see [`Query`] for the levels and what a query does, and its first example).
pub struct LevelQuery<'a, E: Entity, On = OnTable> {
    db: &'a Db<E::Table>,
    start: KeyStart,
    /// The query `all` started when the level was polled as a future.
    running: Running<'a, Result<Vec<E>, Error>>,
    _on: PhantomData<fn() -> On>,
}

/// The generated level methods call these associated functions (not methods: they take the
/// state by value, which a dereferenced level type cannot give).
#[doc(hidden)]
impl<'a, E: Entity, On> LevelQuery<'a, E, On> {
    pub fn new(db: &'a Db<E::Table>, start: KeyStart) -> Self {
        LevelQuery { db, start, running: Running::default(), _on: PhantomData }
    }

    fn query_from(this: Self) -> QueryFrom<'a, E, On> {
        QueryFrom::new(this.db, this.start)
    }

    /// Fixes this level's placeholder to `value`, followed by `lit`.
    pub fn next<T>(this: Self, value: impl LevelArg<On, T>, level: impl Into<Level>) -> Self {
        let start = this.start.push(&value.level_text(), level.into());
        LevelQuery { start, ..this }
    }

    /// Fixes the last placeholder: the whole sort key.
    pub fn last<T>(
        this: Self,
        value: impl LevelArg<On, T>,
        level: impl Into<Level>,
    ) -> EntityQuery<'a, E, On> {
        Self::query_from(this).eq(&value.level_text(), level.into())
    }

    /// This level's value lies between `low` and `high` (inclusive); `level` says how it is
    /// written and what follows it in the template.
    pub fn between<T>(
        this: Self,
        low: impl LevelArg<On, T>,
        high: impl LevelArg<On, T>,
        level: impl Into<Level>,
    ) -> EntityQuery<'a, E, On> {
        let (low, high) = (low.level_text(), high.level_text());
        Self::query_from(this).range(Bound::Included(&low), Bound::Included(&high), level.into())
    }

    one_sided! {
        /// This level's value is greater than `value`.
        gt: |v| Bound::Excluded(v), Bound::Unbounded;
        /// This level's value is greater than or equal to `value`.
        ge: |v| Bound::Included(v), Bound::Unbounded;
        /// This level's value is less than `value`.
        lt: |v| Bound::Unbounded, Bound::Excluded(v);
        /// This level's value is less than or equal to `value`.
        le: |v| Bound::Unbounded, Bound::Included(v);
    }

    /// This level's value starts with `prefix`.
    pub fn begins_with(
        this: Self,
        prefix: &str,
        level: impl Into<Level>,
    ) -> EntityQuery<'a, E, On> {
        Self::query_from(this).begins_with(prefix, level.into())
    }

    /// The next sort attribute of a multi-attribute index equals `value`.
    pub fn attr_next<T>(this: Self, value: impl AttrArg<T>) -> Self {
        let start = this.start.push_attr(value.attr_value());
        LevelQuery { start, ..this }
    }

    /// The last sort attribute of a multi-attribute index equals `value`: one position in the
    /// index's order (several items may share it).
    pub fn attr_last<T>(this: Self, value: impl AttrArg<T>) -> EntityQuery<'a, E, On> {
        Self::query_from(Self::attr_next(this, value)).prefix()
    }

    /// The next sort attribute of a multi-attribute index lies between `low` and `high`
    /// (inclusive).
    pub fn attr_between<T>(
        this: Self,
        low: impl AttrArg<T>,
        high: impl AttrArg<T>,
    ) -> EntityQuery<'a, E, On> {
        match (low.attr_value(), high.attr_value()) {
            (Some(low), Some(high)) => Self::attr_range(this, AttrRange::Between(low, high)),
            _ => Self::attr_absent(this),
        }
    }

    /// The next sort attribute is greater than `value`.
    pub fn attr_gt<T>(this: Self, value: impl AttrArg<T>) -> EntityQuery<'a, E, On> {
        Self::attr_one(this, value, AttrRange::Gt)
    }

    /// The next sort attribute is greater than or equal to `value`.
    pub fn attr_ge<T>(this: Self, value: impl AttrArg<T>) -> EntityQuery<'a, E, On> {
        Self::attr_one(this, value, AttrRange::Ge)
    }

    /// The next sort attribute is less than `value`.
    pub fn attr_lt<T>(this: Self, value: impl AttrArg<T>) -> EntityQuery<'a, E, On> {
        Self::attr_one(this, value, AttrRange::Lt)
    }

    /// The next sort attribute is less than or equal to `value`.
    pub fn attr_le<T>(this: Self, value: impl AttrArg<T>) -> EntityQuery<'a, E, On> {
        Self::attr_one(this, value, AttrRange::Le)
    }

    /// The next sort attribute (a string) starts with `prefix`.
    pub fn attr_begins_with<T>(this: Self, prefix: impl AttrPrefix<T>) -> EntityQuery<'a, E, On> {
        Self::attr_range(this, AttrRange::BeginsWith(prefix.prefix_value()))
    }

    fn attr_one<T>(
        this: Self,
        value: impl AttrArg<T>,
        range: fn(AttributeValue) -> AttrRange,
    ) -> EntityQuery<'a, E, On> {
        match value.attr_value() {
            Some(value) => Self::attr_range(this, range(value)),
            None => Self::attr_absent(this),
        }
    }

    /// A bound with no value (a custom `IndexAttribute` that writes none): refused like an
    /// empty key value.
    fn attr_absent(this: Self) -> EntityQuery<'a, E, On> {
        Self::query_from(Self { start: this.start.push_attr(None), ..this }).prefix()
    }

    fn attr_range(this: Self, range: AttrRange) -> EntityQuery<'a, E, On> {
        QueryFrom::new(this.db, this.start).build_from(|start| start.attr_range(range))
    }

    /// The query with the levels fixed so far (for `.await` on a level, and the query of a
    /// template without levels).
    pub fn finish(this: Self) -> EntityQuery<'a, E, On> {
        Self::query_from(this).prefix()
    }

    /// The sort key is the literal before the first level, whole: the query of a literal sort
    /// key (one item per partition).
    pub fn exact(this: Self) -> EntityQuery<'a, E, On> {
        Self::query_from(this).eq("", Level::escaped(""))
    }

    /// Every item of the partition, whatever its sort key.
    pub fn partition(this: Self) -> EntityQuery<'a, E, On> {
        Self::query_from(this).partition()
    }
}

impl<'a, E: Entity, On: 'a> LevelQuery<'a, E, On> {
    /// The query with the levels fixed so far (sort keys starting with them).
    pub fn into_query(&self) -> EntityQuery<'a, E, On> {
        QueryFrom::new(self.db, self.start.clone()).prefix()
    }

    forward! {
        /// At most `n` items (see [`Query::limit`]).
        fn limit(n: usize) -> EntityQuery<'a, E, On>;
        /// Items evaluated per request (see [`Query::page_size`]).
        fn page_size(n: u32) -> EntityQuery<'a, E, On>;
        /// Descending sort-key order (see [`Query::reverse`]).
        fn reverse() -> EntityQuery<'a, E, On>;
        /// Returns expired items too (see [`Query::include_expired`]).
        fn include_expired() -> EntityQuery<'a, E, On>;
        /// Keeps the items for which `condition` holds (see [`Query::filter`]).
        fn filter(condition: Condition<E>) -> EntityQuery<'a, E, On>;
        /// Reads only some attributes (see [`Query::project`]).
        fn project[P: DeserializeOwned + Send + 'static](paths: impl IntoIterator<Item = Path>)
            -> Query<'a, E::Table, AsProjection<E, P>, On>;
        /// Reads every entity type as collection `C` (see [`Query::collection`]).
        fn collection[C: Collection<Table = E::Table>]()
            -> Query<'a, E::Table, AsCollection<C>, On>;
        /// Reads raw items of every entity type (see [`Query::items`]).
        fn items() -> Query<'a, E::Table, AsItem, On>;
        /// Every item (see [`Query::all`]).
        fn all() -> impl Future<Output = Result<Vec<E>, Error>> + use<'a, E, On>;
        /// The first item (see [`Query::first`]).
        fn first() -> impl Future<Output = Result<Option<E>, Error>> + use<'a, E, On>;
        /// The items as a stream (see [`Query::stream`]).
        fn stream() -> BoxStream<'a, Result<E, Error>>;
        /// The items page by page (see [`Query::pages`]).
        fn pages() -> BoxStream<'a, Result<Vec<E>, Error>>;
        /// One page behind a cursor (see [`Query::page`]).
        fn page['c](cursor: Option<&'c Cursor>)
            -> impl Future<Output = Result<Page<E>, Error>> + use<'a, 'c, E, On>;
        /// The number of items (see [`Query::count`]).
        fn count() -> impl Future<Output = Result<usize, Error>> + use<'a, E, On>;
    }

    /// Deletes every item of the query (see [`Query::delete_all`]).
    pub fn delete_all(&self) -> super::DeleteAll<'a, E::Table, super::AsEntity<E>, On>
    where
        On: Send,
    {
        self.into_query().delete_all()
    }

    /// The future of `.await` on a generated level type.
    #[doc(hidden)]
    pub fn into_future(this: Self) -> BoxFuture<'a, Result<Vec<E>, Error>> {
        crate::ops::boxed(|| Self::finish(this))
    }

    /// Polls a generated level type as a future: runs [`all`](LevelQuery::all) (started on
    /// the first poll).
    #[doc(hidden)]
    pub fn poll_all(
        this: &mut Self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<Vec<E>, Error>> {
        let future = match this.running.take() {
            Some(future) => future,
            None => crate::ops::boxed(|| this.all()),
        };
        this.running.insert(future).as_mut().poll(cx)
    }
}

impl<'a, E: Entity> LevelQuery<'a, E, OnTable> {
    forward! {
        /// Strongly consistent read (see [`Query::consistent`]); not on an index.
        fn consistent() -> EntityQuery<'a, E, OnTable>;
    }
}
