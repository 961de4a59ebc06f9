//! [`Tree`]: the one handle of a tree, whatever its strategy, and the strategies' markers.
//!
//! A strategy folder (`path/`, `closure/`, `adjacency/`, `nested/`) holds the layout of its
//! items and its protocol steps: inherent methods of `Tree<'_, E, ItsMarker>` (the reads that
//! return its own query builders, its inserts, its large-operation protocol) and its
//! implementation of the sealed [`Strategy`] trait, through which the shared builders
//! ([`Move`](super::Move), [`Delete`](super::Delete), [`Descendants`](super::Descendants),
//! [`BulkLoad`](super::BulkLoad)) and the one implementation of
//! [`TreeProtocol`](super::TreeProtocol) reach it.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;

use futures_util::stream::BoxStream;

use super::TreeOp;
use super::builders::{Delete, Descendants, Move};
use super::bulk::{BulkLoad, Forest, LoadPlan, LoadProblem};
use super::op::{OpReport, Progress};
use crate::db::Db;
use crate::error::Error;
use crate::key::Key;
use crate::model::Entity;
use crate::ops::{BoxFuture, Target};

/// The tree of one partition of a `#[hierarchy]` node type `E`, stored by strategy `S`; made
/// by the generated `Node::tree(&db, ..partition key fields)`. Each strategy's handle has its
/// own name and docs: [`PathTree`](super::PathTree), [`ClosureTree`](super::ClosureTree),
/// [`AdjacencyTree`](super::AdjacencyTree), [`NestedTree`](super::NestedTree); code written
/// once for every strategy uses [`TreeProtocol`](super::TreeProtocol).
pub struct Tree<'a, E: Entity, S> {
    pub(crate) db: &'a Db<E::Table>,
    pub(crate) pk: String,
    strategy: PhantomData<fn() -> S>,
}

impl<'a, E: Entity, S> Tree<'a, E, S> {
    /// The tree in partition `pk` (the generated `tree(..)` builds `pk` from its arguments).
    pub fn new(db: &'a Db<E::Table>, pk: String) -> Self {
        Tree { db, pk, strategy: PhantomData }
    }

    /// The database handle.
    pub fn db(&self) -> &'a Db<E::Table> {
        self.db
    }

    /// The partition key of the tree.
    pub fn partition(&self) -> &str {
        &self.pk
    }
}

impl<'a, E: Entity, S: Strategy<E>> Tree<'a, E, S> {
    /// Loads many new nodes at once, in any order (parents are written first), each under
    /// a parent that is in the input or in the tree (or at the top level): `BatchWriteItem`s of 25 nodes
    /// under an intent record, no transaction per node. See [`BulkLoad`](crate::tree::BulkLoad)
    /// for the checks (nothing is written when one fails), the requests and recovery
    /// (`resume`, `rollback`).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ddb_model::Error> {
    /// use ddb_model::{Entity, TreePath, local};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
    /// #[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
    /// #[hierarchy(path = path, index = gsi1)]
    /// struct Folder { drive: String, path: TreePath }
    ///
    /// let db = local::isolated_db().await?;
    /// let drive = Folder::tree(&db, "D");
    /// let folder = |p: &str| Folder { drive: "D".into(), path: p.parse().unwrap() };
    /// let mut nodes: Vec<Folder> = (0..60).map(|i| folder(&format!("docs/{i}"))).collect();
    /// nodes.push(folder("docs"));
    /// let report = drive.bulk_load(nodes).await?;
    /// assert_eq!(report.nodes, 61);
    /// assert_eq!(drive.children(&"docs".parse()?).all().await?.len(), 60);
    /// // 3 BatchWriteItem for the 61 nodes, 1 for the journal.
    /// assert_eq!(db.requests().get(ddb_model::Op::BatchWriteItem), 4);
    /// # Ok(()) }
    /// ```
    pub fn bulk_load(&self, nodes: impl IntoIterator<Item = E>) -> BulkLoad<'_, E, S> {
        BulkLoad::new(self, nodes)
    }
}

