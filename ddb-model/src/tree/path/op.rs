//! Moves and deletes larger than one transaction: a resumable protocol around an intent record.
//!
//! 1. **Check.** The intent record (one per tree) is written if the tree has none: from then
//!    on inserts at or under the paths it names are refused, and so are other moves and
//!    deletes. The nodes are read strongly consistently and the operation is validated; an
//!    invalid one removes its intent again.
//! 2. **Copy** (moves only). Every node is written at its new path (`TransactWriteItems` of
//!    99 writes and the intent's epoch check, see *Fencing*). The old nodes are all still
//!    there.
//! 3. **Remove.** The old nodes are deleted, deepest first, so what is left of the old subtree
//!    is always a tree.
//! 4. The intent record is removed.
//!
//! At every moment each node exists at its old path, its new path, or both: a reader never
//! misses a node. An interrupted operation is finished by [`PathTree::resume`], which redoes the
//! current phase from a fresh read (every step is idempotent), or undone by
//! [`PathTree::rollback`] while the old nodes are all still there.
//!
//! **Fencing.** The intent record carries an epoch (0 when the operation starts). `resume`
//! and `rollback` first advance it with a conditional write (same token, epoch and phase as
//! they read), then write. Every write of the protocol is conditioned on the token and the
//! epoch its writer runs under: the phase and intent updates directly, the copies and
//! deletes as `TransactWriteItems` of up to 99 writes plus a `ConditionCheck` of the intent
//! (instead of unconditional `BatchWriteItem`s, which cannot carry a condition). A writer
//! that recovery took over (a paused process that wakes up, a request still in flight from
//! a killed one) has every later request refused, and stops with
//! [`TreeProblem::Superseded`].

use super::PathTree;
use crate::error::Error;
use crate::error::{OpKind, OpPhase, TreeOp};
use crate::item::Item;
use crate::model::{from_item, to_item};
use crate::ops::idempotency_token;
use crate::ops::put::next_version;
use crate::tree::op::{OpReport, Progress, ProgressFn};
use crate::tree::raw::{
    self, RawAction, clear_intent, delete_plain, fenced_writes, get_raw, put_plain, set_phase,
    take_over,
};
use crate::tree::{Hierarchy, TreePath, TreeProblem, check_path, node_sk, op_sk, problem};

impl<'a, E: Hierarchy> PathTree<'a, E> {
    /// The large move or delete in progress on this tree (or interrupted), if any: one
    /// strongly consistent `GetItem`.
    pub async fn pending(&self) -> Result<Option<TreeOp>, Error> {
        let item = get_raw::<E>(self.db, &self.pk, &super::op_sk::<E>()).await?;
        item.map(|item| TreeOp::from_item(&item).map_err(problem::<E>)).transpose()
    }

    /// Finishes an interrupted large move or delete (a process that died, a request that
    /// failed for good): redoes its current phase from a fresh read and completes it.
    /// `Ok(None)` when nothing was pending. An operation interrupted while it was still
    /// checking wrote no node; resuming it just removes its intent record.
    ///
    /// Safe while the original operation still runs (a process that is slow or paused
    /// rather than dead): `resume` takes the operation over by advancing the intent's epoch
    /// first, and from then on every write of the original writer fails, including requests
    /// it had in flight; it stops with [`TreeProblem::Superseded`]. If the original writer
    /// moves to its next phase first, `resume` is refused with [`TreeProblem::Busy`] and
    /// changes nothing. Two `resume` calls at once: one takes over, the other is refused.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// # use ddb_model::{Entity, TreePath, local};
    /// # use serde::{Deserialize, Serialize};
    /// # #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
    /// # #[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
    /// # #[hierarchy(path = path, index = gsi1)]
    /// # struct Folder { drive: String, path: TreePath }
    /// let db = local::isolated_db().await?;
    /// let tree = Folder::tree(&db, "D");
    /// // At start-up, finish whatever a crashed process left half done.
    /// if let Some(report) = tree.resume(|_| {}).await? {
    ///     println!("finished an interrupted operation on {} nodes", report.nodes);
    /// }
    /// assert!(tree.pending().await?.is_none());
    /// # Ok(()) }
    /// ```
    pub async fn resume(
        &self,
        progress: impl FnMut(Progress) + Send,
    ) -> Result<Option<OpReport>, Error> {
        let Some(op) = self.pending().await? else {
            return Ok(None);
        };
        if matches!(op.kind, OpKind::Load { .. }) {
            let mut progress: ProgressFn<'_> = Box::new(progress);
            return crate::tree::bulk::resume(self, op, &mut progress).await;
        }
        if matches!(
            op.kind,
            OpKind::MoveNode { .. } | OpKind::DeleteNode { .. } | OpKind::Renumber { .. }
        ) {
            return Err(problem::<E>(TreeProblem::CorruptIntent {
                reason: format!("{op} is not an operation of a path tree"),
            }));
        }
        let Some(op) = take_over::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await? else {
            return Ok(None);
        };
        let mut progress: ProgressFn<'_> = Box::new(progress);
        let nodes = match (&op.kind, op.phase) {
            (_, OpPhase::Check) => 0,
            (OpKind::Move { from, to }, OpPhase::Copy) => {
                let (old, copies) = rebased(self.read_subtree(from).await?, from, to)?;
                self.copy(&op, &copies, &mut progress).await?;
                set_phase::<E>(self.db, &self.pk, &op_sk::<E>(), &op, OpPhase::Remove.as_str())
                    .await?;
                let n = old.len();
                self.remove(&op, old, &mut progress).await?;
                n
            }
            (
                OpKind::MoveNode { .. }
                | OpKind::DeleteNode { .. }
                | OpKind::Renumber { .. }
                | OpKind::Load { .. },
                _,
            ) => {
                return Err(problem::<E>(TreeProblem::CorruptIntent {
                    reason: format!("{op} is not an operation of a path tree"),
                }));
            }
            (OpKind::Move { from: root, .. } | OpKind::Delete { root }, _) => {
                let nodes = self.read_subtree(root).await?;
                let n = nodes.len();
                let paths = nodes.iter().map(Hierarchy::path).cloned().collect();
                self.remove(&op, paths, &mut progress).await?;
                n
            }
        };
        clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
        Ok(Some(OpReport { nodes, resumable: true }))
    }

