//! Tree writes: insert, move (and rename), delete.

use std::future::IntoFuture;

use super::PathTree;
use super::op::{moved, node_of, sk_of};
use crate::error::Error;
use crate::item::Item;
use crate::ops::retry::{self, CONFLICTS, MOVE_CONFLICTS, Try};
use crate::ops::transact::Rebuild;
use crate::ops::{BoxFuture, Put, Target};
use crate::tree::conflict::{action_error, failures, moving, only_conflict};
use crate::tree::op::{OpPhase, OpReport, Progress, ProgressFn};
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
    /// large move or delete in progress involves the path ([`TreeProblem::Busy`]). When the
    /// operation that refused it has finished by the time its intent is read, and after a
    /// transaction conflict, the insert is sent again (up to 3 times).
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
        let (tree, lineage, parent, shared) = (self, &lineage, &parent, &target);
        // The transaction; and the index of its intent check.
        let build = move || {
            let mut tx = db.transaction().create_with(shared.get(), |put| put.at(stamp));
            if let Some(parent) = parent {
                let sk = node_sk::<E>(parent);
                let (item, size) = rev_bump::<E>(table, &tree.pk, &sk)?;
                tx = tx.raw(E::NAME, (tree.pk.clone(), Some(sk)), item, size);
            }
            let op_index = tx.len();
            let (item, size) = op_check::<E>(table, &tree.pk, &op_sk::<E>(), Some(lineage))?;
            tx = tx.raw(E::NAME, (tree.pk.clone(), Some(op_sk::<E>())), item, size);
            Ok::<_, Error>((tx, op_index))
        };
        let rebuild = move || build().and_then(|(tx, _)| tx.into_items());
        let rebuild: &Rebuild<'_> = &rebuild;
        retry::on_conflict(CONFLICTS, move |_| async move {
            let (tx, op_index) = build()?;
            // Sent again after a transport failure with the items rendered anew, rather than
            // with a copy of the request taken before every first send.
            let err = match tx.rebuilt_by(rebuild).send().await {
                Ok(()) => return Ok(Try::Done(())),
                Err(err) => err,
            };
            let (conditions, other) = failures(&err);
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
    /// node's new path, its last segment the node's new name; see [`PathMove`].
    pub fn move_subtree(&self, from: &TreePath, to: &TreePath) -> PathMove<'a, 'static, E> {
        self.mover(from, Ok(to.clone()), false)
    }

    /// Moves the node at `path` and its whole subtree under the node at `parent`, keeping
    /// its name (`parent/<name>`); see [`PathMove`]. Moving a node under the parent it has
    /// changes nothing (`nodes: 0`); under itself or a node of its subtree it is
    /// [`TreeProblem::IntoOwnSubtree`].
    pub fn move_under(&self, path: &TreePath, parent: &TreePath) -> PathMove<'a, 'static, E> {
        let to = parent.child(path.name()).map_err(|p| {
            problem::<E>(TreeProblem::Path {
                path: format!("{}/{}", parent.to_text(), path.name()),
                problem: p,
            })
        });
        self.mover(path, to, true)
    }

    /// Moves the node at `path` and its whole subtree to the top level, keeping its name;
    /// see [`PathMove`]. A top-level node stays where it is (`nodes: 0`).
    pub fn move_to_top(&self, path: &TreePath) -> PathMove<'a, 'static, E> {
        let name = path.name();
        let to = TreePath::root(name)
            .map_err(|p| problem::<E>(TreeProblem::Path { path: name.to_owned(), problem: p }));
        self.mover(path, to, true)
    }

    /// Renames the node at `path` (its last segment) to `name`, moving its subtree with it.
    pub fn rename(&self, path: &TreePath, name: &str) -> PathMove<'a, 'static, E> {
        let to = match path.parent() {
            Some(parent) => parent.child(name),
            None => TreePath::root(name),
        };
        let to =
            to.map_err(|p| problem::<E>(TreeProblem::Path { path: name.to_owned(), problem: p }));
        self.mover(path, to, false)
    }

    fn mover(
        &self,
        from: &TreePath,
        to: Result<TreePath, Error>,
        reparent: bool,
    ) -> PathMove<'a, 'static, E> {
        PathMove {
            tree: self.clone(),
            from: from.clone(),
            to,
            progress: None,
            limit: MAX_TRANSACTIONAL_MOVE,
            reparent,
        }
    }

    /// Deletes the node at `path` and its whole subtree; see [`PathDelete`].
    pub fn delete_subtree(&self, path: &TreePath) -> PathDelete<'a, 'static, E> {
        PathDelete {
            tree: self.clone(),
            root: path.clone(),
            progress: None,
            limit: MAX_TRANSACTIONAL_DELETE,
        }
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

/// A move of a subtree of a path tree; made by [`PathTree::move_subtree`] (to a new path),
/// [`PathTree::move_under`], [`PathTree::move_to_top`] and [`PathTree::rename`], sent by
/// `.await` (or [`send`](PathMove::send)).
///
/// Checked before anything is written: the destination is not inside the subtree, every
/// moved path is within the tree's `max_depth` and every moved item within the key limits;
/// the node exists ([`TreeProblem::NodeMissing`]), the destination does not
/// ([`TreeProblem::DestinationExists`]) and its parent does ([`TreeProblem::ParentMissing`]).
///
/// Up to [`MAX_TRANSACTIONAL_MOVE`] nodes, the move is a strongly consistent read of the
/// subtree and one transaction, conditioned on every node's revision: a node inserted under
/// the subtree meanwhile cancels it (so does an insert under the new parent at the same
/// moment), and the move is read and tried again: up to 8 tries with exponential backoff and
/// jitter (about 1.5 s of pauses at most), then [`TreeProblem::Contended`]
/// ([`Error::is_tree_contended`](crate::Error::is_tree_contended)), nothing written. Larger subtrees move through the resumable protocol (see
/// [`PathTree::resume`]): fenced transactions of up to 99 writes per phase, a few requests for
/// the intent record, progress reported after every transaction.
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
/// for path in ["III", "III/a", "III/b", "V"] {
///     tree.insert(&Folder { drive: "D".into(), path: path.parse()? }).await?;
/// }
/// let report = tree.move_subtree(&"III".parse()?, &"V/III".parse()?).await?;
/// assert_eq!(report.nodes, 3);
/// let v_children = tree.descendants(&"V".parse()?).all().await?;
/// let paths: Vec<String> = v_children.iter().map(|f| f.path.to_string()).collect();
/// assert_eq!(paths, ["V/III", "V/III/a", "V/III/b"]);
///
/// // The destination must not be inside the subtree.
/// let err = tree.move_subtree(&"V".parse()?, &"V/III/x".parse()?).await.unwrap_err();
/// assert!(err.is_invalid_input());
/// # Ok(()) }
/// ```
#[must_use = "a move does nothing until it is awaited"]
pub struct PathMove<'a, 'p, E: Hierarchy> {
    tree: PathTree<'a, E>,
    from: TreePath,
    to: Result<TreePath, Error>,
    progress: Option<ProgressFn<'p>>,
    limit: usize,
    /// Made by `move_under` / `move_to_top`: a destination equal to the node's own path
    /// means it is under that parent already (nothing to do), not a move into itself.
    reparent: bool,
}

impl<'a, 'p, E: Hierarchy> PathMove<'a, 'p, E> {
    /// Calls `f` as the move advances: after every transaction of a large move (99 nodes),
    /// once per phase for a transactional one.
    pub fn on_progress<'q>(self, f: impl FnMut(Progress) + Send + 'q) -> PathMove<'a, 'q, E> {
        PathMove {
            tree: self.tree,
            from: self.from,
            to: self.to,
            progress: Some(Box::new(f)),
            limit: self.limit,
            reparent: self.reparent,
        }
    }

    /// Moves subtrees of more than `n` nodes (at most [`MAX_TRANSACTIONAL_MOVE`]) through the
    /// resumable protocol; `0` always uses it.
    pub fn transaction_limit(mut self, n: usize) -> Self {
        self.limit = n.min(MAX_TRANSACTIONAL_MOVE);
        self
    }

    /// Sends the move.
    pub async fn send(self) -> Result<OpReport, Error> {
        let PathMove { tree, from, to, progress, limit, reparent } = self;
        let to = to?;
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

impl<'a, 'p, E: Hierarchy> IntoFuture for PathMove<'a, 'p, E>
where
    'p: 'a,
{
    type Output = Result<OpReport, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

/// A delete of a subtree of a path tree; made by [`PathTree::delete_subtree`], sent by
/// `.await` (or [`send`](PathDelete::send)).
///
/// Up to [`MAX_TRANSACTIONAL_DELETE`] nodes it is one strongly consistent read and one
/// transaction, conditioned on every node's revision (retried when a node was inserted under
/// the subtree meanwhile). Larger subtrees are deleted through the resumable protocol,
/// deepest nodes first, so an interrupted delete leaves a smaller tree, never orphans; and
/// while it runs, inserts under the subtree are refused.
#[must_use = "a delete does nothing until it is awaited"]
pub struct PathDelete<'a, 'p, E: Hierarchy> {
    tree: PathTree<'a, E>,
    root: TreePath,
    progress: Option<ProgressFn<'p>>,
    limit: usize,
}

impl<'a, 'p, E: Hierarchy> PathDelete<'a, 'p, E> {
    /// Calls `f` as the delete advances (after every transaction of a large delete, 99
    /// nodes).
    pub fn on_progress<'q>(self, f: impl FnMut(Progress) + Send + 'q) -> PathDelete<'a, 'q, E> {
        PathDelete {
            tree: self.tree,
            root: self.root,
            progress: Some(Box::new(f)),
            limit: self.limit,
        }
    }

    /// Deletes subtrees of more than `n` nodes (at most [`MAX_TRANSACTIONAL_DELETE`]) through
    /// the resumable protocol.
    pub fn transaction_limit(mut self, n: usize) -> Self {
        self.limit = n.min(MAX_TRANSACTIONAL_DELETE);
        self
    }

    /// Sends the delete.
    pub async fn send(self) -> Result<OpReport, Error> {
        let PathDelete { tree, root, progress, limit } = self;
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
}

impl<'a, 'p, E: Hierarchy> IntoFuture for PathDelete<'a, 'p, E>
where
    'p: 'a,
{
    type Output = Result<OpReport, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}
