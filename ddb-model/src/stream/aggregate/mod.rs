//! Aggregates kept by a stream processor, exactly once: a count and sums per group of one
//! entity's items (orders per customer, their total amount), maintained from the table's
//! DynamoDB Streams records and rebuilt from a scan. Guide: `docs/aggregates.md`.
//!
//! An [`Aggregate`] is declared with a typed builder: the entity, a name, the group each item
//! belongs to (or `None`: not counted) and at least one measure ([`count`](Aggregate::count),
//! [`sum`](Aggregate::sum)); a [`Processor`] without a measure does not compile. The
//! processor applies records handed in ([`Processor::apply`], a Lambda handler's batch, or
//! records read with the streams API).
//!
//! **Exactly once, by state.** Each record carries the item after the change (the new image),
//! so the processor keeps, per source item, what that item last contributed and the sequence
//! number of the record that set it (a *contribution* item of the library). A record whose
//! sequence number is not greater than the stored one is skipped (a duplicate, a retried batch,
//! a record delivered after a newer one); otherwise the totals receive the difference between
//! the new contribution and the stored one in one transaction with the contribution's write,
//! conditioned on the stored sequence number. Applying a record twice, or two processors
//! racing on one record, can therefore never count it twice.
//!
//! The module also keeps **denormalised copies** the same way: a [`FieldCopy`] copies a value
//! of each item of one entity into a field of the items that refer to it, applied by a
//! [`CopyProcessor`].
//!
//! ```
//! use ddb_model::prelude::*;
//! use ddb_model::stream::ViewType;
//! use ddb_model::stream::aggregate::{Aggregate, Processor};
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Entity, Serialize, Deserialize)]
//! # #[entity(pk = "ORDER#<id>", sk = "ORDER")]
//! # struct Order { id: String, customer: String, amount: i64 }
//!
//! let by_customer = Aggregate::new("orders_by_customer", |o: &Order| Some(o.customer.clone()))
//!     .count("orders")
//!     .sum("amount", |o: &Order| o.amount);
//! # #[cfg(feature = "local")]
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! # let db = ddb_model::local::isolated_db::<ddb_model::DefaultTable>().await?;
//! let processor = Processor::new(&db, &by_customer, ViewType::NewAndOldImages)?;
//! # let records: Vec<ddb_model::stream::StreamRecord> = Vec::new();
//! processor.apply(&records).await?;
//! let ann = by_customer.get(&db, "ann").await?;
//! assert_eq!(ann.get("orders"), Some(0));
//! # Ok::<(), ddb_model::Error>(()) }).unwrap();
//! ```

mod apply;
mod copy;
mod rebuild;
#[cfg(feature = "streams-sdk")]
mod shards;

use std::marker::PhantomData;
use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;

pub use apply::{Applied, Processor};
pub use copy::{CopyProcessor, FieldCopy, Recopied};
pub use rebuild::Rebuilt;
#[cfg(feature = "streams-sdk")]
pub use shards::Drained;

use crate::db::Db;
use crate::error::{AggregateProblem, Error};
use crate::item::Item;
use crate::key::{MAX_PARTITION_KEY_BYTES, MAX_SORT_KEY_BYTES};
use crate::model::{Entity, Table, key_display, string_attr};
use crate::ops::write::read_item;
use crate::stats::Op;

/// The attribute that marks the aggregate's own items: `<name>:total` or `<name>:source`.
const AGG_ATTR: &str = "_agg";
/// The group of a total, or of what a source item contributes.
const GROUP_ATTR: &str = "_group";
/// The sequence number of the record a contribution was last set by.
const SEQ_ATTR: &str = "_seq";
/// The sort key of a total, in a table with a sort key.
const TOTAL_SK: &str = "~agg";

/// The builder state of an aggregate without a measure yet: it cannot be given to a
/// [`Processor`].
#[derive(Debug, Clone, Copy)]
pub struct Unmeasured;

/// The builder state of an aggregate with at least one measure.
#[derive(Debug, Clone, Copy)]
pub struct Measured;

/// Implemented by the builder states an aggregate can be processed in ([`Measured`]).
#[diagnostic::on_unimplemented(
    message = "the aggregate has no measure",
    label = "declared without `.count(..)` or `.sum(..)`",
    note = "add a measure: `Aggregate::new(..).count(\"orders\")` or `.sum(\"amount\", |e| ..)`"
)]
pub trait HasMeasure: sealed::Sealed {}
impl HasMeasure for Measured {}
mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Measured {}
}

type GroupFn<E> = Arc<dyn Fn(&E) -> Option<String> + Send + Sync>;
type MeasureFn<E> = Arc<dyn Fn(&E) -> i64 + Send + Sync>;

