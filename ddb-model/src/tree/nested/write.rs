//! Nested-set writes: insert into a gap, renumbering a bounded region when the gap is
//! exhausted (one transaction, or resumable under an intent record), moves and deletes.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::layout::{self, Place, Root, plan, slot};
use super::*;
use crate::expr::ExprBuilder;
use crate::item::item_size;
use crate::model::{Table, to_item, to_item_at};
use crate::ops::action::Action;
use crate::ops::put::next_version;
use crate::ops::retry::CONFLICTS;
use crate::ops::transact::{ActionInfo, explain};
use crate::ops::{Guard, MAX_TRANSACTION_ACTIONS, Target, WriteKind};
use crate::tree::conflict::{action_error, failures, only_conflict};
use crate::tree::node::{clone_node, esc, id_of, op_sk, parent_of};
use crate::tree::op::{OpKind, OpPhase, OpReport, Progress, ProgressFn, TreeOp, WHOLE_TREE};
use crate::tree::raw::{
    OP_PARENT, RawAction, clear_intent, fence_check, fenced_groups, guard, intent_field,
    intent_item, is_node, key_of, op_check, s, set_phase, superseded, take_over,
};

/// The most nodes one transaction rewrites: the rest of its 100 actions are the parents'
/// counters and the intent check.
pub(crate) const MAX_TX_NODES: usize = MAX_TRANSACTION_ACTIONS - 4;

/// How many times more index entries each further read around a parent takes, when the
/// regions counted so far have no room.
const GROW: usize = 8;

/// Attributes of a nested-set relayout's intent record (beside the move's node and parent):
/// the interval the node moves to, the one it had, and the numbers kept free under a node.
const OP_NEW_LO: &str = "new_lo";
const OP_NEW_HI: &str = "new_hi";
const OP_OLD_LO: &str = "old_lo";
const OP_OLD_HI: &str = "old_hi";
const OP_RESERVE_AT: &str = "reserve_at";
const OP_RESERVE: &str = "reserve";
/// Where a relayout puts its node: `top` (the top level) or `node` (under the intent's
/// parent). The parent attribute alone cannot say: the empty id escapes to the empty text.
const OP_PLACE: &str = "place";

/// Top-level nodes take `1 / TOP_SHARE` of the free numbers of the top level: the top
/// level's gap holds tens of thousands of inserts before it is exhausted.
const TOP_SHARE: u64 = 1024;

/// The record of the top level, read.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Top {
    pub(super) exists: bool,
    pub(super) next: u64,
    pub(super) kids: u64,
}

/// What a relayout takes when it begins: an interval from a parent's gap (a move under a
/// node, or to the top level), or nothing (a renumbering in place, which checks that its
/// region's root is still the one read).
enum Take<'r, E> {
    Parent(&'r Raw<E>),
    Top(Top),
    Nothing,
}

/// What a relayout does: numbers the subtree of `node` again into `new` under `parent`
/// (the top level for `None`); `old` is the interval the node had when it began. A
/// renumbering in place has `new == old` and the node's own parent.
#[derive(Debug, Clone)]
struct Relayout {
    node: String,
    parent: Option<String>,
    new: (u64, u64),
    old: (u64, u64),
    reserve: Option<(String, u128)>,
}

impl Relayout {
    fn is_renumbering(&self) -> bool {
        self.new == self.old
    }

    /// What its intent record says it does: a renumbering of the node's subtree, or a move.
    fn kind(&self) -> OpKind {
        let node = display(&self.node);
        if self.is_renumbering() {
            OpKind::Renumber { node: Some(node) }
        } else {
            OpKind::MoveNode { node, parent: self.parent.as_deref().map(display) }
        }
    }

    fn fields(&self) -> Vec<(&'static str, String)> {
        let mut out = vec![
            (OP_NEW_LO, self.new.0.to_string()),
            (OP_NEW_HI, self.new.1.to_string()),
            (OP_OLD_LO, self.old.0.to_string()),
            (OP_OLD_HI, self.old.1.to_string()),
            (OP_PLACE, if self.parent.is_some() { "node" } else { "top" }.to_owned()),
        ];
        out.extend(reserve_fields(self.reserve.as_ref()));
        if self.is_renumbering() {
            // A move's intent names its parent already.
            out.push((OP_PARENT, self.parent.clone().unwrap_or_default()));
        }
        out
    }

    fn from_intent<E: IdHierarchy>(op: &TreeOp, item: &Item) -> Result<Relayout, Error> {
        let corrupt = |reason: String| problem::<E>(TreeProblem::CorruptIntent { reason });
        let (node, moved_to_top) = match &op.kind {
            OpKind::MoveNode { node, parent } => (node, parent.is_none()),
            OpKind::Renumber { node: Some(node) } => (node, false),
            _ => return Err(corrupt(format!("{op} is not a relayout of a subtree"))),
        };
        let num = |attr: &str| {
            intent_field(item, attr)
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| corrupt(format!("attribute `{attr}` is missing or not a number")))
        };
        let stored_parent = intent_field(item, OP_PARENT).unwrap_or("");
        let at_top = match intent_field(item, OP_PLACE) {
            Some(place) => place == "top",
            // Written before the place was: an empty parent was the top level.
            None if matches!(op.kind, OpKind::MoveNode { .. }) => moved_to_top,
            None => stored_parent.is_empty(),
        };
        Ok(Relayout {
            node: esc(node),
            parent: (!at_top).then(|| stored_parent.to_owned()),
            new: (num(OP_NEW_LO)?, num(OP_NEW_HI)?),
            old: (num(OP_OLD_LO)?, num(OP_OLD_HI)?),
            reserve: reserve_of::<E>(item)?,
        })
    }
}

