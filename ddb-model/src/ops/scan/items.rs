//! [`ScanItems`]: every raw item of the table, of every entity type, without a filter.

use crate::ops::startable::startable;
use futures_util::stream::TryStreamExt;

use super::pages::{Options, Request, count_pages, pages};
use super::stream::ScanStream;
use crate::db::Db;
use crate::error::Error;
use crate::item::Item;
use crate::model::Table;
use crate::ops::Running;

impl<T: Table> Db<T> {
    /// Scans the table for every raw item, of every entity type (exports, migrations,
    /// repairs); see [`ScanItems`].
    pub fn scan_items(&self) -> ScanItems<'_, T> {
        ScanItems { db: self, options: Options::default(), running: Running::default() }
    }
}

/// Reads every raw item of the table, of every entity type, with `Scan`. Made by
/// [`Db::scan_items`]; for exports, migrations and repairs. Runs like [`Scan`](super::Scan) (segments,
/// pages, concurrency) without any filter.
///
/// ```
/// use ddb_model::prelude::*;
/// use futures_util::TryStreamExt;
/// # use serde::{Deserialize, Serialize};
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "USER#<id>", sk = "PROFILE")]
/// # struct User { id: String }
/// # #[derive(Entity, Serialize, Deserialize)]
/// # #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
/// # struct Order { user: String, seq: u32 }
///
/// async fn demo(db: &Db) -> Result<(), Error> {
///     db.batch_write().put(&User { id: "ann".into() }).put(&Order { user: "ann".into(), seq: 1 }).await?;
///     let items = db.scan_items().segments(2).concurrency(2).all().await?;
///     assert_eq!(items.len(), 2);
///     assert_eq!(db.scan_items().consistent().count().await?, 2);
///     // As pages arrive; awaiting the scan itself collects them.
///     let mut stream = db.scan_items().page_size(1).stream();
///     while let Some(item) = stream.try_next().await? {
///         assert!(item.contains_key("pk"));
///     }
///     assert_eq!(db.scan_items().await?.len(), 2);
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
#[must_use = "an operation does nothing until it is awaited or streamed"]
pub struct ScanItems<'a, T: Table> {
    pub(super) db: &'a Db<T>,
    pub(super) options: Options,
    running: Running<'a, Result<Vec<Item>, Error>>,
}

impl<'a, T: Table> ScanItems<'a, T> {
    /// Splits the scan into `n` segments read in parallel (default 1; clamped to 1 to
    /// 1,000,000).
    pub fn segments(mut self, n: u32) -> Self {
        self.options.segments(n);
        self
    }

    /// How many segments are read at once (default 4; 0 counts as 1).
    pub fn concurrency(mut self, segments: usize) -> Self {
        self.options.concurrency = segments.max(1);
        self
    }

    /// Items per request (DynamoDB's `Limit`; clamped to at least 1). Without it a page is
    /// up to 1 MB.
    pub fn page_size(mut self, n: u32) -> Self {
        self.options.page_size(n);
        self
    }

    /// Strongly consistent reads (twice the read capacity).
    pub fn consistent(mut self) -> Self {
        self.options.consistent = true;
        self
    }

    pub(super) fn request(&self, count_only: bool) -> Request {
        Request {
            options: self.options,
            filter: None,
            names: None,
            values: None,
            count_only,
            entity: None,
        }
    }

    /// The raw items, as pages arrive.
    pub fn stream(self) -> ScanStream<Item> {
        ScanStream::decoded(pages(self.db.clone(), self.request(false)), |item| Some(Ok(item)))
    }

    /// Every raw item, collected (the same as `.await`). Stops at the first error.
    pub async fn all(self) -> Result<Vec<Item>, Error> {
        let span = crate::telemetry::OperationSpan::new("scan", self.db.table_name());
        span.run(async move { self.stream().try_collect().await }).await
    }

    /// The number of items in the table (`Select=COUNT`).
    pub async fn count(self) -> Result<usize, Error> {
        let span = crate::telemetry::OperationSpan::new("scan.count", self.db.table_name());
        span.run(async move { count_pages(pages(self.db.clone(), self.request(true))).await }).await
    }
}

startable!(
    ['a, T: Table] ScanItems<'a, T> => Result<Vec<Item>, Error>,
    |scan| scan.db.scan_items(),
    all
);
