//! The closure strategy (a replication pattern): every node keeps one copy of itself
//! under each of its ancestors, with the relative depth in the copy's sort key.
//!
//! A node with id `n` at depth `D` (top-level nodes have depth 1) is stored as
//!
//! - its entity item, under its own key (`sk = "EMP#n"`), which `Employee::get` reads;
//! - its *own copy* `"EMP#~c#n#000#n"`, which also records its ancestors (`_tree_up`) and a
//!   revision (`_tree_rev`, random when the own copy is written afresh, bumped by every
//!   insert or move under it);
//! - one copy `"EMP#~c#a#<d>#n"` under each ancestor `a`, `d` levels above it;
//! - one copy `"EMP#~c#~#<D>#n"` under the tree itself, `D` levels below it.
//!
//! Escaped ids contain no `#` and never start with `~`, so `"EMP#~c#a#"` starts exactly the
//! copies under `a`, sorted by relative depth: the children, the whole subtree and any range
//! of relative depths are each one query on the table that reads exactly its result (and may
//! be strongly consistent), and the nodes at an absolute depth are the copies under the tree
//! at that depth. Copies carry the node's fields, so each query returns whole nodes. They
//! have their own entity type (`"<Entity>:copy"`): queries of the entity never return them.

mod op;
mod update;
mod write;

use std::marker::PhantomData;

use aws_sdk_dynamodb::types::AttributeValue;
use futures_util::stream::BoxStream;

pub use update::ClosureUpdate;

use super::node::{IdHierarchy, TREE_UP_ATTR, arg_text, decode_chain, display, id_of};
use super::raw::rev_of;
use super::{TREE_REV_ATTR, TreeProblem, problem};
use std::future::Future;

use crate::error::{Error, IntentReason, NodeReason};
use crate::item::Item;
use crate::key::{Escaped, KeyArg, KeyTemplate, MAX_SORT_KEY_BYTES, check_key_value, lit, part};
use crate::model::{Stamp, Table, key_display, string_attr, strip_bookkeeping, to_item_with};
use crate::ops::retry::{self, CONFLICTS, Try};
use crate::ops::{AsItem, BoxFuture, Decode, KeyStart, OnTable, Query, QueryFrom};
use crate::tree::builders::{Delete, Descendants, Move};
use crate::tree::bulk::{Forest, LoadPlan};
use crate::tree::bulk::{LoadProblem, check_depth, id_problem};
use crate::tree::conflict::action_error;
use crate::tree::handle::Strategy;
use crate::tree::handle::{Closure, Tree};
use crate::tree::node::{changed, within_depth};
use crate::tree::op::{OpKind, OpPhase, OpReport, ProgressFn, TreeOp};
use crate::tree::op::{corrupt_intent, intent_value};
use crate::tree::raw::put_plain;
use crate::tree::raw::{OP_FROM, OP_OLD_UP};
use op::move_plan;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use write::{bump_own, copy_sks, put_own};

/// The ancestor marker of the copies under the tree itself (no escaped id is `~`).
const ROOT: &str = "~";

/// A query of copies of a closure tree, returning whole nodes: what
/// [`ClosureTree::children`], [`ClosureTree::at_depth`] and
/// [`Descendants::query`] return. It is a [`Query`]: `limit`, `page_size`,
/// `consistent`, `stream`, `page` (with cursors), `count`, ...
pub type CopyQuery<'a, E> = Query<'a, <E as crate::Entity>::Table, AsCopy<E>, OnTable>;

/// Decodes copies of closure-tree nodes as the node type (only copies are read).
pub struct AsCopy<E>(PhantomData<fn() -> E>);

impl<E: IdHierarchy> Decode for AsCopy<E> {
    type Output = E;
    const NAME: &'static str = E::TREE.copy_type;
    fn type_filter() -> Option<crate::model::TypeTag> {
        let attr = crate::model::type_attr::<E::Table>();
        Some(crate::model::TypeTag { attr, value: E::TREE.copy_type })
    }
    fn decode(item: Item) -> Result<E, Error> {
        decode_copy::<E>(item)
    }
}

/// The sort key of the copy of node `id` under `anc` (`None`: the tree), `depth` levels
/// below it. All ids escaped.
pub(crate) fn copy_sk<E: IdHierarchy>(anc: Option<&str>, depth: usize, id: &str) -> String {
    let depth = format!("{depth:03}");
    copy_template::<E>().render(&[Escaped(anc.unwrap_or(ROOT)), Escaped(&depth), Escaped(id)])
}

