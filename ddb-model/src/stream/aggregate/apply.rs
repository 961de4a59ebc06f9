//! The processor: records in, each source item's latest state applied once (read the stored
//! contribution, skip what is not newer, write the difference in one conditioned request).

use std::cmp::Ordering;
use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

use super::{
    AGG_ATTR, Aggregate, Contribution, GROUP_ATTR, HasMeasure, Measured, SEQ_ATTR, SourceKey, s,
};
use crate::db::Db;
use crate::error::{AggregateProblem, Error, StreamRecordReason};
use crate::expr::ExprBuilder;
use crate::item::Item;
use crate::model::{Entity, Table, from_item, string_attr};
use crate::ops::action::Action;
use crate::ops::retry::{self, REREAD_CONFLICTS, Try};
use crate::ops::write::read_item;
use crate::stats::Op;
use crate::stream::{EventKind, StreamRecord, ViewType};

/// Applies stream records to an [`Aggregate`], each change once (see the
/// [module documentation](super)). Made by [`Processor::new`], which refuses a stream whose
/// records lack the new image.
pub struct Processor<'a, E: Entity> {
    pub(super) db: &'a Db<E::Table>,
    pub(super) aggregate: Aggregate<E, Measured>,
}

/// What [`Processor::apply`] did with a batch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Applied {
    /// Source items whose newest record in the batch was applied.
    pub applied: usize,
    /// Source items whose newest record in the batch was not newer than the one applied
    /// before (a duplicate, a retried batch, a record older than one applied).
    pub stale: usize,
    /// Records superseded by a newer record of the same item in the batch.
    pub superseded: usize,
    /// Records of other items: other entity types, the library's bookkeeping (this
    /// aggregate's own writes among them), other programs' items.
    pub ignored: usize,
    /// Target items a [`FieldCopy`](super::FieldCopy) wrote (zero for an aggregate).
    pub targets_written: usize,
}

impl std::ops::AddAssign for Applied {
    fn add_assign(&mut self, other: Applied) {
        self.applied += other.applied;
        self.stale += other.stale;
        self.superseded += other.superseded;
        self.ignored += other.ignored;
        self.targets_written += other.targets_written;
    }
}

/// A stream position: a sequence number's decimal digits, without leading zeros.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Seq(String);

impl Seq {
    /// Reads a sequence number: 1 to 40 decimal digits.
    pub(super) fn parse(text: &str) -> Option<Seq> {
        if text.is_empty() || text.len() > 40 || !text.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = text.trim_start_matches('0');
        Some(Seq(if digits.is_empty() { "0".into() } else { digits.into() }))
    }

    /// The position before every record (a contribution written by a rebuild).
    pub(super) fn start() -> Seq {
        Seq("0".into())
    }

    pub(super) fn as_str(&self) -> &str {
        &self.0
    }
}

/// Compared as numbers: the longer one is greater, else by digits.
impl Ord for Seq {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.len().cmp(&other.0.len()).then_with(|| self.0.cmp(&other.0))
    }
}

impl PartialOrd for Seq {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// What the stored contribution item says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Stored {
    pub(super) seq: Seq,
    pub(super) contribution: Option<Contribution>,
}

/// The newest state of one source item in a batch.
struct Latest {
    seq: Seq,
    /// The item's contribution after the record: `None` when removed or in no group.
    contribution: Option<Contribution>,
}

impl<'a, E: Entity> Processor<'a, E> {
    /// A processor of `aggregate` on `db`'s table, whose stream has view type `view`.
    /// Refuses a view type without new images (`KEYS_ONLY`, `OLD_IMAGE`:
    /// [`AggregateProblem::ViewType`]) and invalid names ([`AggregateProblem::InvalidName`],
    /// [`AggregateProblem::NameTaken`]). An aggregate without a measure does not compile.
    pub fn new<M: HasMeasure>(
        db: &'a Db<E::Table>,
        aggregate: &'a Aggregate<E, M>,
        view: ViewType,
    ) -> Result<Self, Error> {
        // `HasMeasure` is implemented for `Measured` alone: this is the same declaration.
        let aggregate = aggregate.with_state::<Measured>();
        aggregate.check()?;
        check_view(aggregate.name, view)?;
        Ok(Processor { db, aggregate })
    }

