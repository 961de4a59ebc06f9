//! Crate-internal query entry points for the graph layer (`crate::edge`): a query from a
//! [`KeyStart`] with any output type, and pages that never end with an empty request.
//!
//! DynamoDB says a page is the last one only when it returned fewer items than its `Limit`:
//! a query of `n` items in pages of `p` costs `n / p + 1` requests when `p` divides `n`.
//! [`Query::exact_pages`] asks for one item more than the page holds and keeps it for the
//! next request, so a query of `n` items costs `ceil(n / p)` requests (one when `n` is 0).
//! The extra item is read twice, one item per request: a small price for merges and
//! traversals whose request count is part of their contract.

use futures_util::stream::BoxStream;

use super::paging::{Cut, Gate};
use super::{Decode, KeyStart, OnTable, Query, QueryFrom};
use crate::db::Db;
use crate::error::Error;
use crate::model::{Entity, Table};

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
        self.page_size = None;
        let page = usize::try_from(page).unwrap_or(usize::MAX);
        self.pages_cut(Cut::Exact { page, gate })
    }
}
