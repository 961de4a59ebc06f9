//! Coalescing (`Db::with_coalescing`): concurrent requests of one handle gathered within a
//! window into batches, each caller handed its own outcome: `get`s into one `BatchGetItem`
//! per 100 distinct keys, unconditional `put`s and `delete`s into `BatchWriteItem`s of 25.
//!
//! The first request of a gathering leads it: it waits the window, closes the gathering and
//! sends it ([`gathered`]). Requests that arrive meanwhile join it and wait for the answer;
//! one that finds it full opens the next. A request alone in its window is sent alone. When
//! the batch fails, or its leader is dropped before it answered, every caller sends its own
//! request, so each gets its own result or typed error.
//!
//! Gets ([`get`]) run through [`GetPlan::run`] (unprocessed keys retried as every batch get);
//! consistent and eventually consistent gets gather apart (`ConsistentRead` is per table in
//! `BatchGetItem`). Writes ([`write`]) are offered by `ops/put.rs` and `ops/delete.rs` just
//! before they would be sent alone, and join only when the batch keeps their meaning. A
//! gathering's writes of one key go in successive rounds, in the order they joined (the
//! service refuses a batch naming a key twice); each round goes through the batch writer
//! (unprocessed writes retried). A write the batch did not apply (its request failed, or it
//! stayed unprocessed) is sent alone by its caller: it is a plain put or delete, so sending
//! it again is safe.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::keys::RawKey;
use super::read::{GetPlan, GetSpec};
use super::run::Retry;
use super::write::{Sent, WriteSpec, send_writes};
use super::{MAX_BATCH_GET_KEYS, MAX_BATCH_WRITES};
use crate::db::{Db, Gather, GatherKey, GatherWrite, Slot};
use crate::error::BatchAction;
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, Table};
use crate::ops::action::{Action, Kind};
use crate::stats::Op;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The item of `key` (its key attributes `item`), read in a gathering of `db`:
/// `Some(item or None)` when the batch answered, `None` when the caller must send its own
/// `GetItem` (also on a handle without coalescing).
pub(crate) async fn get<T: Table, E: Entity>(
    db: &Db<T>,
    key: &Key<E>,
    item: &Item,
    consistent: bool,
) -> Option<Option<Item>> {
    let coalescing = db.coalescing()?;
    let add = |keys: &mut Vec<GatherKey>| {
        // The key sent (a re-keyed entity's phase may read another copy than `key` names);
        // a key asked twice is read once.
        if let Some(n) = keys.iter().position(|k| k.3 == *item) {
            return Some(n);
        }
        if keys.len() >= MAX_BATCH_GET_KEYS {
            return None;
        }
        keys.push((key.pk().to_owned(), key.sk().map(str::to_owned), E::NAME, item.clone()));
        Some(keys.len() - 1)
    };
    let send = |keys| async move { plan(keys).run(db, consistent, Retry::default()).await.ok() };
    let slot = &coalescing.gets[usize::from(consistent)];
    let (items, index) = gathered(coalescing.window, slot, add, send).await?;
    items.get(index).cloned()
}

/// Offers `action`, a write of `entity` about to be sent alone as a `PutItem` or
/// `DeleteItem`, to the gathering of writes of `db`: `true` when a `BatchWriteItem` applied
/// it, `false` when the caller must send it alone (as it does when it cannot join).
///
/// It joins only when the batch keeps what the single request means: a coalescing handle
/// without an interceptor (which may add a condition to each `PutItem` and `DeleteItem`),
/// outside a dry run, a put or delete with no condition expression at all (the caller's,
/// the entity-type guard, a version, a create's or a unique constraint's: every condition
/// the request would carry), inside the handle's tenant (a refused write fails alone, as
/// before). Callers offer only writes that return nothing.
pub(crate) async fn write<T: Table>(db: &Db<T>, entity: &'static str, action: &Action) -> bool {
    let Some(coalescing) = db.coalescing() else { return false };
    if action.condition.is_some()
        || db.interceptor().is_some()
        || crate::ops::dry::current().is_some()
    {
        return false;
    }
    // The write as a batch sends it, built as `BatchWrite` builds its own.
    let (spec, allowed) = match &action.kind {
        Kind::Put(item) => (
            RawKey::from_item::<T>(item).map(|raw| WriteSpec::put(entity, raw, item.clone())),
            crate::ops::tenant::item(db, Op::PutItem, item),
        ),
        Kind::Delete(key) => (
            RawKey::from_item::<T>(key).map(|raw| WriteSpec::delete(entity, raw, key.clone())),
            crate::ops::tenant::key(db, Op::DeleteItem, key),
        ),
        Kind::Update { .. } | Kind::Check(_) => return false,
    };
    let (Some(Ok(spec)), Ok(())) = (spec, allowed) else {
        return false;
    };
    let mut member = Some((spec.raw.pk, spec.raw.sk, entity, spec.request));
    let add = |writes: &mut Vec<GatherWrite>| {
        if writes.len() >= MAX_BATCH_WRITES {
            return None;
        }
        writes.push(member.take()?);
        Some(writes.len() - 1)
    };
    let send = |writes| async move { Some(send_rounds(db, writes).await) };
    gathered(coalescing.window, &coalescing.writes, add, send)
        .await
        .is_some_and(|(written, index)| written.get(index).copied().unwrap_or(false))
}

