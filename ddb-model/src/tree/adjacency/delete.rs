//! Deletes of adjacency subtrees: the subtree read level by level, then deleted deepest
//! first in guarded transactions, under an intent record when it is large.

use super::*;
use crate::tree::builders::Delete;
use crate::tree::handle::Adjacency;

use crate::tree::node::Deleting;
use crate::tree::node::{changed, no_node};
use crate::tree::node::{counter, same_key};
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
                let found = self.next_level_counted(&parents, LEVEL_CONCURRENCY).await?;
                let ids: Vec<String> = found.iter().map(|(n, _)| id_of(n)).collect();
                let level = self.read_nodes(&ids, Raw::read).await?;
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

    /// Deletes the subtree of `x` in transactions of up to 99 nodes, deepest first (the
    /// nodes read `first`, then what is left), each node conditioned on its revision, its
    /// parent and its number of children (see [`node_delete`]); the parents outside a
    /// transaction count their deleted children. Under a large delete's intent `fence`,
    /// every transaction also checks the intent. Returns the number of nodes deleted.
    pub(super) async fn delete_all(
        &self,
        x: &str,
        first: Option<Vec<Raw<E>>>,
        fence: Option<&TreeOp>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<usize, Error> {
        let table = self.db.table_name();
        let sk_attr = index::<E>().and_then(|i| i.sk);
        let first = Mutex::new(first);
        let read = || async {
            let taken = first.lock().unwrap_or_else(PoisonError::into_inner).take();
            let nodes = match taken {
                Some(nodes) => Some(nodes),
                None => self.read_subtree(x).await?,
            };
            Ok(nodes.map(|nodes| (nodes, ())))
        };
        let node = |r: &Raw<E>| (id_of(&r.node), parent_of(&r.node), r.kids);
        let delete = |r: &Raw<E>, kids| {
            let stored = sk_attr.map(|attr| (attr, r.index_sk.as_deref()));
            node_delete::<E>(table, &self.pk, &id_of(&r.node), r, kids, stored)
        };
        let count = |_: &(), p: Option<&str>, k| {
            counter::<E>(table, &self.pk, p.unwrap_or_default(), k, 0, None)
        };
        let how = Deleting { max: DELETE_CHUNK + 1, top: false, fence, checked: false };
        self.delete_chunked(x, how, progress, read, node, delete, count).await
    }
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
    let Delete { tree, root: id, mut progress, limit, .. } = d;
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
    let (tree, x, nothing) = (&tree, id.as_str(), async { Ok(((), Vec::new())) });
    let run = |op: TreeOp, ()| async move {
        tree.delete_all(x, Some(nodes), Some(&op), &mut progress).await
    };
    tree.run_large(op, nothing, run).await
}
