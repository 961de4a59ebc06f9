//! Queries: typed key conditions (built by the generated constructors), filters, projection,
//! limits, order, counting, streams across pages and pages behind opaque cursors.

mod cursor;
mod decode;
mod exact;
mod key;

use std::future::IntoFuture;
use std::marker::PhantomData;
use std::ops::Bound;

use aws_sdk_dynamodb::types::{AttributeValue, ReturnConsumedCapacity, Select};
use futures_util::stream::{self, BoxStream, StreamExt, TryStreamExt};
use serde::de::DeserializeOwned;

pub use cursor::Cursor;
pub use decode::{AsCollection, AsEntity, AsItem, AsProjection, Collection, Decode};
#[doc(hidden)]
pub use decode::{item_type, unknown_type};
#[doc(hidden)]
pub use key::KeyStart;

pub(crate) use exact::{Gate, query_from, table_query};

use self::cursor::{Fnv, invalid};
use self::key::{ComponentRange, KeyCond, SkCond};
use super::BoxFuture;
use crate::db::Db;
use crate::error::Error;
use crate::expr::{Condition, ExprBuilder, Node, Path};
use crate::item::Item;
use crate::model::{Entity, Table};
use crate::stats::Op;

/// Marker: a query on the table's primary key (strongly consistent reads allowed). The last
/// type parameter of [`Query`] and [`EntityQuery`], and the default.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::{Entity, EntityQuery, OnTable, local};
/// # use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
/// struct Order { user: String, seq: u32 }
///
/// let db = local::isolated_db().await?;
/// Order { user: "ann".into(), seq: 1 }.put(&db).await?;
/// // A query of the table, so `consistent()` exists.
/// let query: EntityQuery<'_, Order, OnTable> = Order::partition(&db, "ann").consistent();
/// assert_eq!(query.all().await?.len(), 1);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy)]
pub enum OnTable {}
/// Marker: a query on a global secondary index (eventually consistent only: `consistent()`
/// does not exist on such a query). The generated `query_<index>` and `partition_<index>`
/// constructors make such queries.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::{Entity, EntityQuery, OnIndex, local};
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
/// use ddb_model::{Db, Entity, EntityQuery, local};
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
/// use ddb_model::{Entity, local};
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
/// # Ok(()) }
/// ```
#[must_use = "a query does nothing until it is run"]
pub struct Query<'a, T, D, On = OnTable> {
    db: &'a Db<T>,
    key: Result<KeyCond, String>,
    entity: &'static str,
    filter: Option<Node>,
    projection: Option<Vec<Path>>,
    limit: Option<usize>,
    page_size: Option<u32>,
    reverse: bool,
    consistent: bool,
    _marker: PhantomData<fn() -> (D, On)>,
}

/// One page of results and the cursor of the next page, as returned by [`Query::page`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::{Cursor, Entity, Page, local};
/// # use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize)]
/// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
/// struct Order { user: String, seq: u32 }
///
/// let db = local::isolated_db().await?;
/// for seq in 0..5 {
///     Order { user: "ann".into(), seq }.put(&db).await?;
/// }
/// let page: Page<Order> = Order::query(&db, "ann").limit(2).page(None).await?;
/// assert_eq!(page.items.len(), 2);
/// // `next` goes to the client as text and comes back with its next request.
/// let text = page.next.expect("more orders").to_string();
/// let cursor: Cursor = text.parse()?;
/// let page = Order::query(&db, "ann").limit(2).page(Some(&cursor)).await?;
/// assert_eq!(page.items[0].seq, 2);
/// # Ok(()) }
/// ```
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
    pub fn push(self, text: &str, lit: &str) -> Self {
        QueryFrom { db: self.db, start: self.start.push(text, lit), _on: PhantomData }
    }

    /// Fixes the last placeholder.
    pub fn eq(self, text: &str, lit: &str) -> EntityQuery<'a, E, On> {
        self.build(|start| start.eq(text, lit))
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
    pub fn begins_with(self, text: &str) -> EntityQuery<'a, E, On> {
        self.build(|start| start.begins_with(text))
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
        sep: Option<char>,
    ) -> EntityQuery<'a, E, On> {
        self.build(|start| start.range(lower, upper, sep))
    }

    fn build(self, f: impl FnOnce(KeyStart) -> KeyCond) -> EntityQuery<'a, E, On> {
        let missing = self.start.missing_index();
        let cond = f(self.start);
        let key = match missing {
            Some(index) => {
                Err(format!("the table has no index `{index}` (queried for `{}`)", E::NAME))
            }
            None => Ok(cond),
        };
        Query {
            db: self.db,
            key,
            entity: E::NAME,
            filter: None,
            projection: None,
            limit: None,
            page_size: None,
            reverse: false,
            consistent: false,
            _marker: PhantomData,
        }
    }
}

