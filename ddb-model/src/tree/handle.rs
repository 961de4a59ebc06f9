//! [`Tree`]: the one handle of a tree, the strategies' markers, and the sealed [`Strategy`]
//! trait whose steps (one per operation, implemented in each strategy's folder) the methods
//! written once here, the shared builders and [`TreeProtocol`](super::TreeProtocol) call.

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;

use futures_util::stream::{BoxStream, TryStreamExt};

use super::builders::{Delete, Descendants, Move};
use super::bulk::{BulkLoad, Forest, LoadPlan, LoadProblem};
use super::op::{OpKind, OpPhase, OpReport, Progress, ProgressFn, TreeOp, corrupt_intent};
use super::{TreeProblem, problem};
use crate::db::Db;
use crate::error::{Error, IntentReason};
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, Stamp};
use crate::ops::put::next_version;
use crate::ops::{BoxFuture, Target};

/// The tree of one partition of a `#[hierarchy]` node type `E`, stored by strategy `S`; made
/// by the generated `Node::tree(&db, ..partition key fields)`. Each strategy's handle has its
/// own name and docs: [`PathTree`](super::PathTree), [`ClosureTree`](super::ClosureTree),
/// [`AdjacencyTree`](super::AdjacencyTree), [`NestedTree`](super::NestedTree); code written
/// once for every strategy uses [`TreeProtocol`](super::TreeProtocol). The four, and code
/// generic over them:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ddb_model::Error> {
/// use ddb_model::tree::TreeProtocol;
/// use ddb_model::{Entity, Error, TreePath, UpdateVerbs, local};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
/// #[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
/// #[hierarchy(path = path, index = gsi1)]
/// struct Folder { drive: String, path: TreePath }
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
/// #[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
/// #[hierarchy(strategy = closure, parent = manager)]
/// struct Employee { org: String, id: String, manager: Option<String>, title: String, reports: u32 }
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
/// #[entity(pk = "SHOP#<shop>", sk = "CAT#<id>")]
/// #[hierarchy(strategy = adjacency, parent = parent, index = gsi1, max_depth = 3)]
/// struct Category { shop: String, id: String, parent: Option<String> }
///
/// #[derive(Entity, Serialize, Deserialize, Debug, Clone)]
/// #[entity(pk = "STORE#<store>", sk = "SHELF#<id>")]
/// #[hierarchy(strategy = nested_set, parent = parent, index = gsi1)]
/// struct Shelf { store: String, id: String, parent: Option<String> }
///
/// /// Nodes within two levels below `at`, and how deep `at` is: the same code for every
/// /// strategy.
/// async fn survey<T: TreeProtocol>(tree: &T, at: &T::Address) -> Result<(usize, usize), Error> {
///     let near = tree.descendants(at).depth(1..=2).count().await?;
///     let depth = tree.ancestors(at).await?.len() + 1;
///     Ok((near, depth))
/// }
/// let names = |ids: Vec<&str>| ids.into_iter().map(str::to_owned).collect::<Vec<_>>();
/// let db = local::isolated_db().await?;
///
/// // Path: nodes addressed by path.
/// let drive = Folder::tree(&db, "D");
/// // At start-up, finish whatever a crashed process left half done (here: nothing).
/// if let Some(report) = drive.resume(|_| {}).await? {
///     println!("finished an interrupted operation on {} nodes", report.nodes);
/// }
/// assert!(drive.pending().await?.is_none());
/// for path in ["V", "V/d", "V/d/i", "V/e", "IV"] {
///     drive.insert(&Folder { drive: "D".into(), path: path.parse()? }).await?;
/// }
/// let v: TreePath = "V".parse()?;
/// let children: Vec<Folder> = drive.children(&v).all().await?;
/// assert_eq!(children.iter().map(|f| f.path.name()).collect::<Vec<_>>(), ["d", "e"]);
/// assert_eq!(drive.descendants(&v).count().await?, 3);
/// let crumbs = drive.breadcrumbs(&"V/d/i".parse()?).await?;
/// let crumbs: Vec<String> = crumbs.iter().map(|f| f.path.to_string()).collect();
/// assert_eq!(crumbs, ["V", "V/d", "V/d/i"]);
/// assert_eq!(survey(&drive, &v).await?, (3, 1));
/// // Moves name the new parent (or the top level) on every strategy.
/// drive.move_to(&"V/d".parse()?, None).await?;
/// assert_eq!(drive.roots().await?.len(), 3);
///
/// // Closure: everyone within two levels of the CEO is one query.
/// let org = Employee::tree(&db, "acme");
/// let emp = |id: &str, manager: Option<&str>| Employee {
///     org: "acme".into(), id: id.into(), manager: manager.map(Into::into),
///     title: "Engineer".into(), reports: 0,
/// };
/// for (id, manager) in [("ceo", None), ("cto", Some("ceo")), ("dev", Some("cto")), ("ops", Some("cto"))] {
///     org.insert(&emp(id, manager)).await?;
/// }
/// org.update("dev").set(Employee::TITLE, "Staff engineer").add(Employee::REPORTS, 2).await?;
/// // The copy under the CTO, which `children` reads, has the new values too.
/// let team: Vec<Employee> = org.children("cto").all().await?;
/// assert_eq!(team.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(), ["dev", "ops"]);
/// assert_eq!((team[0].title.as_str(), team[0].reports), ("Staff engineer", 2));
/// // A plain update would leave that copy stale: it is refused before sending.
/// let err = Employee::update(&db, "acme", "dev").set(Employee::TITLE, "CTO").await.unwrap_err();
/// assert!(err.is_invalid_input());
/// assert_eq!(org.descendants("ceo").depth(1..=2).count().await?, 3);
/// let chain = org.breadcrumbs("dev").await?;
/// assert_eq!(chain.into_iter().map(|e| e.id).collect::<Vec<_>>(), names(vec!["ceo", "cto", "dev"]));
/// assert_eq!(survey(&org, &"cto".to_owned()).await?, (2, 2));
/// org.move_to(&"dev".to_owned(), Some(&"ceo".to_owned())).await?;
/// assert_eq!(org.children(&"ceo".to_owned()).await?.len(), 2);
///
/// // Adjacency: a move is one transaction, whatever the subtree.
/// let shop = Category::tree(&db, "s1");
/// let cat = |id: &str, parent: Option<&str>| Category {
///     shop: "s1".into(), id: id.into(), parent: parent.map(Into::into),
/// };
/// for (id, parent) in [("root", None), ("electronics", Some("root")), ("phones", Some("electronics"))] {
///     shop.insert(&cat(id, parent)).await?;
/// }
/// let err = shop.insert(&cat("cases", Some("phones"))).await.unwrap_err();
/// assert!(err.is_tree_too_deep()); // depth 4 in a tree of 3 levels: nothing written
/// assert!(shop.get("cases").await?.is_none());
/// assert_eq!(shop.children("root").all().await?[0].id, "electronics");
/// let crumbs = shop.breadcrumbs("phones").await?;
/// assert_eq!(crumbs.into_iter().map(|c| c.id).collect::<Vec<_>>(), names(vec!["root", "electronics", "phones"]));
/// shop.move_subtree("phones", "root").await?;
/// assert_eq!(shop.descendants("root").depth(1..=1).all().await?.len(), 2);
///
/// // Nested set: a subtree is one range query, once the node's interval is known.
/// let store = Shelf::tree(&db, "s1");
/// for (id, parent) in [("root", None), ("tv", Some("root")), ("oled", Some("tv")), ("audio", Some("root"))] {
///     store.insert(&Shelf { store: "s1".into(), id: id.into(), parent: parent.map(Into::into) }).await?;
/// }
/// let root = store.span("root").await?.expect("inserted");
/// let before = db.requests();
/// assert_eq!(store.within(root).all().await?.len(), 4);
/// assert_eq!((db.requests() - before).total(), 1);
/// assert_eq!(store.descendants("root").depth(1..=1).count().await?, 2);
/// let crumbs = store.breadcrumbs("oled").await?;
/// assert_eq!(crumbs.into_iter().map(|c| c.id).collect::<Vec<_>>(), names(vec!["root", "tv", "oled"]));
/// # Ok(()) }
/// ```
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

    /// [`TreeProblem::OtherTree`] for a node of another partition.
    pub(crate) fn check_tree(&self, node: &E) -> Result<(), Error> {
        let key = node.key();
        if key.pk() == self.pk {
            return Ok(());
        }
        let (tree, node) = (self.pk.clone(), key.pk().to_owned());
        Err(problem::<E>(TreeProblem::OtherTree { tree, node }))
    }
}

