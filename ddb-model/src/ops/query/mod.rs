//! Queries: typed key conditions (built by the generated constructors), filters, projection,
//! limits, order, counting, streams across pages and pages behind opaque cursors.

mod attrs;
mod binding;
mod builder;
mod cursor;
mod decode;
mod exact;
mod key;
mod levels;
mod paging;
mod prepare;
mod projection;
mod request;
mod run;
mod span;
mod wipe;

use std::marker::PhantomData;
use std::ops::Bound;

use aws_sdk_dynamodb::types::{AttributeValue, Select};
use futures_util::stream::{self, BoxStream, StreamExt, TryStreamExt};
use serde::de::DeserializeOwned;

pub use cursor::Cursor;
pub use decode::{
    AsCollection, AsCollectionOnly, AsEntity, AsItem, AsProjection, Collection, Decode,
};
#[doc(hidden)]
pub use decode::{item_type, unknown_type};
use key::KeyError;
#[doc(hidden)]
pub use key::{KeyStart, Level};
pub use levels::{LevelArg, LevelQuery};
pub use projection::Projection;
#[doc(hidden)]
pub use projection::{
    ProjectedBy, ProjectedFields, ProjectsAs, Variant, collection_projection, projected_field,
    projection_variant,
};
pub use wipe::DeleteAll;

pub(crate) use exact::{query_from, table_query};
pub(crate) use paging::Gate;
pub(crate) use prepare::{identity_filter, tags_equal, type_equals};

use self::cursor::{Fnv, invalid};
use self::key::{ComponentRange, KeyCond, SkCond};
use super::Running;
use crate::db::Db;
use crate::error::Error;
use crate::expr::{Condition, ExprBuilder, Node, Path};
use crate::item::Item;
use crate::model::{Entity, Table};
use crate::stats::Op;

/// Marker: a query on the table's primary key (strongly consistent reads allowed). The last
/// type parameter of [`Query`] and [`EntityQuery`], and the default (see the example of
/// [`EntityQuery`]).
#[derive(Debug, Clone, Copy)]
pub enum OnTable {}
/// Marker: a query on a global secondary index (eventually consistent only: `consistent()`
/// does not exist on such a query). The generated `query_<index>` and `partition_<index>`
/// constructors make such queries.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::{Entity, EntityQuery, local, ops::OnIndex};
/// # use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// #[index(gsi1, pk = "ORG#<org>", sk = "USER#<id>")]
/// struct User { id: String, org: String }
///
/// let db = local::isolated_db().await?;
/// User { id: "ann".into(), org: "acme".into() }.put(&db).await?;
/// let query: EntityQuery<'_, User, OnIndex> = User::partition_gsi1(&db, "acme");
/// assert_eq!(query.all().await?[0].id, "ann");
/// # Ok(()) }
/// ```
///
/// Asking an index query for a strongly consistent read does not compile:
///
/// ```compile_fail,E0599
/// # use ddb_model::{Db, Entity};
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// # #[index(gsi1, pk = "ORG#<org>", sk = "USER#<id>")]
/// # struct User { id: String, org: String }
/// # fn demo(db: &Db) {
/// let query = User::partition_gsi1(db, "acme").consistent();
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub enum OnIndex {}

/// A query of entity `E`, on the table (`On = OnTable`) or an index (`OnIndex`): what the
/// generated constructors return once the sort-key condition is complete (and what any
/// level turns into with `into_query()`). Handy to name a query built in one place and run
/// in another.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::{Db, Entity, EntityQuery, local, ops::OnTable};
/// # use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
/// struct Order { user: String, seq: u32, total: u64 }
///
/// /// The large orders of a user, newest first.
/// fn large_orders<'a>(db: &'a Db, user: &str) -> EntityQuery<'a, Order> {
///     Order::partition(db, user).filter(Order::TOTAL.ge(100)).reverse()
/// }
///
/// let db = local::isolated_db().await?;
/// for (seq, total) in [(1, 150), (2, 20), (3, 300)] {
///     Order { user: "ann".into(), seq, total }.put(&db).await?;
/// }
/// let seqs: Vec<u32> = large_orders(&db, "ann").all().await?.iter().map(|o| o.seq).collect();
/// assert_eq!(seqs, [3, 1]);
/// // A query of the table (`OnTable`, the default), so `consistent()` exists.
/// let query: EntityQuery<'_, Order, OnTable> = large_orders(&db, "ann").consistent();
/// assert_eq!(query.count().await?, 2);
/// # Ok(()) }
/// ```
pub type EntityQuery<'a, E, On = OnTable> = Query<'a, <E as Entity>::Table, AsEntity<E>, On>;

