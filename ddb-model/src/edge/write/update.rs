//! [`EdgeUpdate`]: an update of an edge's fields on both sides, in one transaction.

use super::action::{Raw, explain_other, update};
use super::commit::{commit, retryable};
use crate::edge::keys::{forward_key, other_key, other_type};
use crate::edge::{Edge, Edges, InverseSpec, arg_text};
use crate::error::Error;
use crate::expr::{Condition, Node, Path, PathSegment, UpdateActions, UpdateVerbs};
use crate::key::KeyArg;
use crate::ops::retry::{EDGE_CONFLICTS, Try, on_conflict};
use crate::ops::transact::explain;
use crate::ops::{Running, and_condition, with_index_keys, with_updated_at};

impl<'a, E: Edge> Edges<'a, E> {
    /// Starts an update of the fields of the edge `from -> to`, on both sides in one
    /// transaction (the inverse item gets the changes to the fields it holds; a symmetric
    /// edge's mirrored item gets them all). The edge must exist ([`Error::is_not_found`]).
    /// Example on [`get`](Edges::get).
    pub fn update(&self, from: impl KeyArg<E::From>, to: impl KeyArg<E::To>) -> EdgeUpdate<'a, E> {
        EdgeUpdate {
            edges: *self,
            from: arg_text(&from),
            to: arg_text(&to),
            actions: UpdateActions::new(),
            condition: None,
            running: Running::default(),
        }
    }
}

/// An update of an edge's fields on both sides, made by [`Edges::update`]; `.await` it.
/// Endpoint fields are part of the keys and cannot be changed (it does not compile).
///
/// The verbs (`set`, `add`, ...) are those of every update ([`UpdateVerbs`]); the update is
/// one transaction with an idempotency token, so `add` and `append` apply once on each side.
#[must_use = "an update does nothing until it is awaited"]
pub struct EdgeUpdate<'a, E: Edge> {
    edges: Edges<'a, E>,
    from: String,
    to: String,
    actions: UpdateActions<E>,
    condition: Option<Node>,
    running: Running<'a, Result<(), Error>>,
}

impl<E: Edge> UpdateVerbs<E> for EdgeUpdate<'_, E> {
    fn update_actions(&mut self) -> &mut UpdateActions<E> {
        &mut self.actions
    }
}

impl<'a, E: Edge> EdgeUpdate<'a, E> {
    /// A condition on the forward item (combined with AND).
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.condition = and_condition(self.condition.take(), condition);
        self
    }

    /// The actions of the update; an error before any is rendered (nothing is sent).
    fn raw_actions(&self) -> Result<Vec<Result<Raw, Error>>, Error> {
        let table = self.edges.table();
        let key = forward_key::<E>(&self.from, &self.to);
        key.validate()?;
        // The `updated_at` field, on both items (the inverse keeps it if it copies it).
        let stamped = with_updated_at(self.actions.clone(), self.edges.db.stamp(false))?;
        // An edge's own `#[index]` keys follow the fields they are made of.
        let (forward_actions, _) = with_index_keys(&key, &stamped, false)?;
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
        Ok(out)
    }

    /// Sends the update: one `TransactWriteItems`.
    pub async fn send(self) -> Result<(), Error> {
        on_conflict(EDGE_CONFLICTS, |_| async {
            match commit(self.edges.db, self.raw_actions()?).await {
                Ok(()) => Ok(Try::Done(())),
                Err(err) if retryable(&err) => Ok(Try::Again(err)),
                Err(err) => Err(err),
            }
        })
        .await
    }
}

/// True when the inverse item holds the attribute `path` starts at.
fn copied(path: &Path, fields: &[&str]) -> bool {
    match path.segments().first() {
        Some(PathSegment::Name(name)) => fields.contains(&name.as_ref()),
        _ => false,
    }
}

edge_future!(writes ['a, E: Edge] EdgeUpdate<'a, E> => Result<(), Error>, send,
    take(from, to, actions, condition), copy(edges));
