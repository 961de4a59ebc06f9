//! Edge writes: link, unlink and property updates, each one transaction holding the forward
//! item, the item of the other direction and the degree counters, sent again when it
//! conflicts with a concurrent one.

use std::collections::HashSet;
use std::future::IntoFuture;

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use serde::Serialize;

use super::keys::{forward_key, other_item, other_key, other_type};
use super::{CounterRef, Edge, Edges, InverseSpec, arg_text, node_text, parse_node};
use crate::error::Error;
use crate::expr::{
    Condition, ExprBuilder, Node, Numeric, Path, PathSegment, RemovePath, UpdateActions,
    UpdatePath, ValueArg,
};
use crate::item::Item;
use crate::key::KeyArg;
use crate::model::{Table, key_display, string_attr, to_item_at};
use crate::ops::action::Action;
use crate::ops::retry::{EDGE_CONFLICTS, Try, on_conflict};
use crate::ops::transact::{ActionInfo, Explain, explain};
use crate::ops::{
    BoxFuture, Guard, MAX_TRANSACTION_ACTIONS, Transaction, WriteKind, and_condition,
    idempotency_token, with_index_keys, with_updated_at,
};

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

/// What [`Edges::unlink`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unlinked {
    /// The edge was removed, both sides (and the counters moved).
    Removed,
    /// There was no such edge; nothing changed.
    Absent,
}

impl Unlinked {
    /// True when this unlink removed an edge.
    pub fn was_linked(self) -> bool {
        self == Unlinked::Removed
    }
}

/// What an action requires of the item under its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Need {
    /// No item.
    Absent,
    /// No item, or one of the action's entity type (overwritten or removed).
    AbsentOrSame,
    /// An item of the action's entity type.
    Present,
}

impl Need {
    fn kind(self) -> WriteKind {
        match self {
            Need::Absent => WriteKind::Create,
            Need::AbsentOrSame => WriteKind::Put,
            Need::Present => WriteKind::Update,
        }
    }
}

/// One action rendered for the wire, with what the transaction needs to know about it.
pub(crate) struct Raw {
    pub(crate) info: ActionInfo,
    pub(crate) item: TransactWriteItem,
    pub(crate) size: usize,
}

