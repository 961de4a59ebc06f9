//! Running a re-key step: the control item that fences runs, the segments' pages, and the
//! fenced transactions that copy (or remove) the old items of a page.

use std::sync::{Mutex, MutexGuard, PoisonError};

use aws_sdk_dynamodb::types::AttributeValue;

use super::paired::info_of;
use super::{REKEY_BATCH, RekeyCheckpoint, RekeyCounts, RekeyFailure, RekeyProgress, RekeyStep};
use crate::db::Db;
use crate::error::{CancelReason, Error, RekeyProblem};
use crate::expr::ExprBuilder;
use crate::item::{Item, item_size};
use crate::key::Key;
use crate::model::{Entity, RekeyDef, Table, from_item, string_attr};
use crate::ops::action::Action;
use crate::ops::key_item;
use crate::ops::migrate::{SegmentPosition, position_of, start_of};
use crate::ops::retry::{self, REREAD_CONFLICTS};
use crate::ops::scan::entity_page;
use crate::ops::transact::MAX_TRANSACTION_BYTES;
use crate::stats::Op;

/// The attribute of the control item holding the token of the run that owns the re-key.
pub(crate) const REKEY_TOKEN_ATTR: &str = "_rekey_token";
/// The attribute of the control item naming the step its run makes.
const REKEY_STEP_ATTR: &str = "_rekey_step";

/// The control item's key: one per entity, beside no item of any entity (`~` starts no
/// escaped key part).
fn control_key<E: Entity>() -> Item {
    let text = format!("~rekey#{}", E::NAME);
    let key = Key::<E>::from_parts(text.clone(), <E::Table as Table>::SK.map(|_| text));
    key_item(&key)
}

/// Starts a run: writes the control item with the run's `token`, taking the re-key over
/// from any run before (whose transactions fail their fence check from now on).
pub(super) async fn take_over<E: Entity>(
    db: &Db<E::Table>,
    token: &str,
    step: RekeyStep,
) -> Result<(), Error> {
    let mut item = control_key::<E>();
    let tag = format!("{}:rekey", E::NAME);
    item.insert(crate::model::type_attr::<E::Table>().to_owned(), AttributeValue::S(tag));
    item.insert(REKEY_TOKEN_ATTR.to_owned(), AttributeValue::S(token.to_owned()));
    let step = match step {
        RekeyStep::Copy => "copy",
        RekeyStep::Cleanup => "cleanup",
    };
    item.insert(REKEY_STEP_ATTR.to_owned(), AttributeValue::S(step.to_owned()));
    let request = Action::put(item).put_item(db)?;
    retry::send(db, Op::PutItem, request).await.map(drop).map_err(Error::from)
}

/// Ends a finished run: removes the control item if the run still owns it.
pub(super) async fn release<E: Entity>(db: &Db<E::Table>, token: &str) -> Result<(), Error> {
    let mut x = ExprBuilder::default();
    let cond = fence(&mut x, token);
    let request = Action::delete(control_key::<E>()).guarded(cond, x).delete_item(db)?;
    match retry::send(db, Op::DeleteItem, request).await {
        Ok(_) => Ok(()),
        Err(e) => match e.into_condition_failure() {
            Ok(_) => Err(superseded::<E>(token)),
            Err(e) => Err(e),
        },
    }
}

fn fence(x: &mut ExprBuilder, token: &str) -> String {
    let attr = x.name(REKEY_TOKEN_ATTR);
    let value = x.value(AttributeValue::S(token.to_owned()));
    format!("{attr} = {value}")
}

fn superseded<E: Entity>(token: &str) -> Error {
    Error::Rekey { entity: E::NAME, problem: RekeyProblem::Superseded { token: token.to_owned() } }
}

/// What the segments of a run share.
pub(super) struct State<'a> {
    pub(super) checkpoint: RekeyCheckpoint,
    pub(super) failures: Vec<RekeyFailure>,
    pub(super) progress: Option<super::ProgressFn<'a>>,
}

/// The shared state (a panic of the progress callback unwinds out of `send`: a poisoned
/// lock is never seen again).
fn lock<'m, 'a>(state: &'m Mutex<State<'a>>) -> MutexGuard<'m, State<'a>> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(super) struct Run<'r, 'a, E: Entity> {
    pub(super) db: &'a Db<E::Table>,
    pub(super) step: RekeyStep,
    pub(super) segments: u32,
    pub(super) page_size: Option<u32>,
    pub(super) token: &'r str,
    pub(super) state: &'r Mutex<State<'a>>,
}

