use std::future::IntoFuture;
use std::marker::PhantomData;

use aws_sdk_dynamodb::types::{
    ReturnConsumedCapacity, ReturnValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem,
};
use serde::Serialize;

use super::transact::send_transact_write;
use super::{
    BoxFuture, Guard, NoReturn, Rendered, ReturnNew, WriteKind, and_condition,
    check_expected_version, idempotency_token, key_item,
};
use crate::db::Db;
use crate::entity::{Entity, from_item};
use crate::error::Error;
use crate::expr::{
    Condition, ExprBuilder, Node, Numeric, RemovePath, UpdateActions, UpdatePath, ValueArg,
};
use crate::key::Key;
use crate::stats::Op;
use crate::table::Table;

/// Changes attributes of an existing item in place. Made by `E::update(&db, ..)` or
/// [`Db::update`].
///
/// The item must exist and be of the entity's type ([`Error::NotFound`],
/// [`Error::WrongEntityType`]). Key fields and the version field cannot be changed (it does not
/// compile); the version, if any, is incremented by every update, and
/// [`expect_version`](Update::expect_version) adds optimistic locking.
///
/// `.await` returns the updated entity. Updates made only of `set`, `set_if_not_exists` and
/// `remove` are one `UpdateItem`. Updates with `add` or `append` are not idempotent, so they
/// are sent as a one-action `TransactWriteItems` with an idempotency token (an SDK retry of a
/// request whose response was lost cannot apply them twice), followed by a consistent
/// `GetItem` for the result; [`no_return`](Update::no_return) skips that read.
#[must_use = "an operation does nothing until it is awaited"]
pub struct Update<'a, E: Entity, R = ReturnNew> {
    db: &'a Db<E::Table>,
    key: Key<E>,
    actions: UpdateActions<E>,
    condition: Option<Node>,
    expected_version: Option<u64>,
    _return: PhantomData<fn() -> R>,
}

impl<T: Table> Db<T> {
    /// Starts an update of the item of `key`.
    pub fn update<E: Entity<Table = T>>(&self, key: Key<E>) -> Update<'_, E> {
        Update {
            db: self,
            key,
            actions: UpdateActions::new(),
            condition: None,
            expected_version: None,
            _return: PhantomData,
        }
    }
}

impl<'a, E: Entity, R> Update<'a, E, R> {
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

    /// Removes an `Option` attribute (it reads back as `None`).
    pub fn remove(mut self, path: impl RemovePath<E>) -> Self {
        self.actions = self.actions.remove(path);
        self
    }

    /// Adds to a number attribute (absent counts as 0).
    pub fn add<V: Numeric>(mut self, path: impl UpdatePath<E, V>, value: impl ValueArg<V>) -> Self {
        self.actions = self.actions.add(path, value);
        self
    }

    /// Appends to a list attribute (absent counts as empty).
    pub fn append<V: Serialize>(
        mut self,
        path: impl UpdatePath<E, Vec<V>>,
        items: impl IntoIterator<Item = V>,
    ) -> Self {
        self.actions = self.actions.append(path, items);
        self
    }

    /// Adds prepared actions.
    pub fn actions(mut self, actions: UpdateActions<E>) -> Self {
        self.actions = self.actions.merge(actions);
        self
    }

    /// Adds a condition on the stored item (combined with AND).
    pub fn condition(mut self, condition: Condition<E>) -> Self {
        self.condition = and_condition(self.condition.take(), condition);
        self
    }

    /// Optimistic locking: the update applies only if the stored version is `version`;
    /// otherwise it fails with [`Error::VersionConflict`] and changes nothing.
    pub fn expect_version(mut self, version: u64) -> Self {
        self.expected_version = Some(version);
        self
    }