impl Raw {
    /// The key of the item the action writes.
    fn key(&self) -> (String, Option<String>) {
        (self.info.pk.clone(), self.info.sk.clone())
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

/// The primary key attributes of the item `(pk, sk)` of table `T`.
pub(crate) fn key_attrs<T: Table>(pk: &str, sk: Option<&str>) -> Item {
    let mut item = Item::with_capacity(2);
    item.insert(T::PK.to_owned(), AttributeValue::S(pk.to_owned()));
    if let (Some(attr), Some(sk)) = (T::SK, sk) {
        item.insert(attr.to_owned(), AttributeValue::S(sk.to_owned()));
    }
    item
}

fn guard_expr<T: Table>(b: &mut ExprBuilder, need: Need, entity: &str) -> String {
    let pk = b.name(T::PK);
    if need == Need::Absent {
        return format!("attribute_not_exists({pk})");
    }
    let type_attr = b.name(crate::model::type_attr::<T>());
    let type_value = b.value(AttributeValue::S(entity.to_owned()));
    match need {
        Need::AbsentOrSame => format!("(attribute_not_exists({pk}) OR {type_attr} = {type_value})"),
        _ => format!("attribute_exists({pk}) AND {type_attr} = {type_value}"),
    }
}

fn info(
    entity: &'static str,
    pk: &str,
    sk: Option<&str>,
    need: Need,
    explain: Explain,
) -> ActionInfo {
    ActionInfo {
        entity,
        pk: pk.to_owned(),
        sk: sk.map(str::to_owned),
        explain: Some((Guard { kind: need.kind(), expected_version: None }, explain)),
        unique: None,
    }
}

/// Explains a failed guard of an item of the other direction (an inverse item is not an
/// item of `E`, and is named by its own entity type).
fn explain_other<E: Edge>(
    guard: Guard,
    pk: &str,
    sk: Option<&str>,
    current: Option<Item>,
) -> Error {
    let entity = other_type::<E>();
    let key = key_display(Some(pk), sk);
    let Some(current) = current else {
        return match guard.kind {
            WriteKind::Create | WriteKind::Put => {
                Error::ConditionFailed { entity, key, current: None }
            }
            _ => Error::NotFound { entity, key },
        };
    };
    if guard.kind == WriteKind::Create {
        return Error::AlreadyExists { entity, key, current: Box::new(current) };
    }
    match string_attr(&current, crate::model::type_attr::<E::Table>()) {
        Some(t) if t == entity => {
            Error::ConditionFailed { entity, key, current: Some(Box::new(current)) }
        }
        found => Error::WrongEntityType { expected: entity, found: found.map(str::to_owned), key },
    }
}

/// Puts a whole item (which holds its keys).
fn put<T: Table>(
    table: &str,
    entity: &'static str,
    item: Item,
    need: Need,
    explain: Explain,
) -> Result<Raw, Error> {
    let text = |attr: &str| string_attr(&item, attr).unwrap_or_default().to_owned();
    let (pk, sk) = (text(T::PK), T::SK.map(text));
    let mut b = ExprBuilder::default();
    let condition = guard_expr::<T>(&mut b, need, entity);
    let action = Action::put(item).guarded(condition, b).return_old(true);
    raw(table, action, info(entity, &pk, sk.as_deref(), need, explain))
}

/// Deletes the item of a key.
fn delete<T: Table>(
    table: &str,
    entity: &'static str,
    (pk, sk): (&str, Option<&str>),
    need: Need,
    explain: Explain,
) -> Result<Raw, Error> {
    let key = key_attrs::<T>(pk, sk);
    let mut b = ExprBuilder::default();
    let condition = guard_expr::<T>(&mut b, need, entity);
    let action = Action::delete(key).guarded(condition, b).return_old(true);
    raw(table, action, info(entity, pk, sk, need, explain))
}

/// Updates an existing item of `entity`: `render` writes the update expression (and may add
/// a condition, returned second) into the builder.
fn update<T: Table>(
    table: &str,
    entity: &'static str,
    (pk, sk): (&str, Option<&str>),
    explain: Explain,
    render: impl FnOnce(&mut ExprBuilder) -> Result<(String, Option<String>), Error>,
) -> Result<Raw, Error> {
    let key = key_attrs::<T>(pk, sk);
    let mut b = ExprBuilder::default();
    let (expression, user) = render(&mut b)?;
    let mut condition = guard_expr::<T>(&mut b, Need::Present, entity);
    if let Some(user) = user {
        condition = format!("{condition} AND ({user})");
    }
    crate::expr::check_expression("ConditionExpression", &condition)?;
    let action = Action::update(key, expression).guarded(condition, b).return_old(true);
    raw(table, action, info(entity, pk, sk, Need::Present, explain))
}

/// Moves the counters of a shard item, creating it when it is absent. A shard item is not
/// the node item: nothing requires the node item to exist, since a check of it in every link
/// would put every link back on the one hot item (and its transactions in conflict).
fn shard_update<T: Table>(
    table: &str,
    counter: &CounterRef,
    clauses: impl FnOnce(&mut ExprBuilder) -> String,
) -> Result<Raw, Error> {
    let (pk, sk) = (counter.pk.as_str(), counter.sk.as_deref());
    let key = key_attrs::<T>(pk, sk);
    let mut b = ExprBuilder::default();
    let adds = clauses(&mut b);
    let (expression, condition) = super::shard::shard_update::<T>(&mut b, counter, &adds);
    let action = Action::update(key, expression).guarded(condition, b).return_old(true);
    raw(table, action, info(counter.entity, pk, sk, Need::AbsentOrSame, counter.explain))
}

/// Renders `action` with what the transaction needs to know about it.
fn raw(table: &str, action: Action, info: ActionInfo) -> Result<Raw, Error> {
    let size = action.size();
    Ok(Raw { info, item: action.into_transact_item(table)?, size })
}

/// Counter moves of one transaction, merged per node item (one action per item: a
/// self-loop moves both counters of its node in one update).
#[derive(Default, Clone)]
pub(crate) struct Moves {
    groups: Vec<(CounterRef, Vec<(&'static str, i64)>)>,
}

impl Moves {
    pub(crate) fn add(&mut self, counter: &CounterRef, delta: i64) {
        let same = |c: &CounterRef| c.pk == counter.pk && c.sk == counter.sk;
        let adds = match self.groups.iter_mut().find(|(c, _)| same(c)) {
            Some((_, adds)) => adds,
            None => {
                self.groups.push((counter.clone(), Vec::new()));
                match self.groups.last_mut() {
                    Some((_, adds)) => adds,
                    None => return,
                }
            }
        };
        match adds.iter_mut().find(|(attr, _)| *attr == counter.attr) {
            Some((_, d)) => *d += delta,
            None => adds.push((counter.attr, delta)),
        }
    }

    /// Adds the counter moves of the edge `from -> to` (a symmetric self-loop is one item,
    /// so it counts once).
    pub(crate) fn edge<E: Edge>(
        &mut self,
        from: &E::From,
        to: &E::To,
        delta: i64,
        skip: &HashSet<(String, Option<String>)>,
    ) -> Result<(), Error> {
        let counters = E::counters(Some(from), Some(to));
        let mirror_of_itself =
            matches!(E::SPEC.inverse, InverseSpec::Symmetric) && node_text(from) == node_text(to);
        // A sharded counter moves the shard the other endpoint hashes to.
        let sides = [
            Some(counters.from).map(|c| (c, node_text(to))),
            (!mirror_of_itself).then_some(counters.to).map(|c| (c, node_text(from))),
        ];
        for (counter, other) in sides.into_iter().flatten() {
            let Some(counter) = counter else { continue };
            let counter = counter?.for_edge(&other);
            if !skip.contains(&(counter.pk.clone(), counter.sk.clone())) {
                self.add(&counter, delta);
            }
        }
        Ok(())
    }

    pub(crate) fn len(&self) -> usize {
        self.groups.len()
    }

    /// The node keys moved, in action order.
    pub(crate) fn keys(&self) -> Vec<(String, Option<String>)> {
        self.groups.iter().map(|(c, _)| (c.pk.clone(), c.sk.clone())).collect()
    }

    pub(crate) fn actions<T: Table>(self, table: &str) -> Vec<Result<Raw, Error>> {
        self.groups
            .into_iter()
            .filter(|(_, adds)| adds.iter().any(|(_, d)| *d != 0))
            .map(|(c, adds)| {
                let clauses = |b: &mut ExprBuilder| -> String {
                    let clauses: Vec<String> = adds
                        .iter()
                        .filter(|(_, d)| *d != 0)
                        .map(|(attr, d)| {
                            let name = b.name(attr);
                            let value = b.value(AttributeValue::N(d.to_string()));
                            format!("{name} {value}")
                        })
                        .collect();
                    clauses.join(", ")
                };
                if c.shard.is_some() {
                    return shard_update::<T>(table, &c, clauses);
                }
                update::<T>(table, c.entity, (&c.pk, c.sk.as_deref()), c.explain, |b| {
                    Ok((format!("ADD {}", clauses(b)), None))
                })
            })
            .collect()
    }
}

/// A transaction of `actions` (the first invalid one is reported with its index).
pub(crate) fn transaction<'a, T: Table>(
    db: &'a crate::db::Db<T>,
    actions: Vec<Result<Raw, Error>>,
) -> Transaction<'a, T> {
    let mut tx = db.transaction().token(idempotency_token());
    for action in actions {
        tx = match action {
            Ok(raw) => tx.push_raw(raw.info, raw.item, raw.size),
            Err(e) => tx.push_invalid(e),
        };
    }
    tx
}

/// Sends a transaction of `actions`. An action that failed its checks is reported as its
/// own error: nothing was sent.
pub(crate) async fn commit<T: Table>(
    db: &crate::db::Db<T>,
    actions: Vec<Result<Raw, Error>>,
) -> Result<(), Error> {
    match transaction(db, actions).send().await {
        Err(Error::InvalidAction { source, .. }) => Err(*source),
        other => other,
    }
}

/// True when sending the same writes again may succeed.
pub(crate) fn retryable(err: &Error) -> bool {
    err.is_transaction_conflict()
        || err.is_throttled()
        || matches!(err, Error::TransactionInProgress { .. })
}

/// The node keys whose counter update failed because the node item does not exist.
pub(crate) fn missing_nodes(
    err: &Error,
    counter_keys: &[(String, Option<String>)],
    first: usize,
) -> Vec<(String, Option<String>)> {
    err.cancellation_reasons()
        .iter()
        .filter(|r| r.action >= first)
        .filter(|r| r.reason.condition_error().is_some_and(|e| matches!(e, Error::NotFound { .. })))
        .filter_map(|r| counter_keys.get(r.action - first).cloned())
        .collect()
}

/// The condition error of action `action` of a canceled transaction.
pub(crate) fn action_error(err: &Error, action: usize) -> Option<&Error> {
    err.cancellation_reasons()
        .iter()
        .find(|r| r.action == action)
        .and_then(|r| r.reason.condition_error())
}

impl<'a, E: Edge> Edges<'a, E> {
    fn table(&self) -> &'a str {
        self.db.table_name()
    }

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
    /// (a link of one item, without counters, recognises its own item).
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use ddb_model::Edge;
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Entity, Serialize, Deserialize)]
    /// #[entity(pk = "POST#<id>", sk = "POST")]
    /// struct Post { id: u32, likes: u64 }
    ///
    /// #[derive(Entity, Edge, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<user>", sk = "LIKES#<post>")]
    /// #[edge(from = user, to = post, inverse = none, to_count = Post::LIKES)]
    /// struct Like { user: String, post: u32 }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Error> {
    /// let db: Db = ddb_model::local::isolated_db().await?;
    /// Post { id: 7, likes: 0 }.create(&db).await?;
    /// let likes = Like::edges(&db);
    /// likes.link_new(&Like { user: "ann".into(), post: 7 }).await?;
    /// let twice = likes.link_new(&Like { user: "ann".into(), post: 7 }).await.unwrap_err();
    /// assert!(twice.is_already_exists());
    /// assert_eq!(likes.in_degree(7u32).await?, 1);
    /// # Ok(()) }
    /// ```
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
    /// #[entity(pk = "POST#<post>", sk = "TAG#<tag>")]
    /// #[edge(from = post, to = tag, inverse(pk = "TAG#<tag>", sk = "POST#<post>"))]
    /// struct Tagged { post: u32, tag: String }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Error> {
    /// let db: Db = ddb_model::local::isolated_db().await?;
    /// let tagged: Vec<Tagged> =
    ///     (0..100).map(|post| Tagged { post, tag: format!("t{}", post % 7) }).collect();
    /// let report = Tagged::edges(&db).link_all(&tagged).await?;
    /// assert_eq!((report.created, report.existing), (100, 0));
    /// // Two items per edge, 100 actions per transaction.
    /// assert_eq!(db.requests().get(Op::TransactWriteItems), 2);
    /// // Linking them again changes nothing.
    /// let again = Tagged::edges(&db).link_all(&tagged[..10]).await?;
    /// assert_eq!((again.created, again.existing), (0, 10));
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
                let existing: Vec<usize> = forward_at
                    .iter()
                    .enumerate()
                    .filter(|(_, at)| {
                        action_error(&err, **at).is_some_and(Error::is_already_exists)
                    })
                    .map(|(i, _)| i)
                    .collect();
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
                key: item_key::<E>(item),
                current: Box::new(item.clone()),
            }),
            _ => Ok(Linked::Existing),
        }
    }

    /// The actions that remove the edge `from -> to` (counters of `skip` nodes left alone);
    /// the counter keys, in action order after the item actions, and their first index.
    pub(crate) fn unlink_actions(
        &self,
        from: &E::From,
        to: &E::To,
        skip: &HashSet<(String, Option<String>)>,
        actions: &mut Vec<Result<Raw, Error>>,
        moves: &mut Moves,
    ) -> Result<(), Error> {
        let table = self.table();
        let (ft, tt) = (node_text(from), node_text(to));
        let key = forward_key::<E>(&ft, &tt);
        key.validate()?;
        actions.push(delete::<E::Table>(
            table,
            E::NAME,
            (key.pk(), key.sk()),
            Need::Present,
            explain::<E>,
        ));
        let mirror_of_itself = matches!(E::SPEC.inverse, InverseSpec::Symmetric) && ft == tt;
        if let Some((pk, sk)) = other_key::<E>(&ft, &tt).filter(|_| !mirror_of_itself) {
            actions.push(delete::<E::Table>(
                table,
                other_type::<E>(),
                (&pk, Some(&sk)),
                Need::AbsentOrSame,
                explain_other::<E>,
            ));
        }
        moves.edge::<E>(from, to, -1, skip)
    }

    /// Unlinks `from` and `to`: removes the forward item and, in the same transaction, the
    /// item of the other direction and the endpoints' counter decrements. One request.
    ///
    /// Idempotent: without the edge, the unlink is [`Unlinked::Absent`] and changes nothing.
    /// The counter of a node item that no longer exists is skipped.
    pub async fn unlink(
        &self,
        from: impl KeyArg<E::From>,
        to: impl KeyArg<E::To>,
    ) -> Result<Unlinked, Error> {
        let from: E::From = parse_node::<E, _>(E::SPEC.attrs.0, &arg_text(&from))?;
        let to: E::To = parse_node::<E, _>(E::SPEC.attrs.1, &arg_text(&to))?;
        let mut skip = HashSet::new();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut actions = Vec::new();
            let mut moves = Moves::default();
            self.unlink_actions(&from, &to, &skip, &mut actions, &mut moves)?;
            let first_counter = actions.len();
            let counter_keys = moves.keys();
            actions.extend(moves.actions::<E::Table>(self.table()));
            match commit(self.db, actions).await {
                Ok(()) => return Ok(Unlinked::Removed),
                Err(err)
                    if action_error(&err, 0)
                        .is_some_and(|e| matches!(e, Error::NotFound { .. })) =>
                {
                    return Ok(Unlinked::Absent);
                }
                Err(err) => {
                    let missing = missing_nodes(&err, &counter_keys, first_counter);
                    if !missing.is_empty() && attempt < EDGE_CONFLICTS.tries {
                        skip.extend(missing);
                    } else if retryable(&err) && attempt < EDGE_CONFLICTS.tries {
                        EDGE_CONFLICTS.pause(attempt).await;
                    } else {
                        return Err(err);
                    }
                }
            }
        }
    }

    /// Starts an update of the fields of the edge `from -> to`, on both sides in one
    /// transaction (the inverse item gets the changes to the fields it holds; a symmetric
    /// edge's mirrored item gets them all). The edge must exist ([`Error::is_not_found`]).
    ///
    /// ```
    /// # use ddb_model::prelude::*;
    /// # use ddb_model::Edge;
    /// # use serde::{Deserialize, Serialize};
    /// #[derive(Entity, Edge, Serialize, Deserialize)]
    /// #[entity(pk = "USER#<a>", sk = "FRIEND#<b>")]
    /// #[edge(from = a, to = b, symmetric)]
    /// struct Friend { a: String, b: String, close: bool }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Error> {
    /// let db: Db = ddb_model::local::isolated_db().await?;
    /// let friends = Friend::edges(&db);
    /// friends.link(&Friend { a: "ann".into(), b: "bob".into(), close: false }).await?;
    /// friends.update("ann", "bob").set(Friend::CLOSE, true).await?;
    /// assert!(friends.get("bob", "ann").await?.is_some_and(|f| f.close));
    /// assert!(friends.update("ann", "cy").set(Friend::CLOSE, true).await.unwrap_err().is_not_found());
    /// # Ok(()) }
    /// ```
    pub fn update(&self, from: impl KeyArg<E::From>, to: impl KeyArg<E::To>) -> EdgeUpdate<'a, E> {
        EdgeUpdate {
            edges: *self,
            from: arg_text(&from),
            to: arg_text(&to),
            actions: UpdateActions::new(),
            condition: None,
        }
    }
}