/// A count and sums per group of entity `E`'s items, kept up to date from the table's stream
/// by a [`Processor`] (example in the [module documentation](self)).
///
/// The totals are items of the library in `E`'s table (partition key `~agg=<name>#<group>`),
/// read with [`get`](Aggregate::get) and [`totals`](Aggregate::totals); what each source item
/// contributes is kept beside them (partition key `~agg#<name>#<the item's partition key>`).
/// Both carry the entity type `<name>:aggregate` / `<name>:aggregate-source`, which stream
/// decoding classifies as bookkeeping, so the processor's own writes are never read as
/// changes of `E`.
pub struct Aggregate<E, M = Measured> {
    name: &'static str,
    group: GroupFn<E>,
    measures: Vec<(&'static str, MeasureFn<E>)>,
    state: PhantomData<M>,
}

impl<E, M> Aggregate<E, M> {
    /// The same declaration in builder state `N`.
    fn with_state<N>(&self) -> Aggregate<E, N> {
        Aggregate {
            name: self.name,
            group: self.group.clone(),
            measures: self.measures.clone(),
            state: PhantomData,
        }
    }
}

impl<E, M> Clone for Aggregate<E, M> {
    fn clone(&self) -> Self {
        self.with_state()
    }
}

impl<E, M> std::fmt::Debug for Aggregate<E, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let measures: Vec<_> = self.measures.iter().map(|(name, _)| *name).collect();
        f.debug_struct("Aggregate").field("name", &self.name).field("measures", &measures).finish()
    }
}

impl<E: Entity> Aggregate<E, Unmeasured> {
    /// An aggregate named `name` (1 to 64 ASCII letters, digits, `_`, `-`; checked by
    /// [`Processor::new`]) over `E`'s items, grouped by `group`: the group an item belongs to,
    /// or `None` for an item it does not count (a filter).
    pub fn new(
        name: &'static str,
        group: impl Fn(&E) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        Aggregate { name, group: Arc::new(group), measures: Vec::new(), state: PhantomData }
    }
}

impl<E: Entity, M> Aggregate<E, M> {
    fn measure(self, name: &'static str, of: MeasureFn<E>) -> Aggregate<E, Measured> {
        let Aggregate { name: agg, group, mut measures, .. } = self;
        measures.push((name, of));
        Aggregate { name: agg, group, measures, state: PhantomData }
    }

    /// Adds a measure `name`: the number of the group's items.
    pub fn count(self, name: &'static str) -> Aggregate<E, Measured> {
        self.measure(name, Arc::new(|_| 1))
    }

    /// Adds a measure `name`: the sum of `of` over the group's items.
    pub fn sum(
        self,
        name: &'static str,
        of: impl Fn(&E) -> i64 + Send + Sync + 'static,
    ) -> Aggregate<E, Measured> {
        self.measure(name, Arc::new(of))
    }

    /// The aggregate's name.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl<E: Entity> Aggregate<E, Measured> {
    /// The totals of `group`: every measure, zero for a group without items. One
    /// strongly consistent `GetItem`.
    pub async fn get(&self, db: &Db<E::Table>, group: &str) -> Result<Totals, Error> {
        match read_item(db, self.total_key(group), Op::GetItem).await? {
            Some(item) => self.read_total(&item).map(|(_, totals)| totals),
            None => Ok(self.zero()),
        }
    }

    /// The error `problem` of this aggregate.
    fn problem(&self, problem: AggregateProblem) -> Error {
        Error::Aggregate { aggregate: self.name, problem }
    }

    /// Checks the names (what [`Processor::new`] and [`rebuild`](Aggregate::rebuild) check
    /// first).
    fn check(&self) -> Result<(), Error> {
        let table = E::Table::PK;
        let taken = [Some(table), <E::Table as Table>::SK, <E::Table as Table>::TYPE_ATTR];
        let reserved = [AGG_ATTR, GROUP_ATTR, SEQ_ATTR];
        for name in std::iter::once(self.name).chain(self.measures.iter().map(|(n, _)| *n)) {
            if !valid_name(name) {
                return Err(self.problem(AggregateProblem::InvalidName { name: name.into() }));
            }
        }
        for (i, (name, _)) in self.measures.iter().enumerate() {
            let twice = self.measures[..i].iter().any(|(other, _)| other == name);
            if twice || reserved.contains(name) || taken.contains(&Some(*name)) {
                return Err(self.problem(AggregateProblem::NameTaken { name: (*name).into() }));
            }
        }
        Ok(())
    }

    /// Every measure at zero.
    fn zero(&self) -> Totals {
        Totals { values: self.measures.iter().map(|(name, _)| (*name, 0)).collect() }
    }

    /// What `entity` contributes: its group and one value per measure, `None` for an item of
    /// no group.
    fn contribution(&self, entity: &E) -> Option<Contribution> {
        let group = (self.group)(entity)?;
        Some(Contribution { group, values: self.measures.iter().map(|(_, f)| f(entity)).collect() })
    }

    /// The key of the total of `group`.
    fn total_key(&self, group: &str) -> Item {
        let mut key = Item::new();
        key.insert(E::Table::PK.into(), s(format!("~agg={}#{group}", self.name)));
        if let Some(sk) = <E::Table as Table>::SK {
            key.insert(sk.into(), s(TOTAL_SK.into()));
        }
        key
    }

