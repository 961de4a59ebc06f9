//! The copy's processor: records in; a source's newest state recorded, copied to its targets
//! and marked done; a target written by someone else compared with its source's state and
//! repaired.

use std::collections::HashMap;

use serde::Serialize;

use super::{FieldCopy, State};
use crate::db::Db;
use crate::error::Error;
use crate::item::Item;
use crate::model::{Entity, from_item, is_entity_item};
use crate::ops::retry::{self, REREAD_CONFLICTS, Try};
use crate::stream::aggregate::apply::{Seq, check_view, event, keep_newest, position};
use crate::stream::aggregate::{AGG_ATTR, Applied, SourceKey};
use crate::stream::{EventKind, StreamRecord, ViewType};

/// Applies stream records to a [`FieldCopy`] (see its documentation). Made by
/// [`CopyProcessor::new`], which refuses a stream whose records lack the new image.
pub struct CopyProcessor<'a, S: Entity, T: Entity, V> {
    pub(in crate::stream::aggregate) db: &'a Db<S::Table>,
    pub(in crate::stream::aggregate) copy: &'a FieldCopy<S, T, V>,
}

/// What applying a source's record comes to.
enum Step {
    /// Not newer than what was applied.
    Stale,
    /// The state written, nothing to copy (a removal, or the same value).
    Recorded,
    /// The state written (or found written): its value is copied to the targets.
    Copy,
}

/// The newest record of one item in a batch.
struct Latest<E> {
    seq: Seq,
    /// The item after the record, `None` when removed.
    entity: Option<E>,
    /// The stored item after the record (the target's, to compare with its source's state).
    item: Option<Item>,
    /// The record only moved the copy (the processor's own write, seen with the old image).
    own: bool,
}