/// The template of a copy's sort key: the node type's prefix, `~c#`, the ancestor (or the
/// tree's root marker), the relative depth (3 digits) and the node, all escaped already.
fn copy_template<E: IdHierarchy>() -> KeyTemplate {
    KeyTemplate::new(
        "<prefix>~c#<ancestor>#<depth>#<id>",
        const { &[lit(E::TREE.sk_prefix), lit("~c#"), part(0), lit("#"), part(1), lit("#"), part(2)] },
    )
}

/// The start of the sort keys of the copies under `anc`.
fn range_start<E: IdHierarchy>(anc: Option<&str>) -> String {
    copy_template::<E>().prefix(&[Escaped(anc.unwrap_or(ROOT))], 1)
}

/// Reads the relative depth and the escaped node id from a copy's sort key.
pub(crate) fn parse_copy_sk<E: IdHierarchy>(sk: &str) -> Option<(usize, &str)> {
    let rest = sk.strip_prefix(E::TREE.sk_prefix)?.strip_prefix("~c#")?;
    let (_, rest) = rest.split_once('#')?;
    let (depth, id) = rest.split_once('#')?;
    // Exactly what `copy_sk` writes: three digits (no sign) and an escaped id.
    if depth.len() != 3 || !depth.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    crate::key::unescape(id).ok()?;
    Some((depth.parse().ok()?, id))
}

/// The key of a stored item, for messages.
fn key_text<E: IdHierarchy>(item: &Item) -> String {
    let text = |attr: &str| string_attr(item, attr);
    key_display(text(<E::Table as Table>::PK), <E::Table as Table>::SK.and_then(text))
}

/// Reads a copy as the node it copies, checking that it is one: its entity type, its
/// partition and the id at the end of its sort key.
pub(crate) fn decode_copy<E: IdHierarchy>(mut item: Item) -> Result<E, Error> {
    let type_attr = crate::model::type_attr::<E::Table>();
    match string_attr(&item, type_attr) {
        Some(t) if t == E::TREE.copy_type => {}
        found => {
            let (found, key) = (found.map(str::to_owned), key_text::<E>(&item));
            return Err(Error::WrongEntityType { expected: E::TREE.copy_type, found, key });
        }
    }
    let original = item.clone();
    let (pk, sk) = strip_bookkeeping::<E::Table>(&mut item);
    item.remove(TREE_UP_ATTR);
    item.remove(TREE_REV_ATTR);
    let key = key_display(pk.as_deref(), sk.as_deref());
    let mut node: E = serde_dynamo::from_item(item).map_err(|source| Error::Deserialize {
        entity: E::NAME,
        key,
        source,
    })?;
    let id = id_of(&node);
    let copied = sk.as_deref().and_then(parse_copy_sk::<E>).map(|(_, copy_of)| copy_of);
    if pk.as_deref() != Some(node.key().pk()) || copied != Some(id.as_str()) {
        let reason = crate::error::CorruptReason::CopyKey { node: display(&id) };
        return Err(Error::CorruptItem { entity: E::NAME, key: key_text::<E>(&original), reason });
    }
    crate::model::after_read_copy(&mut node)?;
    Ok(node)
}

/// A copy read under the node `x` (escaped): its depth relative to `x` and the node it copies.
pub(crate) fn copy_below<E: IdHierarchy>(x: &str, item: Item) -> Result<(usize, E), Error> {
    let sk = string_attr(&item, write::sk_attr::<E>()?).unwrap_or("").to_owned();
    let Some((rel, _)) = parse_copy_sk::<E>(&sk) else {
        let reason = NodeReason::CopyKey { key: sk };
        return Err(problem::<E>(TreeProblem::CorruptNode { id: display(x), reason }));
    };
    Ok((rel, decode_copy::<E>(item)?))
}

/// A node's entity item as the base of its copies: no template index keys (copies are in no
/// such index; a multi-attribute index keeps them, tagged with the copy type),
/// the copy entity type. `version` is the version the node is stored with.
/// `stamp` is the write's time (`None`: the timestamps as the node holds them; the copies
/// carry the ones the node is stored with).
pub(crate) fn copy_base<E: IdHierarchy>(
    node: &E,
    version: Option<u64>,
    stamp: Option<Stamp>,
) -> Result<Item, Error> {
    Ok(copy_base_of::<E>(to_item_with(node, version, stamp)?))
}

