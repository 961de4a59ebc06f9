//! Closure moves and deletes larger than one transaction: the intent-record protocol of the
//! path strategy (see `tree/op.rs`), with the closure's phases.
//!
//! A move of the subtree at `x`:
//!
//! 1. **Check.** The intent is written (inserts under `x` are refused from then on, and so
//!    are other moves and deletes); the node, the new parent and the subtree are read and
//!    the move validated. The node's ancestors before and after are recorded in the intent.
//! 2. **Copy.** Every moved node gets its copies under the new ancestors (and under the tree
//!    at its new depth). Its copies under the old ones are all still there.
//! 3. **Switch.** Every moved node's own copy records its new ancestors; the root's entity
//!    item its new parent.
//! 4. **Remove.** The copies under the old ancestors are deleted; the intent is removed.
//!
//! Copies under the moved root and the nodes below it never change. Every step is an
//! idempotent write computed from the intent and a fresh read of the subtree (the copies
//! under `x`), so [`ClosureTree::resume`] redoes the current phase and goes on.
//!
//! A delete removes the nodes below `x` deepest first, each whole in one transaction (its
//! entity item, own copy and every copy, the one under `x` included), then `x` itself, its
//! own copy last: an interrupted delete leaves a smaller tree of whole nodes, and resuming
//! finds what is left through the copies under `x`. A node already deleted is not among
//! them, so its id, free again, may be taken by an insert elsewhere without the resumed
//! delete touching the new node.

use std::collections::HashMap;

use super::copy_below;
use super::write::{chains_of, copy_sks, new_chain};
use super::{ClosureTree, copy_base, copy_item, copy_sk, own_copy};
use crate::error::{Error, IntentReason, NodeReason};
use crate::item::Item;
use crate::model::{string_attr, to_item};
use crate::ops::put::next_version;
use crate::tree::node::{
    IdHierarchy, clone_node, decode_chain, display, encode_chain, id_of, no_node, parent_of,
    reparented, within_depth,
};
use crate::tree::op::{CHUNK, OpKind, OpPhase, OpReport, Progress, ProgressFn, TreeOp};
use crate::tree::op::{corrupt_intent, entering, intent_value, quiet};
use crate::tree::raw::{OP_FROM, OP_NEW_UP, OP_OLD_UP, OP_PARENT, delete_plain, put_plain};
use crate::tree::{TreeProblem, problem};

/// A move as its intent records it (escaped ids, chains of escaped ids).
pub(super) struct MovePlan {
    pub(super) x: String,
    p: Option<String>,
    old: Vec<String>,
    new: Vec<String>,
}

impl<'a, E: IdHierarchy> ClosureTree<'a, E> {
    /// The node `x` (from its own copy, at relative depth 0) and every node below it (from
    /// the copies under it), strongly consistent, shallowest first.
    pub(super) async fn subtree(&self, x: &str) -> Result<Vec<(usize, E)>, Error> {
        let (own, below) = futures_util::future::try_join(
            self.get_raw(&copy_sk::<E>(Some(x), 0, x)),
            self.raw_copies(x, 1).all(),
        )
        .await?;
        let own = own.map(|own| Ok((0, super::decode_copy::<E>(own)?)));
        own.into_iter().chain(below.into_iter().map(|item| copy_below::<E>(x, item))).collect()
    }
}

