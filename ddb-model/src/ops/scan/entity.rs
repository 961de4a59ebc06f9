//! [`Scan`]: every item of one entity type, filtered by the service on the entity type,
//! the caller's filter and expiry, decoded as entities.

use crate::ops::startable::startable;
use std::future::ready;
use std::marker::PhantomData;

use futures_util::stream::TryStreamExt;

use super::items::ScanItems;
use super::pages::{Request, count_pages, pages};
use super::stream::ScanStream;
use crate::db::Db;
use crate::error::Error;
use crate::expr::{Condition, ExprBuilder, Node};
use crate::item::Item;
use crate::model::{Entity, Table, find_index, from_item, is_entity_item, is_sealed};
use crate::ops::query::identity_filter;
use crate::ops::rekey::read_copy_of;
use crate::ops::{OnIndex, OnTable, Running, and_condition, and_expiry_filter};

/// Reads every item of entity `E` in the table with `Scan`. Made by [`Db::scan`];
/// [`stream`](Scan::stream) yields entities as pages arrive, `.await` (or
/// [`all`](Scan::all)) collects them, [`count`](Scan::count) counts them.
///
/// The scan reads the whole table: every item is read (and paid for), and a filter on the
/// entity type (the table's `type_attr` equal to `E`'s name) keeps only `E`'s items, combined
/// with [`filter`](Scan::filter) if given. [`segments`](Scan::segments) splits the table for
/// a parallel scan (`Segment` / `TotalSegments`), [`concurrency`](Scan::concurrency) segments
/// at a time; each segment is read page by page ([`page_size`](Scan::page_size) items
/// evaluated per request, before filtering). Every item comes back exactly once.
///
/// ```
/// use futures_util::TryStreamExt;
/// use ddb_model::prelude::*;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// # struct User { id: String, logins: u32 }
/// # #[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
/// # #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
/// # struct Order { user: String, seq: u32 }
///
/// async fn demo(db: &Db) -> Result<(), Error> {
///     let users: Vec<User> = (0..30).map(|i| User { id: format!("u{i}"), logins: i }).collect();
///     db.batch_put(&users).put(&Order { user: "u1".into(), seq: 1 }).await?;
///
///     // Only users come back, each once, whatever the number of segments.
///     let mut all = db.scan::<User>().segments(3).concurrency(2).all().await?;
///     all.sort_by_key(|u| u.logins);
///     assert_eq!(all, users);
///
///     let active = db.scan::<User>().consistent().filter(User::LOGINS.ge(10)).count().await?;
///     assert_eq!(active, 20);
///
///     let mut stream = db.scan::<User>().segments(2).page_size(10).stream();
///     let mut seen = 0;
///     while let Some(_user) = stream.try_next().await? {
///         seen += 1;
///     }
///     assert_eq!(seen, 30);
///     Ok(())
/// }
/// # #[cfg(feature = "local")]
/// # #[tokio::main]
/// # async fn main() -> Result<(), Error> {
/// #     demo(&ddb_model::local::isolated_db().await?).await
/// # }
/// # #[cfg(not(feature = "local"))]
/// # fn main() {}
/// ```
///
/// # Scanning an index
///
/// [`index`](Scan::index) scans a global secondary index instead of the table: only the
/// items that have the index's key attributes are read, so a sparse index (one whose key
/// fields are `Option`s, set on few items) is read without reading the table. Segments,
/// filters and counts work the same; reads are eventually consistent (`consistent()` does
/// not compile after `index`). The index must project the attributes the entity needs
/// (the tables `create_table` makes project all of them); an item that lacks one is an
/// [`Error::Deserialize`].
///
/// ```
/// # use ddb_model::prelude::*;
/// # use serde::{Deserialize, Serialize};
/// #[derive(Table)]
/// #[table(name = "app", gsi(name = "by_ticket", pk = "ticket"))]
/// struct App;
///
/// #[derive(Entity, Serialize, Deserialize, Debug)]
/// #[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
/// #[index(by_ticket, pk = "TICKET#<open_ticket>")]
/// struct User { id: String, open_ticket: Option<String> }
///
/// # async fn demo(db: &Db<App>) -> Result<(), Error> {
/// // Only the users with an open ticket are in the index; only they are read.
/// let waiting: Vec<User> = db.scan::<User>().index("by_ticket").segments(2).await?;
/// # Ok(()) }
/// # #[cfg(feature = "local")]
/// # #[tokio::main]
/// # async fn main() -> Result<(), Error> {
/// #     demo(&ddb_model::local::isolated_db::<App>().await?).await
/// # }
/// # #[cfg(not(feature = "local"))]
/// # fn main() {}
/// ```
///
/// Asking an index scan for a strongly consistent read does not compile:
///
/// ```compile_fail
/// # use ddb_model::prelude::*;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Table)]
/// # #[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk"))]
/// # struct App;
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
/// # struct User { id: String }
/// # fn demo(db: &Db<App>) {
/// let scan = db.scan::<User>().index("gsi1").consistent();
/// # }
/// ```
#[must_use = "an operation does nothing until it is awaited or streamed"]
pub struct Scan<'a, E: Entity, On = OnTable> {
    /// The scan of every item, which the filter narrows to `E`'s.
    items: ScanItems<'a, E::Table>,
    filter: Option<Node>,
    /// Items past their expiry time are returned (`include_expired`).
    include_expired: bool,
    /// An index name the table does not declare, reported when the scan is sent.
    unknown_index: Option<String>,
    running: Running<'a, Result<Vec<E>, Error>>,
    _on: PhantomData<fn() -> On>,
}

