//! The nested-set strategy: every node keeps an interval of numbers, nested inside its
//! parent's, and an index sorted by the interval's start, so that a subtree is one range
//! query.
//!
//! A node with id `n` is its entity item (`sk = "<prefix>n"`) with its bookkeeping:
//!
//! - `_tree_lft` and `_tree_rgt`: its interval, strictly inside its parent's; siblings'
//!   intervals are disjoint. The numbers are sparse (`u64`, wide gaps): a new child takes
//!   an eighth of the free numbers after its parent's last child (`_tree_next`), so inserts
//!   renumber nothing until a gap is exhausted; then the smallest enclosing subtree that
//!   has room (three quarters of its numbers free afterwards) is numbered again: in one
//!   transaction up to 96 nodes, beyond under the tree's intent record
//!   ([`OpKind::Renumber`](crate::tree::OpKind::Renumber)), fenced transactions of 99 that
//!   `resume` finishes. When no subtree has room, the whole tree is numbered again, the same
//!   way whatever its size; only a tree that two numbers per node in `u64` cannot hold
//!   (about 2^63 nodes) is [`TreeProblem::NoRoom`];
//! - `_tree_depth` (top-level nodes have depth 1), `_tree_up` (its ancestors, root first),
//!   `_tree_kids` (its number of children) and `_tree_rev` (bumped by every insert under
//!   it), which writes condition on;
//! - the tree index key `(partition, "<prefix><lft>")`, `lft` in 20 digits, so that the
//!   index orders the partition's nodes by `lft`: a subtree is the range between the node's
//!   `lft` and `rgt`, and a depth range adds a filter on `_tree_depth`.
//!
//! The top level's high-water mark is kept in a record of its own (`"<prefix>~top"`).
//!
//! What finding the region to number again reads, and costs: [`NestedTree`].

mod items;
mod layout;
mod relayout;
mod room;
mod subtree;
mod write;

use std::collections::HashSet;

use aws_sdk_dynamodb::types::AttributeValue;
use futures_util::stream::{self, BoxStream, StreamExt, TryStreamExt};

use super::node::{
    IdHierarchy, TREE_UP_ATTR, arg_text, changed, decode_chain, display, esc, index, node_sk,
};
use super::raw::{number, rev_of};
use super::{TREE_KIDS_ATTR, TREE_REV_ATTR, TreeProblem, problem};
use std::future::Future;
use write::MAX_TX_NODES;

use crate::error::{Error, NodeReason};
use crate::expr::{Condition, Node, Operand, Path};
use crate::item::Item;
use crate::key::{Escaped, KeyArg, KeyTemplate, lit, part};
use crate::model::Stamp;
use crate::model::to_item_at;
use crate::model::{from_item, string_attr};
use crate::ops::retry::CONFLICTS;
use crate::ops::retry::{self, INDEX_LAG, Try};
use crate::ops::{AsItem, BoxFuture, EntityQuery, KeyStart, OnIndex, Query, QueryFrom};
use crate::tree::builders::{Delete, Descendants, Move};
use crate::tree::bulk::check_depth;
use crate::tree::bulk::{Forest, LoadPlan};
use crate::tree::handle::Strategy;
use crate::tree::handle::{NestedSet, Tree};
use crate::tree::op::{OpKind, OpPhase, OpReport, ProgressFn, TreeOp, quiet};
use items::{move_slot, new_node_item};
use layout::{Place, Root, plan};
use relayout::{Relayout, reserve_of};
use std::collections::HashMap;

/// The attribute where a nested-set node keeps the start of its interval.
pub const TREE_LFT_ATTR: &str = "_tree_lft";
/// The attribute where a nested-set node keeps the end of its interval.
pub const TREE_RGT_ATTR: &str = "_tree_rgt";
/// The attribute where a nested-set node keeps its depth (top-level nodes have depth 1).
pub const TREE_DEPTH_ATTR: &str = "_tree_depth";
/// The attribute where a nested-set node keeps the end of its last child's interval.
pub const TREE_NEXT_ATTR: &str = "_tree_next";

