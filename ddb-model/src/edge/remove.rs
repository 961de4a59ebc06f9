//! Removing every edge of a node, in chunks.
//!
//! Each chunk is one transaction: the forward items of up to [`MAX_CHUNK`] edges, the items of
//! their other direction, and the counter moves (the node's own counters once, by the
//! chunk's size). A chunk commits whole or not at all, so the graph is consistent after
//! every chunk, and an interrupted removal is resumed by running it again: what is left is
//! what the table still holds. Edges linked while the removal runs may be left behind.
//!
//! Each direction costs one `Query` and one transaction per chunk, and one more `Query` when
//! its last chunk is full (a chunk shorter than asked for holds every edge left): `d` edges
//! take `floor(d / 32) + 1` reads and `ceil(d / 32)` transactions with the default chunk (24
//! instead of 32 for an edge with a sharded counter, see [`MAX_SHARDED_CHUNK`]).
//!
//! **Fencing.** A removal first writes a fence record for the node (`PutItem`, its own
//! token, overwriting the token of any removal before it) and every chunk checks it: a
//! removal that another one took over (run again from another process while the first was
//! paused, or with a request still in flight) has its later chunks refused instead of
//! deleting edges linked after the takeover, and stops with [`Error::ConditionFailed`] on
//! the fence record. The record is deleted at the end (`DeleteItem`, if still its own); a
//! removal that stops with an error leaves it until the removal is run again.

use std::collections::HashSet;

use futures_util::stream::TryStreamExt;

use aws_sdk_dynamodb::types::AttributeValue;

use super::write::{Moves, Raw, commit, failed_at, key_attrs, missing_nodes, raw, retryable};
use super::{Edge, Edges, Incoming, InverseSpec, arg_text};
use crate::error::Error;
use crate::expr::ExprBuilder;
use crate::key::KeyArg;
use crate::ops::Running;
use crate::ops::action::Action;
use crate::ops::retry::EDGE_CONFLICTS;
use crate::ops::transact::ActionInfo;
use crate::ops::{CancelReason, MAX_TRANSACTION_ACTIONS};
use crate::stats::Op;

/// The attribute of a fence record holding the token of the removal that owns it.
const FENCE_TOKEN: &str = "token";

/// A removal's fence record and token.
pub(super) struct Fence {
    pk: String,
    sk: String,
    token: String,
}

fn fence_cond(x: &mut ExprBuilder, fence: &Fence) -> String {
    let name = x.name(FENCE_TOKEN);
    let value = x.value(AttributeValue::S(fence.token.clone()));
    format!("{name} = {value}")
}

/// The check that the fence record is still this removal's.
fn fence_check<E: Edge>(table: &str, fence: &Fence) -> Result<Raw, Error> {
    let mut x = ExprBuilder::default();
    let cond = fence_cond(&mut x, fence);
    let key = key_attrs::<E::Table>(&fence.pk, Some(&fence.sk));
    let action = Action::check(key).guarded(cond, x).return_old(true);
    let info = ActionInfo {
        entity: E::NAME,
        pk: fence.pk.clone(),
        sk: Some(fence.sk.clone()),
        explain: None,
        unique: None,
    };
    raw(table, action, info)
}

/// True when the fence check (action `at`) of a canceled chunk failed.
fn fence_failed(err: &Error, at: usize) -> bool {
    err.cancellation_reasons().iter().any(|r| {
        r.action == at
            && match &r.reason {
                CancelReason::Condition(_) => true,
                CancelReason::Other { code, .. } => code == "ConditionalCheckFailed",
                _ => false,
            }
    })
}

/// Most edges removed per transaction: two items and a counter each, the node's own
/// counters and the check of the removal's fence record, within the 100 actions of a
/// transaction.
pub const MAX_CHUNK: usize = (MAX_TRANSACTION_ACTIONS - 2) / 3;

/// Most edges removed per transaction when a counter is sharded: the node's own counter
/// then moves one shard item per edge at worst (each edge's other endpoint picks its
/// shard), so each edge takes four actions, and the fence check one.
pub const MAX_SHARDED_CHUNK: usize = (MAX_TRANSACTION_ACTIONS - 1) / 4;

/// The most edges per transaction for edge `E`.
const fn max_chunk<E: Edge>() -> usize {
    if E::SPEC.sharded { MAX_SHARDED_CHUNK } else { MAX_CHUNK }
}

/// The sort key of a node's removal fence record (in the partition of its forward edges).
fn fence_sk<E: Edge>() -> String {
    format!("~remove#{}", E::NAME)
}

/// The removal of every edge of a node, made by [`Edges::remove_node`]; `.await` it.
#[must_use = "a removal does nothing until it is awaited"]
pub struct RemoveNode<'a, E: Edge> {
    edges: Edges<'a, E>,
    /// The node whose outgoing edges are removed, if any.
    from: Option<String>,
    /// The node whose incoming edges are removed, if any.
    to: Option<String>,
    chunk: usize,
    max_transactions: Option<usize>,
    running: Running<'a, Result<Removed, Error>>,
}