impl<'a, T: Table, D: Decode, On: 'a> Query<'a, T, D, On> {
    /// The same query, decoding its items with `D2` (tree copies).
    pub(crate) fn with_decode<D2: Decode>(self) -> Query<'a, T, D2, On> {
        Query {
            db: self.db,
            key: self.key,
            entity: self.entity,
            filter: self.filter,
            projection: self.projection,
            limit: self.limit,
            page_size: self.page_size,
            reverse: self.reverse,
            consistent: self.consistent,
            _marker: PhantomData,
        }
    }

    /// At most `n` items in total ([`all`](Query::all), [`stream`](Query::stream),
    /// [`count`](Query::count)), and the number of items of each [`page`](Query::page).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32, total: u64 }
    ///
    /// let db = local::isolated_db().await?;
    /// // Orders 0 to 4 of "ann", with totals 0, 100, 200, 300 and 400.
    /// # for seq in 0..5 {
    /// #     Order { user: "ann".into(), seq, total: 100 * u64::from(seq) }.put(&db).await?;
    /// # }
    /// assert_eq!(Order::query(&db, "ann").limit(3).all().await?.len(), 3);
    /// assert_eq!(Order::query(&db, "ann").limit(3).count().await?, 3);
    /// let page = Order::query(&db, "ann").limit(2).page(None).await?;
    /// assert_eq!(page.items.len(), 2);
    /// assert!(page.next.is_some());
    /// # Ok(()) }
    /// ```
    pub fn limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// At most `n` items evaluated per request (DynamoDB's `Limit`); without it a request
    /// reads up to 1 MB. It changes how many requests [`all`](Query::all),
    /// [`stream`](Query::stream) and [`count`](Query::count) send, not their results; without
    /// a [`limit`](Query::limit), it also caps the items of a [`page`](Query::page).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, Op, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32, total: u64 }
    ///
    /// let db = local::isolated_db().await?;
    /// // Orders 0 to 4 of "ann", with totals 0, 100, 200, 300 and 400.
    /// # for seq in 0..5 {
    /// #     Order { user: "ann".into(), seq, total: 100 * u64::from(seq) }.put(&db).await?;
    /// # }
    /// let orders = Order::query(&db, "ann").page_size(2).all().await?;
    /// assert_eq!(orders.len(), 5);
    /// // 2 + 2 + 1 items: three requests.
    /// assert_eq!(db.requests().get(Op::Query), 3);
    /// # Ok(()) }
    /// ```
    pub fn page_size(mut self, n: u32) -> Self {
        self.page_size = Some(n.max(1));
        self
    }

    /// Descending sort-key order (DynamoDB's `ScanIndexForward = false`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32, total: u64 }
    ///
    /// let db = local::isolated_db().await?;
    /// // Orders 0 to 4 of "ann", with totals 0, 100, 200, 300 and 400.
    /// # for seq in 0..5 {
    /// #     Order { user: "ann".into(), seq, total: 100 * u64::from(seq) }.put(&db).await?;
    /// # }
    /// let newest = Order::query(&db, "ann").reverse().limit(2).all().await?;
    /// assert_eq!(newest.iter().map(|o| o.seq).collect::<Vec<_>>(), [4, 3]);
    /// # Ok(()) }
    /// ```
    pub fn reverse(mut self) -> Self {
        self.reverse = true;
        self
    }

    /// Reads every item of the query (following pages up to [`limit`](Query::limit)).
    /// Awaiting the query itself does the same.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32, total: u64 }
    ///
    /// let db = local::isolated_db().await?;
    /// // Orders 0 to 4 of "ann", with totals 0, 100, 200, 300 and 400.
    /// # for seq in 0..5 {
    /// #     Order { user: "ann".into(), seq, total: 100 * u64::from(seq) }.put(&db).await?;
    /// # }
    /// let orders: Vec<Order> = Order::query(&db, "ann").all().await?;
    /// assert_eq!(orders.len(), 5);
    /// let orders: Vec<Order> = Order::query(&db, "ann").await?; // the same
    /// assert_eq!(orders[4].total, 400);
    /// assert!(Order::query(&db, "bob").all().await?.is_empty());
    /// # Ok(()) }
    /// ```
    pub async fn all(self) -> Result<Vec<D::Output>, Error> {
        self.stream().try_collect().await
    }

    /// The first item in query order, if any (one item is asked for).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32, total: u64 }
    ///
    /// let db = local::isolated_db().await?;
    /// // Orders 0 to 4 of "ann", with totals 0, 100, 200, 300 and 400.
    /// # for seq in 0..5 {
    /// #     Order { user: "ann".into(), seq, total: 100 * u64::from(seq) }.put(&db).await?;
    /// # }
    /// let oldest = Order::query(&db, "ann").first().await?;
    /// assert_eq!(oldest.map(|o| o.seq), Some(0));
    /// let newest = Order::query(&db, "ann").reverse().first().await?;
    /// assert_eq!(newest.map(|o| o.seq), Some(4));
    /// assert!(Order::query(&db, "bob").first().await?.is_none());
    /// # Ok(()) }
    /// ```
    pub async fn first(self) -> Result<Option<D::Output>, Error> {
        let mut items = self.limit(1).all().await?;
        Ok(items.pop())
    }

    /// The items as a stream, one request per page as the stream is polled (up to
    /// [`limit`](Query::limit) items).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, local};
    /// use futures_util::TryStreamExt;
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32, total: u64 }
    ///
    /// let db = local::isolated_db().await?;
    /// // Orders 0 to 4 of "ann", with totals 0, 100, 200, 300 and 400.
    /// # for seq in 0..5 {
    /// #     Order { user: "ann".into(), seq, total: 100 * u64::from(seq) }.put(&db).await?;
    /// # }
    /// let mut orders = Order::query(&db, "ann").page_size(2).stream();
    /// let mut total = 0;
    /// while let Some(order) = orders.try_next().await? {
    ///     total += order.total;
    /// }
    /// assert_eq!(total, 1000);
    /// # Ok(()) }
    /// ```
    pub fn stream(self) -> BoxStream<'a, Result<D::Output, Error>> {
        self.pages().map_ok(|items| stream::iter(items.into_iter().map(Ok))).try_flatten().boxed()
    }

    /// The items page by page, as a stream of vectors: one vector per request (its size is
    /// set by [`page_size`](Query::page_size), or the 1 MB a request reads), up to
    /// [`limit`](Query::limit) items in all. Requests that return no item (all filtered out,
    /// or the empty last request after a page that ended exactly at the end) yield nothing,
    /// so every vector holds at least one item.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, local};
    /// use futures_util::TryStreamExt;
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32, total: u64 }
    ///
    /// let db = local::isolated_db().await?;
    /// // Orders 0 to 4 of "ann", with totals 0, 100, 200, 300 and 400.
    /// # for seq in 0..5 {
    /// #     Order { user: "ann".into(), seq, total: 100 * u64::from(seq) }.put(&db).await?;
    /// # }
    /// let pages: Vec<Vec<Order>> =
    ///     Order::query(&db, "ann").page_size(2).pages().try_collect().await?;
    /// let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    /// assert_eq!(sizes, [2, 2, 1]);
    /// # Ok(()) }
    /// ```
    pub fn pages(self) -> BoxStream<'a, Result<Vec<D::Output>, Error>> {
        struct State<'a, T: Table, D: Decode, On> {
            query: Query<'a, T, D, On>,
            prepared: Option<Prepared>,
            start: Option<Item>,
            remaining: Option<usize>,
            done: bool,
            widen: bool,
        }
        let remaining = self.limit;
        let state = State {
            query: self,
            prepared: None,
            start: None,
            remaining,
            done: false,
            widen: false,
        };
        stream::try_unfold(state, |mut st| async move {
            loop {
                if st.done || st.remaining == Some(0) {
                    return Ok(None);
                }
                let prepared = match st.prepared.take() {
                    Some(p) => p,
                    None => st.query.prepare()?,
                };
                if prepared.empty {
                    return Ok(None);
                }
                let out = st
                    .query
                    .request(&prepared, st.start.take(), st.remaining, false, st.widen)
                    .await?;
                st.widen |= out.dropped;
                st.prepared = Some(prepared);
                st.done = out.next.is_none();
                st.start = out.next;
                if let Some(r) = st.remaining.as_mut() {
                    *r = r.saturating_sub(out.items.len());
                }
                let items = out.items.into_iter().map(D::decode).collect::<Result<Vec<_>, _>>()?;
                if items.is_empty() {
                    if st.done {
                        return Ok(None);
                    }
                    continue;
                }
                return Ok(Some((items, st)));
            }
        })
        .boxed()
    }

    /// One page: up to [`limit`](Query::limit) items starting at `cursor` (the first page
    /// with `None`), following as many requests as a filter needs to fill it. Without a
    /// limit, the items of one request (up to 1 MB).
    ///
    /// The cursor must come from the same query (same index, partition, sort-key condition,
    /// filter, output type and order): anything else is [`Error::InvalidCursor`], checked
    /// before a request is sent.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32, total: u64 }
    ///
    /// let db = local::isolated_db().await?;
    /// // Orders 0 to 4 of "ann", with totals 0, 100, 200, 300 and 400.
    /// # for seq in 0..5 {
    /// #     Order { user: "ann".into(), seq, total: 100 * u64::from(seq) }.put(&db).await?;
    /// # }
    /// let (mut seqs, mut cursor) = (Vec::new(), None);
    /// loop {
    ///     let page = Order::query(&db, "ann").limit(2).page(cursor.as_ref()).await?;
    ///     seqs.extend(page.items.iter().map(|o| o.seq));
    ///     let Some(next) = page.next else { break };
    ///     cursor = Some(next);
    /// }
    /// assert_eq!(seqs, [0, 1, 2, 3, 4]);
    /// # Ok(()) }
    /// ```
    pub async fn page(self, cursor: Option<&Cursor>) -> Result<Page<D::Output>, Error> {
        let prepared = self.prepare()?;
        let mut start = match cursor {
            Some(c) => Some(self.check_cursor(&prepared, c)?),
            None => None,
        };
        if prepared.empty {
            return Ok(Page { items: Vec::new(), next: None });
        }
        let mut items = Vec::new();
        let mut widen = false;
        loop {
            let remaining = self.limit.map(|l| l.saturating_sub(items.len()));
            let out = self.request(&prepared, start.take(), remaining, false, widen).await?;
            widen |= out.dropped;
            for item in out.items {
                items.push(D::decode(item)?);
            }
            start = out.next;
            let full = self.limit.is_none_or(|l| items.len() >= l);
            if start.is_none() || full {
                break;
            }
        }
        let next = start.map(|key| Cursor::encode(prepared.binding, &key)).transpose()?;
        Ok(Page { items, next })
    }

    /// The number of items of the query (up to [`limit`](Query::limit)), counted by the
    /// service without transferring them (`Select = COUNT`). Filtered-out items are not
    /// counted (but are read and paid for).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32, total: u64 }
    ///
    /// let db = local::isolated_db().await?;
    /// // Orders 0 to 4 of "ann", with totals 0, 100, 200, 300 and 400.
    /// # for seq in 0..5 {
    /// #     Order { user: "ann".into(), seq, total: 100 * u64::from(seq) }.put(&db).await?;
    /// # }
    /// assert_eq!(Order::query(&db, "ann").count().await?, 5);
    /// assert_eq!(Order::query(&db, "ann").filter(Order::TOTAL.ge(300)).count().await?, 2);
    /// assert_eq!(Order::query(&db, "ann").seq_lt(3).count().await?, 3);
    /// assert_eq!(Order::query(&db, "bob").count().await?, 0);
    /// # Ok(()) }
    /// ```
    pub async fn count(self) -> Result<usize, Error> {
        let prepared = self.prepare()?;
        if prepared.empty {
            return Ok(0);
        }
        let mut start = None;
        let mut total = 0usize;
        let mut widen = false;
        loop {
            let remaining = self.limit.map(|l| l.saturating_sub(total));
            if remaining == Some(0) {
                return Ok(total);
            }
            let out = self.request(&prepared, start, remaining, true, widen).await?;
            widen |= out.dropped;
            total += out.count;
            if let Some(limit) = self.limit {
                total = total.min(limit);
            }
            start = out.next;
            if start.is_none() {
                return Ok(total);
            }
        }
    }

    fn check_cursor(&self, p: &Prepared, cursor: &Cursor) -> Result<Item, Error> {
        let key = cursor.decode(p.binding)?;
        let text = |attr: &str| crate::model::string_attr(&key, attr);
        let expected = &p.key_attrs;
        let mut present: Vec<&str> = key.keys().map(String::as_str).collect();
        present.sort_unstable();
        let cond = self.key.as_ref().map_err(|_| invalid("the query is invalid"))?;
        let inside = present == *expected
            && text(p.pk_attr) == Some(cond.pk.as_str())
            && cond.admits(p.sk_attr.and_then(text));
        if inside { Ok(key) } else { Err(invalid("the cursor points outside the query")) }
    }

    fn prepare(&self) -> Result<Prepared, Error> {
        let key = self.key.as_ref().map_err(|e| Error::InvalidExpression(e.clone()))?;
        let (pk_attr, sk_attr) = match key.index {
            Some(index) => (index.pk, index.sk),
            None => (T::PK, T::SK),
        };
        key.validate(self.entity, pk_attr)?;
        let mut b = ExprBuilder::default();
        let pk_name = b.name(pk_attr);
        let pk_value = b.value(AttributeValue::S(key.pk.clone()));
        let mut key_expr = format!("{pk_name} = {pk_value}");
        if key.sk != SkCond::Any {
            let Some(sk_attr) = sk_attr else {
                return Err(Error::InvalidExpression(format!(
                    "a sort-key condition on `{}`, which has no sort key",
                    key.index.map_or("the table", |i| i.name)
                )));
            };
            let sk = b.name(sk_attr);
            let mut v = |s: &String| b.value(AttributeValue::S(s.clone()));
            let cond = match &key.sk {
                SkCond::Any => String::new(),
                SkCond::Eq(x) => format!("{sk} = {}", v(x)),
                SkCond::BeginsWith(x) => format!("begins_with({sk}, {})", v(x)),
                SkCond::Between(lo, hi) => format!("{sk} BETWEEN {} AND {}", v(lo), v(hi)),
                SkCond::Ge(x) => format!("{sk} >= {}", v(x)),
                SkCond::Le(x) => format!("{sk} <= {}", v(x)),
            };
            key_expr.push_str(" AND ");
            key_expr.push_str(&cond);
        }
        let mut filters = Vec::new();
        if let Some(t) = D::type_filter() {
            let name = b.name(T::TYPE_ATTR);
            let value = b.value(AttributeValue::S(t.to_owned()));
            filters.push(format!("{name} = {value}"));
        }
        if let Some(filter) = &self.filter {
            filters.push(format!("({})", filter.render(&mut b)?));
        }
        let filter_expr = (!filters.is_empty()).then(|| filters.join(" AND "));
        let range_check = key.range.clone().filter(|_| sk_attr.is_some());
        let mut key_attrs: Vec<&'static str> = vec![T::PK];
        key_attrs.extend(T::SK);
        if let Some(index) = key.index {
            key_attrs.push(index.pk);
            key_attrs.extend(index.sk);
        }
        key_attrs.sort_unstable();
        key_attrs.dedup();
        let projection = self.projection.as_ref().map(|paths| {
            let mut rendered: Vec<String> = paths.iter().map(|p| b.path(p)).collect();
            // Keys are needed for the component check and to continue after an item.
            for attr in &key_attrs {
                rendered.push(b.name(attr));
            }
            rendered.join(", ")
        });
        let mut fp = Fnv::new()
            .field(self.db.table_name().as_bytes())
            .field(key.index.map_or("", |i| i.name).as_bytes())
            .field(key.pk.as_bytes())
            .field(format!("{:?}", key.sk).as_bytes())
            .field(format!("{:?}", key.range).as_bytes())
            .field(D::NAME.as_bytes())
            .field(filter_expr.as_deref().unwrap_or("").as_bytes())
            .field(projection.as_deref().unwrap_or("").as_bytes())
            .field(&[u8::from(self.reverse)]);
        for (kind, expression) in
            [("FilterExpression", &filter_expr), ("ProjectionExpression", &projection)]
        {
            crate::expr::check_expression(kind, expression.as_deref().unwrap_or(""))?;
        }
        let (names, values) = b.finish();
        if let Some(values) = &values {
            let mut sorted: Vec<_> = values.iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(b.0));
            for (placeholder, value) in sorted {
                fp = fp.field(placeholder.as_bytes());
                fp = canonical(fp, value);
            }
        }
        let mut names_sorted: Vec<_> = names.iter().flatten().collect();
        names_sorted.sort();
        for (placeholder, name) in names_sorted {
            fp = fp.field(placeholder.as_bytes()).field(name.as_bytes());
        }
        Ok(Prepared {
            key_attrs,
            key_expr,
            filter_expr,
            projection,
            names,
            values,
            index: key.index.map(|i| i.name),
            pk_attr,
            sk_attr,
            range: range_check,
            binding: fp.finish(),
            empty: key.empty,
        })
    }

    async fn request(
        &self,
        p: &Prepared,
        start: Option<Item>,
        remaining: Option<usize>,
        count: bool,
        widen: bool,
    ) -> Result<Output, Error> {
        // DynamoDB's `Limit` counts evaluated items. Without a filter every evaluated item is
        // returned, so asking for what is missing never overshoots. With one, asking for
        // only what is missing would take many small requests: ask for full pages and cut
        // the result, starting the next request after the last item kept. The entity-type
        // filter drops items only where other entity types share the key range: it widens
        // the requests once it has dropped something (`widen`).
        let filtered = widen || self.filter.is_some() || p.range.is_some();
        let remaining32 = remaining.map(|r| u32::try_from(r).unwrap_or(u32::MAX));
        let limit = match (self.page_size, remaining32) {
            (Some(size), Some(r)) if !filtered => Some(size.min(r)),
            (Some(size), _) => Some(size),
            (None, Some(r)) if !filtered => Some(r),
            (None, _) => None,
        };
        let limit = limit.map(|l| i32::try_from(l.max(1)).unwrap_or(i32::MAX));
        // Counting with a component range reads the sort keys and checks them here.
        let server_count = count && p.range.is_none();
        let mut names = p.names.clone();
        let projection = if count && !server_count {
            let names = names.get_or_insert_with(Default::default);
            let mut keys = Vec::new();
            for (i, attr) in p.key_attrs.iter().enumerate() {
                names.insert(format!("#key{i}"), (*attr).to_owned());
                keys.push(format!("#key{i}"));
            }
            Some(keys.join(", "))
        } else {
            p.projection.clone()
        };
        let select = if server_count {
            Some(Select::Count)
        } else if projection.is_some() {
            Some(Select::SpecificAttributes)
        } else {
            None
        };
        let request = self
            .db
            .client()
            .query()
            .table_name(self.db.table_name())
            .set_index_name(p.index.map(str::to_owned))
            .key_condition_expression(&p.key_expr)
            .set_filter_expression(p.filter_expr.clone())
            .set_projection_expression(projection)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(p.values.clone())
            .set_exclusive_start_key(start)
            .set_limit(limit)
            .set_select(select)
            .scan_index_forward(!self.reverse)
            .consistent_read(self.consistent)
            .return_consumed_capacity(ReturnConsumedCapacity::Total);
        let out =
            super::retry::send(self.db, Op::Query, |t| request.customize().interceptor(t).send())
                .await?;
        self.db.record_capacity(Op::Query, out.consumed_capacity.as_ref());
        self.db.record_items(u64::try_from(out.scanned_count).unwrap_or(0));
        let mut items = out.items.unwrap_or_default();
        let mut dropped = out.scanned_count > out.count;
        if let (Some(range), Some(sk)) = (&p.range, p.sk_attr) {
            let before = items.len();
            items.retain(|item| match item.get(sk) {
                Some(AttributeValue::S(s)) => range.contains(s),
                _ => false,
            });
            dropped |= items.len() < before;
        }
        let mut next = out.last_evaluated_key;
        if let Some(r) = remaining
            && items.len() > r
        {
            items.truncate(r);
            next = items.last().map(|item| p.key_of(item));
        }
        let count =
            if server_count { usize::try_from(out.count).unwrap_or(0) } else { items.len() };
        Ok(Output { items, count, next, dropped })
    }
}

