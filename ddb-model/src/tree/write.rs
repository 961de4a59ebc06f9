//! Tree writes: insert, move (and rename), delete.

use std::future::IntoFuture;

use super::handle::Tree;
use super::op::{OpPhase, OpReport, Progress, ProgressFn, moved, node_of, sk_of};
use super::raw::{get_raw, guarded_delete, op_check, rev_bump};
use super::{Hierarchy, TreePath, TreeProblem, check_path, node_sk, op_sk, problem};
use crate::error::Error;
use crate::item::Item;
use crate::ops::{ActionReason, BoxFuture, CancelReason, Target};

/// The most nodes a move writes in one transaction: two actions per node (delete the old,
/// create the new), the new parent's revision and the intent check fit in 100 actions.
pub const MAX_TRANSACTIONAL_MOVE: usize = 49;

/// The most nodes a delete removes in one transaction (one action per node and the intent
/// check).
pub const MAX_TRANSACTIONAL_DELETE: usize = 99;

/// How often a move or delete of a small subtree is retried when a concurrent write changed
/// the subtree between its read and its transaction.
pub(crate) const CONFLICT_RETRIES: usize = 3;

/// What canceled a transaction: the actions whose condition failed, in order, and whether
/// anything else (a conflict, throttling, ...) did.
pub(crate) fn failures(err: &Error) -> (Vec<usize>, bool) {
    let mut conditions = Vec::new();
    let mut other = false;
    for r in err.cancellation_reasons() {
        match &r.reason {
            CancelReason::None => {}
            CancelReason::Condition(_) => conditions.push(r.action),
            CancelReason::Other { code, .. } if code == "ConditionalCheckFailed" => {
                conditions.push(r.action);
            }
            _ => other = true,
        }
    }
    (conditions, other)
}

/// The typed error of action `index` of a failed transaction: what the action alone would
/// have returned (`AlreadyExists`, a key problem, ...); `err` itself otherwise.
pub(crate) fn action_error(err: Error, index: usize) -> Error {
    match err {
        Error::InvalidAction { action, source } if action == index => *source,
        Error::TransactionCanceled { mut reasons, source } => {
            let Some(pos) = reasons.iter().position(|r| r.action == index) else {
                return Error::TransactionCanceled { reasons, source };
            };
            let ActionReason { action, entity, key, reason } = reasons.remove(pos);
            match reason {
                CancelReason::Condition(e) => e,
                reason => {
                    reasons.insert(pos, ActionReason { action, entity, key, reason });
                    Error::TransactionCanceled { reasons, source }
                }
            }
        }
        other => other,
    }
}

impl<'a, E: Hierarchy> Tree<'a, E> {
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

        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut tx = db.transaction().create(target.get());
            let parent = path.parent();
            if let Some(parent) = &parent {
                let sk = node_sk::<E>(parent);
                let (item, size) = rev_bump::<E>(table, &self.pk, &sk)?;
                tx = tx.raw(E::NAME, (self.pk.clone(), Some(sk)), item, size);
            }
            let op_index = tx.len();
            let (item, size) = op_check::<E>(table, &self.pk, &op_sk::<E>(), Some(&lineage))?;
            tx = tx.raw(E::NAME, (self.pk.clone(), Some(op_sk::<E>())), item, size);

