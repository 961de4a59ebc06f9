//! One conformance suite for the tree strategies, written once over `TreeProtocol` and run
//! on each strategy (path, closure, adjacency, nested set), every test on a table of its own:
//!
//! - random operations against an in-memory model: a random tree of a few hundred nodes,
//!   then a few hundred random inserts, moves and deletes, valid and invalid (missing parent,
//!   duplicate, move under its own subtree, missing node, ...), each followed by reads of the
//!   nodes it touched compared with the model, and the whole tree compared every 25 steps;
//!   every 50 steps the strategy's bookkeeping is squeezed (`Strategy::squeeze`: nested
//!   sets lose every free number, so that the next writes renumber regions or the whole
//!   tree);
//!   The seed is printed on failure; `TREE_CONFORMANCE_SEED=<seed>` replays a run,
//!   `TREE_CONFORMANCE_NODES` / `TREE_CONFORMANCE_OPS` size it, `TREE_CONFORMANCE_SQUEEZE=0`
//!   leaves the bookkeeping alone;
//! - a large move and a large delete cut after each of their requests, then resumed;
//! - a pending operation refusing conflicting writes, rolled back or finished;
//! - refused writes: typed errors, nothing written;
//! - seed 001's five access patterns, from a spawned task.
//!
//! What only one strategy does (request counts, copies, path renames, ...) is tested in its
//! own file (`tree.rs`, `tree_closure.rs`, `tree_adjacency.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use ddb_model::prelude::*;
use ddb_model::tree::{
    AdjacencyTree, ClosureTree, NestedTree, OpKind, OpPhase, OpReport, PathTree, TreeProblem,
    TreeProtocol,
};
use ddb_model::{DefaultTable, TreePath};
use futures_util::TryStreamExt;

use crate::model::{Cat, Dir, Folder, Nest};
use crate::support::{db, snapshot, snapshot_keys};
use ddb_model::testing::{Faults, Harness};

/// A strategy under test: its node type, how to open its tree and build its nodes, and the
/// few facts in which strategies differ (see `TreeProtocol`'s documentation).
pub trait Strategy: Send + Sync + 'static {
    const NAME: &'static str;
    /// Node names are unique among siblings (path: the name is the last segment of the
    /// address), not in the whole tree (closure, adjacency: the name is the id).
    const SIBLING_SCOPE: bool;
    /// A move rewrites every node of the subtree (`report.nodes` is its size), not only the
    /// node itself.
    const MOVE_REWRITES_SUBTREE: bool;
    /// A move under the parent the node has already rewrites it (`report.nodes > 0`).
    const STAY_WRITES: bool;
    /// Large moves go through a resumable protocol.
    const RESUMABLE_MOVE: bool;
    /// Nodes of the subtree a long (resumable, several transactions) move or delete moves.
    const LONG: usize;

    type Node: Entity + Clone + Debug;
    type Address: Clone + Debug + PartialEq + Send + Sync + 'static;
    type Tree<'a>: TreeProtocol<Node = Self::Node, Address = Self::Address>;

    fn open<'a>(db: &'a Db, part: &str) -> Self::Tree<'a>;
    /// The node `name` under the node at `parent` (the top level for `None`).
    fn node(part: &str, name: &str, parent: Option<&Self::Address>) -> Self::Node;
    /// The address of the node whose names, root first, are `chain`.
    fn address(chain: &[String]) -> Self::Address;
    /// An address as comparable text.
    fn key(at: &Self::Address) -> String;
    fn name(node: &Self::Node) -> String;
    /// The problem of a write under the missing node `parent`.
    fn missing_parent(parent: &Self::Address) -> TreeProblem;
    /// The problem of a move or delete of the missing node `at`.
    fn missing_node(at: &Self::Address) -> TreeProblem;
    /// The problem of a move of `at` under `parent`, which is `at` or below it.
    fn cycle(at: &Self::Address, parent: &Self::Address) -> TreeProblem;
    /// What a rollback of a move of `moved` nodes, cut after its first copies, reports.
    fn rolled_back(report: &OpReport, moved: usize) -> bool;
    /// The intent of a large move of `at` under `parent`, and of a large delete of `at`.
    fn move_op(at: &Self::Address, parent: &Self::Address) -> OpKind;
    fn delete_op(at: &Self::Address) -> OpKind;

    /// Writes the nodes of a test's setup: one bulk load (whose result the
    /// `bulk_load_agrees_with_a_model` test compares with inserts).
    async fn setup(db: &Db, part: &str, nodes: &[Self::Node]) -> Result<(), Error> {
        let tree = Self::open(db, part);
        tree.bulk_load(nodes.to_vec()).await?;
        Ok(())
    }

    /// Sends the tree's next writes down the strategy's slow paths, by rewriting its
    /// bookkeeping as raw items (nothing may run meanwhile): for nested sets, numbers
    /// exhausted everywhere (`whole`: the top level too), so that inserts and moves
    /// renumber regions, large ones resumably, or the whole tree. Nothing for the others.
    async fn squeeze(_db: &Db, _part: &str, _whole: bool) {}
}

pub struct Path;
pub struct Closure;
pub struct Adjacency;
pub struct NestedSet;

impl Strategy for Path {
    const NAME: &'static str = "path";
    const SIBLING_SCOPE: bool = true;
    const MOVE_REWRITES_SUBTREE: bool = true;
    const STAY_WRITES: bool = false;
    const RESUMABLE_MOVE: bool = true;
    // More than 99: each phase takes two fenced transactions.
    const LONG: usize = 100;
    type Node = Folder;
    type Address = TreePath;
    type Tree<'a> = PathTree<'a, Folder>;

    fn open<'a>(db: &'a Db, part: &str) -> PathTree<'a, Folder> {
        Folder::tree(db, part)
    }
    fn node(part: &str, name: &str, parent: Option<&TreePath>) -> Folder {
        let path = match parent {
            Some(p) => p.child(name),
            None => TreePath::root(name),
        };
        Folder { drive: part.into(), path: path.expect("a valid path") }
    }
    fn address(chain: &[String]) -> TreePath {
        TreePath::new(chain.to_vec()).expect("a valid path")
    }
    fn key(at: &TreePath) -> String {
        at.to_text()
    }
    fn name(node: &Folder) -> String {
        node.path.name().to_owned()
    }
    fn missing_parent(parent: &TreePath) -> TreeProblem {
        TreeProblem::ParentMissing { parent: parent.clone() }
    }
    fn missing_node(at: &TreePath) -> TreeProblem {
        TreeProblem::NodeMissing { path: at.clone() }
    }
    fn cycle(at: &TreePath, parent: &TreePath) -> TreeProblem {
        TreeProblem::IntoOwnSubtree {
            from: at.clone(),
            to: parent.child(at.name()).expect("a valid path"),
        }
    }
    fn rolled_back(report: &OpReport, moved: usize) -> bool {
        // The copies written before the cut.
        report.nodes > 0 && report.nodes < moved
    }
    fn move_op(at: &TreePath, parent: &TreePath) -> OpKind {
        OpKind::Move { from: at.clone(), to: parent.child(at.name()).expect("a valid path") }
    }
    fn delete_op(at: &TreePath) -> OpKind {
        OpKind::Delete { root: at.clone() }
    }
}

impl Strategy for Closure {
    const NAME: &'static str = "closure";
    const SIBLING_SCOPE: bool = false;
    const MOVE_REWRITES_SUBTREE: bool = true;
    const STAY_WRITES: bool = true;
    const RESUMABLE_MOVE: bool = true;
    // Each node has a copy per ancestor: 40 nodes take several fenced transactions.
    const LONG: usize = 40;
    type Node = Dir;
    type Address = String;
    type Tree<'a> = ClosureTree<'a, Dir>;

    fn open<'a>(db: &'a Db, part: &str) -> ClosureTree<'a, Dir> {
        Dir::tree(db, part)
    }
    fn node(part: &str, name: &str, parent: Option<&String>) -> Dir {
        Dir::new(part, name, parent.map(String::as_str))
    }
    fn address(chain: &[String]) -> String {
        chain.last().expect("a node").clone()
    }
    fn key(at: &String) -> String {
        at.clone()
    }
    fn name(node: &Dir) -> String {
        node.id.clone()
    }
    fn missing_parent(parent: &String) -> TreeProblem {
        TreeProblem::NoParent { parent: parent.clone() }
    }
    fn missing_node(at: &String) -> TreeProblem {
        TreeProblem::NoNode { id: at.clone() }
    }
    fn cycle(at: &String, parent: &String) -> TreeProblem {
        TreeProblem::Cycle { node: at.clone(), parent: parent.clone() }
    }
    fn rolled_back(report: &OpReport, moved: usize) -> bool {
        // The subtree whose new copies were removed.
        report.nodes == moved
    }
    fn move_op(at: &String, parent: &String) -> OpKind {
        OpKind::MoveNode { node: at.clone(), parent: Some(parent.clone()) }
    }
    fn delete_op(at: &String) -> OpKind {
        OpKind::DeleteNode { node: at.clone() }
    }
}

impl Strategy for Adjacency {
    const NAME: &'static str = "adjacency";
    const SIBLING_SCOPE: bool = false;
    const MOVE_REWRITES_SUBTREE: bool = false;
    const STAY_WRITES: bool = false;
    const RESUMABLE_MOVE: bool = false;
    // More than 98: a delete takes two transactions.
    const LONG: usize = 100;
    type Node = Cat;
    type Address = String;
    type Tree<'a> = AdjacencyTree<'a, Cat>;