impl<E: Entity, S> Clone for Tree<'_, E, S> {
    fn clone(&self) -> Self {
        Tree::new(self.db, self.pk.clone())
    }
}

impl<E: Entity, S: Marker> fmt::Debug for Tree<'_, E, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(S::HANDLE).field("entity", &E::NAME).field("partition", &self.pk).finish()
    }
}

/// The path strategy (`#[hierarchy(path = ..)]`): nodes addressed by their [`TreePath`](super::TreePath).
#[derive(Debug, Clone, Copy)]
pub enum Path {}
/// The closure strategy (`strategy = closure`): a copy of each node under each ancestor.
#[derive(Debug, Clone, Copy)]
pub enum Closure {}
/// The adjacency-list strategy (`strategy = adjacency`): a parent reference and an index on it.
#[derive(Debug, Clone, Copy)]
pub enum Adjacency {}
/// The nested-set strategy (`strategy = nested_set`): nested intervals of numbers.
#[derive(Debug, Clone, Copy)]
pub enum NestedSet {}

/// What a strategy marker is named as, sealed.
pub trait Marker: sealed::Sealed + Sized + Send + Sync + 'static {
    /// The name of the strategy's handle (`PathTree`, ...), as `Debug` prints it.
    const HANDLE: &'static str;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Path {}
    impl Sealed for super::Closure {}
    impl Sealed for super::Adjacency {}
    impl Sealed for super::NestedSet {}
}

impl Marker for Path {
    const HANDLE: &'static str = "PathTree";
}
impl Marker for Closure {
    const HANDLE: &'static str = "ClosureTree";
}
impl Marker for Adjacency {
    const HANDLE: &'static str = "AdjacencyTree";
}
impl Marker for NestedSet {
    const HANDLE: &'static str = "NestedTree";
}

/// How a strategy addresses nodes: by path (the path strategy) or by id (one implementation
/// for the three id strategies). Sealed, with [`Strategy`].
pub trait Addressing<E: Entity>: Marker {
    /// How the protocol addresses a node: its [`TreePath`](super::TreePath), or its id.
    type Address: Clone + Send + Sync;
    /// A node as the builders hold it: its path, or its escaped id.
    #[doc(hidden)]
    type Node: Clone + Send + Sync;
    /// Where a move goes: a new path (or the problem making it), or the escaped id of the
    /// new parent (`None`: the top level).
    #[doc(hidden)]
    type Dest: Clone + Send + Sync;

    /// The address of `node`.
    #[doc(hidden)]
    fn address(node: &E) -> Self::Address;
    /// The address of `node`'s parent.
    #[doc(hidden)]
    fn parent_address(node: &E) -> Option<Self::Address>;
    /// The builders' form of an address.
    #[doc(hidden)]
    fn node(at: &Self::Address) -> Self::Node;
    /// The key of the node at `at`.
    #[doc(hidden)]
    fn key(tree: &Tree<'_, E, Self>, at: &Self::Address) -> Key<E>;
    /// Where a move of `at` under `parent` (`None`: to the top level) goes.
    #[doc(hidden)]
    fn dest(at: &Self::Address, parent: Option<&Self::Address>) -> Self::Dest;
    /// A node's address as key text (escaped id, or path text), for a bulk load.
    #[doc(hidden)]
    fn load_addr(node: &E) -> String;
    /// The address of a node's parent, for a bulk load.
    #[doc(hidden)]
    fn load_parent(node: &E) -> Option<String>;
    /// The sort key of the tree's intent record.
    #[doc(hidden)]
    fn op_sk() -> String;
    /// Checks one node of a bulk load alone (its path).
    #[doc(hidden)]
    fn load_check(node: &E) -> Result<(), Error>;
    /// A problem of a bulk load's input as the strategy's typed error.
    #[doc(hidden)]
    fn load_problem(problem: LoadProblem) -> Error;
}

/// A strategy's side of the operations every tree has: implemented once per strategy, in
/// its folder, for its node types; the shared builders and the one implementation of
/// [`TreeProtocol`](super::TreeProtocol) call it. Sealed: the four markers are the only
/// strategies, and the methods are not meant to be called directly.
pub trait Strategy<E: Entity>: Addressing<E> {
    /// Where a read of descendants starts.
    #[doc(hidden)]
    type From: Clone + Send + Sync;
    /// The options of a read of descendants particular to the strategy.
    #[doc(hidden)]
    type ReadOptions: Clone + Send + Sync + Default;
    /// Subtrees of more nodes move through the resumable protocol (the default and the cap
    /// of [`Move::transaction_limit`]).
    #[doc(hidden)]
    const MOVE_LIMIT: usize;
    /// The same for deletes.
    #[doc(hidden)]
    const DELETE_LIMIT: usize;