/// An update of an edge's fields on both sides, made by [`Edges::update`]; `.await` it.
/// Endpoint fields are part of the keys and cannot be changed (it does not compile).
#[must_use = "an update does nothing until it is awaited"]
pub struct EdgeUpdate<'a, E: Edge> {
    edges: Edges<'a, E>,
    from: String,
    to: String,
    actions: UpdateActions<E>,
    condition: Option<Node>,
}

impl<'a, E: Edge> EdgeUpdate<'a, E> {
    /// `SET path = value`.
    pub fn set<V>(mut self, path: impl UpdatePath<E, V>, value: impl ValueArg<V>) -> Self {
        self.actions = self.actions.set(path, value);
        self
    }

    /// Sets the attribute only when it is absent.
    pub fn set_if_not_exists<V>(
        mut self,
        path: impl UpdatePath<E, V>,
        value: impl ValueArg<V>,
    ) -> Self {
        self.actions = self.actions.set_if_not_exists(path, value);
        self
    }

    /// Removes an `Option` attribute.
    pub fn remove(mut self, path: impl RemovePath<E>) -> Self {
        self.actions = self.actions.remove(path);
        self
    }

    /// Adds to a number attribute (on both sides, once: the update is a transaction with an
    /// idempotency token).
    pub fn add<V: Numeric>(mut self, path: impl UpdatePath<E, V>, value: impl ValueArg<V>) -> Self {
        self.actions = self.actions.add(path, value);
        self
    }

