//! The adjacency strategy (an adjacency list): each node names its parent, and an
//! index on the parent finds the children.
//!
//! A node with id `n` under `p` is its entity item only; it also writes the tree's index key
//! `(partition, "<prefix><p>#<n>")` (`~` instead of `<p>` for a top-level node), so the
//! children of a node are one index query. The node item keeps two counters: a revision
//! (`_tree_rev`, bumped by every insert under it and by its moves) and the number of its
//! children (`_tree_kids`). Deletes condition on the revision, and compare the children an
//! index query found with the counter, which is strongly consistent: an index that lags
//! behind a recent insert is read again instead of orphaning the new child. The revision
//! restarts when a node is deleted and inserted again, so the writes that count a node in
//! its parent's counter (a move, a delete) also condition on the parent they read, and a
//! delete on the number of children: a node inserted again meanwhile is not taken for the
//! one read.
//!
//! A node does not store its depth (a move would have to rewrite its whole subtree to keep
//! it exact, and would no longer be one transaction). `max_depth` is kept by reading instead,
//! and the reads are made to hold by conditions on what was read:
//!
//! - an insert walks up from the parent (one strongly consistent `GetItem` per ancestor) and
//!   its transaction checks that none of them moved (their index keys name their parents);
//!   a move that deepens the branch meanwhile cancels the insert, which walks again;
//! - a move walks up from the destination the same way; a node with children also walks up
//!   its old branch: a move that does not make it deeper keeps every node of its subtree
//!   within the limit, and the transaction checks that the old branch did not move. A move
//!   that makes it deeper reads its subtree level by level down to the depth the limit
//!   leaves (a node below it is [`TreeProblem::TooDeep`]), and its transaction checks the
//!   revision of every node read, so an insert or a move under one of them meanwhile
//!   cancels the move. (Only the deepest 90 or so fit a transaction: under a larger subtree
//!   the check covers its deepest levels, and two chained inserts landing between the
//!   move's read and its transaction are not seen.)

mod delete;
mod write;

use std::sync::{Mutex, PoisonError};

use futures_util::stream::{self, BoxStream, StreamExt, TryStreamExt};

use super::conflict::{action_error, moving};
use super::node::changed;
use super::node::counter;
use super::node::within_depth;
use super::node::{IdHierarchy, arg_text, display, esc, id_of, index, node_sk, parent_of};
use super::op::{OpKind, OpPhase, OpReport, ProgressFn, TreeOp, reported};
use super::raw::{guard, is_node, number, rev_of};
use super::{TREE_REV_ATTR, TreeProblem, problem};
use crate::tree::bulk::check_depth;
use aws_sdk_dynamodb::types::AttributeValue;
use std::future::Future;
use write::same_parent;

use crate::error::Error;
use crate::expr::ExprBuilder;
use crate::item::{Item, item_size};
use crate::key::{Escaped, KeyArg, KeyTemplate, lit, part};
use crate::model::Stamp;
use crate::model::{IndexDef, from_item, string_attr, to_item};
use crate::ops::action::Action;
use crate::ops::retry::{self, CONFLICTS, INDEX_LAG, MOVE_CONFLICTS, Try};
use crate::ops::{BoxFuture, EntityQuery, KeyStart, OnIndex, QueryFrom};
use crate::tree::builders::{Delete, Descendants, Move};
use crate::tree::bulk::{Forest, LoadPlan};
use crate::tree::handle::{Adjacency, Tree};
use crate::tree::handle::{Strategy, foreign};

/// The attribute where an adjacency node counts its children.
pub const TREE_KIDS_ATTR: &str = "_tree_kids";

/// How many children queries run at once when a subtree is read level by level.
const LEVEL_CONCURRENCY: usize = 8;

/// The most nodes a delete removes per transaction (one action per node, the parent's
/// counter and the intent check).
const DELETE_CHUNK: usize = 98;

/// The marker of the top level in index keys (no escaped id is `~`).
const TOP: &str = "~";

/// The index sort key of a node under `parent` (escaped ids).
fn index_sk<E: IdHierarchy>(parent: Option<&str>, id: &str) -> String {
    index_template::<E>().render(&[Escaped(parent.unwrap_or(TOP)), Escaped(id)])
}