            let err = match tx.send().await {
                Ok(()) => {
                    if let (Target::Exclusive(e), Some(v)) = (&mut target, next) {
                        e.set_version(v);
                    }
                    return Ok(());
                }
                Err(err) => err,
            };
            let (conditions, other) = failures(&err);
            let retry = attempt <= CONFLICT_RETRIES;
            // A pending operation explains the other failures (its copies exist already);
            // when it finished meanwhile, the insert is tried again against the tree it left.
            if conditions.contains(&op_index) {
                match self.pending().await? {
                    Some(op) => return Err(problem::<E>(TreeProblem::Busy { op })),
                    None if retry => continue,
                    None => {}
                }
            }
            // A transaction conflict (a concurrent write of the parent or the intent record,
            // e.g. a large operation's fenced writes): tried again.
            if conditions.is_empty() && other && err.is_transaction_conflict() && retry {
                tokio::time::sleep(std::time::Duration::from_millis(5 << attempt)).await;
                continue;
            }
            return match conditions.first() {
                Some(0) | None => Err(action_error(err, 0)),
                Some(_) => match parent {
                    Some(parent) => Err(problem::<E>(TreeProblem::ParentMissing { parent })),
                    None => Err(err),
                },
            };
        }
    }

    /// [`TreeProblem::Busy`] with the operation in progress; `Ok(None)` (try again) when it
    /// finished meanwhile.
    async fn busy_or_retry(&self) -> Result<Option<OpReport>, Error> {
        match self.pending().await? {
            Some(op) => Err(problem::<E>(TreeProblem::Busy { op })),
            None => Ok(None),
        }
    }

    /// Moves the node at `from` and its whole subtree to `to` (in this tree); see
    /// [`MoveSubtree`].
    pub fn move_subtree(&self, from: &TreePath, to: &TreePath) -> MoveSubtree<'a, 'static, E> {
        MoveSubtree {
            tree: self.clone(),
            from: from.clone(),
            to: Ok(to.clone()),
            progress: None,
            limit: MAX_TRANSACTIONAL_MOVE,
        }
    }

    /// Renames the node at `path` (its last segment) to `name`, moving its subtree with it.
    pub fn rename(&self, path: &TreePath, name: &str) -> MoveSubtree<'a, 'static, E> {
        let to = match path.parent() {
            Some(parent) => parent.child(name),
            None => TreePath::root(name),
        };
        let to =
            to.map_err(|p| problem::<E>(TreeProblem::Path { path: name.to_owned(), problem: p }));
        MoveSubtree {
            tree: self.clone(),
            from: path.clone(),
            to,
            progress: None,
            limit: MAX_TRANSACTIONAL_MOVE,
        }
    }

    /// Deletes the node at `path` and its whole subtree; see [`DeleteSubtree`].
    pub fn delete_subtree(&self, path: &TreePath) -> DeleteSubtree<'a, 'static, E> {
        DeleteSubtree {
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

/// A move of a subtree; made by [`Tree::move_subtree`] and [`Tree::rename`], sent by
/// `.await`.
///
/// Checked before anything is written: the destination is not inside the subtree, every
/// moved path is within the tree's `max_depth` and every moved item within the key limits;
/// the node exists ([`TreeProblem::NodeMissing`]), the destination does not
/// ([`TreeProblem::DestinationExists`]) and its parent does ([`TreeProblem::ParentMissing`]).
///
/// Up to [`MAX_TRANSACTIONAL_MOVE`] nodes, the move is a strongly consistent read of the
/// subtree and one transaction, conditioned on every node's revision: a node inserted under
/// the subtree meanwhile cancels it, and the move is read and tried again (a few times, then
/// [`TreeProblem::Changed`]). Larger subtrees move through the resumable protocol (see
/// [`Tree::resume`]): `2 + ceil(S / 25)` batch requests per phase, a few requests for the
/// intent record, progress reported after every 100 nodes.
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
pub struct MoveSubtree<'a, 'p, E: Hierarchy> {
    tree: Tree<'a, E>,
    from: TreePath,
    to: Result<TreePath, Error>,
    progress: Option<ProgressFn<'p>>,
    limit: usize,
}

impl<'a, 'p, E: Hierarchy> MoveSubtree<'a, 'p, E> {
    /// Calls `f` as the move advances: after every 100 nodes of a large move, once per phase
    /// for a transactional one.
    pub fn on_progress<'q>(self, f: impl FnMut(Progress) + Send + 'q) -> MoveSubtree<'a, 'q, E> {
        MoveSubtree {
            tree: self.tree,
            from: self.from,
            to: self.to,
            progress: Some(Box::new(f)),
            limit: self.limit,
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
        let MoveSubtree { tree, from, to, progress, limit } = self;
        let to = to?;
        let mut progress = progress.unwrap_or_else(|| Box::new(|_| {}));
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
        for _ in 0..=CONFLICT_RETRIES {
            let Some(items) = tree.read_items(&from, limit).await? else {
                return Err(problem::<E>(TreeProblem::NodeMissing { path: from }));
            };
            if items.len() > limit {
                return tree.large_move(&from, &to, &mut progress).await;
            }
            if let Some(report) = tree.move_once(items, &from, &to).await? {
                let n = report.nodes;
                progress(Progress { phase: OpPhase::Copy, done: n, total: n });
                progress(Progress { phase: OpPhase::Remove, done: n, total: n });
                return Ok(report);
            }
        }
        Err(problem::<E>(TreeProblem::Changed { path: from }))
    }
}

impl<'a, E: Hierarchy> Tree<'a, E> {
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
        for copy in &copies {
            tx = tx.create(copy);
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
            None if other && err.is_transaction_conflict() => Ok(None),
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
            None if other && err.is_transaction_conflict() => Ok(None),
            None => Err(err),
        }
    }
}

impl<'a, 'p, E: Hierarchy> IntoFuture for MoveSubtree<'a, 'p, E>
where
    'p: 'a,
{
    type Output = Result<OpReport, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

/// A delete of a subtree; made by [`Tree::delete_subtree`], sent by `.await`.
///
/// Up to [`MAX_TRANSACTIONAL_DELETE`] nodes it is one strongly consistent read and one
/// transaction, conditioned on every node's revision (retried when a node was inserted under
/// the subtree meanwhile). Larger subtrees are deleted through the resumable protocol,
/// deepest nodes first, so an interrupted delete leaves a smaller tree, never orphans; and
/// while it runs, inserts under the subtree are refused.
#[must_use = "a delete does nothing until it is awaited"]
pub struct DeleteSubtree<'a, 'p, E: Hierarchy> {
    tree: Tree<'a, E>,
    root: TreePath,
    progress: Option<ProgressFn<'p>>,
    limit: usize,
}

impl<'a, 'p, E: Hierarchy> DeleteSubtree<'a, 'p, E> {
    /// Calls `f` as the delete advances (after every 100 nodes of a large delete).
    pub fn on_progress<'q>(self, f: impl FnMut(Progress) + Send + 'q) -> DeleteSubtree<'a, 'q, E> {
        DeleteSubtree {
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
        let DeleteSubtree { tree, root, progress, limit } = self;
        let mut progress = progress.unwrap_or_else(|| Box::new(|_| {}));
        check_path::<E>(&root)?;
        for _ in 0..=CONFLICT_RETRIES {
            let Some(items) = tree.read_items(&root, limit).await? else {
                return Err(problem::<E>(TreeProblem::NodeMissing { path: root }));
            };
            if items.len() > limit {
                return tree.large_delete(&root, &mut progress).await;
            }
            if let Some(report) = tree.delete_once(items).await? {
                let n = report.nodes;
                progress(Progress { phase: OpPhase::Remove, done: n, total: n });
                return Ok(report);
            }
        }
        Err(problem::<E>(TreeProblem::Changed { path: root }))
    }
}

impl<'a, 'p, E: Hierarchy> IntoFuture for DeleteSubtree<'a, 'p, E>
where
    'p: 'a,
{
    type Output = Result<OpReport, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}
