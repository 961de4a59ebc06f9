//! Tree writes: insert, move (and rename), delete.

use super::PathTree;
use super::op::{moved, node_of, sk_of};
use crate::error::Error;
use crate::item::Item;
use crate::ops::Put;
use crate::ops::retry::{self, CONFLICTS, MOVE_CONFLICTS, Try};
use crate::tree::builders::{Delete, Move};
use crate::tree::conflict::{Failed, moving};
use crate::tree::handle::Path;
use crate::tree::op::{OpPhase, OpReport, reported};
use crate::tree::raw::{guarded_delete, rev_bump};
use crate::tree::{Hierarchy, TreePath, TreeProblem, check_path, node_sk, problem};

/// The most nodes a move writes in one transaction: two actions per node (delete the old,
/// create the new), the new parent's revision and the intent check fit in 100 actions.
pub const MAX_TRANSACTIONAL_MOVE: usize = 49;

/// The most nodes a delete removes in one transaction (one action per node and the intent
/// check).
pub const MAX_TRANSACTIONAL_DELETE: usize = 99;

impl<'a, E: Hierarchy> PathTree<'a, E> {
    /// Moves the node at `from` and its whole subtree to `to` (in this tree): `to` is the
    /// node's new path, its last segment the node's new name; see [`Move`].
    pub fn move_subtree(&self, from: &TreePath, to: &TreePath) -> Move<'a, 'static, E, Path> {
        self.mover(from, Ok(to.clone()), false)
    }

    /// Moves the node at `path` and its whole subtree under the node at `parent`, keeping
    /// its name (`parent/<name>`); see [`Move`]. Moving a node under the parent it has
    /// changes nothing (`nodes: 0`); under itself or a node of its subtree it is
    /// [`TreeProblem::IntoOwnSubtree`].
    pub fn move_under(&self, path: &TreePath, parent: &TreePath) -> Move<'a, 'static, E, Path> {
        self.mover(path, destination(path, Some(parent)), true)
    }

    /// Moves the node at `path` and its whole subtree to the top level, keeping its name;
    /// see [`Move`]. A top-level node stays where it is (`nodes: 0`).
    pub fn move_to_top(&self, path: &TreePath) -> Move<'a, 'static, E, Path> {
        self.mover(path, destination(path, None), true)
    }

    /// Renames the node at `path` (its last segment) to `name`, moving its subtree with it.
    pub fn rename(&self, path: &TreePath, name: &str) -> Move<'a, 'static, E, Path> {
        let to = match path.parent() {
            Some(parent) => parent.child(name),
            None => TreePath::root(name),
        };
        let to = to.map_err(|p| TreeProblem::Path { path: name.to_owned(), problem: p });
        self.mover(path, to, false)
    }

    fn mover(
        &self,
        from: &TreePath,
        to: Result<TreePath, TreeProblem>,
        reparent: bool,
    ) -> Move<'a, 'static, E, Path> {
        Move::new(self, from.clone(), (to, reparent))
    }

    /// Deletes the node at `path` and its whole subtree; see [`Delete`].
    pub fn delete_subtree(&self, path: &TreePath) -> Delete<'a, 'static, E, Path> {
        Delete::new(self, path.clone())
    }

    /// The node at `root` and up to `cap` of its descendants, strongly consistent, as raw
    /// items (with their revisions); `None` when there is no node at `root`. More than `cap`
    /// items means the subtree is too large for one transaction, and no more is read.
    ///
    /// The root is read before its descendants: a node inserted under the root after the
    /// root was read changes the root's revision (the transaction then fails), and one
    /// inserted before is seen by the query. The query reads in key order, where every node
    /// comes before its own descendants, so the same holds for every node below.
    async fn read_items(&self, root: &TreePath, cap: usize) -> Result<Option<Vec<Item>>, Error> {
        let Some(node) = self.get_raw(&node_sk::<E>(root)).await? else {
            return Ok(None);
        };
        let below = self.subtree_query(root).consistent().limit(cap).items().all().await?;
        Ok(Some(std::iter::once(node).chain(below).collect()))
    }
}

/// The new path of the node at `path` moved under `parent` (`None`: to the top level),
/// keeping its name.
pub(super) fn destination(
    path: &TreePath,
    parent: Option<&TreePath>,
) -> Result<TreePath, TreeProblem> {
    let name = path.name();
    let to = match parent {
        Some(parent) => parent.child(name),
        None => TreePath::root(name),
    };
    to.map_err(|p| {
        let path = match parent {
            Some(parent) => format!("{}/{name}", parent.to_text()),
            None => name.to_owned(),
        };
        TreeProblem::Path { path, problem: p }
    })
}