impl<'a, E: Entity, S: Strategy<E>> Tree<'a, E, S> {
    /// Loads many new nodes at once, in any order, with `BatchWriteItem`s under an intent
    /// record; see [`BulkLoad`](crate::tree::BulkLoad) for the checks, requests and recovery.
    pub fn bulk_load(&self, nodes: impl IntoIterator<Item = E>) -> BulkLoad<'_, E, S> {
        BulkLoad::new(self, nodes)
    }

    /// Inserts a node under the parent its path (path strategy) or parent field (id
    /// strategies; `None`: the top level) names, in one `TransactWriteItems` that creates it
    /// ([`Error::AlreadyExists`] if its path or id is taken), checks that the parent exists
    /// and counts the insert there ([`TreeProblem::ParentMissing`] for a path,
    /// [`TreeProblem::NoParent`] for an id), and checks that no large operation in progress
    /// moves, deletes or renumbers the node's branch and no bulk load runs
    /// ([`TreeProblem::Busy`]). It is sent again (up to 3 times) after a transaction conflict,
    /// and when the operation that refused it has finished by the time its intent is read.
    ///
    /// Checked before sending: the node is of this tree (its partition key), within
    /// `max_depth` ([`TreeProblem::TooDeep`], [`TreeProblem::Path`]) and within DynamoDB's key
    /// and item limits. Through `&mut`, a versioned node's version is updated. Per strategy:
    ///
    /// - **path**: the transaction alone; it bumps the parent's revision
    ///   ([`TREE_REV_ATTR`](super::TREE_REV_ATTR)). Its intent check first asks only whether a
    ///   large operation is under way (cheapest for the service); when one is, the insert is
    ///   sent once more asking whether it involves the path.
    /// - **closure**: one strongly consistent `GetItem` of the parent's own copy (naming the
    ///   ancestors; none for a top-level node); the transaction also writes the node's own
    ///   copy, one copy per ancestor and one under the tree, and checks that the parent still
    ///   has the same ancestors (retried when it moved).
    /// - **adjacency**: one strongly consistent `GetItem` per level, walking up from the
    ///   parent (a node stores no depth, so that a move stays one transaction whatever its
    ///   subtree); the transaction checks that none of them moved, so a move deepening the
    ///   branch after the walk cancels it and the insert walks again, a few times with backoff
    ///   ([`Error::is_tree_changed`] when the branch kept moving). At depth `d`: `d - 1`
    ///   `GetItem` and a transaction of `d` actions.
    /// - **nested set**: one strongly consistent `GetItem` of the parent (or the top-level
    ///   record); the transaction creates the node in a free slot of the parent's interval.
    ///   When the gap is exhausted, the smallest enclosing subtree with room, or the whole
    ///   tree, is numbered again first: one transaction up to 96 nodes, resumable beyond, at a
    ///   cost that does not grow with depth (8 requests in all instead of 2 up to 96 nodes; see
    ///   the table of [`NestedTree`](super::NestedTree)); [`TreeProblem::NoRoom`] only when two
    ///   numbers per node in `u64` cannot hold the tree. The insert does not say whether it
    ///   renumbered: count its requests ([`Db::requests`](crate::Db::requests) on a handle no
    ///   other task shares: 1 `TransactWriteItems` for a plain insert, 2 or more otherwise),
    ///   or watch its request spans (`tracing` feature). A renumbering under the intent record
    ///   shows in [`pending`](Tree::pending); any insert while the whole tree is renumbered is
    ///   [`TreeProblem::Busy`].
    pub async fn insert<'b>(&'b self, node: impl Into<Target<'b, E>>) -> Result<(), Error> {
        let mut target = node.into();
        // Before the reads an insert starts with: a refused node costs no request.
        crate::model::validate(target.get(), &target.get().key())?;
        let (_, next) = next_version::<E>(target.get().version())?;
        let stamp = self.db.stamp(true);
        S::insert(self, target.get(), next, stamp).await?;
        target.written(next, Some(stamp));
        Ok(())
    }

    /// The large operation in progress on this tree (or interrupted), if any: one strongly
    /// consistent `GetItem`. A large move or delete, a bulk load, or on a nested set a
    /// renumbering ([`OpKind::Renumber`](super::OpKind::Renumber): of a subtree, or of the
    /// whole tree for `node: None`).
    ///
    /// What readers of a nested set see while a renumbering runs, between its transactions:
    /// every node is there, with its depth and ancestors, so reads by id (`get`, `parent`,
    /// `ancestors`, `breadcrumbs`) and by absolute depth (`roots`, `at_depth`) are exact.
    /// The region's root keeps its interval, so reads of it and of every node outside the
    /// region are exact too; reads by interval of a node inside the region (`descendants`,
    /// `children`, [`within`](super::NestedTree::within), `subtree_size`) may miss nodes of
    /// the region or return some of its other nodes until it ends: nodes are rewritten a
    /// transaction of 99 at a time. Once it ended (or was resumed to its end), every node is
    /// inside its parent's interval again.
    pub async fn pending(&self) -> Result<Option<TreeOp>, Error> {
        Ok(self.intent().await?.map(|(op, _)| op))
    }

    /// Finishes an interrupted large operation (a process that died, a request that failed
    /// for good): redoes its current phase from a fresh read and completes it (a move or a
    /// renumbering is run to its end, nodes already in place not written again; a delete
    /// deletes what is left of its subtree; a bulk load writes its rows again from its
    /// journal). `Ok(None)` when nothing was pending. An operation interrupted while it was
    /// still checking wrote nothing; resuming it just removes its intent record.
    ///
    /// Safe while the original operation still runs (a process that is slow or paused
    /// rather than dead): `resume` takes the operation over by advancing the intent's epoch
    /// first, and from then on every write of the original writer fails, including requests
    /// it had in flight; it stops with [`TreeProblem::Superseded`]. If the original writer
    /// moves to its next phase first, `resume` is refused with [`TreeProblem::Busy`] and
    /// changes nothing. Two `resume` calls at once: one takes over, the other is refused.
    /// (Example: on [`TreeProtocol`](super::TreeProtocol).)
    pub async fn resume(
        &self,
        progress: impl FnMut(Progress) + Send,
    ) -> Result<Option<OpReport>, Error> {
        let Some((op, item)) = self.intent().await? else {
            return Ok(None);
        };
        let mut progress: ProgressFn<'_> = Box::new(progress);
        match op.kind {
            OpKind::Load { .. } => super::bulk::recover(self, op, Some(&mut progress)).await,
            _ if !S::owns(&op.kind) => Err(foreign::<E, S>(&op)),
            // Still checking: nothing written but the intent.
            _ if op.phase == OpPhase::Check => self.recover(&op, |_| async { Ok(0) }).await,
            _ => self.recover(&op, |op| S::resume(self, op, &item, &mut progress)).await,
        }
    }

    /// Undoes an interrupted operation that can still be undone: a bulk load (deleting what
    /// it wrote), or a large move that has not started removing what it moved (path: its
    /// copies and the intent record are deleted; closure: the copies under the new
    /// ancestors; nested set: its subtree is numbered back into its old interval, the one
    /// it took under the new parent staying unused). Like `resume`, it takes the operation
    /// over first, so a writer still running is fenced off ([`TreeProblem::Superseded`]).
    /// `Ok(None)` when nothing was pending. A delete, a renumbering (which changes no
    /// node's place, only numbers), or a move past that point (an adjacency tree has no
    /// other large operation than a delete) is [`TreeProblem::CannotRollBack`]: finish it
    /// with [`resume`](Tree::resume).
    pub async fn rollback(&self) -> Result<Option<OpReport>, Error> {
        let Some((op, item)) = self.intent().await? else {
            return Ok(None);
        };
        match op.kind {
            OpKind::Load { .. } => super::bulk::recover(self, op, None).await,
            _ if !S::owns(&op.kind) => Err(foreign::<E, S>(&op)),
            _ if op.phase == OpPhase::Check => self.recover(&op, |_| async { Ok(0) }).await,
            _ => S::rollback(self, op, &item).await,
        }
    }
}