impl<T: Table> Db<T> {
    /// Scans the table for every item of entity `E`; see [`Scan`].
    pub fn scan<E: Entity<Table = T>>(&self) -> Scan<'_, E> {
        Scan::new(self.scan_items())
    }
}

impl<'a, E: Entity, On> Scan<'a, E, On> {
    fn new(items: ScanItems<'a, E::Table>) -> Self {
        Scan {
            items,
            filter: None,
            include_expired: false,
            unknown_index: None,
            running: Running::default(),
            _on: PhantomData,
        }
    }
}

impl<'a, E: Entity> Scan<'a, E, OnTable> {
    /// Scans the table's global secondary index `name` instead of the table (see [Scanning
    /// an index](Scan#scanning-an-index)). A name the table does not declare is
    /// [`Error::InvalidRequest`] when the scan is sent, and nothing is sent.
    pub fn index(self, name: &str) -> Scan<'a, E, OnIndex> {
        let mut items = self.items;
        let unknown_index = match find_index::<E::Table>(name) {
            Some(def) => {
                items.options.index = Some(def.name);
                self.unknown_index
            }
            None => Some(name.to_owned()),
        };
        Scan {
            filter: self.filter,
            include_expired: self.include_expired,
            unknown_index,
            ..Scan::new(items)
        }
    }

    /// Strongly consistent reads (twice the read capacity). Tables only: indexes are
    /// eventually consistent.
    pub fn consistent(self) -> Self {
        Scan { items: self.items.consistent(), ..self }
    }
}

impl<'a, E: Entity, On> Scan<'a, E, On> {
    /// Splits the scan into `n` segments read in parallel (default 1; clamped to 1 to
    /// 1,000,000).
    pub fn segments(self, n: u32) -> Self {
        Scan { items: self.items.segments(n), ..self }
    }

    /// How many segments are read at once (default 4; 0 counts as 1).
    pub fn concurrency(self, segments: usize) -> Self {
        Scan { items: self.items.concurrency(segments), ..self }
    }

    /// Keeps only the items that satisfy `condition` (combined with AND with earlier
    /// filters). Filters are applied after reading: filtered-out items are still read.
    pub fn filter(mut self, condition: Condition<E>) -> Self {
        self.filter = and_condition(self.filter.take(), condition);
        self
    }

    /// Returns the items whose expiry time (`#[entity(ttl = ..)]`) has passed but which the
    /// service has not deleted yet. By default the scan filters them out at the handle's
    /// clock when it starts (they are still read and paid for, and not counted), as a query
    /// does ([`Query::include_expired`](crate::ops::Query::include_expired)).
    pub fn include_expired(mut self) -> Self {
        self.include_expired = true;
        self
    }

    /// Items evaluated per request (DynamoDB's `Limit`, counted before filtering; clamped to
    /// at least 1). Without it a page is up to 1 MB.
    pub fn page_size(self, n: u32) -> Self {
        Scan { items: self.items.page_size(n), ..self }
    }