/// [`copy_base`] from the node's entity item (a copy is not the node's item: it holds none
/// of the node entity's constant attributes).
pub(crate) fn copy_base_of<E: IdHierarchy>(mut item: Item) -> Item {
    crate::model::strip_constants::<E>(&mut item);
    // A multi-attribute index is keyed by the node's fields, which the copies keep (a copy
    // there carries the copy type, which the node's queries leave out).
    for index in <E::Table as Table>::INDEXES.iter().filter(|i| !i.is_multi()) {
        item.remove(index.pk);
        if let Some(sk) = index.sk {
            item.remove(sk);
        }
    }
    item.insert(
        crate::model::type_attr::<E::Table>().to_owned(),
        AttributeValue::S(E::TREE.copy_type.to_owned()),
    );
    item
}

/// The copy with sort key `sk` made from `base`; the key limits are checked.
pub(crate) fn copy_item<E: IdHierarchy>(base: &Item, sk: String) -> Result<Item, Error> {
    let attr = write::sk_attr::<E>()?;
    check_key_value(E::NAME, attr, &sk, MAX_SORT_KEY_BYTES)?;
    let mut item = base.clone();
    item.insert(attr.to_owned(), AttributeValue::S(sk));
    Ok(item)
}

/// The revision a node's own copy starts at when it is written afresh (an insert, or the
/// switch of a large move): a random number, never the revision an earlier incarnation of the
/// node (deleted and inserted again, or moved away and back) had, so that a move or delete
/// that read the earlier one and conditions on "revision unchanged" cannot match the new one.
/// Below 2^52, so that the counting of inserts (`ADD 1`) never overflows.
pub(crate) fn fresh_rev() -> u64 {
    rev_from(&crate::ops::idempotency_token())
}

/// The revision [`fresh_rev`] makes of a token: a bulk load gives every node it loads the
/// revision of its own token, so that a resumed load writes the same own copies again.
pub(crate) fn rev_from(token: &str) -> u64 {
    let n = u64::from_str_radix(token.get(..13).unwrap_or("1"), 16).unwrap_or(1);
    n.max(1)
}

/// The own copy of a node: a copy at depth 0 under itself, with its ancestors and revision.
pub(crate) fn own_copy<E: IdHierarchy>(
    base: &Item,
    id: &str,
    chain: &[String],
    rev: u64,
) -> Result<Item, Error> {
    let mut item = copy_item::<E>(base, copy_sk::<E>(Some(id), 0, id))?;
    item.insert(TREE_UP_ATTR.to_owned(), AttributeValue::S(super::node::encode_chain(chain)));
    item.insert(TREE_REV_ATTR.to_owned(), AttributeValue::N(rev.to_string()));
    Ok(item)
}

/// A node's own copy, read.
pub(crate) struct Own<E> {
    pub node: E,
    /// The ancestors, root first (escaped ids).
    pub chain: Vec<String>,
    pub rev: u64,
    /// The stored encoded chain, for conditions.
    pub chain_text: String,
}

impl<E: IdHierarchy> Own<E> {
    pub(crate) fn read(id: &str, item: Item) -> Result<Own<E>, Error> {
        let rev = rev_of(&item);
        let chain_text = string_attr(&item, TREE_UP_ATTR).map(str::to_owned);
        let Some((chain, chain_text)) =
            chain_text.and_then(|t| decode_chain(&t).map(|chain| (chain, t)))
        else {
            let reason = NodeReason::Ancestors;
            return Err(problem::<E>(TreeProblem::CorruptNode { id: display(id), reason }));
        };
        Ok(Own { node: decode_copy::<E>(item)?, chain, rev, chain_text })
    }

    /// The node's depth (top-level nodes have depth 1).
    pub(crate) fn depth(&self) -> usize {
        self.chain.len() + 1
    }
}