/// The bookkeeping attributes of a nested-set node, removed before deserializing it (the
/// `Entity::BOOKKEEPING_ATTRS` that `#[hierarchy(strategy = nested_set, ..)]` generates).
#[doc(hidden)]
pub const NESTED_BOOKKEEPING_ATTRS: &[&str] = &[
    TREE_REV_ATTR,
    TREE_KIDS_ATTR,
    TREE_UP_ATTR,
    TREE_LFT_ATTR,
    TREE_RGT_ATTR,
    TREE_DEPTH_ATTR,
    TREE_NEXT_ATTR,
];

/// The template of a node's index sort key: the node type's prefix and the interval's
/// start in 20 digits (every `u64`), so that text order is number order.
fn index_template<E: IdHierarchy>() -> KeyTemplate {
    KeyTemplate::new("<prefix><lft>", const { &[lit(E::TREE.sk_prefix), part(0)] })
}

/// The index sort key of a node whose interval starts at `lft`.
pub(crate) fn index_sk<E: IdHierarchy>(lft: u64) -> String {
    index_template::<E>().render(&[Escaped(&format!("{lft:020}"))])
}

/// The sort key of the record of the top level's high-water mark (`~` cannot start an
/// escaped id).
pub(crate) fn top_sk<E: IdHierarchy>() -> String {
    let top = KeyTemplate::new("<prefix>~top", const { &[lit(E::TREE.sk_prefix), lit("~top")] });
    top.base().into_owned()
}

/// The escaped id of an item (of the table or the tree index) that is a node of `E`.
fn node_id<E: IdHierarchy>(item: &Item) -> Option<&str> {
    if string_attr(item, crate::model::type_attr::<E::Table>()) != Some(E::NAME) {
        return None;
    }
    string_attr(item, <E::Table as crate::Table>::SK.unwrap_or(""))?.strip_prefix(E::TREE.sk_prefix)
}

/// The escaped ids of the nodes of `E` among `items`.
fn node_ids<E: IdHierarchy>(items: &[Item]) -> Vec<String> {
    items.iter().filter_map(node_id::<E>).map(str::to_owned).collect()
}

/// The interval and depth of a nested-set node: what a subtree query needs. Read it with
/// [`NestedTree::span`] and query with [`NestedTree::within`] to read a subtree in exactly
/// one request; a span read before a move or a renumbering of the node's region is stale
/// (the query then returns what the interval holds now).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NestedSpan {
    /// The start of the node's interval.
    pub lft: u64,
    /// The end of the node's interval.
    pub rgt: u64,
    /// The node's depth (top-level nodes have depth 1).
    pub depth: usize,
}

/// A node item read with its bookkeeping.
pub(crate) struct Raw<E> {
    pub node: E,
    /// Escaped id.
    pub id: String,
    pub rev: u64,
    pub kids: u64,
    pub lft: u64,
    pub rgt: u64,
    pub depth: usize,
    /// The end of the last child's interval (`lft` without children).
    pub next: u64,
    /// The ancestors, root first (escaped ids).
    pub chain: Vec<String>,
}

impl<E: IdHierarchy> Raw<E> {
    pub(crate) fn read(item: Item) -> Result<Raw<E>, Error> {
        let rev = rev_of(&item);
        let kids = number(&item, TREE_KIDS_ATTR).unwrap_or(0);
        let id = string_attr(&item, <E::Table as crate::Table>::SK.unwrap_or(""))
            .and_then(|sk| sk.strip_prefix(E::TREE.sk_prefix))
            .unwrap_or("")
            .to_owned();
        let corrupt = |reason| problem::<E>(TreeProblem::CorruptNode { id: display(&id), reason });
        let (Some(lft), Some(rgt)) = (number(&item, TREE_LFT_ATTR), number(&item, TREE_RGT_ATTR))
        else {
            return Err(corrupt(NodeReason::NoInterval));
        };
        let depth = number(&item, TREE_DEPTH_ATTR)
            .and_then(|d| usize::try_from(d).ok())
            .filter(|d| *d >= 1)
            .ok_or_else(|| corrupt(NodeReason::NoDepth))?;
        let next = number(&item, TREE_NEXT_ATTR).unwrap_or(lft);
        let chain = decode_chain(string_attr(&item, TREE_UP_ATTR).unwrap_or(""))
            .ok_or_else(|| corrupt(NodeReason::Ancestors))?;
        if lft >= rgt || next < lft || next >= rgt || chain.len() + 1 != depth {
            return Err(corrupt(NodeReason::Inconsistent));
        }
        Ok(Raw { node: from_item(item)?, id, rev, kids, lft, rgt, depth, next, chain })
    }