impl<'a, E: IdHierarchy> ClosureTree<'a, E> {
    /// A move through the protocol.
    pub(crate) async fn large_move(
        &self,
        x: &str,
        p: Option<&str>,
        progress: &mut ProgressFn<'_>,
    ) -> Result<OpReport, Error> {
        let op = TreeOp::start(
            OpKind::MoveNode { node: display(x), parent: p.map(display) },
            OpPhase::Check,
        );
        let check = async {
            let (x_own, p_own) = match p {
                Some(p) => futures_util::future::try_join(self.own(x), self.own(p)).await?,
                None => (self.own(x).await?, None),
            };
            let new = new_chain::<E>(x, x_own.as_ref(), p, p_own.as_ref())?;
            let old = x_own.map(|o| o.chain).unwrap_or_default();
            let subtree = self.subtree(x).await?;
            let deepest = subtree.iter().map(|(rel, _)| *rel).max().unwrap_or(0);
            within_depth::<E>(x, new.len() + 1 + deepest)?;
            let plan = MovePlan { x: x.to_owned(), p: p.map(str::to_owned), old, new };
            // Every copy to write fits the key and item limits.
            let mids = mids::<E>(&plan.x, &subtree)?;
            for (_, node) in &subtree {
                let id = id_of(node);
                let mid = mids.get(&id).cloned().unwrap_or_default();
                let (_, new_chain) = chains_of(&plan.old, &plan.new, x, &id, &mid);
                let base = copy_base(node, node.version(), None)?;
                for sk in copy_sks::<E>(&new_chain, &id) {
                    copy_item::<E>(&base, sk)?;
                }
            }
            let (old_up, new_up) = (encode_chain(&plan.old), encode_chain(&plan.new));
            let fields = vec![entering(OpPhase::Copy), (OP_OLD_UP, old_up), (OP_NEW_UP, new_up)];
            Ok(((plan, subtree), fields))
        };
        self.run_large(op, check, |op, (plan, subtree)| async move {
            self.run_move(&op, (&plan, &subtree), OpPhase::Copy, progress).await?;
            Ok(subtree.len())
        })
        .await
    }