/// Sends a move of a path subtree.
pub(super) async fn send_move<E: Hierarchy>(mv: Move<'_, '_, E, Path>) -> Result<OpReport, Error> {
    let Move { tree, from, to: (to, reparent), mut progress, limit, .. } = mv;
    let to = to.map_err(problem::<E>)?;
    if reparent && to == from {
        // Under that parent already: nothing moves, if the node exists.
        check_path::<E>(&from)?;
        return match tree.get(&from).consistent().send().await? {
            Some(_) => Ok(OpReport { nodes: 0, resumable: false }),
            None => Err(problem::<E>(TreeProblem::NodeMissing { path: from })),
        };
    }
    if from.contains(&to) {
        return Err(problem::<E>(TreeProblem::IntoOwnSubtree { from, to }));
    }
    // An ancestor of the node exists (its parent at least): the destination is taken. (The
    // new paths would also collide with old ones in the same transaction.)
    if to.is_ancestor_of(&from) {
        return Err(problem::<E>(TreeProblem::DestinationExists { path: to }));
    }
    check_path::<E>(&from)?;
    check_path::<E>(&to)?;
    let (shared, from_ref, to_ref) = (&tree, &from, &to);
    let moved = moving(E::NAME, MOVE_CONFLICTS, from.to_text(), move |_| async move {
        let Some(items) = shared.read_items(from_ref, limit).await? else {
            return Err(problem::<E>(TreeProblem::NodeMissing { path: from_ref.clone() }));
        };
        if items.len() > limit {
            return Ok(Try::Done(None));
        }
        Ok(match shared.move_once(items, from_ref, to_ref).await? {
            Some(report) => Try::Done(Some(report)),
            None => Try::Again(problem::<E>(TreeProblem::Changed { path: from_ref.clone() })),
        })
    })
    .await?;
    match moved {
        Some(report) => Ok(reported(report, &[OpPhase::Copy, OpPhase::Remove], &mut progress)),
        None => tree.large_move(&from, &to, &mut progress).await,
    }
}

impl<'a, E: Hierarchy> PathTree<'a, E> {
    /// One transaction moving the nodes read as `items`; `Ok(None)` when the subtree changed
    /// since (try again).
    async fn move_once(
        &self,
        items: Vec<Item>,
        from: &TreePath,
        to: &TreePath,
    ) -> Result<Option<OpReport>, Error> {
        let table = self.db.table_name();
        let n = items.len();
        let mut copies = Vec::with_capacity(n);
        let mut tx = self.db.transaction();
        for item in items {
            let (node, rev) = node_of::<E>(item)?;
            tx = self
                .push(tx, guarded_delete::<E>(table, &self.pk, sk_of(&node), rev, node.version())?);
            copies.push(moved(node, from, to)?);
        }
        // A move keeps the nodes' timestamps: their fields are unchanged.
        for copy in &copies {
            tx = tx.create_with(copy, Put::keeping_times);
        }
        let parent = to.parent();
        if let Some(parent) = &parent {
            tx = self.push(tx, rev_bump::<E>(table, &self.pk, node_sk::<E>(parent))?);
        }
        let Some(f) = self.send_checked(tx, None).await? else {
            return Ok(Some(OpReport { nodes: n, resumable: false }));
        };
        match (f.first(), parent) {
            _ if f.refused => Ok(None),
            (Some(i), _) if i < n => Ok(None),
            (Some(i), _) if i < 2 * n => match copies.get(i - n) {
                Some(copy) => {
                    Err(problem::<E>(TreeProblem::DestinationExists { path: copy.path().clone() }))
                }
                None => Err(f.err),
            },
            (Some(_), Some(parent)) => Err(problem::<E>(TreeProblem::ParentMissing { parent })),
            (None, _) if f.only_conflict() => Ok(None),
            _ => Err(f.err),
        }
    }

    /// One transaction deleting the nodes read as `items`; `Ok(None)` when the subtree
    /// changed since.
    async fn delete_once(&self, items: Vec<Item>) -> Result<Option<OpReport>, Error> {
        let table = self.db.table_name();
        let n = items.len();
        let mut tx = self.db.transaction();
        for item in items {
            let (node, rev) = node_of::<E>(item)?;
            tx = self
                .push(tx, guarded_delete::<E>(table, &self.pk, sk_of(&node), rev, node.version())?);
        }
        let Err(err) = self.push(tx, self.op_check(None)?).send().await else {
            return Ok(Some(OpReport { nodes: n, resumable: false }));
        };
        let f = Failed::new(err);
        match f.first() {
            Some(i) if i < n => Ok(None),
            Some(_) => match self.busy().await? {
                Some(busy) => Err(busy),
                None => Ok(None),
            },
            None if f.only_conflict() => Ok(None),
            None => Err(f.err),
        }
    }
}

/// Sends a delete of a path subtree.
pub(super) async fn send_delete<E: Hierarchy>(
    d: Delete<'_, '_, E, Path>,
) -> Result<OpReport, Error> {
    let Delete { tree, root, mut progress, limit, .. } = d;
    check_path::<E>(&root)?;
    let (shared, root_ref) = (&tree, &root);
    let deleted = retry::on_conflict(CONFLICTS, move |_| async move {
        let Some(items) = shared.read_items(root_ref, limit).await? else {
            return Err(problem::<E>(TreeProblem::NodeMissing { path: root_ref.clone() }));
        };
        if items.len() > limit {
            return Ok(Try::Done(None));
        }
        Ok(match shared.delete_once(items).await? {
            Some(report) => Try::Done(Some(report)),
            None => Try::Again(problem::<E>(TreeProblem::Changed { path: root_ref.clone() })),
        })
    })
    .await?;
    match deleted {
        Some(report) => Ok(reported(report, &[OpPhase::Remove], &mut progress)),
        None => tree.large_delete(&root, &mut progress).await,
    }
}
