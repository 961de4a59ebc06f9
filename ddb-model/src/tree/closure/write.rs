//! Closure-tree writes: insert and replace (one transaction with every copy), moves and
//! deletes (one transaction when the copies fit, else the resumable protocol of `op.rs`).

use crate::tree::builders::{Delete, Move};
use crate::tree::handle::Closure;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};

use super::{ClosureTree, Own, copy_base, copy_below, copy_item, copy_sk, own_copy};
use crate::error::{Error, NodeReason};
use crate::expr::ExprBuilder;
use crate::item::{Item, item_size};
use crate::ops::action::Action;
use crate::ops::put::next_version;
use crate::ops::retry::{self, CONFLICTS, MOVE_CONFLICTS, Try};
use crate::ops::{Put, Target, Transaction};
use crate::tree::conflict::{action_error, moving};
use crate::tree::node::{
    IdHierarchy, TREE_UP_ATTR, changed, cycle, display, id_of, no_node, no_sort_key, parent_of,
    reparented, within_depth,
};
use crate::tree::op::{OpPhase, OpReport, reported};
use crate::tree::raw::{RawAction, add_rev, delete_plain, equals, guarded, n, put_plain, s};
use crate::tree::{TREE_REV_ATTR, TreeProblem, problem};

/// The most actions one transaction holds.
const MAX_ACTIONS: usize = 100;

/// `pk exists AND type = <copy type>`: the item is a copy of a node of `E`.
pub(crate) fn is_copy<E: IdHierarchy>(x: &mut ExprBuilder) -> String {
    let pk = x.name(crate::tree::pk_attr::<E>());
    let copy = equals(x, crate::model::type_attr::<E::Table>(), s(E::TREE.copy_type), false);
    format!("attribute_exists({pk}) AND {copy}")
}

/// The condition that a node's own copy is still as it was read (`None`: that there is
/// none).
pub(crate) fn own_is<E: IdHierarchy>(x: &mut ExprBuilder, read: Option<(&str, u64)>) -> String {
    let Some((chain, rev)) = read else {
        let pk = x.name(crate::tree::pk_attr::<E>());
        return format!("attribute_not_exists({pk})");
    };
    let copy = is_copy::<E>(x);
    let up = equals(x, TREE_UP_ATTR, s(chain), false);
    format!("{copy} AND {up} AND {}", equals(x, TREE_REV_ATTR, n(rev), rev == 0))
}

/// Writes a node's own copy, conditioned on the one read (`None`: on there being none).
pub(crate) fn put_own<E: IdHierarchy>(
    table: &str,
    item: Item,
    sk: String,
    read: Option<(&str, u64)>,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let cond = own_is::<E>(&mut x, read);
    let size = item_size(&item);
    let put = Action::put(item).guarded(cond, x).return_old(true).into_transact_item(table)?;
    Ok(RawAction { sk, item: put, size })
}

/// Deletes a node's own copy if it is still the one read.
pub(crate) fn delete_own<E: IdHierarchy>(
    table: &str,
    pk: &str,
    sk: String,
    chain: &str,
    rev: u64,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let cond = own_is::<E>(&mut x, Some((chain, rev)));
    guarded::<E>(table, (pk, sk), Action::delete, cond, x, 0)
}

/// Counts an insert under a node: bumps the revision of its own copy, which must still record
/// the ancestors `chain` (the new node's copies are written under them).
pub(super) fn bump_own<E: IdHierarchy>(
    table: &str,
    pk: &str,
    sk: String,
    chain: &str,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let cond =
        format!("{} AND {}", is_copy::<E>(&mut x), equals(&mut x, TREE_UP_ATTR, s(chain), false));
    add_rev::<E>(table, (pk, sk), cond, x)
}

/// Counts a move under a node in its revision: bumps the revision of its own copy (sort key
/// `sk`), which must exist (a large move's new parent, which its intent keeps in place).
pub(crate) fn rev_bump_copy<E: IdHierarchy>(
    table: &str,
    pk: &str,
    sk: String,
) -> Result<RawAction, Error> {
    let mut x = ExprBuilder::default();
    let cond = is_copy::<E>(&mut x);
    add_rev::<E>(table, (pk, sk), cond, x)
}

