//! The tree's bookkeeping requests, rendered by hand: revision bumps, guarded deletes, the
//! intent record and the check against it. They name attributes the entity does not have
//! (the revision, the intent's fields), so they do not go through the typed expressions.

use std::future::Future;

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use super::conflict::Failed;
use super::handle::{Addressing, Tree};
use super::op::{OpPhase, OpReport, TreeOp};
use super::{TREE_REV_ATTR, TreeProblem, pk_attr, problem};
use crate::error::{Error, IntentReason};
use crate::expr::ExprBuilder;
use crate::item::{Item, item_size};
use crate::model::{Entity, Table, string_attr};
use crate::ops::Transaction;
use crate::ops::action::Action;
use crate::ops::retry::{self, REREAD_CONFLICTS, SendError, Try};
use crate::ops::{MAX_TRANSACTION_ACTIONS, MAX_TRANSACTION_BYTES};
use crate::stats::Op;

/// Attributes of the intent record.
pub(crate) const OP_KIND: &str = "op";
/// The operation kind of a bulk load, which every other write of the tree waits for.
pub(crate) const OP_LOAD: &str = "load";
/// The number of nodes of a bulk load.
pub(crate) const OP_NODES: &str = "nodes";
pub(crate) const OP_FROM: &str = "from";
pub(crate) const OP_TO: &str = "to";
pub(crate) const OP_PHASE: &str = "phase";
pub(crate) const OP_TOKEN: &str = "token";
/// The new parent of a closure or adjacency move (escaped id, empty for the top level).
pub(crate) const OP_PARENT: &str = "parent";
/// The ancestors of a closure move's node before and after the move (encoded chains).
pub(crate) const OP_OLD_UP: &str = "old_up";
pub(crate) const OP_NEW_UP: &str = "new_up";
/// The epoch of the intent: 0 when the operation starts, advanced by every `resume` and
/// `rollback` before they write anything. Every write of the protocol is conditioned on the
/// token and the epoch it runs under, so a writer that recovery took over is fenced off.
pub(crate) const OP_EPOCH: &str = "epoch";

/// The largest number of values in one `IN` list.
const MAX_IN_VALUES: usize = 100;

pub(crate) fn s(text: &str) -> AttributeValue {
    AttributeValue::S(text.to_owned())
}

pub(crate) fn key_of<E: Entity>(pk: &str, sk: &str) -> Item {
    let mut key = Item::new();
    key.insert(pk_attr::<E>().to_owned(), s(pk));
    if let Some(attr) = <E::Table as Table>::SK {
        key.insert(attr.to_owned(), s(sk));
    }
    key
}

/// `pk exists AND type = E`.
/// `pk exists AND type = E`.
pub(crate) fn is_node<E: Entity>(x: &mut ExprBuilder) -> String {
    let pk = x.name(pk_attr::<E>());
    let t = x.name(crate::model::type_attr::<E::Table>());
    let name = x.value(s(E::NAME));
    format!("attribute_exists({pk}) AND {t} = {name}")
}

/// The action `action` makes of the key of the item `(pk, sk)`, guarded by `cond`, rendered;
/// its size counts `extra` bytes more than the key.
pub(crate) fn guarded<E: Entity>(
    table: &str,
    (pk, sk): (&str, String),
    action: impl FnOnce(Item) -> Action,
    cond: String,
    x: ExprBuilder,
    extra: usize,
) -> Result<RawAction, Error> {
    let key = key_of::<E>(pk, &sk);
    let size = item_size(&key) + extra;
    let item = action(key).guarded(cond, x).into_transact_item(table)?;
    Ok(RawAction { sk, item, size })
}

/// Increments the revision of the node `(pk, sk)`, which must exist: the parent check of an
/// insert, and what makes a concurrent move or delete of the parent's subtree fail.
pub(crate) fn rev_bump<E: Entity>(table: &str, pk: &str, sk: String) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let cond = is_node::<E>(&mut x);
    add_rev::<E>(table, (pk, sk), cond, x)
}

