//! How a query is configured: limits, order, filters, projection, decoding, consistency.

use super::*;

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
            include_expired: self.include_expired,
            running: Running::default(),
            _marker: PhantomData,
        }
    }

    /// At most `n` items in total ([`all`](Query::all), [`stream`](Query::stream),
    /// [`count`](Query::count)), and the number of items of each [`page`](Query::page).
    /// Example: [`Query`].
    pub fn limit(mut self, n: usize) -> Self {
        self.limit = Some(n);
        self
    }

    /// At most `n` items evaluated per request (DynamoDB's `Limit`); without it a request
    /// reads up to 1 MB. It changes how many requests [`all`](Query::all),
    /// [`stream`](Query::stream) and [`count`](Query::count) send, not their results; without
    /// a [`limit`](Query::limit), it also caps the items of a [`page`](Query::page).
    /// Example: [`Query`].
    pub fn page_size(mut self, n: u32) -> Self {
        self.page_size = Some(n.max(1));
        self
    }

    /// Descending sort-key order (DynamoDB's `ScanIndexForward = false`). Example: [`Query`].
    pub fn reverse(mut self) -> Self {
        self.reverse = true;
        self
    }

    /// Returns the items whose expiry time (`#[entity(ttl = ..)]`) has passed but which the
    /// service has not deleted yet (it does so within days).
    ///
    /// By default a query of an entity with an expiry field sends a `FilterExpression` that
    /// keeps the items whose expiry attribute is absent, not a number, or at least the
    /// handle's clock in whole seconds ([`Db::with_clock`](crate::Db::with_clock)): expired
    /// items are still read and paid for, pages are followed until `limit` items are found,
    /// and [`count`](Query::count) does not count them. A cursor stays valid across the
    /// clock's ticks. No effect on an entity without an expiry field.
    pub fn include_expired(mut self) -> Self {
        self.include_expired = true;
        self
    }
}

impl<'a, E: Entity, On: 'a> Query<'a, E::Table, AsEntity<E>, On> {
    /// Keeps only the items for which `condition` holds (a `FilterExpression`: filtered
    /// items are still read and paid for). Pages left short by the filter are followed until
    /// [`limit`](Query::limit) items are found or the query ends. Several calls combine with
    /// AND. Example: [`Query`].
    pub fn filter(mut self, condition: Condition<E>) -> Self {
        self.filter = crate::ops::and_condition(self.filter, condition);
        self
    }

    /// Reads only the attributes `paths` (a `ProjectionExpression`) into `P`, a struct with
    /// those fields.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Collection, DefaultTable, Entity, Item, Query, local, ops::AsProjection};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<id>", sk = "PROFILE")]
    /// struct User { id: String, name: String }
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "ORDER#<seq>")]
    /// struct Order { user: String, seq: u32, total: u64 }
    /// #[derive(Collection)]
    /// enum UserItems { User(User), Order(Order) }
    /// #[derive(Deserialize)]
    /// struct Total { total: u64 }
    ///
    /// let db = local::isolated_db().await?;
    /// User { id: "ann".into(), name: "Ann".into() }.put(&db).await?;
    /// Order { user: "ann".into(), seq: 1, total: 250 }.put(&db).await?;
    /// // `project`: only the total of each order.
    /// let query: Query<'_, DefaultTable, AsProjection<Order, Total>> =
    ///     Order::partition(&db, "ann").project([Order::TOTAL.path()]);
    /// assert_eq!(query.all().await?[0].total, 250);
    /// // `collection`, in sort-key order: `ORDER#..` before `PROFILE`.
    /// let items = User::partition(&db, "ann").collection::<UserItems>().all().await?;
    /// assert!(matches!(&items[0], UserItems::Order(o) if o.seq == 1));
    /// assert!(matches!(&items[1], UserItems::User(u) if u.name == "Ann"));
    /// // `items`: raw, as stored, of every entity type.
    /// let items: Vec<Item> = User::partition(&db, "ann").items().all().await?;
    /// let types: Vec<&str> = items.iter().map(|i| i["_type"].as_s().unwrap().as_str()).collect();
    /// assert_eq!(types, ["Order", "User"]);
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
    /// every item. Example: [`project`](Query::project).
    pub fn collection<C: Collection<Table = E::Table>>(
        self,
    ) -> Query<'a, E::Table, AsCollection<C>, On> {
        self.with_decode()
    }

    /// Reads collection `C` like [`collection`](Query::collection), but only the items of
    /// `C`'s entity types, in one query: a filter `type IN (..)` on the entity-type attribute
    /// keeps the others out of the response (an item of another type is never an error here,
    /// and a `#[collection(other)]` variant receives nothing). DynamoDB still reads the
    /// left-out items before filtering: they count in the read capacity and in
    /// [`RequestStats::items_read`](crate::RequestStats::items_read), but their bytes are not
    /// sent back. To not read them at all, query the sort-key range of the types you want
    /// (when they are contiguous in sort-key order), or one query per type.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Collection, Entity, local};
    /// # use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "CUSTOMER#<id>", sk = "CUSTOMER")]
    /// struct Customer { id: String, name: String }
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "CUSTOMER#<customer>", sk = "ADDRESS#<label>")]
    /// struct Address { customer: String, label: String, street: String }
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "CUSTOMER#<customer>", sk = "ORDER#<seq>")]
    /// struct Order { customer: String, seq: u32 }
    ///
    /// #[derive(Collection)]
    /// enum CustomerView { Customer(Customer), Order(Order) }
    ///
    /// let db = local::isolated_db().await?;
    /// Customer { id: "c1".into(), name: "Ann".into() }.put(&db).await?;
    /// Address { customer: "c1".into(), label: "home".into(), street: "1 Main St".into() }
    ///     .put(&db).await?;
    /// Order { customer: "c1".into(), seq: 1 }.put(&db).await?;
    /// let view = Customer::partition(&db, "c1").collection_only::<CustomerView>().all().await?;
    /// assert!(matches!(&view[..], [CustomerView::Customer(_), CustomerView::Order(_)]));
    /// # Ok(()) }
    /// ```
    pub fn collection_only<C: Collection<Table = E::Table>>(
        self,
    ) -> Query<'a, E::Table, AsCollectionOnly<C>, On> {
        self.with_decode()
    }

    /// Reads the raw items of the same key condition, of every entity type, as stored
    /// (keys and entity-type attribute included). Example: [`project`](Query::project).
    pub fn items(self) -> Query<'a, E::Table, AsItem, On> {
        self.with_decode()
    }
}

impl<T: Table, D: Decode> Query<'_, T, D, OnTable> {
    /// Strongly consistent read (twice the read capacity): the query sees every write that
    /// succeeded before it. Only queries of the table have it: global secondary indexes are
    /// eventually consistent (see [`OnIndex`]). Example: [`Query`].
    pub fn consistent(mut self) -> Self {
        self.consistent = true;
        self
    }
}
