//! Linking: [`Edges::link`], [`Edges::link_new`] and [`Edges::link_all`], which packs many
//! edges into each transaction.

use std::collections::HashSet;

use super::action::{Need, Raw, explain_other, put};
use super::commit::{action_error, commit, failed_at, retryable};
use super::moves::Moves;
use crate::edge::keys::{check_type, item_key};
use crate::edge::keys::{other_item, other_type};
use crate::edge::{Edge, Edges};
use crate::error::Error;
use crate::item::Item;
use crate::model::to_item_at;
use crate::ops::MAX_TRANSACTION_ACTIONS;
use crate::ops::retry::{EDGE_CONFLICTS, Try, on_conflict};
use crate::ops::transact::explain;

/// What [`Edges::link`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linked {
    /// The edge was created (and the counters moved).
    Created,
    /// The edge existed already; nothing changed.
    Existing,
}

impl Linked {
    /// True when this link created the edge.
    pub fn is_new(self) -> bool {
        self == Linked::Created
    }
}

/// Most edges [`Edges::link_all`] puts in one transaction.
const MAX_LINK_CHUNK: usize = 50;

/// What [`Edges::link_all`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkReport {
    /// Edges created.
    pub created: usize,
    /// Edges that existed already (nothing changed for them).
    pub existing: usize,
    /// Transactions that linked several edges at once (edges linked one by one are not
    /// counted here).
    pub transactions: usize,
}

impl<'a, E: Edge> Edges<'a, E> {
    /// The actions that create `edge`: its forward item, the item of the other direction,
    /// the counters.
    fn link_actions(&self, edge: &E) -> Result<Vec<Result<Raw, Error>>, Error> {
        let mut actions = self.link_actions_items(edge)?;
        let mut moves = Moves::default();
        moves.edge::<E>(edge.source(), edge.target(), 1, &HashSet::new())?;
        actions.extend(moves.actions::<E::Table>(self.table()));
        Ok(actions)
    }

    /// The item actions that create `edge`: its forward item and the item of the other
    /// direction.
    fn link_actions_items(&self, edge: &E) -> Result<Vec<Result<Raw, Error>>, Error> {
        let table = self.table();
        // A link creates the edge: both timestamps are set (a second link writes nothing).
        let stamp = self.db.stamp(true);
        let forward = to_item_at(edge, None, stamp)?;
        let mut actions =
            vec![put::<E::Table>(table, E::NAME, forward, Need::Absent, explain::<E>)];
        if let Some(item) = other_item(edge, stamp)? {
            actions.push(put::<E::Table>(
                table,
                other_type::<E>(),
                item,
                Need::AbsentOrSame,
                explain_other::<E>,
            ));
        }
        Ok(actions)
    }

    /// Links the edge: creates its forward item and, in the same transaction, the item of
    /// the other direction and the endpoints' counter increments. One request.
    ///
    /// Idempotent: when the forward item exists already the link is [`Linked::Existing`] and
    /// changes nothing (not the edge's fields, not the counters). An item of another entity
    /// type under the edge's key is [`Error::WrongEntityType`]; a counted node that does not
    /// exist cancels the link ([`Error::is_not_found`]). Invalid keys or items fail before
    /// anything is sent.
    pub async fn link(&self, edge: &E) -> Result<Linked, Error> {
        self.link_as(edge, false).await
    }

    /// Links a new edge: as [`link`](Edges::link), one request, but an edge that exists
    /// already is an error instead of [`Linked::Existing`]: [`Error::AlreadyExists`]
    /// ([`Error::is_already_exists`]) with the stored edge item, and nothing changes (not
    /// the edge, not the counters). For "like once" rules that report a second like to the
    /// caller.
    ///
    /// A link whose response was lost and that the SDK sent again is still reported as
    /// created: the transaction's idempotency token makes the retry apply once and succeed
    /// (a link of one item, without counters, recognises its own item). Example in the
    /// [module documentation](crate::edge#one-directional-edges).
    pub async fn link_new(&self, edge: &E) -> Result<(), Error> {
        self.link_as(edge, true).await.map(|_| ())
    }