/// The error of an intent record naming an operation that strategy `S` never writes.
pub(crate) fn foreign<E: Entity, S: Marker>(op: &TreeOp) -> Error {
    corrupt_intent::<E>(IntentReason::Foreign { op: Box::new(op.clone()), handle: S::HANDLE })
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

/// What a strategy marker is named as, sealed.
pub trait Marker: sealed::Sealed + Sized + Send + Sync + 'static {
    /// The name of the strategy's handle (`PathTree`, ...), as `Debug` prints it.
    const HANDLE: &'static str;
}

mod sealed {
    pub trait Sealed {}
}

/// The strategy markers: each an empty enum, sealed, named after its handle.
macro_rules! markers {
    ($($(#[$doc:meta])* $name:ident => $handle:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy)]
        pub enum $name {}
        impl sealed::Sealed for $name {}
        impl Marker for $name {
            const HANDLE: &'static str = $handle;
        }
    )*};
}

markers! {
    /// The path strategy (`#[hierarchy(path = ..)]`): nodes addressed by their [`TreePath`](super::TreePath).
    Path => "PathTree";
    /// The closure strategy (`strategy = closure`): a copy of each node under each ancestor.
    Closure => "ClosureTree";
    /// The adjacency-list strategy (`strategy = adjacency`): a parent reference and an index on it.
    Adjacency => "AdjacencyTree";
    /// The nested-set strategy (`strategy = nested_set`): nested intervals of numbers.
    NestedSet => "NestedTree";
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
    /// A node's address and its parent's as key text (escaped ids, or path text), for a
    /// bulk load.
    #[doc(hidden)]
    fn load_addr(node: &E) -> (String, Option<String>);
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
/// its folder, for its node types. Each step is the strategy's implementation; the generic
/// methods of [`Tree`], the shared builders and the one implementation of
/// [`TreeProtocol`](super::TreeProtocol) call it. Sealed: the four markers are the only
/// strategies, and the methods are not meant to be called directly. Nodes are named as the
/// builders hold them ([`Addressing::Node`]: a path, or an escaped id).
pub trait Strategy<E: Entity>: Addressing<E> {
    /// Where a read of descendants starts (at a node, or what the strategy reads first).
    #[doc(hidden)]
    type From: Clone + Send + Sync + From<Self::Node>;
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

    /// Inserts `node` at version `next`, at the time `stamp` (see [`Tree::insert`]).
    #[doc(hidden)]
    fn insert(
        tree: &Tree<'_, E, Self>,
        node: &E,
        next: Option<u64>,
        stamp: Stamp,
    ) -> impl Future<Output = Result<(), Error>> + Send;
    /// The parent of the node `at`; `None` for a top-level or missing node.
    #[doc(hidden)]
    fn parent(
        tree: &Tree<'_, E, Self>,
        at: Self::Node,
    ) -> impl Future<Output = Result<Option<E>, Error>> + Send;
    /// The children of the node `at`: its descendants at relative depth 1.
    #[doc(hidden)]
    fn children(
        tree: &Tree<'_, E, Self>,
        at: Self::Node,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
        Self::all(Descendants::new(tree, at.into()).depth(1..=1))
    }
    /// The top-level nodes: the nodes at depth 1.
    #[doc(hidden)]
    fn roots(tree: &Tree<'_, E, Self>) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
        Self::at_depth(tree, 1)
    }
    #[doc(hidden)]
    fn at_depth(
        tree: &Tree<'_, E, Self>,
        depth: usize,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send;
    /// The ancestors of the node `at`, root first; empty for a top-level or missing node.
    #[doc(hidden)]
    fn ancestors(
        tree: &Tree<'_, E, Self>,
        at: Self::Node,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send;
    /// The ancestors and the node `at`, root first; empty for a missing node.
    #[doc(hidden)]
    fn breadcrumbs(
        tree: &Tree<'_, E, Self>,
        at: Self::Node,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send;
    /// The nodes of the subtree of `at`, itself included; 0 for a missing node.
    #[doc(hidden)]
    fn subtree_size(
        tree: &Tree<'_, E, Self>,
        at: Self::Node,
    ) -> impl Future<Output = Result<u64, Error>> + Send;
    /// Whether the strategy's large operations include `kind` (a bulk load aside).
    #[doc(hidden)]
    fn owns(kind: &OpKind) -> bool;
    /// Finishes the pending operation `op` (its own, past its check phase, taken over)
    /// whose intent record is `item`; returns the nodes it handled.
    #[doc(hidden)]
    fn resume(
        tree: &Tree<'_, E, Self>,
        op: TreeOp,
        item: &Item,
        progress: &mut ProgressFn<'_>,
    ) -> impl Future<Output = Result<usize, Error>> + Send;
    /// Undoes the pending operation `op` (its own, past its check phase) whose intent
    /// record is `item`.
    #[doc(hidden)]
    fn rollback(
        tree: &Tree<'_, E, Self>,
        op: TreeOp,
        item: &Item,
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
    fn all(read: Descendants<'_, E, Self>) -> BoxFuture<'_, Result<Vec<E>, Error>> {
        Box::pin(Self::stream(read).try_collect())
    }
    /// The number of descendants of a read.
    #[doc(hidden)]
    fn count(read: Descendants<'_, E, Self>) -> BoxFuture<'_, Result<usize, Error>> {
        Box::pin(Self::stream(read).try_fold(0, |n, _| std::future::ready(Ok(n + 1))))
    }

    /// Reads the existing nodes a load hangs under (their absence is
    /// [`LoadProblem::Missing`]), checks depths, and renders every row: a function of the
    /// forest, the token and the tree's state, which no write changes while the load is
    /// pending.
    #[doc(hidden)]
    fn load_plan(
        tree: &Tree<'_, E, Self>,
        forest: &mut Forest<E>,
        token: &str,
    ) -> impl Future<Output = Result<LoadPlan, Error>> + Send;
}
