//! Crate-internal query entry points for the graph layer (`crate::edge`): a query from a
//! [`KeyStart`] with any output type, and pages that never end with an empty request.
//!
//! DynamoDB says a page is the last one only when it returned fewer items than its `Limit`:
//! a query of `n` items in pages of `p` costs `n / p + 1` requests when `p` divides `n`.
//! [`Query::exact_pages`] asks for one item more than the page holds and keeps it for the
//! next request, so a query of `n` items costs `ceil(n / p)` requests (one when `n` is 0).
//! The extra item is read twice, one item per request: a small price for merges and
//! traversals whose request count is part of their contract.

use std::sync::Arc;

use futures_util::stream::{self, BoxStream, StreamExt};

use super::{Decode, KeyStart, OnTable, Query, QueryFrom};
use crate::db::Db;
use crate::error::Error;
use crate::item::Item;
use crate::model::{Entity, Table};

/// Called before every request of [`Query::exact_pages`]; an error stops the stream before
/// the request is sent (a request budget).
pub(crate) type Gate = Arc<dyn Fn() -> Result<(), Error> + Send + Sync>;

/// A query of entity `E`'s partition `start` (every sort key with its prefix), read as `D`.
pub(crate) fn query_from<'a, E: Entity, D: Decode, On: 'a>(
    db: &'a Db<E::Table>,
    start: KeyStart,
) -> Query<'a, E::Table, D, On> {
    QueryFrom::<E, On>::new(db, start).prefix().with_decode()
}

/// The same, on the table (strongly consistent reads allowed).
pub(crate) fn table_query<'a, E: Entity, D: Decode>(
    db: &'a Db<E::Table>,
    start: KeyStart,
) -> Query<'a, E::Table, D, OnTable> {
    query_from::<E, D, OnTable>(db, start)
}

impl<'a, T: Table, D: Decode, On: 'a> Query<'a, T, D, On> {
    /// A strongly consistent read when `yes` (for queries whose type does not say whether
    /// they run on the table; never on an index).
    pub(crate) fn consistent_if(mut self, yes: bool) -> Self {
        self.consistent = yes;
        self
    }

    /// The items in pages of `page` (at least 1), one request per page and none after the
    /// last: each request asks for `page + 1` items, and the extra one starts the next page.
    /// Up to [`limit`](Query::limit) items in all. `gate` runs before every request.
    pub(crate) fn exact_pages(
        mut self,
        page: u32,
        gate: Option<Gate>,
    ) -> BoxStream<'a, Result<Vec<D::Output>, Error>> {
        let page = page.max(1);
        self.page_size = None;
        struct State<'a, T: Table, D: Decode, On> {
            query: Query<'a, T, D, On>,
            prepared: Option<super::Prepared>,
            start: Option<Item>,
            remaining: Option<usize>,
            done: bool,
            widen: bool,
            gate: Option<Gate>,
        }
        let remaining = self.limit;
        let state = State {
            query: self,
            prepared: None,
            start: None,
            remaining,
            done: false,
            widen: false,
            gate,
        };
        stream::try_unfold(state, move |mut st| async move {
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
                let page_len = usize::try_from(page).unwrap_or(usize::MAX);
                let want = st.remaining.map_or(page_len, |r| r.min(page_len));
                // When the items still wanted fit in this page, there is no next page to
                // look ahead to: ask for exactly those.
                let look_ahead = st.remaining.is_none_or(|r| r > page_len);
                let asked = if look_ahead { want.saturating_add(1) } else { want };
                st.query.page_size = Some(u32::try_from(asked).unwrap_or(u32::MAX));
                if let Some(gate) = &st.gate {
                    gate()?;
                }
                let remaining = if look_ahead { None } else { Some(want) };
                let out = st
                    .query
                    .request(&prepared, st.start.take(), remaining, false, st.widen)
                    .await?;
                st.widen |= out.dropped;
                let mut items = out.items;
                let mut next = out.next;
                if items.len() > want {
                    items.truncate(want);
                    next = items.last().map(|item| prepared.key_of(item));
                }
                st.prepared = Some(prepared);
                st.done = next.is_none();
                st.start = next;
                if let Some(r) = st.remaining.as_mut() {
                    *r = r.saturating_sub(items.len());
                }
                let items = items.into_iter().map(D::decode).collect::<Result<Vec<_>, _>>()?;
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
}