/// The template of a node's index sort key: the node type's prefix, the parent (or the top
/// marker) and the node, escaped already.
fn index_template<E: IdHierarchy>() -> KeyTemplate {
    KeyTemplate::new(
        "<prefix><parent>#<id>",
        const { &[lit(E::TREE.sk_prefix), part(0), lit("#"), part(1)] },
    )
}

/// Writes the parent-index key of an adjacency node (called by the generated
/// `Entity::index_keys`).
#[doc(hidden)]
pub fn adjacency_index_keys<E: IdHierarchy>(
    node: &E,
    sink: &mut dyn FnMut(&'static IndexDef, String, Option<String>),
) {
    if let Some(index) = index::<E>() {
        let sk = index_sk::<E>(parent_of(node).as_deref(), &id_of(node));
        sink(index, node.key().pk().to_owned(), Some(sk));
    }
}

/// A node item read strongly consistently, with its counters.
struct Raw<E> {
    node: E,
    rev: u64,
    kids: u64,
    /// The stored index sort key (names the parent).
    index_sk: Option<String>,
}

impl<E: IdHierarchy> Raw<E> {
    fn read(item: Item) -> Result<Raw<E>, Error> {
        let rev = rev_of(&item);
        let kids = number(&item, TREE_KIDS_ATTR).unwrap_or(0);
        let index_sk = index::<E>()
            .and_then(|i| i.sk)
            .and_then(|attr| string_attr(&item, attr))
            .map(str::to_owned);
        let mut item = item;
        item.remove(TREE_KIDS_ATTR);
        Ok(Raw { node: from_item(item)?, rev, kids, index_sk })
    }
}

/// The tree of one partition of an adjacency node type; made by the generated
/// `Node::tree(&db, ..partition key fields)`. Nodes are addressed by id.
///
/// | operation | requests |
/// | --- | --- |
/// | [`get`](AdjacencyTree::get) | 1 `GetItem` |
/// | [`children`](AdjacencyTree::children), [`roots`](AdjacencyTree::roots) | 1 `Query` on the index, reading only the children |
/// | [`descendants`](AdjacencyTree::descendants) (`1..=k`), [`at_depth`](AdjacencyTree::at_depth) (`k`) | level by level, 8 at a time: one children `Query` per node above level `k` that has children (its counter says so) |
/// | [`ancestors`](AdjacencyTree::ancestors), [`breadcrumbs`](AdjacencyTree::breadcrumbs) | one `GetItem` per level (walking the parents) |
/// | [`insert`](AdjacencyTree::insert) at depth `d` | `d - 1` `GetItem` (the parent's branch, to check `max_depth`), then 1 `TransactWriteItems` |
/// | [`move_subtree`](AdjacencyTree::move_subtree), [`move_to_top`](AdjacencyTree::move_to_top) | a `GetItem` per ancestor of the destination, then 1 `TransactWriteItems`, whatever the size of the subtree; a node with children also reads its old branch (a `GetItem` per ancestor) and, when the move makes it deeper, its subtree level by level (to check `max_depth`) |
/// | [`delete_subtree`](AdjacencyTree::delete_subtree) | the subtree level by level, a `BatchGetItem`, then 1 `TransactWriteItems` per 98 nodes |
/// | [`bulk_load`](AdjacencyTree::bulk_load) of N nodes | a `GetItem` per level above each existing parent, ⌈N / 100⌉ `BatchGetItem`, ⌈N / 25⌉ `BatchWriteItem` (each node with its children counter) and 4 requests of its intent and journal |
///
/// Index reads are eventually consistent: a node inserted a moment ago may be missing from
/// `children` for a moment. Writes never rely on them alone (see the module docs). The same
/// operations, on every strategy: [`TreeProtocol`](super::TreeProtocol).
///
/// Example: on [`Tree`].
pub type AdjacencyTree<'a, E> = Tree<'a, E, Adjacency>;

impl<'a, E: IdHierarchy> AdjacencyTree<'a, E> {
    pub(super) fn children_of(&self, parent: Option<&str>) -> EntityQuery<'a, E, OnIndex> {
        let name = E::TREE.index.unwrap_or("");
        let prefix = index_template::<E>().prefix(&[Escaped(parent.unwrap_or(TOP))], 1);
        let start = KeyStart::on_index(index::<E>(), name, self.pk.clone(), &prefix);
        QueryFrom::<E, OnIndex>::new(self.db, start).prefix()
    }

    /// The children of the node `id`, in id order: one query on the tree's index that reads
    /// the children and nothing else.
    pub fn children(&self, id: impl KeyArg<E::Id>) -> EntityQuery<'a, E, OnIndex> {
        self.children_of(Some(&arg_text::<E>(&id)))
    }

    /// The top-level nodes: one query.
    pub fn roots(&self) -> EntityQuery<'a, E, OnIndex> {
        self.children_of(None)
    }

    /// The nodes at absolute depth `depth` (top-level nodes have depth 1): the levels above
    /// are read level by level (one children query per node, 8 at a time).
    pub async fn at_depth(&self, depth: usize) -> Result<Vec<E>, Error> {
        if depth == 0 {
            return Ok(Vec::new());
        }
        // The levels below the top, read as those below a node are.
        Descendants::new(self, TOP.to_owned())
            .depth(depth..=depth)
            .read_stream()
            .try_collect()
            .await
    }

    /// The children of every node of `ids` (escaped), in the order of `ids`, each with its
    /// own number of children as the index has it (0: no need to ask for its children).
    async fn next_level_counted(
        &self,
        ids: &[String],
        concurrency: usize,
    ) -> Result<Vec<(E, u64)>, Error> {
        let queries: Vec<_> = ids.iter().map(|id| self.children_of(Some(id)).items()).collect();
        let levels: Vec<Vec<Item>> = stream::iter(queries)
            .map(query_items)
            .buffered(concurrency.max(1))
            .try_collect()
            .await?;
        let type_attr = crate::model::type_attr::<E::Table>();
        let mut out = Vec::new();
        for item in levels.into_iter().flatten() {
            // The index partition may hold other entity types' keys.
            if string_attr(&item, type_attr) != Some(E::NAME) {
                continue;
            }
            let raw = Raw::<E>::read(item)?;
            out.push((raw.node, raw.kids));
        }
        Ok(out)
    }

    /// The node `id` (escaped), strongly consistent, with its counters.
    async fn raw(&self, id: &str) -> Result<Option<Raw<E>>, Error> {
        self.get_raw(&node_sk::<E>(id)).await?.map(Raw::read).transpose()
    }
}

