//! Nested-set inserts: a node takes free numbers in its parent's gap; the tree's top-level
//! record and the checks every write of the tree shares.

use super::items::{bump, node_put, top_slot, top_update};
use super::layout::{self, Place, slot};
use super::*;
use crate::model::to_item_at;
use crate::ops::put::next_version;
use crate::ops::retry::CONFLICTS;
use crate::ops::transact::{ActionInfo, explain};
use crate::ops::{Guard, MAX_TRANSACTION_ACTIONS, Target, WriteKind};
use crate::tree::conflict::{action_error, failures, only_conflict};
use crate::tree::node::{id_of, op_sk, parent_of};
use crate::tree::op::{OpReport, TreeOp, WHOLE_TREE};
use crate::tree::raw::op_check;

/// The most nodes one transaction rewrites: the rest of its 100 actions are the parents'
/// counters and the intent check.
pub(crate) const MAX_TX_NODES: usize = MAX_TRANSACTION_ACTIONS - 4;

/// Top-level nodes take `1 / TOP_SHARE` of the free numbers of the top level: the top
/// level's gap holds tens of thousands of inserts before it is exhausted.
pub(super) const TOP_SHARE: u64 = 1024;

/// The record of the top level, read.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Top {
    pub(super) exists: bool,
    pub(super) next: u64,
    pub(super) kids: u64,
}

/// Why a write was refused, as the typed error of a tree of `E`.
pub(super) fn changed<E: IdHierarchy>(id: &str) -> Error {
    problem::<E>(TreeProblem::NodeChanged { id: display(id) })
}

impl<'a, E: IdHierarchy> NestedTree<'a, E> {
    pub(super) fn check_tree(&self, node: &E) -> Result<(), Error> {
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

    pub(super) async fn pending_item(&self) -> Result<Option<(TreeOp, Item)>, Error> {
        let item = get_raw::<E>(self.db, &self.pk, &op_sk::<E>()).await?;
        match item {
            None => Ok(None),
            Some(item) => Ok(Some((TreeOp::from_item(&item).map_err(problem::<E>)?, item))),
        }
    }

    /// A subtree that kept changing while a bulk load is pending changed because of the
    /// load (its rows are written before the parents' counters): [`TreeProblem::Busy`].
    pub(super) async fn busy_over_changed(
        &self,
        out: Result<OpReport, Error>,
    ) -> Result<OpReport, Error> {
        match out {
            Err(e) if e.is_tree_changed() => Err(self.busy().await?.unwrap_or(e)),
            out => out,
        }
    }

    /// The error of a write whose check of the intent record failed: [`TreeProblem::Busy`]
    /// with the operation in progress, or `None` when it finished meanwhile.
    pub(super) async fn busy(&self) -> Result<Option<Error>, Error> {
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

    pub(super) async fn try_insert(
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
}