    fn open<'a>(db: &'a Db, part: &str) -> AdjacencyTree<'a, Cat> {
        Cat::tree(db, part)
    }
    fn node(part: &str, name: &str, parent: Option<&String>) -> Cat {
        Cat::new(part, name, parent.map(String::as_str))
    }
    fn address(chain: &[String]) -> String {
        chain.last().expect("a node").clone()
    }
    fn key(at: &String) -> String {
        at.clone()
    }
    fn name(node: &Cat) -> String {
        node.id.clone()
    }
    fn missing_parent(parent: &String) -> TreeProblem {
        TreeProblem::NoParent { parent: parent.clone() }
    }
    fn missing_node(at: &String) -> TreeProblem {
        TreeProblem::NoNode { id: at.clone() }
    }
    fn cycle(at: &String, parent: &String) -> TreeProblem {
        TreeProblem::Cycle { node: at.clone(), parent: parent.clone() }
    }
    fn rolled_back(_: &OpReport, _: usize) -> bool {
        false // no resumable move to roll back
    }
    fn move_op(at: &String, parent: &String) -> OpKind {
        OpKind::MoveNode { node: at.clone(), parent: Some(parent.clone()) }
    }
    fn delete_op(at: &String) -> OpKind {
        OpKind::DeleteNode { node: at.clone() }
    }
}

impl Strategy for NestedSet {
    const NAME: &'static str = "nested_set";
    const SIBLING_SCOPE: bool = false;
    const MOVE_REWRITES_SUBTREE: bool = true;
    const STAY_WRITES: bool = false;
    const RESUMABLE_MOVE: bool = true;
    // More than 99: each phase takes two fenced transactions.
    const LONG: usize = 100;
    type Node = Nest;
    type Address = String;
    type Tree<'a> = NestedTree<'a, Nest>;

    fn open<'a>(db: &'a Db, part: &str) -> NestedTree<'a, Nest> {
        Nest::tree(db, part)
    }
    fn node(part: &str, name: &str, parent: Option<&String>) -> Nest {
        Nest::new(part, name, parent.map(String::as_str))
    }
    fn address(chain: &[String]) -> String {
        chain.last().expect("a node").clone()
    }
    fn key(at: &String) -> String {
        at.clone()
    }
    fn name(node: &Nest) -> String {
        node.id.clone()
    }
    fn missing_parent(parent: &String) -> TreeProblem {
        TreeProblem::NoParent { parent: parent.clone() }
    }
    fn missing_node(at: &String) -> TreeProblem {
        TreeProblem::NoNode { id: at.clone() }
    }
    fn cycle(at: &String, parent: &String) -> TreeProblem {
        TreeProblem::Cycle { node: at.clone(), parent: parent.clone() }
    }
    fn rolled_back(report: &OpReport, moved: usize) -> bool {
        // The nodes numbered back into their old interval.
        report.nodes > 0 && report.nodes <= moved
    }
    fn move_op(at: &String, parent: &String) -> OpKind {
        OpKind::MoveNode { node: at.clone(), parent: Some(parent.clone()) }
    }
    fn delete_op(at: &String) -> OpKind {
        OpKind::DeleteNode { node: at.clone() }
    }
    async fn squeeze(db: &Db, part: &str, whole: bool) {
        crate::tree_nested::squeeze(db, part, whole).await;
    }
}

/// Instantiates every test of the suite for each strategy.
macro_rules! conformance {
    ($($module:ident: $strategy:ty),* $(,)?) => {$(
        mod $module {
            use super::*;

            #[tokio::test]
            async fn random_operations_agree_with_a_model() {
                // On the heap: the whole sequence of operations is one large future, and
                // the test thread's stack is small in a debug build.
                Box::pin(super::random_operations::<$strategy>()).await;
            }

            #[tokio::test]
            async fn interrupted_moves_resume_after_every_request() -> Result<(), Error> {
                super::interrupted_moves_resume_after_every_request::<$strategy>().await
            }

            #[tokio::test]
            async fn interrupted_deletes_resume_after_every_request() -> Result<(), Error> {
                super::interrupted_deletes_resume_after_every_request::<$strategy>().await
            }

            #[tokio::test]
            async fn pending_operations_refuse_conflicting_writes() -> Result<(), Error> {
                super::pending_operations_refuse_conflicting_writes::<$strategy>().await
            }

            #[tokio::test]
            async fn refused_writes_write_nothing() -> Result<(), Error> {
                super::refused_writes_write_nothing::<$strategy>().await
            }

            #[tokio::test]
            async fn bulk_load_agrees_with_a_model() {
                super::bulk_load_agrees_with_a_model::<$strategy>().await;
            }

            #[tokio::test]
            async fn refused_bulk_loads_write_nothing() -> Result<(), Error> {
                super::refused_bulk_loads_write_nothing::<$strategy>().await
            }

            #[tokio::test]
            async fn interrupted_bulk_loads_resume_or_roll_back_after_every_request(
            ) -> Result<(), Error> {
                super::interrupted_bulk_loads::<$strategy>().await
            }

            #[tokio::test]
            async fn seed_001_electronics() -> Result<(), Error> {
                super::seed_001_electronics::<$strategy>().await
            }
        }
    )*};
}

conformance!(path: Path, closure: Closure, adjacency: Adjacency, nested_set: NestedSet);

// ---------------------------------------------------------------------------------------
// The model.

/// A tree in memory: nodes by slot (a deleted node leaves its slot empty), each with its
/// name and parent slot.
#[derive(Debug, Clone, Default)]
struct Model {
    nodes: Vec<Option<(String, Option<usize>)>>,
}

impl Model {
    fn add(&mut self, name: &str, parent: Option<usize>) -> usize {
        self.nodes.push(Some((name.to_owned(), parent)));
        self.nodes.len() - 1
    }

    fn live(&self) -> Vec<usize> {
        (0..self.nodes.len()).filter(|&s| self.nodes[s].is_some()).collect()
    }

    fn entry(&self, s: usize) -> &(String, Option<usize>) {
        self.nodes[s].as_ref().expect("a live node")
    }

    fn name(&self, s: usize) -> &str {
        &self.entry(s).0
    }

    fn parent(&self, s: usize) -> Option<usize> {
        self.entry(s).1
    }

    /// The names from the root down to `s`.
    fn chain(&self, s: usize) -> Vec<String> {
        let mut out = vec![self.name(s).to_owned()];
        let mut cur = self.parent(s);
        while let Some(p) = cur {
            out.push(self.name(p).to_owned());
            cur = self.parent(p);
        }
        out.reverse();
        out
    }

    /// Top-level nodes have depth 1.
    fn depth(&self, s: usize) -> usize {
        self.chain(s).len()
    }

    fn children(&self, p: Option<usize>) -> Vec<usize> {
        self.live().into_iter().filter(|&s| self.parent(s) == p).collect()
    }

    /// The depth of `s` below `anc` (0 for `anc` itself), if it is in `anc`'s subtree.
    fn below(&self, s: usize, anc: usize) -> Option<usize> {
        let mut cur = Some(s);
        let mut d = 0;
        while let Some(c) = cur {
            if c == anc {
                return Some(d);
            }
            cur = self.parent(c);
            d += 1;
        }
        None
    }

    fn subtree(&self, s: usize) -> Vec<usize> {
        self.live().into_iter().filter(|&n| self.below(n, s).is_some()).collect()
    }

    fn child_named(&self, p: Option<usize>, name: &str) -> Option<usize> {
        self.children(p).into_iter().find(|&s| self.name(s) == name)
    }

    fn named(&self, name: &str) -> Option<usize> {
        self.live().into_iter().find(|&s| self.name(s) == name)
    }

    fn remove(&mut self, s: usize) -> usize {
        let gone = self.subtree(s);
        for g in &gone {
            self.nodes[*g] = None;
        }
        gone.len()
    }

    fn reparent(&mut self, s: usize, p: Option<usize>) {
        if let Some(node) = self.nodes[s].as_mut() {
            node.1 = p;
        }
    }
}

/// The address of the model's node `s`.
fn addr<S: Strategy>(m: &Model, s: usize) -> S::Address {
    S::address(&m.chain(s))
}

fn mkey<S: Strategy>(m: &Model, s: usize) -> String {
    S::key(&addr::<S>(m, s))
}

fn mkeys<S: Strategy>(m: &Model, slots: impl IntoIterator<Item = usize>) -> BTreeSet<String> {
    slots.into_iter().map(|s| mkey::<S>(m, s)).collect()
}

/// The address of a node read from the table.
fn address_of<S: Strategy>(node: &S::Node) -> S::Address {
    <S::Tree<'static> as TreeProtocol>::address(node)
}

fn parent_at<S: Strategy>(node: &S::Node) -> Option<S::Address> {
    <S::Tree<'static> as TreeProtocol>::parent_address(node)
}

fn keys<S: Strategy>(nodes: &[S::Node]) -> BTreeSet<String> {
    nodes.iter().map(|n| S::key(&address_of::<S>(n))).collect()
}

fn names<S: Strategy>(nodes: &[S::Node]) -> BTreeSet<String> {
    nodes.iter().map(S::name).collect()
}

/// A failure of the random test: what differed, as text.
type Check<T = ()> = Result<T, String>;

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+));
        }
    };
}

