//! Moves and deletes larger than one transaction: a resumable protocol around an intent record.
//!
//! 1. **Check.** The intent record (one per tree) is written if the tree has none: from then
//!    on inserts at or under the paths it names are refused, and so are other moves and
//!    deletes. The nodes are read strongly consistently and the operation is validated; an
//!    invalid one removes its intent again.
//! 2. **Copy** (moves only). Every node is written at its new path (`BatchWriteItem`, 25 per
//!    request). The old nodes are all still there.
//! 3. **Remove.** The old nodes are deleted, deepest first, so what is left of the old subtree
//!    is always a tree.
//! 4. The intent record is removed.
//!
//! At every moment each node exists at its old path, its new path, or both: a reader never
//! misses a node. An interrupted operation is finished by [`Tree::resume`], which redoes the
//! current phase from a fresh read (every step is idempotent), or undone by
//! [`Tree::rollback`] while the old nodes are all still there.

use std::fmt;

use super::handle::Tree;
use super::raw::{
    self, OP_FROM, OP_KIND, OP_PARENT, OP_PHASE, OP_TO, OP_TOKEN, clear_intent, get_raw,
    intent_field, put_intent, set_phase,
};
use super::{Hierarchy, TreePath, TreeProblem, check_path, node_sk, op_sk, problem};
use crate::entity::{from_item, to_item};
use crate::error::Error;
use crate::item::Item;
use crate::ops::idempotency_token;

/// Nodes written or deleted per batch call (4 requests of 25, sent concurrently).
pub(crate) const CHUNK: usize = 100;

/// What a tree operation in progress does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpKind {
    /// Moves the subtree at `from` to `to`.
    Move {
        /// The old path of the subtree's root.
        from: TreePath,
        /// The new path.
        to: TreePath,
    },
    /// Deletes the subtree at `root`.
    Delete {
        /// The subtree's root.
        root: TreePath,
    },
    /// (Closure, adjacency.) Moves the node `node` and its subtree under `parent` (to the
    /// top level for `None`). Ids as key text.
    MoveNode {
        /// The node.
        node: String,
        /// The new parent.
        parent: Option<String>,
    },
    /// (Closure, adjacency.) Deletes the node `node` and its subtree.
    DeleteNode {
        /// The node, as key text.
        node: String,
    },
}

/// Where a tree operation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpPhase {
    /// Reading and validating; nothing is written yet.
    Check,
    /// Writing the nodes at their new paths (closure: the copies under the new ancestors);
    /// the old ones are all still there.
    Copy,
    /// (Closure.) Recording the new ancestors in every moved node.
    Switch,
    /// Deleting the old nodes.
    Remove,
}

impl OpPhase {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OpPhase::Check => "check",
            OpPhase::Copy => "copy",
            OpPhase::Switch => "switch",
            OpPhase::Remove => "remove",
        }
    }

    fn parse(text: &str) -> Option<OpPhase> {
        match text {
            "check" => Some(OpPhase::Check),
            "copy" => Some(OpPhase::Copy),
            "switch" => Some(OpPhase::Switch),
            "remove" => Some(OpPhase::Remove),
            _ => None,
        }
    }
}

/// A large move or delete in progress (or interrupted) on a tree, as its intent record
/// describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeOp {
    /// What it does.
    pub kind: OpKind,
    /// Where it is.
    pub phase: OpPhase,
    /// Identifies this run.
    pub token: String,
}

impl fmt::Display for TreeOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let phase = self.phase.as_str();
        match &self.kind {
            OpKind::Move { from, to } => {
                write!(f, "move of {:?} to {:?} ({phase} phase)", from.to_text(), to.to_text())
            }
            OpKind::Delete { root } => {
                write!(f, "delete of {:?} ({phase} phase)", root.to_text())
            }
            OpKind::MoveNode { node, parent: Some(parent) } => {
                write!(f, "move of {node:?} under {parent:?} ({phase} phase)")
            }
            OpKind::MoveNode { node, parent: None } => {
                write!(f, "move of {node:?} to the top level ({phase} phase)")
            }
            OpKind::DeleteNode { node } => write!(f, "delete of {node:?} ({phase} phase)"),
        }
    }
}