    /// Calls `write` for each node of a move's subtree (with its escaped id and its ancestors
    /// before and after the move) and sends the writes of each chunk of nodes as one batch.
    async fn batched(
        &self,
        op: &TreeOp,
        (plan, subtree): (&MovePlan, &[(usize, E)]),
        phase: OpPhase,
        progress: &mut ProgressFn<'_>,
        mut write: impl FnMut(Moved<'_, E>, &mut Vec<Write>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mids = mids::<E>(&plan.x, subtree)?;
        let total = subtree.len();
        let mut done = 0;
        for chunk in subtree.chunks(CHUNK) {
            let mut writes = Vec::new();
            for (_, node) in chunk {
                let id = id_of(node);
                let mid = mids.get(&id).cloned().unwrap_or_default();
                let (old, new) = chains_of(&plan.old, &plan.new, &plan.x, &id, &mid);
                write(Moved { node, id, old, new }, &mut writes)?;
            }
            self.send_writes(op, writes).await?;
            done += chunk.len();
            progress(Progress { phase, done, total });
        }
        Ok(())
    }

    /// Sends `writes` in order, fenced by `op`'s epoch (see `raw::fenced_writes`).
    async fn send_writes(&self, op: &TreeOp, writes: Vec<Write>) -> Result<(), Error> {
        self.send_groups(op, writes.into_iter().map(|w| vec![w]).collect()).await
    }

    /// Sends `groups` in order, fenced by `op`'s epoch, each group in one transaction (see
    /// `raw::fenced_groups`).
    async fn send_groups(&self, op: &TreeOp, groups: Vec<Vec<Write>>) -> Result<(), Error> {
        let table = self.db.table_name();
        let sk_attr = super::write::sk_attr::<E>()?;
        let sk_of = |w: &Write| -> String {
            match w {
                Write::Put(item) => string_attr(item, sk_attr).unwrap_or("").to_owned(),
                Write::Delete(sk) | Write::Bump(sk) => sk.clone(),
            }
        };
        // One write per item: a subtree read that lists a node twice (at two depths, while
        // a concurrent change is under way) must not make a transaction name an item twice
        // (refused whole as a duplicate item). The last write of an item wins.
        let mut last: HashMap<String, (usize, usize)> = HashMap::new();
        for (g, group) in groups.iter().enumerate() {
            for (i, w) in group.iter().enumerate() {
                last.insert(sk_of(w), (g, i));
            }
        }
        let mut actions = Vec::with_capacity(groups.len());
        for (g, group) in groups.into_iter().enumerate() {
            let mut rendered = Vec::with_capacity(group.len());
            for (i, w) in group.into_iter().enumerate() {
                let sk = sk_of(&w);
                if last.get(&sk) != Some(&(g, i)) {
                    continue;
                }
                rendered.push(match w {
                    Write::Put(item) => put_plain(table, item, sk)?,
                    Write::Delete(sk) => delete_plain::<E>(table, &self.pk, sk)?,
                    Write::Bump(sk) => super::write::rev_bump_copy::<E>(table, &self.pk, sk)?,
                });
            }
            if !rendered.is_empty() {
                actions.push(rendered);
            }
        }
        if actions.is_empty() {
            return Ok(());
        }
        self.fenced_groups(op, actions, &mut |_| {}).await
    }

    /// Runs a large move from its phase `from` on, recording each later phase in the intent
    /// before it starts: the copies under the new ancestors (copy), the own copies recording
    /// the new ancestors and the root's item its new parent (switch), the copies under the old
    /// ancestors deleted (remove).
    pub(super) async fn run_move(
        &self,
        op: &TreeOp,
        (plan, subtree): (&MovePlan, &[(usize, E)]),
        from: OpPhase,
        progress: &mut ProgressFn<'_>,
    ) -> Result<(), Error> {
        let phases = [OpPhase::Copy, OpPhase::Switch, OpPhase::Remove];
        for phase in phases.into_iter().skip_while(|p| *p != from) {
            if phase != from {
                self.set_phase(op, phase).await?;
            }
            // The new parent counts the move in its revision (with the first chunk of
            // copies), as a transactional move or an insert under it does: a transactional
            // move or delete of a subtree that holds the new parent, read before this move
            // began and sent after it ended, conditions on that revision and fails instead of
            // leaving the moved nodes behind, recorded under ancestors they no longer have.
            let bump = plan.p.as_deref().filter(|_| phase == OpPhase::Copy);
            let mut bump = bump.map(|p| copy_sk::<E>(Some(p), 0, p));
            self.batched(op, (plan, subtree), phase, progress, |m, writes| {
                let (old_sks, new_sks) =
                    (copy_sks::<E>(&m.old, &m.id), copy_sks::<E>(&m.new, &m.id));
                if phase == OpPhase::Remove {
                    let old = old_sks.into_iter().filter(|sk| !new_sks.contains(sk));
                    writes.extend(old.map(Write::Delete));
                    return Ok(());
                }
                writes.extend(bump.take().map(Write::Bump));
                let (node, version) = moved_node(m.node, &plan.x, plan.p.as_deref())?;
                let base = copy_base(&node, version, None)?;
                if phase == OpPhase::Copy {
                    for sk in
                        new_sks.into_iter().filter(|sk| m.id == plan.x || !old_sks.contains(sk))
                    {
                        writes.push(Write::Put(copy_item::<E>(&base, sk)?));
                    }
                    return Ok(());
                }
                // A fresh revision: a move or delete that read the node before this move (and
                // so conditions on its revision) must not match it after a later move back.
                writes.push(Write::Put(own_copy::<E>(&base, &m.id, &m.new, super::fresh_rev())?));
                if m.id == plan.x {
                    writes.push(Write::Put(to_item(&node, version)?));
                }
                Ok(())
            })
            .await?;
        }
        Ok(())
    }

    /// Rolls back phase 2: deletes the new copies, restores the shared ones of the root.
    pub(super) async fn undo_copy(
        &self,
        op: &TreeOp,
        plan: &MovePlan,
        subtree: &[(usize, E)],
    ) -> Result<(), Error> {
        self.batched(op, (plan, subtree), OpPhase::Remove, &mut quiet(), |m, writes| {
            let old_sks = copy_sks::<E>(&m.old, &m.id);
            let base = copy_base(m.node, m.node.version(), None)?;
            for sk in copy_sks::<E>(&m.new, &m.id) {
                if !old_sks.contains(&sk) {
                    writes.push(Write::Delete(sk));
                } else if m.id == plan.x {
                    writes.push(Write::Put(copy_item::<E>(&base, sk)?));
                }
            }
            Ok(())
        })
        .await
    }
}

impl<'a, E: IdHierarchy> ClosureTree<'a, E> {
    /// A delete through the protocol.
    pub(crate) async fn large_delete(
        &self,
        x: &str,
        progress: &mut ProgressFn<'_>,
    ) -> Result<OpReport, Error> {
        let op = TreeOp::start(OpKind::DeleteNode { node: display(x) }, OpPhase::Check);
        let check = async {
            let own = self.own(x).await?.ok_or_else(|| no_node::<E>(x))?;
            let up = encode_chain(&own.chain);
            Ok((own.chain, vec![entering(OpPhase::Remove), (OP_OLD_UP, up)]))
        };
        let run = |op: TreeOp, chain: Vec<String>| async move {
            self.remove_subtree(&op, x, &chain, progress).await
        };
        self.run_large(op, check, run).await
    }