macro_rules! ensure_eq {
    ($left:expr, $right:expr, $($msg:tt)+) => {{
        let (left, right) = (&$left, &$right);
        if left != right {
            return Err(format!("{}: got {:?}, the model has {:?}", format!($($msg)+), left, right));
        }
    }};
}

/// A request that failed, as a check failure.
fn failed(what: impl std::fmt::Display) -> impl FnOnce(Error) -> String {
    move |e| format!("{what}: {e}")
}

/// The tree problem of `err`, if it is one.
fn problem_of(err: &Error) -> Option<&TreeProblem> {
    match err {
        Error::Tree { problem, .. } => Some(problem),
        _ => None,
    }
}

/// A deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick(&mut self, slots: &[usize]) -> Option<usize> {
        (!slots.is_empty()).then(|| slots[self.below(slots.len())])
    }
}

/// Fresh node names that share prefixes and need escaping: `n4`, `n4 b`, `n4/x`, `n5#y`, ...
#[derive(Default)]
struct Names(usize);

impl Names {
    fn fresh(&mut self) -> String {
        self.0 += 1;
        let i = self.0;
        let tail = ["", " b", "/x"][i % 3];
        let hash = if i.is_multiple_of(7) { "#y" } else { "" };
        format!("n{}{tail}{hash}", i / 3)
    }
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// The seed of a random run: `TREE_CONFORMANCE_SEED`, else a new one.
fn seed() -> u64 {
    env_number("TREE_CONFORMANCE_SEED").unwrap_or_else(|| {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        now.map_or(7, |d| d.as_nanos() as u64)
    })
}

// ---------------------------------------------------------------------------------------
// Reads compared with the model.

/// Every read of the live node `s` agrees with the model: the node, its parent, children,
/// ancestors, breadcrumbs, subtree size and a range of relative depths below it.
async fn check_node<S: Strategy>(tree: &S::Tree<'_>, m: &Model, s: usize, rng: &mut Rng) -> Check {
    let at = addr::<S>(m, s);
    let node = tree.get(&at).await.map_err(failed(format!("get {at:?}")))?;
    let Some(node) = node else {
        return Err(format!("get {at:?}: no node"));
    };
    ensure_eq!(S::name(&node), m.name(s), "the name of {at:?}");
    let parent_key = parent_at::<S>(&node).map(|p| S::key(&p));
    ensure_eq!(parent_key, m.parent(s).map(|p| mkey::<S>(m, p)), "the parent address of {at:?}");

    if rng.chance(50) {
        let parent = tree.parent(&at).await.map_err(failed(format!("parent of {at:?}")))?;
        ensure_eq!(
            parent.map(|p| S::key(&address_of::<S>(&p))),
            m.parent(s).map(|p| mkey::<S>(m, p)),
            "the parent of {at:?}"
        );
    }
    let children = tree.children(&at).await.map_err(failed(format!("children of {at:?}")))?;
    ensure_eq!(keys::<S>(&children), mkeys::<S>(m, m.children(Some(s))), "children of {at:?}");
    ensure_eq!(children.len(), m.children(Some(s)).len(), "the number of children of {at:?}");

    let up = tree.ancestors(&at).await.map_err(failed(format!("ancestors of {at:?}")))?;
    let up: Vec<String> = up.iter().map(|n| S::key(&address_of::<S>(n))).collect();
    let mut expected = Vec::new();
    let mut cur = m.parent(s);
    while let Some(p) = cur {
        expected.push(mkey::<S>(m, p));
        cur = m.parent(p);
    }
    expected.reverse();
    ensure_eq!(up, expected, "ancestors of {at:?}");
    if rng.chance(15) {
        let crumbs = tree.breadcrumbs(&at).await.map_err(failed(format!("breadcrumbs {at:?}")))?;
        let crumbs: Vec<String> = crumbs.iter().map(|n| S::key(&address_of::<S>(n))).collect();
        expected.push(mkey::<S>(m, s));
        ensure_eq!(crumbs, expected, "breadcrumbs of {at:?}");
    }

    // The subtree: its size, or a relative depth range, bounded (0..=0 up to 3..=5) or open
    // (`lo..`), read or counted.
    if rng.chance(40) {
        let size = tree.subtree_size(&at).await.map_err(failed(format!("subtree size {at:?}")))?;
        ensure_eq!(size as usize, m.subtree(s).len(), "the subtree size of {at:?}");
        return Ok(());
    }
    let lo = rng.below(4);
    let hi = (!rng.chance(25)).then(|| lo + rng.below(3));
    let read = tree.descendants(&at);
    let read = match hi {
        Some(hi) => read.depth(lo..=hi),
        None => read.depth(lo..),
    };
    let in_range = |d: usize| d >= lo && hi.is_none_or(|hi| d <= hi);
    let expected: Vec<usize> =
        m.subtree(s).into_iter().filter(|&n| m.below(n, s).is_some_and(in_range)).collect();
    if rng.chance(25) {
        let n = read.count().await.map_err(failed(format!("count below {at:?}")))?;
        ensure_eq!(n, expected.len(), "count of depths {lo}..{hi:?} below {at:?}");
    } else {
        let found = read.all().await.map_err(failed(format!("descendants of {at:?}")))?;
        ensure_eq!(
            keys::<S>(&found),
            mkeys::<S>(m, expected.clone()),
            "depths {lo}..{hi:?} below {at:?}"
        );
        ensure_eq!(
            found.len(),
            expected.len(),
            "no node twice at depths {lo}..{hi:?} below {at:?}"
        );
    }
    Ok(())
}

/// The live node `s` is where the model has it, with the children it has there.
async fn check_links<S: Strategy>(tree: &S::Tree<'_>, m: &Model, s: usize) -> Check {
    let at = addr::<S>(m, s);
    let node = tree.get(&at).await.map_err(failed(format!("get {at:?}")))?;
    let Some(node) = node else {
        return Err(format!("get {at:?}: no node"));
    };
    let parent_key = parent_at::<S>(&node).map(|p| S::key(&p));
    ensure_eq!(parent_key, m.parent(s).map(|p| mkey::<S>(m, p)), "the parent address of {at:?}");
    let children = tree.children(&at).await.map_err(failed(format!("children of {at:?}")))?;
    ensure_eq!(keys::<S>(&children), mkeys::<S>(m, m.children(Some(s))), "children of {at:?}");
    ensure_eq!(children.len(), m.children(Some(s)).len(), "the number of children of {at:?}");
    Ok(())
}

/// The address of a node that is gone: no node (and, with `every`, every read finds
/// nothing).
async fn check_gone<S: Strategy>(tree: &S::Tree<'_>, at: &S::Address, every: bool) -> Check {
    let what = |op: &str| format!("{op} of the deleted {at:?}");
    ensure!(tree.get(at).await.map_err(failed(what("get")))?.is_none(), "{}", what("get"));
    if !every {
        return Ok(());
    }
    ensure!(tree.parent(at).await.map_err(failed(what("parent")))?.is_none(), "{}", what("parent"));
    ensure!(
        tree.ancestors(at).await.map_err(failed(what("ancestors")))?.is_empty(),
        "{}",
        what("ancestors")
    );
    ensure!(
        tree.children(at).await.map_err(failed(what("children")))?.is_empty(),
        "{}",
        what("children")
    );
    let below = tree.descendants(at).depth(0..).all().await.map_err(failed(what("subtree")))?;
    ensure!(below.is_empty(), "{}: {below:?}", what("subtree"));
    let size = tree.subtree_size(at).await.map_err(failed(what("subtree size")))?;
    ensure_eq!(size, 0, "{}", what("subtree size"));
    Ok(())
}

/// The nodes at `depth` agree with the model.
async fn check_depth<S: Strategy>(tree: &S::Tree<'_>, m: &Model, depth: usize) -> Check {
    let level = tree.at_depth(depth).await.map_err(failed(format!("at depth {depth}")))?;
    let expected: Vec<usize> = m.live().into_iter().filter(|&s| m.depth(s) == depth).collect();
    ensure_eq!(keys::<S>(&level), mkeys::<S>(m, expected.clone()), "nodes at depth {depth}");
    ensure_eq!(level.len(), expected.len(), "the number of nodes at depth {depth}");
    Ok(())
}

/// The whole tree agrees with the model: every node once, under its parent (the roots and
/// their subtrees, streamed), some depths, the roots' subtree sizes.
async fn check_tree<S: Strategy>(tree: &S::Tree<'_>, m: &Model, rng: &mut Rng) -> Check {
    let roots = tree.roots().await.map_err(failed("roots"))?;
    ensure_eq!(keys::<S>(&roots), mkeys::<S>(m, m.children(None)), "roots");
    let mut all = Vec::new();
    for root in &roots {
        let below: Vec<S::Node> = tree
            .descendants(&address_of::<S>(root))
            .depth(0..)
            .stream()
            .try_collect()
            .await
            .map_err(failed(format!("the subtree of {:?}", address_of::<S>(root))))?;
        all.extend(below);
    }
    let by_key: HashMap<String, usize> =
        m.live().into_iter().map(|s| (mkey::<S>(m, s), s)).collect();
    ensure_eq!(all.len(), by_key.len(), "the number of nodes (each once)");
    for node in &all {
        let key = S::key(&address_of::<S>(node));
        let Some(&s) = by_key.get(&key) else {
            return Err(format!("{key:?} is in the tree, not in the model"));
        };
        let parent = parent_at::<S>(node).map(|p| S::key(&p));
        ensure_eq!(parent, m.parent(s).map(|p| mkey::<S>(m, p)), "the parent of {key:?}");
    }
    // Levels: the first, and one more (the adjacency strategy reads every level above).
    let deepest = m.live().into_iter().map(|s| m.depth(s)).max().unwrap_or(0);
    for depth in [1, 2 + rng.below(deepest)] {
        check_depth::<S>(tree, m, depth).await?;
    }
    // The subtree sizes of the roots (of one, in a large tree: the adjacency strategy counts
    // level by level, and the random steps check the size of every node they act on).
    let roots = m.children(None);
    let sized = if m.live().len() <= 150 { roots } else { rng.pick(&roots).into_iter().collect() };
    for root in sized {
        let size = tree.subtree_size(&addr::<S>(m, root)).await.map_err(failed("subtree size"))?;
        ensure_eq!(size as usize, m.subtree(root).len(), "the subtree size of {:?}", m.name(root));
    }
    // The ancestors of a deepest node, and of another.
    let live = m.live();
    let deep: Vec<usize> = live.iter().copied().filter(|&s| m.depth(s) == deepest).collect();
    for s in rng.pick(&deep).into_iter().chain(rng.pick(&live)) {
        let at = addr::<S>(m, s);
        let up = tree.ancestors(&at).await.map_err(failed(format!("ancestors of {at:?}")))?;
        let up: Vec<String> = up.iter().map(S::name).collect();
        let mut expected = m.chain(s);
        expected.pop();
        ensure_eq!(up, expected, "the ancestors of {at:?}");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Random operations.

async fn random_operations<S: Strategy>() {
    let seed = seed();
    let nodes = env_number("TREE_CONFORMANCE_NODES").unwrap_or(200) as usize;
    let ops = env_number("TREE_CONFORMANCE_OPS").unwrap_or(200) as usize;
    let db = db::<DefaultTable>().await;
    if let Err(e) = run_random::<S>(&db, seed, nodes, ops).await {
        panic!("{} strategy, seed {seed} (replay with TREE_CONFORMANCE_SEED={seed}): {e}", S::NAME);
    }
}

/// Inserts a node the model says is valid.
async fn insert_ok<S: Strategy>(
    tree: &S::Tree<'_>,
    part: &str,
    m: &mut Model,
    name: &str,
    parent: Option<usize>,
) -> Check<usize> {
    let p = parent.map(|p| addr::<S>(m, p));
    let node = S::node(part, name, p.as_ref());
    tree.insert(&node).await.map_err(failed(format!("insert {name:?} under {p:?}")))?;
    Ok(m.add(name, parent))
}

/// What a random step touched: the live node it acted on (read again in full), other live
/// nodes (their links read again), and addresses of deleted nodes.
struct Touched<A> {
    acted: Option<usize>,
    live: Vec<usize>,
    gone: Vec<A>,
}

/// A node whose subtree is small: `s`, or a descendant of it.
fn small_subtree(m: &Model, mut s: usize, rng: &mut Rng) -> usize {
    while m.subtree(s).len() > 12 {
        match rng.pick(&m.children(Some(s))) {
            Some(c) => s = c,
            None => break,
        }
    }
    s
}

/// An address where no node is: a fresh name under a live node (or the top), and never
/// under `avoid`'s subtree.
fn missing<S: Strategy>(
    m: &Model,
    rng: &mut Rng,
    names: &mut Names,
    avoid: Option<usize>,
) -> S::Address {
    let candidates: Vec<usize> =
        m.live().into_iter().filter(|&s| avoid.is_none_or(|a| m.below(s, a).is_none())).collect();
    let mut chain = match rng.pick(&candidates) {
        Some(s) if rng.chance(70) => m.chain(s),
        _ => Vec::new(),
    };
    chain.push(names.fresh());
    S::address(&chain)
}

/// Checks that `result` failed with `problem`, answering `predicate`.
fn refused<T: Debug>(
    result: Result<T, Error>,
    problem: &TreeProblem,
    predicate: fn(&Error) -> bool,
    what: &str,
) -> Check {
    match result {
        Ok(out) => Err(format!("{what}: succeeded ({out:?}), expected {problem:?}")),
        Err(e) => {
            ensure!(predicate(&e), "{what}: {e} does not answer its predicate");
            ensure_eq!(problem_of(&e), Some(problem), "{what}");
            Ok(())
        }
    }
}

async fn run_random<S: Strategy>(db: &Db, seed: u64, nodes: usize, ops: usize) -> Check {
    let part = "random";
    let tree = S::open(db, part);
    let mut rng = Rng(seed);
    let mut m = Model::default();
    let mut names = Names::default();
    for _ in 0..nodes {
        let parent = match rng.pick(&m.live()) {
            Some(p) if !rng.chance(5) => Some(p),
            _ => None,
        };
        let name = names.fresh();
        insert_ok::<S>(&tree, part, &mut m, &name, parent).await?;
    }
    check_tree::<S>(&tree, &m, &mut rng).await.map_err(|e| format!("after the build: {e}"))?;
    random_steps::<S>(db, &tree, part, &mut m, &mut rng, &mut names, ops).await?;
    // What the run sent (shown with `--nocapture`).
    println!("{} strategy, {nodes} nodes, {ops} operations: {}", S::NAME, db.requests());
    Ok(())
}

/// `ops` random operations on `tree` (the model `m`), each checked, then the whole tree.
/// Every 50 steps the next writes are made to take the slow paths (nested sets:
/// renumberings, of the whole tree every other time; `TREE_CONFORMANCE_SQUEEZE=0` turns it
/// off).
async fn random_steps<S: Strategy>(
    db: &Db,
    tree: &S::Tree<'_>,
    part: &str,
    m: &mut Model,
    rng: &mut Rng,
    names: &mut Names,
    ops: usize,
) -> Check {
    let squeezing = env_number("TREE_CONFORMANCE_SQUEEZE") != Some(0);
    for step in 0..ops {
        if step % 50 == 0 && squeezing {
            S::squeeze(db, part, step % 100 == 0).await;
        }
        let touched = random_step::<S>(tree, part, m, rng, names)
            .await
            .map_err(|e| format!("step {step}: {e}"))?;
        // The node the step acted on, every read; the others it touched (parents), their
        // links; the first node it deleted, every read.
        if let Some(s) = touched.acted.filter(|&s| m.nodes[s].is_some()) {
            check_node::<S>(tree, m, s, rng).await.map_err(|e| format!("step {step}: {e}"))?;
        }
        for s in touched.live.into_iter().filter(|&s| m.nodes[s].is_some()) {
            check_links::<S>(tree, m, s).await.map_err(|e| format!("step {step}: {e}"))?;
        }
        for (i, gone) in touched.gone.iter().enumerate() {
            check_gone::<S>(tree, gone, i == 0).await.map_err(|e| format!("step {step}: {e}"))?;
        }
        if step % 20 == 0 {
            let deepest = m.live().into_iter().map(|s| m.depth(s)).max().unwrap_or(0);
            let depth = 1 + rng.below(deepest + 1);
            check_depth::<S>(tree, m, depth).await.map_err(|e| format!("step {step}: {e}"))?;
        }
        if step == ops / 2 {
            check_tree::<S>(tree, m, rng).await.map_err(|e| format!("step {step}: {e}"))?;
        }
    }
    check_tree::<S>(tree, m, rng).await.map_err(|e| format!("at the end: {e}"))?;
    let pending = tree.pending().await.map_err(failed("pending"))?;
    ensure!(pending.is_none(), "an operation is left pending: {pending:?}");
    Ok(())
}

/// One random operation, valid or not, checked against the model (which it updates).
async fn random_step<S: Strategy>(
    tree: &S::Tree<'_>,
    part: &str,
    m: &mut Model,
    rng: &mut Rng,
    names: &mut Names,
) -> Check<Touched<S::Address>> {
    let mut touched = Touched { acted: None, live: Vec::new(), gone: Vec::new() };
    let live = m.live();
    let Some(x) = rng.pick(&live) else {
        let name = names.fresh();
        touched.acted = Some(insert_ok::<S>(tree, part, m, &name, None).await?);
        return Ok(touched);
    };
    let protocol = rng.chance(30);
    let roll = rng.below(100);
    match roll {
        // A valid insert.
        0..25 => {
            let parent = if rng.chance(5) { None } else { Some(x) };
            let name = names.fresh();
            touched.acted = Some(insert_ok::<S>(tree, part, m, &name, parent).await?);
            touched.live.extend(parent);
        }
        // A move under another node, the top level, the parent it has, its own subtree, or
        // a node with a child of its name.
        25..58 => {
            let target = match roll {
                25..33 => m.parent(x),
                33..40 => rng.pick(&m.subtree(x)),
                _ if rng.chance(15) => None,
                _ => rng.pick(&live),
            };
            let x_at = addr::<S>(m, x);
            let p_at = target.map(|p| addr::<S>(m, p));
            let mut mv = tree.move_to(&x_at, p_at.as_ref());
            if protocol {
                mv = mv.transaction_limit(0);
            }
            let result = mv.await;
            let what = format!("move {x_at:?} under {p_at:?}");
            let old_parent = m.parent(x);
            touched.acted = Some(x);
            touched.live.extend(old_parent);
            touched.live.extend(target);
            if let Some(p) = target.filter(|&p| m.below(p, x).is_some()) {
                refused(result, &S::cycle(&x_at, &addr::<S>(m, p)), Error::is_tree_cycle, &what)?;
            } else if target == old_parent {
                let report = result.map_err(failed(&what))?;
                ensure!(S::STAY_WRITES || report.nodes == 0, "{what}: already there, {report:?}");
            } else if S::SIBLING_SCOPE && m.child_named(target, m.name(x)).is_some() {
                match result {
                    Err(e) if e.is_destination_exists() => {}
                    other => return Err(format!("{what}: {other:?}, expected DestinationExists")),
                }
            } else {
                let report = result.map_err(failed(&what))?;
                let size = m.subtree(x).len();
                let rewritten = if S::MOVE_REWRITES_SUBTREE { size } else { 1 };
                ensure_eq!(report.nodes, rewritten, "{what}: nodes");
                if protocol {
                    ensure_eq!(report.resumable, S::RESUMABLE_MOVE, "{what}: resumable");
                }
                m.reparent(x, target);
            }
        }
        // A valid delete of a small subtree.
        58..68 => {
            let x = small_subtree(m, x, rng);
            let x_at = addr::<S>(m, x);
            let subtree = m.subtree(x);
            let mut delete = tree.delete_subtree(&x_at);
            if protocol {
                delete = delete.transaction_limit(0);
            }
            let report = delete.await.map_err(failed(format!("delete {x_at:?}")))?;
            ensure_eq!(report.nodes, subtree.len(), "delete {x_at:?}: nodes");
            touched.gone.extend(subtree.iter().take(3).map(|&s| addr::<S>(m, s)));
            touched.live.extend(m.parent(x));
            m.remove(x);
        }
        // An insert under a missing parent.
        68..73 => {
            let parent = missing::<S>(m, rng, names, None);
            let node = S::node(part, &names.fresh(), Some(&parent));
            let what = format!("insert under the missing {parent:?}");
            refused(
                tree.insert(&node).await,
                &S::missing_parent(&parent),
                Error::is_parent_missing,
                &what,
            )?;
        }
        // An insert of a node that exists: same name, same parent.
        73..78 => {
            let p = m.parent(x).map(|p| addr::<S>(m, p));
            let node = S::node(part, m.name(x), p.as_ref());
            match tree.insert(&node).await {
                Err(e) if e.is_already_exists() => {}
                other => return Err(format!("insert {:?} again: {other:?}", m.chain(x))),
            }
            touched.acted = Some(x);
        }
        // An insert of an existing name under another parent: an id is taken in the whole
        // tree, a name only among siblings.
        78..83 => {
            let parent = if rng.chance(20) { None } else { rng.pick(&live) };
            let name = m.name(x).to_owned();
            let p = parent.map(|p| addr::<S>(m, p));
            let result = tree.insert(&S::node(part, &name, p.as_ref())).await;
            let what = format!("insert {name:?} under {p:?}");
            if !S::SIBLING_SCOPE && parent == Some(x) {
                // Under itself: an id cannot be its own parent.
                let x_at = addr::<S>(m, x);
                refused(result, &S::cycle(&x_at, &x_at), Error::is_tree_cycle, &what)?;
            } else if S::SIBLING_SCOPE && m.child_named(parent, &name).is_none() {
                result.map_err(failed(&what))?;
                touched.acted = Some(m.add(&name, parent));
            } else {
                match result {
                    Err(e) if e.is_already_exists() => {}
                    other => return Err(format!("{what}: {other:?}, expected AlreadyExists")),
                }
            }
            touched.live.push(x);
        }
        // A move of a missing node.
        83..88 => {
            let gone = missing::<S>(m, rng, names, None);
            let what = format!("move the missing {gone:?}");
            let result = tree.move_to(&gone, Some(&addr::<S>(m, x))).await;
            refused(result, &S::missing_node(&gone), Error::is_node_missing, &what)?;
        }
        // A move under a missing parent.
        88..93 => {
            let parent = missing::<S>(m, rng, names, Some(x));
            let x_at = addr::<S>(m, x);
            let what = format!("move {x_at:?} under the missing {parent:?}");
            let mut mv = tree.move_under(&x_at, &parent);
            if protocol {
                mv = mv.transaction_limit(0);
            }
            refused(mv.await, &S::missing_parent(&parent), Error::is_parent_missing, &what)?;
            touched.acted = Some(x);
        }
        // A delete of a missing node.
        _ => {
            let gone = missing::<S>(m, rng, names, None);
            let what = format!("delete the missing {gone:?}");
            let result = tree.delete_subtree(&gone).await;
            refused(result, &S::missing_node(&gone), Error::is_node_missing, &what)?;
        }
    }
    Ok(touched)
}

// ---------------------------------------------------------------------------------------
// Long operations cut after every request.

/// `src`, `dst` and `other` at the top, and under `src` a wide subtree of `S::LONG` nodes:
/// `w`, its children `w-cNN` and their children `w-cNN-gM`.
async fn long_tree<S: Strategy>(db: &Db, part: &str) -> Result<(Model, [usize; 4]), Error> {
    let mut m = Model::default();
    let top = ["src", "dst", "other"].map(|name| m.add(name, None));
    let w = m.add("w", Some(top[0]));
    let mut i = 0;
    while m.live().len() - 3 < S::LONG {
        let c = m.add(&format!("w-c{i:02}"), Some(w));
        for j in 0..9 {
            if m.live().len() - 3 < S::LONG {
                let name = format!("{}-g{j}", m.name(c));
                m.add(&name, Some(c));
            }
        }
        i += 1;
    }
    let nodes: Vec<S::Node> = m
        .live()
        .into_iter()
        .map(|s| S::node(part, m.name(s), m.parent(s).map(|p| addr::<S>(&m, p)).as_ref()))
        .collect();
    S::setup(db, part, &nodes).await?;
    Ok((m, [top[0], top[1], top[2], w]))
}

/// The check of a whole tree, as a test failure.
async fn assert_tree<S: Strategy>(tree: &S::Tree<'_>, m: &Model, what: &str) {
    let mut rng = Rng(1);
    if let Err(e) = check_tree::<S>(tree, m, &mut rng).await {
        panic!("{} strategy, {what}: {e}", S::NAME);
    }
}

/// The names of the nodes below `at` (relative depths `1..`).
async fn names_below<S: Strategy>(
    tree: &S::Tree<'_>,
    at: &S::Address,
) -> Result<BTreeSet<String>, Error> {
    Ok(names::<S>(&tree.descendants(at).all().await?))
}

/// The acceptance test of the resumable move: a move of `S::LONG` nodes through the protocol
/// whose connection dies for good after `k` requests, for every `k` the move sends (until
/// one is enough to finish it); then `resume`. Meanwhile no node is ever missing from below
/// its old and its new place; at the end the tree is exactly the moved tree, or, when the
/// move had not started writing, the tree it found. (An adjacency move is one transaction:
/// it landed or it did not.) The tree is moved back between cuts.
async fn interrupted_moves_resume_after_every_request<S: Strategy>() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let part = "moves";
    let tree = S::open(&db, part);
    let (mut m, [src, dst, _, w]) = long_tree::<S>(&db, part).await?;
    let moving: BTreeSet<String> = m.subtree(w).into_iter().map(|s| m.name(s).to_owned()).collect();
    let (src_at, dst_at) = (addr::<S>(&m, src), addr::<S>(&m, dst));
    let w_at = |m: &Model| addr::<S>(m, w);

    let mut writes = 0;
    for k in 0.. {
        let cut_off = Harness::on(db.clone(), Faults::default().fail_from(k)).await?;
        let faulty = cut_off.db().clone();
        let result =
            S::open(&faulty, part).move_under(&w_at(&m), &dst_at).transaction_limit(0).await;
        if let Ok(report) = result {
            // `k` requests are all the move sends.
            assert_eq!(report.resumable, S::RESUMABLE_MOVE);
            if S::RESUMABLE_MOVE {
                assert!(k > 10, "a {}-node move sends {k} requests", S::LONG);
                assert!(writes > 0, "some cut came after the move wrote");
            }
            m.reparent(w, Some(dst));
            assert_tree::<S>(&tree, &m, "after the move").await;
            break;
        }

        // No node is lost: each is below src or below dst (or both).
        let mut found = names_below::<S>(&tree, &src_at).await?;
        found.extend(names_below::<S>(&tree, &dst_at).await?);
        for name in &moving {
            assert!(found.contains(name), "{} k = {k}: {name} is missing", S::NAME);
        }

        tree.resume(|_| {}).await?;
        assert_eq!(tree.pending().await?, None, "k = {k}");
        if names::<S>(&tree.children(&src_at).await?).contains("w") {
            // The move never started, or was still checking: nothing was written.
            assert_tree::<S>(&tree, &m, &format!("the move cut after {k} requests")).await;
        } else {
            writes += 1;
            m.reparent(w, Some(dst));
            assert_tree::<S>(&tree, &m, &format!("the move cut after {k} requests")).await;
            tree.move_under(&w_at(&m), &src_at).await?;
            m.reparent(w, Some(src));
        }
    }
    Ok(())
}

/// No node of what is left below `root` lacks its parent.
async fn assert_no_orphan<S: Strategy>(
    tree: &S::Tree<'_>,
    root: &S::Address,
    what: &str,
) -> Result<usize, Error> {
    let left = tree.descendants(root).depth(0..).all().await?;
    let present = keys::<S>(&left);
    for node in &left {
        if let Some(parent) = parent_at::<S>(node) {
            let parent = S::key(&parent);
            assert!(
                present.contains(&parent),
                "{what}: {:?} has no parent ({parent})",
                address_of::<S>(node)
            );
        }
    }
    Ok(left.len())
}

/// A delete of `S::LONG` nodes through the protocol, cut after every request (until one is
/// enough to finish it), then resumed: what is left is always a tree, and at the end it is
/// exactly the tree without the subtree, or, when the delete had not started writing, the
/// tree it found (which the next cut reuses).
async fn interrupted_deletes_resume_after_every_request<S: Strategy>() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let mut built = None;
    let mut writes = 0;
    for k in 0.. {
        let part = format!("k{k}");
        let (mut m, [src, .., w], part) = match built.take() {
            Some(built) => built,
            None => {
                let (m, slots) = long_tree::<S>(&db, &part).await?;
                (m, slots, part)
            }
        };
        let tree = S::open(&db, &part);
        let (w_at, src_at) = (addr::<S>(&m, w), addr::<S>(&m, src));

        let cut_off = Harness::on(db.clone(), Faults::default().fail_from(k)).await?;
        let faulty = cut_off.db().clone();
        let result = S::open(&faulty, &part).delete_subtree(&w_at).transaction_limit(0).await;
        if let Ok(report) = result {
            // `k` requests are all the delete sends.
            assert_eq!((report.nodes, report.resumable), (S::LONG, true));
            assert!(k > 3, "a {}-node delete sends {k} requests", S::LONG);
            assert!(writes > 0, "some cut came after the delete wrote");
            m.remove(w);
            assert_tree::<S>(&tree, &m, "after the delete").await;
            break;
        }
        let left = assert_no_orphan::<S>(&tree, &src_at, &format!("k = {k}")).await?;
        assert!(left <= S::LONG + 1);

        tree.resume(|_| {}).await?;
        assert_eq!(tree.pending().await?, None, "k = {k}");
        if tree.get(&w_at).await?.is_some() {
            // The delete never started, or was still checking: nothing was deleted.
            assert_tree::<S>(&tree, &m, &format!("the delete cut after {k} requests")).await;
            let slots = [src, 0, 0, w];
            built = Some((m, slots, part));
        } else {
            writes += 1;
            m.remove(w);
            assert_tree::<S>(&tree, &m, &format!("the delete cut after {k} requests")).await;
        }
    }
    Ok(())
}

/// Which long operation a probe runs.
#[derive(Clone, Copy)]
enum Long {
    Move,
    Delete,
}

/// The requests a clean run of a long operation (through the protocol) had sent when it
/// reported each of its progress events: where to cut it to interrupt it in a given phase.
async fn progress_calls<S: Strategy>(
    db: &Db,
    part: &str,
    op: Long,
) -> Result<Vec<(OpPhase, u64)>, Error> {
    let (m, [_, dst, _, w]) = long_tree::<S>(db, part).await?;
    let counting = Arc::new(Harness::on(db.clone(), Faults::default()).await?);
    let faulty = counting.db().clone();
    let seen: Arc<Mutex<Vec<(OpPhase, u64)>>> = Arc::default();
    let (log, counter) = (Arc::clone(&seen), Arc::clone(&counting));
    let on = move |p: ddb_model::tree::Progress| {
        log.lock().expect("log").push((p.phase, counter.proxy().counts().requests));
    };
    let tree = S::open(&faulty, part);
    let (w_at, dst_at) = (addr::<S>(&m, w), addr::<S>(&m, dst));
    match op {
        Long::Move => tree.move_under(&w_at, &dst_at).transaction_limit(0).on_progress(on).await?,
        Long::Delete => tree.delete_subtree(&w_at).transaction_limit(0).on_progress(on).await?,
    };
    let seen = seen.lock().expect("log").clone();
    Ok(seen)
}

/// A large operation interrupted half way: inserts under its subtree, moves and deletes are
/// refused while it is pending ([`TreeProblem::Busy`]); a move cut in its copy phase rolls
/// back to the tree it found, one cut later can only be finished; a delete can only be
/// finished.
async fn pending_operations_refuse_conflicting_writes<S: Strategy>() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let busy = |result: Result<OpReport, Error>, what: &str| match result {
        Err(e) => {
            assert!(matches!(problem_of(&e), Some(TreeProblem::Busy { .. })), "{what}: {e}");
            assert!(e.is_tree_busy() && !e.is_tree_changed() && !e.is_invalid_input());
        }
        Ok(report) => panic!("{} {what}: {report:?} while an operation is pending", S::NAME),
    };

