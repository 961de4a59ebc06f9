//! Moves and deletes of nested-set subtrees: the builders' steps, one transaction up to
//! [`MAX_TX_NODES`] nodes, resumable beyond.

use crate::tree::builders::Delete;
use crate::tree::handle::NestedSet;

use super::items::{move_slot, node_delete, parent_change, rewrite};
use super::layout::{self, Place, Root};
use super::relayout::{Relayout, Take};
use super::write::{Top, under};
use super::*;
use crate::ops::retry::CONFLICTS;
use crate::tree::node::{Deleting, changed, cycle, no_node, within_depth};
use crate::tree::op::{OpKind, OpPhase, OpReport, Progress, ProgressFn, TreeOp};

impl<'a, E: IdHierarchy> NestedTree<'a, E> {
    pub(super) async fn move_node(
        &self,
        x: &str,
        p: Option<&str>,
        limit: usize,
        progress: &mut ProgressFn<'_>,
    ) -> Result<OpReport, Error> {
        if p == Some(x) {
            return Err(cycle::<E>(x, x));
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

    pub(super) async fn try_move(
        &self,
        x: &str,
        p: Option<&str>,
        limit: usize,
        progress: &mut (dyn FnMut(Progress) + Send + '_),
    ) -> Result<Try<OpReport>, Error> {
        let table = self.db.table_name();
        for _ in 0..2 {
            let Some(x_raw) = self.raw(x).await? else {
                return Err(no_node::<E>(x));
            };
            let no_parent = |p: &str| TreeProblem::NoParent { parent: display(p) };
            let (p_raw, top) = self.parent_or_top(p, no_parent).await?;
            if p_raw.as_ref().is_some_and(|r| r.chain.iter().any(|a| a == x)) {
                return Err(cycle::<E>(x, p.unwrap_or_default()));
            }
            if x_raw.parent() == p {
                return Ok(Try::Done(OpReport { nodes: 0, resumable: false }));
            }
            let below =
                self.read_region(Some(&x_raw.id), (x_raw.lft, x_raw.rgt), x_raw.kids, None).await?;
            let size = below.len() + 1;
            let (depth, chain) = under(p_raw.as_ref());
            let deepest = below.iter().map(|n| n.depth).max().unwrap_or(x_raw.depth);
            within_depth::<E>(x, deepest.saturating_sub(x_raw.depth).saturating_add(depth))?;
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
            let Some((next, rewrites)) = self.rewrites(&root, &below, None, true)? else {
                return Ok(Try::Again(changed::<E>(x)));
            };
            let fields = parent_change::<E>(&x_raw, p)?;
            let place = Place { lft, rgt, next, depth, chain };
            let w = rewrite::<E>(table, &self.pk, &x_raw, &place, Some(&fields), true)?;
            let mut tx = self.push(self.db.transaction(), w);
            for w in rewrites {
                tx = self.push(tx, w);
            }
            tx = self.push(tx, self.count_kids(x_raw.parent(), &top, -1)?);
            tx = self.push(tx, self.gains(p_raw.as_ref(), &top, Some(rgt), 1)?);
            let Some(f) = self.send_checked(tx, None).await? else {
                progress(Progress { phase: OpPhase::Switch, done: size, total: size });
                return Ok(Try::Done(OpReport { nodes: size, resumable: false }));
            };
            if !f.refused {
                f.changed()?;
            }
            return Ok(Try::Again(changed::<E>(x)));
        }
        Ok(Try::Again(changed::<E>(x)))
    }

    /// Deletes the subtree of `x` (escaped): read (one range query, read again strongly
    /// consistently), then deleted in transactions of up to [`MAX_TX_NODES`] nodes, deepest
    /// intervals first, each node conditioned on its revision and interval, and the parents
    /// that stay counting their deleted children. Each transaction checks the intent: that
    /// it is still the large delete's `fence`, or without, that no operation is in progress.
    /// Returns the nodes deleted (0 for a missing node).
    pub(super) async fn delete_all(
        &self,
        x: &str,
        fence: Option<&TreeOp>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<usize, Error> {
        let table = self.db.table_name();
        let read = || async {
            let Some(root) = self.raw(x).await? else {
                return Ok(None);
            };
            let below =
                self.read_region(Some(&root.id), (root.lft, root.rgt), root.kids, None).await?;
            let top = if root.parent().is_none() { self.top().await? } else { Top::default() };
            let mut nodes: Vec<Raw<E>> = std::iter::once(root).chain(below).collect();
            // Deepest intervals first: a node after its descendants.
            nodes.sort_by_key(|n| std::cmp::Reverse(n.lft));
            Ok(Some((nodes, top)))
        };
        let node = |n: &Raw<E>| (n.id.clone(), n.parent().map(str::to_owned), n.kids);
        let delete = |n: &Raw<E>, kids| node_delete::<E>(table, &self.pk, n, kids);
        let count = |top: &Top, p: Option<&str>, k| self.count_kids(p, top, k);
        let how = Deleting { max: MAX_TX_NODES, top: true, fence, checked: true };
        self.delete_chunked(x, how, progress, read, node, delete, count).await
    }
}

pub(super) async fn delete_now<E: IdHierarchy>(
    d: Delete<'_, '_, E, NestedSet>,
) -> Result<OpReport, Error> {
    let Delete { tree, root: id, mut progress, limit, .. } = d;
    let Some(root) = tree.raw(&id).await? else {
        return Err(no_node::<E>(&id));
    };
    // The number of nodes of the subtree, the root included: one count query.
    if tree.within(root.span()).count().await? <= limit {
        let n = tree.delete_all(&id, None, &mut progress).await?;
        if n == 0 {
            return Err(no_node::<E>(&id));
        }
        return Ok(OpReport { nodes: n, resumable: false });
    }
    let op = TreeOp::start(OpKind::DeleteNode { node: display(&id) }, OpPhase::Remove);
    let (tree, x, nothing) = (&tree, id.as_str(), async { Ok(((), Vec::new())) });
    let run = |op: TreeOp, ()| async move { tree.delete_all(x, Some(&op), &mut progress).await };
    tree.run_large(op, nothing, run).await
}