    /// Deletes what is left of the subtree at `x`, whose ancestors are `chain`.
    ///
    /// Each node below `x` goes whole, in one transaction: its entity item, its own copy and
    /// every copy of it, the one under `x` included, deepest nodes first. So what is left
    /// after a crash is a smaller subtree whose nodes are all intact and listed under `x`,
    /// and a node that is gone is gone for good: its id may be taken by a new node elsewhere
    /// in the tree (the intent guards `x`, not the ids below it), which a resumed delete
    /// must not find among the copies under `x`.
    pub(super) async fn remove_subtree(
        &self,
        op: &TreeOp,
        x: &str,
        chain: &[String],
        progress: &mut ProgressFn<'_>,
    ) -> Result<usize, Error> {
        let mut subtree = self.subtree(x).await?;
        subtree.retain(|(rel, _)| *rel > 0);
        subtree.sort_by_key(|(rel, _)| std::cmp::Reverse(*rel));
        let total = subtree.len() + 1;
        let mids = mids_known::<E>(x, &subtree);
        let mut done = 0;
        for chunk in subtree.chunks(CHUNK) {
            let mut groups = Vec::with_capacity(chunk.len());
            for (rel, node) in chunk {
                let (id, rel) = (id_of(node), *rel);
                let depth = chain.len() + 1 + rel;
                let mut writes = vec![
                    Write::Delete(crate::tree::node::node_sk::<E>(&id)),
                    Write::Delete(copy_sk::<E>(Some(&id), 0, &id)),
                ];
                for (i, a) in chain.iter().enumerate() {
                    writes.push(Write::Delete(copy_sk::<E>(Some(a), depth - (i + 1), &id)));
                }
                writes.push(Write::Delete(copy_sk::<E>(None, depth, &id)));
                // The nodes between `x` and this one are shallower, so still whole: their
                // copies name them. (Only a run of an earlier version, which removed copies
                // node by node, can leave them unknown, and it removed those copies already.)
                if let Some(mid) = mids.get(&id) {
                    for (i, a) in mid.iter().enumerate() {
                        writes.push(Write::Delete(copy_sk::<E>(Some(a), rel - (i + 1), &id)));
                    }
                }
                writes.push(Write::Delete(copy_sk::<E>(Some(x), rel, &id)));
                groups.push(writes);
            }
            self.send_groups(op, groups).await?;
            done += chunk.len();
            progress(Progress { phase: OpPhase::Remove, done, total });
        }
        // Then `x` itself, its own copy last.
        let mut writes: Vec<Write> =
            copy_sks::<E>(chain, x).into_iter().map(Write::Delete).collect();
        writes.push(Write::Delete(crate::tree::node::node_sk::<E>(x)));
        self.send_writes(op, writes).await?;
        self.send_writes(op, vec![Write::Delete(copy_sk::<E>(Some(x), 0, x))]).await?;
        progress(Progress { phase: OpPhase::Remove, done: total, total });
        Ok(total)
    }
}

/// A node of a move's subtree: its escaped id and its ancestors before and after the move.
struct Moved<'n, E> {
    node: &'n E,
    id: String,
    old: Vec<String>,
    new: Vec<String>,
}

