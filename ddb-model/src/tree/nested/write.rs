//! Nested-set inserts: a node takes free numbers in its parent's gap; the tree's top-level
//! record and the checks every write of the tree shares.

use std::collections::HashMap;

use super::items::{bump, in_place, node_put, rewrite, top_slot, top_update};
use super::layout::{self, Place, Root, plan, slot};
use super::*;
use crate::ops::transact::{ActionInfo, explain};
use crate::ops::{Guard, MAX_TRANSACTION_ACTIONS, WriteKind};
use crate::tree::conflict::action_error;
use crate::tree::node::counter;
use crate::tree::node::{changed, within_depth};
use crate::tree::op::{OpReport, WHOLE_TREE};
use crate::tree::raw::RawAction;

/// The most nodes one transaction rewrites: the rest of its 100 actions are the parents'
/// counters and the intent check.
pub(crate) const MAX_TX_NODES: usize = MAX_TRANSACTION_ACTIONS - 4;

/// Top-level nodes take `1 / TOP_SHARE` of the free numbers of the top level: the top
/// level's gap holds tens of thousands of inserts before it is exhausted.
pub(super) const TOP_SHARE: u64 = 1024;

/// The depth and ancestors of a child of `p` (of the top level for `None`).
pub(super) fn under<E>(p: Option<&Raw<E>>) -> (usize, Vec<String>) {
    match p {
        Some(p) => (p.depth + 1, [p.chain.clone(), vec![p.id.clone()]].concat()),
        None => (1, Vec::new()),
    }
}

/// The record of the top level, read.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Top {
    pub(super) exists: bool,
    pub(super) next: u64,
    pub(super) kids: u64,
}

impl<'a, E: IdHierarchy> NestedTree<'a, E> {
    /// The record of the top level (strongly consistent).
    pub(super) async fn top(&self) -> Result<Top, Error> {
        let item = self.get_raw(&top_sk::<E>()).await?;
        Ok(match item {
            None => Top::default(),
            Some(item) => Top {
                exists: true,
                next: number(&item, TREE_NEXT_ATTR).unwrap_or(0),
                kids: number(&item, TREE_KIDS_ATTR).unwrap_or(0),
            },
        })
    }

    /// The parent `p` (or the top level, as read in `top`) counts `kids` more children, and
    /// with `next`, moves its high-water mark there.
    pub(super) fn gains(
        &self,
        p: Option<&Raw<E>>,
        top: &Top,
        next: Option<u64>,
        kids: i64,
    ) -> Result<RawAction, Error> {
        let table = self.db.table_name();
        match p {
            Some(p) => bump::<E>(table, &self.pk, p, next, kids),
            None => top_update::<E>(table, &self.pk, top, next, kids),
        }
    }

    /// The parent `p` (escaped; the top level, as read in `top`, for `None`) counts `kids`
    /// more children.
    pub(super) fn count_kids(
        &self,
        p: Option<&str>,
        top: &Top,
        kids: i64,
    ) -> Result<RawAction, Error> {
        let table = self.db.table_name();
        match p {
            Some(p) => counter::<E>(table, &self.pk, p, kids, u64::from(kids > 0), None),
            None => top_update::<E>(table, &self.pk, &Top { exists: true, ..*top }, None, kids),
        }
    }

    /// The rewrites that number `nodes` (the region below `root`) again, and the root's new
    /// high-water mark; `None` when they do not fit or a node of the plan was not read.
    /// `resumable` (a run under an intent, which may be resumed): nodes already in place are
    /// left out, and so is the reserve when the region fits only without it; otherwise
    /// every node is rewritten, conditioned on what was read.
    pub(super) fn rewrites(
        &self,
        root: &Root,
        nodes: &[Raw<E>],
        reserve: Option<(&str, u128)>,
        resumable: bool,
    ) -> Result<Option<(u64, Vec<RawAction>)>, Error> {
        let members: Vec<(String, Option<String>)> =
            nodes.iter().map(|r| (r.id.clone(), r.parent().map(str::to_owned))).collect();
        let planned = plan(root, &members, reserve);
        let planned =
            if resumable { planned.or_else(|| plan(root, &members, None)) } else { planned };
        let Some((next, places)) = planned else {
            return Ok(None);
        };
        let by_id: HashMap<&str, &Raw<E>> = nodes.iter().map(|r| (r.id.as_str(), r)).collect();
        let mut out = Vec::with_capacity(places.len());
        for (id, place) in &places {
            match by_id.get(id.as_str()) {
                Some(raw) if resumable && in_place(raw, place) => {}
                Some(raw) => out.push(rewrite::<E>(
                    self.db.table_name(),
                    &self.pk,
                    raw,
                    place,
                    None,
                    !resumable,
                )?),
                None if resumable => {}
                None => return Ok(None),
            }
        }
        Ok(Some((next, out)))
    }

    /// The parent `p` of a node, strongly consistent, or the top level's record for `None`:
    /// [`TreeProblem::NoParent`] for a missing parent, `missing` says as what.
    pub(super) async fn parent_or_top(
        &self,
        p: Option<&str>,
        missing: impl FnOnce(&str) -> TreeProblem,
    ) -> Result<(Option<Raw<E>>, Top), Error> {
        match p {
            Some(p) => match self.raw(p).await? {
                Some(raw) => Ok((Some(raw), Top::default())),
                None => Err(problem::<E>(missing(p))),
            },
            None => Ok((None, self.top().await?)),
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
}

impl<'a, E: IdHierarchy> NestedTree<'a, E> {
    pub(super) async fn try_insert(
        &self,
        id: &str,
        parent: Option<&str>,
        base: &Item,
    ) -> Result<Try<()>, Error> {
        let table = self.db.table_name();
        // A renumbering makes room at most once per try.
        for _ in 0..2 {
            let no_parent = |p: &str| TreeProblem::NoParent { parent: display(p) };
            let (p_raw, top) = self.parent_or_top(parent, no_parent).await?;
            let (depth, chain) = under(p_raw.as_ref());
            within_depth::<E>(id, depth)?;
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
            let tx = self.db.transaction().push_raw(info, item, size);
            let tx = self.push(tx, self.gains(p_raw.as_ref(), &top, Some(rgt), 1)?);
            // Refused while the subtree of an ancestor, or the whole tree, is renumbered,
            // moved or deleted.
            let guarded = [chain, vec![id.to_owned(), WHOLE_TREE.to_owned()]].concat();
            let Some(f) = self.send_checked(tx, Some(&guarded)).await? else {
                return Ok(Try::Done(()));
            };
            return match f.first() {
                Some(0) if !f.refused => Err(action_error(f.err, 0)),
                None if !f.refused && !f.only_conflict() => Err(f.err),
                _ => Ok(Try::Again(changed::<E>(id))),
            };
        }
        Ok(Try::Again(changed::<E>(id)))
    }
}
