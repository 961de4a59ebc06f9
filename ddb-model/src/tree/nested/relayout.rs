//! The resumable relayout under an intent record: a large renumbering or move numbers a
//! subtree again in fenced transactions; `resume` finishes it, `rollback` undoes it.

use super::items::{bump, in_place, parent_change, rewrite, top_update};
use super::layout::{Place, Root};
use super::write::{Top, under};
use super::*;
use crate::error::IntentReason;
use crate::expr::ExprBuilder;
use crate::model::Table;
use crate::model::string_attr;
use crate::ops::action::Action;
use crate::tree::conflict::Failed;
use crate::tree::node::{changed, esc, no_node, op_sk};
use crate::tree::op::{OpKind, OpPhase, Progress, TreeOp, corrupt_intent, intent_value};
use crate::tree::raw::{OP_PARENT, RawAction, intent_item};

/// Attributes of a nested-set relayout's intent record (beside the move's node and parent):
/// the interval the node moves to, the one it had, and the numbers kept free under a node.
pub(super) const OP_NEW_LO: &str = "new_lo";
pub(super) const OP_NEW_HI: &str = "new_hi";
pub(super) const OP_OLD_LO: &str = "old_lo";
pub(super) const OP_OLD_HI: &str = "old_hi";
pub(super) const OP_RESERVE_AT: &str = "reserve_at";
pub(super) const OP_RESERVE: &str = "reserve";
/// Where a relayout puts its node: `top` (the top level) or `node` (under the intent's
/// parent). The parent attribute alone cannot say: the empty id escapes to the empty text.
pub(super) const OP_PLACE: &str = "place";

/// What a relayout takes when it begins: an interval from a parent's gap (a move under a
/// node, or to the top level), or nothing (a renumbering in place, which checks that its
/// region's root is still the one read).
pub(super) enum Take<'r, E> {
    Parent(&'r Raw<E>),
    Top(Top),
    Nothing,
}

/// What a relayout does: numbers the subtree of `node` again into `new` under `parent`
/// (the top level for `None`); `old` is the interval the node had when it began. A
/// renumbering in place has `new == old` and the node's own parent.
#[derive(Debug, Clone)]
pub(super) struct Relayout {
    pub(super) node: String,
    pub(super) parent: Option<String>,
    pub(super) new: (u64, u64),
    pub(super) old: (u64, u64),
    pub(super) reserve: Option<(String, u128)>,
}

impl Relayout {
    pub(super) fn is_renumbering(&self) -> bool {
        self.new == self.old
    }

    /// What its intent record says it does: a renumbering of the node's subtree, or a move.
    pub(super) fn kind(&self) -> OpKind {
        let node = display(&self.node);
        if self.is_renumbering() {
            OpKind::Renumber { node: Some(node) }
        } else {
            OpKind::MoveNode { node, parent: self.parent.as_deref().map(display) }
        }
    }