    /// Applies a batch of records (a Lambda handler's `event.records`, or a page of
    /// `GetRecords`), in any order, delivered any number of times: for each item of `E` the
    /// newest record of the batch is applied unless a newer or the same one was applied
    /// before. Per such item: one strongly consistent `GetItem` of its contribution and, when
    /// the record is newer, one `PutItem` (its totals unchanged) or one `TransactWriteItems`.
    ///
    /// Fails before writing anything on a record that no stream writes, a record without a
    /// sequence number or with a view type that lacks new images, or an item of `E` that does
    /// not decode; a failed request ends the batch with its error, the items before it
    /// applied. Applying the batch again then applies the rest: what was applied is skipped.
    pub async fn apply(&self, records: &[StreamRecord]) -> Result<Applied, Error> {
        let mut applied = Applied::default();
        let mut latest: HashMap<SourceKey, Latest> = HashMap::new();
        for record in records {
            let Some((key, next)) = self.read(record)? else {
                applied.ignored += 1;
                continue;
            };
            keep_newest(&mut latest, key, next, |l| &l.seq, &mut applied);
        }
        let mut items: Vec<_> = latest.into_iter().collect();
        items.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, next) in items {
            if self.apply_one(&key, &next).await? {
                applied.applied += 1;
            } else {
                applied.stale += 1;
            }
        }
        Ok(applied)
    }

    /// The source item a record is about and its state after it, `None` for a record of
    /// another item.
    fn read(&self, record: &StreamRecord) -> Result<Option<(SourceKey, Latest)>, Error> {
        let agg = &self.aggregate;
        let (kind, new) = event(agg.name, record)?;
        let is_source = |item: &Item| match <E::Table as Table>::TYPE_ATTR {
            _ if item.contains_key(AGG_ATTR) => false,
            Some(attr) => string_attr(item, attr) == Some(E::NAME),
            None => true,
        };
        let entity = match (kind, new) {
            (EventKind::Remove, _) => {
                // Without an old image, the stored contribution tells whether it was one.
                if record.dynamodb.old_image.as_ref().is_some_and(|old| !is_source(old)) {
                    return Ok(None);
                }
                None
            }
            (_, Some(new)) if !is_source(new) => return Ok(None),
            (_, new) => match new.map(|new| from_item::<E>(new.clone())).transpose() {
                Ok(entity) => entity,
                // A table without entity types: an item that is not `E`'s.
                Err(_) if <E::Table as Table>::TYPE_ATTR.is_none() => return Ok(None),
                Err(e) => return Err(e),
            },
        };
        let (key, seq) = position::<E::Table>(agg.name, record)?;
        let contribution = entity.as_ref().and_then(|e| agg.contribution(e));
        Ok(Some((key, Latest { seq, contribution })))
    }

    /// Applies one item's newest state unless it is not newer than the stored one: true when
    /// applied. A concurrent change of the contribution (another processor, a rebuild) makes
    /// it read again.
    async fn apply_one(&self, key: &SourceKey, next: &Latest) -> Result<bool, Error> {
        let agg = &self.aggregate;
        let contribution_key = agg.contribution_key(key)?;
        retry::on_conflict(REREAD_CONFLICTS, |_| async {
            let stored = agg.read_contribution(self.db, &contribution_key).await?;
            if stored.as_ref().is_some_and(|stored| stored.seq >= next.seq) {
                return Ok(Try::Done(false));
            }
            let wrote = agg
                .write_contribution(
                    self.db,
                    &contribution_key,
                    stored.as_ref(),
                    &next.seq,
                    next.contribution.as_ref(),
                )
                .await?;
            Ok(match wrote {
                Some(conflict) => Try::Again(conflict),
                None => Try::Done(true),
            })
        })
        .await
    }
}

/// A put of `item` (a bookkeeping item holding a sequence number) conditioned on the stored
/// one still holding `stored`, or on there being none.
pub(super) fn put_if_seq<T: Table>(item: Item, stored: Option<&Seq>) -> Action {
    let mut x = ExprBuilder::default();
    let condition = match stored {
        None => format!("attribute_not_exists({})", x.name(T::PK)),
        Some(seq) => format!("{} = {}", x.name(SEQ_ATTR), x.value(s(seq.as_str().into()))),
    };
    Action::put(item).guarded(condition, x)
}

/// Keeps the newest record of each item of a batch (`seq` reads its position), counting the
/// others as superseded.
pub(super) fn keep_newest<L>(
    latest: &mut HashMap<SourceKey, L>,
    key: SourceKey,
    next: L,
    seq: fn(&L) -> &Seq,
    applied: &mut Applied,
) {
    match latest.get(&key) {
        Some(held) if seq(held) >= seq(&next) => applied.superseded += 1,
        Some(_) => {
            applied.superseded += 1;
            latest.insert(key, next);
        }
        None => {
            latest.insert(key, next);
        }
    }
}

