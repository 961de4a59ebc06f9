//! How a query runs: every item, the first, a stream of items or pages, one page behind a
//! cursor, or a count.

use super::*;

impl<'a, T: Table, D: Decode, On: 'a> Query<'a, T, D, On> {
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
}

/// Awaiting a query runs [`all`](Query::all).
impl<'a, T: Table, D: Decode, On: 'a> IntoFuture for Query<'a, T, D, On> {
    type Output = Result<Vec<D::Output>, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.all())
    }
}
