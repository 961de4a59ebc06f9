//! Reading the aggregate whole (its totals, a recount of its source items) and rebuilding it
//! from a scan: one pass over the table classifies every item.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_dynamodb::types::AttributeValue;

use super::apply::{Seq, Stored};
use super::{AGG_ATTR, Aggregate, Contribution, GROUP_ATTR, Measured, SourceKey, Totals};
use crate::db::Db;
use crate::error::{AggregateProblem, Error};
use crate::item::Item;
use crate::model::{Entity, Table, from_item, string_attr};
use crate::ops::action::Action;
use crate::ops::retry;
use crate::stats::Op;

/// What [`Aggregate::rebuild`] found and changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rebuilt {
    /// Source items scanned.
    pub sources: usize,
    /// Contributions written because they differed from their source item (or it was gone).
    pub contributions_fixed: usize,
    /// Contributions a concurrent processor changed while the rebuild ran, left as it wrote
    /// them.
    pub contributions_skipped: usize,
    /// Totals written because they differed from the sum of the contributions.
    pub totals_fixed: usize,
}

/// Every item of the aggregate and its sources, from one scan.
struct Snapshot {
    /// Each source item's contribution now (`None`: in no group).
    sources: HashMap<SourceKey, Option<Contribution>>,
    /// Each stored contribution, by its source item's key.
    contributions: HashMap<SourceKey, (Item, Stored)>,
    /// Each stored total.
    totals: BTreeMap<String, Totals>,
}

impl<E: Entity> Aggregate<E, Measured> {
    /// Every group's totals as stored, groups whose measures are all zero left out. One
    /// strongly consistent scan of the table.
    pub async fn totals(&self, db: &Db<E::Table>) -> Result<BTreeMap<String, Totals>, Error> {
        let mut totals = self.snapshot(db).await?.totals;
        totals.retain(|_, t| !t.is_zero());
        Ok(totals)
    }

    /// Every group's totals counted again from `E`'s items, groups whose measures are all
    /// zero left out: what [`totals`](Aggregate::totals) is once every record of the stream
    /// is applied. One strongly consistent scan of the table; writes nothing.
    pub async fn recount(&self, db: &Db<E::Table>) -> Result<BTreeMap<String, Totals>, Error> {
        let snapshot = self.snapshot(db).await?;
        self.sum_up(snapshot.sources.values().flatten())
    }