    /// The key of the contribution of the source item at `source`, checked against the key
    /// limits.
    fn contribution_key(&self, source: &SourceKey) -> Result<Item, Error> {
        bookkeeping_key::<E::Table>(&format!("~agg#{}#", self.name), source, |len, max| {
            self.problem(AggregateProblem::KeyTooLong { key: source.display(), len, max })
        })
    }

    /// The marker of the aggregate's items of `kind` (`total`, `source`), as [`tag`] writes it.
    fn marker(&self, kind: &str) -> String {
        format!("{}:{kind}", self.name)
    }

    /// The attributes every item of the aggregate carries besides its key and measures.
    fn tag(&self, item: &mut Item, kind: &str, entity_type: &str) {
        tag::<E::Table>(self.name, item, kind, entity_type);
    }

    /// Reads a measure attribute of one of the aggregate's items (absent: 0).
    fn number(&self, item: &Item, attr: &str) -> Result<i64, Error> {
        match item.get(attr) {
            None => Ok(0),
            Some(AttributeValue::N(n)) => n.parse().map_err(|_| self.corrupt(item, attr)),
            Some(_) => Err(self.corrupt(item, attr)),
        }
    }

    fn corrupt(&self, item: &Item, attr: &str) -> Error {
        let text = |a| string_attr(item, a);
        let key = key_display(text(E::Table::PK), <E::Table as Table>::SK.and_then(text));
        self.problem(AggregateProblem::CorruptItem { key, attr: attr.into() })
    }

    /// A total item: its group and totals.
    fn read_total(&self, item: &Item) -> Result<(String, Totals), Error> {
        let group = string_attr(item, GROUP_ATTR).ok_or_else(|| self.corrupt(item, GROUP_ATTR))?;
        let values = self
            .measures
            .iter()
            .map(|(name, _)| Ok((*name, self.number(item, name)?)))
            .collect::<Result<_, Error>>()?;
        Ok((group.to_owned(), Totals { values }))
    }
}

/// The totals of one group: one value per measure, in the order they were declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Totals {
    values: Vec<(&'static str, i64)>,
}

impl Totals {
    /// The value of measure `name`, `None` for a name the aggregate does not declare.
    pub fn get(&self, name: &str) -> Option<i64> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    /// Every measure and its value, in the order they were declared.
    pub fn values(&self) -> &[(&'static str, i64)] {
        &self.values
    }

    /// True when every measure is zero (a group without items).
    pub fn is_zero(&self) -> bool {
        self.values.iter().all(|(_, v)| *v == 0)
    }
}

/// What one source item contributes: its group and one value per measure.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Contribution {
    group: String,
    values: Vec<i64>,
}

/// The key of a source item (the table's partition and sort key, as text).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct SourceKey {
    pk: String,
    sk: Option<String>,
}

impl SourceKey {
    /// The key of `item` in table `T`, if it has the table's string keys.
    fn of<T: Table>(item: &Item) -> Option<SourceKey> {
        let pk = string_attr(item, T::PK)?.to_owned();
        let sk = match T::SK {
            Some(attr) => Some(string_attr(item, attr)?.to_owned()),
            None => None,
        };
        Some(SourceKey { pk, sk })
    }

    fn display(&self) -> String {
        key_display(Some(&self.pk), self.sk.as_deref())
    }
}

/// The attributes every item of a stream-maintained declaration `name` carries besides its
/// key and values: the marker `<name>:<kind>` and, in a table with an entity-type attribute,
/// the bookkeeping type `<name>:<entity_type>` (which stream decoding never reads as a change
/// of an entity).
fn tag<T: Table>(name: &str, item: &mut Item, kind: &str, entity_type: &str) {
    item.insert(AGG_ATTR.into(), s(format!("{name}:{kind}")));
    if let Some(attr) = T::TYPE_ATTR {
        item.insert(attr.into(), s(format!("{name}:{entity_type}")));
    }
}

/// The key of the item that keeps what a declaration knows of source item `source`: its
/// partition key `<prefix><the source's partition key>` (checked against the limit), its sort
/// key the source's. `too_long` makes the error of a key over a limit.
fn bookkeeping_key<T: Table>(
    prefix: &str,
    source: &SourceKey,
    too_long: impl Fn(usize, usize) -> Error,
) -> Result<Item, Error> {
    let pk = format!("{prefix}{}", source.pk);
    if pk.len() > MAX_PARTITION_KEY_BYTES {
        return Err(too_long(pk.len(), MAX_PARTITION_KEY_BYTES));
    }
    let mut key = Item::new();
    key.insert(T::PK.into(), s(pk));
    if let (Some(attr), Some(sk)) = (T::SK, &source.sk) {
        if sk.len() > MAX_SORT_KEY_BYTES {
            return Err(too_long(sk.len(), MAX_SORT_KEY_BYTES));
        }
        key.insert(attr.into(), s(sk.clone()));
    }
    Ok(key)
}

/// True when `name` is 1 to 64 ASCII letters, digits, `_` or `-`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn s(text: String) -> AttributeValue {
    AttributeValue::S(text)
}