    /// Links `edge`; an existing edge is `Existing`, or an error when `unique`.
    async fn link_as(&self, edge: &E, unique: bool) -> Result<Linked, Error> {
        let actions = self.link_actions(edge)?;
        if actions.len() == 1 {
            // Only the forward item (an index inverts it, no counters): one PutItem, which
            // recognises its own write when the SDK retries it.
            return match self.db.create(edge).send().await {
                Ok(()) => Ok(Linked::Created),
                Err(err) => self.existing(err, None, unique),
            };
        }
        let mut first = Some(actions);
        on_conflict(EDGE_CONFLICTS, |_| {
            // The first try sends the actions built above; later ones read the counters again.
            let actions = first.take().map_or_else(|| self.link_actions(edge), Ok);
            async move {
                match commit(self.db, actions?).await {
                    Ok(()) => Ok(Try::Done(Linked::Created)),
                    Err(err) if action_error(&err, 0).is_some_and(Error::is_already_exists) => {
                        self.existing(err, Some(0), unique).map(Try::Done)
                    }
                    Err(err) if retryable(&err) => Ok(Try::Again(err)),
                    Err(err) => Err(err),
                }
            }
        })
        .await
    }

    /// Links many edges, packing as many as fit into each transaction (each edge keeps its
    /// forward item, the other direction and its counter moves, merged per node): a bulk
    /// load sends one request per dozens of edges instead of one per edge. A transaction
    /// that finds an edge already linked is canceled as a whole; its edges are then linked
    /// one by one, so the report is exact and counters move once per edge created.
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use ddb_model::{Edge, Op};
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Entity, Edge, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<a>", sk = "FOLLOWS#<b>")]
    /// #[edge(from = a, to = b, inverse(pk = "USER#<b>", sk = "FOLLOWER#<a>"))]
    /// struct Follow { a: u32, b: u32 }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Error> {
    /// let db: Db = ddb_model::local::isolated_db().await?;
    /// let follows = Follow::edges(&db);
    /// // Node 0 follows 1 to 50, and each of them follows it back.
    /// let edges: Vec<Follow> =
    ///     (1..=50).flat_map(|n| [Follow { a: 0, b: n }, Follow { a: n, b: 0 }]).collect();
    /// let report = follows.link_all(&edges).await?;
    /// assert_eq!((report.created, report.existing), (100, 0));
    /// // Two items per edge, 100 actions per transaction.
    /// assert_eq!(db.requests().get(Op::TransactWriteItems), 2);
    /// // Linking them again changes nothing.
    /// let again = follows.link_all(&edges[..10]).await?;
    /// assert_eq!((again.created, again.existing), (0, 10));
    ///
    /// // Removing node 0: at most two transactions now...
    /// let first = follows.remove_node(0u32).max_transactions(2).await?;
    /// assert!(!first.done);
    /// // ...and the rest later.
    /// let rest = follows.remove_node(0u32).await?;
    /// assert!(rest.done);
    /// assert_eq!(first.outgoing + rest.outgoing, 50);
    /// assert_eq!(first.incoming + rest.incoming, 50);
    /// assert_eq!(follows.incoming(7u32).count().await?, 0);
    /// # Ok(()) }
    /// ```
    pub async fn link_all<'e>(
        &self,
        edges: impl IntoIterator<Item = &'e E>,
    ) -> Result<LinkReport, Error>
    where
        E: 'e,
    {
        let mut report = LinkReport::default();
        let mut pending: Vec<&E> = edges.into_iter().collect();
        while !pending.is_empty() {
            let (mut chunk, mut moves, later) = self.next_chunk(pending)?;
            pending = later;
            let mut attempt = 0;
            while !chunk.is_empty() {
                attempt += 1;
                if chunk.len() == 1 {
                    self.link_each(&chunk, &mut report).await?;
                    break;
                }
                let mut actions: Vec<Result<Raw, Error>> = Vec::new();
                let mut forward_at = Vec::with_capacity(chunk.len());
                for edge in &chunk {
                    forward_at.push(actions.len());
                    actions.extend(self.link_actions_items(edge)?);
                }
                actions.extend(moves.clone().actions::<E::Table>(self.table()));
                let err = match commit(self.db, actions).await {
                    Ok(()) => {
                        report.created += chunk.len();
                        report.transactions += 1;
                        break;
                    }
                    Err(err) => err,
                };
                // Edges linked already: they stay as they are; the others are sent again.
                let existing = failed_at(&err, &forward_at, Error::is_already_exists);
                if !existing.is_empty() {
                    for &i in existing.iter().rev() {
                        chunk.remove(i);
                        check_existing::<E>(
                            action_error(&err, forward_at[i]).and_then(Error::current_item),
                        )?;
                        report.existing += 1;
                    }
                    moves = Moves::default();
                    for edge in &chunk {
                        moves.edge::<E>(edge.source(), edge.target(), 1, &HashSet::new())?;
                    }
                } else if retryable(&err) && attempt < EDGE_CONFLICTS.tries {
                    EDGE_CONFLICTS.pause(attempt).await;
                } else {
                    return Err(err);
                }
            }
        }
        Ok(report)
    }

    async fn link_each(&self, chunk: &[&E], report: &mut LinkReport) -> Result<(), Error> {
        for edge in chunk {
            match self.link(edge).await? {
                Linked::Created => report.created += 1,
                Linked::Existing => report.existing += 1,
            }
        }
        Ok(())
    }

    /// The longest prefix of `pending` that fits one transaction without two actions on one
    /// item, its counter moves, and the edges left for later.
    #[allow(clippy::type_complexity)]
    fn next_chunk<'e>(
        &self,
        pending: Vec<&'e E>,
    ) -> Result<(Vec<&'e E>, Moves, Vec<&'e E>), Error> {
        let mut chunk: Vec<&E> = Vec::new();
        let mut later: Vec<&E> = Vec::new();
        let mut actions = 0;
        let mut items: HashSet<(String, Option<String>)> = HashSet::new();
        let mut moves = Moves::default();
        for edge in pending {
            if !later.is_empty() || chunk.len() >= MAX_LINK_CHUNK {
                later.push(edge);
                continue;
            }
            let keys: Vec<(String, Option<String>)> = self
                .link_actions_items(edge)?
                .into_iter()
                .map(|a| a.map(|raw| raw.key()))
                .collect::<Result<_, _>>()?;
            let mut trial = moves.clone();
            trial.edge::<E>(edge.source(), edge.target(), 1, &HashSet::new())?;
            let counted = trial.keys();
            let clash = keys.iter().any(|k| items.contains(k) || counted.contains(k));
            if clash || actions + keys.len() + trial.len() > MAX_TRANSACTION_ACTIONS {
                later.push(edge);
                continue;
            }
            actions += keys.len();
            items.extend(keys);
            moves = trial;
            chunk.push(edge);
        }
        Ok((chunk, moves, later))
    }

    /// The forward item exists: `Existing` when it is an edge (or, when the link asked for a
    /// new edge, [`Error::AlreadyExists`] with it), an error otherwise.
    fn existing(&self, err: Error, action: Option<usize>, unique: bool) -> Result<Linked, Error> {
        let found = match action {
            Some(i) => action_error(&err, i),
            None => Some(&err),
        };
        let Some(found) = found.filter(|e| e.is_already_exists()) else {
            return Err(err);
        };
        let current = found.current_item();
        check_existing::<E>(current)?;
        match current {
            Some(item) if unique => Err(Error::AlreadyExists {
                entity: E::NAME,
                key: item_key::<E::Table>(item),
                current: Box::new(item.clone()),
            }),
            _ => Ok(Linked::Existing),
        }
    }
}

/// The item a link found under an edge's forward key: `Ok` when it is an edge of type `E`,
/// [`Error::WrongEntityType`] otherwise.
fn check_existing<E: Edge>(current: Option<&Item>) -> Result<(), Error> {
    check_type::<E::Table>(current, E::NAME, E::NAME, || {
        current.map(item_key::<E::Table>).unwrap_or_default()
    })
}
