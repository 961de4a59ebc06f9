//! The tree's problems ([`TreeProblem`], in [`Error::Tree`](super::Error::Tree)) and the
//! description of a large operation in progress ([`TreeOp`]) that several of them carry.
//! Public as `ddb_model::error::{...}` and `ddb_model::tree::{TreeProblem, TreeOp, OpKind,
//! OpPhase}`.
//!
//! How an intent record is written and read (`TreeOp`'s item form) is tree bookkeeping and
//! stays in `tree::op`.

use std::fmt;

use super::path::{PathProblem, TreePath};

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
    /// (Nested set.) Numbers the subtree of `node` again, in the interval it has (the whole
    /// tree for `None`), to make room in an exhausted gap. The tree's shape does not change:
    /// only the intervals do.
    Renumber {
        /// The root of the region, as key text; `None` for the whole tree.
        node: Option<String>,
    },
    /// Loads `nodes` new nodes with batch writes (`bulk_load` of any strategy). While it is
    /// pending, every other write to the tree is refused ([`TreeProblem::Busy`]).
    Load {
        /// The nodes loaded.
        nodes: usize,
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
    /// Every phase with its name in an intent record.
    const NAMES: [(OpPhase, &'static str); 4] = [
        (OpPhase::Check, "check"),
        (OpPhase::Copy, "copy"),
        (OpPhase::Switch, "switch"),
        (OpPhase::Remove, "remove"),
    ];

    pub(crate) fn as_str(self) -> &'static str {
        Self::NAMES.iter().find(|(p, _)| *p == self).map_or("", |(_, name)| name)
    }

    pub(crate) fn parse(text: &str) -> Option<OpPhase> {
        Self::NAMES.iter().find(|(_, name)| *name == text).map(|(p, _)| *p)
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
    /// Identifies this operation (kept when recovery takes it over).
    pub token: String,
    /// The recovery epoch: 0 for the writer that started the operation, advanced by every
    /// [`PathTree::resume`](crate::tree::PathTree::resume) and [`PathTree::rollback`](crate::tree::PathTree::rollback) before they write. Writes are conditioned on
    /// it, so only the latest writer's land.
    pub epoch: u64,
}

impl fmt::Display for TreeOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match &self.kind {
            OpKind::Move { from, to } => {
                format!("move of {:?} to {:?}", from.to_text(), to.to_text())
            }
            OpKind::Delete { root } => format!("delete of {:?}", root.to_text()),
            OpKind::MoveNode { node, parent: Some(parent) } => {
                format!("move of {node:?} under {parent:?}")
            }
            OpKind::MoveNode { node, parent: None } => format!("move of {node:?} to the top level"),
            OpKind::DeleteNode { node } => format!("delete of {node:?}"),
            OpKind::Renumber { node: Some(node) } => {
                format!("renumbering of the subtree of {node:?}")
            }
            OpKind::Renumber { node: None } => "renumbering of the whole tree".to_owned(),
            OpKind::Load { nodes } => format!("bulk load of {nodes} nodes"),
        };
        write!(f, "{what} ({} phase)", self.phase.as_str())
    }
}

