//! Coalescing (`Db::with_coalescing`): concurrent `get`s of one handle gathered within a
//! window into one `BatchGetItem` per 100 distinct keys, each caller handed its own item.
//!
//! The first get of a gathering leads it: it waits the window, closes the gathering and
//! sends it through [`GetPlan::run`] (chunks, unprocessed keys retried as every batch get).
//! Gets that arrive meanwhile join it and wait for the result. Eventually consistent and
//! consistent gets gather apart (`ConsistentRead` is per table in `BatchGetItem`). When the
//! batch fails, or its leader is dropped before it answered, every caller sends its own
//! `GetItem`, so each gets its own result or typed error.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::MAX_BATCH_GET_KEYS;
use super::keys::RawKey;
use super::read::{GetPlan, GetSpec};
use super::run::Retry;
use crate::db::{Coalescing, Db, Gather};
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, Table};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The item of `key` (its key attributes `item`), read in a gathering of `coalescing`:
/// `Some(item or None)` when the batch answered, `None` when the caller must send its own
/// `GetItem`.
pub(crate) async fn get<T: Table, E: Entity>(
    db: &Db<T>,
    coalescing: &Coalescing,
    key: &Key<E>,
    item: &Item,
    consistent: bool,
) -> Option<Option<Item>> {
    let (gather, index, leads) = {
        let mut open = lock(&coalescing.open);
        let slot = &mut open[usize::from(consistent)];
        let joined = slot.as_ref().and_then(|g| Some((Arc::clone(g), g.add(key, E::NAME, item)?)));
        match joined {
            Some((gather, index)) => (gather, index, false),
            None => {
                // None open, or the open one is full: this get starts the next.
                let gather = Arc::new(Gather::default());
                let index = gather.add(key, E::NAME, item)?;
                *slot = Some(Arc::clone(&gather));
                (gather, index, true)
            }
        }
    };
    if leads {
        let guard = Lead { coalescing, gather: &gather, consistent };
        tokio::time::sleep(coalescing.window).await;
        let specs = guard.close();
        // A get alone in its window is sent as a `GetItem`, by itself.
        let result = if gather.gets.load(Ordering::SeqCst) > 1 {
            plan(specs).run(db, consistent, Retry::default()).await.ok()
        } else {
            None
        };
        gather.answer(result.map(Arc::new));
        std::mem::forget(guard);
    }
    let mut answered = gather.result.subscribe();
    let answer = answered.wait_for(Option::is_some).await.ok()?.clone()?;
    let items = answer.as_ref().ok()?;
    items.get(index).cloned()
}

/// The leader of a gathering: dropped before it answered (the caller gave up), it closes
/// the gathering and tells the others to send their own requests.
struct Lead<'g> {
    coalescing: &'g Coalescing,
    gather: &'g Arc<Gather>,
    consistent: bool,
}

impl Lead<'_> {
    /// Closes the gathering to new gets: its keys.
    fn close(&self) -> Vec<(RawKey, &'static str, Item)> {
        let mut open = lock(&self.coalescing.open);
        let slot = &mut open[usize::from(self.consistent)];
        if slot.as_ref().is_some_and(|g| Arc::ptr_eq(g, self.gather)) {
            *slot = None;
        }
        std::mem::take(&mut *lock(&self.gather.keys))
            .into_iter()
            .map(|(pk, sk, entity, item)| (RawKey { pk, sk }, entity, item))
            .collect()
    }
}

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        self.close();
        self.gather.answer(None);
    }
}

/// A plan reading each of `specs` once (they are distinct).
fn plan(specs: Vec<(RawKey, &'static str, Item)>) -> GetPlan {
    let mut plan = GetPlan { index: HashMap::with_capacity(specs.len()), ..GetPlan::default() };
    for (n, (raw, entity, key)) in specs.into_iter().enumerate() {
        plan.index.insert(raw.clone(), n);
        plan.specs.push(GetSpec { raw, entity, key });
        plan.positions.push(n);
    }
    plan
}

impl Gather {
    /// Adds `key` (merged with an equal key joined before): its index, or `None` when the
    /// gathering is full.
    fn add<E>(&self, key: &Key<E>, entity: &'static str, item: &Item) -> Option<usize> {
        let mut keys = lock(&self.keys);
        self.gets.fetch_add(1, Ordering::SeqCst);
        // The key sent (a re-keyed entity's phase may read another copy than `key` names).
        if let Some(n) = keys.iter().position(|k| k.3 == *item) {
            return Some(n);
        }
        if keys.len() >= MAX_BATCH_GET_KEYS {
            self.gets.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        keys.push((key.pk().to_owned(), key.sk().map(str::to_owned), entity, item.clone()));
        Some(keys.len() - 1)
    }

    /// Answers the gathering: the items by index, or `None` (each sends its own request).
    fn answer(&self, items: Option<Arc<Vec<Option<Item>>>>) {
        self.result.send_replace(Some(items.ok_or(())));
    }
}