/// The copies of a node whose ancestors are `chain` (root first), at relative depth `rel`
/// below the last of them... more precisely: node `id` at depth `chain.len() + 1`, one copy
/// under each ancestor and one under the tree. Their sort keys.
pub(crate) fn copy_sks<E: IdHierarchy>(chain: &[String], id: &str) -> Vec<String> {
    let depth = chain.len() + 1;
    let mut out: Vec<String> =
        chain.iter().enumerate().map(|(i, a)| copy_sk::<E>(Some(a), depth - (i + 1), id)).collect();
    out.push(copy_sk::<E>(None, depth, id));
    out
}

impl<'a, E: IdHierarchy> ClosureTree<'a, E> {
    /// Sends a transaction that rewrites the node `id` (escaped; action 0 its entity item,
    /// action 1 its own copy, conditioned on what was read) and its copies, after adding the
    /// check that no large operation involves it or its ancestors `chain`. Tried again when
    /// the own copy changed or a conflict canceled it; [`TreeProblem::Busy`]; the entity
    /// item's own error; `other(err)` when another action's condition failed.
    pub(super) async fn send_node_write(
        &self,
        tx: Transaction<'_, E::Table>,
        chain: &[String],
        id: &str,
        other: impl FnOnce(Error) -> Error,
    ) -> Result<Try<()>, Error> {
        let lineage = [chain, &[id.to_owned()]].concat();
        let Some(f) = self.send_checked(tx, Some(&lineage)).await? else {
            return Ok(Try::Done(()));
        };
        match f.first() {
            _ if f.refused => Ok(Try::Again(changed::<E>(id))),
            Some(0) => Err(action_error(f.err, 0)),
            Some(1) => Ok(Try::Again(changed::<E>(id))),
            Some(_) => Err(other(f.err)),
            None if f.only_conflict() => Ok(Try::Again(changed::<E>(id))),
            None => Err(f.err),
        }
    }