    if S::RESUMABLE_MOVE {
        let events = progress_calls::<S>(&db, "probe-move", Long::Move).await?;
        let copy_cut = events.iter().find(|(phase, _)| *phase == OpPhase::Copy).expect("copies").1;
        let (later_phase, later_cut) =
            *events.iter().find(|(phase, _)| *phase != OpPhase::Copy).expect("more");

        let part = "busy";
        let tree = S::open(&db, part);
        let (mut m, [src, dst, other, w]) = long_tree::<S>(&db, part).await?;
        let keys_before = snapshot_keys(&db).await;
        let (w_at, dst_at) = (addr::<S>(&m, w), addr::<S>(&m, dst));

        // Cut after the first copies.
        let cut_off = Harness::on(db.clone(), Faults::default().fail_from(copy_cut)).await?;
        let faulty = cut_off.db().clone();
        S::open(&faulty, part).move_under(&w_at, &dst_at).transaction_limit(0).await.unwrap_err();
        let op = tree.pending().await?.expect("an interrupted move");
        assert_eq!(op.kind, S::move_op(&w_at, &dst_at));
        assert_eq!(op.phase, OpPhase::Copy);

        // Inserts under the moving subtree are refused; elsewhere they pass.
        let child = m.children(Some(w))[0];
        for parent in [w, child] {
            let node = S::node(part, "new", Some(&addr::<S>(&m, parent)));
            let err = tree.insert(&node).await.unwrap_err();
            assert!(err.is_tree_busy(), "{}: insert under {:?}: {err}", S::NAME, m.name(parent));
        }
        // So is one at the moving node's new place: its path, or its id, which the intent
        // names.
        let err = tree.insert(&S::node(part, "w", Some(&dst_at))).await.unwrap_err();
        assert!(err.is_tree_busy(), "{}: insert of w under dst: {err}", S::NAME);
        let new = insert_ok::<S>(&tree, part, &mut m, "new", Some(other)).await.expect("insert");
        let new_at = addr::<S>(&m, new);
        // Moves and deletes wait for the operation.
        busy(tree.move_under(&new_at, &addr::<S>(&m, src)).await, "a move");
        busy(tree.delete_subtree(&new_at).await, "a delete");

        // Roll back: the tree is what it was, the new node aside.
        let report = tree.rollback().await?.expect("rolled back");
        assert!(S::rolled_back(&report, S::LONG), "{} rollback: {report:?}", S::NAME);
        assert!(tree.rollback().await?.is_none());
        assert!(tree.resume(|_| {}).await?.is_none());
        assert!(tree.pending().await?.is_none());
        assert_tree::<S>(&tree, &m, "after the rollback").await;
        tree.delete_subtree(&new_at).await?;
        m.remove(new);
        assert_eq!(snapshot_keys(&db).await, keys_before, "no item left over or missing");

        // Cut later, a move can only be finished.
        let cut_off = Harness::on(db.clone(), Faults::default().fail_from(later_cut)).await?;
        let faulty = cut_off.db().clone();
        S::open(&faulty, part).move_under(&w_at, &dst_at).transaction_limit(0).await.unwrap_err();
        let op = tree.pending().await?.expect("an interrupted move");
        assert_eq!(op.phase, later_phase);
        assert_ne!(op.phase, OpPhase::Copy);
        let err = tree.rollback().await.unwrap_err();
        assert!(matches!(problem_of(&err), Some(TreeProblem::CannotRollBack { .. })), "{err}");
        tree.resume(|_| {}).await?.expect("resumed");
        m.reparent(w, Some(dst));
        assert_tree::<S>(&tree, &m, "after the resumed move").await;
    }

