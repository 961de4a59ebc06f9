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
use crate::ops::put::next_version;
use crate::tree::op::{OpReport, Progress, ProgressFn, entering};
use crate::tree::raw::{self, RawAction, delete_plain, put_plain};
use crate::tree::{Hierarchy, TreePath, TreeProblem, check_path, node_sk, problem};

impl<'a, E: Hierarchy> PathTree<'a, E> {
    /// The node at `root` (if any) and its descendants, strongly consistent.
    pub(crate) async fn read_subtree(&self, root: &TreePath) -> Result<Vec<E>, Error> {
        let (node, below) = futures_util::future::try_join(
            self.get(root).consistent().send(),
            self.subtree_query(root).consistent().all(),
        )
        .await?;
        Ok(node.into_iter().chain(below).collect())
    }

    /// A move through the protocol.
    pub(crate) async fn large_move(
        &self,
        from: &TreePath,
        to: &TreePath,
        progress: &mut ProgressFn<'_>,
    ) -> Result<OpReport, Error> {
        let op = TreeOp::start(OpKind::Move { from: from.clone(), to: to.clone() }, OpPhase::Check);
        let check = async { Ok((self.check_move(from, to).await?, vec![entering(OpPhase::Copy)])) };
        self.run_large(op, check, |op, (old, copies)| async move {
            self.copy(&op, &copies, progress).await?;
            self.set_phase(&op, OpPhase::Remove).await?;
            let n = old.len();
            self.remove(&op, old, progress).await?;
            Ok(n)
        })
        .await
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
    pub(super) async fn copy(
        &self,
        op: &TreeOp,
        copies: &[E],
        progress: &mut ProgressFn<'_>,
    ) -> Result<(), Error> {
        let mut order: Vec<&E> = copies.iter().collect();
        order.sort_by_key(|n| n.path().depth());
        let table = self.db.table_name();
        let put = |copy: &E| {
            let (_, next) = next_version::<E>(copy.version())?;
            put_plain(table, to_item(copy, next)?, sk_of(copy))
        };
        let writes = order.into_iter().map(put).collect::<Result<_, Error>>()?;
        self.fenced_phase(op, OpPhase::Copy, writes, progress).await
    }

    /// Deletes the nodes at `paths`, deepest first, fenced by `op`'s epoch.
    pub(super) async fn remove(
        &self,
        op: &TreeOp,
        mut paths: Vec<TreePath>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<(), Error> {
        paths.sort_by_key(|p| std::cmp::Reverse(p.depth()));
        let table = self.db.table_name();
        let delete = |path: &TreePath| delete_plain::<E>(table, &self.pk, node_sk::<E>(path));
        let writes = paths.iter().map(delete).collect::<Result<_, Error>>()?;
        self.fenced_phase(op, OpPhase::Remove, writes, progress).await
    }

    /// Sends the `writes` of `phase`, fenced by `op`'s epoch, reporting progress.
    async fn fenced_phase(
        &self,
        op: &TreeOp,
        phase: OpPhase,
        writes: Vec<RawAction>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<(), Error> {
        let total = writes.len();
        self.fenced_writes(op, writes, &mut |done| progress(Progress { phase, done, total })).await
    }

    /// A delete through the protocol.
    pub(crate) async fn large_delete(
        &self,
        root: &TreePath,
        progress: &mut ProgressFn<'_>,
    ) -> Result<OpReport, Error> {
        let op = TreeOp::start(OpKind::Delete { root: root.clone() }, OpPhase::Check);
        let check = async {
            let nodes = self.read_subtree(root).await?;
            if nodes.first().is_none_or(|n| n.path() != root) {
                return Err(problem::<E>(TreeProblem::NodeMissing { path: root.clone() }));
            }
            Ok((nodes, vec![entering(OpPhase::Remove)]))
        };
        self.run_large(op, check, |op, nodes| async move {
            self.remove(&op, nodes.iter().map(Hierarchy::path).cloned().collect(), progress)
                .await?;
            Ok(nodes.len())
        })
        .await
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
