//! [`TreeProtocol`]: the operations every strategy offers, implemented once for [`Tree`] from
//! each strategy's [`Strategy`] steps. The handles' own methods stay the way to what is
//! particular to a strategy (query builders with pages and cursors, `rename`, `replace`,
//! spans).

use std::future::Future;

use super::TreeOp;
use super::builders::{Delete, Descendants, Move};
use super::bulk::BulkLoad;
use super::handle::{Addressing, Strategy, Tree};
use super::op::{OpReport, Progress};
use crate::error::Error;
use crate::model::Entity;
use crate::ops::Target;

/// The operations of a tree, whatever its strategy: implemented by the four handles,
/// [`PathTree`](super::PathTree) (nodes addressed by [`TreePath`](super::TreePath)), [`ClosureTree`](super::ClosureTree), [`AdjacencyTree`](super::AdjacencyTree) and
/// [`NestedTree`](super::NestedTree) (nodes addressed by id), so that generic code works on
/// each (example: on [`Tree`]). Every future is `Send`, so generic code can be spawned.
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
pub trait TreeProtocol: Clone + Send + Sync {
    /// The node type.
    type Node: Entity;
    /// How a node is addressed: its [`TreePath`](super::TreePath) or its id.
    type Address: Clone + Send + Sync;
    /// The strategy.
    type Strategy: Strategy<Self::Node, Address = Self::Address>;

    /// The tree handle, whose strategy's steps every operation calls.
    #[doc(hidden)]
    fn tree(&self) -> &Tree<'_, Self::Node, Self::Strategy>;

    /// The address of `node`.
    fn address(node: &Self::Node) -> Self::Address {
        Self::Strategy::address(node)
    }

    /// The address of `node`'s parent; `None` for a top-level node.
    fn parent_address(node: &Self::Node) -> Option<Self::Address> {
        Self::Strategy::parent_address(node)
    }

    /// Inserts a node under the parent its address (path) or parent field (id) names, which
    /// must exist. Through `&mut`, a versioned node's version is updated.
    fn insert<'b>(
        &'b self,
        node: impl Into<Target<'b, Self::Node>> + Send,
    ) -> impl Future<Output = Result<(), Error>> + Send {
        Tree::insert(self.tree(), node)
    }

    /// Loads many new nodes at once, in any order, each under a parent in the input or in the
    /// tree: the tree inserts one by one would make. See [`BulkLoad`] for the checks, costs,
    /// errors and recovery.
    fn bulk_load<'t>(
        &'t self,
        nodes: impl IntoIterator<Item = Self::Node>,
    ) -> BulkLoad<'t, Self::Node, Self::Strategy> {
        BulkLoad::new(self.tree(), nodes)
    }

    /// Reads the node at `at`.
    fn get(
        &self,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Option<Self::Node>, Error>> + Send {
        let tree = self.tree();
        tree.db.get(Self::Strategy::key(tree, at)).send()
    }

    /// Reads the parent of the node at `at`; `None` for a top-level or missing node.
    fn parent(
        &self,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Option<Self::Node>, Error>> + Send {
        Self::Strategy::parent(self.tree(), Self::Strategy::node(at))
    }

    /// The children of the node at `at`, in key order.
    fn children(
        &self,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Vec<Self::Node>, Error>> + Send {
        Self::Strategy::children(self.tree(), Self::Strategy::node(at))
    }

    /// The top-level nodes.
    fn roots(&self) -> impl Future<Output = Result<Vec<Self::Node>, Error>> + Send {
        Self::Strategy::roots(self.tree())
    }

    /// The nodes below the node at `at` (relative depths `1..`; narrow with
    /// [`Descendants::depth`], where 0 is the node itself).
    fn descendants(&self, at: &Self::Address) -> Descendants<'_, Self::Node, Self::Strategy> {
        Descendants::new(self.tree(), Self::Strategy::node(at).into())
    }

    /// The nodes at absolute depth `depth` (top-level nodes have depth 1).
    fn at_depth(
        &self,
        depth: usize,
    ) -> impl Future<Output = Result<Vec<Self::Node>, Error>> + Send {
        Self::Strategy::at_depth(self.tree(), depth)
    }

    /// The ancestors of the node at `at`, root first, without the node; empty for a
    /// top-level or missing node.
    fn ancestors(
        &self,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Vec<Self::Node>, Error>> + Send {
        Self::Strategy::ancestors(self.tree(), Self::Strategy::node(at))
    }

    /// The ancestors of the node at `at` and the node itself, root first; empty for a
    /// missing node.
    fn breadcrumbs(
        &self,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Vec<Self::Node>, Error>> + Send {
        Self::Strategy::breadcrumbs(self.tree(), Self::Strategy::node(at))
    }

    /// The number of nodes in the subtree at `at`, the node included; 0 for a missing node.
    fn subtree_size(&self, at: &Self::Address) -> impl Future<Output = Result<u64, Error>> + Send {
        Self::Strategy::subtree_size(self.tree(), Self::Strategy::node(at))
    }

    /// Moves the node at `at` and its subtree under the node at `parent`, keeping its name
    /// or id.
    fn move_under(
        &self,
        at: &Self::Address,
        parent: &Self::Address,
    ) -> Move<'_, 'static, Self::Node, Self::Strategy> {
        self.move_to(at, Some(parent))
    }

    /// Moves the node at `at` and its subtree to the top level.
    fn move_to_top(&self, at: &Self::Address) -> Move<'_, 'static, Self::Node, Self::Strategy> {
        self.move_to(at, None)
    }

    /// [`move_under`](TreeProtocol::move_under) `parent`, or
    /// [`move_to_top`](TreeProtocol::move_to_top) for `None`.
    fn move_to(
        &self,
        at: &Self::Address,
        parent: Option<&Self::Address>,
    ) -> Move<'_, 'static, Self::Node, Self::Strategy> {
        let dest = Self::Strategy::dest(at, parent);
        Move::new(self.tree(), Self::Strategy::node(at), dest)
    }

    /// Deletes the node at `at` and its whole subtree. A node that does not exist is an
    /// error for which [`Error::is_node_missing`] is true, on every strategy; nothing is
    /// written.
    fn delete_subtree(
        &self,
        at: &Self::Address,
    ) -> Delete<'_, 'static, Self::Node, Self::Strategy> {
        Delete::new(self.tree(), Self::Strategy::node(at))
    }

    /// The large operation in progress on this tree (or interrupted), if any.
    fn pending(&self) -> impl Future<Output = Result<Option<TreeOp>, Error>> + Send {
        Tree::pending(self.tree())
    }

    /// Finishes an interrupted large operation; `Ok(None)` when nothing was pending.
    fn resume(
        &self,
        progress: impl FnMut(Progress) + Send,
    ) -> impl Future<Output = Result<Option<OpReport>, Error>> + Send {
        Tree::resume(self.tree(), progress)
    }

    /// Undoes an interrupted large move that has not started removing what it moved, or an
    /// interrupted bulk load (deleting what it wrote); `Ok(None)` when nothing was pending. A delete, or a move past that point, is
    /// [`TreeProblem::CannotRollBack`](super::TreeProblem::CannotRollBack).
    fn rollback(&self) -> impl Future<Output = Result<Option<OpReport>, Error>> + Send {
        Tree::rollback(self.tree())
    }
}

/// Every operation is the trait's own, over the strategy's steps.
impl<E: Entity, S: Strategy<E>> TreeProtocol for Tree<'_, E, S> {
    type Node = E;
    type Address = S::Address;
    type Strategy = S;

    fn tree(&self) -> &Tree<'_, E, S> {
        self
    }
}