impl<'a, E: Entity, On: 'a> Query<'a, E::Table, AsEntity<E>, On> {
    /// Keeps only the items for which `condition` holds (a `FilterExpression`: filtered
    /// items are still read and paid for). Pages left short by the filter are followed until
    /// [`limit`](Query::limit) items are found or the query ends. Several calls combine with
    /// AND.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32, total: u64 }
    ///
    /// let db = local::isolated_db().await?;
    /// // Orders 0 to 4 of "ann", with totals 0, 100, 200, 300 and 400.
    /// # for seq in 0..5 {
    /// #     Order { user: "ann".into(), seq, total: 100 * u64::from(seq) }.put(&db).await?;
    /// # }
    /// let mid = Order::query(&db, "ann")
    ///     .filter(Order::TOTAL.ge(200) & Order::TOTAL.lt(400))
    ///     .all()
    ///     .await?;
    /// assert_eq!(mid.iter().map(|o| o.seq).collect::<Vec<_>>(), [2, 3]);
    /// // One item per request, yet the page is filled: requests continue past filtered items.
    /// let query = Order::query(&db, "ann").filter(Order::TOTAL.ge(300)).page_size(1).limit(1);
    /// assert_eq!(query.page(None).await?.items[0].seq, 3);
    /// # Ok(()) }
    /// ```
    pub fn filter(mut self, condition: Condition<E>) -> Self {
        self.filter = super::and_condition(self.filter, condition);
        self
    }

    /// Reads only the attributes `paths` (a `ProjectionExpression`) into `P`, a struct with
    /// those fields.
    ///
    /// ```no_run
    /// # use ddb_model::{Db, Entity};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize)]
    /// # #[entity(pk = "<country>", sk = "<state>#<city>")]
    /// # struct Store { country: String, state: String, city: String, address: String }
    /// #[derive(Deserialize)]
    /// struct Address { city: String, address: String }
    ///
    /// # async fn demo(db: &Db) -> Result<(), ddb_model::Error> {
    /// let addresses: Vec<Address> = Store::query(db, "USA")
    ///     .project::<Address>([Store::CITY.path(), Store::ADDRESS.path()])
    ///     .all()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    pub fn project<P: DeserializeOwned + Send + 'static>(
        mut self,
        paths: impl IntoIterator<Item = Path>,
    ) -> Query<'a, E::Table, AsProjection<E, P>, On> {
        self.projection = Some(paths.into_iter().collect());
        self.with_decode()
    }

    /// Reads every entity type of the same key condition as collection `C` (usually with
    /// the generated `partition` constructor), in one query. The filter, if any, applies to
    /// every item.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Collection, Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// struct User { id: String, name: String }
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32 }
    /// #[derive(Collection)]
    /// enum UserItems { User(User), Order(Order) }
    ///
    /// let db = local::isolated_db().await?;
    /// User { id: "ann".into(), name: "Ann".into() }.put(&db).await?;
    /// Order { user: "ann".into(), seq: 1 }.put(&db).await?;
    /// let items = User::partition(&db, "ann").collection::<UserItems>().all().await?;
    /// // In sort-key order: `ORDER#..` before `PROFILE`.
    /// assert!(matches!(&items[0], UserItems::Order(o) if o.seq == 1));
    /// assert!(matches!(&items[1], UserItems::User(u) if u.name == "Ann"));
    /// # Ok(()) }
    /// ```
    pub fn collection<C: Collection<Table = E::Table>>(
        self,
    ) -> Query<'a, E::Table, AsCollection<C>, On> {
        self.with_decode()
    }

    /// Reads the raw items of the same key condition, of every entity type, as stored
    /// (keys and entity-type attribute included).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, Item, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// struct User { id: String }
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32 }
    ///
    /// let db = local::isolated_db().await?;
    /// User { id: "ann".into() }.put(&db).await?;
    /// Order { user: "ann".into(), seq: 1 }.put(&db).await?;
    /// let items: Vec<Item> = User::partition(&db, "ann").items().all().await?;
    /// let types: Vec<&str> = items.iter().map(|i| i["_type"].as_s().unwrap().as_str()).collect();
    /// assert_eq!(types, ["Order", "User"]);
    /// # Ok(()) }
    /// ```
    pub fn items(self) -> Query<'a, E::Table, AsItem, On> {
        self.with_decode()
    }
}