    /// Writes a changed node and all its copies: one strongly consistent `GetItem` of its own
    /// copy, then one `TransactWriteItems` that replaces the entity item (with its guards:
    /// [`Error::NotFound`], [`Error::VersionConflict`]) and rewrites every copy, conditioned
    /// on the node not having moved since (retried if it did). The node must stay where it
    /// is ([`TreeProblem::ParentChanged`]; use [`move_subtree`](ClosureTree::move_subtree)).
    ///
    /// This is how a whole closure node changes: a plain `node.replace(&db)` writes the
    /// entity item only, and the copies that the tree's queries return would keep the old
    /// values. To change some fields, use [`update`](ClosureTree::update).
    pub async fn replace<'b>(&'b self, node: impl Into<Target<'b, E>>) -> Result<(), Error> {
        let mut target = node.into();
        let n = target.get();
        self.check_tree(n)?;
        let id = id_of(n);
        let (_, next) = next_version::<E>(n.version())?;
        let stamp = self.db.stamp(false);
        let base = copy_base(n, next, Some(stamp))?;
        let table = self.db.table_name();
        let (tree, shared, id, base) = (self, &target, &id, &base);
        retry::on_conflict(CONFLICTS, move |_| async move {
            let Some(own) = tree.own(id).await? else {
                return Err(no_node::<E>(id));
            };
            let n = shared.get();
            if parent_of(&own.node) != parent_of(n) {
                return Err(problem::<E>(TreeProblem::ParentChanged { id: display(id) }));
            }
            let mut tx = tree.db.transaction().replace_with(n, |put| put.at(stamp));
            let own_item = own_copy::<E>(base, id, &own.chain, own.rev + 1)?;
            let read = Some((own.chain_text.as_str(), own.rev));
            tx = tree.push(tx, put_own::<E>(table, own_item, copy_sk::<E>(Some(id), 0, id), read)?);
            for sk in copy_sks::<E>(&own.chain, id) {
                tx = tree.push(tx, put_plain(table, copy_item::<E>(base, sk.clone())?, sk)?);
            }
            tree.send_node_write(tx, &own.chain, id, |err| err).await
        })
        .await?;
        target.written(next, Some(stamp));
        Ok(())
    }

    /// The subtree of `x` for a transactional write: its copies (depth 1 and more) and the
    /// own copies of the nodes in it, read after the listing was started and checked by a
    /// count after them (an insert under a node between the listing and its own copy's read
    /// changes the count; one after changes the revision). At most `cap` nodes are read;
    /// `None` when there are more, `Err(..)` retry when the subtree changed.
    pub(crate) async fn read_below(
        &self,
        x: &str,
        cap: usize,
    ) -> Result<Result<Option<Below<E>>, ()>, Error> {
        let listing = self.raw_copies(x, 1).limit(cap.saturating_add(1)).all().await?;
        if listing.len() > cap {
            return Ok(Ok(None));
        }
        let nodes: Vec<(usize, E)> =
            listing.into_iter().map(|item| copy_below::<E>(x, item)).collect::<Result<_, _>>()?;
        // A node listed twice (its copies under `x` at two depths: a large move within the
        // subtree between its copy and remove phases) is a concurrent change: `Busy` while
        // that operation runs, else read again. Never a transaction naming its items twice.
        let ids: Vec<String> = nodes.iter().map(|(_, n)| id_of(n)).collect();
        let mut seen = std::collections::HashSet::with_capacity(ids.len());
        if !ids.iter().all(|id| seen.insert(id)) {
            return match self.busy().await? {
                Some(busy) => Err(busy),
                None => Ok(Err(())),
            };
        }
        let sks: Vec<String> = ids.iter().map(|id| copy_sk::<E>(Some(id), 0, id)).collect();
        let mut owns = HashMap::with_capacity(ids.len());
        for (id, item) in ids.into_iter().zip(self.read_items(&sks).await?) {
            // Deleted meanwhile.
            let Some(item) = item else {
                return Ok(Err(()));
            };
            owns.insert(id.clone(), Own::<E>::read(&id, item)?);
        }
        if !nodes.is_empty() && self.raw_copies(x, 1).count().await? != nodes.len() {
            return Ok(Err(()));
        }
        Ok(Ok(Some(Below { nodes, owns })))
    }
}

/// The table's sort key attribute (closure trees need one).
pub(crate) fn sk_attr<E: IdHierarchy>() -> Result<&'static str, Error> {
    <E::Table as crate::Table>::SK.ok_or_else(no_sort_key::<E>)
}

/// The nodes below a subtree's root, read for a transactional write.
pub(crate) struct Below<E> {
    /// Each node with its depth relative to the root, in key order (shallowest first).
    pub nodes: Vec<(usize, E)>,
    /// Their own copies, by escaped id.
    pub owns: HashMap<String, Own<E>>,
}

/// The ancestors of `node` between the subtree's root and it (escaped ids, root side first),
/// from its recorded ancestors: `own_chain` is `root_chain + [root] + mid`.
pub(crate) fn mid_chain<E: IdHierarchy>(
    own_chain: &[String],
    root_chain_len: usize,
    root: &str,
    node: &str,
) -> Result<Vec<String>, Error> {
    match own_chain.get(root_chain_len) {
        Some(r) if r == root => Ok(own_chain[root_chain_len + 1..].to_vec()),
        _ => Err(problem::<E>(TreeProblem::CorruptNode {
            id: display(node),
            reason: NodeReason::NotThrough { root: display(root) },
        })),
    }
}

