//! [`TreeProtocol`]: the operations every tree strategy offers, as one trait, so that code
//! written once works on the path, closure, adjacency and nested-set strategies alike; with
//! [`SubtreeRead`] (what a `descendants` read returns) and [`SubtreeWrite`] (what a move or a
//! delete returns).
//!
//! The trait delegates to the handles' own methods ([`PathTree`], [`ClosureTree`],
//! [`AdjacencyTree`], [`NestedTree`]), which stay the way to reach what is particular to a
//! strategy: query builders with pages and cursors, `rename` of a path node, `replace` of a
//! closure node, the spans of a nested set, request costs.

use std::future::{Future, IntoFuture};
use std::ops::RangeBounds;

use futures_core::Stream;

use super::adjacency::{AdjacencyDelete, AdjacencyDescendants, AdjacencyMove, AdjacencyTree};
use super::bulk::{BulkLoad, Loader};
use super::closure::{ClosureDelete, ClosureDescendants, ClosureMove, ClosureTree};
use super::nested::{NestedDelete, NestedDescendants, NestedMove, NestedTree};
use super::node::IdHierarchy;
use super::op::{OpReport, Progress};
use super::path::{PathDelete, PathDescendants, PathMove, PathTree};
use super::{Hierarchy, TreeOp, TreePath};
use crate::error::Error;
use crate::key::KeyPart;
use crate::model::Entity;
use crate::ops::Target;