impl<T: Table, D: Decode> Query<'_, T, D, OnTable> {
    /// Strongly consistent read (twice the read capacity): the query sees every write that
    /// succeeded before it. Only queries of the table have it: global secondary indexes are
    /// eventually consistent (see [`OnIndex`]).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32, total: u64 }
    ///
    /// let db = local::isolated_db().await?;
    /// // Orders 0 to 4 of "ann", with totals 0, 100, 200, 300 and 400.
    /// # for seq in 0..5 {
    /// #     Order { user: "ann".into(), seq, total: 100 * u64::from(seq) }.put(&db).await?;
    /// # }
    /// Order { user: "ann".into(), seq: 7, total: 700 }.put(&db).await?;
    /// let order = Order::query(&db, "ann").seq(7).consistent().first().await?;
    /// assert_eq!(order.map(|o| o.total), Some(700));
    /// # Ok(()) }
    /// ```
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }
}

/// Awaiting a query runs [`all`](Query::all).
impl<'a, T: Table, D: Decode, On: 'a> IntoFuture for Query<'a, T, D, On> {
    type Output = Result<Vec<D::Output>, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.all())
    }
}

struct Prepared {
    /// The attributes of an `ExclusiveStartKey`: the table's keys and the index's.
    key_attrs: Vec<&'static str>,
    key_expr: String,
    filter_expr: Option<String>,
    projection: Option<String>,
    names: Option<crate::expr::Names>,
    values: Option<crate::expr::Values>,
    index: Option<&'static str>,
    pk_attr: &'static str,
    sk_attr: Option<&'static str>,
    range: Option<ComponentRange>,
    binding: u64,
    empty: bool,
}