/// Sends a move of a closure subtree.
pub(super) async fn send_move<E: IdHierarchy>(
    mv: Move<'_, '_, E, Closure>,
) -> Result<OpReport, Error> {
    let Move { tree, from: id, to: parent, mut progress, limit, .. } = mv;
    if parent.as_deref() == Some(id.as_str()) {
        return Err(cycle::<E>(&id, &id));
    }
    // Tries that found the reads disagreeing: when every try does, the node is corrupt.
    let mismatches = AtomicU32::new(0);
    let (shared, x, p, mismatches) = (&tree, &id, parent.as_deref(), &mismatches);
    let moved = moving(E::NAME, MOVE_CONFLICTS, display(x), move |n| async move {
        let step = shared.move_once(x, p, limit).await?;
        let mismatch = matches!(step, Step::Mismatch(_));
        let every = mismatch && mismatches.fetch_add(1, Ordering::Relaxed) + 1 == n;
        shared.step_try(x, step, every).await
    })
    .await?;
    match moved {
        Some(report) => Ok(reported(report, &[OpPhase::Copy, OpPhase::Remove], &mut progress)),
        None => tree.large_move(&id, parent.as_deref(), &mut progress).await,
    }
}

impl<E: IdHierarchy> ClosureTree<'_, E> {
    /// A try of a transactional move or delete of `x` that did `step`: done (`None`: too
    /// large), or tried again. Reads that disagree are a large operation between its phases
    /// (it leaves copies under the old ancestors of nodes whose own copies record the new
    /// ones): [`TreeProblem::Busy`]; else a concurrent change, or with `every` (every try
    /// saw it) the corrupt node.
    async fn step_try(
        &self,
        x: &str,
        step: Step,
        every: bool,
    ) -> Result<Try<Option<OpReport>>, Error> {
        Ok(match step {
            Step::Done(report) => Try::Done(Some(report)),
            Step::TooLarge => Try::Done(None),
            Step::Retry => Try::Again(changed::<E>(x)),
            Step::Mismatch(corrupt) => match self.busy().await? {
                Some(busy) => return Err(busy),
                None => Try::Again(if every { corrupt } else { changed::<E>(x) }),
            },
        })
    }
}

/// What one try of a transactional move or delete did.
pub(crate) enum Step {
    Done(OpReport),
    /// The subtree does not fit one transaction.
    TooLarge,
    /// The subtree changed between the reads and the transaction.
    Retry,
    /// The reads disagree (a node below records ancestors that do not pass through the
    /// root): a concurrent move, or, if every try sees it, a corrupt node.
    Mismatch(Error),
}

/// The checks of a move from the own copies of the node (`x`) and its new parent (`p`):
/// returns the new ancestors of the node.
pub(crate) fn new_chain<E: IdHierarchy>(
    x: &str,
    x_own: Option<&Own<E>>,
    p: Option<&str>,
    p_own: Option<&Own<E>>,
) -> Result<Vec<String>, Error> {
    if x_own.is_none() {
        return Err(no_node::<E>(x));
    }
    let Some(p) = p else {
        return Ok(Vec::new());
    };
    let Some(p_own) = p_own else {
        return Err(problem::<E>(TreeProblem::NoParent { parent: display(p) }));
    };
    if p == x || p_own.chain.iter().any(|a| a == x) {
        return Err(cycle::<E>(x, p));
    }
    let mut chain = p_own.chain.clone();
    chain.push(p.to_owned());
    Ok(chain)
}

