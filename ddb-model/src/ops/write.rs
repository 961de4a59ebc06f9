//! The one write pipeline. A `put`, `update` or `delete` is a [`Write`]: a primary action
//! (the item's own write and its guard) that the steps of other features add to. The unique
//! step ([`unique::additions`]) adds a condition (the values as read) and sentinel actions;
//! it may need the item as stored, so a write that depends on it reads first.
//!
//! [`run`] sends a write: one `PutItem`, `UpdateItem` or `DeleteItem` when the steps added no
//! action, one `TransactWriteItems` of the item and its additions when they did, and from a
//! new read again when a concurrent writer changed what was read. A composed transaction
//! takes the same actions through [`Transaction`](crate::ops::Transaction)'s writes. No step
//! calls back into the operation that asked.

use std::future::Future;

use super::action::Action;
use super::retry::{self, UNIQUE_CONFLICTS};
use super::transact::{ActionInfo, CancelReason};
use super::unique::{self, Additions, Change};
use super::{BoxFuture, key_item};
use crate::db::Db;
use crate::error::{ActionReason, Error};
use crate::expr::Node;
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, Table};
use crate::stats::Op;

/// A write of one item, as the pipeline sees it. `want` says whether the caller wants an
/// item back (the entity an update wrote, the item a delete removed).
pub(crate) trait Write<E: Entity>: Send {
    /// What the write returns.
    type Out: Send;
    /// The write deletes its item (a re-keyed entity's deletes remove both copies in every
    /// phase, so that no old copy outlives its item).
    const DELETES: bool = false;
    /// What a committed transaction leaves the write to do (store a version in a `&mut`
    /// entity, return the result computed before sending).
    type Done: Send;

    fn db(&self) -> &Db<E::Table>;

    /// The item's key, with every check that needs no request.
    fn key(&self) -> Result<Key<E>, Error>;

    /// What the write does to the values of unique constraints.
    fn change(&self) -> Result<Change<'_, E>, Error>;

    /// The primary action, guarded, with `held` added to its condition, as one action of a
    /// transaction; `stored` is the item as read (when the write reads).
    fn action(
        &self,
        held: Option<&Node>,
        stored: Option<&Item>,
        want: bool,
    ) -> Result<(ActionInfo, Action, Self::Done), Error>;

    /// Sends the primary action alone, as its own request, with `held` added to its condition.
    fn send_alone(
        &mut self,
        held: Option<&Node>,
        want: bool,
    ) -> impl Future<Output = Result<Self::Out, Error>> + Send;

    /// The write's result after its transaction committed (`stored`: the item as read).
    fn finish(
        &mut self,
        done: Self::Done,
        stored: Option<Item>,
        want: bool,
    ) -> Result<Self::Out, Error>;

    /// The result of a write that cannot compute it before sending (an update that adds or
    /// appends), from its item read back after its transaction (a re-keyed entity's write
    /// of both copies); `None` for a write that always computes it.
    fn read_back(&mut self, item: Option<Item>) -> Option<Result<Self::Out, Error>> {
        let _ = item;
        None
    }

    /// The answer of a write that read no item and has nothing to do then (a delete).
    fn absent(&self) -> Option<Result<Self::Out, Error>> {
        None
    }

    /// What a composed transaction does after it committed (store the version in a `&mut`
    /// entity).
    fn on_commit<'a>(self, _done: Self::Done) -> Option<Box<dyn FnOnce() + Send + 'a>>
    where
        Self: Sized + 'a,
    {
        None
    }
}

/// Sends `w` (see the module): a single request when nothing is added, else one transaction;
/// tried again from a new read while concurrent writers overtake it (up to
/// [`UNIQUE_CONFLICTS`]).
pub(crate) async fn run<E: Entity, W: Write<E>>(mut w: W, want: bool) -> Result<W::Out, Error> {
    // A re-keyed entity (never one with unique fields) mid-way: both copies, or the old one.
    if E::REKEY.is_some()
        && (W::DELETES || w.db().rekey_phase::<E>() != super::rekey::RekeyPhase::New)
    {
        return Box::pin(super::rekey::run_paired(w, want)).await;
    }
    if E::UNIQUES.is_empty() {
        return w.send_alone(None, want).await;
    }
    // Boxed: the steps' requests (a read, a transaction) would otherwise make every write's
    // future as large as theirs, and moving it costs more than the allocation.
    Box::pin(with_steps(w, want)).await
}

/// [`run`] for an entity whose writes the unique step may add to.
async fn with_steps<E: Entity, W: Write<E>>(mut w: W, want: bool) -> Result<W::Out, Error> {
    let key = w.key()?;
    let reads = w.change()?.reads();
    let mut attempt = 1;
    loop {
        let stored = if reads { read(w.db(), &key).await? } else { None };
        if reads
            && stored.is_none()
            && let Some(answer) = w.absent()
        {
            return answer;
        }
        let Additions { held, actions } = unique::additions(&key, &w.change()?, stored.as_ref())?;
        let failed = if actions.is_empty() {
            match w.send_alone(held.as_ref(), want).await {
                Ok(out) => return Ok(out),
                Err(e) => Failed::Item(e),
            }
        } else {
            let (info, action, done) = w.action(held.as_ref(), stored.as_ref(), want)?;
            match commit(w.db(), (info, action), actions).await {
                Ok(()) => return w.finish(done, stored, want),
                Err(failed) => failed,
            }
        };
        failed.again::<E>(reads, attempt, stored.as_ref())?;
        UNIQUE_CONFLICTS.pause(attempt).await;
        attempt += 1;
    }
}