    /// Appends to a list attribute.
    pub fn append<V: Serialize>(
        mut self,
        path: impl UpdatePath<E, Vec<V>>,
        items: impl IntoIterator<Item = V>,
    ) -> Self {
        self.actions = self.actions.append(path, items);
        self
    }

    /// A condition on the forward item (combined with AND).
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.condition = and_condition(self.condition.take(), condition);
        self
    }

    fn actions(&self) -> Vec<Result<Raw, Error>> {
        let table = self.edges.table();
        let key = forward_key::<E>(&self.from, &self.to);
        if let Err(e) = key.validate() {
            return vec![Err(e)];
        }
        // The `updated_at` field, on both items (the inverse keeps it if it copies it).
        let stamped = match with_updated_at(self.actions.clone(), self.edges.db.stamp(false)) {
            Ok(actions) => actions,
            Err(e) => return vec![Err(e)],
        };
        // An edge's own `#[index]` keys follow the fields they are made of.
        let forward_actions = match with_index_keys(&key, &stamped, false) {
            Ok((actions, _)) => actions,
            Err(e) => return vec![Err(e)],
        };
        let forward = update::<E::Table>(table, E::NAME, (key.pk(), key.sk()), explain::<E>, |b| {
            let expression = forward_actions.render(b, None)?;
            let user = self.condition.as_ref().map(|c| c.render(b)).transpose()?;
            Ok((expression, user))
        });
        let mut out = vec![forward];
        let mirror_of_itself =
            matches!(E::SPEC.inverse, InverseSpec::Symmetric) && self.from == self.to;
        let other = other_key::<E>(&self.from, &self.to).filter(|_| !mirror_of_itself);
        if let Some((pk, sk)) = other {
            let actions = match E::SPEC.inverse {
                InverseSpec::Items { fields: Some(fields), .. } => {
                    stamped.retain_paths(|p| copied(p, fields))
                }
                _ => stamped.clone(),
            };
            if !actions.is_empty() {
                out.push(update::<E::Table>(
                    table,
                    other_type::<E>(),
                    (&pk, Some(&sk)),
                    explain_other::<E>,
                    |b| Ok((actions.render(b, None)?, None)),
                ));
            }
        }
        out
    }

    /// Sends the update: one `TransactWriteItems`.
    pub async fn send(self) -> Result<(), Error> {
        on_conflict(EDGE_CONFLICTS, |_| async {
            match commit(self.edges.db, self.actions()).await {
                Ok(()) => Ok(Try::Done(())),
                Err(err) if retryable(&err) => Ok(Try::Again(err)),
                Err(err) => Err(err),
            }
        })
        .await
    }
}