    /// A read of the descendants of `at` starts there.
    #[doc(hidden)]
    fn from(at: &Self::Address) -> Self::From;

    #[doc(hidden)]
    fn insert<'b>(
        tree: &'b Tree<'_, E, Self>,
        node: Target<'b, E>,
    ) -> impl Future<Output = Result<(), Error>> + Send;
    #[doc(hidden)]
    fn parent(
        tree: &Tree<'_, E, Self>,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Option<E>, Error>> + Send;
    #[doc(hidden)]
    fn children(
        tree: &Tree<'_, E, Self>,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send;
    #[doc(hidden)]
    fn roots(tree: &Tree<'_, E, Self>) -> impl Future<Output = Result<Vec<E>, Error>> + Send;
    #[doc(hidden)]
    fn at_depth(
        tree: &Tree<'_, E, Self>,
        depth: usize,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send;
    #[doc(hidden)]
    fn ancestors(
        tree: &Tree<'_, E, Self>,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send;
    #[doc(hidden)]
    fn breadcrumbs(
        tree: &Tree<'_, E, Self>,
        at: &Self::Address,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send;
    #[doc(hidden)]
    fn subtree_size(
        tree: &Tree<'_, E, Self>,
        at: &Self::Address,
    ) -> impl Future<Output = Result<u64, Error>> + Send;
    #[doc(hidden)]
    fn pending(
        tree: &Tree<'_, E, Self>,
    ) -> impl Future<Output = Result<Option<TreeOp>, Error>> + Send;
    #[doc(hidden)]
    fn resume(
        tree: &Tree<'_, E, Self>,
        progress: impl FnMut(Progress) + Send,
    ) -> impl Future<Output = Result<Option<OpReport>, Error>> + Send;
    #[doc(hidden)]
    fn rollback(
        tree: &Tree<'_, E, Self>,
    ) -> impl Future<Output = Result<Option<OpReport>, Error>> + Send;

    /// Sends a move.
    #[doc(hidden)]
    fn send_move<'a, 'p: 'a>(mv: Move<'a, 'p, E, Self>) -> BoxFuture<'a, Result<OpReport, Error>>;
    /// Sends a delete.
    #[doc(hidden)]
    fn send_delete<'a, 'p: 'a>(
        delete: Delete<'a, 'p, E, Self>,
    ) -> BoxFuture<'a, Result<OpReport, Error>>;
    /// The descendants of a read, as they are read.
    #[doc(hidden)]
    fn stream(read: Descendants<'_, E, Self>) -> BoxStream<'_, Result<E, Error>>;
    /// Every descendant of a read.
    #[doc(hidden)]
    fn all(read: Descendants<'_, E, Self>) -> BoxFuture<'_, Result<Vec<E>, Error>>;
    /// The number of descendants of a read.
    #[doc(hidden)]
    fn count(read: Descendants<'_, E, Self>) -> BoxFuture<'_, Result<usize, Error>>;

    /// Reads the existing nodes a load hangs under (their absence is
    /// [`LoadProblem::Missing`]), checks depths, and renders every row: a function of the
    /// forest, the token and the tree's state, which no write changes while the load is
    /// pending.
    #[doc(hidden)]
    fn load_plan(
        tree: &Tree<'_, E, Self>,
        forest: &Forest<E>,
        token: &str,
    ) -> impl Future<Output = Result<LoadPlan, Error>> + Send;
}