/// The tree of one partition of a closure node type; made by the generated
/// `Node::tree(&db, ..partition key fields)`. Nodes are addressed by id.
///
/// Reads, with their cost (pages aside; every query reads exactly the nodes it returns, and
/// may be made strongly consistent):
///
/// | read | requests |
/// | --- | --- |
/// | [`get`](ClosureTree::get) | 1 `GetItem` |
/// | [`children`](ClosureTree::children), [`roots`](ClosureTree::roots), [`at_depth`](ClosureTree::at_depth), [`nodes`](ClosureTree::nodes) | 1 `Query` |
/// | [`descendants`](ClosureTree::descendants), with any relative depth range | 1 `Query` |
/// | [`subtree_size`](ClosureTree::subtree_size) | 1 count `Query` |
/// | [`ancestors`](ClosureTree::ancestors), [`breadcrumbs`](ClosureTree::breadcrumbs) | 1 `GetItem` (the node's own copy names its ancestors) + 1 `BatchGetItem` |
/// | [`parent`](ClosureTree::parent) | 2 `GetItem` |
///
/// Writes (see their docs): [`insert`](ClosureTree::insert),
/// [`replace`](ClosureTree::replace) and [`update`](ClosureTree::update) (a read and one
/// transaction writing the node and all its copies), [`move_subtree`](ClosureTree::move_subtree) (also named
/// [`move_under`](ClosureTree::move_under)), [`move_to_top`](ClosureTree::move_to_top) and
/// [`delete_subtree`](ClosureTree::delete_subtree) (one transaction when the copies fit,
/// else the resumable protocol, finished by [`resume`](ClosureTree::resume)),
/// [`bulk_load`](ClosureTree::bulk_load) (every node's copies in `BatchWriteItem`s of 25
/// items, no transaction per node). The same operations, on every strategy:
/// [`TreeProtocol`](crate::tree::TreeProtocol).
///
/// **Change nodes through the tree**: [`update`](ClosureTree::update) and
/// [`replace`](ClosureTree::replace) change the entity item and every copy. A plain typed
/// update of a closure node (`Employee::update(&db, ..)`, `db.update`, a transaction's) is
/// refused before sending ([`RequestProblem::UpdateCopies`](crate::error::RequestProblem::UpdateCopies));
/// plain puts and replaces (`employee.replace(&db)`) write the entity item only.
///
/// Example: on [`Tree`].
pub type ClosureTree<'a, E> = Tree<'a, E, Closure>;

impl<'a, E: IdHierarchy> ClosureTree<'a, E> {
    /// The copies under `anc` (`None`: the tree) at relative depths `lo..=hi` (`None`: no
    /// upper bound), in key order: by depth, then id.
    pub(crate) fn copies(
        &self,
        anc: Option<&str>,
        lo: usize,
        hi: Option<usize>,
    ) -> CopyQuery<'a, E> {
        let start = range_start::<E>(anc);
        let low = format!("{start}{lo:03}#");
        // `:` sorts after every digit: the end of all depths.
        let high = match hi {
            Some(hi) => format!("{start}{:03}", hi.saturating_add(1)),
            None => format!("{start}:"),
        };
        let start = KeyStart::new(None, self.pk.clone(), "");
        QueryFrom::<E, OnTable>::new(self.db, start).between(low, high).with_decode()
    }

    /// The children of the node `id`, in id order: one query that reads the children and
    /// nothing else.
    pub fn children(&self, id: impl KeyArg<E::Id>) -> CopyQuery<'a, E> {
        self.copies(Some(&arg_text::<E>(&id)), 1, Some(1))
    }

    /// The top-level nodes (depth 1).
    pub fn roots(&self) -> CopyQuery<'a, E> {
        self.at_depth(1)
    }

    /// The nodes at absolute depth `depth` (top-level nodes have depth 1), in id order: one
    /// query.
    pub fn at_depth(&self, depth: usize) -> CopyQuery<'a, E> {
        self.copies(None, depth, Some(depth))
    }

    /// Every node of the tree, level by level: one query (pages aside).
    pub fn nodes(&self) -> CopyQuery<'a, E> {
        self.copies(None, 1, None)
    }

    /// The own copy of node `id` (escaped), strongly consistent.
    pub(crate) async fn own(&self, id: &str) -> Result<Option<Own<E>>, Error> {
        let item = self.get_raw(&copy_sk::<E>(Some(id), 0, id)).await?;
        item.map(|item| Own::read(id, item)).transpose()
    }

    /// The raw copies under `id` (escaped) from relative depth `lo` on, strongly consistent.
    pub(crate) fn raw_copies(&self, id: &str, lo: usize) -> Query<'a, E::Table, AsItem, OnTable> {
        self.copies(Some(id), lo, None).consistent().with_decode()
    }
}

impl<'a, E: IdHierarchy> Descendants<'a, E, Closure> {
    /// The query of the closure strategy's read: one request per page, for `page_size`,
    /// `limit`, `consistent`, `page`, ...
    pub fn query(self) -> CopyQuery<'a, E> {
        // An empty range is a query whose bounds are reversed: nothing is sent.
        let (min, max) = self.depths.unwrap_or((1, Some(0)));
        self.tree.copies(Some(&self.from), min, max)
    }
}