/// The intent fields of the numbers a renumbering keeps free under a node.
fn reserve_fields(reserve: Option<&(String, u128)>) -> [(&'static str, String); 2] {
    let (at, n) = match reserve {
        Some((at, n)) => (at.clone(), n.to_string()),
        None => (String::new(), "0".to_owned()),
    };
    [(OP_RESERVE_AT, at), (OP_RESERVE, n)]
}

/// The numbers a renumbering keeps free under a node, from its intent record.
fn reserve_of<E: IdHierarchy>(item: &Item) -> Result<Option<(String, u128)>, Error> {
    let n =
        intent_field(item, OP_RESERVE).and_then(|v| v.parse::<u128>().ok()).ok_or_else(|| {
            problem::<E>(TreeProblem::CorruptIntent {
                reason: format!("attribute `{OP_RESERVE}` is missing or not a number"),
            })
        })?;
    let at = intent_field(item, OP_RESERVE_AT).unwrap_or("");
    Ok((!at.is_empty() && n > 0).then(|| (at.to_owned(), n)))
}

/// Why a write was refused, as the typed error of a tree of `E`.
fn changed<E: IdHierarchy>(id: &str) -> Error {
    problem::<E>(TreeProblem::NodeChanged { id: display(id) })
}

impl<'a, E: IdHierarchy> NestedTree<'a, E> {
    fn check_tree(&self, node: &E) -> Result<(), Error> {
        let key = node.key();
        if key.pk() != self.pk {
            return Err(problem::<E>(TreeProblem::OtherTree {
                tree: self.pk.clone(),
                node: key.pk().to_owned(),
            }));
        }
        Ok(())
    }

    /// The record of the top level (strongly consistent).
    pub(super) async fn top(&self) -> Result<Top, Error> {
        let item = get_raw::<E>(self.db, &self.pk, &top_sk::<E>()).await?;
        Ok(match item {
            None => Top::default(),
            Some(item) => Top {
                exists: true,
                next: number(&item, TREE_NEXT_ATTR).unwrap_or(0),
                kids: number(&item, TREE_KIDS_ATTR).unwrap_or(0),
            },
        })
    }

    /// The large operation in progress on this tree (or interrupted), if any: one strongly
    /// consistent `GetItem`. A large move, delete or renumbering
    /// ([`OpKind::Renumber`](crate::tree::OpKind::Renumber): of a subtree, or of the whole
    /// tree for `node: None`).
    ///
    /// What readers see while a renumbering runs, between its transactions: every node is
    /// there, with its depth and ancestors, so reads by id ([`get`](NestedTree::get),
    /// [`parent`](NestedTree::parent), [`ancestors`](NestedTree::ancestors),
    /// [`breadcrumbs`](NestedTree::breadcrumbs)) and by absolute depth
    /// ([`roots`](NestedTree::roots), [`at_depth`](NestedTree::at_depth)) are exact. The
    /// region's root keeps its interval, so reads of it and of every node outside the
    /// region are exact too; reads by interval of a node inside the region
    /// ([`descendants`](NestedTree::descendants), [`children`](NestedTree::children),
    /// [`within`](NestedTree::within), [`subtree_size`](NestedTree::subtree_size)) may miss
    /// nodes of the region or return some of its other nodes until it ends: nodes are
    /// rewritten a transaction of 99 at a time. Once it ended (or was resumed to its end),
    /// every node is inside its parent's interval again.
    pub async fn pending(&self) -> Result<Option<TreeOp>, Error> {
        Ok(self.pending_item().await?.map(|(op, _)| op))
    }

    async fn pending_item(&self) -> Result<Option<(TreeOp, Item)>, Error> {
        let item = get_raw::<E>(self.db, &self.pk, &op_sk::<E>()).await?;
        match item {
            None => Ok(None),
            Some(item) => Ok(Some((TreeOp::from_item(&item).map_err(problem::<E>)?, item))),
        }
    }

    /// A subtree that kept changing while a bulk load is pending changed because of the
    /// load (its rows are written before the parents' counters): [`TreeProblem::Busy`].
    async fn busy_over_changed(&self, out: Result<OpReport, Error>) -> Result<OpReport, Error> {
        match out {
            Err(e) if e.is_tree_changed() => Err(self.busy().await?.unwrap_or(e)),
            out => out,
        }
    }

    /// The error of a write whose check of the intent record failed: [`TreeProblem::Busy`]
    /// with the operation in progress, or `None` when it finished meanwhile.
    async fn busy(&self) -> Result<Option<Error>, Error> {
        Ok(self.pending().await?.map(|op| problem::<E>(TreeProblem::Busy { op })))
    }

    /// Inserts a node under the parent its parent field names, which must exist
    /// ([`TreeProblem::NoParent`]): one strongly consistent `GetItem` of the parent and one
    /// `TransactWriteItems` that creates the node ([`Error::AlreadyExists`] if its id is
    /// taken) in a free slot of the parent's interval and counts it there. When the
    /// parent's gap is exhausted, the smallest enclosing subtree with room is numbered again
    /// first, or the whole tree when none has room: one transaction up to 96 nodes,
    /// resumable beyond ([`TreeProblem::NoRoom`] only when two numbers per node in `u64`
    /// cannot hold the tree). Finding that subtree costs the same at every depth (1
    /// `BatchGetItem` of the ancestors, 2 `Query` of the index around the parent), and an
    /// insert that renumbers up to 96 nodes sends 8 requests in all instead of 2 (see the
    /// table of [`NestedTree`]).
    ///
    /// The insert returns nothing more when it renumbered: to tell, count its requests
    /// ([`Db::requests`](crate::Db::requests) before and after, on a handle no other task
    /// shares: a plain insert sends 1 `TransactWriteItems`, one that renumbered 2 or more),
    /// or, with the `tracing` feature, watch its request spans. A renumbering under the
    /// intent record shows in [`pending`](NestedTree::pending) while it runs.
    ///
    /// A node deeper than `max_depth` is
    /// [`TreeProblem::TooDeep`]; an insert under a subtree that a large operation is moving,
    /// deleting or renumbering (any insert while the whole tree is renumbered) is
    /// [`TreeProblem::Busy`]. Through `&mut`, a versioned node's version is updated.
    pub async fn insert<'b>(&'b self, node: impl Into<Target<'b, E>>) -> Result<(), Error> {
        let target = node.into();
        let n = target.get();
        self.check_tree(n)?;
        let id = id_of(n);
        let parent = parent_of(n);
        if parent.as_deref() == Some(id.as_str()) {
            let id = display(&id);
            return Err(problem::<E>(TreeProblem::Cycle { node: id.clone(), parent: id }));
        }
        let (_, next) = next_version::<E>(n.version())?;
        let stamp = self.db.stamp(true);
        let base = to_item_at(n, next, stamp)?;
        let (id, parent, base) = (&id, parent.as_deref(), &base);
        retry::on_conflict(
            CONFLICTS,
            move |_| async move { self.try_insert(id, parent, base).await },
        )
        .await?;
        let mut target = target;
        target.written(next, Some(stamp));
        Ok(())
    }

    async fn try_insert(
        &self,
        id: &str,
        parent: Option<&str>,
        base: &Item,
    ) -> Result<Try<()>, Error> {
        let table = self.db.table_name();
        // A renumbering makes room at most once per try.
        for _ in 0..2 {
            let (p_raw, top) = match parent {
                Some(p) => match self.raw(p).await? {
                    Some(raw) => (Some(raw), Top::default()),
                    None => {
                        return Err(problem::<E>(TreeProblem::NoParent { parent: display(p) }));
                    }
                },
                None => (None, self.top().await?),
            };
            let (depth, chain) = match &p_raw {
                Some(p) => (p.depth + 1, [p.chain.clone(), vec![p.id.clone()]].concat()),
                None => (1, Vec::new()),
            };
            if depth > E::TREE.max_depth {
                return Err(problem::<E>(TreeProblem::TooDeep {
                    id: display(id),
                    depth,
                    max: E::TREE.max_depth,
                }));
            }
            let free = match &p_raw {
                Some(p) => slot(p.next, p.rgt, p.kids == 0 && p.next == p.lft),
                None => top_slot(top.next),
            };
            let Some((lft, rgt)) = free else {
                // Boxed: finding room is rare and its reads make a large future, which
                // would otherwise sit inline in every insert's (and on a caller's stack).
                Box::pin(self.make_room(p_raw.as_ref(), layout::need(1))).await?;
                continue;
            };
            let place = Place { lft, rgt, next: lft, depth, chain: chain.clone() };
            let mut tx = self.db.transaction();
            let (item, size) = node_put::<E>(table, base, &place)?;
            let info = ActionInfo {
                entity: E::NAME,
                pk: self.pk.clone(),
                sk: Some(node_sk::<E>(id)),
                explain: Some((
                    Guard { kind: WriteKind::Create, expected_version: None },
                    explain::<E>,
                )),
                unique: None,
            };
            tx = tx.push_raw(info, item, size);
            let w = match &p_raw {
                Some(p) => bump::<E>(table, &self.pk, p, Some(rgt), 1)?,
                None => top_update::<E>(table, &self.pk, &top, Some(rgt), 1)?,
            };
            tx = tx.raw(E::NAME, (self.pk.clone(), Some(w.sk)), w.item, w.size);
            // Refused while the subtree of an ancestor, or the whole tree, is renumbered,
            // moved or deleted.
            let mut guarded = chain;
            guarded.push(id.to_owned());
            guarded.push(WHOLE_TREE.to_owned());
            let op_index = tx.len();
            let (item, size) = op_check::<E>(table, &self.pk, &op_sk::<E>(), Some(&guarded))?;
            tx = tx.raw(E::NAME, (self.pk.clone(), Some(op_sk::<E>())), item, size);
            let err = match tx.send().await {
                Ok(()) => return Ok(Try::Done(())),
                Err(err) => err,
            };
            let (conditions, other) = failures(&err);
            if conditions.contains(&op_index) {
                return match self.busy().await? {
                    Some(busy) => Err(busy),
                    None => Ok(Try::Again(changed::<E>(id))),
                };
            }
            return match conditions.first() {
                Some(0) => Err(action_error(err, 0)),
                Some(_) => Ok(Try::Again(changed::<E>(id))),
                None if only_conflict(&conditions, other, &err) => Ok(Try::Again(changed::<E>(id))),
                None => Err(err),
            };
        }
        Ok(Try::Again(changed::<E>(id)))
    }

    /// Makes `extra` numbers free after the last child of `parent` (the top level for
    /// `None`): numbers again the smallest region around it (the parent's subtree, then its
    /// ancestors') that keeps three quarters of its numbers free, else the whole tree if it
    /// fits at all ([`TreeProblem::NoRoom`] otherwise). One transaction, each node
    /// conditioned on what was read, when the region has at most [`MAX_TX_NODES`] nodes; a
    /// resumable renumbering beyond (the intent refuses every write to the region, so it
    /// cannot grow under the renumbering; what it grew by before is read again under it).
    ///
    /// Finding the region costs the same at any depth: the ancestors are one `BatchGetItem`
    /// (the parent names them), and their regions are counted from the index around the
    /// parent's `lft`, where every one of them is contiguous ([`Self::room_around`]).
    async fn make_room(&self, parent: Option<&Raw<E>>, extra: u128) -> Result<(), Error> {
        if let Some(p) = parent {
            let up = self.read_raw(&p.chain).await?;
            let around: Vec<&Raw<E>> = std::iter::once(p).chain(up.iter().rev()).collect();
            if let Some((a, ids)) = self.room_around(&around, extra).await? {
                let root = Root {
                    id: Some(a.id.clone()),
                    lft: a.lft,
                    rgt: a.rgt,
                    depth: a.depth,
                    chain: a.chain.clone(),
                };
                // The parent keeps a quarter of the region's spare numbers: the writes that
                // exhausted its gap are likely to go on there.
                let reserve = |size: usize| {
                    let inner = u128::from(a.rgt - a.lft - 1);
                    (p.id.as_str(), extra.max(inner.saturating_sub(layout::need(size as u64)) / 4))
                };
                if ids.len() <= MAX_TX_NODES {
                    let region = self.read_region(Some(&a.id), (a.lft, a.rgt), a.kids, Some(&ids));
                    let region = region.await?;
                    let size = region.len();
                    if size > MAX_TX_NODES || !layout::has_room(a.lft, a.rgt, size as u64, extra) {
                        // The index was behind: the caller reads again and comes back.
                        return Ok(());
                    }
                    let reserve = Some(reserve(size));
                    return self
                        .renumber_now(root, Some(a), &region, Top::default(), reserve)
                        .await;
                }
                let relayout = Relayout {
                    node: a.id.clone(),
                    parent: a.parent().map(str::to_owned),
                    new: (a.lft, a.rgt),
                    old: (a.lft, a.rgt),
                    reserve: Some(reserve(ids.len())).map(|(at, n)| (at.to_owned(), n)),
                };
                let mut quiet: ProgressFn<'_> = Box::new(|_| {});
                return self.start_relayout(relayout, Take::Nothing, &mut quiet).await.map(|_| ());
            }
        }
        // The whole tree: no region inside it has room. It is numbered again if it fits at
        // all (two numbers per node): whatever room the numbers have is better spread than
        // left where it is.
        let top = self.top().await?;
        let region = self.read_region(None, layout::TOP, top.kids, None).await?;
        let inner = u128::from(layout::TOP.1 - layout::TOP.0) - 1;
        let needed = layout::need(region.len() as u64);
        if needed.saturating_add(extra) > inner {
            return Err(problem::<E>(TreeProblem::NoRoom {
                parent: parent.map(|p| display(&p.id)),
                nodes: region.len(),
            }));
        }
        // A quarter of the spare numbers stay where the gap ran out (the top level's own
        // gap for a top-level insert).
        let at = parent.map_or(WHOLE_TREE, |p| p.id.as_str());
        let reserve = (at, extra.max((inner - needed) / 4));
        if region.len() <= MAX_TX_NODES {
            let root = Root {
                id: None,
                lft: layout::TOP.0,
                rgt: layout::TOP.1,
                depth: 0,
                chain: Vec::new(),
            };
            return self.renumber_now(root, None, &region, top, Some(reserve)).await;
        }
        let mut quiet: ProgressFn<'_> = Box::new(|_| {});
        self.start_tree_renumbering((reserve.0.to_owned(), reserve.1), &mut quiet).await.map(|_| ())
    }

    /// The innermost of `around` (the parent, then its ancestors up to the top-level one)
    /// whose region keeps three quarters of its numbers free with `extra` more, with the
    /// escaped ids of the region's nodes as the index has them; `None` when none has room.
    ///
    /// The index is sorted by `lft`, so the nodes of every region around the parent are
    /// contiguous around the parent's `lft`: two keys-only queries, sent together, one down
    /// from it and one up, each of at most [`MAX_TX_NODES`] + 1 entries within the outermost
    /// interval, count every region of up to [`MAX_TX_NODES`] nodes exactly (a region
    /// reaching past what they read holds more). Only when none of those has room do they
    /// read on, [`GROW`] times as many entries each time, until a region with room or the
    /// whole outermost one is counted: what is read grows with the size of the region found,
    /// never with the depth.
    async fn room_around<'r>(
        &self,
        around: &[&'r Raw<E>],
        extra: u128,
    ) -> Result<Option<(&'r Raw<E>, Vec<String>)>, Error> {
        let (Some(p), Some(outer)) = (around.first(), around.last()) else {
            return Ok(None);
        };
        let (floor, ceil) = (outer.lft.saturating_add(1), outer.rgt.saturating_sub(1));
        // Every entry whose `lft` is in `low..=high` has been read.
        let (mut low, mut high) = (p.lft.saturating_add(1), p.lft);
        let mut entries: Vec<(u64, Option<String>)> = Vec::new();
        let mut limit = MAX_TX_NODES + 1;
        loop {
            for a in around {
                if a.lft.saturating_add(1) < low || a.rgt.saturating_sub(1) > high {
                    break;
                }
                let inside = || {
                    entries
                        .iter()
                        .filter(|(lft, _)| *lft > a.lft && *lft < a.rgt)
                        .filter_map(|(_, id)| id.as_ref())
                };
                // Counted for every ancestor tried; the ids copied only for the one chosen.
                if layout::has_room(a.lft, a.rgt, inside().count() as u64, extra) {
                    return Ok(Some((a, inside().cloned().collect())));
                }
            }
            if low <= floor && high >= ceil {
                return Ok(None);
            }
            let (down, up) =
                ((low > floor).then(|| (floor, low - 1)), (high < ceil).then(|| (high + 1, ceil)));
            let read = |range: Option<(u64, u64)>, descending: bool| async move {
                match range {
                    Some(range) => self.index_entries(range, limit, descending).await,
                    None => Ok(Vec::new()),
                }
            };
            let (down, up) =
                futures_util::future::try_join(read(down, true), read(up, false)).await?;
            if low > floor {
                low = if down.len() < limit { floor } else { down.last().map_or(floor, |e| e.0) };
            }
            if high < ceil {
                high = if up.len() < limit { ceil } else { up.last().map_or(ceil, |e| e.0) };
            }
            entries.extend(down.into_iter().chain(up));
            limit = limit.saturating_mul(GROW);
        }
    }

    /// Writes the intent of a renumbering of the whole tree, then runs it. Every insert,
    /// move and delete of the tree is refused ([`TreeProblem::Busy`]) until it is done;
    /// [`TreeProblem::Busy`] too when another large operation holds the tree.
    async fn start_tree_renumbering(
        &self,
        reserve: (String, u128),
        progress: &mut (dyn FnMut(Progress) + Send + '_),
    ) -> Result<usize, Error> {
        let op = TreeOp {
            kind: OpKind::Renumber { node: None },
            phase: OpPhase::Copy,
            token: crate::ops::idempotency_token(),
            epoch: 0,
        };
        let mut fields = op.fields();
        fields.extend(reserve_fields(Some(&reserve)));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(a, v)| (*a, v.as_str())).collect();
        let op_key = op_sk::<E>();
        let put = crate::tree::raw::put_intent::<E>(self.db, &self.pk, &op_key, &fields);
        if let Err(stored) = put.await? {
            return Err(match stored.as_ref().map(TreeOp::from_item) {
                Some(Ok(op)) => problem::<E>(TreeProblem::Busy { op }),
                Some(Err(corrupt)) => problem::<E>(corrupt),
                None => match self.busy().await? {
                    Some(busy) => busy,
                    None => changed::<E>(""),
                },
            });
        }
        let n = self.renumber_tree(&op, Some(&reserve), progress).await?;
        clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
        Ok(n)
    }

    /// Runs (or finishes) the renumbering of the whole tree under the intent `op`: every
    /// node read (one range query over all numbers, read again strongly consistently: the
    /// intent refuses every write meanwhile, so this is the whole tree), numbered again from
    /// its shape alone (siblings in id order, so a resumed run computes the same numbers),
    /// the nodes not yet in their place rewritten in fenced transactions of 99, then the top
    /// level's high-water mark. Returns the nodes rewritten.
    async fn renumber_tree(
        &self,
        op: &TreeOp,
        reserve: Option<&(String, u128)>,
        progress: &mut (dyn FnMut(Progress) + Send + '_),
    ) -> Result<usize, Error> {
        let table = self.db.table_name();
        let top = self.top().await?;
        let region = self.read_region(None, layout::TOP, top.kids, None).await?;
        let root =
            Root { id: None, lft: layout::TOP.0, rgt: layout::TOP.1, depth: 0, chain: Vec::new() };
        let members: Vec<(String, Option<String>)> =
            region.iter().map(|r| (r.id.clone(), r.parent().map(str::to_owned))).collect();
        let reserve = reserve.map(|(at, n)| (at.as_str(), *n));
        // Without what it keeps free, a tree that grew before its intent was written fits.
        let Some((next, places)) =
            plan(&root, &members, reserve).or_else(|| plan(&root, &members, None))
        else {
            return Err(problem::<E>(TreeProblem::NoRoom { parent: None, nodes: region.len() }));
        };
        let by_id: HashMap<&str, &Raw<E>> = region.iter().map(|r| (r.id.as_str(), r)).collect();
        let mut writes = Vec::new();
        for (id, place) in &places {
            if let Some(raw) = by_id.get(id.as_str())
                && !in_place(raw, place)
            {
                writes.push(vec![rewrite::<E>(table, &self.pk, raw, place, None, 0, false)?]);
            }
        }
        let total = writes.len() + 1;
        let rewritten = writes.len();
        let mut done = |n: usize| progress(Progress { phase: OpPhase::Copy, done: n, total });
        fenced_groups::<E>(self.db, &self.pk, &op_sk::<E>(), op, writes, &mut done).await?;
        if top.exists && top.next == next {
            progress(Progress { phase: OpPhase::Switch, done: rewritten, total });
            return Ok(rewritten);
        }
        // The top level's gap: the room the renumbering made.
        set_phase::<E>(self.db, &self.pk, &op_sk::<E>(), op, OpPhase::Switch.as_str()).await?;
        let op = TreeOp { phase: OpPhase::Switch, ..op.clone() };
        let mark = top_update::<E>(table, &self.pk, &top, Some(next), 0)?;
        let mut none = |_: usize| {};
        fenced_groups::<E>(self.db, &self.pk, &op_sk::<E>(), &op, vec![vec![mark]], &mut none)
            .await?;
        progress(Progress { phase: OpPhase::Switch, done: rewritten + 1, total });
        Ok(rewritten + 1)
    }

    /// Numbers the region below `root` again in one transaction: every node of it rewritten,
    /// conditioned on what was read, and the root's high-water mark.
    async fn renumber_now(
        &self,
        root: Root,
        root_raw: Option<&Raw<E>>,
        region: &[Raw<E>],
        top: Top,
        reserve: Option<(&str, u128)>,
    ) -> Result<(), Error> {
        let table = self.db.table_name();
        let id = root.id.clone().unwrap_or_default();
        let members: Vec<(String, Option<String>)> =
            region.iter().map(|r| (r.id.clone(), r.parent().map(str::to_owned))).collect();
        let Some((next, places)) = plan(&root, &members, reserve) else {
            return Err(changed::<E>(&id));
        };
        let by_id: HashMap<&str, &Raw<E>> = region.iter().map(|r| (r.id.as_str(), r)).collect();
        let mut tx = self.db.transaction();
        for (node, place) in &places {
            let Some(raw) = by_id.get(node.as_str()) else {
                return Err(changed::<E>(&id));
            };
            let w = rewrite::<E>(table, &self.pk, raw, place, None, 0, true)?;
            tx = tx.raw(E::NAME, (self.pk.clone(), Some(w.sk)), w.item, w.size);
        }
        let w = match root_raw {
            Some(a) => {
                let place =
                    Place { lft: a.lft, rgt: a.rgt, next, depth: a.depth, chain: a.chain.clone() };
                rewrite::<E>(table, &self.pk, a, &place, None, 0, true)?
            }
            None => top_update::<E>(table, &self.pk, &top, Some(next), 0)?,
        };
        tx = tx.raw(E::NAME, (self.pk.clone(), Some(w.sk)), w.item, w.size);
        let op_index = tx.len();
        let (item, size) = op_check::<E>(table, &self.pk, &op_sk::<E>(), None)?;
        tx = tx.raw(E::NAME, (self.pk.clone(), Some(op_sk::<E>())), item, size);
        match tx.send().await {
            Ok(()) => Ok(()),
            Err(err) => {
                let (conditions, other) = failures(&err);
                if conditions.contains(&op_index)
                    && let Some(busy) = self.busy().await?
                {
                    return Err(busy);
                }
                if conditions.is_empty() && !only_conflict(&conditions, other, &err) {
                    return Err(err);
                }
                // Read again by the caller's next try.
                Ok(())
            }
        }
    }

    /// Writes the intent of a relayout and reserves its interval under the new parent (a
    /// move), in one transaction; then runs it. `Ok(None)` when the parent's gap changed
    /// meanwhile (nothing written; the caller reads again).
    async fn start_relayout(
        &self,
        r: Relayout,
        take: Take<'_, E>,
        progress: &mut (dyn FnMut(Progress) + Send + '_),
    ) -> Result<Option<usize>, Error> {
        let table = self.db.table_name();
        let op = TreeOp {
            kind: r.kind(),
            phase: OpPhase::Copy,
            token: crate::ops::idempotency_token(),
            epoch: 0,
        };
        let mut fields = op.fields();
        fields.extend(r.fields());
        let fields: Vec<(&str, &str)> = fields.iter().map(|(a, v)| (*a, v.as_str())).collect();
        let intent = intent_item::<E>(&self.pk, &op_sk::<E>(), &fields);
        let mut x = ExprBuilder::default();
        let pk_name = x.name(<E::Table as Table>::PK);
        let put = Action::put(intent).guarded(format!("attribute_not_exists({pk_name})"), x);
        let size = put.size();
        let mut tx = self.db.transaction().raw(
            E::NAME,
            (self.pk.clone(), Some(op_sk::<E>())),
            put.into_transact_item(table)?,
            size,
        );
        // A move takes its interval from the new parent's gap now; a renumbering checks
        // that its region's root is still the one read.
        let w = match take {
            Take::Parent(p) => bump::<E>(table, &self.pk, p, Some(r.new.1), 0)?,
            Take::Top(top) => top_update::<E>(table, &self.pk, &top, Some(r.new.1), 0)?,
            Take::Nothing => {
                let Some(a) = self.raw(&r.node).await? else {
                    return Err(problem::<E>(TreeProblem::NoNode { id: display(&r.node) }));
                };
                bump::<E>(table, &self.pk, &a, None, 0)?
            }
        };
        tx = tx.raw(E::NAME, (self.pk.clone(), Some(w.sk)), w.item, w.size);
        if let Err(err) = tx.send().await {
            let (conditions, other) = failures(&err);
            if conditions.contains(&0) {
                return Err(self.busy().await?.unwrap_or_else(|| changed::<E>(&r.node)));
            }
            if conditions.is_empty() && !only_conflict(&conditions, other, &err) {
                return Err(err);
            }
            return Ok(None);
        }
        let n = self.run_relayout(&op, &r, progress).await?;
        clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
        Ok(Some(n))
    }

    /// The nodes of a relayout's subtree, wherever they are (the old interval or the new
    /// one), strongly consistent and complete; the subtree's root first.
    async fn relayout_nodes(&self, r: &Relayout) -> Result<Vec<Raw<E>>, Error> {
        retry::on_conflict(INDEX_LAG, move |_| async move {
            let Some(root) = self.raw(&r.node).await? else {
                return Err(problem::<E>(TreeProblem::CorruptIntent {
                    reason: format!("the node {} of the operation is gone", display(&r.node)),
                }));
            };
            let mut items = self.raw_range(r.old.0, r.old.1).keys().await?;
            if r.new != r.old {
                items.extend(self.raw_range(r.new.0, r.new.1).keys().await?);
            }
            let mut ids = node_ids::<E>(&items);
            ids.retain(|id| *id != r.node);
            ids.sort_unstable();
            ids.dedup();
            let mut found = if ids.is_empty() { Vec::new() } else { self.read_raw(&ids).await? };
            found.retain(|n| n.chain.contains(&r.node));
            let inside: HashSet<&str> = std::iter::once(root.id.as_str())
                .chain(found.iter().map(|n| n.id.as_str()))
                .collect();
            let parents_in = found.iter().all(|n| n.parent().is_some_and(|p| inside.contains(p)));
            let kids: u64 = root.kids + found.iter().map(|n| n.kids).sum::<u64>();
            if parents_in && kids == found.len() as u64 {
                let mut all = vec![root];
                all.extend(found);
                return Ok(Try::Done(all));
            }
            Ok(Try::Again(changed::<E>(&r.node)))
        })
        .await
    }

    /// Runs (or finishes) a relayout under the intent `op`: the subtree's nodes rewritten
    /// into their places, fenced, then the node itself with its new parent and the parents'
    /// counters (the switch). Safe to run again: nodes in their place are not written.
    /// Returns the nodes rewritten.
    async fn run_relayout(
        &self,
        op: &TreeOp,
        r: &Relayout,
        progress: &mut (dyn FnMut(Progress) + Send + '_),
    ) -> Result<usize, Error> {
        let table = self.db.table_name();
        let nodes = self.relayout_nodes(r).await?;
        let Some((x, below)) = nodes.split_first() else {
            return Ok(0);
        };
        let (p_raw, top) = match &r.parent {
            Some(p) => match self.raw(p).await? {
                Some(raw) => (Some(raw), Top::default()),
                None => {
                    return Err(problem::<E>(TreeProblem::CorruptIntent {
                        reason: format!("the new parent {} is gone", display(p)),
                    }));
                }
            },
            None => (None, self.top().await?),
        };
        let (depth, chain) = match &p_raw {
            Some(p) => (p.depth + 1, [p.chain.clone(), vec![p.id.clone()]].concat()),
            None => (1, Vec::new()),
        };
        let root = Root {
            id: Some(x.id.clone()),
            lft: r.new.0,
            rgt: r.new.1,
            depth,
            chain: chain.clone(),
        };
        let members: Vec<(String, Option<String>)> =
            below.iter().map(|n| (n.id.clone(), n.parent().map(str::to_owned))).collect();
        let reserve = r.reserve.as_ref().map(|(at, n)| (at.as_str(), *n));
        // Without what it keeps free, a region that grew before its intent was written fits.
        let Some((next, places)) =
            plan(&root, &members, reserve).or_else(|| plan(&root, &members, None))
        else {
            return Err(problem::<E>(TreeProblem::CorruptIntent {
                reason: format!("the subtree of {} does not fit its new interval", display(&x.id)),
            }));
        };
        let by_id: HashMap<&str, &Raw<E>> = below.iter().map(|n| (n.id.as_str(), n)).collect();
        let mut writes = Vec::new();
        for (id, place) in &places {
            if let Some(raw) = by_id.get(id.as_str())
                && !in_place(raw, place)
            {
                writes.push(vec![rewrite::<E>(table, &self.pk, raw, place, None, 0, false)?]);
            }
        }
        let total = writes.len() + 1;
        let mut done = |n: usize| progress(Progress { phase: OpPhase::Copy, done: n, total });
        let rewritten = writes.len();
        fenced_groups::<E>(self.db, &self.pk, &op_sk::<E>(), op, writes, &mut done).await?;
        // The switch: the node in its new interval, under its new parent.
        let place = Place { lft: r.new.0, rgt: r.new.1, next, depth, chain };
        let moves = x.parent() != r.parent.as_deref();
        if !moves && in_place(x, &place) {
            progress(Progress { phase: OpPhase::Switch, done: rewritten, total });
            return Ok(rewritten);
        }
        // From here on the move can only be finished.
        set_phase::<E>(self.db, &self.pk, &op_sk::<E>(), op, OpPhase::Switch.as_str()).await?;
        progress(Progress { phase: OpPhase::Switch, done: rewritten, total });
        let mut group = Vec::new();
        let fields = if moves { Some(parent_change::<E>(x, r.parent.as_deref())?) } else { None };
        group.push(rewrite::<E>(table, &self.pk, x, &place, fields.as_ref(), 0, false)?);
        if moves {
            group.push(match x.parent() {
                Some(old) => counter::<E>(table, &self.pk, old, -1)?,
                None => top_update::<E>(table, &self.pk, &Top { exists: true, ..top }, None, -1)?,
            });
            group.push(match &p_raw {
                Some(p) => counter::<E>(table, &self.pk, &p.id, 1)?,
                None => top_update::<E>(table, &self.pk, &Top { exists: true, ..top }, None, 1)?,
            });
        }
        let mut none = |_: usize| {};
        let op = TreeOp { phase: OpPhase::Switch, ..op.clone() };
        fenced_groups::<E>(self.db, &self.pk, &op_sk::<E>(), &op, vec![group], &mut none).await?;
        progress(Progress { phase: OpPhase::Switch, done: rewritten + 1, total });
        Ok(rewritten + 1)
    }

    /// Finishes an interrupted large operation: a move or renumbering is run to its end
    /// (nodes already in place are not written again), a delete deletes what is left of its
    /// subtree. `Ok(None)` when nothing was pending.
    ///
    /// Safe while the original operation still runs: `resume` advances the intent's epoch
    /// before it writes, and every transaction of the operation checks that epoch, so the
    /// original writer stops with [`TreeProblem::Superseded`].
    pub async fn resume(
        &self,
        progress: impl FnMut(Progress) + Send,
    ) -> Result<Option<OpReport>, Error> {
        let Some((op, item)) = self.pending_item().await? else {
            return Ok(None);
        };
        let mut progress: ProgressFn<'_> = Box::new(progress);
        match &op.kind {
            OpKind::Load { .. } => crate::tree::bulk::resume(self, op, &mut progress).await,
            OpKind::DeleteNode { node } => {
                let x = esc(node);
                let Some(op) = take_over::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await? else {
                    return Ok(None);
                };
                let nodes = self.delete_all(&x, Some(&op), &mut progress).await?;
                clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
                Ok(Some(OpReport { nodes, resumable: true }))
            }
            OpKind::Renumber { node: None } => {
                let reserve = reserve_of::<E>(&item)?;
                let Some(op) = take_over::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await? else {
                    return Ok(None);
                };
                let nodes = self.renumber_tree(&op, reserve.as_ref(), &mut progress).await?;
                clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
                Ok(Some(OpReport { nodes, resumable: true }))
            }
            OpKind::MoveNode { .. } | OpKind::Renumber { node: Some(_) } => {
                let r = Relayout::from_intent::<E>(&op, &item)?;
                let Some(op) = take_over::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await? else {
                    return Ok(None);
                };
                let nodes = self.run_relayout(&op, &r, &mut progress).await?;
                clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
                Ok(Some(OpReport { nodes, resumable: true }))
            }
            _ => Err(problem::<E>(TreeProblem::CorruptIntent {
                reason: format!("{op} is not an operation of a nested-set tree"),
            })),
        }
    }

    /// Undoes an interrupted large move whose node has not switched to its new parent yet:
    /// its subtree is numbered back into its old interval (the interval it took under the
    /// new parent stays unused). `Ok(None)` when nothing was pending. A delete, a
    /// renumbering or a move past its switch is [`TreeProblem::CannotRollBack`]: finish it
    /// with [`resume`](NestedTree::resume). (A renumbering changes no node's place in the
    /// tree, only numbers: finishing it is what gives the tree back consistent intervals,
    /// and the old numbers are not kept.)
    pub async fn rollback(&self) -> Result<Option<OpReport>, Error> {
        let Some((op, item)) = self.pending_item().await? else {
            return Ok(None);
        };
        let cannot = |op: TreeOp| Err(problem::<E>(TreeProblem::CannotRollBack { op }));
        if matches!(op.kind, OpKind::Load { .. }) {
            return crate::tree::bulk::rollback(self, op).await;
        }
        if !matches!(op.kind, OpKind::MoveNode { .. }) {
            return cannot(op);
        }
        let r = Relayout::from_intent::<E>(&op, &item)?;
        let Some(x) = self.raw(&r.node).await? else {
            return cannot(op);
        };
        if op.phase != OpPhase::Copy || r.is_renumbering() || x.parent() == r.parent.as_deref() {
            return cannot(op);
        }
        let Some(op) = take_over::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await? else {
            return Ok(None);
        };
        let back = Relayout {
            node: r.node.clone(),
            parent: x.parent().map(str::to_owned),
            new: r.old,
            old: r.new,
            reserve: None,
        };
        let mut progress: ProgressFn<'_> = Box::new(|_| {});
        let nodes = self.run_relayout(&op, &back, &mut progress).await?;
        clear_intent::<E>(self.db, &self.pk, &op_sk::<E>(), &op).await?;
        Ok(Some(OpReport { nodes, resumable: true }))
    }

    /// Moves the node `id` and its subtree under `parent`; see [`NestedMove`].
    pub fn move_subtree(
        &self,
        id: impl KeyArg<E::Id>,
        parent: impl KeyArg<E::Id>,
    ) -> NestedMove<'a, 'static, E> {
        NestedMove {
            tree: self.clone(),
            id: arg_text::<E>(&id),
            parent: Some(arg_text::<E>(&parent)),
            progress: None,
            limit: MAX_TX_NODES,
        }
    }

    /// Moves the node `id` and its subtree under `parent`: the same as
    /// [`move_subtree`](NestedTree::move_subtree), under the name all strategies share.
    pub fn move_under(
        &self,
        id: impl KeyArg<E::Id>,
        parent: impl KeyArg<E::Id>,
    ) -> NestedMove<'a, 'static, E> {
        self.move_subtree(id, parent)
    }

    /// Moves the node `id` and its subtree to the top level; see [`NestedMove`].
    pub fn move_to_top(&self, id: impl KeyArg<E::Id>) -> NestedMove<'a, 'static, E> {
        NestedMove {
            tree: self.clone(),
            id: arg_text::<E>(&id),
            parent: None,
            progress: None,
            limit: MAX_TX_NODES,
        }
    }

    async fn move_node(
        &self,
        x: &str,
        p: Option<&str>,
        limit: usize,
        progress: &mut ProgressFn<'_>,
    ) -> Result<OpReport, Error> {
        if p == Some(x) {
            let x = display(x);
            return Err(problem::<E>(TreeProblem::Cycle { node: x.clone(), parent: x }));
        }
        let progress = std::sync::Mutex::new(progress);
        let progress = &progress;
        retry::on_conflict(CONFLICTS, move |_| async move {
            let mut relay = |report: Progress| {
                let mut f = progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                (**f)(report);
            };
            self.try_move(x, p, limit, &mut relay).await
        })
        .await
    }

    async fn try_move(
        &self,
        x: &str,
        p: Option<&str>,
        limit: usize,
        progress: &mut (dyn FnMut(Progress) + Send + '_),
    ) -> Result<Try<OpReport>, Error> {
        let table = self.db.table_name();
        for _ in 0..2 {
            let Some(x_raw) = self.raw(x).await? else {
                return Err(problem::<E>(TreeProblem::NoNode { id: display(x) }));
            };
            let (p_raw, top) = match p {
                Some(p) => match self.raw(p).await? {
                    Some(raw) => (Some(raw), Top::default()),
                    None => {
                        return Err(problem::<E>(TreeProblem::NoParent { parent: display(p) }));
                    }
                },
                None => (None, self.top().await?),
            };
            if p_raw.as_ref().is_some_and(|r| r.chain.iter().any(|a| a == x)) {
                return Err(problem::<E>(TreeProblem::Cycle {
                    node: display(x),
                    parent: p.map(display).unwrap_or_default(),
                }));
            }
            if x_raw.parent() == p {
                return Ok(Try::Done(OpReport { nodes: 0, resumable: false }));
            }
            let below =
                self.read_region(Some(&x_raw.id), (x_raw.lft, x_raw.rgt), x_raw.kids, None).await?;
            let size = below.len() + 1;
            let (depth, chain) = match &p_raw {
                Some(p) => (p.depth + 1, [p.chain.clone(), vec![p.id.clone()]].concat()),
                None => (1, Vec::new()),
            };
            let deepest = below.iter().map(|n| n.depth).max().unwrap_or(x_raw.depth);
            let new_deepest = deepest.saturating_sub(x_raw.depth).saturating_add(depth);
            if new_deepest > E::TREE.max_depth {
                return Err(problem::<E>(TreeProblem::TooDeep {
                    id: display(x),
                    depth: new_deepest,
                    max: E::TREE.max_depth,
                }));
            }
            let gap = match &p_raw {
                Some(p) => (p.next, p.rgt),
                None => (top.next, layout::TOP.1),
            };
            let Some((lft, rgt)) = move_slot(gap, size, p.is_none()) else {
                Box::pin(self.make_room(p_raw.as_ref(), layout::need(size as u64) * 2)).await?;
                continue;
            };
            if size > limit.min(MAX_TX_NODES) {
                let r = Relayout {
                    node: x.to_owned(),
                    parent: p.map(str::to_owned),
                    new: (lft, rgt),
                    old: (x_raw.lft, x_raw.rgt),
                    reserve: None,
                };
                let take = match &p_raw {
                    Some(raw) => Take::Parent(raw),
                    None => Take::Top(top),
                };
                let nodes = self.start_relayout(r, take, progress).await?;
                return match nodes {
                    Some(nodes) => Ok(Try::Done(OpReport { nodes, resumable: true })),
                    None => Ok(Try::Again(changed::<E>(x))),
                };
            }
            let root = Root { id: Some(x.to_owned()), lft, rgt, depth, chain: chain.clone() };
            let members: Vec<(String, Option<String>)> =
                below.iter().map(|n| (n.id.clone(), n.parent().map(str::to_owned))).collect();
            let Some((next, places)) = plan(&root, &members, None) else {
                return Ok(Try::Again(changed::<E>(x)));
            };
            let by_id: HashMap<&str, &Raw<E>> = below.iter().map(|n| (n.id.as_str(), n)).collect();
            let mut tx = self.db.transaction();
            let fields = parent_change::<E>(&x_raw, p)?;
            let place = Place { lft, rgt, next, depth, chain };
            let w = rewrite::<E>(table, &self.pk, &x_raw, &place, Some(&fields), 0, true)?;
            tx = tx.raw(E::NAME, (self.pk.clone(), Some(w.sk)), w.item, w.size);
            for (id, place) in &places {
                let Some(raw) = by_id.get(id.as_str()) else {
                    return Ok(Try::Again(changed::<E>(x)));
                };
                let w = rewrite::<E>(table, &self.pk, raw, place, None, 0, true)?;
                tx = tx.raw(E::NAME, (self.pk.clone(), Some(w.sk)), w.item, w.size);
            }
            let old = match x_raw.parent() {
                Some(old) => counter::<E>(table, &self.pk, old, -1)?,
                None => top_update::<E>(table, &self.pk, &Top { exists: true, ..top }, None, -1)?,
            };
            tx = tx.raw(E::NAME, (self.pk.clone(), Some(old.sk)), old.item, old.size);
            let new = match &p_raw {
                Some(p) => bump::<E>(table, &self.pk, p, Some(rgt), 1)?,
                None => top_update::<E>(table, &self.pk, &top, Some(rgt), 1)?,
            };
            tx = tx.raw(E::NAME, (self.pk.clone(), Some(new.sk)), new.item, new.size);
            let op_index = tx.len();
            let (item, bytes) = op_check::<E>(table, &self.pk, &op_sk::<E>(), None)?;
            tx = tx.raw(E::NAME, (self.pk.clone(), Some(op_sk::<E>())), item, bytes);
            let err = match tx.send().await {
                Ok(()) => {
                    progress(Progress { phase: OpPhase::Switch, done: size, total: size });
                    return Ok(Try::Done(OpReport { nodes: size, resumable: false }));
                }
                Err(err) => err,
            };
            let (conditions, other) = failures(&err);
            if conditions.contains(&op_index) {
                return match self.busy().await? {
                    Some(busy) => Err(busy),
                    None => Ok(Try::Again(changed::<E>(x))),
                };
            }
            if conditions.is_empty() && !only_conflict(&conditions, other, &err) {
                return Err(err);
            }
            return Ok(Try::Again(changed::<E>(x)));
        }
        Ok(Try::Again(changed::<E>(x)))
    }

    /// Deletes the node `id` and its whole subtree; see [`NestedDelete`].
    pub fn delete_subtree(&self, id: impl KeyArg<E::Id>) -> NestedDelete<'a, 'static, E> {
        NestedDelete {
            tree: self.clone(),
            id: arg_text::<E>(&id),
            progress: None,
            limit: MAX_TX_NODES,
        }
    }

    /// Deletes the subtree of `x` (escaped): read (one range query, read again strongly
    /// consistently), then deleted in transactions of up to [`MAX_TX_NODES`] nodes, deepest
    /// intervals first, each node conditioned on its revision and interval, and the parents
    /// that stay counting their deleted children. Under a large delete's intent `fence`, each
    /// transaction also checks the intent. Returns the nodes deleted (0 for a missing node).
    async fn delete_all(
        &self,
        x: &str,
        fence: Option<&TreeOp>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<usize, Error> {
        let table = self.db.table_name();
        let done = std::sync::atomic::AtomicUsize::new(0);
        let progress = std::sync::Mutex::new(progress);
        let (done, progress) = (&done, &progress);
        use std::sync::atomic::Ordering::Relaxed;
        retry::on_conflict(CONFLICTS, move |_| async move {
            let Some(root) = self.raw(x).await? else {
                return Ok(Try::Done(done.load(Relaxed)));
            };
            let below =
                self.read_region(Some(&root.id), (root.lft, root.rgt), root.kids, None).await?;
            let top = if root.parent().is_none() { self.top().await? } else { Top::default() };
            let mut nodes: Vec<&Raw<E>> = std::iter::once(&root).chain(&below).collect();
            // Deepest intervals first: a node after its descendants.
            nodes.sort_by_key(|n| std::cmp::Reverse(n.lft));
            let total = done.load(Relaxed) + nodes.len();
            let mut gone: HashMap<String, i64> = HashMap::new();
            for range in delete_chunks(&nodes) {
                let chunk = &nodes[range];
                let ids: HashSet<&str> = chunk.iter().map(|n| n.id.as_str()).collect();
                let mut parents: Vec<(Option<&str>, i64)> = Vec::new();
                for n in chunk {
                    if n.parent().is_some_and(|p| ids.contains(p)) {
                        continue;
                    }
                    match parents.iter_mut().find(|(p, _)| *p == n.parent()) {
                        Some((_, k)) => *k += 1,
                        None => parents.push((n.parent(), 1)),
                    }
                }
                // Parents outside the chunk are deleted by a later chunk or stay; both need
                // their counters right.
                let mut tx = self.db.transaction();
                for n in chunk {
                    let kids = i64::try_from(n.kids)
                        .unwrap_or(i64::MAX)
                        .saturating_sub(gone.get(&n.id).copied().unwrap_or(0));
                    let w = node_delete::<E>(table, &self.pk, n, kids.max(0) as u64)?;
                    tx = tx.raw(E::NAME, (self.pk.clone(), Some(w.sk)), w.item, w.size);
                }
                for (p, k) in &parents {
                    let w = match p {
                        Some(p) => counter::<E>(table, &self.pk, p, -k)?,
                        None => top_update::<E>(
                            table,
                            &self.pk,
                            &Top { exists: true, ..top },
                            None,
                            -k,
                        )?,
                    };
                    tx = tx.raw(E::NAME, (self.pk.clone(), Some(w.sk)), w.item, w.size);
                }
                let check_at = tx.len();
                let (item, size) = match fence {
                    Some(op) => fence_check::<E>(table, &self.pk, &op_sk::<E>(), op)?,
                    None => op_check::<E>(table, &self.pk, &op_sk::<E>(), None)?,
                };
                tx = tx.raw(E::NAME, (self.pk.clone(), Some(op_sk::<E>())), item, size);
                if let Err(err) = tx.send().await {
                    let (conditions, other) = failures(&err);
                    if conditions.contains(&check_at) {
                        return match fence {
                            Some(op) => Err(superseded::<E>(op)),
                            None => match self.busy().await? {
                                Some(busy) => Err(busy),
                                None => Ok(Try::Again(changed::<E>(x))),
                            },
                        };
                    }
                    if conditions.is_empty() && !only_conflict(&conditions, other, &err) {
                        return Err(err);
                    }
                    return Ok(Try::Again(changed::<E>(x)));
                }
                for (p, k) in &parents {
                    if let Some(p) = p {
                        *gone.entry((*p).to_owned()).or_default() += k;
                    }
                }
                let now = done.fetch_add(chunk.len(), Relaxed) + chunk.len();
                let mut progress =
                    progress.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                (**progress)(Progress { phase: OpPhase::Remove, done: now, total });
            }
            Ok(Try::Done(done.load(Relaxed)))
        })
        .await
    }
}

/// The transactions of a delete of `nodes` (deepest intervals first: a node after its
/// descendants), as ranges: each holds at most [`MAX_TX_NODES`] nodes and fits one
/// transaction with its other actions, one counter update per parent outside it and the
/// intent's check. A run of nodes has as many parents outside it as the subtree is deep, so
/// a fixed number of nodes per transaction would not do for a deep subtree.
fn delete_chunks<E: IdHierarchy>(nodes: &[&Raw<E>]) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < nodes.len() {
        let mut ids: HashSet<&str> = HashSet::new();
        // The parents of the run's nodes that are not in it (`None`: the top level).
        let mut outside: HashSet<Option<&str>> = HashSet::new();
        let mut end = start;
        while let Some(n) = nodes.get(end) {
            let id = Some(n.id.as_str());
            let leaves_outside = usize::from(outside.contains(&id));
            let parent = n.parent();
            let parent_new = !parent.is_some_and(|p| ids.contains(p)) && !outside.contains(&parent);
            let count = end - start + 1;
            let actions = count + outside.len() - leaves_outside + usize::from(parent_new) + 1;
            if count > MAX_TX_NODES || (actions > MAX_TRANSACTION_ACTIONS && end > start) {
                break;
            }
            ids.insert(n.id.as_str());
            outside.remove(&id);
            if !parent.is_some_and(|p| ids.contains(p)) {
                outside.insert(parent);
            }
            end += 1;
        }
        out.push(start..end);
        start = end;
    }
    out
}

/// The slot of a top-level node: a small share of the top level's free numbers.
fn top_slot(next: u64) -> Option<(u64, u64)> {
    let room = layout::TOP.1.checked_sub(next)?.checked_sub(1)?;
    if room < 2 {
        return None;
    }
    let width = (room / TOP_SHARE).max(2);
    Some((next + 1, next + width))
}

/// The interval a moved subtree of `size` nodes takes in a gap `(next, rgt)`: its need,
/// doubled for room, or the share a new child would take if that is more; `None` when the
/// gap is too small.
pub(super) fn move_slot((next, rgt): (u64, u64), size: usize, top: bool) -> Option<(u64, u64)> {
    let room = u128::from(rgt.checked_sub(next)?.checked_sub(1)?);
    let need = layout::need(size as u64);
    if room < need {
        return None;
    }
    let share = room / if top { u128::from(TOP_SHARE) } else { 8 };
    let width = (need * 2).max(share).min(room);
    let hi = u64::try_from(u128::from(next) + width).ok()?;
    Some((next + 1, hi))
}

/// True when a node is already where `place` puts it.
fn in_place<E>(raw: &Raw<E>, place: &Place) -> bool {
    raw.lft == place.lft
        && raw.rgt == place.rgt
        && raw.next == place.next
        && raw.depth == place.depth
        && raw.chain == place.chain
}

fn n(v: u64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// The bookkeeping and tree index keys of a node at `place`.
fn place_attrs<E: IdHierarchy>(place: &Place) -> Vec<(&'static str, AttributeValue)> {
    let mut out = vec![
        (TREE_LFT_ATTR, n(place.lft)),
        (TREE_RGT_ATTR, n(place.rgt)),
        (TREE_NEXT_ATTR, n(place.next)),
        (TREE_DEPTH_ATTR, n(place.depth as u64)),
        (TREE_UP_ATTR, s(&crate::tree::node::encode_chain(&place.chain))),
    ];
    if let Some(sk) = index::<E>().and_then(|i| i.sk) {
        out.push((sk, s(&index_sk::<E>(place.lft))));
    }
    out
}

fn add_place<E: IdHierarchy>(item: &mut Item, place: &Place) {
    for (attr, value) in place_attrs::<E>(place) {
        item.insert(attr.to_owned(), value);
    }
}

/// The item of a new node at `place` with `kids` children (an insert: none; a bulk load: its
/// children in the load), made from its entity item `base`.
pub(super) fn new_node_item<E: IdHierarchy>(base: &Item, place: &Place, kids: u64) -> Item {
    let mut item = base.clone();
    add_place::<E>(&mut item, place);
    if let Some(index) = index::<E>()
        && index.pk != <E::Table as Table>::PK
        && let Some(pk) = item.get(<E::Table as Table>::PK).cloned()
    {
        item.insert(index.pk.to_owned(), pk);
    }
    item.insert(TREE_REV_ATTR.to_owned(), n(0));
    item.insert(TREE_KIDS_ATTR.to_owned(), n(kids));
    item
}

/// The put of a new node at `place` (the item must not exist).
fn node_put<E: IdHierarchy>(
    table: &str,
    base: &Item,
    place: &Place,
) -> Result<(TransactWriteItem, usize), Error> {
    let item = new_node_item::<E>(base, place, 0);
    let mut x = ExprBuilder::default();
    let pk = x.name(<E::Table as Table>::PK);
    let action = Action::put(item).guarded(format!("attribute_not_exists({pk})"), x);
    let size = action.size();
    Ok((action.return_old(true).into_transact_item(table)?, size))
}

/// `is a node AND revision, interval as read`.
fn as_read<E: IdHierarchy>(x: &mut ExprBuilder, raw: &Raw<E>) -> String {
    let mut cond = guard::<E>(x, raw.rev, None);
    for (attr, v) in [(TREE_LFT_ATTR, raw.lft), (TREE_RGT_ATTR, raw.rgt)] {
        let name = x.name(attr);
        let value = x.value(n(v));
        cond.push_str(&format!(" AND {name} = {value}"));
    }
    cond
}

/// The entity attributes a move changes on its node (the parent field): old and new item.
fn parent_change<E: IdHierarchy>(
    raw: &Raw<E>,
    parent: Option<&str>,
) -> Result<(Item, Item), Error> {
    let mut node = clone_node(&raw.node)?;
    node.set_parent_id(match parent {
        Some(p) => Some(id_value::<E>(p)?),
        None => None,
    });
    Ok((to_item(&raw.node, raw.node.version())?, to_item(&node, node.version())?))
}

/// Rewrites a node into `place`: its interval, mark, depth, ancestors and index key; with
/// `fields` (a move's node), the entity attributes that differ, and the version goes up;
/// `kids` and `rev` are added to its counters. `guarded`: only if the node is as read.
fn rewrite<E: IdHierarchy>(
    table: &str,
    pk: &str,
    raw: &Raw<E>,
    place: &Place,
    fields: Option<&(Item, Item)>,
    kids: i64,
    guarded: bool,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let cond = if guarded { as_read::<E>(&mut x, raw) } else { is_node::<E>(&mut x) };
    let mut sets = Vec::new();
    let mut size = 64;
    for (attr, value) in place_attrs::<E>(place) {
        size += item_size(&Item::from([(attr.to_owned(), value.clone())]));
        let name = x.name(attr);
        let v = x.value(value);
        sets.push(format!("{name} = {v}"));
    }
    let mut adds = Vec::new();
    let mut removes = Vec::new();
    if let Some((old, new)) = fields {
        let table_pk = <E::Table as Table>::PK;
        let table_sk = <E::Table as Table>::SK;
        let skip = |attr: &str| {
            NESTED_BOOKKEEPING_ATTRS.contains(&attr)
                || E::VERSION.is_some_and(|d| d.attr == attr)
                || attr == table_pk
                || table_sk == Some(attr)
        };
        for (attr, value) in new {
            if skip(attr) || old.get(attr) == Some(value) {
                continue;
            }
            size += item_size(&Item::from([(attr.clone(), value.clone())]));
            let name = x.name(attr);
            let v = x.value(value.clone());
            sets.push(format!("{name} = {v}"));
        }
        for attr in old.keys().filter(|a| !skip(a) && !new.contains_key(*a)) {
            removes.push(x.name(attr));
        }
        if let Some(def) = E::VERSION {
            let name = x.name(def.attr);
            let one = x.value(n(1));
            adds.push(format!("{name} {one}"));
        }
    }
    if kids != 0 {
        let name = x.name(TREE_KIDS_ATTR);
        let v = x.value(AttributeValue::N(kids.to_string()));
        adds.push(format!("{name} {v}"));
        let rev = x.name(TREE_REV_ATTR);
        let one = x.value(n(1));
        adds.push(format!("{rev} {one}"));
    }
    let mut update = format!("SET {}", sets.join(", "));
    if !removes.is_empty() {
        update.push_str(&format!(" REMOVE {}", removes.join(", ")));
    }
    if !adds.is_empty() {
        update.push_str(&format!(" ADD {}", adds.join(", ")));
    }
    let sk = node_sk::<E>(&raw.id);
    let key = key_of::<E>(pk, &sk);
    size += item_size(&key);
    let item = Action::update(key, update).guarded(cond, x).into_transact_item(table)?;
    Ok(RawAction { sk, item, size })
}

/// Counts `kids` more children on the node `p` as read (its revision goes up), and with
/// `next`, moves its high-water mark there (the mark must still be the one read).
pub(super) fn bump<E: IdHierarchy>(
    table: &str,
    pk: &str,
    p: &Raw<E>,
    next: Option<u64>,
    kids: i64,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let mut cond = as_read::<E>(&mut x, p);
    let mark = x.name(TREE_NEXT_ATTR);
    let read = x.value(n(p.next));
    if p.next == p.lft {
        cond.push_str(&format!(" AND (attribute_not_exists({mark}) OR {mark} = {read})"));
    } else {
        cond.push_str(&format!(" AND {mark} = {read}"));
    }
    let rev = x.name(TREE_REV_ATTR);
    let one = x.value(n(1));
    let mut update = String::new();
    if let Some(next) = next {
        let v = x.value(n(next));
        update.push_str(&format!("SET {mark} = {v} "));
    }
    let mut adds = vec![format!("{rev} {one}")];
    if kids != 0 {
        let name = x.name(TREE_KIDS_ATTR);
        let v = x.value(AttributeValue::N(kids.to_string()));
        adds.push(format!("{name} {v}"));
    }
    update.push_str(&format!("ADD {}", adds.join(", ")));
    let sk = node_sk::<E>(&p.id);
    let key = key_of::<E>(pk, &sk);
    let size = item_size(&key) + 48;
    let item = Action::update(key, update).guarded(cond, x).into_transact_item(table)?;
    Ok(RawAction { sk, item, size })
}

/// Adds `kids` to the children counter of node `id` (escaped), which must exist; a new
/// child also bumps its revision.
fn counter<E: IdHierarchy>(table: &str, pk: &str, id: &str, kids: i64) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let cond = is_node::<E>(&mut x);
    let name = x.name(TREE_KIDS_ATTR);
    let v = x.value(AttributeValue::N(kids.to_string()));
    let mut update = format!("ADD {name} {v}");
    if kids > 0 {
        let rev = x.name(TREE_REV_ATTR);
        let one = x.value(n(1));
        update.push_str(&format!(", {rev} {one}"));
    }
    let sk = node_sk::<E>(id);
    let key = key_of::<E>(pk, &sk);
    let size = item_size(&key) + 32;
    let item = Action::update(key, update).guarded(cond, x).into_transact_item(table)?;
    Ok(RawAction { sk, item, size })
}

/// Updates the record of the top level: with `next`, its high-water mark (the mark must
/// still be the one read, or the record missing if it was); adds `kids` to its counter.
pub(super) fn top_update<E: IdHierarchy>(
    table: &str,
    pk: &str,
    top: &Top,
    next: Option<u64>,
    kids: i64,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let cond = match (next, top.exists) {
        (Some(_), false) => {
            let pk_name = x.name(<E::Table as Table>::PK);
            format!("attribute_not_exists({pk_name})")
        }
        (Some(_), true) => {
            let mark = x.name(TREE_NEXT_ATTR);
            let read = x.value(n(top.next));
            format!("{mark} = {read}")
        }
        (None, _) => {
            let pk_name = x.name(<E::Table as Table>::PK);
            format!("attribute_exists({pk_name})")
        }
    };
    let type_name = x.name(crate::model::type_attr::<E::Table>());
    let type_value = x.value(s(&format!("{}:tree-top", E::NAME)));
    let mut update = format!("SET {type_name} = {type_value}");
    if let Some(next) = next {
        let mark = x.name(TREE_NEXT_ATTR);
        let v = x.value(n(next));
        update.push_str(&format!(", {mark} = {v}"));
    }
    if kids != 0 {
        let name = x.name(TREE_KIDS_ATTR);
        let v = x.value(AttributeValue::N(kids.to_string()));
        update.push_str(&format!(" ADD {name} {v}"));
    }
    let sk = top_sk::<E>();
    let key = key_of::<E>(pk, &sk);
    let size = item_size(&key) + 64;
    let item = Action::update(key, update).guarded(cond, x).into_transact_item(table)?;
    Ok(RawAction { sk, item, size })
}

/// Deletes a node of a delete's subtree if it is still as read: same revision (nothing
/// inserted under it), same interval (not moved or renumbered), and `kids` children left.
fn node_delete<E: IdHierarchy>(
    table: &str,
    pk: &str,
    raw: &Raw<E>,
    kids: u64,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let mut cond = as_read::<E>(&mut x, raw);
    if let (Some(def), Some(v)) = (E::VERSION, raw.node.version()) {
        let attr = x.name(def.attr);
        let value = x.value(n(v));
        if v == 0 {
            cond.push_str(&format!(" AND (attribute_not_exists({attr}) OR {attr} = {value})"));
        } else {
            cond.push_str(&format!(" AND {attr} = {value}"));
        }
    }
    let name = x.name(TREE_KIDS_ATTR);
    let value = x.value(n(kids));
    cond.push_str(&format!(" AND {name} = {value}"));
    let sk = node_sk::<E>(&raw.id);
    let key = key_of::<E>(pk, &sk);
    let size = item_size(&key);
    let item = Action::delete(key).guarded(cond, x).into_transact_item(table)?;
    Ok(RawAction { sk, item, size })
}

/// The id value of an escaped id.
fn id_value<E: IdHierarchy>(id: &str) -> Result<E::Id, Error> {
    let corrupt =
        |reason: String| problem::<E>(TreeProblem::CorruptNode { id: display(id), reason });
    let text = crate::key::unescape(id).map_err(|e| corrupt(e.to_string()))?;
    E::id_from_text(&text).map_err(|e| corrupt(e.to_string()))
}

/// A move of a nested-set subtree; made by [`NestedTree::move_subtree`] and
/// [`NestedTree::move_to_top`], sent by `.await` (or [`send`](NestedMove::send)).
///
/// The node, its new parent and its subtree are read (one range query, read again strongly
/// consistently); the subtree is numbered into a free interval of the new parent's gap
/// (when the gap is too small, the smallest region around the new parent with room is
/// numbered again first, as for an insert). Up to 96 nodes (or
/// [`transaction_limit`](NestedMove::transaction_limit)) move in one `TransactWriteItems`
/// that rewrites every node conditioned on what was read, moves the node between the
/// parents' counters and takes the interval from the new parent's gap; a concurrent write
/// makes it read again (a few times, then [`TreeProblem::NodeChanged`]). Larger subtrees
/// move under an intent record: the interval is taken first, then the nodes are rewritten in
/// fenced transactions of 99, the node itself last (the switch to its new parent), so
/// [`NestedTree::resume`] finishes an interrupted move and [`NestedTree::rollback`] undoes
/// one that has not switched. Checked: the node exists ([`TreeProblem::NoNode`]), the parent
/// exists ([`TreeProblem::NoParent`]) and is not in the subtree ([`TreeProblem::Cycle`]), the
/// deepest node stays within `max_depth` ([`TreeProblem::TooDeep`]), no large operation is
/// in progress ([`TreeProblem::Busy`]).
///
/// The report counts the node items rewritten: the whole subtree, or 0 when the node is
/// under that parent already (nothing is written).
#[must_use = "a move does nothing until it is awaited"]
pub struct NestedMove<'a, 'p, E: IdHierarchy> {
    tree: NestedTree<'a, E>,
    id: String,
    parent: Option<String>,
    progress: Option<ProgressFn<'p>>,
    limit: usize,
}

impl<'a, 'p, E: IdHierarchy> NestedMove<'a, 'p, E> {
    /// Calls `f` after every transaction of a large move, and once a move is done (phase
    /// [`OpPhase::Switch`]).
    pub fn on_progress<'q>(self, f: impl FnMut(Progress) + Send + 'q) -> NestedMove<'a, 'q, E> {
        NestedMove {
            tree: self.tree,
            id: self.id,
            parent: self.parent,
            progress: Some(Box::new(f)),
            limit: self.limit,
        }
    }

    /// Moves subtrees of more than `n` nodes under an intent record (at most 96 move in one
    /// transaction).
    pub fn transaction_limit(mut self, n: usize) -> Self {
        self.limit = n.min(MAX_TX_NODES);
        self
    }

    /// Sends the move.
    pub async fn send(self) -> Result<OpReport, Error> {
        let tree = self.tree.clone();
        tree.busy_over_changed(self.run().await).await
    }

    async fn run(self) -> Result<OpReport, Error> {
        let NestedMove { tree, id, parent, progress, limit } = self;
        let mut progress: ProgressFn<'p> = progress.unwrap_or_else(|| Box::new(|_| {}));
        tree.move_node(&id, parent.as_deref(), limit, &mut progress).await
    }
}

impl<'a, 'p, E: IdHierarchy> IntoFuture for NestedMove<'a, 'p, E>
where
    'p: 'a,
{
    type Output = Result<OpReport, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

/// A delete of a nested-set subtree; made by [`NestedTree::delete_subtree`], sent by
/// `.await` (or [`send`](NestedDelete::send)).
///
/// The subtree is one range query (read again strongly consistently), deleted in
/// transactions of up to 96 nodes, deepest intervals first, each node conditioned on its
/// revision, interval and children: a node inserted under the subtree meanwhile makes the
/// delete read again, never an orphan. A subtree of more than 96 nodes (or of more than
/// [`transaction_limit`](NestedDelete::transaction_limit)) is deleted under an intent
/// record, so that [`NestedTree::resume`] finishes an interrupted delete (what is left is
/// always a tree) and other writes of the subtree wait for it ([`TreeProblem::Busy`]). A
/// node that does not exist is [`TreeProblem::NoNode`] ([`Error::is_node_missing`]), and
/// nothing is written.
#[must_use = "a delete does nothing until it is awaited"]
pub struct NestedDelete<'a, 'p, E: IdHierarchy> {
    tree: NestedTree<'a, E>,
    id: String,
    progress: Option<ProgressFn<'p>>,
    limit: usize,
}

impl<'a, 'p, E: IdHierarchy> NestedDelete<'a, 'p, E> {
    /// Calls `f` after every transaction of the delete.
    pub fn on_progress<'q>(self, f: impl FnMut(Progress) + Send + 'q) -> NestedDelete<'a, 'q, E> {
        NestedDelete {
            tree: self.tree,
            id: self.id,
            progress: Some(Box::new(f)),
            limit: self.limit,
        }
    }

    /// Deletes subtrees of more than `n` nodes under an intent record.
    pub fn transaction_limit(mut self, n: usize) -> Self {
        self.limit = n.min(MAX_TX_NODES);
        self
    }

    /// Sends the delete.
    pub async fn send(self) -> Result<OpReport, Error> {
        let tree = self.tree.clone();
        tree.busy_over_changed(self.run().await).await
    }

    async fn run(self) -> Result<OpReport, Error> {
        let NestedDelete { tree, id, progress, limit } = self;
        let mut progress: ProgressFn<'p> = progress.unwrap_or_else(|| Box::new(|_| {}));
        let Some(root) = tree.raw(&id).await? else {
            return Err(problem::<E>(TreeProblem::NoNode { id: display(&id) }));
        };
        let size = tree.subtree_size_of(&root).await?;
        if size <= limit {
            let n = tree.delete_all(&id, None, &mut progress).await?;
            if n == 0 {
                return Err(problem::<E>(TreeProblem::NoNode { id: display(&id) }));
            }
            return Ok(OpReport { nodes: n, resumable: false });
        }
        let op = TreeOp {
            kind: OpKind::DeleteNode { node: display(&id) },
            phase: OpPhase::Remove,
            token: crate::ops::idempotency_token(),
            epoch: 0,
        };
        let fields = op.fields();
        let fields: Vec<(&str, &str)> = fields.iter().map(|(a, v)| (*a, v.as_str())).collect();
        let op_key = op_sk::<E>();
        let put = crate::tree::raw::put_intent::<E>(tree.db, &tree.pk, &op_key, &fields);
        if let Err(stored) = put.await? {
            return Err(match stored.as_ref().map(TreeOp::from_item) {
                Some(Ok(op)) => problem::<E>(TreeProblem::Busy { op }),
                Some(Err(corrupt)) => problem::<E>(corrupt),
                None => problem::<E>(TreeProblem::CorruptIntent {
                    reason: "an operation is in progress, but its record was not returned".into(),
                }),
            });
        }
        let n = tree.delete_all(&id, Some(&op), &mut progress).await?;
        clear_intent::<E>(tree.db, &tree.pk, &op_sk::<E>(), &op).await?;
        Ok(OpReport { nodes: n, resumable: true })
    }
}

impl<'a, 'p, E: IdHierarchy> IntoFuture for NestedDelete<'a, 'p, E>
where
    'p: 'a,
{
    type Output = Result<OpReport, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

impl<E: IdHierarchy> NestedTree<'_, E> {
    /// The number of nodes of the subtree of `root`, itself included: one count query.
    async fn subtree_size_of(&self, root: &Raw<E>) -> Result<usize, Error> {
        self.within(root.span()).count().await
    }
}