/// One old item of a page and what the step writes for it.
struct Move {
    /// The old item as last read.
    old: Item,
    /// Its key in the new layout.
    new_key: Item,
    /// The new copy (the copy step).
    new_item: Item,
}

/// What became of the items of a page.
#[derive(Default)]
struct Tally {
    counts: RekeyCounts,
    failures: Vec<RekeyFailure>,
}

impl<E: Entity> Run<'_, '_, E> {
    /// Every page of `segment` from its position.
    pub(super) async fn segment(&self, segment: u32) -> Result<(), Error> {
        let index = segment as usize;
        let Some(def) = E::REKEY else { return Ok(()) };
        loop {
            let position = {
                let state = lock(self.state);
                state.checkpoint.segments.get(index).cloned().unwrap_or(SegmentPosition::Done)
            };
            let Some(start) = start_of::<E>(position) else { return Ok(()) };
            let (items, scanned, next) =
                entity_page::<E>(self.db, (segment, self.segments), self.page_size, start, |b| {
                    old_prefix_filter::<E>(b, &def)
                })
                .await?;
            let next = match next {
                Some(key) => position_of::<E>(&key)?,
                None => SegmentPosition::Done,
            };
            let mut tally = Tally::default();
            tally.counts.scanned = scanned as u64;
            let mut moves = Vec::new();
            for item in items {
                match self.plan(item, &mut tally) {
                    Some(m) => moves.push(m),
                    None => continue,
                }
            }
            for chunk in chunks(moves) {
                self.send_chunk(&def, chunk, &mut tally).await?;
            }
            self.record(index, next, tally);
        }
    }

    /// The move of `item`: `None` for an item of the new layout, or one that cannot be read
    /// as `E` (counted and listed).
    fn plan(&self, old: Item, tally: &mut Tally) -> Option<Move> {
        let text = |attr: &str| string_attr(&old, attr).map(str::to_owned);
        let pk = text(<E::Table as Table>::PK)?;
        let sk = <E::Table as Table>::SK.and_then(text);
        let key = Key::<E>::from_parts(pk.clone(), sk.clone());
        // A key the old layout did not write is the new layout's (or no layout's): left.
        let new_key = E::rekey_key(&key, false).ok().flatten()?;
        let new_item = match self.step {
            RekeyStep::Copy => match new_copy::<E>(&old, &new_key) {
                Ok(item) => item,
                Err(error) => {
                    tally.counts.failed += 1;
                    tally.failures.push(RekeyFailure { pk, sk, error });
                    return None;
                }
            },
            RekeyStep::Cleanup => Item::new(),
        };
        Some(Move { old, new_key: key_item(&new_key), new_item })
    }

