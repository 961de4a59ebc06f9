//! Deletes of adjacency subtrees: the subtree read level by level, then deleted deepest
//! first in guarded transactions, under an intent record when it is large.

use super::*;
use crate::tree::builders::Delete;
use crate::tree::handle::Adjacency;

use super::write::{counter, same_key};
use crate::tree::conflict::Failed;
use crate::tree::node::{changed, no_node};
use crate::tree::raw::{RawAction, equals, guarded, n};

impl<'a, E: IdHierarchy> AdjacencyTree<'a, E> {
    /// The subtree of `x` (escaped), strongly consistent: the nodes level by level from the
    /// index, each checked against its children counter (read again while the index lags).
    /// Deepest nodes first. `None` when `x` does not exist.
    pub(super) async fn read_subtree(&self, x: &str) -> Result<Option<Vec<Raw<E>>>, Error> {
        let levels = self.read_levels(x, usize::MAX).await?;
        Ok(levels.map(|levels| {
            let mut all: Vec<Raw<E>> = levels.into_iter().flatten().collect();
            all.reverse();
            all
        }))
    }

    /// The top `1 + below` levels of the subtree of `x` (escaped), strongly consistent:
    /// `x`, its children, ..., down to relative depth `below` (fewer when the subtree ends
    /// before). Each level is read from the index and checked against the children counters
    /// of the level above (read again while the index lags). `None` when `x` does not exist.
    pub(super) async fn read_levels(
        &self,
        x: &str,
        below: usize,
    ) -> Result<Option<Vec<Vec<Raw<E>>>>, Error> {
        retry::on_conflict(INDEX_LAG, move |_| async move {
            let Some(root) = self.raw(x).await? else {
                return Ok(Try::Done(None));
            };
            let mut seen: std::collections::HashSet<String> =
                std::iter::once(id_of(&root.node)).collect();
            let mut levels = vec![vec![root]];
            while let Some(last) = levels.last().filter(|_| levels.len() <= below) {
                let parents: Vec<String> =
                    last.iter().filter(|r| r.kids > 0).map(|r| id_of(&r.node)).collect();
                if parents.is_empty() {
                    break;
                }
                let expected: u64 = last.iter().map(|r| r.kids).sum();
                let found = self.next_level_ids(&parents, LEVEL_CONCURRENCY).await?;
                let ids: Vec<String> = found.iter().map(id_of).collect();
                let level = if ids.is_empty() {
                    Vec::new()
                } else {
                    self.read_nodes(&ids, Raw::read).await?
                };
                // A node met twice moved between the reads of its parents (children counts
                // can still add up, when another child moved the other way): the subtree
                // changed under the reads, which are done again. A delete never names a
                // node twice.
                if !level.iter().all(|r| seen.insert(id_of(&r.node)))
                    || level.len() as u64 != expected
                {
                    return Ok(Try::Again(changed::<E>(x)));
                }
                levels.push(level);
            }
            Ok(Try::Done(Some(levels)))
        })
        .await
    }

    /// Deletes the subtree of `x` in transactions of up to [`DELETE_CHUNK`] nodes, deepest
    /// first, each node conditioned on its revision, its parent and its number of children
    /// (see [`node_delete`]); the parent's counter goes down with
    /// `x`. Returns the number of nodes deleted. Under a large delete's intent `fence`, every
    /// transaction also checks that the intent is still at the writer's epoch
    /// ([`TreeProblem::Superseded`] otherwise).
    pub(super) async fn delete_all(
        &self,
        x: &str,
        first: Option<Vec<Raw<E>>>,
        fence: Option<&TreeOp>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<usize, Error> {
        let table = self.db.table_name();
        let sk_attr = index::<E>().and_then(|i| i.sk);
        // What earlier passes left: the nodes read first (used by the first pass), the
        // nodes deleted so far, the progress callback.
        let first = Mutex::new(first);
        let done = AtomicUsize::new(0);
        let progress = Mutex::new(progress);
        let (first, done, progress) = (&first, &done, &progress);
        retry::on_conflict(CONFLICTS, move |_| async move {
            let taken = first.lock().unwrap_or_else(PoisonError::into_inner).take();
            let nodes = match taken {
                Some(nodes) => nodes,
                None => match self.read_subtree(x).await? {
                    Some(nodes) => nodes,
                    None => return Ok(Try::Done(done.load(Ordering::Relaxed))),
                },
            };
            let total = done.load(Ordering::Relaxed) + nodes.len();
            // The children this pass's committed chunks deleted, per parent still standing.
            let mut gone: HashMap<String, u64> = HashMap::new();
            for chunk in chunks(&nodes) {
                let mut tx = self.db.transaction();
                for raw in &chunk.nodes {
                    let id = id_of(&raw.node);
                    let kids = raw.kids.saturating_sub(gone.get(&id).copied().unwrap_or(0));
                    let stored = sk_attr.map(|attr| (attr, raw.index_sk.as_deref()));
                    tx = self.push(tx, node_delete::<E>(table, &self.pk, &id, raw, kids, stored)?);
                }
                // The parents that stay (for now) count their deleted children.
                for (p, n) in &chunk.parents {
                    tx = self.push(tx, counter::<E>(table, &self.pk, p, -n, 0, None)?);
                }
                let fence_at = tx.len();
                if let Some(op) = fence {
                    tx = self.push(tx, self.fence_check(op)?);
                }
                if let Err(err) = tx.send().await {
                    let f = Failed::new(err);
                    if let Some(op) = fence.filter(|_| f.at(fence_at)) {
                        return Err(superseded::<E>(op));
                    }
                    // The subtree changed: read it again.
                    f.changed()?;
                    return Ok(Try::Again(changed::<E>(x)));
                }
                for (p, n) in &chunk.parents {
                    *gone.entry(p.clone()).or_default() += n.unsigned_abs();
                }
                let now = done.fetch_add(chunk.nodes.len(), Ordering::Relaxed) + chunk.nodes.len();
                let mut progress = progress.lock().unwrap_or_else(PoisonError::into_inner);
                (**progress)(Progress { phase: OpPhase::Remove, done: now, total });
            }
            Ok(Try::Done(done.load(Ordering::Relaxed)))
        })
        .await
    }
}

/// One transaction of a delete: nodes, deepest first, and the parents outside it with the
/// number of their children it deletes.
pub(super) struct Chunk<'n, E> {
    nodes: Vec<&'n Raw<E>>,
    parents: Vec<(String, i64)>,
}

