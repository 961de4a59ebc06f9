//! [`PathTree`]: the handle of one path tree, and its single-request reads.

mod layout;
mod op;
mod read;
mod write;

pub use layout::{Hierarchy, PathField, PathFns, TreeDef, path_fns, tree_index_keys};
pub(crate) use layout::{check_path, level_key, node_sk, op_sk, subtree_prefix, tree_index};
pub use write::{MAX_TRANSACTIONAL_DELETE, MAX_TRANSACTIONAL_MOVE};

use std::future::Future;

use futures_util::stream::BoxStream;

use crate::error::Error;
use crate::error::TreePath;
use crate::item::Item;
use crate::key::Key;
use crate::model::Stamp;
use crate::ops::BoxFuture;
use crate::ops::retry::{self, CONFLICTS, Try};
use crate::ops::transact::Rebuild;
use crate::ops::{EntityQuery, Get, KeyStart, OnIndex, OnTable, QueryFrom};
use crate::tree::builders::{Delete, Descendants, Move};
use crate::tree::bulk::{Forest, LoadPlan, LoadProblem};
use crate::tree::conflict::{Failed, action_error};
use crate::tree::handle::{Addressing, Path, Strategy, Tree, foreign};
use crate::tree::op::{OpKind, OpPhase, OpReport, ProgressFn, TreeOp, quiet};
use crate::tree::raw::rev_bump;
use crate::tree::{TreeProblem, problem};
use op::rebased;
use std::sync::atomic::{AtomicBool, Ordering};

/// The tree of one partition of a `#[hierarchy]` node type; made by the generated
/// `Node::tree(&db, ..partition key fields)`.
///
/// Reads, with their cost (pages aside; every query reads only the nodes it returns):
///
/// | read | requests |
/// | --- | --- |
/// | [`get`](PathTree::get), [`parent`](PathTree::parent) | 1 `GetItem` |
/// | [`children`](PathTree::children), [`roots`](PathTree::roots), [`at_depth`](PathTree::at_depth) | 1 `Query` on the tree's index |
/// | [`descendants`](PathTree::descendants) | 1 `Query` (whole subtree), or 1 per level of a bounded depth range |
/// | [`ancestors`](PathTree::ancestors), [`breadcrumbs`](PathTree::breadcrumbs) | 1 `BatchGetItem` (up to depth 100) |
/// | [`subtree_size`](PathTree::subtree_size) | 1 count `Query` and 1 `GetItem`, concurrently |
///
/// Writes: [`insert`](PathTree::insert) (1 transaction), [`move_subtree`](PathTree::move_subtree)
/// (to a new path), [`move_under`](PathTree::move_under) and
/// [`move_to_top`](PathTree::move_to_top) (keeping the name), [`rename`](PathTree::rename) and
/// [`delete_subtree`](PathTree::delete_subtree) (a get, a query and 1 transaction for up to 49
/// moved or 99 deleted nodes; a resumable protocol beyond), and [`resume`](PathTree::resume) /
/// [`rollback`](PathTree::rollback) of an interrupted operation. The same operations, on every
/// strategy: [`TreeProtocol`](super::TreeProtocol).
///
/// Example: on [`Tree`].
pub type PathTree<'a, E> = Tree<'a, E, Path>;

impl<'a, E: Hierarchy> PathTree<'a, E> {
    /// The key of the node at `path`.
    pub fn key(&self, path: &TreePath) -> Key<E> {
        Key::from_parts(self.pk.clone(), Some(node_sk::<E>(path)))
    }