/// The closure strategy's steps.
impl<E: IdHierarchy> Strategy<E> for Closure {
    type From = String;
    type ReadOptions = ();
    const MOVE_LIMIT: usize = usize::MAX;
    const DELETE_LIMIT: usize = usize::MAX;

    async fn insert(
        tree: &Tree<'_, E, Self>,
        n: &E,
        next: Option<u64>,
        stamp: Stamp,
    ) -> Result<(), Error> {
        let (id, parent) = tree.new_node(n)?;
        let base = copy_base(n, next, Some(stamp))?;
        let table = tree.db.table_name();
        let seen_leftover = AtomicBool::new(false);
        let (id, parent, base, seen_leftover) = (&id, &parent, &base, &seen_leftover);
        retry::on_conflict(CONFLICTS, move |_| async move {
            let (chain, parent_own) = match parent {
                None => (Vec::new(), None),
                Some(p) => match tree.own(p).await? {
                    None => return Err(problem::<E>(TreeProblem::NoParent { parent: display(p) })),
                    Some(own) => ([own.chain.clone(), vec![p.clone()]].concat(), Some(own)),
                },
            };
            within_depth::<E>(id, chain.len() + 1)?;
            let mut tx = tree.db.transaction().create_with(n, |put| put.at(stamp));
            let own_item = own_copy::<E>(base, id, &chain, fresh_rev())?;
            tx = tree.push(tx, put_own::<E>(table, own_item, copy_sk::<E>(Some(id), 0, id), None)?);
            for sk in copy_sks::<E>(&chain, id) {
                tx = tree.push(tx, put_plain(table, copy_item::<E>(base, sk.clone())?, sk)?);
            }
            let parent_index = tx.len();
            if let (Some(p), Some(own)) = (parent, &parent_own) {
                let sk = copy_sk::<E>(Some(p), 0, p);
                tx = tree.push(tx, bump_own::<E>(table, &tree.pk, sk, &own.chain_text)?);
            }
            // No large operation in progress moves or deletes an ancestor, or a node with this id
            // (a large delete of it removes its items one request after another).
            let guarded = [chain, vec![id.clone()]].concat();
            let Some(f) = tree.send_checked(tx, Some(&guarded)).await? else {
                return Ok(Try::Done(()));
            };
            match f.first() {
                _ if f.refused => Ok(Try::Again(changed::<E>(id))),
                Some(0) => Err(action_error(f.err, 0)),
                // Left over by a large delete of an ancestor, in progress (busy) or finished
                // meanwhile (tried again, once).
                Some(1) if !seen_leftover.swap(true, Ordering::Relaxed) => match tree.busy().await?
                {
                    Some(busy) => Err(busy),
                    None => Ok(Try::Again(changed::<E>(id))),
                },
                Some(1) => Err(problem::<E>(TreeProblem::CorruptNode {
                    id: display(id),
                    reason: NodeReason::OwnWithoutItem,
                })),
                // The parent moved or went away: read it again.
                Some(i) if i == parent_index => Ok(Try::Again(changed::<E>(id))),
                None if f.only_conflict() => Ok(Try::Again(changed::<E>(id))),
                _ => Err(f.err),
            }
        })
        .await
    }

    async fn parent(tree: &Tree<'_, E, Self>, at: String) -> Result<Option<E>, Error> {
        tree.parent_by_field(&at).await
    }

    fn at_depth(
        tree: &Tree<'_, E, Self>,
        depth: usize,
    ) -> impl Future<Output = Result<Vec<E>, Error>> + Send {
        tree.at_depth(depth).all()
    }

    async fn ancestors(tree: &Tree<'_, E, Self>, at: String) -> Result<Vec<E>, Error> {
        match tree.own(&at).await? {
            Some(own) => tree.read_ids(&own.chain).await,
            None => Ok(Vec::new()),
        }
    }

    async fn breadcrumbs(tree: &Tree<'_, E, Self>, at: String) -> Result<Vec<E>, Error> {
        match tree.own(&at).await? {
            Some(own) => tree.read_ids(&[own.chain, vec![at]].concat()).await,
            None => Ok(Vec::new()),
        }
    }

    async fn subtree_size(tree: &Tree<'_, E, Self>, at: String) -> Result<u64, Error> {
        Ok(tree.copies(Some(&at), 0, None).count().await? as u64)
    }

    fn owns(kind: &OpKind) -> bool {
        matches!(kind, OpKind::MoveNode { .. } | OpKind::DeleteNode { .. })
    }