    /// The request of [`ScanItems`], with the filter on the entity type and the caller's.
    fn request(&self, count_only: bool) -> Result<Request, Error> {
        self.items.db.can_seal::<E>()?;
        if let Some(name) = &self.unknown_index {
            return Err(Error::InvalidRequest {
                path: String::new(),
                problem: crate::error::RequestProblem::UnknownIndex { index: name.clone() },
            });
        }
        let mut b = ExprBuilder::default();
        let is_type = identity_filter::<E>(&mut b);
        let mut filter =
            match (is_type, self.filter.as_ref().map(|f| f.render(&mut b)).transpose()?) {
                (Some(is_type), Some(user)) => Some(format!("{is_type} AND ({user})")),
                (Some(is_type), None) => Some(is_type),
                (None, user) => user,
            };
        let (mut names, mut values) = b.finish();
        // Expired items are filtered at the clock's time when the scan starts.
        let cutoff = self.items.db.expiry_cutoff::<E>();
        if let (false, Some((attr, now))) = (self.include_expired, cutoff) {
            filter = Some(and_expiry_filter(filter, &mut names, &mut values, attr, now));
        }
        if let Some(filter) = &filter {
            crate::expr::check_expression("FilterExpression", filter)?;
        }
        Ok(Request {
            filter,
            names,
            values,
            entity: Some(E::NAME),
            ..self.items.request(count_only)
        })
    }

    /// The entities, as pages arrive. A filter that cannot be rendered is the stream's only
    /// item, and nothing is sent.
    pub fn stream(self) -> ScanStream<E> {
        match self.request(false) {
            Ok(request) => {
                // The handle that opens sealed items (cloned only for those).
                let sealed = is_sealed::<E>().then(|| self.items.db.clone());
                let copy = read_copy_of::<E, E::Table>(self.items.db);
                let decode = move |item| decode::<E, E::Table>(sealed.as_ref(), copy, item);
                ScanStream::decoded(pages(self.items.db.clone(), request), decode)
            }
            Err(e) => ScanStream::failed(e),
        }
    }

    /// Every entity, collected (the same as `.await`). Stops at the first error.
    pub async fn all(self) -> Result<Vec<E>, Error> {
        let span = crate::telemetry::OperationSpan::new("scan", self.items.db.table_name());
        span.run(async move {
            let all: Vec<E> = self.stream().try_collect().await?;
            crate::telemetry::operation_items(all.len());
            Ok(all)
        })
        .await
    }

    /// The number of entities (that satisfy the filter), without transferring them
    /// (`Select=COUNT`). Every item is still read.
    pub async fn count(self) -> Result<usize, Error> {
        let span = crate::telemetry::OperationSpan::new("scan.count", self.items.db.table_name());
        span.run(async move {
            let copy = read_copy_of::<E, E::Table>(self.items.db);
            if E::IDENTITY.tag().is_none() || copy.is_some() {
                // No filter selects the items of an entity told apart by its keys, nor one
                // copy of a re-keyed entity's item: read them and count those whose keys are
                // its, of the layout the phase reads (without deserializing them).
                let request = self.request(false)?;
                let mine = move |i: &Item| is_entity_item::<E>(i) && copy.is_none_or(|c| c(i));
                return pages(self.items.db.clone(), request)
                    .try_fold(0usize, |n, page| {
                        let mine = page.items.iter().filter(|i| mine(i)).count();
                        ready(Ok(n.saturating_add(mine)))
                    })
                    .await;
            }
            let request = self.request(true)?;
            count_pages(pages(self.items.db.clone(), request)).await
        })
        .await
    }
}

/// A scanned item as entity `E`; `None` for an item of another entity, when `E` is told
/// apart by its keys (a tagged entity's scan filters the others out), and for the copy of a
/// re-keyed entity's item that the phase does not read (`copy`, the test of the one it does).
/// A sealed entity's item is opened with the keyring of `sealed`, the handle it was read
/// through.
fn decode<E: Entity, T: Table>(
    sealed: Option<&Db<T>>,
    copy: Option<fn(&Item) -> bool>,
    item: Item,
) -> Option<Result<E, Error>> {
    if E::IDENTITY.tag().is_none() && !is_entity_item::<E>(&item) {
        return None;
    }
    if copy.is_some_and(|read| !read(&item)) {
        return None;
    }
    Some(match sealed {
        Some(db) => db.open::<E>(item),
        None => from_item::<E>(item),
    })
}

startable!(
    ['a, E: Entity, On: 'a] Scan<'a, E, On> => Result<Vec<E>, Error>,
    |scan| Scan::new(scan.items.db.scan_items()),
    all
);
