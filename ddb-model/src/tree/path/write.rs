//! Tree writes: insert, move (and rename), delete.

use std::sync::atomic::{AtomicBool, Ordering};

use super::PathTree;
use super::op::{moved, node_of, sk_of};
use crate::error::Error;
use crate::item::Item;
use crate::ops::retry::{self, CONFLICTS, MOVE_CONFLICTS, Try};
use crate::ops::transact::Rebuild;
use crate::ops::{Put, Target};
use crate::tree::builders::{Delete, Move};
use crate::tree::conflict::{action_error, failures, moving, only_conflict};
use crate::tree::handle::Path;
use crate::tree::op::{OpPhase, OpReport, Progress};
use crate::tree::raw::{get_raw, guarded_delete, op_check, rev_bump};
use crate::tree::{Hierarchy, TreePath, TreeProblem, check_path, node_sk, op_sk, problem};

/// The most nodes a move writes in one transaction: two actions per node (delete the old,
/// create the new), the new parent's revision and the intent check fit in 100 actions.
pub const MAX_TRANSACTIONAL_MOVE: usize = 49;

/// The most nodes a delete removes in one transaction (one action per node and the intent
/// check).
pub const MAX_TRANSACTIONAL_DELETE: usize = 99;

impl<'a, E: Hierarchy> PathTree<'a, E> {
    /// Inserts a node: one `TransactWriteItems` that writes the node if its path is free
    /// ([`Error::AlreadyExists`] otherwise), checks that its parent exists
    /// ([`TreeProblem::ParentMissing`]) and bumps the parent's revision, and checks that no
    /// large move or delete in progress involves the path ([`TreeProblem::Busy`]). That last
    /// check first asks only whether any large operation is under way, which costs the
    /// service least; when one is, the insert is sent once more asking whether it involves
    /// the path. When the operation that refused it has finished by the time its intent is
    /// read, and after a transaction conflict, the insert is sent again (up to 3 times).
    ///
    /// Checked before anything is sent: the node belongs to this tree (its partition key),
    /// its path is within the tree's `max_depth`, its key and item are within DynamoDB's
    /// limits. Through `&mut`, a versioned node's version is updated.
    pub async fn insert<'b>(&'b self, node: impl Into<Target<'b, E>>) -> Result<(), Error> {
        let db = self.db;
        let target = node.into();
        let n = target.get();
        let path = n.path().clone();
        check_path::<E>(&path)?;
        let key = n.key();
        if key.pk() != self.pk {
            return Err(problem::<E>(TreeProblem::OtherTree {
                tree: self.pk.clone(),
                node: key.pk().to_owned(),
            }));
        }
        let table = db.table_name();
        let mut lineage: Vec<String> = path.ancestors().map(|p| p.to_text()).collect();
        lineage.push(path.to_text());
        let (_, next) = crate::ops::put::next_version::<E>(n.version())?;
        let mut target = target;
        let stamp = db.stamp(true);
        let parent = path.parent();
        // The intent check asks first only whether a large operation is under way (the
        // common answer, no, costs the service least); when one is, from then on whether
        // it involves the path.
        let narrow = AtomicBool::new(false);
        let (tree, lineage, parent, shared, narrow) = (self, &lineage, &parent, &target, &narrow);
        // The transaction; and the index of its intent check.
        let build = move || {
            let mut tx = db.transaction().create_with(shared.get(), |put| put.at(stamp));
            if let Some(parent) = parent {
                let sk = node_sk::<E>(parent);
                let (item, size) = rev_bump::<E>(table, &tree.pk, &sk)?;
                tx = tx.raw(E::NAME, (tree.pk.clone(), Some(sk)), item, size);
            }
            let op_index = tx.len();
            let paths = narrow.load(Ordering::Relaxed).then_some(lineage.as_slice());
            let (item, size) = op_check::<E>(table, &tree.pk, &op_sk::<E>(), paths)?;
            tx = tx.raw(E::NAME, (tree.pk.clone(), Some(op_sk::<E>())), item, size);
            Ok::<_, Error>((tx, op_index))
        };
        let rebuild = move || build().and_then(|(tx, _)| tx.into_items());
        let rebuild: &Rebuild<'_> = &rebuild;
        retry::on_conflict(CONFLICTS, move |_| async move {
            let (err, conditions, other, op_index) = loop {
                let (tx, op_index) = build()?;
                // Sent again after a transport failure with the items rendered anew, rather
                // than with a copy of the request taken before every first send.
                let err = match tx.rebuilt_by(rebuild).send().await {
                    Ok(()) => return Ok(Try::Done(())),
                    Err(err) => err,
                };
                let (conditions, other) = failures(&err);
                if conditions.contains(&op_index) && !narrow.swap(true, Ordering::Relaxed) {
                    continue;
                }
                break (err, conditions, other, op_index);
            };
            // A pending operation explains the other failures (its copies exist already);
            // when it finished meanwhile, the insert is tried again against the tree it left.
            // So is one that met a transaction conflict (a concurrent write of the parent or
            // the intent record, e.g. a large operation's fenced writes).
            let refused_by_op = conditions.contains(&op_index);
            if refused_by_op && let Some(op) = tree.pending().await? {
                return Err(problem::<E>(TreeProblem::Busy { op }));
            }
            let again = refused_by_op || only_conflict(&conditions, other, &err);
            let err = match conditions.first() {
                Some(0) | None => action_error(err, 0),
                Some(_) => match parent {
                    Some(parent) => {
                        problem::<E>(TreeProblem::ParentMissing { parent: parent.clone() })
                    }
                    None => err,
                },
            };
            if again { Ok(Try::Again(err)) } else { Err(err) }
        })
        .await?;
        target.written(next, Some(stamp));
        Ok(())
    }

    /// [`TreeProblem::Busy`] with the operation in progress; `Ok(None)` (try again) when it
    /// finished meanwhile.
    async fn busy_or_retry(&self) -> Result<Option<OpReport>, Error> {
        match self.pending().await? {
            Some(op) => Err(problem::<E>(TreeProblem::Busy { op })),
            None => Ok(None),
        }
    }

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
        let sk = node_sk::<E>(root);
        let Some(node) = get_raw::<E>(self.db, &self.pk, &sk).await? else {
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
    let Move { tree, from, to: (to, reparent), progress, limit, .. } = mv;
    let to = to.map_err(problem::<E>)?;
    let mut progress = progress.unwrap_or_else(|| Box::new(|_| {}));
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
    let Some(report) = moved else {
        return tree.large_move(&from, &to, &mut progress).await;
    };
    let n = report.nodes;
    progress(Progress { phase: OpPhase::Copy, done: n, total: n });
    progress(Progress { phase: OpPhase::Remove, done: n, total: n });
    Ok(report)
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
        let mut deletes = Vec::with_capacity(n);
        let mut copies = Vec::with_capacity(n);
        for item in items {
            let (node, rev) = node_of::<E>(item)?;
            let sk = sk_of(&node);
            deletes.push((guarded_delete::<E>(table, &self.pk, &sk, rev, node.version())?, sk));
            copies.push(moved(node, from, to)?);
        }
        let mut tx = self.db.transaction();
        for ((item, size), sk) in deletes {
            tx = tx.raw(E::NAME, (self.pk.clone(), Some(sk)), item, size);
        }
        // A move keeps the nodes' timestamps: their fields are unchanged.
        for copy in &copies {
            tx = tx.create_with(copy, Put::keeping_times);
        }
        let parent = to.parent();
        if let Some(parent) = &parent {
            let sk = node_sk::<E>(parent);
            let (item, size) = rev_bump::<E>(table, &self.pk, &sk)?;
            tx = tx.raw(E::NAME, (self.pk.clone(), Some(sk)), item, size);
        }
        let op_index = tx.len();
        let (item, size) = op_check::<E>(table, &self.pk, &op_sk::<E>(), None)?;
        tx = tx.raw(E::NAME, (self.pk.clone(), Some(op_sk::<E>())), item, size);

        let err = match tx.send().await {
            Ok(()) => return Ok(Some(OpReport { nodes: n, resumable: false })),
            Err(err) => err,
        };
        let (conditions, other) = failures(&err);
        if conditions.contains(&op_index) {
            return self.busy_or_retry().await;
        }
        match conditions.first() {
            Some(&i) if i < n => Ok(None),
            Some(&i) if i < 2 * n => match copies.get(i - n) {
                Some(copy) => {
                    Err(problem::<E>(TreeProblem::DestinationExists { path: copy.path().clone() }))
                }
                None => Err(err),
            },
            Some(_) => match parent {
                Some(parent) => Err(problem::<E>(TreeProblem::ParentMissing { parent })),
                None => Err(err),
            },
            None if only_conflict(&conditions, other, &err) => Ok(None),
            None => Err(err),
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
            let sk = sk_of(&node);
            let (item, size) = guarded_delete::<E>(table, &self.pk, &sk, rev, node.version())?;
            tx = tx.raw(E::NAME, (self.pk.clone(), Some(sk)), item, size);
        }
        let (item, size) = op_check::<E>(table, &self.pk, &op_sk::<E>(), None)?;
        tx = tx.raw(E::NAME, (self.pk.clone(), Some(op_sk::<E>())), item, size);
        let err = match tx.send().await {
            Ok(()) => return Ok(Some(OpReport { nodes: n, resumable: false })),
            Err(err) => err,
        };
        let (conditions, other) = failures(&err);
        match conditions.first() {
            Some(&i) if i < n => Ok(None),
            Some(_) => self.busy_or_retry().await,
            None if only_conflict(&conditions, other, &err) => Ok(None),
            None => Err(err),
        }
    }
}

/// Sends a delete of a path subtree.
pub(super) async fn send_delete<E: Hierarchy>(
    d: Delete<'_, '_, E, Path>,
) -> Result<OpReport, Error> {
    let Delete { tree, root, progress, limit, .. } = d;
    let mut progress = progress.unwrap_or_else(|| Box::new(|_| {}));
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
    let Some(report) = deleted else {
        return tree.large_delete(&root, &mut progress).await;
    };
    let n = report.nodes;
    progress(Progress { phase: OpPhase::Remove, done: n, total: n });
    Ok(report)
}