fn query_items<T: crate::Table>(
    q: crate::Query<'_, T, crate::ops::AsItem, OnIndex>,
) -> BoxFuture<'_, Result<Vec<Item>, Error>> {
    Box::pin(q.all())
}

impl<'a, E: IdHierarchy> Descendants<'a, E, Adjacency> {
    /// How many children queries of the adjacency strategy's read run at once (default 8).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.options = Some(n.max(1));
        self
    }

    /// The nodes, level by level, as a stream (each level is read when the stream reaches
    /// it).
    pub(super) fn read_stream(self) -> BoxStream<'a, Result<E, Error>> {
        let Descendants { tree, from: id, depths, options, .. } = self;
        let Some((min, max)) = depths else {
            return stream::empty().boxed();
        };
        let max = max.unwrap_or(usize::MAX);
        let concurrency = options.unwrap_or(LEVEL_CONCURRENCY);
        struct State<'a, E: IdHierarchy> {
            tree: AdjacencyTree<'a, E>,
            /// The ids of the level read last.
            ids: Vec<String>,
            depth: usize,
            /// The node itself is still to be returned (depth 0 in the range).
            itself: bool,
        }
        let state = State { tree, ids: vec![id], depth: 0, itself: min == 0 };
        stream::try_unfold(state, move |mut st| async move {
            if st.itself {
                st.itself = false;
                let Some(id) = st.ids.first() else {
                    return Ok(None);
                };
                return match st.tree.db.get(st.tree.key_of(id)).await? {
                    Some(node) => Ok(Some((vec![node], st))),
                    None => Ok(None),
                };
            }
            loop {
                if st.depth >= max || st.ids.is_empty() {
                    return Ok::<Option<(Vec<E>, State<'a, E>)>, Error>(None);
                }
                let level = st.tree.next_level_counted(&st.ids, concurrency).await?;
                st.depth += 1;
                // Only the nodes with children are asked for theirs.
                st.ids =
                    level.iter().filter(|(_, kids)| *kids > 0).map(|(n, _)| id_of(n)).collect();
                if st.depth >= min && !level.is_empty() {
                    return Ok(Some((level.into_iter().map(|(n, _)| n).collect(), st)));
                }
            }
        })
        .map_ok(|level| stream::iter(level.into_iter().map(Ok)))
        .try_flatten()
        .boxed()
    }
}

