//! The one paging loop. Every way of running a query ([`pages`](Query::pages) and the
//! streams built on it, [`page`](Query::page), [`count`](Query::count), and the exact pages
//! of the graph layer) sends its requests through a [`Pager`], which carries the state from
//! one request to the next: where the next request starts, how many items are still
//! wanted, whether the service has more, and whether to widen requests.

use std::sync::Arc;

use super::prepare::Prepared;
use super::request::{Output, Read};
use super::{Decode, Query};
use crate::error::Error;
use crate::item::Item;
use crate::model::Table;

/// Called before every request of [`Query::exact_pages`]; an error stops the stream before
/// the request is sent (a request budget).
pub(crate) type Gate = Arc<dyn Fn() -> Result<(), Error> + Send + Sync>;

/// How a pager sizes its requests.
pub(super) enum Cut {
    /// As the query says: [`page_size`](Query::page_size) items evaluated per request (or the
    /// 1 MB a request reads), up to the [`limit`](Query::limit).
    Query,
    /// Pages of `page` items (at least 1), one request per page and none after the last:
    /// each request asks for one item more than it keeps, and the extra one starts the next
    /// request. `gate` runs before every request.
    Exact { page: usize, gate: Option<Gate> },
}

/// A query being run request by request.
pub(super) struct Pager<'a, T: Table, D: Decode, On> {
    query: Query<'a, T, D, On>,
    cut: Cut,
    /// Count the items (`Select = COUNT` where the service can) instead of reading them.
    count: bool,
    /// Read only the items' keys (and type attribute), never `Select = COUNT`.
    keys: bool,
    /// The query rendered for the wire, once the first request is sent.
    prepared: Option<Prepared>,
    /// Where the next request starts (`ExclusiveStartKey`).
    pub(super) start: Option<Item>,
    /// The items still wanted, with a limit.
    pub(super) remaining: Option<usize>,
    /// The service has no more items.
    pub(super) done: bool,
    /// A request has dropped items (filtered out, or outside a component range): the
    /// following ones ask for full pages.
    widen: bool,
}

impl<'a, T: Table, D: Decode, On: 'a> Pager<'a, T, D, On> {
    /// A pager at the start of `query`.
    pub(super) fn new(query: Query<'a, T, D, On>, cut: Cut, count: bool) -> Self {
        let remaining = query.limit;
        let cut = match cut {
            Cut::Exact { page, gate } => Cut::Exact { page: page.max(1), gate },
            cut @ Cut::Query => cut,
        };
        Pager {
            query,
            cut,
            count,
            keys: false,
            prepared: None,
            start: None,
            remaining,
            done: false,
            widen: false,
        }
    }

    /// The same pager, reading the items' keys only (and their type attribute, to tell
    /// entity types apart): each request returns the keys of the items it kept.
    pub(super) fn keys_only(mut self) -> Self {
        self.keys = true;
        self
    }

    /// The same pager with the query prepared already, its first request starting at `start`
    /// (a page behind a cursor).
    pub(super) fn at(mut self, prepared: Prepared, start: Option<Item>) -> Self {
        self.prepared = Some(prepared);
        self.start = start;
        self
    }

    /// True while a request may find more wanted items.
    pub(super) fn more(&self) -> bool {
        !self.done && self.remaining != Some(0)
    }

    /// Sends the next request (preparing the query on the first) and moves the state past
    /// it; `None` without a request when the query can hold no item. Its items may be none
    /// (all dropped by a filter or a component check).
    pub(super) async fn request(&mut self) -> Result<Option<Output>, Error> {
        let prepared = match self.prepared.take() {
            Some(p) => p,
            None => self.query.prepare()?,
        };
        if prepared.empty {
            return Ok(None);
        }
        let (remaining, keep) = match &self.cut {
            Cut::Query => (self.remaining, None),
            Cut::Exact { page, gate } => {
                let want = self.remaining.map_or(*page, |r| r.min(*page));
                // When the items still wanted fit in this page, there is no next page to
                // look ahead to: ask for exactly those.
                let look_ahead = self.remaining.is_none_or(|r| r > *page);
                let asked = if look_ahead { want.saturating_add(1) } else { want };
                self.query.page_size = Some(u32::try_from(asked).unwrap_or(u32::MAX));
                if let Some(gate) = gate {
                    gate()?;
                }
                (if look_ahead { None } else { Some(want) }, Some(want))
            }
        };
        let mut out = self
            .query
            .request(&prepared, self.start.take(), remaining, self.read(), self.widen)
            .await?;
        self.widen |= out.dropped;
        if let Some(keep) = keep
            && out.items.len() > keep
        {
            out.items.truncate(keep);
            out.next = out.items.last().map(|item| prepared.key_of(item));
            out.count = out.items.len();
        }
        self.prepared = Some(prepared);
        self.start = out.next.take();
        self.done = self.start.is_none();
        if let Some(r) = self.remaining.as_mut() {
            *r = r.saturating_sub(out.count);
        }
        Ok(Some(out))
    }

    fn read(&self) -> Read {
        match (self.keys, self.count) {
            (true, _) => Read::Keys,
            (false, true) => Read::Count,
            (false, false) => Read::Items,
        }
    }

    /// The next page that holds items, decoded; `None` at the end. Requests that return no
    /// item are followed by the next one.
    pub(super) async fn next_page(&mut self) -> Result<Option<Vec<D::Output>>, Error> {
        loop {
            if !self.more() {
                return Ok(None);
            }
            let Some(out) = self.request().await? else {
                return Ok(None);
            };
            let db = &self.query.db;
            let items = out
                .items
                .into_iter()
                .map(|i| D::decode_in(db, i))
                .collect::<Result<Vec<_>, _>>()?;
            if !items.is_empty() {
                return Ok(Some(items));
            }
        }
    }
}