/// What [`RemoveNode`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Removed {
    /// Edges removed that started at the node.
    pub outgoing: usize,
    /// Edges removed that ended at the node (not counting self-loops, counted as outgoing).
    pub incoming: usize,
    /// Transactions committed.
    pub transactions: usize,
    /// True when the node has no edges left; false when the removal stopped at
    /// [`max_transactions`](RemoveNode::max_transactions) (run it again to go on).
    pub done: bool,
}

impl<'a, E: Edge> Edges<'a, E> {
    /// Removes every edge that starts or ends at `node`, both sides and counters, in
    /// transactions of up to 33 edges. Resumable: each transaction leaves the graph
    /// consistent, and running the removal again continues where it stopped. Example on
    /// [`link_all`](Edges::link_all).
    #[doc(alias = "remove_all")]
    pub fn remove_node(&self, node: impl KeyArg<E::From>) -> RemoveNode<'a, E>
    where
        E: Edge<To = <E as Edge>::From> + Incoming,
    {
        let node = arg_text(&node);
        self.removal(Some(node.clone()), Some(node))
    }

    /// Removes every edge that starts at `from` (both sides and counters), as
    /// [`remove_node`](Edges::remove_node) does.
    pub fn remove_outgoing(&self, from: impl KeyArg<E::From>) -> RemoveNode<'a, E> {
        self.removal(Some(arg_text(&from)), None)
    }

    /// Removes every edge that ends at `to` (both sides and counters), as
    /// [`remove_node`](Edges::remove_node) does.
    pub fn remove_incoming(&self, to: impl KeyArg<E::To>) -> RemoveNode<'a, E>
    where
        E: Incoming,
    {
        self.removal(None, Some(arg_text(&to)))
    }

    fn removal(&self, from: Option<String>, to: Option<String>) -> RemoveNode<'a, E> {
        let (chunk, running) = (max_chunk::<E>(), Running::default());
        RemoveNode { edges: *self, from, to, chunk, max_transactions: None, running }
    }
}

impl<'a, E: Edge> RemoveNode<'a, E> {
    /// Edges per transaction (1 to 32, default 32; 1 to 24, default 24, when a counter of
    /// the edge is sharded).
    pub fn chunk(mut self, edges: usize) -> Self {
        self.chunk = edges.clamp(1, max_chunk::<E>());
        self
    }

    /// Stops after `n` transactions (the result then says whether edges are left).
    pub fn max_transactions(mut self, n: usize) -> Self {
        self.max_transactions = Some(n);
        self
    }

    /// Runs the removal.
    pub async fn send(self) -> Result<Removed, Error> {
        let fence = self.fence_begin().await?;
        let removed = self.run(fence.as_ref()).await?;
        if let Some(fence) = &fence {
            self.fence_end(fence).await?;
        }
        Ok(removed)
    }

    /// The fence record's key and this removal's token.
    fn fence_key(&self) -> Option<(String, String)> {
        let node = self.from.as_ref().or(self.to.as_ref())?;
        <E::Table as crate::model::Table>::SK?;
        let pk = super::keys::forward_key::<E>(node, node).pk().to_owned();
        Some((pk, fence_sk::<E>()))
    }

    /// Writes the fence record with a new token (taking over from any removal before).
    async fn fence_begin(&self) -> Result<Option<Fence>, Error> {
        let Some((pk, sk)) = self.fence_key() else {
            return Ok(None);
        };
        let db = self.edges.db;
        let token = crate::ops::idempotency_token();
        let mut item = key_attrs::<E::Table>(&pk, Some(&sk));
        item.insert(
            crate::model::type_attr::<E::Table>().to_owned(),
            AttributeValue::S(format!("{}:removal", E::NAME)),
        );
        item.insert(FENCE_TOKEN.to_owned(), AttributeValue::S(token.clone()));
        let request =
            Action::put(item).put_item(db)?.set_return_consumed_capacity(db.capacity_mode());
        crate::ops::retry::send(db, Op::PutItem, request).await?;
        Ok(Some(Fence { pk, sk, token }))
    }

    /// Deletes the fence record if it is still this removal's.
    async fn fence_end(&self, fence: &Fence) -> Result<(), Error> {
        let db = self.edges.db;
        let mut x = ExprBuilder::default();
        let cond = fence_cond(&mut x, fence);
        let request = Action::delete(key_attrs::<E::Table>(&fence.pk, Some(&fence.sk)))
            .guarded(cond, x)
            .delete_item(db)?
            .set_return_consumed_capacity(db.capacity_mode());
        let out = crate::ops::retry::send(db, Op::DeleteItem, request).await;
        match out {
            Ok(_) => Ok(()),
            // Gone (this very delete, retried) or another removal's: nothing to do.
            Err(e) => e.into_condition_failure().map(|_| ()),
        }
    }