    pub(crate) fn span(&self) -> NestedSpan {
        NestedSpan { lft: self.lft, rgt: self.rgt, depth: self.depth }
    }

    /// The escaped id of the parent.
    pub(crate) fn parent(&self) -> Option<&str> {
        self.chain.last().map(String::as_str)
    }
}

/// The tree of one partition of a nested-set node type; made by the generated
/// `Node::tree(&db, ..partition key fields)`. Nodes are addressed by id.
///
/// When a parent's gap is exhausted, finding the region to number again costs the same at
/// every depth: the parent names its ancestors (one `BatchGetItem` reads their intervals), and
/// the index, sorted by `lft`, holds every ancestor's region contiguously around the parent's
/// `lft`, so two keys-only queries sent together (down and up from it, at most 97 entries
/// each) count every region of up to 96 nodes exactly. The smallest with room is read again
/// strongly consistently (one `BatchGetItem`) and numbered again in one transaction. Only
/// when none has room do the queries read on, eight times as many entries each time: what
/// they read grows with the region found, never with the depth.
///
/// | operation | requests |
/// | --- | --- |
/// | [`get`](NestedTree::get), [`span`](NestedTree::span) | 1 `GetItem` |
/// | [`within`](NestedTree::within) a span (any depth range) | 1 `Query` on the index |
/// | [`descendants`](NestedTree::descendants) (any depth range), [`subtree_size`](NestedTree::subtree_size) | 1 `GetItem` + 1 `Query` on the index |
/// | [`children`](NestedTree::children) | 1 `GetItem` + 1 `Query` that reads the node's whole subtree and returns the children (a depth filter) |
/// | [`roots`](NestedTree::roots), [`at_depth`](NestedTree::at_depth) | 1 `Query` that reads the whole tree and returns one depth |
/// | [`ancestors`](NestedTree::ancestors), [`breadcrumbs`](NestedTree::breadcrumbs) | 1 `GetItem` (the node names its ancestors) + 1 `BatchGetItem` |
/// | [`insert`](NestedTree::insert) | 1 `GetItem` (the parent, or the top-level record) + 1 `TransactWriteItems` |
/// | an insert whose parent's gap is exhausted, the smallest region with room of up to 96 nodes | 8 at any depth: 2 `GetItem` (the parent, again once there is room), 1 `BatchGetItem` of the ancestors, 2 `Query` around the parent's `lft`, 1 `BatchGetItem` of the region, 2 `TransactWriteItems` (the renumbering, the insert); 6 under a top-level parent (no ancestors, no `Query` down) |
/// | the same, the smallest region with room of n > 96 nodes | under the intent record; 21 for n = 266: 5 `GetItem`, 4 `Query` (2 around the parent, 1 more to count past 96 nodes, the region's under the intent), 4 `BatchGetItem` (the ancestors, then ⌈n / 100⌉ of the region under the intent), 6 `TransactWriteItems` (the intent record with a check of the region's root, ⌈n / 99⌉ fenced rewrites, the root's mark, the insert), 1 `UpdateItem` (the phase), 1 `DeleteItem` (the intent), no `PutItem` |
/// | the same, no region has room: the whole tree of n nodes | 17 for n = 160 from a top-level insert: 4 `GetItem` (the top-level record), 2 `Query` and 4 `BatchGetItem` (the tree, ⌈n / 100⌉, read before the intent and under it), 1 `PutItem` (the intent), 4 `TransactWriteItems` (⌈n / 99⌉ fenced rewrites, the top level's mark, the insert), 1 `UpdateItem` (the phase), 1 `DeleteItem` (the intent); 20 under a child (the search first: 1 `BatchGetItem`, 2 `Query`) |
/// | [`move_under`](NestedTree::move_under), [`move_to_top`](NestedTree::move_to_top) | the subtree read (1 `GetItem`, 1 `Query`, 1 `BatchGetItem`), the destination read, then 1 `TransactWriteItems` rewriting every moved node |
/// | [`delete_subtree`](NestedTree::delete_subtree) | the subtree read, then 1 `TransactWriteItems` per 97 nodes |
/// | [`bulk_load`](NestedTree::bulk_load) of N nodes | 1 `GetItem` per existing parent, ⌈N / 100⌉ `BatchGetItem`, ⌈N / 25⌉ `BatchWriteItem` and 4 requests of its intent and journal |
///
/// The renumbering rows are measured by `cargo test --test it tree_nested` on the embedded
/// engine (`finding_room_costs_the_same_at_every_depth` at depths 1, 10 and 90,
/// `a_chain_of_95_renumbers_at_a_cost_that_does_not_grow_with_depth`,
/// `a_266_node_renumbering_costs_what_the_docs_say`,
/// `a_whole_tree_renumbering_costs_what_the_docs_say`); a renumbering makes room that
/// lasts: the inserts after it are plain again.
///
/// Index reads are eventually consistent on DynamoDB: a node inserted or moved a moment ago
/// may be missing from a read for a moment. Writes never rely on them alone: they read
/// again what the index found, strongly consistently, and check it against the children
/// counters. The same operations, on every strategy: [`TreeProtocol`](super::TreeProtocol).
///
/// Example: on [`Tree`].
pub type NestedTree<'a, E> = Tree<'a, E, NestedSet>;