/// The operations of a tree, whatever its strategy: implemented by the four handles,
/// [`PathTree`] (nodes addressed by [`TreePath`]), [`ClosureTree`], [`AdjacencyTree`] and
/// [`NestedTree`] (nodes addressed by id), so that generic code works on each. Every future is `Send`, so generic code can be
/// spawned.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::tree::{SubtreeRead, TreeProtocol};
/// use ddb_model::{Entity, Error, TreePath, local};
/// use serde::{Deserialize, Serialize};
///
/// /// Nodes within two levels below `at`, and how deep `at` is: the same code for every
/// /// strategy.
/// async fn survey<T: TreeProtocol>(tree: &T, at: &T::Address) -> Result<(usize, usize), Error> {
///     let near = tree.descendants(at).depth(1..=2).count().await?;
///     let depth = tree.ancestors(at).await?.len() + 1;
///     Ok((near, depth))
/// }
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
/// #[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
/// #[hierarchy(path = path, index = gsi1)]
/// struct Folder { drive: String, path: TreePath }
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
/// #[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
/// #[hierarchy(strategy = closure, parent = manager)]
/// struct Employee { org: String, id: String, manager: Option<String> }
///
/// let db = local::isolated_db().await?;
/// let drive = Folder::tree(&db, "D");
/// for path in ["a", "a/b", "a/b/c", "a/b/c/d"] {
///     drive.insert(&Folder { drive: "D".into(), path: path.parse()? }).await?;
/// }
/// let org = Employee::tree(&db, "acme");
/// for (id, manager) in [("ceo", None), ("cto", Some("ceo")), ("dev", Some("cto"))] {
///     let e = Employee { org: "acme".into(), id: id.into(), manager: manager.map(Into::into) };
///     org.insert(&e).await?;
/// }
/// assert_eq!(survey(&drive, &"a".parse()?).await?, (2, 1));
/// assert_eq!(survey(&org, &"cto".to_owned()).await?, (1, 2));
///
/// // Moves name the new parent (or the top level) on every strategy.
/// drive.move_to(&"a/b/c".parse()?, None).await?;
/// org.move_to(&"dev".to_owned(), Some(&"ceo".to_owned())).await?;
/// assert_eq!(drive.roots().await?.len(), 2);
/// assert_eq!(org.children(&"ceo".to_owned()).await?.len(), 2);
/// # Ok(()) }
/// ```
///
/// What the strategies share, and where they differ:
///
/// - **Addresses.** [`address`](TreeProtocol::address) is a node's path (path strategy, so a
///   move changes the address of every node it moves) or its id (closure, adjacency, nested
///   set: ids are unique in the tree and never change).
/// - **Errors** are typed alike and answered by the same predicates: a missing parent
///   ([`Error::is_parent_missing`]), a missing node ([`Error::is_node_missing`]), a
///   node that exists already ([`Error::is_already_exists`]: an id taken anywhere in the
///   tree, a path taken), a move under the node itself or its subtree
///   ([`Error::is_tree_cycle`]), a large operation in progress ([`Error::is_tree_busy`]).
///   A path node moved under a parent that has a child of its name is
///   [`Error::is_destination_exists`] (ids cannot collide). A move or a delete of a node
///   that does not exist is an error for which [`Error::is_node_missing`] is true, on every
///   strategy (`TreeProblem::NodeMissing` for a path, `TreeProblem::NoNode` for an id),
///   and writes nothing.
/// - **Moves** keep the node's name or id. Under the parent it has already, a move writes
///   nothing on the path, adjacency and nested-set strategies (`nodes: 0`); the closure
///   strategy rewrites the node's copies. [`OpReport::nodes`] of a move counts the node
///   items rewritten: the whole subtree (path, closure, nested set: its intervals change)
///   or the node alone (adjacency, whose subtree follows its parent reference); of a
///   delete, the nodes deleted.
/// - **Reads** return whole nodes. The adjacency strategy reads children from an index,
///   which is eventually consistent on DynamoDB; its subtree reads go level by level. The
///   nested-set strategy reads a subtree, children and levels from its index too (one
///   range query), eventually consistent as well.
pub trait TreeProtocol:
    Clone + Send + Sync + Loader<LoadNode = <Self as TreeProtocol>::Node>
{
    /// The node type.
    type Node: Entity;
    /// How a node is addressed: its [`TreePath`] or its id.
    type Address: Clone + Send + Sync;
    /// The nodes below a node ([`descendants`](TreeProtocol::descendants)).
    type Descendants: SubtreeRead<Node = Self::Node>
        + IntoFuture<Output = Result<Vec<Self::Node>, Error>, IntoFuture: Send>;
    /// A move of a subtree ([`move_under`](TreeProtocol::move_under),
    /// [`move_to_top`](TreeProtocol::move_to_top)).
    type Move: SubtreeWrite;
    /// A delete of a subtree ([`delete_subtree`](TreeProtocol::delete_subtree)).
    type Delete: SubtreeWrite;

    /// The address of `node`.
    fn address(node: &Self::Node) -> Self::Address;

    /// The address of `node`'s parent; `None` for a top-level node.
    fn parent_address(node: &Self::Node) -> Option<Self::Address>;

    /// Inserts a node under the parent its address (path) or parent field (id) names, which
    /// must exist. Through `&mut`, a versioned node's version is updated.
    fn insert<'b>(
        &'b self,
        node: impl Into<Target<'b, Self::Node>> + Send,
    ) -> impl Future<Output = Result<(), Error>> + Send;

    /// Loads many new nodes at once, in any order, with `BatchWriteItem` (25 items per
    /// request) under an intent record, so that an interrupted load is finished by
    /// [`resume`](TreeProtocol::resume) or undone by [`rollback`](TreeProtocol::rollback);
    /// each node's parent is in the input or in the tree. The result is the tree the nodes
    /// would make inserted one by one. See [`BulkLoad`] for the checks, the costs and the
    /// errors.
    fn bulk_load<'t>(&'t self, nodes: impl IntoIterator<Item = Self::Node>) -> BulkLoad<'t, Self> {
        BulkLoad::new(self, nodes)
    }

    /// Reads the node at `at`.
    fn get(
        &self,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Option<Self::Node>, Error>> + Send;

    /// Reads the parent of the node at `at`; `None` for a top-level or missing node.
    fn parent(
        &self,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Option<Self::Node>, Error>> + Send;

    /// The children of the node at `at`, in key order.
    fn children(
        &self,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Vec<Self::Node>, Error>> + Send;

    /// The top-level nodes.
    fn roots(&self) -> impl Future<Output = Result<Vec<Self::Node>, Error>> + Send;

    /// The nodes below the node at `at` (relative depths `1..`; narrow with
    /// [`SubtreeRead::depth`], where 0 is the node itself).
    fn descendants(&self, at: &Self::Address) -> Self::Descendants;

    /// The nodes at absolute depth `depth` (top-level nodes have depth 1).
    fn at_depth(&self, depth: usize)
    -> impl Future<Output = Result<Vec<Self::Node>, Error>> + Send;

    /// The ancestors of the node at `at`, root first, without the node; empty for a
    /// top-level or missing node.
    fn ancestors(
        &self,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Vec<Self::Node>, Error>> + Send;

    /// The ancestors of the node at `at` and the node itself, root first; empty for a
    /// missing node.
    fn breadcrumbs(
        &self,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Vec<Self::Node>, Error>> + Send;

    /// The number of nodes in the subtree at `at`, the node included; 0 for a missing node.
    fn subtree_size(&self, at: &Self::Address) -> impl Future<Output = Result<u64, Error>> + Send;

    /// Moves the node at `at` and its subtree under the node at `parent`, keeping its name
    /// or id.
    fn move_under(&self, at: &Self::Address, parent: &Self::Address) -> Self::Move;

    /// Moves the node at `at` and its subtree to the top level.
    fn move_to_top(&self, at: &Self::Address) -> Self::Move;

    /// [`move_under`](TreeProtocol::move_under) `parent`, or
    /// [`move_to_top`](TreeProtocol::move_to_top) for `None`.
    fn move_to(&self, at: &Self::Address, parent: Option<&Self::Address>) -> Self::Move {
        match parent {
            Some(parent) => self.move_under(at, parent),
            None => self.move_to_top(at),
        }
    }

    /// Deletes the node at `at` and its whole subtree. A node that does not exist is an
    /// error for which [`Error::is_node_missing`] is true, on every strategy; nothing is
    /// written.
    fn delete_subtree(&self, at: &Self::Address) -> Self::Delete;

    /// The large operation in progress on this tree (or interrupted), if any.
    fn pending(&self) -> impl Future<Output = Result<Option<TreeOp>, Error>> + Send;

    /// Finishes an interrupted large operation; `Ok(None)` when nothing was pending.
    fn resume(
        &self,
        progress: impl FnMut(Progress) + Send,
    ) -> impl Future<Output = Result<Option<OpReport>, Error>> + Send;

    /// Undoes an interrupted large move that has not started removing what it moved, or an
    /// interrupted bulk load (deleting what it wrote); `Ok(None)` when nothing was pending. A delete, or a move past that point, is
    /// [`TreeProblem::CannotRollBack`](super::TreeProblem::CannotRollBack).
    fn rollback(&self) -> impl Future<Output = Result<Option<OpReport>, Error>> + Send;
}

/// The nodes below a node, within a range of relative depths: what
/// [`TreeProtocol::descendants`] returns ([`PathDescendants`], [`ClosureDescendants`],
/// [`AdjacencyDescendants`], [`NestedDescendants`]).
pub trait SubtreeRead: Send + Sized {
    /// The node type.
    type Node;

    /// Only nodes whose depth relative to the node is in `range` (0 is the node itself):
    /// `1..=1` are the children, `0..` the whole subtree with its root.
    fn depth(self, range: impl RangeBounds<usize>) -> Self;

    /// Every node of the range.
    fn all(self) -> impl Future<Output = Result<Vec<Self::Node>, Error>> + Send;

    /// The number of nodes of the range.
    fn count(self) -> impl Future<Output = Result<usize, Error>> + Send;

    /// The nodes of the range, as they are read.
    fn stream(self) -> impl Stream<Item = Result<Self::Node, Error>> + Send;
}

/// A move or a delete of a subtree, sent by `.await` (or [`send`](SubtreeWrite::send)): what
/// [`TreeProtocol::move_under`], [`TreeProtocol::move_to_top`] and
/// [`TreeProtocol::delete_subtree`] return.
pub trait SubtreeWrite:
    IntoFuture<Output = Result<OpReport, Error>, IntoFuture: Send> + Send + Sized
{
    /// Subtrees of more than `n` nodes go through the strategy's resumable protocol (`0`:
    /// always), capped at what one transaction holds. An adjacency move is one transaction
    /// whatever the subtree (nothing below the node is written) and has no such protocol: it
    /// ignores the limit.
    fn transaction_limit(self, n: usize) -> Self;

    /// Calls `f` as the operation advances.
    fn on_progress(self, f: impl FnMut(Progress) + Send + 'static) -> Self;

    /// Sends the operation.
    fn send(self) -> impl Future<Output = Result<OpReport, Error>> + Send;
}

impl<'a, E: Hierarchy> TreeProtocol for PathTree<'a, E> {
    type Node = E;
    type Address = TreePath;
    type Descendants = PathDescendants<'a, E>;
    type Move = PathMove<'a, 'static, E>;
    type Delete = PathDelete<'a, 'static, E>;

    fn address(node: &E) -> TreePath {
        node.path().clone()
    }

    fn parent_address(node: &E) -> Option<TreePath> {
        node.path().parent()
    }

    fn insert<'b>(
        &'b self,
        node: impl Into<Target<'b, E>> + Send,
    ) -> impl Future<Output = Result<(), Error>> + Send {
        PathTree::insert(self, node)
    }

    fn get(&self, at: &TreePath) -> impl Future<Output = Result<Option<E>, Error>> + Send {
        PathTree::get(self, at).send()
    }

    async fn parent(&self, at: &TreePath) -> Result<Option<E>, Error> {
        // The node and its parent in one `BatchGetItem`: no parent for a missing node.
        let Some(parent) = at.parent() else {
            return Ok(None);
        };
        let mut found = self.db.batch_get([self.key(&parent), self.key(at)]).await?;
        match (found.pop().flatten(), found.pop().flatten()) {
            (Some(_), parent) => Ok(parent),
            (None, _) => Ok(None),
        }
    }

    fn children(&self, at: &TreePath) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
        PathTree::children(self, at).all()
    }

    fn roots(&self) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
        PathTree::roots(self).all()
    }

    fn descendants(&self, at: &TreePath) -> PathDescendants<'a, E> {
        PathTree::descendants(self, at)
    }

    fn at_depth(&self, depth: usize) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
        PathTree::at_depth(self, depth).all()
    }

    async fn ancestors(&self, at: &TreePath) -> Result<Vec<E>, Error> {
        let mut crumbs = TreeProtocol::breadcrumbs(self, at).await?;
        crumbs.pop();
        Ok(crumbs)
    }

    async fn breadcrumbs(&self, at: &TreePath) -> Result<Vec<E>, Error> {
        // One `BatchGetItem` of the node and its ancestors; none for a missing node (the
        // handle's own method answers for a path, whether or not a node is there).
        let crumbs = PathTree::breadcrumbs(self, at).await?;
        Ok(if crumbs.last().is_some_and(|n| n.path() == at) { crumbs } else { Vec::new() })
    }

    fn subtree_size(&self, at: &TreePath) -> impl Future<Output = Result<u64, Error>> + Send {
        PathTree::subtree_size(self, at)
    }

    fn move_under(&self, at: &TreePath, parent: &TreePath) -> PathMove<'a, 'static, E> {
        PathTree::move_under(self, at, parent)
    }

    fn move_to_top(&self, at: &TreePath) -> PathMove<'a, 'static, E> {
        PathTree::move_to_top(self, at)
    }

    fn delete_subtree(&self, at: &TreePath) -> PathDelete<'a, 'static, E> {
        PathTree::delete_subtree(self, at)
    }

    fn pending(&self) -> impl Future<Output = Result<Option<TreeOp>, Error>> + Send {
        PathTree::pending(self)
    }

    fn resume(
        &self,
        progress: impl FnMut(Progress) + Send,
    ) -> impl Future<Output = Result<Option<OpReport>, Error>> + Send {
        PathTree::resume(self, progress)
    }

    fn rollback(&self) -> impl Future<Output = Result<Option<OpReport>, Error>> + Send {
        PathTree::rollback(self)
    }
}