    async fn run(&self, fence: Option<&Fence>) -> Result<Removed, Error> {
        let mut removed = Removed::default();
        let symmetric = matches!(E::SPEC.inverse, InverseSpec::Symmetric);
        // A symmetric edge's incoming edges are its outgoing ones, mirrored.
        let phases = [(true, &self.from), (false, if symmetric { &None } else { &self.to })];
        for (outgoing, node) in phases {
            let Some(node) = node else { continue };
            // Reads through an index may still list edges that are gone: wait for it to
            // catch up, a few times, then report the removal as not done.
            let mut stale = 0;
            loop {
                if self.max_transactions.is_some_and(|max| removed.transactions >= max) {
                    return Ok(removed);
                }
                let chunk = self.read_chunk(node, outgoing).await?;
                if chunk.is_empty() {
                    break;
                }
                // A chunk shorter than asked for was every edge left in this direction
                // when it was read: no need to read again to find nothing.
                let last = chunk.len() < self.chunk;
                let pairs = chunk.iter().map(|e| (e.source(), e.target())).collect();
                let n = self.edges.remove_edges(pairs, fence).await?;
                if n == 0 {
                    stale += 1;
                    if stale >= EDGE_CONFLICTS.tries {
                        return Ok(removed);
                    }
                    EDGE_CONFLICTS.pause(stale).await;
                    continue;
                }
                stale = 0;
                removed.transactions += 1;
                if outgoing {
                    removed.outgoing += n;
                } else {
                    removed.incoming += n;
                }
                if last {
                    break;
                }
            }
        }
        removed.done = true;
        Ok(removed)
    }

    /// The next edges to remove: the first of the node's remaining edges in one direction.
    async fn read_chunk(&self, node: &str, outgoing: bool) -> Result<Vec<E>, Error> {
        let how = (u32::try_from(self.chunk).unwrap_or(1), true);
        let mut pages = self.edges.side(node, outgoing, Some(self.chunk), how, None);
        let mut out = Vec::new();
        while let Some(page) = pages.try_next().await? {
            out.extend(page);
        }
        Ok(out)
    }
}

impl<'a, E: Edge> Edges<'a, E> {
    /// Removes the edges `chunk` in one transaction, checking `fence`; sent again without
    /// the edges another writer removed meanwhile and the counters of node items that no
    /// longer exist. The number of edges it removed (0: none was left, nothing was sent).
    pub(super) async fn remove_edges(
        &self,
        mut chunk: Vec<(&E::From, &E::To)>,
        fence: Option<&Fence>,
    ) -> Result<usize, Error> {
        let edges = self;
        let mut skip = HashSet::new();
        let mut attempt = 0;
        loop {
            attempt += 1;
            if chunk.is_empty() {
                return Ok(0);
            }
            let mut actions = Vec::new();
            let mut moves = Moves::default();
            // The index of each edge's forward delete.
            let mut forward_at = Vec::with_capacity(chunk.len());
            for (from, to) in &chunk {
                forward_at.push(actions.len());
                edges.unlink_actions(from, to, &skip, &mut actions, &mut moves)?;
            }
            let first_counter = actions.len();
            let counter_keys = moves.keys();
            actions.extend(moves.actions::<E::Table>(edges.db.table_name()));
            let fence_at = actions.len();
            if let Some(fence) = fence {
                actions.push(fence_check::<E>(edges.db.table_name(), fence));
            }
            let err = match commit(edges.db, actions).await {
                Ok(()) => return Ok(chunk.len()),
                Err(err) => err,
            };
            if let Some(fence) = fence.filter(|_| fence_failed(&err, fence_at)) {
                return Err(Error::ConditionFailed {
                    entity: E::NAME,
                    key: crate::model::key_display(Some(&fence.pk), Some(&fence.sk)),
                    current: None,
                });
            }
            // Edges another writer removed since they were read: drop them and go on.
            let gone = failed_at(&err, &forward_at, |e| matches!(e, Error::NotFound { .. }));
            let missing = missing_nodes(&err, &counter_keys, first_counter);
            let again = attempt < EDGE_CONFLICTS.tries;
            // Each edge gone shortens the chunk: dropping them always ends.
            if !gone.is_empty() || (!missing.is_empty() && again) {
                for &i in gone.iter().rev() {
                    chunk.remove(i);
                }
                skip.extend(missing);
            } else if retryable(&err) && again {
                EDGE_CONFLICTS.pause(attempt).await;
            } else {
                return Err(err);
            }
        }
    }
}

edge_future!(writes ['a, E: Edge] RemoveNode<'a, E> => Result<Removed, Error>, send, take(from, to),
    copy(edges, chunk, max_transactions));
