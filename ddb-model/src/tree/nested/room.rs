//! Finding room when a gap is exhausted: the smallest region around the parent that stays
//! three-quarters free is numbered again (one transaction, or resumable), or the whole tree.

use super::items::{rewrite, top_update};
use super::layout::{self, Place, Root};
use super::relayout::{Relayout, Take, reserve_fields};
use super::write::Top;
use super::*;
use crate::tree::node::changed;
use crate::tree::op::{OpKind, OpPhase, Progress, TreeOp, WHOLE_TREE, quiet};

/// How many times more index entries each further read around a parent takes, when the
/// regions counted so far have no room.
pub(super) const GROW: usize = 8;

impl<'a, E: IdHierarchy> NestedTree<'a, E> {
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
    pub(super) async fn make_room(
        &self,
        parent: Option<&Raw<E>>,
        extra: u128,
    ) -> Result<(), Error> {
        if let Some(p) = parent {
            let up = self.read_nodes(&p.chain, Raw::read).await?;
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
                return self
                    .start_relayout(relayout, Take::Nothing, &mut quiet())
                    .await
                    .map(|_| ());
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
        self.start_tree_renumbering((reserve.0.to_owned(), reserve.1), &mut quiet())
            .await
            .map(|_| ())
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
    pub(super) async fn room_around<'r>(
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
    pub(super) async fn start_tree_renumbering(
        &self,
        reserve: (String, u128),
        progress: &mut (dyn FnMut(Progress) + Send + '_),
    ) -> Result<usize, Error> {
        let op = TreeOp::start(OpKind::Renumber { node: None }, OpPhase::Copy);
        let mut fields = op.fields();
        fields.extend(reserve_fields(Some(&reserve)));
        let fields: Vec<(&str, &str)> = fields.iter().map(|(a, v)| (*a, v.as_str())).collect();
        if let Err(stored) = self.put_intent(&fields).await? {
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
        self.clear_intent(&op).await?;
        Ok(n)
    }

    /// Runs (or finishes) the renumbering of the whole tree under the intent `op`: every
    /// node read (one range query over all numbers, read again strongly consistently: the
    /// intent refuses every write meanwhile, so this is the whole tree), numbered again from
    /// its shape alone (siblings in id order, so a resumed run computes the same numbers),
    /// the nodes not yet in their place rewritten in fenced transactions of 99, then the top
    /// level's high-water mark. Returns the nodes rewritten.
    pub(super) async fn renumber_tree(
        &self,
        op: &TreeOp,
        reserve: Option<&(String, u128)>,
        progress: &mut (dyn FnMut(Progress) + Send + '_),
    ) -> Result<usize, Error> {
        let top = self.top().await?;
        let region = self.read_region(None, layout::TOP, top.kids, None).await?;
        let root =
            Root { id: None, lft: layout::TOP.0, rgt: layout::TOP.1, depth: 0, chain: Vec::new() };
        let reserve = reserve.map(|(at, n)| (at.as_str(), *n));
        // Without what it keeps free, a tree that grew before its intent was written fits.
        let Some((next, writes)) = self.rewrites(&root, &region, reserve, true)? else {
            return Err(problem::<E>(TreeProblem::NoRoom { parent: None, nodes: region.len() }));
        };
        let total = writes.len() + 1;
        let rewritten = writes.len();
        let mut done = |n: usize| progress(Progress { phase: OpPhase::Copy, done: n, total });
        self.fenced_writes(op, writes, &mut done).await?;
        if top.exists && top.next == next {
            progress(Progress { phase: OpPhase::Switch, done: rewritten, total });
            return Ok(rewritten);
        }
        // The top level's gap: the room the renumbering made.
        self.set_phase(op, OpPhase::Switch).await?;
        let op = TreeOp { phase: OpPhase::Switch, ..op.clone() };
        let mark = self.gains(None, &top, Some(next), 0)?;
        self.fenced_writes(&op, vec![mark], &mut |_| {}).await?;
        progress(Progress { phase: OpPhase::Switch, done: rewritten + 1, total });
        Ok(rewritten + 1)
    }

    /// Numbers the region below `root` again in one transaction: every node of it rewritten,
    /// conditioned on what was read, and the root's high-water mark.
    pub(super) async fn renumber_now(
        &self,
        root: Root,
        root_raw: Option<&Raw<E>>,
        region: &[Raw<E>],
        top: Top,
        reserve: Option<(&str, u128)>,
    ) -> Result<(), Error> {
        let table = self.db.table_name();
        let Some((next, writes)) = self.rewrites(&root, region, reserve, false)? else {
            return Err(changed::<E>(root.id.as_deref().unwrap_or_default()));
        };
        let mut tx = self.db.transaction();
        for w in writes {
            tx = self.push(tx, w);
        }
        let w = match root_raw {
            Some(a) => {
                let place =
                    Place { lft: a.lft, rgt: a.rgt, next, depth: a.depth, chain: a.chain.clone() };
                rewrite::<E>(table, &self.pk, a, &place, None, true)?
            }
            None => top_update::<E>(table, &self.pk, &top, Some(next), 0)?,
        };
        match self.send_checked(self.push(tx, w), None).await? {
            // Read again by the caller's next try.
            Some(f) if !f.refused => f.changed(),
            _ => Ok(()),
        }
    }
}