impl<'a, E: IdHierarchy> NestedTree<'a, E> {
    /// The interval and depth of the node `id` (one strongly consistent `GetItem`); `None`
    /// for a missing node. [`within`](NestedTree::within) reads its subtree in one query.
    pub async fn span(&self, id: impl KeyArg<E::Id>) -> Result<Option<NestedSpan>, Error> {
        Ok(self.raw(&arg_text::<E>(&id)).await?.map(|r| r.span()))
    }

    /// The children of the node `id`, in the order they were inserted (interval order):
    /// its subtree read with a depth filter; see [`Descendants`].
    pub fn children(&self, id: impl KeyArg<E::Id>) -> Descendants<'a, E, NestedSet> {
        self.descendants(id).depth(1..=1)
    }

    /// The nodes of the subtree whose span is `span` (the node itself included; narrow with
    /// [`depth`](Descendants::depth)): one query on the index.
    pub fn within(&self, span: NestedSpan) -> Descendants<'a, E, NestedSet> {
        Descendants::new(self, NestedFrom::Span(span)).depth(0..)
    }

    /// The top-level nodes, in interval order: one query over the whole tree that returns
    /// depth 1 (it reads every node: prefer a known parent's children in large trees).
    pub fn roots(&self) -> EntityQuery<'a, E, OnIndex> {
        self.at_depth(1)
    }

    /// The nodes at absolute depth `depth` (top-level nodes have depth 1), in interval
    /// order: one query over the whole tree with a depth filter.
    pub fn at_depth(&self, depth: usize) -> EntityQuery<'a, E, OnIndex> {
        let (lo, hi) = layout::TOP;
        self.range(lo, hi).filter(depth_filter::<E>(depth as u64, depth as u64))
    }

    /// The nodes whose interval starts in `lo..=hi`, from the index.
    fn range(&self, lo: u64, hi: u64) -> EntityQuery<'a, E, OnIndex> {
        let name = E::TREE.index.unwrap_or("");
        let start = KeyStart::on_index(index::<E>(), name, self.pk.clone(), "");
        QueryFrom::<E, OnIndex>::new(self.db, start).between(index_sk::<E>(lo), index_sk::<E>(hi))
    }

    /// The node `id` (escaped), strongly consistent, with its bookkeeping.
    pub(crate) async fn raw(&self, id: &str) -> Result<Option<Raw<E>>, Error> {
        self.get_raw(&node_sk::<E>(id)).await?.map(Raw::read).transpose()
    }

    /// The raw items of the index whose interval starts in `lo..=hi`.
    fn raw_range(&self, lo: u64, hi: u64) -> Query<'a, E::Table, AsItem, OnIndex> {
        self.range(lo, hi).items()
    }

    /// The index entries whose interval starts in `lo..=hi`, keys only (at most `limit`, from
    /// `hi` down when `descending`): each one's `lft` and, for a node of `E`, its escaped id.
    pub(crate) async fn index_entries(
        &self,
        (lo, hi): (u64, u64),
        limit: usize,
        descending: bool,
    ) -> Result<Vec<(u64, Option<String>)>, Error> {
        let mut query = self.raw_range(lo, hi).limit(limit);
        if descending {
            query = query.reverse();
        }
        let index_sk = index::<E>().and_then(|i| i.sk).unwrap_or("");
        let items = query.keys().await?;
        let mut out = Vec::with_capacity(items.len());
        for item in &items {
            let id = node_id::<E>(item).map(str::to_owned);
            let digits =
                string_attr(item, index_sk).and_then(|k| k.strip_prefix(E::TREE.sk_prefix));
            let Some(lft) = digits.and_then(|d| d.parse::<u64>().ok()) else {
                let reason = NodeReason::IndexKey;
                let id = display(id.as_deref().unwrap_or_default());
                return Err(problem::<E>(TreeProblem::CorruptNode { id, reason }));
            };
            out.push((lft, id));
        }
        Ok(out)
    }

    /// The whole subtree below `root` (escaped id; the top level for `None`, with the
    /// interval `lft..=rgt` and `kids` children), strongly consistent: the index range of its
    /// interval (or first the nodes `known`, escaped ids an index read found there), each
    /// node read again strongly consistently and kept if it is still inside; complete when
    /// every node's parent is in it and the children counters add up (read again while the
    /// index lags or the subtree changes between the reads, then
    /// [`TreeProblem::NodeChanged`]). In interval order: parents before children.
    pub(crate) async fn read_region(
        &self,
        root: Option<&str>,
        (lft, rgt): (u64, u64),
        kids: u64,
        known: Option<&[String]>,
    ) -> Result<Vec<Raw<E>>, Error> {
        retry::on_conflict(INDEX_LAG, move |attempt| async move {
            let ids = match known.filter(|_| attempt == 1) {
                Some(ids) => ids.to_vec(),
                None => node_ids::<E>(&self.raw_range(lft.saturating_add(1), rgt).keys().await?),
            };
            let mut found = self.read_nodes(&ids, Raw::read).await?;
            found.retain(|r| r.lft > lft && r.rgt < rgt);
            found.sort_by_key(|r| r.lft);
            let inside: HashSet<&str> =
                root.into_iter().chain(found.iter().map(|r| r.id.as_str())).collect();
            let parents_in = found.iter().all(|r| match r.parent() {
                Some(p) => inside.contains(p),
                None => root.is_none(),
            });
            let counted: u64 = kids + found.iter().map(|r| r.kids).sum::<u64>();
            if parents_in && counted == found.len() as u64 {
                return Ok(Try::Done(found));
            }
            Ok(Try::Again(changed::<E>(root.unwrap_or_default())))
        })
        .await
    }
}