/// Splits `nodes` (deepest first) into transactions of at most 99 actions: one per node and
/// one per parent outside the transaction.
pub(super) fn chunks<E: IdHierarchy>(nodes: &[Raw<E>]) -> Vec<Chunk<'_, E>> {
    let mut out = Vec::new();
    let mut current: Vec<&Raw<E>> = Vec::new();
    let parents_of = |chunk: &[&Raw<E>]| -> Vec<(String, i64)> {
        let inside: std::collections::HashSet<String> =
            chunk.iter().map(|r| id_of(&r.node)).collect();
        let mut parents: Vec<(String, i64)> = Vec::new();
        for r in chunk {
            if let Some(p) = parent_of(&r.node).filter(|p| !inside.contains(p)) {
                match parents.iter_mut().find(|(q, _)| *q == p) {
                    Some((_, n)) => *n += 1,
                    None => parents.push((p, 1)),
                }
            }
        }
        parents
    };
    for raw in nodes {
        current.push(raw);
        if current.len() + parents_of(&current).len() > DELETE_CHUNK + 1 {
            current.pop();
            let parents = parents_of(&current);
            out.push(Chunk { nodes: std::mem::take(&mut current), parents });
            current.push(raw);
        }
    }
    if !current.is_empty() {
        let parents = parents_of(&current);
        out.push(Chunk { nodes: current, parents });
    }
    out
}

/// Deletes the node `id` of a delete's subtree only if it is still the node `raw` read: the
/// same revision (nothing inserted or moved under it since), the same parent (its index
/// key `stored`; the parent outside the transaction is counted down) and `kids` children
/// (those read, less the ones earlier transactions of the delete removed). The revision
/// alone does not say it: it restarts when a node is deleted and inserted again, so a node
/// inserted again elsewhere, or under a parent inserted again with other children, could
/// match it, and the delete would leave a counter too high or an orphan.
pub(super) fn node_delete<E: IdHierarchy>(
    table: &str,
    pk: &str,
    id: &str,
    raw: &Raw<E>,
    kids: u64,
    stored: Option<(&str, Option<&str>)>,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let mut cond = guard::<E>(&mut x, raw.rev, raw.node.version());
    if let Some((attr, value)) = stored {
        cond.push_str(&same_key(&mut x, attr, value));
    }
    cond.push_str(&format!(" AND {}", equals(&mut x, TREE_KIDS_ATTR, n(kids), kids == 0)));
    guarded::<E>(table, (pk, node_sk::<E>(id)), Action::delete, cond, x, 0)
}

/// Sends a delete of an adjacency subtree.
pub(super) async fn send_delete<E: IdHierarchy>(
    d: Delete<'_, '_, E, Adjacency>,
) -> Result<OpReport, Error> {
    let Delete { tree, root: id, progress, limit, .. } = d;
    let mut progress = progress.unwrap_or_else(|| Box::new(|_| {}));
    let Some(nodes) = tree.read_subtree(&id).await? else {
        return Err(no_node::<E>(&id));
    };
    if nodes.len() <= limit {
        if let Some(busy) = tree.busy().await? {
            return Err(busy);
        }
        let n = tree.delete_all(&id, Some(nodes), None, &mut progress).await?;
        return Ok(OpReport { nodes: n, resumable: false });
    }
    let op = TreeOp::start(OpKind::DeleteNode { node: display(&id) }, OpPhase::Remove);
    tree.begin(&op).await?;
    let n = tree.delete_all(&id, Some(nodes), Some(&op), &mut progress).await?;
    tree.clear_intent(&op).await?;
    Ok(OpReport { nodes: n, resumable: true })
}