/// The item a link found under an edge's forward key: `Ok` when it is an edge of type `E`,
/// [`Error::WrongEntityType`] otherwise.
fn check_existing<E: Edge>(current: Option<&Item>) -> Result<(), Error> {
    let text = |item: &Item, a: &str| string_attr(item, a).map(str::to_owned);
    match current.and_then(|item| text(item, crate::model::type_attr::<E::Table>())) {
        Some(t) if t == E::NAME => Ok(()),
        found => Err(Error::WrongEntityType {
            expected: E::NAME,
            found,
            key: current.map(item_key::<E>).unwrap_or_default(),
        }),
    }
}

/// The key of a stored item of `E`'s table, for display.
fn item_key<E: Edge>(item: &Item) -> String {
    key_display(
        string_attr(item, <E::Table as Table>::PK),
        <E::Table as Table>::SK.and_then(|a| string_attr(item, a)),
    )
}

/// True when the inverse item holds the attribute `path` starts at.
fn copied(path: &Path, fields: &[&str]) -> bool {
    match path.segments().first() {
        Some(PathSegment::Name(name)) => fields.contains(&name.as_ref()),
        _ => false,
    }
}

impl<'a, E: Edge> IntoFuture for EdgeUpdate<'a, E> {
    type Output = Result<(), Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}