/// A query: one partition of the table or of an index, an optional sort-key condition, and
/// what to do with the items. Made by the generated constructors (`Store::query(&db, ..)`,
/// `User::query_gsi1(&db, ..)`, `Store::partition(&db, ..)`).
///
/// Every access path of an entity (the table's primary key, and each `#[index]`) gets a query
/// constructor taking the partition-key fields, then one method per sort-key placeholder, in
/// template order. For `#[entity(pk = "<country>", sk = "<state>#<city>#<zip>")] struct
/// Store` the derive generates:
///
/// | call | sort-key condition |
/// | --- | --- |
/// | `Store::query(&db, country)` | the whole partition (sort keys starting with the template's leading literal, if any) |
/// | `.state(s)` | `begins_with(sk, "<s>#")` — whole components only: `NY` never matches `NYC` |
/// | `.state(s).city(c)` | `begins_with(sk, "<s>#<c>#")` |
/// | `.state(s).city(c).zip(z)` | `sk = "<s>#<c>#<z>"` (the last placeholder gives the full key) |
/// | `.state(s).city_between(a, b)`, `_gt`, `_ge`, `_lt`, `_le` | a range on the next level |
/// | `.state(s).city_begins_with(p)` | the next level starts with `p` |
/// | `Store::partition(&db, country)` | every `Store` of the partition, whatever its sort key |
///
/// Each level is its own type (`StoreQuery<'_, 0>`, `StoreQuery<'_, 1>`, ...), so a level
/// cannot be skipped: `Store::query(&db, "USA").city("OMAHA")` does not compile. Indexes get
/// `User::query_gsi1(&db, org)` / `User::partition_gsi1(&db, org)` and their own level type
/// (`UserGsi1Query`), on which `consistent()` does not exist (indexes are eventually
/// consistent). Placeholders that the partition key or an earlier level already fixes end
/// the levels there.
///
/// Ranges compare the encoded text of the component (UTF-8 bytes, separators and `%` escaped),
/// which is the natural order for integers, dates, UUIDs and separator-free strings. They are
/// exact over the whole of Unicode, U+10FFFF and characters that sort below the separator
/// included: the service condition is a superset and each item's component is checked. `""`
/// is the smallest value: `_ge("")` is the whole level, and a range that holds nothing
/// (`_lt("")`) sends no request.
///
/// Any level (or a whole partition) then takes [`limit`](Query::limit),
/// [`page_size`](Query::page_size), [`reverse`](Query::reverse), typed
/// [`filter`](Query::filter)s, [`project`](Query::project),
/// [`consistent`](Query::consistent) (table only), and runs with [`all`](Query::all) (or
/// `.await`), [`first`](Query::first), [`count`](Query::count), [`stream`](Query::stream)
/// (a `futures` stream, one request per page) or [`page`](Query::page) (items and an opaque,
/// URL-safe [`Cursor`] bound to the query).
///
/// A query of an entity reads only items of that entity type (a filter on the entity-type
/// attribute), so other entity types sharing the partition never turn into the wrong struct;
/// [`collection`](Query::collection) reads several entity types of a partition as a
/// [`Collection`] enum, typed, in one request.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::{Entity, EntityQuery, local, ops::LevelQuery};
/// use futures_util::TryStreamExt;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize, Debug)]
/// #[entity(pk = "<country>", sk = "<state>#<city>#<zip>")]
/// struct Store { country: String, state: String, city: String, zip: String }
///
/// let db = local::isolated_db().await?;
/// for (state, city, zip) in [("NY", "NYC", "10001"), ("NY", "NYC", "10019"), ("NE", "OMAHA", "68118")] {
///     let s = Store { country: "USA".into(), state: state.into(), city: city.into(), zip: zip.into() };
///     s.put(&db).await?;
/// }
/// // Every level of the sort key, in template order.
/// assert_eq!(Store::query(&db, "USA").all().await?.len(), 3);
/// assert_eq!(Store::query(&db, "USA").state("NY").all().await?.len(), 2);
/// assert_eq!(Store::query(&db, "USA").state("NY").city("NYC").zip("10019").all().await?.len(), 1);
/// // A range on the next level, newest first, as a stream.
/// let zips: Vec<String> = Store::query(&db, "USA").state("NY").city("NYC").zip_ge("10002")
///     .reverse()
///     .stream()
///     .map_ok(|s| s.zip)
///     .try_collect()
///     .await?;
/// assert_eq!(zips, ["10019"]);
/// // `StoreQuery<'_, 1>`: the state is fixed; a level dereferences to a `LevelQuery`.
/// let ny = Store::query(&db, "USA").state("NY");
/// let level: &LevelQuery<'_, Store> = &ny;
/// assert_eq!(level.count().await?, 2);
/// let query: EntityQuery<'_, Store> = ny.into_query().reverse();
/// let zips: Vec<String> = query.all().await?.into_iter().map(|s| s.zip).collect();
/// assert_eq!(zips, ["10019", "10001"]);
/// # Ok(()) }
/// ```
///
/// The settings and every way to run a query, on orders 0 to 4 of "ann":
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::{Entity, Op, local};
/// use futures_util::TryStreamExt;
/// # use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
/// struct Order { user: String, seq: u32, total: u64 }
///
/// let db = local::isolated_db().await?;
/// for seq in 0..5 {
///     Order { user: "ann".into(), seq, total: 100 * u64::from(seq) }.put(&db).await?;
/// }
/// // `all`, or awaiting the query.
/// let orders: Vec<Order> = Order::query(&db, "ann").all().await?;
/// assert_eq!(orders.len(), 5);
/// let orders: Vec<Order> = Order::query(&db, "ann").await?; // the same
/// assert_eq!(orders[4].total, 400);
/// assert!(Order::query(&db, "bob").all().await?.is_empty());
/// // `first`, in either order.
/// assert_eq!(Order::query(&db, "ann").first().await?.map(|o| o.seq), Some(0));
/// assert_eq!(Order::query(&db, "ann").reverse().first().await?.map(|o| o.seq), Some(4));
/// assert!(Order::query(&db, "bob").first().await?.is_none());
/// let newest = Order::query(&db, "ann").reverse().limit(2).all().await?;
/// assert_eq!(newest.iter().map(|o| o.seq).collect::<Vec<_>>(), [4, 3]);
/// // `limit` caps every way to run.
/// assert_eq!(Order::query(&db, "ann").limit(3).all().await?.len(), 3);
/// assert_eq!(Order::query(&db, "ann").limit(3).count().await?, 3);
/// let page = Order::query(&db, "ann").limit(2).page(None).await?;
/// assert_eq!(page.items.len(), 2);
/// assert!(page.next.is_some());
/// // `page_size`: 2 + 2 + 1 items, three requests.
/// let before = db.requests().get(Op::Query);
/// assert_eq!(Order::query(&db, "ann").page_size(2).all().await?.len(), 5);
/// assert_eq!(db.requests().get(Op::Query) - before, 3);
/// let mut orders = Order::query(&db, "ann").page_size(2).stream();
/// let mut total = 0;
/// while let Some(order) = orders.try_next().await? {
///     total += order.total;
/// }
/// assert_eq!(total, 1000);
/// let pages: Vec<Vec<Order>> =
///     Order::query(&db, "ann").page_size(2).pages().try_collect().await?;
/// let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
/// assert_eq!(sizes, [2, 2, 1]);
/// // Page by page behind a cursor.
/// let (mut seqs, mut cursor) = (Vec::new(), None);
/// loop {
///     let page = Order::query(&db, "ann").limit(2).page(cursor.as_ref()).await?;
///     seqs.extend(page.items.iter().map(|o| o.seq));
///     let Some(next) = page.next else { break };
///     cursor = Some(next);
/// }
/// assert_eq!(seqs, [0, 1, 2, 3, 4]);
/// // Filters, and counting.
/// let mid = Order::query(&db, "ann")
///     .filter(Order::TOTAL.ge(200) & Order::TOTAL.lt(400))
///     .all()
///     .await?;
/// assert_eq!(mid.iter().map(|o| o.seq).collect::<Vec<_>>(), [2, 3]);
/// // One item per request, yet the page is filled: requests continue past filtered items.
/// let query = Order::query(&db, "ann").filter(Order::TOTAL.ge(300)).page_size(1).limit(1);
/// assert_eq!(query.page(None).await?.items[0].seq, 3);
/// assert_eq!(Order::query(&db, "ann").count().await?, 5);
/// assert_eq!(Order::query(&db, "ann").filter(Order::TOTAL.ge(300)).count().await?, 2);
/// assert_eq!(Order::query(&db, "ann").seq_lt(3).count().await?, 3);
/// assert_eq!(Order::query(&db, "bob").count().await?, 0);
/// // A strongly consistent read sees the write before it.
/// Order { user: "ann".into(), seq: 7, total: 700 }.put(&db).await?;
/// let order = Order::query(&db, "ann").seq(7).consistent().first().await?;
/// assert_eq!(order.map(|o| o.total), Some(700));
/// # Ok(()) }
/// ```
#[must_use = "a query does nothing until it is run"]
pub struct Query<'a, T, D: Decode, On = OnTable> {
    db: &'a Db<T>,
    key: Result<KeyCond, KeyError>,
    entity: &'static str,
    filter: Option<Node>,
    projection: Option<Vec<Path>>,
    limit: Option<usize>,
    page_size: Option<u32>,
    reverse: bool,
    consistent: bool,
    /// Items past their expiry time are returned (`include_expired`).
    include_expired: bool,
    /// The request `all` started when the query was polled as a future.
    running: Running<'a, Result<Vec<D::Output>, Error>>,
    _marker: PhantomData<fn() -> (D, On)>,
}