/// The protocol of a strategy whose nodes are addressed by id (`$handle<'a, E>`).
macro_rules! id_protocol {
    ($handle:ident, $descendants:ident, $move:ident, $delete:ident, $at_depth:expr) => {
        impl<'a, E> TreeProtocol for $handle<'a, E>
        where
            E: IdHierarchy,
            E::Id: KeyPart + Clone + Send + Sync,
        {
            type Node = E;
            type Address = E::Id;
            type Descendants = $descendants<'a, E>;
            type Move = $move<'a, 'static, E>;
            type Delete = $delete<'a, 'static, E>;

            fn address(node: &E) -> E::Id {
                node.id().clone()
            }

            fn parent_address(node: &E) -> Option<E::Id> {
                node.parent_id().cloned()
            }

            fn insert<'b>(
                &'b self,
                node: impl Into<Target<'b, E>> + Send,
            ) -> impl Future<Output = Result<(), Error>> + Send {
                $handle::insert(self, node)
            }

            fn get(&self, at: &E::Id) -> impl Future<Output = Result<Option<E>, Error>> + Send {
                $handle::get(self, at).send()
            }

            fn parent(&self, at: &E::Id) -> impl Future<Output = Result<Option<E>, Error>> + Send {
                $handle::parent(self, at)
            }

            fn children(&self, at: &E::Id) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
                $handle::children(self, at).all()
            }

            fn roots(&self) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
                $handle::roots(self).all()
            }

            fn descendants(&self, at: &E::Id) -> $descendants<'a, E> {
                $handle::descendants(self, at)
            }

            fn at_depth(&self, depth: usize) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
                ($at_depth)(self, depth)
            }

            fn ancestors(&self, at: &E::Id) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
                $handle::ancestors(self, at)
            }

            fn breadcrumbs(
                &self,
                at: &E::Id,
            ) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
                $handle::breadcrumbs(self, at)
            }

            fn subtree_size(&self, at: &E::Id) -> impl Future<Output = Result<u64, Error>> + Send {
                $handle::subtree_size(self, at)
            }

            fn move_under(&self, at: &E::Id, parent: &E::Id) -> $move<'a, 'static, E> {
                $handle::move_under(self, at, parent)
            }

            fn move_to_top(&self, at: &E::Id) -> $move<'a, 'static, E> {
                $handle::move_to_top(self, at)
            }

            fn delete_subtree(&self, at: &E::Id) -> $delete<'a, 'static, E> {
                $handle::delete_subtree(self, at)
            }

            fn pending(&self) -> impl Future<Output = Result<Option<TreeOp>, Error>> + Send {
                $handle::pending(self)
            }

            fn resume(
                &self,
                progress: impl FnMut(Progress) + Send,
            ) -> impl Future<Output = Result<Option<OpReport>, Error>> + Send {
                $handle::resume(self, progress)
            }

            fn rollback(&self) -> impl Future<Output = Result<Option<OpReport>, Error>> + Send {
                $handle::rollback(self)
            }
        }
    };
}