/// What is wrong with a tree operation; in [`Error::Tree`](crate::Error::Tree).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TreeProblem {
    /// A path is not valid for this tree (too deep for its `max_depth`, ...).
    #[error("invalid path {path:?}: {problem}")]
    Path {
        /// The path, as text.
        path: String,
        /// Why.
        problem: PathProblem,
    },
    /// The node belongs to another tree: its partition key differs from the tree's.
    #[error("the node belongs to the tree in partition {node:?}, not to this tree ({tree:?})")]
    OtherTree {
        /// The tree's partition key.
        tree: String,
        /// The node's partition key.
        node: String,
    },
    /// The parent of a node to insert (or of a move's destination) does not exist.
    #[error("the parent node {:?} does not exist", parent.to_text())]
    ParentMissing {
        /// The missing parent.
        parent: TreePath,
    },
    /// The node to move or delete does not exist.
    #[error("no node at {:?}", path.to_text())]
    NodeMissing {
        /// Its path.
        path: TreePath,
    },
    /// A node exists at the destination of a move already.
    #[error("a node exists at the destination {:?} already", path.to_text())]
    DestinationExists {
        /// The destination.
        path: TreePath,
    },
    /// A move into the node's own subtree (or onto itself).
    #[error(
        "cannot move {:?} to {:?}: the destination is inside the subtree being moved",
        from.to_text(),
        to.to_text()
    )]
    IntoOwnSubtree {
        /// The node.
        from: TreePath,
        /// The destination.
        to: TreePath,
    },
    /// Another large move or delete is in progress on the tree and involves this path (for
    /// inserts), or any path (for moves and deletes). Wait for it, or finish an interrupted
    /// one with [`PathTree::resume`](crate::tree::PathTree::resume).
    #[error("another operation is in progress: {op}")]
    Busy {
        /// The operation in progress.
        op: TreeOp,
    },
    /// Nodes of the subtree changed while it was being moved or deleted (a concurrent insert
    /// under it); the operation was retried and kept conflicting. Nothing was written.
    #[error(
        "the subtree at {:?} kept changing during the operation; nothing was written",
        path.to_text()
    )]
    Changed {
        /// The subtree's root.
        path: TreePath,
    },
    /// [`PathTree::rollback`](crate::tree::PathTree::rollback) of a move whose old nodes are being removed already: it can only
    /// be finished, with [`PathTree::resume`](crate::tree::PathTree::resume).
    #[error("{op} is removing the old nodes already; finish it with `resume` instead")]
    CannotRollBack {
        /// The operation.
        op: TreeOp,
    },
    /// The tree's intent record cannot be read.
    #[error("the tree's intent record cannot be read: {reason}")]
    CorruptIntent {
        /// Why.
        reason: IntentReason,
    },
    /// (Closure, adjacency.) No node has this id.
    #[error("no node with id {id:?}")]
    NoNode {
        /// The id, as key text.
        id: String,
    },
    /// (Closure, adjacency.) The parent named by a node to insert, or the destination of a
    /// move, does not exist.
    #[error("the parent node {parent:?} does not exist")]
    NoParent {
        /// The parent's id, as key text.
        parent: String,
    },
    /// (Closure, adjacency.) A move under the node itself or one of its descendants.
    #[error(
        "cannot move {node:?} under {parent:?}: {parent:?} is {node:?} or one of its descendants"
    )]
    Cycle {
        /// The node to move.
        node: String,
        /// The requested parent, inside the node's subtree.
        parent: String,
    },
    /// (Closure, adjacency.) The node would be deeper than the tree's `max_depth`.
    #[error("node {id:?} would be at depth {depth}; the tree allows {max}")]
    TooDeep {
        /// The node (for a move, the deepest node of the subtree).
        id: String,
        /// Its depth (top-level nodes have depth 1).
        depth: usize,
        /// The tree's limit.
        max: usize,
    },
    /// (Closure.) `replace` was given a node whose parent differs from the stored one: use
    /// `move_subtree` to move it.
    #[error(
        "the parent of {id:?} differs from the stored one; `replace` keeps the node where it is, use `move_subtree` to move it"
    )]
    ParentChanged {
        /// The node.
        id: String,
    },
    /// (Closure, adjacency.) Nodes of the subtree kept changing during a move or delete
    /// (concurrent inserts under it); nothing was written.
    #[error("the subtree at {id:?} kept changing during the operation; nothing was written")]
    NodeChanged {
        /// The subtree's root.
        id: String,
    },
    /// (Closure.) A node's bookkeeping copy is missing or cannot be read.
    #[error("the tree bookkeeping of node {id:?} cannot be read: {reason}")]
    CorruptNode {
        /// The node.
        id: String,
        /// Why.
        reason: NodeReason,
    },
    /// (Nested set.) The free numbers after the last child of `parent` (the top level for
    /// `None`) are exhausted, and the whole tree, numbered again as tightly as it can be (two
    /// numbers per node in the `u64` space), would not leave the room asked for: a tree of
    /// more than about 2^63 nodes, or a move of a subtree that large. Nothing was written.
    #[error(
        "no free numbers under {}: the whole tree ({nodes} nodes) numbered again would not leave room in the u64 numbers",
        parent.as_deref().map_or_else(|| "the top level".to_owned(), |p| format!("{p:?}"))
    )]
    NoRoom {
        /// The parent whose gap is exhausted, as key text.
        parent: Option<String>,
        /// The nodes of the smallest region with room.
        nodes: usize,
    },
    /// A large operation's writer was taken over by recovery (`resume` or `rollback`, from
    /// this or another process) while it ran, or paused: the intent record's epoch moved on.
    /// The writer stopped; none of its writes landed after the takeover. Whoever took over
    /// finishes (or undoes) the operation; [`PathTree::pending`](crate::tree::PathTree::pending) says whether it still runs.
    #[error(
        "recovery took over the {op} (epoch {}); this writer stopped and wrote nothing after the takeover",
        op.epoch
    )]
    Superseded {
        /// The operation, as this writer ran it (with the epoch it ran under).
        op: TreeOp,
    },
    /// A bulk load names a node twice, or a node that the tree has already (the node's
    /// address: its path, or its id as key text). Nothing was written.
    #[error("the node {node:?} is in the tree already, or twice in the input; nothing was written")]
    Duplicate {
        /// The node's address.
        node: String,
    },
    /// A bulk load hangs its nodes under more existing nodes than its last transaction
    /// records (the new children counters of the existing parents, with the deletes of
    /// its journal, in one transaction): load it in parts. Nothing was written.
    #[error(
        "the load hangs nodes under {parents} existing nodes; one load can hang them under at most {max}: load it in parts"
    )]
    LoadTooWide {
        /// The existing nodes the load's nodes hang under.
        parents: usize,
        /// How many this load could have had.
        max: usize,
    },
    /// A move of a small subtree gave up: concurrent writes (inserts under the same parent,
    /// moves and updates of the same nodes) made each of its `tries` transactions fail,
    /// with backoff between them. Nothing was written; the move can be tried again later.
    #[error(
        "gave up moving {node:?} after {tries} tries: concurrent writes to the nodes it changes kept canceling it; nothing was written"
    )]
    Contended {
        /// The node (its path, or its id as key text).
        node: String,
        /// The tries made.
        tries: u32,
    },
}