/// The actions of `w` in a composed transaction: its primary action and the steps'
/// additions, after a read of the item when the steps need it (rendered when the
/// transaction is sent).
pub(crate) fn actions<'a, E: Entity, W: Write<E> + 'a>(w: W) -> Result<Planned<'a>, Error> {
    super::rekey::refuse_in::<E, E::Table>(
        w.db(),
        "a write in a composed transaction",
        super::rekey::PAIRED,
    )?;
    if E::UNIQUES.is_empty() {
        return Ok(Planned::Ready(vec![transaction_action(w, None, None)?]));
    }
    if !w.change()?.reads() {
        return Ok(Planned::Ready(transaction_actions(w, None)?));
    }
    Ok(Planned::Deferred(Box::pin(async move {
        let key = w.key()?;
        let stored = read(w.db(), &key).await?;
        transaction_actions(w, stored.as_ref())
    })))
}

/// A write's actions for a composed transaction, ready or after a read.
pub(crate) enum Planned<'a> {
    Ready(Vec<TxAction<'a>>),
    Deferred(BoxFuture<'a, Result<Vec<TxAction<'a>>, Error>>),
}

/// One action of a composed transaction: what names it, the action, what runs on commit.
pub(crate) type TxAction<'a> = (ActionInfo, Action, Option<Box<dyn FnOnce() + Send + 'a>>);

fn transaction_actions<'a, E: Entity, W: Write<E> + 'a>(
    w: W,
    stored: Option<&Item>,
) -> Result<Vec<TxAction<'a>>, Error> {
    let key = w.key()?;
    let Additions { held, actions } = unique::additions(&key, &w.change()?, stored)?;
    let mut out = Vec::with_capacity(1 + actions.len());
    out.push(transaction_action(w, held.as_ref(), stored)?);
    out.extend(actions.into_iter().map(|(info, action)| (info, action, None)));
    Ok(out)
}

fn transaction_action<'a, E: Entity, W: Write<E> + 'a>(
    w: W,
    held: Option<&Node>,
    stored: Option<&Item>,
) -> Result<TxAction<'a>, Error> {
    let (info, action, done) = w.action(held, stored, false)?;
    Ok((info, action, w.on_commit(done)))
}

/// The item of `key` as stored (strongly consistent), with the library's markers; `None`
/// when there is none.
pub(crate) async fn read<E: Entity>(
    db: &Db<E::Table>,
    key: &Key<E>,
) -> Result<Option<Item>, Error> {
    read_item(db, key_item(key), retry::Call::of(Op::GetItem, E::NAME)).await
}

/// The item at `key` (its key attributes) as stored: one strongly consistent `GetItem`,
/// counted as `call`, refused before sending when the key is outside the handle's tenant.
pub(crate) async fn read_item<'c, T: Table>(
    db: &Db<T>,
    key: Item,
    call: impl Into<retry::Call<'c>>,
) -> Result<Option<Item>, Error> {
    super::tenant::key(db, Op::GetItem, &key)?;
    let request = db
        .client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(key))
        .consistent_read(true)
        .set_return_consumed_capacity(db.capacity_mode());
    Ok(retry::send(db, call, request).await?.item)
}

/// How a try that did not go through ended.
pub(crate) enum Failed {
    /// Another transaction was in progress on one of the items: try again.
    Conflict(Error),
    /// The item's own write failed (its guard, its condition, or the request).
    Item(Error),
    /// Anything else, as the write's error (a claimed value is [`Error::Unique`]).
    Other(Error),
}

impl Failed {
    /// `Ok` when another try may succeed: a transaction conflict, or (for a write that
    /// read) a concurrent writer that changed what was read; else the error.
    fn again<E: Entity>(self, reads: bool, attempt: u32, read: Option<&Item>) -> Result<(), Error> {
        let last = attempt >= UNIQUE_CONFLICTS.tries;
        match self {
            Failed::Conflict(_) if !last => Ok(()),
            Failed::Item(e) if reads && !last && unique::overtaken::<E>(read, e.current_item()) => {
                Ok(())
            }
            Failed::Conflict(e) | Failed::Item(e) | Failed::Other(e) => Err(e),
        }
    }
}

/// Sends the item's action and the added ones as one `TransactWriteItems`.
pub(crate) async fn commit<T: Table>(
    db: &Db<T>,
    (info, action): (ActionInfo, Action),
    added: Vec<(ActionInfo, Action)>,
) -> Result<(), Failed> {
    let mut tx = db.transaction();
    for (info, action) in std::iter::once((info, action)).chain(added) {
        let size = action.size();
        match action.into_transact_item(db.table_name()) {
            Ok(item) => tx = tx.push_raw(info, item, size),
            Err(e) => return Err(Failed::Other(e)),
        }
    }
    match tx.send().await {
        Ok(()) => Ok(()),
        Err(e) if e.is_transaction_conflict() => Err(Failed::Conflict(e)),
        Err(Error::TransactionCanceled { reasons, source }) => {
            let mut item_error = None;
            let mut added_error = None;
            let mut rest = Vec::with_capacity(reasons.len());
            for r in reasons {
                match r.reason {
                    CancelReason::Condition(e) if r.action == 0 && item_error.is_none() => {
                        item_error = Some(e)
                    }
                    CancelReason::Condition(e) if r.action > 0 && added_error.is_none() => {
                        added_error = Some(e)
                    }
                    reason => rest.push(ActionReason { reason, ..r }),
                }
            }
            Err(match (item_error, added_error) {
                (Some(e), _) => Failed::Item(e),
                (None, Some(e)) => Failed::Other(e),
                (None, None) => Failed::Other(Error::TransactionCanceled { reasons: rest, source }),
            })
        }
        Err(e) => Err(Failed::Other(e)),
    }
}