impl<'a, E: IdHierarchy> ClosureTree<'a, E> {
    /// One try of a transactional move.
    async fn move_once(&self, x: &str, p: Option<&str>, limit: usize) -> Result<Step, Error> {
        let table = self.db.table_name();
        if limit == 0 {
            return Ok(Step::TooLarge);
        }
        let (x_own, p_own) = match p {
            Some(p) => futures_util::future::try_join(self.own(x), self.own(p)).await?,
            None => (self.own(x).await?, None),
        };
        let new = new_chain::<E>(x, x_own.as_ref(), p, p_own.as_ref())?;
        let Some(x_own) = x_own else {
            return Err(no_node::<E>(x));
        };
        let old = x_own.chain.clone();
        let per_node = old.len() + new.len() + 3;
        let fixed = 2 + usize::from(p.is_some());
        let cap = ((MAX_ACTIONS - fixed) / per_node).min(limit);
        if cap == 0 {
            return Ok(Step::TooLarge);
        }
        let below = match self.read_below(x, cap - 1).await? {
            Ok(Some(below)) => below,
            Ok(None) => return Ok(Step::TooLarge),
            Err(()) => return Ok(Step::Retry),
        };
        // The new parent listed below the node: it moved there after its own copy was read
        // (the reads are not one snapshot). Read again, and the next try finds the cycle;
        // never a transaction that both rewrites and counts in its own copy.
        if p.is_some_and(|p| below.owns.contains_key(p)) {
            return Ok(Step::Retry);
        }
        let deepest = below.nodes.iter().map(|(rel, _)| *rel).max().unwrap_or(0);
        within_depth::<E>(x, new.len() + 1 + deepest)?;
        let x_node = reparented(&x_own.node, p)?;
        let (_, x_next) = next_version::<E>(x_node.version())?;
        // A move keeps the node's timestamps: its fields are unchanged.
        let mut tx = self.db.transaction().replace_with(&x_node, Put::keeping_times);
        let mut own_indexes = Vec::new();
        let moved = std::iter::once((&x_own, copy_base(&x_node, x_next, None)?, Vec::new()));
        let mut rest = Vec::with_capacity(below.nodes.len());
        for (_, node) in &below.nodes {
            let id = id_of(node);
            let Some(own) = below.owns.get(&id) else {
                return Ok(Step::Retry);
            };
            let mid = match mid_chain::<E>(&own.chain, old.len(), x, &id) {
                Ok(mid) => mid,
                // The reads are not one snapshot: when `x` (or an ancestor) moved after its
                // own copy was read, or the node moved out of the subtree after the listing,
                // its own copy records other ancestors. That is a conflict to retry; only a
                // mismatch that every try sees is a corrupt node.
                Err(corrupt) => return Ok(Step::Mismatch(corrupt)),
            };
            rest.push((own, copy_base(node, node.version(), None)?, mid));
        }
        for (own, base, mid) in moved.chain(rest) {
            let id = id_of(&own.node);
            let (old_chain, new_chain) = chains_of(&old, &new, x, &id, &mid);
            let old_sks = copy_sks::<E>(&old_chain, &id);
            let new_sks = copy_sks::<E>(&new_chain, &id);
            for sk in old_sks.iter().filter(|sk| !new_sks.contains(sk)) {
                tx = self.push(tx, delete_plain::<E>(table, &self.pk, sk.clone())?);
            }
            // Copies under the subtree do not change; the moved root's copies carry its new
            // parent, so they are all written.
            for sk in new_sks.iter().filter(|sk| id == x || !old_sks.contains(sk)) {
                let item = copy_item::<E>(&base, sk.clone())?;
                tx = self.push(tx, put_plain(table, item, sk.clone())?);
            }
            own_indexes.push(tx.len());
            let own_sk = copy_sk::<E>(Some(&id), 0, &id);
            let item = own_copy::<E>(&base, &id, &new_chain, own.rev + 1)?;
            let read = Some((own.chain_text.as_str(), own.rev));
            tx = self.push(tx, put_own::<E>(table, item, own_sk, read)?);
        }
        let parent_index = tx.len();
        if let (Some(p), Some(p_own)) = (p, &p_own) {
            let sk = copy_sk::<E>(Some(p), 0, p);
            tx = self.push(tx, bump_own::<E>(table, &self.pk, sk, &p_own.chain_text)?);
        }
        let nodes = below.nodes.len() + 1;
        let Some(f) = self.send_checked(tx, None).await? else {
            return Ok(Step::Done(OpReport { nodes, resumable: false }));
        };
        match f.first() {
            _ if f.refused => Ok(Step::Retry),
            Some(i) if i == 0 || own_indexes.contains(&i) || i == parent_index => Ok(Step::Retry),
            None if f.only_conflict() => Ok(Step::Retry),
            _ => Err(f.err),
        }
    }
}

/// The ancestors of `node` before and after the move of the subtree at `x` from below
/// `old` to below `new`; `mid` are its ancestors between `x` and it.
pub(crate) fn chains_of(
    old: &[String],
    new: &[String],
    x: &str,
    node: &str,
    mid: &[String],
) -> (Vec<String>, Vec<String>) {
    let mut old_chain = old.to_vec();
    let mut new_chain = new.to_vec();
    if node != x {
        for chain in [&mut old_chain, &mut new_chain] {
            chain.push(x.to_owned());
            chain.extend(mid.iter().cloned());
        }
    }
    (old_chain, new_chain)
}