/// Refuses a view type without new images (for the declaration named `name`).
pub(super) fn check_view(name: &'static str, view: ViewType) -> Result<(), Error> {
    match view {
        ViewType::NewImage | ViewType::NewAndOldImages => Ok(()),
        ViewType::KeysOnly | ViewType::OldImage => Err(Error::Aggregate {
            aggregate: name,
            problem: AggregateProblem::ViewType { view: view.as_str() },
        }),
    }
}

/// What happened in `record`, and the item after it: refused when the record's view type has
/// no new images, or an insert or a modify comes without one (for the declaration `name`).
pub(super) fn event<'r>(
    name: &'static str,
    record: &'r StreamRecord,
) -> Result<(EventKind, Option<&'r Item>), Error> {
    let event_id = || record.event_id.clone();
    let kind = EventKind::parse(&record.event_name).ok_or_else(|| Error::InvalidStreamRecord {
        event_id: event_id(),
        reason: StreamRecordReason::UnknownEventName { name: record.event_name.clone() },
    })?;
    let change = &record.dynamodb;
    if let Some(view) = &change.stream_view_type {
        let view = ViewType::parse(view).ok_or_else(|| Error::InvalidStreamRecord {
            event_id: event_id(),
            reason: StreamRecordReason::UnknownViewType { name: view.clone() },
        })?;
        check_view(name, view)?;
    }
    let new = change.new_image.as_ref();
    if kind != EventKind::Remove && new.is_none() {
        let problem = AggregateProblem::NoNewImage { event_id: event_id() };
        return Err(Error::Aggregate { aggregate: name, problem });
    }
    Ok((kind, new))
}

/// The key of `record`'s item in table `T`, and the record's position in its shard (for the
/// declaration `name`).
pub(super) fn position<T: Table>(
    name: &'static str,
    record: &StreamRecord,
) -> Result<(SourceKey, Seq), Error> {
    let problem = |problem| Error::Aggregate { aggregate: name, problem };
    let event_id = || record.event_id.clone();
    let change = &record.dynamodb;
    let key = SourceKey::of::<T>(&change.keys)
        .ok_or_else(|| problem(AggregateProblem::NoKeys { event_id: event_id() }))?;
    let text = change
        .sequence_number
        .as_deref()
        .ok_or_else(|| problem(AggregateProblem::NoSequenceNumber { event_id: event_id() }))?;
    let seq = Seq::parse(text)
        .ok_or_else(|| problem(AggregateProblem::InvalidSequenceNumber { found: text.into() }))?;
    Ok((key, seq))
}

impl<E: Entity> Aggregate<E, Measured> {
    /// The stored contribution at `key` (strongly consistent), `None` when there is none.
    pub(super) async fn read_contribution(
        &self,
        db: &Db<E::Table>,
        key: &Item,
    ) -> Result<Option<Stored>, Error> {
        match read_item(db, key.clone(), Op::GetItem).await? {
            Some(item) => self.read_stored(&item).map(Some),
            None => Ok(None),
        }
    }

    /// A contribution item.
    pub(super) fn read_stored(&self, item: &Item) -> Result<Stored, Error> {
        let seq = string_attr(item, SEQ_ATTR)
            .and_then(Seq::parse)
            .ok_or_else(|| self.corrupt(item, SEQ_ATTR))?;
        let contribution = match string_attr(item, GROUP_ATTR) {
            None => None,
            Some(group) => Some(Contribution {
                group: group.to_owned(),
                values: self
                    .measures
                    .iter()
                    .map(|(name, _)| self.number(item, name))
                    .collect::<Result<_, _>>()?,
            }),
        };
        Ok(Stored { seq, contribution })
    }

    /// Replaces the contribution at `key` (conditioned on `stored`: its sequence number, or
    /// no item) with `next` at `seq`, and moves the totals by the difference, in one request.
    /// `Some(error)` when the condition failed: the contribution changed meanwhile.
    pub(super) async fn write_contribution(
        &self,
        db: &Db<E::Table>,
        key: &Item,
        stored: Option<&Stored>,
        seq: &Seq,
        next: Option<&Contribution>,
    ) -> Result<Option<Error>, Error> {
        let put = self.contribution_put(key.clone(), stored, seq, next);
        let deltas = self.deltas(stored.and_then(|s| s.contribution.as_ref()), next);
        if deltas.is_empty() {
            let request = put.put_item(db)?;
            return match retry::send(db, Op::PutItem, request).await {
                Ok(_) => Ok(None),
                Err(e) => e.into_condition_failure().map(|_| Some(self.conflict())),
            };
        }
        let table = db.table_name();
        let (size, item) = (put.size(), put.into_transact_item(table)?);
        let mut tx = db.transaction().raw(self.name, key_parts::<E>(key), item, size);
        for (group, delta) in deltas {
            let action = self.total_update(&group, &delta);
            let key = self.total_key(&group);
            let (size, item) = (action.size(), action.into_transact_item(table)?);
            tx = tx.raw(self.name, key_parts::<E>(&key), item, size);
        }
        match tx.send().await {
            Ok(()) => Ok(None),
            // The contribution's condition, or a concurrent transaction on one of the items:
            // read again and decide again.
            Err(e @ Error::TransactionCanceled { .. }) => Ok(Some(e)),
            Err(e) => Err(e),
        }
    }