    /// Undoes an interrupted large move that has not started removing the old nodes: deletes
    /// the copies written so far and the intent record. A delete, or a move in its remove
    /// phase, cannot be undone ([`TreeProblem::CannotRollBack`]); finish it with
    /// [`resume`](PathTree::resume). `Ok(None)` when nothing was pending. Like `resume`, it
    /// takes the operation over first, so a writer still running is fenced off
    /// ([`TreeProblem::Superseded`]) and none of its copies lands after the rollback.
    pub async fn rollback(&self) -> Result<Option<OpReport>, Error> {
        let Some(op) = self.pending().await? else {
            return Ok(None);
        };
        if matches!(op.kind, OpKind::Load { .. }) {
            return crate::tree::bulk::rollback(self, op).await;
        }
        if !matches!(
            (&op.kind, op.phase),
            (_, OpPhase::Check) | (OpKind::Move { .. }, OpPhase::Copy)
        ) {
            return Err(problem::<E>(TreeProblem::CannotRollBack { op }));
        }
        let Some(op) = take_over::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await? else {
            return Ok(None);
        };
        let nodes = match (&op.kind, op.phase) {
            (OpKind::Move { to, .. }, OpPhase::Copy) => {
                let copies = self.read_subtree(to).await?;
                let n = copies.len();
                let mut quiet: ProgressFn<'_> = Box::new(|_| {});
                let paths = copies.iter().map(Hierarchy::path).cloned().collect();
                self.remove(&op, paths, &mut quiet).await?;
                n
            }
            _ => 0,
        };
        clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
        Ok(Some(OpReport { nodes, resumable: true }))
    }

    /// The node at `root` (if any) and its descendants, strongly consistent.
    pub(crate) async fn read_subtree(&self, root: &TreePath) -> Result<Vec<E>, Error> {
        let (node, below) = futures_util::future::try_join(
            self.get(root).consistent().send(),
            self.subtree_query(root).consistent().all(),
        )
        .await?;
        Ok(node.into_iter().chain(below).collect())
    }

    /// Writes the intent record of `kind`; [`TreeProblem::Busy`] when the tree has one.
    async fn begin(&self, kind: OpKind) -> Result<TreeOp, Error> {
        let op = TreeOp { kind, phase: OpPhase::Check, token: idempotency_token(), epoch: 0 };
        crate::tree::raw::begin::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
        Ok(op)
    }

    /// A move through the protocol.
    pub(crate) async fn large_move(
        &self,
        from: &TreePath,
        to: &TreePath,
        progress: &mut ProgressFn<'_>,
    ) -> Result<OpReport, Error> {
        let op = self.begin(OpKind::Move { from: from.clone(), to: to.clone() }).await?;
        let (old, copies) = match self.check_move(from, to).await {
            Ok(checked) => checked,
            Err(e) => {
                clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
                return Err(e);
            }
        };
        set_phase::<E>(self.db, &self.pk, &op_sk::<E>(), &op, OpPhase::Copy.as_str()).await?;
        self.copy(&op, &copies, progress).await?;
        set_phase::<E>(self.db, &self.pk, &op_sk::<E>(), &op, OpPhase::Remove.as_str()).await?;
        let n = old.len();
        self.remove(&op, old, progress).await?;
        clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
        Ok(OpReport { nodes: n, resumable: true })
    }