id_protocol!(ClosureTree, ClosureDescendants, ClosureMove, ClosureDelete, closure_at_depth);
id_protocol!(
    AdjacencyTree,
    AdjacencyDescendants,
    AdjacencyMove,
    AdjacencyDelete,
    AdjacencyTree::at_depth
);
id_protocol!(NestedTree, NestedDescendants, NestedMove, NestedDelete, nested_at_depth);

/// The nodes of a nested-set tree at `depth`, read.
fn nested_at_depth<'a, E: IdHierarchy>(
    tree: &NestedTree<'a, E>,
    depth: usize,
) -> impl Future<Output = Result<Vec<E>, Error>> + Send + 'a {
    tree.at_depth(depth).all()
}

/// The nodes of a closure tree at `depth`, read.
fn closure_at_depth<'a, E: IdHierarchy>(
    tree: &ClosureTree<'a, E>,
    depth: usize,
) -> impl Future<Output = Result<Vec<E>, Error>> + Send + 'a {
    tree.at_depth(depth).all()
}

/// [`SubtreeRead`] by the builder's own methods.
macro_rules! subtree_read {
    ($builder:ident, $bound:path) => {
        impl<'a, E: $bound> SubtreeRead for $builder<'a, E> {
            type Node = E;

            fn depth(self, range: impl RangeBounds<usize>) -> Self {
                $builder::depth(self, range)
            }

            fn all(self) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
                $builder::all(self)
            }

            fn count(self) -> impl Future<Output = Result<usize, Error>> + Send {
                $builder::count(self)
            }

            fn stream(self) -> impl Stream<Item = Result<E, Error>> + Send {
                $builder::stream(self)
            }
        }
    };
}