/// `_tree_depth BETWEEN lo AND hi`.
fn depth_filter<E: IdHierarchy>(lo: u64, hi: u64) -> Condition<E> {
    let path = Path::attr(TREE_DEPTH_ATTR);
    let lo = Operand::checked(&path, AttributeValue::N(lo.to_string()));
    let hi = Operand::checked(&path, AttributeValue::N(hi.to_string()));
    Condition::from_node(Node::Between(path, lo, hi))
}

/// Where a [`Descendants`] read starts.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub enum NestedFrom {
    /// A node's escaped id: its span is read first.
    Id(String),
    /// A span read earlier.
    Span(NestedSpan),
}

impl From<String> for NestedFrom {
    fn from(id: String) -> Self {
        NestedFrom::Id(id)
    }
}

impl<'a, E: IdHierarchy> Descendants<'a, E, NestedSet> {
    /// The query of the range under the node of `span` (`None` for an empty range).
    fn query(&self, span: NestedSpan) -> Option<EntityQuery<'a, E, OnIndex>> {
        let (min, max) = self.depths?;
        let bounded = max.is_some();
        let max = max.unwrap_or(usize::MAX);
        let lo = if min == 0 { span.lft } else { span.lft.saturating_add(1) };
        let mut q = self.tree.range(lo, span.rgt);
        if min > 1 || bounded {
            let d = span.depth as u64;
            let lo = d.saturating_add(min as u64);
            let hi = d.saturating_add(u64::try_from(max).unwrap_or(u64::MAX));
            q = q.filter(depth_filter::<E>(lo, hi));
        }
        Some(q)
    }

    async fn resolve(&self) -> Result<Option<EntityQuery<'a, E, OnIndex>>, Error> {
        let span = match &self.from {
            NestedFrom::Span(span) => *span,
            NestedFrom::Id(id) => match self.tree.raw(id).await? {
                Some(raw) => raw.span(),
                None => return Ok(None),
            },
        };
        Ok(self.query(span))
    }
}