    // A delete cut after its first transaction of deletes.
    let events = progress_calls::<S>(&db, "probe-delete", Long::Delete).await?;
    let cut = events.first().expect("progress").1;
    let part = "busy-delete";
    let tree = S::open(&db, part);
    let (mut m, [src, dst, other, w]) = long_tree::<S>(&db, part).await?;
    let cut_off = Harness::on(db.clone(), Faults::default().fail_from(cut)).await?;
    let faulty = cut_off.db().clone();
    S::open(&faulty, part)
        .delete_subtree(&addr::<S>(&m, w))
        .transaction_limit(0)
        .await
        .unwrap_err();
    let op = tree.pending().await?.expect("an interrupted delete");
    assert_eq!(op.kind, S::delete_op(&addr::<S>(&m, w)));
    let left = assert_no_orphan::<S>(&tree, &addr::<S>(&m, src), "cut").await?;
    assert!(left < S::LONG + 1, "{}: some nodes were deleted ({left} left)", S::NAME);
    let other_at = addr::<S>(&m, other);
    busy(tree.move_under(&other_at, &addr::<S>(&m, dst)).await, "a move");
    busy(tree.delete_subtree(&other_at).await, "a delete");
    let err = tree.rollback().await.unwrap_err();
    assert!(matches!(problem_of(&err), Some(TreeProblem::CannotRollBack { .. })), "{err}");
    let report = tree.resume(|_| {}).await?.expect("resumed");
    assert!(report.resumable);
    assert!(tree.pending().await?.is_none());
    m.remove(w);
    assert_tree::<S>(&tree, &m, "after the resumed delete").await;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Refused writes and seed 001.

/// Seed 001's product categories, as (name, parent).
const CATEGORIES: [(&str, Option<&str>); 6] = [
    ("root", None),
    ("electronics", Some("root")),
    ("computers", Some("electronics")),
    ("laptops", Some("computers")),
    ("desktops", Some("computers")),
    ("phones", Some("electronics")),
];

async fn categories<S: Strategy>(
    tree: &S::Tree<'_>,
    part: &str,
) -> Result<(Model, BTreeMap<&'static str, usize>), Error> {
    let mut m = Model::default();
    let mut slots = BTreeMap::new();
    for (name, parent) in CATEGORIES {
        let parent = parent.map(|p| slots[p]);
        let node = S::node(part, name, parent.map(|p| addr::<S>(&m, p)).as_ref());
        tree.insert(&node).await?;
        slots.insert(name, m.add(name, parent));
    }
    Ok((m, slots))
}

async fn refused_writes_write_nothing<S: Strategy>() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let tree = S::open(&db, "shop");
    let (mut m, slot) = categories::<S>(&tree, "shop").await?;
    let a = |name: &str, m: &Model| addr::<S>(m, slot[name]);
    let before = snapshot(&db).await;
    let check = |result: Result<(), String>| {
        if let Err(e) = result {
            panic!("{}: {e}", S::NAME);
        }
    };