    /// Reads the node at `path` (`.consistent()` for a strongly consistent read).
    pub fn get(&self, path: &TreePath) -> Get<'a, E> {
        self.db.get(self.key(path))
    }

    /// Reads the parent of the node at `path`; `Ok(None)` for a top-level node.
    pub async fn parent(&self, path: &TreePath) -> Result<Option<E>, Error> {
        match path.parent() {
            Some(parent) => self.get(&parent).await,
            None => Ok(None),
        }
    }

    pub(crate) fn index_query(&self, prefix: String) -> EntityQuery<'a, E, OnIndex> {
        let start = KeyStart::on_index(tree_index::<E>(), E::TREE.index, self.pk.clone(), &prefix);
        QueryFrom::<E, OnIndex>::new(self.db, start).prefix()
    }

    /// The children of the node at `path`, in key order: one query on the tree's index that
    /// reads the children and nothing else.
    pub fn children(&self, path: &TreePath) -> EntityQuery<'a, E, OnIndex> {
        self.index_query(level_key(path.depth() + 1, Some(path), true))
    }

    /// The top-level nodes (depth 1).
    pub fn roots(&self) -> EntityQuery<'a, E, OnIndex> {
        self.index_query(level_key(1, None, false))
    }

    /// The nodes at absolute depth `depth` (top-level nodes have depth 1), in key order.
    pub fn at_depth(&self, depth: usize) -> EntityQuery<'a, E, OnIndex> {
        self.index_query(level_key(depth, None, false))
    }

    /// Every node of the tree, in key order: one query (pages aside).
    pub fn nodes(&self) -> EntityQuery<'a, E, OnTable> {
        let start = KeyStart::new(None, self.pk.clone(), E::TREE.sk_prefix);
        QueryFrom::<E, OnTable>::new(self.db, start).prefix()
    }

    /// The table query of the proper descendants of `path`.
    pub(crate) fn subtree_query(&self, path: &TreePath) -> EntityQuery<'a, E, OnTable> {
        let start = KeyStart::new(None, self.pk.clone(), &subtree_prefix::<E>(path));
        QueryFrom::<E, OnTable>::new(self.db, start).prefix()
    }

    /// The ancestors of the node at `path`, root first, without the node itself: one
    /// `BatchGetItem` (the paths are known from `path`). Ancestors that do not exist are left
    /// out.
    pub async fn ancestors(&self, path: &TreePath) -> Result<Vec<E>, Error> {
        self.read_paths(path.ancestors().collect()).await
    }

    /// The ancestors of the node at `path` and the node itself, root first: one
    /// `BatchGetItem`.
    pub async fn breadcrumbs(&self, path: &TreePath) -> Result<Vec<E>, Error> {
        let mut paths: Vec<TreePath> = path.ancestors().collect();
        paths.push(path.clone());
        self.read_paths(paths).await
    }

    async fn read_paths(&self, paths: Vec<TreePath>) -> Result<Vec<E>, Error> {
        self.read_keys(paths.iter().map(|p| self.key(p)).collect()).await
    }

    /// The number of nodes in the subtree at `path`, the node itself included (0 when there
    /// is no node at `path`): a count query of the descendants and a get of the node, sent
    /// concurrently.
    pub async fn subtree_size(&self, path: &TreePath) -> Result<u64, Error> {
        let (below, node) =
            futures_util::future::try_join(self.subtree_query(path).count(), self.get(path).send())
                .await?;
        Ok(match node {
            Some(_) => below as u64 + 1,
            None => 0,
        })
    }
}

/// The path strategy: nodes addressed by path, moves to a path under the new parent.
impl<E: Hierarchy> Addressing<E> for Path {
    type Address = TreePath;
    type Node = TreePath;
    type Dest = (Result<TreePath, crate::tree::TreeProblem>, bool);

    fn address(node: &E) -> TreePath {
        node.path().clone()
    }

    fn parent_address(node: &E) -> Option<TreePath> {
        node.path().parent()
    }

    fn node(at: &TreePath) -> TreePath {
        at.clone()
    }

    fn key(tree: &PathTree<'_, E>, at: &TreePath) -> Key<E> {
        tree.key(at)
    }

    fn dest(at: &TreePath, parent: Option<&TreePath>) -> Self::Dest {
        (write::destination(at, parent), true)
    }

    fn load_addr(node: &E) -> (String, Option<String>) {
        (node.path().to_text(), node.path().parent().map(|p| p.to_text()))
    }

    fn op_sk() -> String {
        op_sk::<E>()
    }

    fn load_check(node: &E) -> Result<(), Error> {
        check_path::<E>(node.path())
    }

    fn load_problem(p: LoadProblem) -> Error {
        let parsed = |text: String| {
            TreePath::parse(&text).map_err(|problem| TreeProblem::Path { path: text, problem })
        };
        problem::<E>(match p {
            LoadProblem::Duplicate(node) => TreeProblem::Duplicate { node },
            LoadProblem::Missing(parent) => match parsed(parent) {
                Ok(parent) => TreeProblem::ParentMissing { parent },
                Err(p) => p,
            },
            // A path's parent is a prefix of it: paths never lead back.
            LoadProblem::Cycle(from, to) => match (parsed(from), parsed(to)) {
                (Ok(from), Ok(to)) => TreeProblem::IntoOwnSubtree { from, to },
                (Err(p), _) | (_, Err(p)) => p,
            },
        })
    }
}