    /// Returns nothing instead of the updated entity (saves the read after a transactional
    /// update, and response size otherwise).
    pub fn no_return(self) -> Update<'a, E, NoReturn> {
        Update {
            db: self.db,
            key: self.key,
            actions: self.actions,
            condition: self.condition,
            expected_version: self.expected_version,
            _return: PhantomData,
        }
    }

    /// Checks the key and renders the update and its guarded condition.
    pub(crate) fn prepare(&self) -> Result<PreparedUpdate<E>, Error> {
        self.key.validate()?;
        check_expected_version::<E>(self.expected_version)?;
        let mut b = ExprBuilder::default();
        let update_expression = self.actions.render(&mut b, E::VERSION.map(|v| v.attr))?;
        let guard = Guard { kind: WriteKind::Update, expected_version: self.expected_version };
        let write = Rendered::new(b, self.key.clone(), guard, self.condition.as_ref())?;
        Ok(PreparedUpdate { write, update_expression, idempotent: self.actions.is_idempotent() })
    }

    async fn execute(self, want_item: bool) -> Result<Option<E>, Error> {
        let db = self.db;
        let prepared = self.prepare()?;
        if !prepared.idempotent {
            return execute_transactional(db, prepared, want_item).await;
        }
        let PreparedUpdate { write, update_expression, .. } = prepared;
        let Rendered { key, guard, condition: condition_expression, names, values } = write;
        db.count(Op::UpdateItem);
        let result = db
            .client()
            .update_item()
            .table_name(db.table_name())
            .set_key(Some(key_item(&key)))
            .update_expression(update_expression)
            .condition_expression(condition_expression)
            .set_expression_attribute_names(names)
            .set_expression_attribute_values(values)
            .return_values(if want_item { ReturnValue::AllNew } else { ReturnValue::None })
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .return_consumed_capacity(ReturnConsumedCapacity::Total)
            .send()
            .await;
        match result {
            Ok(out) => {
                db.record_capacity(Op::UpdateItem, out.consumed_capacity.as_ref());
                if !want_item {
                    return Ok(None);
                }
                match out.attributes {
                    Some(item) => from_item(item).map(Some),
                    None => Err(Error::CorruptItem {
                        entity: E::NAME,
                        key: key.to_string(),
                        reason: "the service returned no attributes for the updated item".into(),
                    }),
                }
            }
            Err(err) => Err(match aws_sdk_dynamodb::Error::from(err) {
                aws_sdk_dynamodb::Error::ConditionalCheckFailedException(e) => {
                    guard.failure(&key, e.item)
                }
                other => Error::Sdk { operation: Op::UpdateItem, source: Box::new(other) },
            }),
        }
    }
}

/// An update rendered for the wire.
pub(crate) struct PreparedUpdate<E> {
    pub write: Rendered<E>,
    pub update_expression: String,
    /// No `add` or `append`: applying it twice is applying it once.
    pub idempotent: bool,
}

impl<E: Entity> PreparedUpdate<E> {
    /// The update as the `Update` of a `TransactWriteItems` action on `table`.
    pub(crate) fn to_transact(
        &self,
        table: &str,
    ) -> Result<aws_sdk_dynamodb::types::Update, Error> {
        aws_sdk_dynamodb::types::Update::builder()
            .table_name(table)
            .set_key(Some(key_item(&self.write.key)))
            .update_expression(self.update_expression.clone())
            .condition_expression(self.write.condition.clone())
            .set_expression_attribute_names(self.write.names.clone())
            .set_expression_attribute_values(self.write.values.clone())
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .build()
            .map_err(|e| Error::InvalidExpression(e.to_string()))
    }
}

/// Sends a non-idempotent update as a one-action `TransactWriteItems` with an idempotency
/// token, then reads the result back (when wanted) with a consistent `GetItem`.
async fn execute_transactional<E: Entity>(
    db: &Db<E::Table>,
    prepared: PreparedUpdate<E>,
    want_item: bool,
) -> Result<Option<E>, Error> {
    let update = prepared.to_transact(db.table_name())?;
    let write = prepared.write;
    let items = vec![TransactWriteItem::builder().update(update).build()];
    if let Err(err) = send_transact_write(db, items, idempotency_token()).await {
        return Err(match err {
            aws_sdk_dynamodb::Error::TransactionCanceledException(e)
                if e.cancellation_reasons().first().and_then(|r| r.code())
                    == Some("ConditionalCheckFailed") =>
            {
                let current = e
                    .cancellation_reasons
                    .and_then(|mut r| r.drain(..).next())
                    .and_then(|r| r.item);
                write.failure(current)
            }
            other => Error::Sdk { operation: Op::TransactWriteItems, source: Box::new(other) },
        });
    }
    if !want_item {
        return Ok(None);
    }
    let key = write.key;
    match db.get(key.clone()).consistent().send().await? {
        Some(entity) => Ok(Some(entity)),
        // Deleted between the write and the read.
        None => Err(Error::NotFound { entity: E::NAME, key: key.to_string() }),
    }
}

impl<'a, E: Entity> Update<'a, E, ReturnNew> {
    /// Sends the update and returns the entity as it is afterwards.
    pub async fn send(self) -> Result<E, Error> {
        // `execute(true)` returns the entity or an error; `None` cannot happen.
        self.execute(true).await?.ok_or_else(|| Error::CorruptItem {
            entity: E::NAME,
            key: String::new(),
            reason: "the update returned no item".into(),
        })
    }
}

impl<'a, E: Entity> Update<'a, E, NoReturn> {
    /// Sends the update.
    pub async fn send(self) -> Result<(), Error> {
        self.execute(false).await.map(|_| ())
    }
}

impl<'a, E: Entity> IntoFuture for Update<'a, E, ReturnNew> {
    type Output = Result<E, Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}

impl<'a, E: Entity> IntoFuture for Update<'a, E, NoReturn> {
    type Output = Result<(), Error>;
    type IntoFuture = BoxFuture<'a, Self::Output>;
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.send())
    }
}