    pub(super) fn fields(&self) -> Vec<(&'static str, String)> {
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

    pub(super) fn from_intent<E: IdHierarchy>(op: &TreeOp, item: &Item) -> Result<Relayout, Error> {
        let (node, moved_to_top) = match &op.kind {
            OpKind::MoveNode { node, parent } => (node, parent.is_none()),
            OpKind::Renumber { node: Some(node) } => (node, false),
            _ => {
                return Err(corrupt_intent::<E>(IntentReason::NotARelayout {
                    op: Box::new(op.clone()),
                }));
            }
        };
        let num = |attr| intent_value::<E, u64>(item, attr);
        let stored_parent = string_attr(item, OP_PARENT).unwrap_or("");
        let at_top = match string_attr(item, OP_PLACE) {
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
pub(super) fn reserve_fields(reserve: Option<&(String, u128)>) -> [(&'static str, String); 2] {
    let (at, n) = match reserve {
        Some((at, n)) => (at.clone(), n.to_string()),
        None => (String::new(), "0".to_owned()),
    };
    [(OP_RESERVE_AT, at), (OP_RESERVE, n)]
}

/// The numbers a renumbering keeps free under a node, from its intent record.
pub(super) fn reserve_of<E: IdHierarchy>(item: &Item) -> Result<Option<(String, u128)>, Error> {
    let n: u128 = intent_value::<E, _>(item, OP_RESERVE)?;
    let at = string_attr(item, OP_RESERVE_AT).unwrap_or("");
    Ok((!at.is_empty() && n > 0).then(|| (at.to_owned(), n)))
}

impl<'a, E: IdHierarchy> NestedTree<'a, E> {
    /// Writes the intent of a relayout and reserves its interval under the new parent (a
    /// move), in one transaction; then runs it. `Ok(None)` when the parent's gap changed
    /// meanwhile (nothing written; the caller reads again).
    pub(super) async fn start_relayout(
        &self,
        r: Relayout,
        take: Take<'_, E>,
        progress: &mut (dyn FnMut(Progress) + Send + '_),
    ) -> Result<Option<usize>, Error> {
        let table = self.db.table_name();
        let op = TreeOp::start(r.kind(), OpPhase::Copy);
        let mut fields = op.fields();
        fields.extend(r.fields());
        let fields: Vec<(&str, &str)> = fields.iter().map(|(a, v)| (*a, v.as_str())).collect();
        let intent = intent_item::<E>(&self.pk, &op_sk::<E>(), &fields);
        let mut x = ExprBuilder::default();
        let pk_name = x.name(<E::Table as Table>::PK);
        let put = Action::put(intent).guarded(format!("attribute_not_exists({pk_name})"), x);
        let size = put.size();
        let item = put.into_transact_item(table)?;
        let tx = self.push(self.db.transaction(), RawAction { sk: op_sk::<E>(), item, size });
        // A move takes its interval from the new parent's gap now; a renumbering checks
        // that its region's root is still the one read.
        let w = match take {
            Take::Parent(p) => bump::<E>(table, &self.pk, p, Some(r.new.1), 0)?,
            Take::Top(top) => top_update::<E>(table, &self.pk, &top, Some(r.new.1), 0)?,
            Take::Nothing => {
                let Some(a) = self.raw(&r.node).await? else {
                    return Err(no_node::<E>(&r.node));
                };
                bump::<E>(table, &self.pk, &a, None, 0)?
            }
        };
        if let Err(err) = self.push(tx, w).send().await {
            let f = Failed::new(err);
            if f.at(0) {
                return Err(self.busy().await?.unwrap_or_else(|| changed::<E>(&r.node)));
            }
            f.changed()?;
            return Ok(None);
        }
        let n = self.run_relayout(&op, &r, progress).await?;
        self.clear_intent(&op).await?;
        Ok(Some(n))
    }

    /// The nodes of a relayout's subtree, wherever they are (the old interval or the new
    /// one), strongly consistent and complete; the subtree's root first.
    pub(super) async fn relayout_nodes(&self, r: &Relayout) -> Result<Vec<Raw<E>>, Error> {
        retry::on_conflict(INDEX_LAG, move |_| async move {
            let Some(root) = self.raw(&r.node).await? else {
                let node = display(&r.node);
                return Err(corrupt_intent::<E>(IntentReason::NodeGone { node }));
            };
            let mut items = self.raw_range(r.old.0, r.old.1).keys().await?;
            if r.new != r.old {
                items.extend(self.raw_range(r.new.0, r.new.1).keys().await?);
            }
            let mut ids = node_ids::<E>(&items);
            ids.retain(|id| *id != r.node);
            ids.sort_unstable();
            ids.dedup();
            let mut found = self.read_nodes(&ids, Raw::read).await?;
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
    pub(super) async fn run_relayout(
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
        let gone = |p: &str| TreeProblem::CorruptIntent {
            reason: IntentReason::ParentGone { parent: display(p) },
        };
        let (p_raw, top) = self.parent_or_top(r.parent.as_deref(), gone).await?;
        let (depth, chain) = under(p_raw.as_ref());
        let root = Root {
            id: Some(x.id.clone()),
            lft: r.new.0,
            rgt: r.new.1,
            depth,
            chain: chain.clone(),
        };
        let reserve = r.reserve.as_ref().map(|(at, n)| (at.as_str(), *n));
        // Without what it keeps free, a region that grew before its intent was written fits.
        let Some((next, writes)) = self.rewrites(&root, below, reserve, true)? else {
            let node = display(&x.id);
            return Err(corrupt_intent::<E>(IntentReason::NoFit { node }));
        };
        let total = writes.len() + 1;
        let mut done = |n: usize| progress(Progress { phase: OpPhase::Copy, done: n, total });
        let rewritten = writes.len();
        self.fenced_writes(op, writes, &mut done).await?;
        // The switch: the node in its new interval, under its new parent.
        let place = Place { lft: r.new.0, rgt: r.new.1, next, depth, chain };
        let moves = x.parent() != r.parent.as_deref();
        if !moves && in_place(x, &place) {
            progress(Progress { phase: OpPhase::Switch, done: rewritten, total });
            return Ok(rewritten);
        }
        // From here on the move can only be finished.
        self.set_phase(op, OpPhase::Switch).await?;
        progress(Progress { phase: OpPhase::Switch, done: rewritten, total });
        let fields = if moves { Some(parent_change::<E>(x, r.parent.as_deref())?) } else { None };
        let mut group = vec![rewrite::<E>(table, &self.pk, x, &place, fields.as_ref(), false)?];
        if moves {
            group.push(self.count_kids(x.parent(), &top, -1)?);
            group.push(self.count_kids(p_raw.as_ref().map(|p| p.id.as_str()), &top, 1)?);
        }
        let op = TreeOp { phase: OpPhase::Switch, ..op.clone() };
        self.fenced_groups(&op, vec![group], &mut |_| {}).await?;
        progress(Progress { phase: OpPhase::Switch, done: rewritten + 1, total });
        Ok(rewritten + 1)
    }
}
