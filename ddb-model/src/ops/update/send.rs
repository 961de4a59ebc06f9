//! Sending an update: one `UpdateItem`, or for a non-idempotent update whose result is not
//! wanted a one-action `TransactWriteItems` with an idempotency token; a failed guard mapped
//! back to its error.

use aws_sdk_dynamodb::types::ReturnValue;

use super::{PreparedUpdate, Update};
use crate::db::Db;
use crate::error::Error;
use crate::key::Key;
use crate::model::{Entity, from_item};
use crate::ops::action::Action;
use crate::ops::transact::send_transact_write;
use crate::ops::{Rendered, idempotency_token, key_item, retry};
use crate::stats::Op;

impl<'a, E: Entity, R> Update<'a, E, R> {
    pub(super) async fn execute(self, want_item: bool) -> Result<Option<E>, Error> {
        if !E::UNIQUES.is_empty() {
            return crate::ops::unique::update(self.no_return(), want_item).await;
        }
        self.no_return().execute_item(want_item).await
    }
}

impl<'a, E: Entity, R> Update<'a, E, R> {
    /// Sends the item's own update (without the sentinels of unique constraints).
    pub(crate) async fn execute_item(self, want_item: bool) -> Result<Option<E>, Error> {
        let db = self.db;
        if want_item && !self.actions.is_idempotent() && !self.at_least_once {
            return self.execute_marked().await.map(Some);
        }
        let prepared = self.prepare()?;
        if !prepared.idempotent && !self.at_least_once {
            return execute_transactional(db, prepared).await.map(|()| None);
        }
        let PreparedUpdate { write, update_expression, .. } = prepared;
        let Rendered { key, guard, condition: condition_expression, names, values } = write;
        let request = Action::update(key_item(&key), update_expression)
            .with_expressions(condition_expression, names, values)
            .return_old(true)
            .update_item(db.client().update_item(), db.table_name())
            .return_values(if want_item { ReturnValue::AllNew } else { ReturnValue::None })
            .set_return_consumed_capacity(self.db.capacity_mode());
        let result = retry::send(db, Op::UpdateItem, || request.send()).await;
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
}

/// The error of a write that returned no attributes although it asked for them.
pub(super) fn no_attributes<E: Entity>(key: &Key<E>) -> Error {
    Error::CorruptItem {
        entity: E::NAME,
        key: key.to_string(),
        reason: "the service returned no attributes for the updated item".into(),
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
    match send_transact_write(db, items, idempotency_token(), None).await {
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