    // An insert under a missing parent.
    let nothing = S::address(&["nothing".to_owned()]);
    let err = tree.insert(&S::node("shop", "x", Some(&nothing))).await.unwrap_err();
    assert_eq!(problem_of(&err), Some(&S::missing_parent(&nothing)));
    assert!(err.is_parent_missing() && !err.is_node_missing() && !err.is_tree_busy());
    // An insert of a node that exists.
    let err =
        tree.insert(&S::node("shop", "phones", Some(&a("electronics", &m)))).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    // A node of another tree, refused before any request.
    db.reset_requests();
    let err = tree.insert(&S::node("other", "x", None)).await.unwrap_err();
    assert!(matches!(problem_of(&err), Some(TreeProblem::OtherTree { .. })), "{err}");
    assert!(err.is_invalid_input());
    assert_eq!(db.requests().total(), 0);

    // Moves under the node's own subtree, or itself.
    let (e, l) = (a("electronics", &m), a("laptops", &m));
    check(refused(
        tree.move_under(&e, &l).await,
        &S::cycle(&e, &l),
        Error::is_tree_cycle,
        "under laptops",
    ));
    let err = tree.move_under(&e, &l).await.unwrap_err();
    assert!(err.is_tree_cycle() && !err.is_tree_too_deep() && !err.is_destination_exists());
    check(refused(
        tree.move_under(&e, &e).await,
        &S::cycle(&e, &e),
        Error::is_tree_cycle,
        "under itself",
    ));
    // A move under a missing parent, of a missing node; a delete of a missing node.
    let phones = a("phones", &m);
    let result = tree.move_under(&phones, &nothing).await;
    check(refused(result, &S::missing_parent(&nothing), Error::is_parent_missing, "under nothing"));
    let gone = S::address(&["root".to_owned(), "nothing".to_owned()]);
    let err = tree.move_under(&gone, &a("root", &m)).await.unwrap_err();
    assert_eq!(problem_of(&err), Some(&S::missing_node(&gone)));
    assert!(err.is_node_missing() && !err.is_parent_missing() && !err.is_not_found());
    let result = tree.delete_subtree(&gone).await;
    check(refused(result, &S::missing_node(&gone), Error::is_node_missing, "delete nothing"));
    let result = tree.delete_subtree(&nothing).await;
    let what = "delete a missing top-level node";
    check(refused(result, &S::missing_node(&nothing), Error::is_node_missing, what));
    assert_eq!(snapshot(&db).await, before, "a refused write wrote nothing");