    /// Sends the moves of one chunk in one fenced transaction; the moves that a concurrent
    /// writer changed are sent again from the item as it is then, while tries remain.
    async fn send_chunk(
        &self,
        def: &RekeyDef,
        mut moves: Vec<Move>,
        tally: &mut Tally,
    ) -> Result<(), Error> {
        let mut attempt = 1;
        while !moves.is_empty() {
            let mut tx = self.db.transaction();
            for m in &moves {
                for (action, key) in self.actions(def, m)? {
                    let size = action.size();
                    let item = action.into_transact_item(self.db.table_name())?;
                    tx = tx.push_raw(info_of(&key), item, size);
                }
            }
            let mut x = ExprBuilder::default();
            let cond = fence(&mut x, self.token);
            let check = Action::check(control_key::<E>()).guarded(cond, x);
            let size = check.size();
            let fence_at = moves.len() * 2;
            let control = control_key::<E>();
            let text = |attr| string_attr(&control, attr).map(str::to_owned);
            let key = Key::<E>::from_parts(
                text(<E::Table as Table>::PK).unwrap_or_default(),
                <E::Table as Table>::SK.and_then(text),
            );
            tx = tx.push_raw(info_of(&key), check.into_transact_item(self.db.table_name())?, size);
            let (reasons, source) = match tx.send().await {
                Ok(()) => {
                    self.count_done(moves.len(), tally);
                    return Ok(());
                }
                Err(Error::TransactionCanceled { reasons, source }) => (reasons, Some(source)),
                Err(e) if e.is_transaction_conflict() => (Vec::new(), None),
                Err(e) => return Err(e),
            };
            let mut retry_all = reasons.is_empty();
            // What each move's two actions said: (the write's, the other copy's check's).
            let mut outcome: Vec<(Option<Error>, Option<Error>)> =
                moves.iter().map(|_| (None, None)).collect();
            for r in reasons {
                if r.action == fence_at && matches!(r.reason, CancelReason::Condition(_)) {
                    return Err(superseded::<E>(self.token));
                }
                match r.reason {
                    CancelReason::None => {}
                    CancelReason::TransactionConflict { .. } => retry_all = true,
                    CancelReason::Condition(e) => {
                        if let Some(slot) = outcome.get_mut(r.action / 2) {
                            if r.action % 2 == 0 { slot.0 = Some(e) } else { slot.1 = Some(e) }
                        }
                    }
                    other => {
                        let reasons = vec![crate::error::ActionReason { reason: other, ..r }];
                        if let Some(source) = source {
                            return Err(Error::TransactionCanceled { reasons, source });
                        }
                        retry_all = true;
                    }
                }
            }
            let mut again = Vec::with_capacity(moves.len());
            for (m, (write, check)) in moves.into_iter().zip(outcome) {
                match self.step {
                    RekeyStep::Copy => match (write, check) {
                        // The old item changed or went: copy it as it is now, if it is.
                        (_, Some(e)) => match e.current_item() {
                            Some(current) => {
                                tally.counts.changed += 1;
                                let Some(m) = self.plan(current.clone(), tally) else { continue };
                                again.push(m);
                            }
                            None => tally.counts.gone += 1,
                        },
                        // A new copy exists: it is newer, or an earlier run's.
                        (Some(_), None) => tally.counts.already_new += 1,
                        (None, None) => again.push(m),
                    },
                    RekeyStep::Cleanup => match (write, check) {
                        (Some(e), _) => match e.current_item() {
                            Some(current) => {
                                tally.counts.changed += 1;
                                let Some(m) = self.plan(current.clone(), tally) else { continue };
                                again.push(m);
                            }
                            None => tally.counts.gone += 1,
                        },
                        (None, Some(_)) => tally.counts.not_copied += 1,
                        (_, None) => again.push(m),
                    },
                }
            }
            moves = again;
            if moves.is_empty() {
                return Ok(());
            }
            if attempt >= REREAD_CONFLICTS.tries {
                let key = moves.first().map(|m| old_key_text::<E>(&m.old)).unwrap_or_default();
                return Err(Error::Rekey {
                    entity: E::NAME,
                    problem: RekeyProblem::Contended { key },
                });
            }
            if retry_all {
                REREAD_CONFLICTS.pause(attempt).await;
            }
            attempt += 1;
        }
        Ok(())
    }

    /// The two actions of a move, with the keys that name them: the copy step's put of the
    /// new copy (none may exist) and check of the old item (as read); the cleanup's delete of
    /// the old item (as read) and check of the new copy (it exists).
    fn actions(&self, def: &RekeyDef, m: &Move) -> Result<[(Action, Key<E>); 2], Error> {
        let pk = <E::Table as Table>::PK;
        let names = |item: &Item| {
            let text = |attr| string_attr(item, attr).map(str::to_owned);
            Key::<E>::from_parts(
                text(pk).unwrap_or_default(),
                <E::Table as Table>::SK.and_then(text),
            )
        };
        let old_key = key_of::<E>(&m.old);
        let mut x = ExprBuilder::default();
        let as_read = unchanged::<E::Table>(&mut x, def, &m.old);
        let mut y = ExprBuilder::default();
        let attr = y.name(pk);
        Ok(match self.step {
            RekeyStep::Copy => [
                (
                    // No new copy, or a stale one (written before every process kept both).
                    {
                        let same = unchanged::<E::Table>(&mut y, def, &m.new_item);
                        let cond = format!("attribute_not_exists({attr}) OR NOT ({same})");
                        Action::put(m.new_item.clone()).guarded(cond, y)
                    },
                    names(&m.new_key),
                ),
                (Action::check(old_key).guarded(as_read, x).return_old(true), names(&m.old)),
            ],
            RekeyStep::Cleanup => [
                (Action::delete(old_key).guarded(as_read, x).return_old(true), names(&m.old)),
                (
                    Action::check(m.new_key.clone())
                        .guarded(format!("attribute_exists({attr})"), y),
                    names(&m.new_key),
                ),
            ],
        })
    }

    fn count_done(&self, n: usize, tally: &mut Tally) {
        match self.step {
            RekeyStep::Copy => tally.counts.copied += n as u64,
            RekeyStep::Cleanup => tally.counts.removed += n as u64,
        }
    }