/// The path strategy's steps.
impl<E: Hierarchy> Strategy<E> for Path {
    type From = TreePath;
    type ReadOptions = Option<u32>;
    const MOVE_LIMIT: usize = MAX_TRANSACTIONAL_MOVE;
    const DELETE_LIMIT: usize = MAX_TRANSACTIONAL_DELETE;

    async fn insert(
        tree: &Tree<'_, E, Self>,
        n: &E,
        _next: Option<u64>,
        stamp: Stamp,
    ) -> Result<(), Error> {
        let db = tree.db;
        let path = n.path();
        check_path::<E>(path)?;
        tree.check_tree(n)?;
        let table = db.table_name();
        let parent = path.parent();
        // The intent check asks first only whether a large operation is under way (the common
        // answer, no, costs the service least); when one is, from then on whether it involves
        // the path (its lineage's texts are built only then).
        let narrow = AtomicBool::new(false);
        let (parent, narrow) = (&parent, &narrow);
        // The transaction; and the index of its intent check.
        let build = move || {
            let mut tx = db.transaction().create_with(n, |put| put.at(stamp));
            if let Some(parent) = parent {
                tx = tree.push(tx, rev_bump::<E>(table, &tree.pk, node_sk::<E>(parent))?);
            }
            let op_index = tx.len();
            let lineage = narrow.load(Ordering::Relaxed).then(|| {
                path.ancestors().chain([path.clone()]).map(|p| p.to_text()).collect::<Vec<_>>()
            });
            Ok::<_, Error>((tree.push(tx, tree.op_check(lineage.as_deref())?), op_index))
        };
        let rebuild = move || build().and_then(|(tx, _)| tx.into_items());
        let rebuild: &Rebuild<'_> = &rebuild;
        retry::on_conflict(CONFLICTS, move |_| async move {
            let (f, op_index) = loop {
                let (tx, op_index) = build()?;
                // Sent again after a transport failure with the items rendered anew, rather than
                // with a copy of the request taken before every first send.
                let Err(err) = tx.rebuilt_by(rebuild).send().await else {
                    return Ok(Try::Done(()));
                };
                let f = Failed::new(err);
                if f.at(op_index) && !narrow.swap(true, Ordering::Relaxed) {
                    continue;
                }
                break (f, op_index);
            };
            // A pending operation explains the other failures (its copies exist already); when
            // it finished meanwhile, the insert is tried again against the tree it left. So is
            // one that met a transaction conflict (a concurrent write of the parent or the intent
            // record, e.g. a large operation's fenced writes).
            let refused_by_op = f.at(op_index);
            if refused_by_op && let Some(busy) = tree.busy().await? {
                return Err(busy);
            }
            let again = refused_by_op || f.only_conflict();
            let err = match (f.first(), parent) {
                (Some(0) | None, _) => action_error(f.err, 0),
                (Some(_), Some(parent)) => {
                    problem::<E>(TreeProblem::ParentMissing { parent: parent.clone() })
                }
                (Some(_), None) => f.err,
            };
            if again { Ok(Try::Again(err)) } else { Err(err) }
        })
        .await
    }

    async fn parent(tree: &PathTree<'_, E>, at: TreePath) -> Result<Option<E>, Error> {
        // The node and its parent in one `BatchGetItem`: no parent for a missing node.
        let Some(parent) = at.parent() else {
            return Ok(None);
        };
        let mut found = tree.db.batch_get([tree.key(&parent), tree.key(&at)]).await?;
        match (found.pop().flatten(), found.pop().flatten()) {
            (Some(_), parent) => Ok(parent),
            (None, _) => Ok(None),
        }
    }

    fn children(
        tree: &PathTree<'_, E>,
        at: TreePath,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
        tree.children(&at).all()
    }

    fn at_depth(
        tree: &PathTree<'_, E>,
        depth: usize,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
        tree.at_depth(depth).all()
    }

    async fn ancestors(tree: &PathTree<'_, E>, at: TreePath) -> Result<Vec<E>, Error> {
        let mut crumbs = Self::breadcrumbs(tree, at).await?;
        crumbs.pop();
        Ok(crumbs)
    }

