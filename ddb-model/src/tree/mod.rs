//! Trees: `#[hierarchy]` entities and their handles.
//!
//! `#[hierarchy(..)]` next to `#[derive(Entity)]` makes an entity the node type of a tree;
//! the partition key names the tree (one tree per drive, tenant, ...). Four strategies
//! store a tree. One handle, [`Tree<E, S>`](Tree), serves them all, with the strategy as a
//! type parameter and a name per strategy; so do one [`Move`], one [`Delete`] and one
//! [`Descendants`] builder. [`TreeProtocol`], implemented once for every [`Tree`], lets code
//! written once work on every strategy:
//!
//! | strategy | declaration | handle | nodes addressed by |
//! | --- | --- | --- | --- |
//! | path (default) | `#[hierarchy(path = path, index = gsi1)]`, `sk = "NODE#<path>"` | [`PathTree`] = `Tree<E, Path>` | [`TreePath`] |
//! | closure | `#[hierarchy(strategy = closure, parent = manager)]`, `sk = "EMP#<id>"` | [`ClosureTree`] = `Tree<E, Closure>` | id |
//! | adjacency | `#[hierarchy(strategy = adjacency, parent = parent, index = gsi1)]`, `sk = "CAT#<id>"` | [`AdjacencyTree`] = `Tree<E, Adjacency>` | id |
//! | nested set | `#[hierarchy(strategy = nested_set, parent = parent, index = gsi1)]`, `sk = "CAT#<id>"` | [`NestedTree`] = `Tree<E, NestedSet>` | id |
//!
//! The protocol's operations: `insert`, `get`, `parent`, `children`, `roots`, `descendants`
//! (with `.depth(range)`, see [`Descendants`]), `at_depth`, `ancestors`, `breadcrumbs`,
//! `subtree_size`, `move_under` / `move_to_top` / `move_to` and `delete_subtree` (builders
//! with `.transaction_limit(n)` and `.on_progress(f)`, see [`Move`] and [`Delete`]), `pending`,
//! `resume` and `rollback` of an interrupted operation, `bulk_load` of many new nodes
//! ([`BulkLoad`]), and `address` / `parent_address` of a node. Each handle has them as its own
//! methods too, returning the strategy's query builders (pages, cursors, consistency), and
//! adds what is particular to it: the path strategy's `move_subtree(from, to)` to any new path
//! (for the id strategies, `move_subtree(id, parent)` is `move_under`) and `rename`, the
//! closure strategy's `replace`. Renaming is not in the protocol: an id never changes.
//!
//! The generated `Node::tree(&db, ..partition fields)` returns the strategy's handle. The
//! parent field of the id strategies is an `Option` of the id type (`None` for a top-level
//! node). Optional `max_depth = n` (path: default and limit 128; closure and adjacency: 96,
//! so that an insert or a move fits one transaction; nested set: 96, so that a node's
//! ancestors are one `BatchGetItem`).
//!
//! - **path**: the path in the sort key, a depth-keyed index for children and levels.
//!   Subtree and children are one query each; moves rewrite every moved node.
//! - **closure** (a replication pattern): one copy of each node under each ancestor, with
//!   the relative depth in the copy's key, so children, a whole subtree and any range of
//!   relative depths are one (strongly consistent if asked) query that reads exactly the
//!   result. Writes cost one copy per level. A node's fields change through
//!   [`ClosureTree::update`] or [`ClosureTree::replace`], which rewrite its copies (a plain
//!   typed update of a closure node is refused before sending; plain puts change the node's
//!   item only).
//! - **adjacency** (an adjacency list): the parent reference and an index on it. Inserts
//!   and moves are one transaction whatever the subtree (after reads that keep `max_depth`);
//!   deeper reads go level by level.
//! - **nested set**: an interval of sparse `u64` numbers per node, nested in its parent's,
//!   and an index ordered by the interval's start: a whole subtree, or any range of depths in
//!   it, is **one** range query ([`NestedTree::within`] a [`NestedSpan`]; one `GetItem` more
//!   from an id). Inserts take free numbers in the parent's interval; when they run out, the
//!   smallest enclosing subtree that stays three-quarters free (or the whole tree) is
//!   numbered again, resumable beyond 96 nodes ([`TreeProblem::NoRoom`] only for a tree that
//!   two numbers per node in `u64` cannot hold). What reads see meanwhile:
//!   [`NestedTree::pending`]; writes wait for it ([`TreeProblem::Busy`]). Moves rewrite every
//!   moved node. Change a node's fields with `update`: a whole-item `put` would drop its
//!   interval.
//!
//! # Bulk load
//!
//! `tree.bulk_load(nodes)` ([`BulkLoad`]) writes new nodes in any order with
//! `BatchWriteItem`s of 25 items, no transaction per node, the rows exactly what inserts
//! would write: a 10,000-node closure tree of depth 3 (49,610 rows) is 1,985 batch writes and
//! about 100 other requests, where inserts would send 20,000. The input is checked first
//! (nothing written when a check fails); the load runs under the intent record like a large
//! move, and an interrupted one is finished by `resume` or undone by `rollback`.
//!
//! # The path strategy
//!
//! A path node type is an entity whose sort key is literal text followed by its path
//! (`sk = "NODE#<path>"`); its partition key names the tree, so each partition holds one tree
//! (per drive, per tenant, ...). `#[hierarchy(path = path, index = gsi1)]` names the path field
//! and the index that serves children and depth queries: every node also writes the index key
//! `(partition, "<depth>#<path>")`, zero-padded depth first, so that
//!
//! - the children of a node are one index query (`begins_with "<depth + 1>#<path>/"`) that
//!   reads the children and nothing else;
//! - the nodes at one depth are one index query, and a relative depth range below a node is
//!   one query per level, each reading exactly its level;
//! - the whole subtree of a node is one table query (`begins_with "NODE#<path>/"`);
//! - the ancestors of a node are known from its path: one `BatchGetItem`.
//!
//! Writes keep the tree whole: an insert is one transaction that checks the parent exists and
//! bumps its revision ([`TREE_REV_ATTR`]); a move or delete of a small subtree is one
//! transaction conditioned on the revision of every node it read, so a node inserted
//! concurrently under the subtree cancels it instead of being orphaned. Larger subtrees go
//! through a resumable protocol with an intent record (see [`PathTree::move_subtree`]).
//!
//! # Costs
//!
//! Requests per operation, the same on trees of 1,002, 10,011 and 100,101 nodes, counted
//! with [`Db::requests`](crate::Db::requests) by `cargo run --release --example tree_costs
//! -- --sizes 1000,10000,100000` (wall times, and the trees' shape, in the repository's
//! `BENCHMARKS.md`). The tree: top-level divisions of 1,001 nodes (10 departments of a
//! head, 9 teams and 90 members); a department is the subtree of 100 (its node included),
//! a team has 10 children, a member 3 ancestors.
//!
//! | operation | path | closure | adjacency | nested set |
//! | --- | --- | --- | --- | --- |
//! | subtree of 100 | 2: GetItem + Query | **1** Query | 11: GetItem + 10 Query (one per node with children) | **1** Query from a [`NestedSpan`]; 2 from an id (GetItem + Query) |
//! | children (10) | 1 Query | 1 Query | 1 Query | 2: GetItem + Query (reads the 11-node subtree) |
//! | ancestors (3) | 1 BatchGetItem | 2: GetItem + BatchGetItem | 4 GetItem (one per level) | 2: GetItem + BatchGetItem |
//! | insert at depth 4 | 1 TransactWriteItems | 2: GetItem + TransactWriteItems | 4: 3 GetItem (to keep `max_depth`) + TransactWriteItems | 2: GetItem + TransactWriteItems (8 when a gap runs out and a region of up to 96 nodes is renumbered, at any depth) |
//! | move of 1 node | 3: GetItem + Query + TransactWriteItems | 4: 2 GetItem + Query + TransactWriteItems | 5: 4 GetItem + TransactWriteItems | 4: 2 GetItem + Query + TransactWriteItems |
//! | move of 1,001 nodes (one level deeper) | 31, resumable (22 TransactWriteItems) | 85, resumable (73 TransactWriteItems) | 115: the subtree read level by level to keep `max_depth` + 1 TransactWriteItems | 42, resumable (13 TransactWriteItems) |
//! | `bulk_load` of N new nodes (rows: the items stored) into an empty tree | ⌈rows / 25⌉ BatchWriteItem + ⌈N / 100⌉ BatchGetItem + 4 (1 more BatchWriteItem per 7.5 MB of input) | the same | the same | the same + 1 GetItem (the top-level record) |
//! | items stored per node at depth D | 1 | D + 2 (node, own copy, D copies) | 1 | 1 |
//!
//! (Pages aside: a query returns 1 MB per request.) Path moves and deletes are one
//! transaction up to 49 / 99 nodes; closure moves while `S * (Do + Dn + 3) + 3 <= 100` (Do,
//! Dn: the depths of the old and new parent), deletes while the subtree's items fit;
//! nested-set moves and deletes up to 96 nodes; beyond, they go through the resumable
//! protocol (`resume` finishes an interrupted one), whose writes are transactions of up to
//! 99 writes, each with a check of the intent record's epoch, so a writer that recovery took
//! over can no longer land a write. An adjacency move is one transaction whatever its size
//! (the reads before it grow with the subtree only when it goes deeper); adjacency deletes
//! go in transactions of 98 nodes.
//!
//! Nested-set renumberings (an insert whose gap ran out) cost the same at every depth: 8
//! requests instead of 2 for a region of up to 96 nodes; their costs beyond are in
//! [`NestedTree`]'s table.
//!