    /// The checks of a move made under its intent: the node exists, the destination does
    /// not, its parent does, and every moved node fits the tree and the key limits. Returns
    /// the old paths and the nodes at their new paths.
    async fn check_move(
        &self,
        from: &TreePath,
        to: &TreePath,
    ) -> Result<(Vec<TreePath>, Vec<E>), Error> {
        let mut paths = vec![to.clone()];
        paths.extend(to.parent());
        let probe = self.db.batch_get(paths.iter().map(|p| self.key(p))).consistent();
        let (found, nodes) =
            futures_util::future::try_join(probe.send(), self.read_subtree(from)).await?;
        if found.first().is_some_and(Option::is_some) {
            return Err(problem::<E>(TreeProblem::DestinationExists { path: to.clone() }));
        }
        if let Some(parent) = to.parent()
            && !found.get(1).is_some_and(Option::is_some)
        {
            return Err(problem::<E>(TreeProblem::ParentMissing { parent }));
        }
        if nodes.first().is_none_or(|n| n.path() != from) {
            return Err(problem::<E>(TreeProblem::NodeMissing { path: from.clone() }));
        }
        rebased(nodes, from, to)
    }

    /// Writes `copies`, shallowest first, fenced by `op`'s epoch (see `raw::fenced_writes`).
    async fn copy(
        &self,
        op: &TreeOp,
        copies: &[E],
        progress: &mut ProgressFn<'_>,
    ) -> Result<(), Error> {
        let mut order: Vec<&E> = copies.iter().collect();
        order.sort_by_key(|n| n.path().depth());
        let total = order.len();
        let table = self.db.table_name();
        let writes = order
            .into_iter()
            .map(|copy| {
                let (_, next) = next_version::<E>(copy.version())?;
                put_plain(table, to_item(copy, next)?, sk_of(copy))
            })
            .collect::<Result<Vec<RawAction>, Error>>()?;
        let mut done = |done| progress(Progress { phase: OpPhase::Copy, done, total });
        fenced_writes::<E>(self.db, &self.pk, &op_sk::<E>(), op, writes, &mut done).await
    }

    /// Deletes the nodes at `paths`, deepest first, fenced by `op`'s epoch.
    async fn remove(
        &self,
        op: &TreeOp,
        mut paths: Vec<TreePath>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<(), Error> {
        paths.sort_by_key(|p| std::cmp::Reverse(p.depth()));
        let total = paths.len();
        let table = self.db.table_name();
        let writes = paths
            .iter()
            .map(|path| delete_plain::<E>(table, &self.pk, node_sk::<E>(path)))
            .collect::<Result<Vec<RawAction>, Error>>()?;
        let mut done = |done| progress(Progress { phase: OpPhase::Remove, done, total });
        fenced_writes::<E>(self.db, &self.pk, &op_sk::<E>(), op, writes, &mut done).await
    }

    /// A delete through the protocol.
    pub(crate) async fn large_delete(
        &self,
        root: &TreePath,
        progress: &mut ProgressFn<'_>,
    ) -> Result<OpReport, Error> {
        let op = self.begin(OpKind::Delete { root: root.clone() }).await?;
        let nodes = match self.read_subtree(root).await {
            Ok(nodes) if nodes.first().is_some_and(|n| n.path() == root) => nodes,
            other => {
                clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
                other?;
                return Err(problem::<E>(TreeProblem::NodeMissing { path: root.clone() }));
            }
        };
        set_phase::<E>(self.db, &self.pk, &op_sk::<E>(), &op, OpPhase::Remove.as_str()).await?;
        self.remove(&op, nodes.iter().map(Hierarchy::path).cloned().collect(), progress).await?;
        clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
        Ok(OpReport { nodes: nodes.len(), resumable: true })
    }
}

/// The paths of `nodes`, and the nodes moved from `from` to `to`.
pub(crate) fn rebased<E: Hierarchy>(
    nodes: Vec<E>,
    from: &TreePath,
    to: &TreePath,
) -> Result<(Vec<TreePath>, Vec<E>), Error> {
    let old: Vec<TreePath> = nodes.iter().map(|n| n.path().clone()).collect();
    let copies = nodes.into_iter().map(|n| moved(n, from, to)).collect::<Result<Vec<E>, _>>()?;
    Ok((old, copies))
}

/// `node` at its path rebased from `from` to `to`, checked against the tree's depth limit and
/// the key and item limits.
pub(crate) fn moved<E: Hierarchy>(mut node: E, from: &TreePath, to: &TreePath) -> Result<E, Error> {
    let path = match node.path().rebase(from, to) {
        Some(Ok(path)) => path,
        Some(Err(p)) => {
            return Err(problem::<E>(TreeProblem::Path {
                path: node.path().to_text(),
                problem: p,
            }));
        }
        None => {
            return Err(problem::<E>(TreeProblem::NodeMissing { path: node.path().clone() }));
        }
    };
    check_path::<E>(&path)?;
    node.set_path(path);
    to_item(&node, None)?;
    Ok(node)
}

/// Reads a node item (keeping its revision).
pub(crate) fn node_of<E: Hierarchy>(item: Item) -> Result<(E, u64), Error> {
    let rev = raw::rev_of(&item);
    Ok((from_item::<E>(item)?, rev))
}

/// The sort key of `node`'s path.
pub(crate) fn sk_of<E: Hierarchy>(node: &E) -> String {
    node_sk::<E>(node.path())
}