/// Why a tree's intent record (or a bulk load's journal next to it) cannot be read; in
/// [`TreeProblem::CorruptIntent`]. Attributes are the intent record's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IntentReason {
    /// An attribute is missing, or not a string.
    #[error("attribute `{attribute}` is missing or not a string")]
    Missing {
        /// The attribute.
        attribute: &'static str,
    },
    /// An attribute does not read as the value it records (a number, a list of ancestors).
    #[error("attribute `{attribute}` is invalid")]
    Invalid {
        /// The attribute.
        attribute: &'static str,
    },
    /// An attribute is not a valid path.
    #[error("attribute `{attribute}`: {problem}")]
    Path {
        /// The attribute.
        attribute: &'static str,
        /// Why.
        problem: PathProblem,
    },
    /// The operation kind is none the library writes.
    #[error("unknown operation {kind:?}")]
    UnknownOperation {
        /// The stored kind.
        kind: String,
    },
    /// The phase is none the library writes.
    #[error("unknown phase {phase:?}")]
    UnknownPhase {
        /// The stored phase.
        phase: String,
    },
    /// The operation is not one the tree's strategy writes (`handle`: `PathTree`, ...).
    #[error("{op} is not an operation of a {handle}")]
    Foreign {
        /// The operation.
        op: Box<TreeOp>,
        /// The strategy's handle.
        handle: &'static str,
    },
    /// A nested-set relayout's intent names no subtree to number again.
    #[error("{op} is not a relayout of a subtree")]
    NotARelayout {
        /// The operation.
        op: Box<TreeOp>,
    },
    /// The epoch is at its largest: no recovery can take the operation over.
    #[error("the epoch cannot advance")]
    EpochExhausted,
    /// A write was refused by an intent record it did not return.
    #[error("an operation is in progress, but its record was not returned")]
    NotReturned,
    /// A bulk load's journal lacks some of its items.
    #[error("the load's journal has {found} of its {expected} items")]
    JournalIncomplete {
        /// The items found.
        found: usize,
        /// The items the intent records.
        expected: usize,
    },
    /// A bulk load's journal item holds no list of nodes.
    #[error("a journal item holds no list of nodes")]
    JournalItem,
    /// (Nested set.) The node a relayout renumbers is gone.
    #[error("the node {node} of the operation is gone")]
    NodeGone {
        /// The node, as key text.
        node: String,
    },
    /// (Nested set.) The new parent of a relayout is gone.
    #[error("the new parent {parent} is gone")]
    ParentGone {
        /// The parent, as key text.
        parent: String,
    },
    /// (Nested set.) A relayout's subtree does not fit the interval its intent records.
    #[error("the subtree of {node} does not fit its new interval")]
    NoFit {
        /// The subtree's root, as key text.
        node: String,
    },
}