/// The nested-set strategy's steps.
impl<E: IdHierarchy> Strategy<E> for NestedSet {
    type From = NestedFrom;
    type ReadOptions = ();
    const MOVE_LIMIT: usize = MAX_TX_NODES;
    const DELETE_LIMIT: usize = MAX_TX_NODES;

    async fn insert(
        tree: &Tree<'_, E, Self>,
        n: &E,
        next: Option<u64>,
        stamp: Stamp,
    ) -> Result<(), Error> {
        let (id, parent) = tree.new_node(n)?;
        let base = to_item_at(n, next, stamp)?;
        let (id, parent, base) = (&id, parent.as_deref(), &base);
        retry::on_conflict(CONFLICTS, move |_| tree.try_insert(id, parent, base)).await
    }

    async fn parent(tree: &Tree<'_, E, Self>, at: String) -> Result<Option<E>, Error> {
        match tree.raw(&at).await?.as_ref().and_then(Raw::parent) {
            Some(p) => tree.db.get(tree.key_of(p)).await,
            None => Ok(None),
        }
    }

    fn at_depth(
        tree: &Tree<'_, E, Self>,
        depth: usize,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
        tree.at_depth(depth).all()
    }

    async fn ancestors(tree: &Tree<'_, E, Self>, at: String) -> Result<Vec<E>, Error> {
        match tree.raw(&at).await? {
            Some(raw) => tree.read_ids(&raw.chain).await,
            None => Ok(Vec::new()),
        }
    }

    async fn breadcrumbs(tree: &Tree<'_, E, Self>, at: String) -> Result<Vec<E>, Error> {
        let Some(raw) = tree.raw(&at).await? else {
            return Ok(Vec::new());
        };
        let mut out = tree.read_ids(&raw.chain).await?;
        out.push(raw.node);
        Ok(out)
    }

    async fn subtree_size(tree: &Tree<'_, E, Self>, at: String) -> Result<u64, Error> {
        match tree.raw(&at).await? {
            Some(raw) => Ok(tree.within(raw.span()).count().await? as u64),
            None => Ok(0),
        }
    }

    fn owns(kind: &OpKind) -> bool {
        matches!(
            kind,
            OpKind::DeleteNode { .. } | OpKind::MoveNode { .. } | OpKind::Renumber { .. }
        )
    }

    async fn resume(
        tree: &Tree<'_, E, Self>,
        op: TreeOp,
        item: &Item,
        progress: &mut ProgressFn<'_>,
    ) -> Result<usize, Error> {
        match &op.kind {
            OpKind::DeleteNode { node } => tree.delete_all(&esc(node), Some(&op), progress).await,
            OpKind::Renumber { node: None } => {
                tree.renumber_tree(&op, reserve_of::<E>(item)?.as_ref(), progress).await
            }
            _ => tree.run_relayout(&op, &Relayout::from_intent::<E>(&op, item)?, progress).await,
        }
    }

    async fn rollback(
        tree: &Tree<'_, E, Self>,
        op: TreeOp,
        item: &Item,
    ) -> Result<Option<OpReport>, Error> {
        let cannot = |op: TreeOp| Err(problem::<E>(TreeProblem::CannotRollBack { op }));
        if !matches!(op.kind, OpKind::MoveNode { .. }) {
            return cannot(op);
        }
        let r = Relayout::from_intent::<E>(&op, item)?;
        let Some(x) = tree.raw(&r.node).await? else {
            return cannot(op);
        };
        if op.phase != OpPhase::Copy || r.is_renumbering() || x.parent() == r.parent.as_deref() {
            return cannot(op);
        }
        let back = Relayout {
            node: r.node.clone(),
            parent: x.parent().map(str::to_owned),
            new: r.old,
            old: r.new,
            reserve: None,
        };
        tree.recover(&op, |op| async move { tree.run_relayout(&op, &back, &mut quiet()).await })
            .await
    }

    fn send_move<'a, 'p: 'a>(mv: Move<'a, 'p, E, Self>) -> BoxFuture<'a, Result<OpReport, Error>> {
        let Move { tree, from: id, to: parent, mut progress, limit, .. } = mv;
        Box::pin(async move {
            let moved = tree.move_node(&id, parent.as_deref(), limit, &mut progress).await;
            tree.busy_over_changed(moved).await
        })
    }