/// Sends a delete of a closure subtree.
pub(super) async fn send_delete<E: IdHierarchy>(
    d: Delete<'_, '_, E, Closure>,
) -> Result<OpReport, Error> {
    let Delete { tree, root: id, mut progress, limit, .. } = d;
    let (shared, x) = (&tree, &id);
    let deleted = retry::on_conflict(CONFLICTS, move |_| async move {
        shared.step_try(x, shared.delete_once(x, limit).await?, false).await
    })
    .await?;
    match deleted {
        Some(report) => Ok(reported(report, &[OpPhase::Remove], &mut progress)),
        None => tree.large_delete(&id, &mut progress).await,
    }
}

impl<'a, E: IdHierarchy> ClosureTree<'a, E> {
    /// One try of a transactional delete.
    async fn delete_once(&self, x: &str, limit: usize) -> Result<Step, Error> {
        let table = self.db.table_name();
        if limit == 0 {
            return Ok(Step::TooLarge);
        }
        let Some(x_own) = self.own(x).await? else {
            return Err(no_node::<E>(x));
        };
        let depth = x_own.depth();
        // The root costs depth + 2 actions, a node below it at least depth + 3.
        let budget = MAX_ACTIONS - 1;
        if depth + 2 > budget || limit == 0 {
            return Ok(Step::TooLarge);
        }
        let cap = ((budget - depth - 2) / (depth + 3)).min(limit.saturating_sub(1));
        let below = match self.read_below(x, cap).await? {
            Ok(Some(below)) => below,
            Ok(None) => return Ok(Step::TooLarge),
            Err(()) => return Ok(Step::Retry),
        };
        let actions: usize =
            depth + 2 + below.nodes.iter().map(|(rel, _)| depth + rel + 2).sum::<usize>();
        if actions > budget {
            return Ok(Step::TooLarge);
        }
        // Every node listed below `x` must record `x` among its ancestors (as a move
        // checks): a copy left under `x` by a large move that is taking the node elsewhere
        // would otherwise make this delete remove the node where it lives now (and, when the
        // move has removed only some of the old copies, part of its subtree, orphaning the
        // rest) once the move has finished.
        for (_, node) in &below.nodes {
            let id = id_of(node);
            let Some(own) = below.owns.get(&id) else {
                return Ok(Step::Retry);
            };
            if let Err(corrupt) = mid_chain::<E>(&own.chain, x_own.chain.len(), x, &id) {
                return Ok(Step::Mismatch(corrupt));
            }
        }
        let mut tx = self.db.transaction();
        let mut own_indexes = Vec::new();
        let nodes = std::iter::once(&x_own)
            .chain(below.nodes.iter().filter_map(|(_, n)| below.owns.get(&id_of(n))));
        let mut n = 0;
        for own in nodes {
            n += 1;
            let id = id_of(&own.node);
            tx = tx.delete(self.key_of(&id));
            for sk in copy_sks::<E>(&own.chain, &id) {
                tx = self.push(tx, delete_plain::<E>(table, &self.pk, sk)?);
            }
            own_indexes.push(tx.len());
            let sk = copy_sk::<E>(Some(&id), 0, &id);
            tx = self.push(tx, delete_own::<E>(table, &self.pk, sk, &own.chain_text, own.rev)?);
        }
        if n != below.nodes.len() + 1 {
            return Ok(Step::Retry);
        }
        let Some(f) = self.send_checked(tx, None).await? else {
            return Ok(Step::Done(OpReport { nodes: n, resumable: false }));
        };
        match f.first() {
            _ if f.refused => Ok(Step::Retry),
            Some(i) if own_indexes.contains(&i) => Ok(Step::Retry),
            None if f.only_conflict() => Ok(Step::Retry),
            _ => Err(f.err),
        }
    }
}
