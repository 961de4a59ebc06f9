//! How a query runs: every item, the first, a stream of items or pages, one page behind a
//! cursor, or a count.

use super::paging::{Cut, Pager};
use super::*;
use crate::error::KeyProblem;
use crate::ops::startable::startable;

impl<'a, T: Table, D: Decode, On: 'a> Query<'a, T, D, On> {
    /// Reads every item of the query (following pages up to [`limit`](Query::limit)).
    /// Awaiting the query itself does the same. Example: [`Query`].
    pub async fn all(self) -> Result<Vec<D::Output>, Error> {
        let span = crate::telemetry::OperationSpan::new("query", self.db.table_name());
        span.run(async move {
            // The pages' loop itself, rather than collecting `stream()`: a boxed stream holds a
            // request's future (the SDK's is several kilobytes), copied whole when it is made.
            let mut pager = Pager::new(self, Cut::Query, false);
            let mut all = Vec::new();
            while let Some(items) = pager.next_page().await? {
                if all.is_empty() {
                    all = items;
                } else {
                    all.extend(items);
                }
            }
            crate::telemetry::operation_items(all.len());
            Ok(all)
        })
        .await
    }

    /// The first item in query order, if any (one item is asked for). Example: [`Query`].
    pub async fn first(self) -> Result<Option<D::Output>, Error> {
        let mut items = self.limit(1).all().await?;
        Ok(items.pop())
    }

    /// The items as a stream, one request per page as the stream is polled (up to
    /// [`limit`](Query::limit) items). Example: [`Query`].
    pub fn stream(self) -> BoxStream<'a, Result<D::Output, Error>> {
        self.pages().map_ok(|items| stream::iter(items.into_iter().map(Ok))).try_flatten().boxed()
    }

    /// The items page by page, as a stream of vectors: one vector per request (its size is
    /// set by [`page_size`](Query::page_size), or the 1 MB a request reads), up to
    /// [`limit`](Query::limit) items in all. Requests that return no item (all filtered out,
    /// or the empty last request after a page that ended exactly at the end) yield nothing,
    /// so every vector holds at least one item. Example: [`Query`].
    pub fn pages(self) -> BoxStream<'a, Result<Vec<D::Output>, Error>> {
        self.pages_cut(Cut::Query)
    }

    /// The pages of the query, its requests sized by `cut`.
    pub(super) fn pages_cut(self, cut: Cut) -> BoxStream<'a, Result<Vec<D::Output>, Error>> {
        let pager = Pager::new(self, cut, false);
        stream::try_unfold(pager, |mut pager| async move {
            Ok(pager.next_page().await?.map(|items| (items, pager)))
        })
        .boxed()
    }

    /// One page: up to [`limit`](Query::limit) items starting at `cursor` (the first page
    /// with `None`), following as many requests as a filter needs to fill it. Without a
    /// limit, the items of one request (up to 1 MB).
    ///
    /// The cursor must come from the same query (same index, partition, sort-key condition,
    /// filter, output type and order): anything else is [`Error::InvalidCursor`], checked
    /// before a request is sent. Example: [`Query`].
    pub async fn page(self, cursor: Option<&Cursor>) -> Result<Page<D::Output>, Error> {
        let prepared = self.prepare()?;
        let start = match cursor {
            Some(c) => Some(self.check_cursor(&prepared, c)?),
            None => None,
        };
        if prepared.empty {
            return Ok(Page { items: Vec::new(), next: None });
        }
        let binding = self.binding(&prepared);
        let db = self.db;
        let mut pager = Pager::new(self, Cut::Query, false).at(prepared, start);
        let mut items = Vec::new();
        // At least one request; then more while a filter left the page short of the limit
        // (without a limit, the page is the first request's items).
        while let Some(out) = pager.request().await? {
            for item in out.items {
                items.push(D::decode_in(db, item)?);
            }
            if pager.done || pager.remaining.is_none_or(|r| r == 0) {
                break;
            }
        }
        let next = pager.start.map(|key| Cursor::encode(binding, &key)).transpose()?;
        Ok(Page { items, next })
    }

    /// The number of items of the query (up to [`limit`](Query::limit)), counted by the
    /// service without transferring them (`Select = COUNT`). Filtered-out items are not
    /// counted (but are read and paid for). Example: [`Query`].
    pub async fn count(self) -> Result<usize, Error> {
        let span = crate::telemetry::OperationSpan::new("query.count", self.db.table_name());
        span.run(async move {
            let prepared = self.prepare()?;
            let limit = self.limit;
            let mut pager = Pager::new(self, Cut::Query, true).at(prepared, None);
            let mut total = 0usize;
            while pager.more() {
                let Some(out) = pager.request().await? else {
                    break;
                };
                total = total.saturating_add(out.count);
            }
            Ok(limit.map_or(total, |limit| total.min(limit)))
        })
        .await
    }

    /// The keys (table's and index's) and entity-type attribute of the items, following
    /// pages up to [`limit`](Query::limit): what a tree counts nodes by.
    pub(crate) async fn keys(self) -> Result<Vec<Item>, Error> {
        let mut pager = Pager::new(self, Cut::Query, true).keys_only();
        let mut out = Vec::new();
        while pager.more() {
            let Some(page) = pager.request().await? else {
                break;
            };
            out.extend(page.items);
        }
        Ok(out)
    }
}

// Awaiting a query (or polling it as a future) runs `all`. The query left behind is never
// sent: its key is a placeholder.
startable!(
    ['a, T: Table, D: Decode, On: 'a] Query<'a, T, D, On> => Result<Vec<D::Output>, Error>,
    |q| {
        let placeholder = KeyError::Refused { attribute: "", problem: KeyProblem::Empty };
        Query::new(q.db, Err(placeholder), q.entity)
    },
    all
);
