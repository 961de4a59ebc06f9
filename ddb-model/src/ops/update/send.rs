//! An update as a write of the pipeline (`ops::write`): sent alone as one `UpdateItem`, or
//! for a non-idempotent update whose result is not wanted a one-action `TransactWriteItems`
//! with an idempotency token; a failed guard mapped back to its error.

use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};

use super::{PreparedUpdate, Update, place};
use crate::db::Db;
use crate::error::Error;
use crate::expr::{Node, PathSegment};
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, from_item};
use crate::ops::action::{Action, Kind};
use crate::ops::transact::{ActionInfo, info, send_transact_write};
use crate::ops::unique::{Change, computed};
use crate::ops::write::{self, Write};
use crate::ops::{Rendered, idempotency_token, key_item, retry};
use crate::stats::Op;

impl<'a, E: Entity, R> Update<'a, E, R> {
    pub(super) fn execute(
        mut self,
        want_item: bool,
    ) -> impl Future<Output = Result<Option<E>, Error>> + Send {
        // One time for every try and for the entity an update computes itself.
        if self.stamp.is_none() && !E::UNIQUES.is_empty() {
            self.stamp = Some(self.db.stamp(false));
        }
        write::run(self, want_item)
    }
}

impl<E: Entity, R> Write<E> for Update<'_, E, R> {
    type Out = Option<E>;
    /// The item the update produces, computed before sending (a transaction returns none).
    type Done = Option<Item>;

    fn read_back(&mut self, item: Option<Item>) -> Option<Result<Option<E>, Error>> {
        Some(item.map(from_item).transpose())
    }

    fn db(&self) -> &Db<E::Table> {
        self.db
    }

    fn key(&self) -> Result<Key<E>, Error> {
        self.key.validate()?;
        Ok(self.key.clone())
    }

    fn change(&self) -> Result<Change<'_, E>, Error> {
        Change::update(&self.actions)
    }

    fn action(
        &self,
        held: Option<&Node>,
        stored: Option<&Item>,
        want_item: bool,
    ) -> Result<(ActionInfo, Action, Option<Item>), Error> {
        // One action of a transaction: it cannot read and seal the item first (`sealed.rs`).
        crate::model::refuse_sealed::<E>("update")?;
        let produced = if want_item { Some(self.produced(stored)?) } else { None };
        let PreparedUpdate { write, update_expression, .. } = self.prepare(held)?;
        let kind = Kind::Update { key: key_item(&write.key), expression: update_expression };
        Ok((info(&write), write.into_action(kind), produced))
    }

    /// One `UpdateItem`; a non-idempotent update that returns its result, the marked
    /// `UpdateItem`; one that does not, a one-action `TransactWriteItems` with a token.
    async fn send_alone(
        &mut self,
        held: Option<&Node>,
        want_item: bool,
    ) -> Result<Option<E>, Error> {
        let db = self.db;
        if crate::model::is_sealed::<E>() {
            return self.send_sealed(held, want_item).await;
        }
        if want_item && !self.actions.is_idempotent() && !self.at_least_once {
            return self.execute_marked(held).await.map(Some);
        }
        let prepared = self.prepare(held)?;
        if !prepared.idempotent && !self.at_least_once {
            return execute_transactional(db, prepared).await.map(|()| None);
        }
        let PreparedUpdate { write, update_expression, .. } = prepared;
        let Rendered { key, guard, condition: condition_expression, names, values } = write;
        let request = Action::update(key_item(&key), update_expression)
            .with_expressions(condition_expression, names, values)
            .return_old(true)
            .update_item(db)?
            .return_values(if want_item { ReturnValue::AllNew } else { ReturnValue::None })
            .set_return_consumed_capacity(db.capacity_mode());
        let result = retry::send(db, retry::Call::of(Op::UpdateItem, E::NAME), request).await;
        match result {
            Ok(out) => {
                if !want_item {
                    return Ok(None);
                }
                match out.attributes {
                    Some(item) => from_item(item).map(Some),
                    None => Err(no_attributes::<E>(&key)),
                }
            }
            Err(err) => Err(match err.into_service() {
                Err(e) => e,
                Ok(aws_sdk_dynamodb::Error::ConditionalCheckFailedException(e)) => {
                    guard.failure(&key, e.item)
                }
                Ok(other) => Error::service(Op::UpdateItem, other),
            }),
        }
    }

    fn finish(
        &mut self,
        produced: Option<Item>,
        _stored: Option<Item>,
        _want: bool,
    ) -> Result<Option<E>, Error> {
        produced.map(from_item).transpose()
    }
}

impl<'a, E: Entity, R> Update<'a, E, R> {
    /// The item the update produces from `stored`, computed before sending (a transaction
    /// returns nothing): the item as read with every path the update writes placed on it,
    /// and the next version.
    pub(super) fn produced(&self, stored: Option<&Item>) -> Result<Item, Error> {
        let (actions, _) = self.effective()?;
        let writes = actions.plain_writes().ok_or_else(|| computed::<E>("an `add` or `append`"))?;
        let mut item = stored.cloned().unwrap_or_default();
        item.extend(key_item(&self.key));
        for (path, value, if_absent) in writes {
            if if_absent {
                match path.segments() {
                    [PathSegment::Name(name)] if item.contains_key(name.as_ref()) => continue,
                    [PathSegment::Name(_)] => {}
                    _ => return Err(computed::<E>(path.to_string())),
                }
            }
            place(&mut item, path.segments(), value);
        }
        if let Some(def) = E::VERSION {
            let stored = match stored.and_then(|i| i.get(def.attr)) {
                Some(AttributeValue::N(n)) => n.parse::<u64>().unwrap_or(0),
                _ => 0,
            };
            let next = stored.saturating_add(1).to_string();
            item.insert(def.attr.to_owned(), AttributeValue::N(next));
        }
        Ok(item)
    }
}

/// The error of a write that returned no attributes although it asked for them.
pub(super) fn no_attributes<E: Entity>(key: &Key<E>) -> Error {
    Error::CorruptItem {
        entity: E::NAME,
        key: key.to_string(),
        reason: crate::error::CorruptReason::NoAttributes,
    }
}

/// Sends a non-idempotent update whose result is not wanted as a one-action
/// `TransactWriteItems` with an idempotency token: one request, safe to send again within the
/// token's window.
async fn execute_transactional<E: Entity>(
    db: &Db<E::Table>,
    prepared: PreparedUpdate<E>,
) -> Result<(), Error> {
    let PreparedUpdate { write, update_expression, .. } = prepared;
    let Rendered { key, guard, condition, names, values } = write;
    let action = Action::update(key_item(&key), update_expression)
        .with_expressions(condition, names, values)
        .return_old(true);
    let items = vec![action.into_transact_item(db.table_name())?];
    let call = retry::Call::of(Op::TransactWriteItems, E::NAME);
    match send_transact_write(db, items, idempotency_token(), None, call).await {
        Ok(()) => Ok(()),
        Err(err) => Err(match err.into_service()? {
            aws_sdk_dynamodb::Error::TransactionCanceledException(e)
                if e.cancellation_reasons().first().and_then(|r| r.code())
                    == Some("ConditionalCheckFailed") =>
            {
                let current = e
                    .cancellation_reasons
                    .and_then(|mut r| r.drain(..).next())
                    .and_then(|r| r.item);
                guard.failure(&key, current)
            }
            other => Error::service(Op::TransactWriteItems, other),
        }),
    }
}