/// One page of results and the cursor of the next page, as returned by [`Query::page`] (see
/// its example, and [`Cursor::parse`]'s).
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// The items of the page, in query order.
    pub items: Vec<T>,
    /// Where the next page starts; `None` when the query has no more items. A page that
    /// ends exactly at the last item may still have a cursor, whose page is then empty.
    pub next: Option<Cursor>,
}

/// The start of a generated query constructor: the partition and the sort-key levels fixed
/// so far.
#[doc(hidden)]
pub struct QueryFrom<'a, E: Entity, On> {
    db: &'a Db<E::Table>,
    start: KeyStart,
    _on: PhantomData<fn() -> On>,
}

impl<'a, E: Entity, On> QueryFrom<'a, E, On> {
    pub fn new(db: &'a Db<E::Table>, start: KeyStart) -> Self {
        QueryFrom { db, start, _on: PhantomData }
    }

    /// Fixes the next placeholder (see [`KeyStart::push`]).
    pub fn push(self, text: &str, level: Level) -> Self {
        QueryFrom { db: self.db, start: self.start.push(text, level), _on: PhantomData }
    }

    /// Fixes the last placeholder.
    pub fn eq(self, text: &str, level: Level) -> EntityQuery<'a, E, On> {
        self.build(|start| start.eq(text, level))
    }

    /// The sort keys that start with the prefix fixed so far.
    pub fn prefix(self) -> EntityQuery<'a, E, On> {
        self.build(|start| start.prefix())
    }

    /// Every item of the partition.
    pub fn partition(self) -> EntityQuery<'a, E, On> {
        self.build(|start| start.partition())
    }

    /// The next component starts with `text`.
    pub fn begins_with(self, text: &str, level: Level) -> EntityQuery<'a, E, On> {
        self.build(|start| start.begins_with(text, level))
    }

    /// Sort keys between two whole keys, inclusive.
    pub(crate) fn between(self, lo: String, hi: String) -> EntityQuery<'a, E, On> {
        self.build(|start| start.between(lo, hi))
    }

    /// The next component lies in a range.
    pub fn range(
        self,
        lower: Bound<&str>,
        upper: Bound<&str>,
        level: Level,
    ) -> EntityQuery<'a, E, On> {
        self.build(|start| start.range(lower, upper, level))
    }

    /// The query of the condition `f` makes of the start.
    pub(crate) fn build_from(self, f: impl FnOnce(KeyStart) -> KeyCond) -> EntityQuery<'a, E, On> {
        self.build(f)
    }

    fn build(self, f: impl FnOnce(KeyStart) -> KeyCond) -> EntityQuery<'a, E, On> {
        let missing = self.start.missing_index();
        let cond = f(self.start);
        let key = match (missing, &cond.refused) {
            (Some(index), _) => {
                Err(KeyError::Invalid(crate::error::RequestProblem::UnknownIndex {
                    index: index.to_owned(),
                }))
            }
            (None, Some(refused)) => Err(refused.clone()),
            (None, None) => Ok(cond),
        };
        Query::new(self.db, key, E::NAME)
    }
}

impl<'a, T, D: Decode, On> Query<'a, T, D, On> {
    fn new(db: &'a Db<T>, key: Result<KeyCond, KeyError>, entity: &'static str) -> Self {
        Query {
            db,
            key,
            entity,
            filter: None,
            projection: None,
            limit: None,
            page_size: None,
            reverse: false,
            consistent: false,
            include_expired: false,
            running: Running::default(),
            _marker: PhantomData,
        }
    }
}