    // To the top level and back; under the parent it has already.
    tree.move_to_top(&a("computers", &m)).await?;
    m.reparent(slot["computers"], None);
    assert_eq!(
        names::<S>(&tree.roots().await?),
        BTreeSet::from(["computers".into(), "root".into()])
    );
    tree.move_under(&a("computers", &m), &a("electronics", &m)).await?;
    m.reparent(slot["computers"], Some(slot["electronics"]));
    assert_eq!(names::<S>(&tree.roots().await?), BTreeSet::from(["root".into()]));
    let report = tree.move_under(&a("computers", &m), &a("electronics", &m)).await?;
    assert!(S::STAY_WRITES || report.nodes == 0, "{report:?}");
    assert_tree::<S>(&tree, &m, "after the moves").await;
    Ok(())
}

/// Seed 001's five access patterns, run from a spawned task (every future of the protocol
/// is `Send`).
async fn seed_001_electronics<S: Strategy>() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let task = tokio::spawn(async move {
        let tree = S::open(&db, "shop");
        let (m, _) = categories::<S>(&tree, "shop").await?;
        electronics::<S>(&tree, m).await
    });
    task.await.expect("the task")
}

async fn electronics<S: Strategy>(tree: &S::Tree<'_>, mut m: Model) -> Result<(), Error> {
    let slot = |name: &str, m: &Model| m.named(name).expect("a category");
    let a = |name: &str, m: &Model| addr::<S>(m, slot(name, m));
    let set = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>();

    // 1. An item and its children.
    let computers = a("computers", &m);
    let (node, children) =
        futures_util::future::try_join(tree.get(&computers), tree.children(&computers)).await?;
    assert_eq!(node.map(|n| S::name(&n)), Some("computers".into()));
    assert_eq!(names::<S>(&children), set(&["desktops", "laptops"]));
    // 2. An item and its ancestors.
    let crumbs = tree.breadcrumbs(&a("laptops", &m)).await?;
    let crumbs: Vec<String> = crumbs.iter().map(S::name).collect();
    assert_eq!(crumbs, ["root", "electronics", "computers", "laptops"]);
    let up: Vec<String> = tree.ancestors(&a("laptops", &m)).await?.iter().map(S::name).collect();
    assert_eq!(up, ["root", "electronics", "computers"]);
    assert_eq!(
        tree.parent(&a("laptops", &m)).await?.map(|n| S::name(&n)),
        Some("computers".into())
    );
    assert!(tree.parent(&a("root", &m)).await?.is_none());
    // 3. The subtree, with depth ranges.
    let electronics = a("electronics", &m);
    assert_eq!(tree.descendants(&electronics).count().await?, 4);
    assert_eq!(
        names::<S>(&tree.descendants(&electronics).all().await?),
        set(&["computers", "phones", "desktops", "laptops"])
    );
    let root = a("root", &m);
    assert_eq!(
        names::<S>(&tree.descendants(&root).depth(1..=2).all().await?),
        set(&["electronics", "computers", "phones"])
    );
    assert_eq!(
        names::<S>(&tree.descendants(&computers).depth(0..=1).all().await?),
        set(&["computers", "desktops", "laptops"])
    );
    assert_eq!(
        names::<S>(&tree.descendants(&root).depth(3..).all().await?),
        set(&["desktops", "laptops"])
    );
    assert!(tree.descendants(&root).depth(..0).all().await?.is_empty());
    assert_eq!(tree.subtree_size(&electronics).await?, 5);
    assert_eq!(tree.subtree_size(&S::address(&["nothing".to_owned()])).await?, 0);

    // 4. Move an item to another parent: a leaf, then a subtree.
    tree.move_under(&a("laptops", &m), &a("phones", &m)).await?;
    m.reparent(slot("laptops", &m), Some(slot("phones", &m)));
    assert_eq!(names::<S>(&tree.children(&a("phones", &m)).await?), set(&["laptops"]));
    // 5. Items at a depth.
    assert_eq!(names::<S>(&tree.at_depth(4).await?), set(&["desktops", "laptops"]));

    tree.move_under(&a("laptops", &m), &a("computers", &m)).await?;
    m.reparent(slot("laptops", &m), Some(slot("computers", &m)));
    tree.move_under(&a("computers", &m), &a("phones", &m)).await?;
    m.reparent(slot("computers", &m), Some(slot("phones", &m)));
    assert_eq!(names::<S>(&tree.children(&a("phones", &m)).await?), set(&["computers"]));
    let up: Vec<String> = tree.ancestors(&a("laptops", &m)).await?.iter().map(S::name).collect();
    assert_eq!(up, ["root", "electronics", "phones", "computers"]);
    assert_eq!(names::<S>(&tree.at_depth(5).await?), set(&["desktops", "laptops"]));
    assert_eq!(names::<S>(&tree.at_depth(1).await?), set(&["root"]));
    assert_eq!(names::<S>(&tree.roots().await?), set(&["root"]));
    assert_tree::<S>(tree, &m, "after the moves").await;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Bulk loads.

/// The nodes of the model's slots `slots`, as the strategy's nodes.
fn nodes_of<S: Strategy>(
    m: &Model,
    part: &str,
    slots: impl IntoIterator<Item = usize>,
) -> Vec<S::Node> {
    slots
        .into_iter()
        .map(|s| S::node(part, m.name(s), m.parent(s).map(|p| addr::<S>(m, p)).as_ref()))
        .collect()
}

/// Shuffles `items` (Fisher-Yates).
fn shuffle<T>(items: &mut [T], rng: &mut Rng) {
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i + 1));
    }
}