impl<'a, S, T, V> CopyProcessor<'a, S, T, V>
where
    S: Entity,
    T: Entity<Table = S::Table>,
    V: Serialize + 'static,
{
    /// A processor of `copy` on `db`'s table, whose stream has view type `view`. Refuses a
    /// view type without new images and an invalid name (an [`Error::Aggregate`]), and a
    /// target entity whose items are encrypted and signed ([`Error::Unsupported`]).
    pub fn new(
        db: &'a Db<S::Table>,
        copy: &'a FieldCopy<S, T, V>,
        view: ViewType,
    ) -> Result<Self, Error> {
        copy.check()?;
        check_view(copy.name, view)?;
        Ok(CopyProcessor { db, copy })
    }

    /// Applies a batch of records, in any order, delivered any number of times. For each
    /// source item, its newest record in the batch, unless the same or a newer one was
    /// applied before: one strongly consistent `GetItem` of its state, one `PutItem`, one
    /// query of its targets (page by page), one `UpdateItem` per target whose copy differs and
    /// one `UpdateItem` marking it done; a change that leaves the value as it was copied, the
    /// `GetItem` and the `PutItem` alone. A record already applied, and a removal of an item
    /// never recorded, cost the `GetItem` alone.
    /// For each target item written by someone else: one `GetItem` of its source's state, and
    /// one `UpdateItem` when its copy differs. With `NEW_AND_OLD_IMAGES` the processor's own
    /// writes of targets cost nothing; with `NEW_IMAGE` each costs a `GetItem`.
    ///
    /// `applied` counts the source changes applied and the targets repaired, `stale` the
    /// records that changed nothing, `targets_written` every target written. A failed request
    /// ends the batch with its error; delivered again, the batch finishes what was started.
    pub async fn apply(&self, records: &[StreamRecord]) -> Result<Applied, Error> {
        let mut applied = Applied::default();
        let mut sources: HashMap<SourceKey, Latest<S>> = HashMap::new();
        let mut targets: HashMap<SourceKey, Latest<T>> = HashMap::new();
        for record in records {
            let (source, target) = self.read(record)?;
            if source.is_none() && target.is_none() {
                applied.ignored += 1;
            }
            if let Some((key, next)) = source {
                keep_newest(&mut sources, key, next, |l| &l.seq, &mut applied);
            }
            if let Some((key, next)) = target {
                keep_newest(&mut targets, key, next, |l| &l.seq, &mut applied);
            }
        }
        let mut sources: Vec<_> = sources.into_iter().collect();
        sources.sort_by(|a, b| a.0.cmp(&b.0));
        for (key, next) in sources {
            match self.apply_source(&key, &next).await? {
                Some(written) => {
                    applied.applied += 1;
                    applied.targets_written += written;
                }
                None => applied.stale += 1,
            }
        }
        let mut targets: Vec<_> = targets.into_iter().collect();
        targets.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, next) in targets {
            if next.own {
                applied.ignored += 1;
            } else if self.repair_target(&next).await? {
                applied.applied += 1;
                applied.targets_written += 1;
            } else {
                applied.stale += 1;
            }
        }
        Ok(applied)
    }

    /// What a record says of a source item and of a target item (either, both, or neither).
    #[allow(clippy::type_complexity)]
    fn read(
        &self,
        record: &StreamRecord,
    ) -> Result<(Option<(SourceKey, Latest<S>)>, Option<(SourceKey, Latest<T>)>), Error> {
        let copy = self.copy;
        let (kind, new) = event(copy.name, record)?;
        let old = record.dynamodb.old_image.as_ref();
        let ours = |item: &Item| !item.contains_key(AGG_ATTR);
        let is_source = |item: &Item| ours(item) && is_entity_item::<S>(item);
        let is_target = |item: &Item| ours(item) && is_entity_item::<T>(item);
        let source = match (kind, new) {
            // Without an old image, the stored state tells whether it was a source.
            (EventKind::Remove, _) if old.is_none_or(is_source) => Some(None),
            (_, Some(new)) if is_source(new) => Some(Some(from_item::<S>(new.clone())?)),
            _ => None,
        };
        let target = match new {
            Some(new) if kind != EventKind::Remove && is_target(new) => {
                let own = old.is_some_and(|old| self.only_copy_moved(old, new));
                Some((from_item::<T>(new.clone())?, new.clone(), own))
            }
            _ => None,
        };
        if source.is_none() && target.is_none() {
            return Ok((None, None));
        }
        let (key, seq) = position::<S::Table>(copy.name, record)?;
        let source = source.map(|entity| {
            let latest = Latest { seq: seq.clone(), entity, item: None, own: false };
            (key.clone(), latest)
        });
        let target = target.map(|(entity, item, own)| {
            (key, Latest { seq, entity: Some(entity), item: Some(item), own })
        });
        Ok((source, target))
    }

    /// True when `new` differs from `old` only in the copied field and the copy's sequence
    /// number, which moved: the processor's own write.
    fn only_copy_moved(&self, old: &Item, new: &Item) -> bool {
        let (field, seq) = (self.copy.field_name(), self.copy.seq_attr());
        let rest = |item: &Item| {
            let mut item = item.clone();
            item.remove(field);
            item.remove(&seq);
            item
        };
        old.get(&seq) != new.get(&seq) && new.contains_key(&seq) && rest(old) == rest(new)
    }

    /// Applies a source's newest state unless it is not newer than the stored one (or the
    /// same one, copied to every target): the number of targets written, `None` when stale.
    async fn apply_source(
        &self,
        key: &SourceKey,
        next: &Latest<S>,
    ) -> Result<Option<usize>, Error> {
        let (copy, db) = (self.copy, self.db);
        let state_key = copy.state_key(key)?;
        let value = next.entity.as_ref().map(|e| copy.value_of(e)).transpose()?.flatten();
        let state = State {
            seq: next.seq.clone(),
            value,
            gone: next.entity.is_none(),
            done: next.entity.is_none(),
        };
        let step = retry::on_conflict(REREAD_CONFLICTS, |_| async {
            let stored = copy.read_state(db, &state_key).await?;
            let next = match &stored {
                Some(s) if s.seq > state.seq || (s.seq == state.seq && s.done) => {
                    return Ok(Try::Done(Step::Stale));
                }
                // Recorded, not copied to every target yet: finish the copy.
                Some(s) if s.seq == state.seq => return Ok(Try::Done(Step::Copy)),
                // A removal of an item never recorded: nothing was copied from it (with
                // `NEW_IMAGE`, every removal in the table looks like this).
                None if state.gone => return Ok(Try::Done(Step::Stale)),
                // The value as copied everywhere before: the state moves, no target is written.
                Some(s) if s.done && !s.gone && !state.gone && s.value == state.value => {
                    State { done: true, ..state.clone() }
                }
                _ => state.clone(),
            };
            if copy.put_state(db, &state_key, stored.as_ref(), &next).await? {
                return Ok(Try::Again(copy.conflict()));
            }
            Ok(Try::Done(if next.done { Step::Recorded } else { Step::Copy }))
        })
        .await?;
        match (step, &next.entity) {
            (Step::Stale, _) => Ok(None),
            (Step::Recorded, _) | (Step::Copy, None) => Ok(Some(0)),
            (Step::Copy, Some(source)) => {
                let written = copy.copy_to_targets(db, source, &state).await?;
                copy.mark_done(db, &state_key, &state.seq).await?;
                Ok(Some(written))
            }
        }
    }

    /// Compares a target as its record shows it with its source's state and writes the
    /// state's value when they differ: true when written.
    async fn repair_target(&self, next: &Latest<T>) -> Result<bool, Error> {
        let (copy, db) = (self.copy, self.db);
        let (Some(target), Some(item)) = (&next.entity, &next.item) else { return Ok(false) };
        let Some(source) = copy.source_key(target)? else { return Ok(false) };
        let state = copy.read_state(db, &copy.state_key(&source)?).await?;
        let Some(state) = state.filter(|s| !s.gone) else { return Ok(false) };
        match copy.target_write(item, &state)? {
            Some(write) => copy.send_target_write(db, write).await,
            None => Ok(false),
        }
    }
}