impl TreeOp {
    pub(crate) fn fields(&self) -> Vec<(&'static str, String)> {
        let mut out =
            vec![(OP_PHASE, self.phase.as_str().to_owned()), (OP_TOKEN, self.token.clone())];
        match &self.kind {
            OpKind::Move { from, to } => {
                out.push((OP_KIND, "move".to_owned()));
                out.push((OP_FROM, from.to_text()));
                out.push((OP_TO, to.to_text()));
            }
            OpKind::Delete { root } => {
                out.push((OP_KIND, "delete".to_owned()));
                out.push((OP_FROM, root.to_text()));
            }
            OpKind::MoveNode { node, parent } => {
                out.push((OP_KIND, "move-node".to_owned()));
                out.push((OP_FROM, super::node::esc(node)));
                out.push((OP_PARENT, parent.as_deref().map_or_else(String::new, super::node::esc)));
            }
            OpKind::DeleteNode { node } => {
                out.push((OP_KIND, "delete-node".to_owned()));
                out.push((OP_FROM, super::node::esc(node)));
            }
        }
        out
    }

    /// Reads an intent record.
    pub(crate) fn from_item(item: &Item) -> Result<TreeOp, TreeProblem> {
        let field = |attr: &str| {
            intent_field(item, attr).ok_or_else(|| TreeProblem::CorruptIntent {
                reason: format!("attribute `{attr}` is missing or not a string"),
            })
        };
        let path = |attr: &str| {
            TreePath::parse(field(attr)?).map_err(|e| TreeProblem::CorruptIntent {
                reason: format!("attribute `{attr}`: {e}"),
            })
        };
        let kind = match field(OP_KIND)? {
            "move" => OpKind::Move { from: path(OP_FROM)?, to: path(OP_TO)? },
            "delete" => OpKind::Delete { root: path(OP_FROM)? },
            "move-node" => {
                let parent = field(OP_PARENT)?;
                OpKind::MoveNode {
                    node: super::node::display(field(OP_FROM)?),
                    parent: (!parent.is_empty()).then(|| super::node::display(parent)),
                }
            }
            "delete-node" => OpKind::DeleteNode { node: super::node::display(field(OP_FROM)?) },
            other => {
                return Err(TreeProblem::CorruptIntent {
                    reason: format!("unknown operation {other:?}"),
                });
            }
        };
        let phase = OpPhase::parse(field(OP_PHASE)?)
            .ok_or_else(|| TreeProblem::CorruptIntent { reason: "unknown phase".to_owned() })?;
        Ok(TreeOp { kind, phase, token: field(OP_TOKEN)?.to_owned() })
    }
}

/// Progress of a large move or delete, reported after every batch of nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// The phase: [`OpPhase::Copy`] or [`OpPhase::Remove`].
    pub phase: OpPhase,
    /// Nodes done in this phase.
    pub done: usize,
    /// Nodes of this phase in all.
    pub total: usize,
}

/// What a move, delete or resume did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpReport {
    /// The nodes moved or deleted.
    pub nodes: usize,
    /// True when the operation went through the resumable protocol (more nodes than one
    /// transaction holds), false when it was one transaction.
    pub resumable: bool,
}

/// The progress callback of a large operation.
pub(crate) type ProgressFn<'p> = Box<dyn FnMut(Progress) + Send + 'p>;