/// The adjacency strategy's steps.
impl<E: IdHierarchy> Strategy<E> for Adjacency {
    type From = String;
    type ReadOptions = Option<usize>;
    const MOVE_LIMIT: usize = usize::MAX;
    const DELETE_LIMIT: usize = 99;

    async fn insert(
        tree: &Tree<'_, E, Self>,
        n: &E,
        _next: Option<u64>,
        stamp: Stamp,
    ) -> Result<(), Error> {
        let (id, parent) = tree.new_node(n)?;
        let sk_attr = index::<E>().and_then(|i| i.sk);
        let (id, parent, node) = (id.as_str(), parent.as_deref(), n);
        retry::on_conflict(CONFLICTS, move |_| async move {
            let table = tree.db.table_name();
            let walk = match parent {
                Some(p) => match tree.walk_up(p, id, None).await? {
                    Try::Done(walk) => walk,
                    Try::Again(err) => return Ok(Try::Again(err)),
                },
                None => Vec::new(),
            };
            let mut tx = tree.db.transaction().create_with(node, |put| put.at(stamp));
            for (i, a) in walk.iter().enumerate() {
                let a_id = id_of(&a.node);
                if a_id == id {
                    // The node exists already (above its parent): the create fails.
                    continue;
                }
                let stored = sk_attr.map(|attr| (attr, a.index_sk.as_deref()));
                let w = match (i, stored) {
                    // The parent counts its new child; its revision stops a delete that read it
                    // before.
                    (0, stored) => counter::<E>(table, &tree.pk, &a_id, 1, 1, stored)?,
                    (_, Some(stored)) => same_parent::<E>(table, &tree.pk, &a_id, stored)?,
                    (_, None) => continue,
                };
                tx = tree.push(tx, w);
            }
            // No bulk load in progress (it writes whatever it loads unconditionally), and no
            // large delete of an ancestor.
            let mut lineage: Vec<String> = walk.iter().map(|a| id_of(&a.node)).collect();
            lineage.push(id.to_owned());
            let Some(f) = tree.send_checked(tx, Some(&lineage)).await? else {
                return Ok(Try::Done(()));
            };
            match (f.first(), parent) {
                _ if f.refused => Ok(Try::Again(changed::<E>(id))),
                (Some(0), _) => Err(action_error(f.err, 0)),
                // The parent is gone or moved: read again (and report it gone if it is).
                (Some(1), Some(p)) => {
                    Ok(Try::Again(problem::<E>(TreeProblem::NoParent { parent: display(p) })))
                }
                (Some(_), _) => Ok(Try::Again(changed::<E>(id))),
                (None, _) if f.only_conflict() => Ok(Try::Again(changed::<E>(id))),
                (None, _) => Err(f.err),
            }
        })
        .await
    }

    async fn parent(tree: &Tree<'_, E, Self>, at: String) -> Result<Option<E>, Error> {
        tree.parent_by_field(&at).await
    }

    fn children(
        tree: &Tree<'_, E, Self>,
        at: String,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
        tree.children_of(Some(&at)).all()
    }

    fn roots(tree: &Tree<'_, E, Self>) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
        tree.roots().all()
    }

    fn at_depth(
        tree: &Tree<'_, E, Self>,
        depth: usize,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
        tree.at_depth(depth)
    }

    async fn ancestors(tree: &Tree<'_, E, Self>, at: String) -> Result<Vec<E>, Error> {
        let mut crumbs = Self::breadcrumbs(tree, at).await?;
        crumbs.pop();
        Ok(crumbs)
    }

    async fn breadcrumbs(tree: &Tree<'_, E, Self>, at: String) -> Result<Vec<E>, Error> {
        let mut out = Vec::new();
        let mut next = Some(at);
        while let Some(id) = next {
            if out.len() > E::TREE.max_depth {
                within_depth::<E>(&id, out.len() + 1)?;
            }
            let Some(node) = tree.db.get(tree.key_of(&id)).await? else {
                break;
            };
            next = parent_of(&node);
            out.push(node);
        }
        out.reverse();
        Ok(out)
    }