impl Prepared {
    /// The start key of a request that continues after `item`.
    fn key_of(&self, item: &Item) -> Item {
        self.key_attrs
            .iter()
            .filter_map(|a| item.get(*a).map(|v| ((*a).to_owned(), v.clone())))
            .collect()
    }
}

struct Output {
    items: Vec<Item>,
    count: usize,
    next: Option<Item>,
    /// The service evaluated items that it (or the component check) did not return.
    dropped: bool,
}

/// Adds a canonical encoding of `v` to the fingerprint.
fn canonical(fp: Fnv, v: &AttributeValue) -> Fnv {
    match v {
        AttributeValue::S(s) => fp.field(b"S").field(s.as_bytes()),
        AttributeValue::N(n) => fp.field(b"N").field(n.as_bytes()),
        AttributeValue::B(b) => fp.field(b"B").field(b.as_ref()),
        AttributeValue::Bool(b) => fp.field(b"BOOL").field(&[u8::from(*b)]),
        AttributeValue::Null(_) => fp.field(b"NULL"),
        AttributeValue::Ss(v) | AttributeValue::Ns(v) => {
            v.iter().fold(fp.field(b"SET"), |fp, s| fp.field(s.as_bytes()))
        }
        AttributeValue::Bs(v) => v.iter().fold(fp.field(b"BS"), |fp, b| fp.field(b.as_ref())),
        AttributeValue::L(v) => v.iter().fold(fp.field(b"L"), canonical),
        AttributeValue::M(m) => {
            let mut entries: Vec<_> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            entries
                .into_iter()
                .fold(fp.field(b"M"), |fp, (k, v)| canonical(fp.field(k.as_bytes()), v))
        }
        _ => fp.field(b"?"),
    }
}