mod adjacency;
mod builders;
mod bulk;
mod closure;
mod conflict;
mod handle;
mod nested;
mod node;
mod op;
mod path;
mod protocol;
pub(crate) mod raw;

#[doc(hidden)]
pub use adjacency::adjacency_index_keys;
pub use adjacency::{AdjacencyTree, TREE_KIDS_ATTR};
pub use builders::{Delete, Descendants, Move};
pub use bulk::BulkLoad;
pub use closure::{AsCopy, ClosureTree, ClosureUpdate, CopyQuery};
#[doc(hidden)]
pub use nested::NESTED_BOOKKEEPING_ATTRS;
pub use nested::{
    NestedSpan, NestedTree, TREE_DEPTH_ATTR, TREE_LFT_ATTR, TREE_NEXT_ATTR, TREE_RGT_ATTR,
};
pub use node::{
    IdHierarchy, IdStrategy, IdTreeDef, MAX_NODE_DEPTH, ParentField, TREE_UP_ATTR, TreeStrategy,
};
#[doc(hidden)]
pub use node::{ParentFns, parent_fns};
pub use op::{OpReport, Progress};
pub use path::{
    Hierarchy, MAX_TRANSACTIONAL_DELETE, MAX_TRANSACTIONAL_MOVE, PathField, PathTree, TreeDef,
};
#[doc(hidden)]
pub use path::{PathFns, path_fns, tree_index_keys};
pub(crate) use path::{check_path, level_key, node_sk};
pub use protocol::TreeProtocol;
// The tree's problems and the values they carry live beside the errors (`Error::Tree`).
pub use crate::error::{
    IntentReason, MAX_PATH_DEPTH, NodeReason, OpKind, OpPhase, PATH_SEPARATOR, PathProblem, TreeOp,
    TreePath, TreeProblem,
};

pub use handle::{Addressing, Adjacency, Closure, Marker, NestedSet, Path, Strategy, Tree};

use crate::model::{Entity, Table};

/// The attribute where a tree node keeps its revision: the number of inserts under it. Moves
/// and deletes condition their writes on it.
pub const TREE_REV_ATTR: &str = "_tree_rev";

/// The tree attributes of a node's item that reads remove before deserializing the node: the
/// `Entity::BOOKKEEPING_ATTRS` that `#[hierarchy]` generates (every strategy).
#[doc(hidden)]
pub const TREE_BOOKKEEPING_ATTRS: &[&str] = &[TREE_REV_ATTR, TREE_KIDS_ATTR];

/// A [`TreeProblem`] as an error of entity `E`.
pub(crate) fn problem<E: Entity>(problem: TreeProblem) -> crate::Error {
    crate::Error::Tree { entity: E::NAME, problem }
}

/// The table partition key attribute of `E`.
pub(crate) fn pk_attr<E: Entity>() -> &'static str {
    <E::Table as Table>::PK
}