/// Joins the gathering open in `slot` (`add` puts the request among its members: its index,
/// or `None` when the gathering is full), or opens one and leads it: waits `window`, closes
/// it and, when more than one request joined, `send`s its members. The answer and the
/// request's index, or `None` when the caller must send its own request.
async fn gathered<K, A, F>(
    window: std::time::Duration,
    slot: &Slot<K, A>,
    mut add: impl FnMut(&mut Vec<K>) -> Option<usize>,
    send: impl FnOnce(Vec<K>) -> F,
) -> Option<(Arc<A>, usize)>
where
    F: Future<Output = Option<A>>,
{
    let (gather, index, leads) = {
        let mut open = lock(slot);
        let joined = open.as_ref().and_then(|g| Some((Arc::clone(g), g.add(&mut add)?)));
        match joined {
            Some((gather, index)) => (gather, index, false),
            None => {
                // None open, or the open one is full: this request starts the next.
                let gather = Arc::new(Gather::default());
                let index = gather.add(&mut add)?;
                *open = Some(Arc::clone(&gather));
                (gather, index, true)
            }
        }
    };
    if leads {
        let guard = Lead { slot, gather: &gather };
        tokio::time::sleep(window).await;
        let members = guard.close();
        // A request alone in its window is sent by itself.
        let answer =
            if gather.joined.load(Ordering::SeqCst) > 1 { send(members).await } else { None };
        gather.answer(answer.map(Arc::new));
        std::mem::forget(guard);
    }
    let mut answered = gather.result.subscribe();
    let answer = answered.wait_for(Option::is_some).await.ok()?.clone()?;
    Some((answer.ok()?, index))
}

/// The leader of a gathering: dropped before it answered (the caller gave up), it closes
/// the gathering and tells the others to send their own requests.
struct Lead<'g, K, A> {
    slot: &'g Slot<K, A>,
    gather: &'g Arc<Gather<K, A>>,
}

impl<K, A> Lead<'_, K, A> {
    /// Closes the gathering to new requests: its members.
    fn close(&self) -> Vec<K> {
        let mut open = lock(self.slot);
        if open.as_ref().is_some_and(|g| Arc::ptr_eq(g, self.gather)) {
            *open = None;
        }
        std::mem::take(&mut *lock(&self.gather.members))
    }
}

impl<K, A> Drop for Lead<'_, K, A> {
    fn drop(&mut self) {
        self.close();
        self.gather.answer(None);
    }
}

impl<K, A> Gather<K, A> {
    /// Adds a request with `add` (under the lock of the slot the gathering is open in):
    /// its index, or `None` when the gathering is full.
    fn add(&self, add: &mut impl FnMut(&mut Vec<K>) -> Option<usize>) -> Option<usize> {
        let index = add(&mut lock(&self.members))?;
        self.joined.fetch_add(1, Ordering::SeqCst);
        Some(index)
    }

    /// Answers the gathering: `A`, or `None` (each sends its own request).
    fn answer(&self, answer: Option<Arc<A>>) {
        self.result.send_replace(Some(answer.ok_or(())));
    }
}

/// A plan reading each of `keys` once (they are distinct).
fn plan(keys: Vec<GatherKey>) -> GetPlan {
    let mut plan = GetPlan { index: HashMap::with_capacity(keys.len()), ..GetPlan::default() };
    for (n, (pk, sk, entity, key)) in keys.into_iter().enumerate() {
        let raw = RawKey { pk, sk };
        plan.index.insert(raw.clone(), n);
        plan.specs.push(GetSpec { raw, entity, key });
        plan.positions.push(n);
    }
    plan
}

/// Sends gathered `writes` in rounds of distinct keys (the `n`th write of a key in round
/// `n`), one round after the other, each through the batch writer: which writes were
/// applied. After a round whose request failed, no other is sent.
async fn send_rounds<T: Table>(db: &Db<T>, writes: Vec<GatherWrite>) -> Vec<bool> {
    let mut written = vec![false; writes.len()];
    // The cost report's entity, when the writes are all one entity's.
    let first = writes.first().map(|w| w.2);
    let entity = first.filter(|e| writes.iter().all(|w| w.2 == *e));
    let mut seen: HashMap<RawKey, usize> = HashMap::with_capacity(writes.len());
    let mut rounds: Vec<(Vec<usize>, Vec<WriteSpec>)> = Vec::new();
    for (i, (pk, sk, entity, request)) in writes.into_iter().enumerate() {
        let raw = RawKey { pk, sk };
        let round = seen.entry(raw.clone()).or_default();
        if rounds.len() <= *round {
            rounds.push((Vec::new(), Vec::new()));
        }
        let action =
            if request.put_request.is_some() { BatchAction::Put } else { BatchAction::Delete };
        let (indexes, specs) = &mut rounds[*round];
        indexes.push(i);
        specs.push(WriteSpec { action, entity, raw, request });
        *round += 1;
    }
    for (indexes, specs) in rounds {
        let Sent { unprocessed, failure, .. } =
            send_writes(db, &specs, Retry::default(), entity).await;
        for &i in &indexes {
            written[i] = true;
        }
        for n in unprocessed {
            if let Some(&i) = indexes.get(n) {
                written[i] = false;
            }
        }
        if failure.is_some() {
            break;
        }
    }
    written
}