    /// Adds a page's tally to the checkpoint, moves the segment on and reports progress.
    fn record(&self, index: usize, next: SegmentPosition, tally: Tally) {
        let mut state = lock(self.state);
        let State { checkpoint, failures, progress } = &mut *state;
        let c = &mut checkpoint.counts;
        let t = tally.counts;
        c.scanned += t.scanned;
        c.copied += t.copied;
        c.already_new += t.already_new;
        c.removed += t.removed;
        c.not_copied += t.not_copied;
        c.gone += t.gone;
        c.changed += t.changed;
        c.failed += t.failed;
        failures.extend(tally.failures);
        if let Some(slot) = checkpoint.segments.get_mut(index) {
            *slot = next;
        }
        if let Some(progress) = progress {
            let done = checkpoint.segments.iter().filter(|s| **s == SegmentPosition::Done);
            progress(&RekeyProgress {
                counts: checkpoint.counts,
                segments_done: u32::try_from(done.count()).unwrap_or(u32::MAX),
                segments: self.segments,
                checkpoint: checkpoint.clone(),
            });
        }
    }
}

/// Moves in chunks of at most [`REKEY_BATCH`], and of at most 4 MB with the fence (each
/// move's bytes counted twice: its write and its condition's values).
fn chunks(moves: Vec<Move>) -> Vec<Vec<Move>> {
    let budget = MAX_TRANSACTION_BYTES / 2 - 1024;
    let mut out: Vec<Vec<Move>> = Vec::new();
    let mut bytes = 0;
    for m in moves {
        let size = item_size(&m.old).max(item_size(&m.new_item));
        match out.last_mut() {
            Some(last) if last.len() < REKEY_BATCH && bytes + size <= budget => {
                bytes += size;
                last.push(m);
            }
            _ => {
                bytes = size;
                out.push(vec![m]);
            }
        }
    }
    out
}

/// The new copy of `old`: the item as stored, under `new_key`, its index keys computed again
/// from the entity it holds.
fn new_copy<E: Entity>(old: &Item, new_key: &Key<E>) -> Result<Item, Error> {
    let entity: E = from_item(old.clone())?;
    let mut item = old.clone();
    item.extend(key_item(new_key));
    let mut indexes = Vec::new();
    entity.index_keys(&mut |def, pk, sk| indexes.push((def, pk, sk)))?;
    for (def, pk, sk) in indexes {
        item.insert(def.pk.to_owned(), AttributeValue::S(pk));
        if let (Some(attr), Some(sk)) = (def.sk, sk) {
            item.insert(attr.to_owned(), AttributeValue::S(sk));
        }
    }
    Ok(item)
}

/// The primary key of a stored item.
fn key_of<E: Entity>(item: &Item) -> Item {
    let mut key = Item::with_capacity(2);
    for attr in std::iter::once(<E::Table as Table>::PK).chain(<E::Table as Table>::SK) {
        if let Some(value) = item.get(attr) {
            key.insert(attr.to_owned(), value.clone());
        }
    }
    key
}

fn old_key_text<E: Entity>(item: &Item) -> String {
    let pk = string_attr(item, <E::Table as Table>::PK);
    let sk = <E::Table as Table>::SK.and_then(|a| string_attr(item, a));
    crate::model::key_display(pk, sk)
}

/// The condition that the item is exactly as `read`: every attribute it had holds the same
/// value, and every field attribute it did not have is still missing.
pub(crate) fn unchanged<T: Table>(x: &mut ExprBuilder, def: &RekeyDef, read: &Item) -> String {
    let mut parts = Vec::with_capacity(read.len() + def.attrs.len());
    let mut names: Vec<&String> = read.keys().collect();
    names.sort();
    for name in names {
        if name == T::PK || T::SK == Some(name.as_str()) {
            continue;
        }
        let Some(value) = read.get(name) else { continue };
        let n = x.name(name);
        let v = x.value(value.clone());
        parts.push(format!("{n} = {v}"));
    }
    for attr in def.attrs {
        if !read.contains_key(*attr) {
            let n = x.name(attr);
            parts.push(format!("attribute_not_exists({n})"));
        }
    }
    parts.join(" AND ")
}

/// `begins_with(pk, "OLD#")` when the old partition key template starts with text: the
/// scan returns only items that may be old ones.
fn old_prefix_filter<E: Entity>(b: &mut ExprBuilder, def: &RekeyDef) -> Option<String> {
    let prefix: String = def.pk.chars().take_while(|c| *c != '<').collect();
    if prefix.is_empty() {
        return None;
    }
    let attr = b.name(<E::Table as Table>::PK);
    let value = b.value(AttributeValue::S(prefix));
    Some(format!("begins_with({attr}, {value})"))
}