async fn bulk_load_agrees_with_a_model<S: Strategy>() {
    let seed = seed();
    let nodes = env_number("TREE_CONFORMANCE_NODES").unwrap_or(200) as usize;
    let ops = env_number("TREE_CONFORMANCE_OPS").unwrap_or(100) as usize;
    let db = db::<DefaultTable>().await;
    if let Err(e) = run_bulk::<S>(&db, seed, nodes, ops).await {
        panic!("{} strategy, seed {seed} (replay with TREE_CONFORMANCE_SEED={seed}): {e}", S::NAME);
    }
}

/// A random tree loaded in two bulk loads, each in a random order: half of it into the
/// empty tree, then the rest (under loaded nodes, at the top, and under each other) into
/// the loaded tree; every read compared with the model; then random operations on it, as
/// on a tree built by inserts.
async fn run_bulk<S: Strategy>(db: &Db, seed: u64, nodes: usize, ops: usize) -> Check {
    let part = "bulk";
    let tree = S::open(db, part);
    let mut rng = Rng(seed);
    let mut m = Model::default();
    let mut names = Names::default();
    for size in [nodes / 2, nodes - nodes / 2] {
        let first = m.nodes.len();
        for _ in 0..size {
            let parent = match rng.pick(&m.live()) {
                Some(p) if !rng.chance(5) => Some(p),
                _ => None,
            };
            m.add(&names.fresh(), parent);
        }
        let mut load = nodes_of::<S>(&m, part, first..m.nodes.len());
        shuffle(&mut load, &mut rng);
        let report = tree.bulk_load(load).await.map_err(failed(format!("a load of {size}")))?;
        ensure_eq!(report, OpReport { nodes: size, resumable: true }, "the load's report");
        ensure!(tree.pending().await.map_err(failed("pending"))?.is_none(), "a load left pending");
        check_tree::<S>(&tree, &m, &mut rng).await.map_err(|e| format!("after a load: {e}"))?;
    }
    let live = m.live();
    for _ in 0..20 {
        if let Some(s) = rng.pick(&live) {
            check_node::<S>(&tree, &m, s, &mut rng).await?;
        }
    }
    random_steps::<S>(db, &tree, part, &mut m, &mut rng, &mut names, ops).await
}

/// Loads with a bad input: each refused with its typed error, and nothing written.
async fn refused_bulk_loads_write_nothing<S: Strategy>() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let part = "refused";
    let tree = S::open(&db, part);
    tree.insert(&S::node(part, "a", None)).await?;
    let a = S::address(&["a".to_owned()]);
    let ghost = S::address(&["ghost".to_owned()]);
    let n = |name: &str, parent: Option<&S::Address>| S::node(part, name, parent);
    let before = snapshot(&db).await;

    let twice = tree.bulk_load([n("b", Some(&a)), n("c", Some(&a)), n("b", Some(&a))]).await;
    let err = twice.expect_err("a node twice");
    assert!(err.is_already_exists(), "{err}");
    assert!(matches!(problem_of(&err), Some(TreeProblem::Duplicate { .. })), "{err}");

    let existing = tree.bulk_load([n("b", Some(&a)), n("a", None)]).await;
    let err = existing.expect_err("an existing node");
    assert!(err.is_already_exists(), "{err}");
    assert_eq!(problem_of(&err), Some(&TreeProblem::Duplicate { node: S::key(&a) }));

    let orphan = tree.bulk_load([n("b", Some(&a)), n("d", Some(&ghost))]).await;
    let err = orphan.expect_err("a missing parent");
    assert!(err.is_parent_missing(), "{err}");
    assert_eq!(problem_of(&err), Some(&S::missing_parent(&ghost)));

    let other = tree.bulk_load([S::node("elsewhere", "x", None)]).await;
    assert!(matches!(
        problem_of(&other.expect_err("another tree")),
        Some(TreeProblem::OtherTree { .. })
    ));

    if !S::SIBLING_SCOPE {
        // A chain deeper than the id strategies' `max_depth` (96; a path deeper than the
        // path strategy's 128 cannot be made).
        let mut chain: Vec<String> = Vec::new();
        let mut deep = Vec::new();
        for i in 0..97 {
            let parent = (!chain.is_empty()).then(|| S::address(&chain));
            let name = format!("d{i}");
            deep.push(n(&name, parent.as_ref()));
            chain.push(name);
        }
        deep.reverse();
        let err = tree.bulk_load(deep).await.expect_err("too deep");
        assert!(err.is_tree_too_deep(), "{err}");

        // Ids: x under y and y under x (a path's parent is a prefix of it: no cycle).
        let (x, y) = (S::address(&["x".to_owned()]), S::address(&["y".to_owned()]));
        let err = tree.bulk_load([n("x", Some(&y)), n("y", Some(&x))]).await.expect_err("cycle");
        assert!(err.is_tree_cycle(), "{err}");
        let err = tree.bulk_load([n("s", Some(&S::address(&["s".to_owned()])))]).await;
        assert!(err.expect_err("its own parent").is_tree_cycle());
    }
    assert_eq!(snapshot(&db).await, before, "{}: nothing written", S::NAME);
    assert_eq!(tree.pending().await?, None);

    // An empty load writes nothing, not even an intent.
    let empty: Vec<S::Node> = Vec::new();
    assert_eq!(tree.bulk_load(empty).await?, OpReport { nodes: 0, resumable: false });
    assert_eq!(snapshot(&db).await, before);
    Ok(())
}

/// The model of the interrupted loads: `base` (existing), and a 60-node load: 40 nodes
/// under `base` (4 children of 9 children each) and a 20-node tree at the top.
fn load_model() -> (Model, usize, std::ops::Range<usize>) {
    let mut m = Model::default();
    let base = m.add("base", None);
    let first = m.nodes.len();
    for c in 0..4 {
        let child = m.add(&format!("c{c}"), Some(base));
        for g in 0..9 {
            m.add(&format!("c{c}-g{g}"), Some(child));
        }
    }
    let top = m.add("t", None);
    for g in 0..19 {
        m.add(&format!("t-g{g}"), Some(top));
    }
    let loaded = first..m.nodes.len();
    (m, base, loaded)
}

/// A load cut after each of its requests (until one is enough to finish it): while it is
/// pending every other write is refused; then, in one copy of the tree, `resume` finishes
/// it (the whole load is there) and in another `rollback` undoes it (the tree it found is
/// there); both trees take writes again.
async fn interrupted_bulk_loads<S: Strategy>() -> Result<(), Error> {
    let db = db::<DefaultTable>().await;
    let (full, base, loaded) = load_model();
    let mut empty = full.clone();
    for s in loaded.clone() {
        empty.nodes[s] = None;
    }
    let mut pending_cuts = 0;
    'cuts: for k in 0.. {
        for undo in [false, true] {
            let part = format!("k{k}{}", if undo { "u" } else { "r" });
            let tree = S::open(&db, &part);
            tree.insert(&S::node(&part, "base", None)).await?;
            let mut load = nodes_of::<S>(&full, &part, loaded.clone());
            load.reverse(); // children before their parents
            let cut_off = Harness::on(db.clone(), Faults::default().fail_from(k)).await?;
            let faulty = cut_off.db().clone();
            if let Ok(report) = S::open(&faulty, &part).bulk_load(load).await {
                assert_eq!(report.nodes, loaded.len());
                assert!(
                    k > 5 && pending_cuts > 3,
                    "{}: {k} requests, {pending_cuts} cuts",
                    S::NAME
                );
                assert_tree::<S>(&tree, &full, "after the load").await;
                break 'cuts;
            }
            let pending = tree.pending().await?;
            if let Some(op) = &pending {
                assert_eq!(op.kind, OpKind::Load { nodes: loaded.len() });
                pending_cuts += 1;
                let late = tree.insert(&S::node(&part, "late", None)).await;
                assert!(late.expect_err("an insert during a load").is_tree_busy());
                let base_at = addr::<S>(&full, base);
                let late = tree.insert(&S::node(&part, "late", Some(&base_at))).await;
                assert!(late.expect_err("an insert during a load").is_tree_busy());
                let again = tree.bulk_load([S::node(&part, "late", None)]).await;
                assert!(again.expect_err("a load during a load").is_tree_busy());
                let delete = tree.delete_subtree(&base_at).await.expect_err("a delete");
                assert!(delete.is_tree_busy(), "{}: a delete during a load: {delete}", S::NAME);
            }
            let copying = pending.as_ref().is_some_and(|op| op.phase == OpPhase::Copy);
            let report = if undo { tree.rollback().await? } else { tree.resume(|_| {}).await? };
            assert_eq!(report.is_some(), pending.is_some(), "k = {k}");
            if let Some(report) = report {
                assert_eq!(report.nodes, if copying { loaded.len() } else { 0 }, "k = {k}");
            }
            assert_eq!(tree.pending().await?, None, "k = {k}");
            let expected = if copying && !undo { &full } else { &empty };
            let what =
                format!("{} after a cut at {k}", if undo { "rolled back" } else { "resumed" });
            assert_tree::<S>(&tree, expected, &what).await;
            // No leftover of the load: its journal is gone, and the tree takes writes.
            let mut m = expected.clone();
            let late = m.add("late", Some(base));
            tree.insert(&S::node(&part, "late", Some(&addr::<S>(&m, base)))).await?;
            assert_tree::<S>(&tree, &m, &what).await;
            m.nodes[late] = None;
        }
    }
    Ok(())
}