/// Adds 1 to the revision of the item `(pk, sk)`, if `cond` holds.
pub(crate) fn add_rev<E: Entity>(
    table: &str,
    key: (&str, String),
    cond: String,
    mut x: ExprBuilder,
) -> Result<RawAction, Error> {
    let (rev, one) = (x.name(TREE_REV_ATTR), x.value(n(1)));
    let update = |key| Action::update(key, format!("ADD {rev} {one}"));
    guarded::<E>(table, key, update, cond, x, 8)
}

/// Deletes the node `(pk, sk)` only if it is still the node that was read: same revision
/// (no insert under it since) and, for versioned entities, same version.
pub(crate) fn guarded_delete<E: Entity>(
    table: &str,
    pk: &str,
    sk: String,
    rev: u64,
    version: Option<u64>,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let cond = guard::<E>(&mut x, rev, version);
    guarded::<E>(table, (pk, sk), Action::delete, cond, x, 0)
}

/// `<name> = <value>`, or with `or_missing`, also true when the attribute is missing.
pub(crate) fn equals(
    x: &mut ExprBuilder,
    attr: &str,
    value: AttributeValue,
    or_missing: bool,
) -> String {
    let name = x.name(attr);
    let value = x.value(value);
    if or_missing {
        format!("(attribute_not_exists({name}) OR {name} = {value})")
    } else {
        format!("{name} = {value}")
    }
}

/// The `SET` clauses of the attributes whose values differ between `old` and `new` and the
/// names of those only `old` has (to `REMOVE`), the `bookkeeping` attributes, the version and
/// the keys aside; with the bytes the values add to a request.
pub(crate) fn changed_fields<E: Entity>(
    x: &mut ExprBuilder,
    old: &Item,
    new: &Item,
    bookkeeping: &[&str],
) -> (Vec<String>, Vec<String>, usize) {
    let (pk, sk) = (<E::Table as Table>::PK, <E::Table as Table>::SK);
    let skip = |attr: &str| {
        bookkeeping.contains(&attr)
            || E::VERSION.is_some_and(|d| d.attr == attr)
            || attr == pk
            || sk == Some(attr)
    };
    let (mut sets, mut size) = (Vec::new(), 0);
    for (attr, value) in new.iter().filter(|(a, v)| !skip(a) && old.get(*a) != Some(v)) {
        size += item_size(&Item::from([(attr.clone(), value.clone())]));
        sets.push(equals(x, attr, value.clone(), false));
    }
    let removes = old.keys().filter(|a| !skip(a) && !new.contains_key(*a)).map(|a| x.name(a));
    (sets, removes.collect(), size)
}

/// An update expression of `SET`, `REMOVE` and `ADD` clauses, the empty ones left out.
pub(crate) fn update_expression(set: &[String], remove: &[String], add: &[String]) -> String {
    let clauses = [("SET", set), ("REMOVE", remove), ("ADD", add)];
    let clauses = clauses.iter().filter(|(_, c)| !c.is_empty());
    clauses.map(|(k, c)| format!("{k} {}", c.join(", "))).collect::<Vec<_>>().join(" ")
}

/// A number attribute value.
pub(crate) fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// The condition of a [`guarded_delete`]: the item is a node of `E` at revision `rev` (a
/// missing revision is 0) and, for versioned entities, at `version`.
pub(crate) fn guard<E: Entity>(x: &mut ExprBuilder, rev: u64, version: Option<u64>) -> String {
    let mut cond = is_node::<E>(x);
    cond.push_str(&format!(" AND {}", equals(x, TREE_REV_ATTR, n(rev), rev == 0)));
    if let (Some(def), Some(v)) = (E::VERSION, version) {
        cond.push_str(&format!(" AND {}", equals(x, def.attr, n(v), v == 0)));
    }
    cond
}

/// The revision stored in a node item.
pub(crate) fn rev_of(item: &Item) -> u64 {
    number(item, TREE_REV_ATTR).unwrap_or(0)
}

/// A number attribute of an item.
pub(crate) fn number(item: &Item, attr: &str) -> Option<u64> {
    match item.get(attr) {
        Some(AttributeValue::N(n)) => n.parse().ok(),
        _ => None,
    }
}