/// Why a node's tree bookkeeping cannot be read; in [`TreeProblem::CorruptNode`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NodeReason {
    /// A stored id is not an escaped key text.
    #[error("{problem}")]
    Escape {
        /// Why.
        problem: crate::escape::UnescapeError,
    },
    /// A stored id does not read as the id type.
    #[error("{problem}")]
    Id {
        /// Why.
        problem: Box<super::reason::KeyPartError>,
    },
    /// (Closure.) A copy below the node has a key that is not a copy's.
    #[error("a copy below it has the key {key:?}")]
    CopyKey {
        /// The copy's sort key.
        key: String,
    },
    /// (Closure.) A copy of the node under one of its ancestors is missing.
    #[error("a copy of the node under one of its ancestors is missing")]
    CopyMissing,
    /// (Closure.) The node's own copy exists without its entity item.
    #[error("its own copy exists without its entity item")]
    OwnWithoutItem,
    /// Its ancestors (`_tree_up`; of a closure node, on its own copy) are missing or cannot
    /// be read.
    #[error("its ancestors (`_tree_up`) are missing or cannot be read")]
    Ancestors,
    /// (Closure.) Its recorded ancestors do not pass through the root of the subtree it was
    /// read in.
    #[error("its recorded ancestors do not pass through {root:?}")]
    NotThrough {
        /// The subtree's root, as key text.
        root: String,
    },
    /// (Closure.) Its parent fields do not lead to the root of the subtree it was read in.
    #[error("its parents do not lead to {root:?}")]
    NotUnder {
        /// The subtree's root, as key text.
        root: String,
    },
    /// (Nested set.) Its interval (`_tree_lft`, `_tree_rgt`) is missing.
    #[error("its interval (`_tree_lft`, `_tree_rgt`) is missing")]
    NoInterval,
    /// (Nested set.) Its depth (`_tree_depth`) is missing.
    #[error("its depth (`_tree_depth`) is missing")]
    NoDepth,
    /// (Nested set.) Its interval, depth and ancestors disagree.
    #[error("its interval, depth and ancestors disagree")]
    Inconsistent,
    /// (Nested set.) Its index key is not the start of its interval.
    #[error("its index key is not the start of its interval")]
    IndexKey,
}

impl TreeProblem {
    /// True for problems of the caller's input, as opposed to the tree's state.
    pub(crate) fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            TreeProblem::Path { .. }
                | TreeProblem::OtherTree { .. }
                | TreeProblem::IntoOwnSubtree { .. }
                | TreeProblem::ParentChanged { .. }
                | TreeProblem::LoadTooWide { .. }
        )
    }
}
