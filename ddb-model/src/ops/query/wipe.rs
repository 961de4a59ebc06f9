//! [`Query::delete_all`]: deleting every item a query reads, page by page, in batches.

use super::paging::{Cut, Pager};
use super::{Decode, Query};
use crate::error::Error;
use crate::item::Item;
use crate::model::Table;
use crate::ops::{Running, Startable, builder_future};

/// Deletes every item a query reads: made by [`Query::delete_all`]; `.await` it. Resolves to
/// the number of items deleted.
#[must_use = "a delete does nothing until it is awaited"]
pub struct DeleteAll<'a, T: Table, D: Decode, On> {
    query: Query<'a, T, D, On>,
    progress: Option<Box<dyn FnMut(u64) + Send + 'a>>,
    running: Running<'a, Result<u64, Error>>,
}

impl<'a, T: Table, D: Decode, On: Send + 'a> Query<'a, T, D, On> {
    /// Deletes every item the query reads: the items of its entity type (or of its
    /// collection's types) in its key range and filter, or, from
    /// [`items`](Query::items) on a whole partition (the generated `partition` constructor),
    /// every item of the partition whatever its type (tree and edge bookkeeping included):
    /// `Order::partition(&db, tenant).items().delete_all()`.
    ///
    /// Reads keys only (with the type attribute, to tell entity types apart), one page at a
    /// time, and deletes each page's items with `BatchWriteItem`, 25 per request, retrying
    /// unprocessed items with backoff ([`BatchWrite`](crate::ops::BatchWrite)'s rules): a
    /// partition of N items costs about N / 25 writes and a few reads. A query's
    /// [`limit`](Query::limit) bounds how many are deleted.
    ///
    /// **Resumable:** deletes are unconditional and idempotent, and a deleted item is not
    /// read again, so an interrupted delete (a crash, an error) is finished by running the
    /// same delete again; the items it had deleted are gone and the rest are found. An item
    /// written into the range while the delete runs may survive it. Deleting part of a tree
    /// or of an edge pair this way leaves the rest inconsistent: delete whole partitions, or
    /// use the tree's and edge's own operations. The query of an entity with unique
    /// constraints (`#[unique]`) is refused before sending
    /// ([`RequestProblem::UniqueUnenforced`](crate::error::RequestProblem::UniqueUnenforced)): batch
    /// deletes cannot free the values' sentinel items; delete such entities one by one.
    /// Items past their expiry time (`#[entity(ttl = ..)]`), which reads hide, are deleted too.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "TENANT#<tenant>", sk = "ORDER#<id>")]
    /// struct Order { tenant: String, id: u32 }
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "TENANT#<tenant>", sk = "PROFILE")]
    /// struct Tenant { tenant: String }
    ///
    /// let db = local::isolated_db().await?;
    /// Tenant { tenant: "acme".into() }.put(&db).await?;
    /// for id in 0..60 {
    ///     Order { tenant: "acme".into(), id }.put(&db).await?;
    /// }
    /// // The orders only: the tenant's profile stays.
    /// assert_eq!(Order::query(&db, "acme").delete_all().await?, 60);
    /// assert!(Tenant::get(&db, "acme").await?.is_some());
    /// // The whole partition, whatever the types.
    /// assert_eq!(Order::partition(&db, "acme").items().delete_all().await?, 1);
    /// # Ok(()) }
    /// ```
    pub fn delete_all(mut self) -> DeleteAll<'a, T, D, On> {
        // Deletes expired items too: hidden from reads, they are still stored.
        self.include_expired = true;
        DeleteAll { query: self, progress: None, running: Running::default() }
    }
}

impl<'a, T: Table, D: Decode, On: Send + 'a> DeleteAll<'a, T, D, On> {
    /// Calls `f` with the number of items deleted so far, after each page.
    pub fn on_progress(mut self, f: impl FnMut(u64) + Send + 'a) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// Sends the reads and deletes; the number of items deleted.
    pub async fn send(self) -> Result<u64, Error> {
        let DeleteAll { query, mut progress, .. } = self;
        let db = query.db;
        let entity = query.entity;
        if D::UNIQUE {
            // Batch deletes cannot free the values' sentinel items.
            return Err(Error::InvalidRequest {
                path: String::new(),
                problem: crate::error::RequestProblem::UniqueUnenforced {
                    entity,
                    operation: "a query's `delete_all`",
                },
            });
        }
        let span = crate::telemetry::OperationSpan::new("delete_all", db.table_name());
        span.run(async move {
            let mut pager = Pager::new(query, Cut::Query, true).keys_only();
            let mut deleted = 0u64;
            while pager.more() {
                let Some(out) = pager.request().await? else {
                    break;
                };
                if out.items.is_empty() {
                    continue;
                }
                let mut batch = db.batch_write();
                for item in &out.items {
                    let key: Item = [T::PK]
                        .into_iter()
                        .chain(T::SK)
                        .filter_map(|a| item.get(a).map(|v| (a.to_owned(), v.clone())))
                        .collect();
                    batch = batch.delete_raw(entity, key);
                }
                batch.send().await?;
                deleted =
                    deleted.saturating_add(u64::try_from(out.items.len()).unwrap_or(u64::MAX));
                if let Some(f) = progress.as_mut() {
                    f(deleted);
                }
            }
            crate::telemetry::operation_items(usize::try_from(deleted).unwrap_or(usize::MAX));
            Ok(deleted)
        })
        .await
    }
}

impl<'a, T: Table, D: Decode, On: Send + 'a> Startable<'a> for DeleteAll<'a, T, D, On> {
    type Raw = Result<u64, Error>;
    const DRY_SENDS_READS: bool = true;
    fn running(&mut self) -> &mut Running<'a, Self::Raw> {
        &mut self.running
    }
    fn take_settings(&mut self) -> Self {
        let (query, progress) = (self.query.take_settings(), self.progress.take());
        DeleteAll { query, progress, running: Running::default() }
    }
    fn start(self) -> crate::ops::BoxFuture<'a, Self::Raw> {
        crate::ops::boxed(|| self.send())
    }
}

builder_future!(['a, T: Table, D: Decode, On: Send + 'a] DeleteAll<'a, T, D, On> => Result<u64, Error>, |r| r);
