//! Reading a copy whole (the targets left to copy) and copying every source again, from a
//! scan.

use std::collections::HashMap;

use serde::Serialize;

use super::{FieldCopy, State};
use crate::db::Db;
use crate::error::Error;
use crate::model::{Entity, from_item, is_entity_item, stored_key};
use crate::stream::aggregate::SourceKey;
use crate::stream::aggregate::apply::Seq;

/// What [`FieldCopy::rebuild`] found and changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Recopied {
    /// Source items scanned.
    pub sources: usize,
    /// Target items written because their copy differed from their source's value.
    pub targets_written: usize,
    /// Sources a concurrent processor changed while the rebuild ran, left as it wrote them.
    pub sources_skipped: usize,
}

impl<S, T, V> FieldCopy<S, T, V>
where
    S: Entity,
    T: Entity<Table = S::Table>,
    V: Serialize + 'static,
{
    /// The target items whose field differs from what their source's value is now (their
    /// keys, for display, sorted): what is left to copy. Empty once every record is applied.
    /// One strongly consistent scan of the table; writes nothing.
    pub async fn stale(&self, db: &Db<S::Table>) -> Result<Vec<String>, Error> {
        self.check()?;
        let items = db.scan_items().consistent().await?;
        let mut values = HashMap::new();
        for item in items.iter().filter(|i| is_entity_item::<S>(i)) {
            let Some(key) = SourceKey::of::<S::Table>(item) else { continue };
            values.insert(key, self.value_of(&from_item::<S>(item.clone())?)?);
        }
        let mut stale = Vec::new();
        for item in items.iter().filter(|i| is_entity_item::<T>(i)) {
            let Some(source) = self.source_key(&from_item::<T>(item.clone())?)? else { continue };
            if let Some(value) = values.get(&source)
                && item.get(self.field_name()) != value.as_ref()
            {
                stale.push(stored_key::<S::Table>(item));
            }
        }
        stale.sort();
        Ok(stale)
    }

    /// Copies every source's value to its targets again, from a scan: run it to fill a new
    /// copy over existing items, after changing what `value` computes, or to repair targets
    /// something else wrote. Per source: its state read, the source read again (strongly
    /// consistent), the state written (its sequence number kept, so later records still apply
    /// on top), the targets queried and those that differ written. Writers and processors may
    /// go on: a source whose state a processor changed meanwhile is left to it.
    pub async fn rebuild(&self, db: &Db<S::Table>) -> Result<Recopied, Error> {
        self.check()?;
        let items = db.scan_items().consistent().await?;
        let mut sources: Vec<SourceKey> = items
            .iter()
            .filter(|i| is_entity_item::<S>(i))
            .filter_map(SourceKey::of::<S::Table>)
            .collect();
        sources.sort();
        let mut report = Recopied { sources: sources.len(), ..Recopied::default() };
        for key in sources {
            let state_key = self.state_key(&key)?;
            // The state first, then the source: a processor's change after this read fails
            // the write below; one before it is in what the source reads now.
            let stored = self.read_state(db, &state_key).await?;
            let Some(source) = self.read_source(db, &key).await? else { continue };
            let next = State {
                seq: stored.as_ref().map_or_else(Seq::start, |s| s.seq.clone()),
                value: self.value_of(&source)?,
                gone: false,
                done: false,
            };
            if self.put_state(db, &state_key, stored.as_ref(), &next).await? {
                report.sources_skipped += 1;
                continue;
            }
            report.targets_written += self.copy_to_targets(db, &source, &next).await?;
            self.mark_done(db, &state_key, &next.seq).await?;
        }
        Ok(report)
    }
}