    async fn subtree_size(tree: &Tree<'_, E, Self>, at: String) -> Result<u64, Error> {
        if tree.db.get(tree.key_of(&at)).await?.is_none() {
            return Ok(0);
        }
        Ok(Descendants::new(tree, at).count().await? as u64 + 1)
    }

    fn owns(kind: &OpKind) -> bool {
        matches!(kind, OpKind::DeleteNode { .. })
    }

    async fn resume(
        tree: &Tree<'_, E, Self>,
        op: TreeOp,
        _item: &Item,
        progress: &mut ProgressFn<'_>,
    ) -> Result<usize, Error> {
        let OpKind::DeleteNode { node } = &op.kind else {
            return Err(foreign::<E, Self>(&op));
        };
        tree.delete_all(&esc(node), None, Some(&op), progress).await
    }

    async fn rollback(
        _tree: &Tree<'_, E, Self>,
        op: TreeOp,
        _item: &Item,
    ) -> Result<Option<OpReport>, Error> {
        // An adjacency tree's only resumable operation is a large delete: it cannot be undone.
        Err(problem::<E>(TreeProblem::CannotRollBack { op }))
    }

    /// One transaction whatever the subtree's size: no limit.
    fn send_move<'a, 'p: 'a>(mv: Move<'a, 'p, E, Self>) -> BoxFuture<'a, Result<OpReport, Error>> {
        let Move { tree, from: id, to: parent, mut progress, .. } = mv;
        Box::pin(async move {
            let report = tree.move_node(&id, parent.as_deref()).await?;
            Ok(reported(report, &[OpPhase::Switch], &mut progress))
        })
    }

    fn send_delete<'a, 'p: 'a>(
        delete: Delete<'a, 'p, E, Self>,
    ) -> BoxFuture<'a, Result<OpReport, Error>> {
        Box::pin(delete::send_delete(delete))
    }

    fn stream(read: Descendants<'_, E, Self>) -> BoxStream<'_, Result<E, Error>> {
        read.read_stream()
    }

    /// The adjacency strategy's side of a bulk load: each node's item (with its parent-index
    /// key) and its children counter, as inserts leave them; each existing parent counts its new
    /// children.
    async fn load_plan(
        tree: &Tree<'_, E, Self>,
        forest: &mut Forest<E>,
        _token: &str,
    ) -> Result<LoadPlan, Error> {
        let anchors: Vec<String> = forest.anchors().into_iter().flatten().collect();
        // Each existing parent and its ancestors: its depth, and its index key, which its
        // counter's update checks.
        let mut walks = Vec::with_capacity(anchors.len());
        for a in &anchors {
            let first = (0..forest.nodes.len())
                .find(|&i| forest.parent[i].is_none() && forest.anchor[i].as_deref() == Some(a))
                .map_or(a.as_str(), |i| forest.addrs[i].as_str());
            match tree.walk_up(a, first, None).await? {
                Try::Done(walk) => walks.push(walk),
                Try::Again(err) => return Err(err),
            }
        }
        let depth_of = |a: Option<&str>| {
            a.and_then(|a| anchors.iter().position(|x| x == a))
                .and_then(|i| walks.get(i))
                .map_or(0, Vec::len)
        };
        check_depth(forest, depth_of, E::TREE.max_depth)?;
        let mut rows = std::mem::take(&mut forest.items);
        for (item, kids) in rows.iter_mut().zip(&forest.kids).filter(|(_, kids)| **kids > 0) {
            item.insert(TREE_KIDS_ATTR.to_owned(), AttributeValue::N(kids.to_string()));
        }
        let table = tree.db.table_name();
        let sk_attr = index::<E>().and_then(|i| i.sk);
        let mut finals = Vec::with_capacity(anchors.len());
        for (a, walk) in anchors.iter().zip(&walks) {
            let stored = walk.first().map(|raw| raw.index_sk.as_deref());
            let stored = sk_attr.zip(stored);
            let kids = i64::try_from(forest.roots_under(Some(a))).unwrap_or(i64::MAX);
            finals.push(counter::<E>(table, &tree.pk, a, kids, 1, stored)?);
        }
        Ok(LoadPlan { rows, finals })
    }
}