/// One write of a protocol phase.
enum Write {
    Put(Item),
    Delete(String),
    /// Counts a move under the node whose own copy has this sort key in its revision.
    Bump(String),
}

/// The moved root with its new parent (stored at the next version), or any other node as
/// it is (at its stored version).
fn moved_node<E: IdHierarchy>(
    node: &E,
    x: &str,
    p: Option<&str>,
) -> Result<(E, Option<u64>), Error> {
    let id = id_of(node);
    if id != x || parent_of(node).as_deref() == p {
        return Ok((clone_node(node)?, node.version()));
    }
    let (_, next) = next_version::<E>(node.version())?;
    Ok((reparented(node, p)?, next))
}

/// The parent of each node of `subtree` (escaped ids).
fn parents<E: IdHierarchy>(subtree: &[(usize, E)]) -> HashMap<String, Option<String>> {
    subtree.iter().map(|(_, n)| (id_of(n), parent_of(n))).collect()
}

/// The ancestors between `x` and `id` (`x`'s side first), walking the parent fields; `None`
/// when they do not lead to `x`.
fn mid_of(parents: &HashMap<String, Option<String>>, x: &str, id: &str) -> Option<Vec<String>> {
    if id == x {
        return Some(Vec::new());
    }
    let mut mid = Vec::new();
    let mut cur = parents.get(id).cloned().flatten();
    loop {
        match cur {
            Some(c) if c == x => break,
            Some(c) if mid.len() <= parents.len() && parents.contains_key(&c) => {
                cur = parents.get(&c).cloned().flatten();
                mid.push(c);
            }
            _ => return None,
        }
    }
    mid.reverse();
    Some(mid)
}

/// The ancestors between `x` and each node of `subtree` (escaped ids, `x`'s side first), from
/// the nodes' parent fields.
fn mids<E: IdHierarchy>(
    x: &str,
    subtree: &[(usize, E)],
) -> Result<HashMap<String, Vec<String>>, Error> {
    let parents = parents(subtree);
    let mut out = HashMap::with_capacity(subtree.len());
    for id in parents.keys() {
        let Some(mid) = mid_of(&parents, x, id) else {
            return Err(problem::<E>(TreeProblem::CorruptNode {
                id: display(id),
                reason: NodeReason::NotUnder { root: display(x) },
            }));
        };
        out.insert(id.clone(), mid);
    }
    Ok(out)
}

/// [`mids`] for the nodes whose parents lead to `x`; the others are left out.
fn mids_known<E: IdHierarchy>(x: &str, subtree: &[(usize, E)]) -> HashMap<String, Vec<String>> {
    let parents = parents(subtree);
    parents.keys().filter_map(|id| mid_of(&parents, x, id).map(|m| (id.clone(), m))).collect()
}

pub(super) fn move_plan<E: IdHierarchy>(item: &Item) -> Result<MovePlan, Error> {
    let chain = |attribute| -> Result<Vec<String>, Error> {
        decode_chain(&intent_value::<E, String>(item, attribute)?)
            .ok_or_else(|| corrupt_intent::<E>(IntentReason::Invalid { attribute }))
    };
    let p: String = intent_value::<E, _>(item, OP_PARENT)?;
    Ok(MovePlan {
        x: intent_value::<E, _>(item, OP_FROM)?,
        p: (!p.is_empty()).then_some(p),
        old: chain(OP_OLD_UP)?,
        new: chain(OP_NEW_UP)?,
    })
}