subtree_read!(PathDescendants, Hierarchy);
subtree_read!(ClosureDescendants, IdHierarchy);
subtree_read!(AdjacencyDescendants, IdHierarchy);
subtree_read!(NestedDescendants, IdHierarchy);

/// [`SubtreeWrite`] by the builder's own methods; `$limit` sets the transaction limit.
macro_rules! subtree_write {
    ($builder:ident, $bound:path, $limit:expr) => {
        impl<'a, 'p, E: $bound> SubtreeWrite for $builder<'a, 'p, E>
        where
            'p: 'a,
        {
            fn transaction_limit(self, n: usize) -> Self {
                $limit(self, n)
            }

            fn on_progress(self, f: impl FnMut(Progress) + Send + 'static) -> Self {
                $builder::on_progress(self, f)
            }

            fn send(self) -> impl Future<Output = Result<OpReport, Error>> + Send {
                $builder::send(self)
            }
        }
    };
}

subtree_write!(PathMove, Hierarchy, PathMove::transaction_limit);
subtree_write!(PathDelete, Hierarchy, PathDelete::transaction_limit);
subtree_write!(ClosureMove, IdHierarchy, ClosureMove::transaction_limit);
subtree_write!(ClosureDelete, IdHierarchy, ClosureDelete::transaction_limit);
subtree_write!(AdjacencyDelete, IdHierarchy, AdjacencyDelete::transaction_limit);
subtree_write!(NestedMove, IdHierarchy, NestedMove::transaction_limit);
subtree_write!(NestedDelete, IdHierarchy, NestedDelete::transaction_limit);
// One transaction whatever the subtree: no protocol to route large moves to.
subtree_write!(AdjacencyMove, IdHierarchy, keep_move);

/// An adjacency move ignores the transaction limit.
fn keep_move<'a, 'p, E: IdHierarchy>(
    mv: AdjacencyMove<'a, 'p, E>,
    _limit: usize,
) -> AdjacencyMove<'a, 'p, E> {
    mv
}