    async fn breadcrumbs(tree: &PathTree<'_, E>, at: TreePath) -> Result<Vec<E>, Error> {
        // One `BatchGetItem` of the node and its ancestors; none for a missing node (the
        // handle's own method answers for a path, whether or not a node is there).
        let crumbs = tree.breadcrumbs(&at).await?;
        Ok(if crumbs.last().is_some_and(|n| *n.path() == at) { crumbs } else { Vec::new() })
    }

    async fn subtree_size(tree: &PathTree<'_, E>, at: TreePath) -> Result<u64, Error> {
        tree.subtree_size(&at).await
    }

    fn owns(kind: &OpKind) -> bool {
        matches!(kind, OpKind::Move { .. } | OpKind::Delete { .. })
    }

    async fn resume(
        tree: &Tree<'_, E, Self>,
        op: TreeOp,
        _item: &Item,
        progress: &mut ProgressFn<'_>,
    ) -> Result<usize, Error> {
        let (OpKind::Move { from: root, .. } | OpKind::Delete { root }) = &op.kind else {
            return Err(foreign::<E, Self>(&op));
        };
        let nodes = tree.read_subtree(root).await?;
        let n = nodes.len();
        let old = match (&op.kind, op.phase) {
            (OpKind::Move { from, to }, OpPhase::Copy) => {
                let (old, copies) = rebased(nodes, from, to)?;
                tree.copy(&op, &copies, progress).await?;
                tree.set_phase(&op, OpPhase::Remove).await?;
                old
            }
            _ => nodes.iter().map(Hierarchy::path).cloned().collect(),
        };
        tree.remove(&op, old, progress).await?;
        Ok(n)
    }

    async fn rollback(
        tree: &Tree<'_, E, Self>,
        op: TreeOp,
        _item: &Item,
    ) -> Result<Option<OpReport>, Error> {
        let (OpKind::Move { to, .. }, OpPhase::Copy) = (&op.kind, op.phase) else {
            return Err(problem::<E>(TreeProblem::CannotRollBack { op }));
        };
        tree.recover(&op, |op| async move {
            let copies = tree.read_subtree(to).await?;
            let paths = copies.iter().map(Hierarchy::path).cloned().collect();
            tree.remove(&op, paths, &mut quiet()).await?;
            Ok(copies.len())
        })
        .await
    }

    fn send_move<'a, 'p: 'a>(mv: Move<'a, 'p, E, Self>) -> BoxFuture<'a, Result<OpReport, Error>> {
        Box::pin(write::send_move(mv))
    }

    fn send_delete<'a, 'p: 'a>(
        delete: Delete<'a, 'p, E, Self>,
    ) -> BoxFuture<'a, Result<OpReport, Error>> {
        Box::pin(write::send_delete(delete))
    }

    fn stream(read: Descendants<'_, E, Self>) -> BoxStream<'_, Result<E, Error>> {
        read.read_stream()
    }

    fn all(read: Descendants<'_, E, Self>) -> BoxFuture<'_, Result<Vec<E>, Error>> {
        read.read_all()
    }

    fn count(read: Descendants<'_, E, Self>) -> BoxFuture<'_, Result<usize, Error>> {
        Box::pin(read.read_count())
    }

    /// The path strategy's side of a bulk load: a node is its item alone (with the index key of
    /// its level), as an insert writes it; each existing parent counts the load in its revision.
    async fn load_plan(
        tree: &Tree<'_, E, Self>,
        forest: &mut Forest<E>,
        _token: &str,
    ) -> Result<LoadPlan, Error> {
        let anchors: Vec<TreePath> = forest
            .anchors()
            .into_iter()
            .flatten()
            .map(|text| {
                TreePath::parse(&text).map_err(|problem| {
                    crate::tree::problem::<E>(TreeProblem::Path { path: text, problem })
                })
            })
            .collect::<Result<_, _>>()?;
        if !anchors.is_empty() {
            let keys = anchors.iter().map(|p| tree.key(p));
            let found = tree.db.batch_get(keys).consistent().send().await?;
            if let Some(i) = found.iter().position(Option::is_none) {
                return Err(<Self as Addressing<E>>::load_problem(LoadProblem::Missing(
                    anchors[i].to_text(),
                )));
            }
        }
        let table = tree.db.table_name();
        let finals = anchors
            .iter()
            .map(|p| rev_bump::<E>(table, &tree.pk, node_sk::<E>(p)))
            .collect::<Result<_, Error>>()?;
        Ok(LoadPlan { rows: std::mem::take(&mut forest.items), finals })
    }
}