    async fn resume(
        tree: &Tree<'_, E, Self>,
        op: TreeOp,
        item: &Item,
        progress: &mut ProgressFn<'_>,
    ) -> Result<usize, Error> {
        if let OpKind::DeleteNode { .. } = op.kind {
            let x: String = intent_value::<E, _>(item, OP_FROM)?;
            let chain =
                decode_chain(&intent_value::<E, String>(item, OP_OLD_UP)?).ok_or_else(|| {
                    corrupt_intent::<E>(IntentReason::Invalid { attribute: OP_OLD_UP })
                })?;
            return tree.remove_subtree(&op, &x, &chain, progress).await;
        }
        let plan = move_plan::<E>(item)?;
        let subtree = tree.subtree(&plan.x).await?;
        tree.run_move(&op, (&plan, &subtree), op.phase, progress).await?;
        Ok(subtree.len())
    }

    async fn rollback(
        tree: &Tree<'_, E, Self>,
        op: TreeOp,
        item: &Item,
    ) -> Result<Option<OpReport>, Error> {
        if !matches!((&op.kind, op.phase), (OpKind::MoveNode { .. }, OpPhase::Copy)) {
            return Err(problem::<E>(TreeProblem::CannotRollBack { op }));
        }
        tree.recover(&op, |op| async move {
            let plan = move_plan::<E>(item)?;
            let subtree = tree.subtree(&plan.x).await?;
            tree.undo_copy(&op, &plan, &subtree).await?;
            Ok(subtree.len())
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
        read.query().stream()
    }

    fn all(read: Descendants<'_, E, Self>) -> BoxFuture<'_, Result<Vec<E>, Error>> {
        crate::ops::boxed(|| read.query().all())
    }

    fn count(read: Descendants<'_, E, Self>) -> BoxFuture<'_, Result<usize, Error>> {
        crate::ops::boxed(|| read.query().count())
    }

    /// The closure strategy's side of a bulk load: each node's entity item, its own copy (its
    /// ancestors and revision) and one copy under each ancestor and under the tree, as an
    /// insert writes them; each existing parent counts the load in its own copy's revision.
    async fn load_plan(
        tree: &Tree<'_, E, Self>,
        forest: &mut Forest<E>,
        token: &str,
    ) -> Result<LoadPlan, Error> {
        let anchors: Vec<String> = forest.anchors().into_iter().flatten().collect();
        let owns = futures_util::future::try_join_all(anchors.iter().map(|a| tree.own(a))).await?;
        let mut above: HashMap<&str, Own<E>> = HashMap::new();
        for (a, own) in anchors.iter().zip(owns) {
            let missing = || id_problem::<E>(LoadProblem::Missing(a.clone()));
            above.insert(a.as_str(), own.ok_or_else(missing)?);
        }
        let depth_of = |a: Option<&str>| a.and_then(|a| above.get(a)).map_or(0, Own::depth);
        check_depth(forest, depth_of, E::TREE.max_depth)?;
        let rev = rev_from(token);
        let mut chains: Vec<Vec<String>> = Vec::with_capacity(forest.nodes.len());
        let mut rows = Vec::new();
        for (i, item) in std::mem::take(&mut forest.items).into_iter().enumerate() {
            let chain = match (forest.parent[i], forest.anchor[i].as_deref()) {
                (Some(p), _) => [chains[p].as_slice(), &[forest.addrs[p].clone()]].concat(),
                (None, Some(a)) => {
                    let own = above.get(a).map(|own| own.chain.clone()).unwrap_or_default();
                    [own, vec![a.to_owned()]].concat()
                }
                (None, None) => Vec::new(),
            };
            let id = &forest.addrs[i];
            let base = copy_base_of::<E>(item.clone());
            rows.push(item);
            rows.push(own_copy::<E>(&base, id, &chain, rev)?);
            for sk in copy_sks::<E>(&chain, id) {
                rows.push(copy_item::<E>(&base, sk)?);
            }
            chains.push(chain);
        }
        let table = tree.db.table_name();
        let finals = anchors
            .iter()
            .filter_map(|a| above.get(a.as_str()).map(|own| (a, own)))
            .map(|(a, own)| {
                bump_own::<E>(table, &tree.pk, copy_sk::<E>(Some(a), 0, a), &own.chain_text)
            })
            .collect::<Result<_, Error>>()?;
        Ok(LoadPlan { rows, finals })
    }
}