/// The intent record with `fields`, at epoch 0.
pub(crate) fn intent_item<E: Entity>(pk: &str, op_sk: &str, fields: &[(&str, &str)]) -> Item {
    let mut item = key_of::<E>(pk, op_sk);
    let kind = s(&format!("{}:tree-op", E::NAME));
    item.insert(crate::model::type_attr::<E::Table>().to_owned(), kind);
    for (attr, value) in fields {
        item.insert((*attr).to_owned(), s(value));
    }
    item.insert(OP_EPOCH.to_owned(), AttributeValue::N("0".into()));
    item
}

/// `token = T AND epoch = e`: the intent is still the one `op` runs under (an intent written
/// before epochs existed has epoch 0).
pub(crate) fn fence_cond(x: &mut ExprBuilder, op: &TreeOp) -> String {
    let token = equals(x, OP_TOKEN, s(&op.token), false);
    format!("{token} AND {}", equals(x, OP_EPOCH, n(op.epoch), op.epoch == 0))
}

/// The error of a writer whose intent is no longer the one it runs under.
pub(crate) fn superseded<E: Entity>(op: &TreeOp) -> Error {
    problem::<E>(TreeProblem::Superseded { op: op.clone() })
}

/// A protocol write rendered by hand: the item's sort key, the action and its size.
#[derive(Clone)]
pub(crate) struct RawAction {
    pub sk: String,
    pub item: TransactWriteItem,
    pub size: usize,
}

/// An unconditional write of the protocol item `sk`: fenced by the intent check of its
/// transaction.
fn plain(table: &str, action: Action, sk: String) -> Result<RawAction, Error> {
    let size = action.size();
    Ok(RawAction { sk, item: action.into_transact_item(table)?, size })
}

/// Unconditional put of a protocol item (a copy).
pub(crate) fn put_plain(table: &str, item: Item, sk: String) -> Result<RawAction, Error> {
    plain(table, Action::put(item), sk)
}

/// Unconditional delete of a protocol item.
pub(crate) fn delete_plain<E: Entity>(
    table: &str,
    pk: &str,
    sk: String,
) -> Result<RawAction, Error> {
    plain(table, Action::delete(key_of::<E>(pk, &sk)), sk)
}