    /// Rebuilds the aggregate from a scan: each contribution set to what its source item
    /// contributes now (its sequence number kept, so later records still apply; a removed
    /// item's contribution emptied), then each total set to the sum of the contributions.
    /// Run it to fill a new aggregate over existing items, after changing what a measure
    /// computes, or to repair totals written by something else; running it again is
    /// harmless.
    ///
    /// Concurrency: writers of the table may go on (their records wait in the stream and
    /// apply on top). A processor of this aggregate must not run while the totals are
    /// written: pause it, rebuild, resume it from its checkpoint. A contribution a processor
    /// changed during the first step is left as the processor wrote it.
    pub async fn rebuild(&self, db: &Db<E::Table>) -> Result<Rebuilt, Error> {
        self.check()?;
        let before = self.snapshot(db).await?;
        let mut report = Rebuilt { sources: before.sources.len(), ..Rebuilt::default() };
        let mut keys: Vec<&SourceKey> =
            before.sources.keys().chain(before.contributions.keys()).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            let now = before.sources.get(key).cloned().flatten();
            let stored = before.contributions.get(key);
            if stored.map(|(_, s)| s.contribution.as_ref()) == Some(now.as_ref())
                || (stored.is_none() && now.is_none())
            {
                continue;
            }
            let item_key = self.contribution_key(key)?;
            let seq = stored.map_or_else(Seq::start, |(_, s)| s.seq.clone());
            let conflict = self
                .put_contribution(db, item_key, stored.map(|(_, s)| s), &seq, now.as_ref())
                .await?;
            match conflict {
                true => report.contributions_skipped += 1,
                false => report.contributions_fixed += 1,
            }
        }
        let after = self.snapshot(db).await?;
        let counted =
            self.sum_up(after.contributions.values().filter_map(|(_, s)| s.contribution.as_ref()))?;
        let mut groups: Vec<&String> = counted.keys().chain(after.totals.keys()).collect();
        groups.sort();
        groups.dedup();
        for group in groups {
            let want = counted.get(group).cloned().unwrap_or_else(|| self.zero());
            let have = after.totals.get(group).cloned().unwrap_or_else(|| self.zero());
            if want != have {
                self.put_total(db, group, &want).await?;
                report.totals_fixed += 1;
            }
        }
        Ok(report)
    }

    /// One strongly consistent scan of the table, every item classified.
    async fn snapshot(&self, db: &Db<E::Table>) -> Result<Snapshot, Error> {
        let items = db.scan_items().consistent().await?;
        let total = self.marker("total");
        let source = self.marker("source");
        let mut snapshot = Snapshot {
            sources: HashMap::new(),
            contributions: HashMap::new(),
            totals: BTreeMap::new(),
        };
        for item in items {
            match string_attr(&item, AGG_ATTR) {
                Some(marker) if marker == total => {
                    let (group, totals) = self.read_total(&item)?;
                    snapshot.totals.insert(group, totals);
                }
                Some(marker) if marker == source => {
                    let key = self.source_of(&item)?;
                    let stored = self.read_stored(&item)?;
                    snapshot.contributions.insert(key, (item, stored));
                }
                Some(_) => {}
                None => {
                    if let Some(attr) = <E::Table as Table>::TYPE_ATTR
                        && string_attr(&item, attr) != Some(E::NAME)
                    {
                        continue;
                    }
                    let Some(key) = SourceKey::of::<E::Table>(&item) else { continue };
                    let entity = match from_item::<E>(item) {
                        Ok(entity) => entity,
                        Err(_) if <E::Table as Table>::TYPE_ATTR.is_none() => continue,
                        Err(e) => return Err(e),
                    };
                    snapshot.sources.insert(key, self.contribution(&entity));
                }
            }
        }
        Ok(snapshot)
    }

    /// The key of the source item a contribution item is about.
    fn source_of(&self, item: &Item) -> Result<SourceKey, Error> {
        let prefix = format!("~agg#{}#", self.name);
        let pk = string_attr(item, E::Table::PK)
            .and_then(|pk| pk.strip_prefix(&prefix))
            .ok_or_else(|| self.corrupt(item, E::Table::PK))?;
        let sk = match <E::Table as Table>::SK {
            Some(attr) => Some(string_attr(item, attr).ok_or_else(|| self.corrupt(item, attr))?),
            None => None,
        };
        Ok(SourceKey { pk: pk.to_owned(), sk: sk.map(str::to_owned) })
    }

    /// Sums contributions per group, all-zero groups left out; a sum beyond `i64` is
    /// [`AggregateProblem::Overflow`].
    fn sum_up<'c>(
        &self,
        contributions: impl Iterator<Item = &'c Contribution>,
    ) -> Result<BTreeMap<String, Totals>, Error> {
        let mut sums: BTreeMap<String, Vec<i128>> = BTreeMap::new();
        for c in contributions {
            let sum = sums.entry(c.group.clone()).or_insert_with(|| vec![0; c.values.len()]);
            for (s, v) in sum.iter_mut().zip(&c.values) {
                *s += i128::from(*v);
            }
        }
        sums.into_iter()
            .filter(|(_, values)| values.iter().any(|v| *v != 0))
            .map(|(group, values)| {
                let values = self
                    .measures
                    .iter()
                    .zip(values)
                    .map(|((name, _), v)| {
                        let overflow = || {
                            self.problem(AggregateProblem::Overflow {
                                measure: (*name).into(),
                                group: group.clone(),
                            })
                        };
                        Ok((*name, i64::try_from(v).map_err(|_| overflow())?))
                    })
                    .collect::<Result<_, Error>>()?;
                Ok((group, Totals { values }))
            })
            .collect()
    }

    /// Sets a contribution without moving the totals (the rebuild sums them afterwards),
    /// conditioned as the processor's writes are: true when a concurrent write got there
    /// first.
    async fn put_contribution(
        &self,
        db: &Db<E::Table>,
        key: Item,
        stored: Option<&Stored>,
        seq: &Seq,
        next: Option<&Contribution>,
    ) -> Result<bool, Error> {
        let put = self.contribution_put(key, stored, seq, next);
        match retry::send(db, Op::PutItem, put.put_item(db)?).await {
            Ok(_) => Ok(false),
            Err(e) => e.into_condition_failure().map(|_| true),
        }
    }

    /// Writes a total whole.
    async fn put_total(
        &self,
        db: &Db<E::Table>,
        group: &str,
        totals: &Totals,
    ) -> Result<(), Error> {
        let mut item = self.total_key(group);
        self.tag(&mut item, "total", "aggregate");
        item.insert(GROUP_ATTR.into(), AttributeValue::S(group.into()));
        for (name, value) in totals.values() {
            item.insert((*name).into(), AttributeValue::N(value.to_string()));
        }
        retry::send(db, Op::PutItem, Action::put(item).put_item(db)?).await?;
        Ok(())
    }
}