    /// The conditioned put of a contribution: `next` at `seq`, if the stored one is still
    /// `stored` (its sequence number, or no item).
    pub(super) fn contribution_put(
        &self,
        key: Item,
        stored: Option<&Stored>,
        seq: &Seq,
        next: Option<&Contribution>,
    ) -> Action {
        let mut item = key;
        self.tag(&mut item, "source", "aggregate-source");
        item.insert(SEQ_ATTR.into(), s(seq.as_str().into()));
        if let Some(next) = next {
            item.insert(GROUP_ATTR.into(), s(next.group.clone()));
            for ((name, _), value) in self.measures.iter().zip(&next.values) {
                item.insert((*name).into(), AttributeValue::N(value.to_string()));
            }
        }
        put_if_seq::<E::Table>(item, stored.map(|s| &s.seq))
    }

    /// The error a try ends with when the contribution kept changing.
    fn conflict(&self) -> Error {
        Error::ConditionFailed { entity: self.name, key: String::new(), current: None }
    }

    /// The changes of the totals from `old` to `new`: per group, one delta per measure;
    /// groups whose deltas are all zero left out.
    fn deltas(
        &self,
        old: Option<&Contribution>,
        new: Option<&Contribution>,
    ) -> Vec<(String, Vec<i128>)> {
        let mut out: Vec<(String, Vec<i128>)> = Vec::new();
        let mut add = |c: &Contribution, sign: i128| {
            let at = match out.iter().position(|(g, _)| *g == c.group) {
                Some(at) => at,
                None => {
                    out.push((c.group.clone(), vec![0; c.values.len()]));
                    out.len() - 1
                }
            };
            for (d, v) in out[at].1.iter_mut().zip(&c.values) {
                *d += sign * i128::from(*v);
            }
        };
        if let Some(old) = old {
            add(old, -1);
        }
        if let Some(new) = new {
            add(new, 1);
        }
        out.retain(|(_, d)| d.iter().any(|v| *v != 0));
        out
    }

    /// `ADD` of `delta` to the total of `group` (created at the first one).
    fn total_update(&self, group: &str, delta: &[i128]) -> Action {
        let mut x = ExprBuilder::default();
        let mut item = Item::new();
        self.tag(&mut item, "total", "aggregate");
        item.insert(GROUP_ATTR.into(), s(group.into()));
        let set: Vec<String> = item
            .into_iter()
            .map(|(name, value)| format!("{} = {}", x.name(&name), x.value(value)))
            .collect();
        let add: Vec<String> = self
            .measures
            .iter()
            .zip(delta)
            .filter(|(_, d)| **d != 0)
            .map(|((name, _), d)| {
                format!("{} {}", x.name(name), x.value(AttributeValue::N(d.to_string())))
            })
            .collect();
        let expression = format!("SET {} ADD {}", set.join(", "), add.join(", "));
        Action::update(self.total_key(group), expression).guarded("", x)
    }
}

/// The key of an item as a transaction names it in errors.
fn key_parts<E: Entity>(key: &Item) -> (String, Option<String>) {
    let text = |attr| string_attr(key, attr).unwrap_or_default().to_owned();
    (text(E::Table::PK), <E::Table as Table>::SK.map(text))
}

#[cfg(test)]
mod tests {
    use super::Seq;

    #[test]
    fn sequence_numbers_compare_as_numbers() {
        let seq = |t: &str| Seq::parse(t).expect("a sequence number");
        assert!(seq("9") < seq("10"));
        assert!(seq("000100") == seq("100"));
        assert!(seq("0") == Seq::start() && seq("000") == Seq::start());
        let forty = "9".repeat(40);
        assert!(seq(&forty) > seq(&"9".repeat(39)));
        assert!(
            seq("1234567890123456789012345678901234567891")
                > seq("1234567890123456789012345678901234567890")
        );
        for bad in ["", "12a", "-1", "1.0", " 1", &"1".repeat(41)] {
            assert!(Seq::parse(bad).is_none(), "{bad:?}");
        }
    }
}