/// The intent record of a tree (at `S::op_sk()`) and the requests every strategy's protocol
/// sends about it.
impl<E: Entity, S: Addressing<E>> Tree<'_, E, S> {
    /// Adds `w` to a transaction of this tree.
    pub(crate) fn push<'t>(
        &self,
        tx: Transaction<'t, E::Table>,
        w: RawAction,
    ) -> Transaction<'t, E::Table> {
        tx.raw(E::NAME, (self.pk.clone(), Some(w.sk)), w.item, w.size)
    }

    /// The nodes at `keys`, in order, missing ones left out: one `BatchGetItem` (none for no
    /// key).
    pub(crate) async fn read_keys(&self, keys: Vec<crate::Key<E>>) -> Result<Vec<E>, Error> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.db.batch_get(keys).await?.into_iter().flatten().collect())
    }

    /// A strongly consistent `GetItem` of the item `sk` of the tree, raw.
    pub(crate) async fn get_raw(&self, sk: &str) -> Result<Option<Item>, Error> {
        let db = self.db;
        crate::ops::write::read_item(db, key_of::<E>(&self.pk, sk), Op::GetItem).await
    }

    /// The intent record and the operation it names, strongly consistent.
    pub(crate) async fn intent(&self) -> Result<Option<(TreeOp, Item)>, Error> {
        let Some(item) = self.get_raw(&S::op_sk()).await? else {
            return Ok(None);
        };
        Ok(Some((TreeOp::from_item(&item).map_err(problem::<E>)?, item)))
    }

    /// The error of a write whose check of the intent record failed: [`TreeProblem::Busy`]
    /// with the operation in progress, or `None` when it finished meanwhile.
    pub(crate) async fn busy(&self) -> Result<Option<Error>, Error> {
        Ok(self.intent().await?.map(|(op, _)| problem::<E>(TreeProblem::Busy { op })))
    }

    /// Checks the tree's intent record: with `paths`, that no operation in progress moves
    /// or deletes any of them (an insert passes its path and its ancestors') and that no
    /// bulk load is in progress; without, that no operation is in progress at all.
    pub(crate) fn op_check(&self, paths: Option<&[String]>) -> Result<RawAction, Error> {
        let mut x = ExprBuilder::default();
        let pk_name = x.name(pk_attr::<E>());
        let mut cond = format!("attribute_not_exists({pk_name})");
        if let Some(paths) = paths.filter(|p| !p.is_empty()) {
            // One placeholder per path, named by both lists.
            let lists: Vec<String> = paths
                .chunks(MAX_IN_VALUES)
                .map(|chunk| chunk.iter().map(|p| x.value(s(p))).collect::<Vec<_>>().join(", "))
                .collect();
            let mut parts = Vec::new();
            for attr in [OP_FROM, OP_TO] {
                let name = x.name(attr);
                for list in &lists {
                    parts.push(format!("NOT ({name} IN ({list}))"));
                }
            }
            // A bulk load involves every path: whatever it loads is written unconditionally.
            let (kind, load) = (x.name(OP_KIND), x.value(s(OP_LOAD)));
            parts.push(format!("{kind} <> {load}"));
            cond = format!("{cond} OR ({})", parts.join(" AND "));
        }
        // Callers learn the operation in progress by reading the intent record again (it
        // may have finished meanwhile), so a failed check need not return it.
        guarded::<E>(self.db.table_name(), (&self.pk, S::op_sk()), Action::check, cond, x, 0)
    }

    /// Sends `tx` with the check of the intent record ([`op_check`](Self::op_check) of
    /// `paths`) as its last action: `Ok(None)` when it is written. When the check failed,
    /// [`TreeProblem::Busy`] with the operation in progress, or the failure marked
    /// `refused` when that operation has finished meanwhile (try again).
    pub(crate) async fn send_checked(
        &self,
        tx: Transaction<'_, E::Table>,
        paths: Option<&[String]>,
    ) -> Result<Option<Failed>, Error> {
        let at = tx.len();
        let Err(err) = self.push(tx, self.op_check(paths)?).send().await else {
            return Ok(None);
        };
        let mut failed = Failed::new(err);
        if failed.at(at) {
            if let Some(busy) = self.busy().await? {
                return Err(busy);
            }
            failed.refused = true;
        }
        Ok(Some(failed))
    }

    /// Writes the intent record of `op` (see [`put_intent`](Self::put_intent)):
    /// [`TreeProblem::Busy`] with the operation in progress when the tree has one already.
    pub(crate) async fn begin(&self, op: &TreeOp) -> Result<(), Error> {
        let fields = op.fields();
        let fields: Vec<(&str, &str)> = fields.iter().map(|(a, v)| (*a, v.as_str())).collect();
        // Refused by the intent record it returns: the operation in progress, or corrupt.
        self.put_intent(&fields).await?.map_err(|stored| {
            problem::<E>(match stored.as_ref().map(TreeOp::from_item) {
                Some(Ok(op)) => TreeProblem::Busy { op },
                Some(Err(corrupt)) => corrupt,
                None => TreeProblem::CorruptIntent { reason: IntentReason::NotReturned },
            })
        })
    }

    /// Writes the intent record if the tree has none; `Err(Some(stored))` when it has one.
    /// Recognises its own applied write when retried (the stored intent has its token).
    pub(crate) async fn put_intent(
        &self,
        fields: &[(&str, &str)],
    ) -> Result<Result<(), Option<Item>>, Error> {
        let db = self.db;
        let item = intent_item::<E>(&self.pk, &S::op_sk(), fields);
        let mut x = ExprBuilder::default();
        let pk_name = x.name(pk_attr::<E>());
        let request = Action::put(item)
            .guarded(format!("attribute_not_exists({pk_name})"), x)
            .return_old(true)
            .put_item(db)?
            .set_return_consumed_capacity(db.capacity_mode());
        let Err(e) = retry::send(db, Op::PutItem, request).await else {
            return Ok(Ok(()));
        };
        // This very intent, written by an attempt whose response was lost.
        let own = fields.iter().find(|(attr, _)| *attr == OP_TOKEN).map(|(_, v)| *v);
        match e.into_condition_failure()? {
            Some(item) if own.is_some() && string_attr(&item, OP_TOKEN) == own => Ok(Ok(())),
            stored => Ok(Err(stored)),
        }
    }

    /// Sets the intent's phase, if the intent is still `op`'s at its epoch
    /// ([`TreeProblem::Superseded`] otherwise).
    pub(crate) async fn set_phase(&self, op: &TreeOp, phase: OpPhase) -> Result<(), Error> {
        self.set_fields(op, &[(OP_PHASE, phase.as_str())]).await
    }

    /// Sets string attributes of the intent, if the intent is still `op`'s at its epoch
    /// ([`TreeProblem::Superseded`] otherwise). Safe to retry: the same values again.
    pub(crate) async fn set_fields(
        &self,
        op: &TreeOp,
        fields: &[(&str, &str)],
    ) -> Result<(), Error> {
        let mut x = ExprBuilder::default();
        let cond = fence_cond(&mut x, op);
        let sets: Vec<String> =
            fields.iter().map(|(attr, value)| equals(&mut x, attr, s(value), false)).collect();
        let set = format!("SET {}", sets.join(", "));
        match self.update_intent(set, cond, x, false).await {
            Ok(_) => Ok(()),
            Err(e) => {
                e.into_condition_failure()?;
                Err(superseded::<E>(op))
            }
        }
    }

    /// Sends an `UpdateItem` of the intent record.
    async fn update_intent(
        &self,
        update: String,
        cond: String,
        x: ExprBuilder,
        return_old: bool,
    ) -> Result<(), SendError> {
        let db = self.db;
        let request = Action::update(key_of::<E>(&self.pk, &S::op_sk()), update)
            .guarded(cond, x)
            .return_old(return_old)
            .update_item(db)
            .map_err(SendError::Typed)?
            .set_return_consumed_capacity(db.capacity_mode());
        retry::send(db, Op::UpdateItem, request).await.map(|_| ())
    }

    /// Recovery takes `op` over: advances the intent's epoch, if the intent is still `op`
    /// (same token, epoch and phase). From then on every write of the writer that ran `op`
    /// before fails. `Ok(None)` when the intent is gone (the operation finished meanwhile);
    /// [`TreeProblem::Busy`] when it changed (its writer moved on, or another recovery took
    /// it over first).
    pub(crate) async fn take_over(&self, op: &TreeOp) -> Result<Option<TreeOp>, Error> {
        let advance = || super::op::corrupt_intent::<E>(IntentReason::EpochExhausted);
        let next = op.epoch.checked_add(1).ok_or_else(advance)?;
        let mut x = ExprBuilder::default();
        let mut cond = fence_cond(&mut x, op);
        cond.push_str(&format!(" AND {}", equals(&mut x, OP_PHASE, s(op.phase.as_str()), false)));
        let set = format!("SET {}", equals(&mut x, OP_EPOCH, n(next), false));
        let Err(e) = self.update_intent(set, cond, x, true).await else {
            return Ok(Some(TreeOp { epoch: next, ..op.clone() }));
        };
        match e.into_condition_failure()? {
            None => Ok(None),
            Some(item) => match TreeOp::from_item(&item) {
                // This very update, applied by an attempt whose response was lost.
                Ok(stored)
                    if stored.token == op.token
                        && stored.epoch == next
                        && stored.phase == op.phase =>
                {
                    Ok(Some(stored))
                }
                Ok(stored) => Err(problem::<E>(TreeProblem::Busy { op: stored })),
                Err(corrupt) => Err(problem::<E>(corrupt)),
            },
        }
    }

    /// Removes the intent record of `op`, if it is still `op`'s at its epoch. Recognises its
    /// own applied write when retried: an intent that is gone, or that belongs to another
    /// operation (this one finished and another began), means `op` is finished. An intent of
    /// `op` at another epoch means recovery took over: [`TreeProblem::Superseded`].
    pub(crate) async fn clear_intent(&self, op: &TreeOp) -> Result<(), Error> {
        let db = self.db;
        let mut x = ExprBuilder::default();
        let pk_name = x.name(pk_attr::<E>());
        let fence = fence_cond(&mut x, op);
        let request = Action::delete(key_of::<E>(&self.pk, &S::op_sk()))
            .guarded(format!("attribute_not_exists({pk_name}) OR ({fence})"), x)
            .return_old(true)
            .delete_item(db)?
            .set_return_consumed_capacity(db.capacity_mode());
        let Err(e) = retry::send(db, Op::DeleteItem, request).await else {
            return Ok(());
        };
        let stored = e.into_condition_failure()?;
        match stored.as_ref().and_then(|item| string_attr(item, OP_TOKEN)) {
            Some(token) if token != op.token => Ok(()),
            _ => Err(superseded::<E>(op)),
        }
    }

    /// Runs the large operation `op` under the intent record: `check` runs first (its error
    /// removes the intent again) and returns what `run` needs and the intent fields to record
    /// before it (none: the phase `op` started in goes on); `run` returns the nodes it
    /// handled, then the intent is removed.
    pub(crate) async fn run_large<T, C, F, Fut>(
        &self,
        op: TreeOp,
        check: C,
        run: F,
    ) -> Result<OpReport, Error>
    where
        C: Future<Output = Result<(T, Vec<(&'static str, String)>), Error>>,
        F: FnOnce(TreeOp, T) -> Fut,
        Fut: Future<Output = Result<usize, Error>>,
    {
        self.begin(&op).await?;
        let (checked, fields) = match check.await {
            Ok(checked) => checked,
            Err(e) => {
                self.clear_intent(&op).await?;
                return Err(e);
            }
        };
        if !fields.is_empty() {
            let fields: Vec<(&str, &str)> = fields.iter().map(|(a, v)| (*a, v.as_str())).collect();
            self.set_fields(&op, &fields).await?;
        }
        let nodes = run(op.clone(), checked).await?;
        self.clear_intent(&op).await?;
        Ok(OpReport { nodes, resumable: true })
    }

    /// Recovery of `op` (see [`take_over`](Self::take_over)): `run` finishes or undoes it
    /// under the new epoch and returns the nodes it handled, then the intent is removed.
    /// `Ok(None)` when the operation finished meanwhile.
    pub(crate) async fn recover<F, Fut>(
        &self,
        op: &TreeOp,
        run: F,
    ) -> Result<Option<OpReport>, Error>
    where
        F: FnOnce(TreeOp) -> Fut,
        Fut: Future<Output = Result<usize, Error>>,
    {
        let Some(op) = self.take_over(op).await? else {
            return Ok(None);
        };
        let nodes = run(op.clone()).await?;
        self.clear_intent(&op).await?;
        Ok(Some(OpReport { nodes, resumable: true }))
    }
}

/// The fenced writes of a protocol step.
impl<E: Entity, S: Addressing<E>> Tree<'_, E, S> {
    /// The transaction action that fences a protocol write: the intent is still `op`'s, at
    /// its epoch. A failure returns the stored intent.
    pub(crate) fn fence_check(&self, op: &TreeOp) -> Result<RawAction, Error> {
        let mut x = ExprBuilder::default();
        let cond = fence_cond(&mut x, op);
        let check = |key| Action::check(key).return_old(true);
        guarded::<E>(self.db.table_name(), (&self.pk, S::op_sk()), check, cond, x, 0)
    }

    /// Sends the writes of a protocol step, fenced: `TransactWriteItems` of up to 99 writes
    /// (and at most 4 MB) plus a `ConditionCheck` that the intent is still `op`'s at its
    /// epoch, in order, one after the other. A writer that recovery took over gets
    /// [`TreeProblem::Superseded`] and none of its chunks lands from then on. `done(n)` is
    /// called after each chunk with the writes sent so far. Every chunk is safe to send again
    /// (puts and deletes of the same items; the transaction's token makes the SDK's retry of
    /// a chunk whose response was lost a no-op).
    pub(crate) async fn fenced_writes(
        &self,
        op: &TreeOp,
        writes: Vec<RawAction>,
        done: &mut (dyn FnMut(usize) + Send),
    ) -> Result<(), Error> {
        self.fenced_groups(op, writes.into_iter().map(|w| vec![w]).collect(), done).await
    }

    /// [`fenced_writes`](Self::fenced_writes) whose writes come in groups, each of which
    /// lands whole: a chunk ends before a group that does not fit in it, so that no crash or
    /// takeover leaves a group half written. (A group larger than one transaction, which no
    /// protocol builds, is split.)
    pub(crate) async fn fenced_groups(
        &self,
        op: &TreeOp,
        groups: Vec<Vec<RawAction>>,
        done: &mut (dyn FnMut(usize) + Send),
    ) -> Result<(), Error> {
        let check = self.fence_check(op)?;
        let mut sent = 0;
        for chunk in pack(groups, check.size) {
            sent += chunk.len();
            let chunk = &chunk;
            let check = &check;
            retry::on_conflict(REREAD_CONFLICTS, move |_| async move {
                let mut tx = self.db.transaction();
                for w in chunk {
                    tx = self.push(tx, w.clone());
                }
                let Err(err) = self.push(tx, check.clone()).send().await else {
                    return Ok(Try::Done(()));
                };
                let failed = Failed::new(err);
                if failed.at(chunk.len()) {
                    return Err(superseded::<E>(op));
                }
                failed.conflict().map(Try::Again)
            })
            .await?;
            done(sent);
        }
        Ok(())
    }
}