impl<'a, E: Hierarchy> Tree<'a, E> {
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
        let mut progress: ProgressFn<'_> = Box::new(progress);
        let nodes = match (&op.kind, op.phase) {
            (_, OpPhase::Check) => 0,
            (OpKind::Move { from, to }, OpPhase::Copy) => {
                let (old, copies) = rebased(self.read_subtree(from).await?, from, to)?;
                self.copy(&copies, &mut progress).await?;
                set_phase::<E>(
                    self.db,
                    &self.pk,
                    &op_sk::<E>(),
                    &op.token,
                    OpPhase::Remove.as_str(),
                )
                .await?;
                let n = old.len();
                self.remove(old, &mut progress).await?;
                n
            }
            (OpKind::MoveNode { .. } | OpKind::DeleteNode { .. }, _) => {
                return Err(problem::<E>(TreeProblem::CorruptIntent {
                    reason: format!("{op} is not an operation of a path tree"),
                }));
            }
            (OpKind::Move { from: root, .. } | OpKind::Delete { root }, _) => {
                let nodes = self.read_subtree(root).await?;
                let n = nodes.len();
                self.remove(nodes.iter().map(Hierarchy::path).cloned().collect(), &mut progress)
                    .await?;
                n
            }
        };
        clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op.token).await?;
        Ok(Some(OpReport { nodes, resumable: true }))
    }

    /// Undoes an interrupted large move that has not started removing the old nodes: deletes
    /// the copies written so far and the intent record. A delete, or a move in its remove
    /// phase, cannot be undone ([`TreeProblem::CannotRollBack`]); finish it with
    /// [`resume`](Tree::resume). `Ok(None)` when nothing was pending.
    pub async fn rollback(&self) -> Result<Option<OpReport>, Error> {
        let Some(op) = self.pending().await? else {
            return Ok(None);
        };
        let nodes = match (&op.kind, op.phase) {
            (_, OpPhase::Check) => 0,
            (OpKind::Move { to, .. }, OpPhase::Copy) => {
                let copies = self.read_subtree(to).await?;
                let n = copies.len();
                let mut quiet: ProgressFn<'_> = Box::new(|_| {});
                self.remove(copies.iter().map(Hierarchy::path).cloned().collect(), &mut quiet)
                    .await?;
                n
            }
            _ => return Err(problem::<E>(TreeProblem::CannotRollBack { op })),
        };
        clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op.token).await?;
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
        let op = TreeOp { kind, phase: OpPhase::Check, token: idempotency_token() };
        let fields = op.fields();
        let fields: Vec<(&str, &str)> = fields.iter().map(|(a, v)| (*a, v.as_str())).collect();
        match put_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &fields).await? {
            Ok(()) => Ok(op),
            Err(stored) => Err(self.busy(stored)),
        }
    }

    /// The error for a tree whose intent record is `stored`.
    pub(crate) fn busy(&self, stored: Option<Item>) -> Error {
        match stored.as_ref().map(TreeOp::from_item) {
            Some(Ok(op)) => problem::<E>(TreeProblem::Busy { op }),
            Some(Err(corrupt)) => problem::<E>(corrupt),
            None => problem::<E>(TreeProblem::CorruptIntent {
                reason: "an operation is in progress, but its record was not returned".to_owned(),
            }),
        }
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
                clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op.token).await?;
                return Err(e);
            }
        };
        set_phase::<E>(self.db, &self.pk, &op_sk::<E>(), &op.token, OpPhase::Copy.as_str()).await?;
        self.copy(&copies, progress).await?;
        set_phase::<E>(self.db, &self.pk, &op_sk::<E>(), &op.token, OpPhase::Remove.as_str())
            .await?;
        let n = old.len();
        self.remove(old, progress).await?;
        clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op.token).await?;
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

    /// Writes `copies`, shallowest first.
    async fn copy(&self, copies: &[E], progress: &mut ProgressFn<'_>) -> Result<(), Error> {
        let mut order: Vec<&E> = copies.iter().collect();
        order.sort_by_key(|n| n.path().depth());
        let total = order.len();
        let mut done = 0;
        for chunk in order.chunks(CHUNK) {
            let mut batch = self.db.batch_write();
            for copy in chunk {
                batch = batch.put_unchecked(*copy);
            }
            batch.send().await?;
            done += chunk.len();
            progress(Progress { phase: OpPhase::Copy, done, total });
        }
        Ok(())
    }

    /// Deletes the nodes at `paths`, deepest first.
    async fn remove(
        &self,
        mut paths: Vec<TreePath>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<(), Error> {
        paths.sort_by_key(|p| std::cmp::Reverse(p.depth()));
        let total = paths.len();
        let mut done = 0;
        for chunk in paths.chunks(CHUNK) {
            let mut batch = self.db.batch_write();
            for path in chunk {
                batch = batch.delete(self.key(path));
            }
            batch.send().await?;
            done += chunk.len();
            progress(Progress { phase: OpPhase::Remove, done, total });
        }
        Ok(())
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
                clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op.token).await?;
                other?;
                return Err(problem::<E>(TreeProblem::NodeMissing { path: root.clone() }));
            }
        };
        set_phase::<E>(self.db, &self.pk, &op_sk::<E>(), &op.token, OpPhase::Remove.as_str())
            .await?;
        self.remove(nodes.iter().map(Hierarchy::path).cloned().collect(), progress).await?;
        clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op.token).await?;
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