    fn send_delete<'a, 'p: 'a>(
        delete: Delete<'a, 'p, E, Self>,
    ) -> BoxFuture<'a, Result<OpReport, Error>> {
        let tree = delete.tree.clone();
        Box::pin(async move { tree.busy_over_changed(subtree::delete_now(delete).await).await })
    }

    fn stream(read: Descendants<'_, E, Self>) -> BoxStream<'_, Result<E, Error>> {
        stream::once(async move { read.resolve().await })
            .map_ok(|q| q.map_or_else(|| stream::empty().boxed(), |q| q.stream()))
            .try_flatten()
            .boxed()
    }

    fn all(read: Descendants<'_, E, Self>) -> BoxFuture<'_, Result<Vec<E>, Error>> {
        Box::pin(async move {
            match read.resolve().await? {
                Some(q) => q.all().await,
                None => Ok(Vec::new()),
            }
        })
    }

    /// A count query: no node is returned.
    fn count(read: Descendants<'_, E, Self>) -> BoxFuture<'_, Result<usize, Error>> {
        Box::pin(async move {
            match read.resolve().await? {
                Some(q) => q.count().await,
                None => Ok(0),
            }
        })
    }

    /// The nested-set strategy's side of a bulk load: the nodes loaded under each existing
    /// parent (or at the top level) are numbered together, evenly, inside a share of that
    /// parent's free numbers (the share a moved subtree of their size takes), so every loaded
    /// node keeps free numbers after its last child for later inserts; each existing parent's
    /// high-water mark and children counter move once, in the load's last transaction.
    async fn load_plan(
        tree: &Tree<'_, E, Self>,
        forest: &mut Forest<E>,
        _token: &str,
    ) -> Result<LoadPlan, Error> {
        let mut places: HashMap<String, Place> = HashMap::with_capacity(forest.nodes.len());
        let mut depths: HashMap<Option<String>, usize> = HashMap::new();
        let mut finals = Vec::new();
        for anchor in forest.anchors() {
            // The nodes numbered under this anchor, each with its parent.
            let members: Vec<(String, Option<String>)> = (0..forest.nodes.len())
                .filter(|&i| forest.anchor[i] == anchor)
                .map(|i| {
                    let parent = match forest.parent[i] {
                        Some(p) => Some(forest.addrs[p].clone()),
                        None => anchor.clone(),
                    };
                    (forest.addrs[i].clone(), parent)
                })
                .collect();
            let size = members.len();
            let no_room = || {
                problem::<E>(TreeProblem::NoRoom {
                    parent: anchor.as_deref().map(display),
                    nodes: size,
                })
            };
            let kids = i64::try_from(forest.roots_under(anchor.as_deref())).unwrap_or(i64::MAX);
            let missing = |a: &str| TreeProblem::NoParent { parent: display(a) };
            let (raw, top) = tree.parent_or_top(anchor.as_deref(), missing).await?;
            let gap = raw.as_ref().map_or((top.next, layout::TOP.1), |p| (p.next, p.rgt));
            let (lo, hi) = move_slot(gap, size, raw.is_none()).ok_or_else(no_room)?;
            let (depth, chain) =
                raw.as_ref().map_or((0, Vec::new()), |r| (r.depth, r.chain.clone()));
            let rgt = hi.checked_add(1).ok_or_else(no_room)?;
            let root = Root { id: anchor.clone(), lft: lo - 1, rgt, depth, chain };
            depths.insert(anchor.clone(), root.depth);
            let (next, laid) = plan(&root, &members, None).ok_or_else(no_room)?;
            places.extend(laid);
            finals.push(tree.gains(raw.as_ref(), &top, Some(next), kids)?);
        }
        let depth_of = |a: Option<&str>| depths.get(&a.map(str::to_owned)).copied().unwrap_or(0);
        check_depth(forest, depth_of, E::TREE.max_depth)?;
        let mut rows = Vec::with_capacity(forest.nodes.len());
        for (i, base) in std::mem::take(&mut forest.items).iter().enumerate() {
            let Some(place) = places.get(&forest.addrs[i]) else {
                return Err(problem::<E>(TreeProblem::NoRoom {
                    parent: forest.anchor[i].as_deref().map(display),
                    nodes: forest.nodes.len(),
                }));
            };
            rows.push(new_node_item::<E>(base, place, forest.kids[i] as u64));
        }
        Ok(LoadPlan { rows, finals })
    }
}