/// The transactions of a fenced step, in order: each at most 99 writes (the fence is the
/// hundredth action) and 4 MB with the fence's `base` bytes; a group that fits in one
/// transaction never spans two.
fn pack(groups: Vec<Vec<RawAction>>, base: usize) -> Vec<Vec<RawAction>> {
    let fits = |writes: usize, bytes: usize| {
        writes < MAX_TRANSACTION_ACTIONS && bytes <= MAX_TRANSACTION_BYTES
    };
    let (mut out, mut chunk, mut size) = (Vec::new(), Vec::new(), base);
    for group in groups {
        let bytes: usize = group.iter().map(|w| w.size).sum();
        if !chunk.is_empty()
            && !fits(chunk.len() + group.len(), size + bytes)
            && fits(group.len(), base + bytes)
        {
            out.push(std::mem::take(&mut chunk));
            size = base;
        }
        for w in group {
            if !chunk.is_empty() && !fits(chunk.len() + 1, size + w.size) {
                out.push(std::mem::take(&mut chunk));
                size = base;
            }
            size += w.size;
            chunk.push(w);
        }
    }
    if !chunk.is_empty() {
        out.push(chunk);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writes(n: usize, size: usize) -> Vec<RawAction> {
        (0..n)
            .map(|i| RawAction {
                sk: i.to_string(),
                item: TransactWriteItem::builder().build(),
                size,
            })
            .collect()
    }

    fn lens(chunks: &[Vec<RawAction>]) -> Vec<usize> {
        chunks.iter().map(Vec::len).collect()
    }

    #[test]
    fn packing_keeps_groups_whole_and_transactions_within_the_limits() {
        // One write per group: 99 writes per transaction.
        let singles: Vec<Vec<RawAction>> = writes(250, 10).into_iter().map(|w| vec![w]).collect();
        assert_eq!(lens(&pack(singles, 10)), [99, 99, 52]);
        // Groups of 6: 16 groups (96 writes) per transaction, none split.
        let groups: Vec<Vec<RawAction>> = (0..20).map(|_| writes(6, 10)).collect();
        assert_eq!(lens(&pack(groups, 10)), [96, 24]);
        // Bytes: groups of 2 MB each go one per transaction.
        let big: Vec<Vec<RawAction>> = (0..3).map(|_| writes(2, 1 << 20)).collect();
        assert_eq!(lens(&pack(big, 10)), [2, 2, 2]);
        // A group larger than a transaction fills the open one and is split.
        let huge = vec![writes(10, 10), writes(150, 10)];
        assert_eq!(lens(&pack(huge, 10)), [99, 61]);
    }
}
