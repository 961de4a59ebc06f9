//! The one renderer from a guarded write to the SDK: an [`Action`] (put, update, delete or
//! condition check, with its condition, names, values and whether a failure returns the
//! stored item) becomes a `TransactWriteItem` or fills a single-item request builder.
//! Every write of the crate, typed or rendered by hand (trees, edges), goes through here.

use aws_sdk_dynamodb::operation::delete_item::builders::DeleteItemFluentBuilder;
use aws_sdk_dynamodb::operation::put_item::builders::PutItemFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::types::{
    ConditionCheck, Delete, Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::tenant;
use crate::db::Db;
use crate::error::Error;
use crate::expr::{ExprBuilder, Names, Values};
use crate::item::{Item, item_size};
use crate::model::Table;
use crate::stats::Op;

/// Sets the guard of an action (condition, names, values, what a failure returns) on any of
/// the SDK's write builders, which share these setters but no trait.
macro_rules! guard {
    ($builder:expr, $condition:expr, $names:expr, $values:expr, $return_values:expr) => {
        $builder
            .set_condition_expression($condition)
            .set_expression_attribute_names($names)
            .set_expression_attribute_values($values)
            .set_return_values_on_condition_check_failure($return_values)
    };
}

/// What a write does to its item.
pub(crate) enum Kind {
    /// Writes the whole item (which holds its key).
    Put(Item),
    /// Applies `expression` to the item at `key`.
    Update { key: Item, expression: String },
    /// Deletes the item at the key.
    Delete(Item),
    /// Checks the condition on the item at the key, writing nothing.
    Check(Item),
}

/// One guarded write, ready to render.
pub(crate) struct Action {
    pub kind: Kind,
    pub condition: Option<String>,
    pub names: Option<Names>,
    pub values: Option<Values>,
    /// A failed condition returns the stored item (`ALL_OLD`).
    pub return_old_on_failure: bool,
}

impl Action {
    /// An unconditional write of `kind`.
    pub(crate) fn new(kind: Kind) -> Action {
        Action { kind, condition: None, names: None, values: None, return_old_on_failure: false }
    }

    /// An unconditional put of `item`.
    pub(crate) fn put(item: Item) -> Action {
        Action::new(Kind::Put(item))
    }

    /// An unconditional update of the item at `key`.
    pub(crate) fn update(key: Item, expression: impl Into<String>) -> Action {
        Action::new(Kind::Update { key, expression: expression.into() })
    }

    /// An unconditional delete of the item at `key`.
    pub(crate) fn delete(key: Item) -> Action {
        Action::new(Kind::Delete(key))
    }

    /// A condition check on the item at `key` (give it a condition).
    pub(crate) fn check(key: Item) -> Action {
        Action::new(Kind::Check(key))
    }

    /// Guards the write with `condition`; `x` holds the names and values of every expression
    /// of the action.
    pub(crate) fn guarded(self, condition: impl Into<String>, x: ExprBuilder) -> Action {
        let (names, values) = x.finish();
        self.with_expressions(condition.into(), names, values)
    }

    /// Guards the write with `condition`, whose names and values are rendered already.
    pub(crate) fn with_expressions(
        mut self,
        condition: String,
        names: Option<Names>,
        values: Option<Values>,
    ) -> Action {
        // An entity told apart by its keys has no guard on a put or delete.
        self.condition = (!condition.is_empty()).then_some(condition);
        self.names = names;
        self.values = values;
        self
    }

    /// A failed condition returns the stored item.
    pub(crate) fn return_old(mut self, yes: bool) -> Action {
        self.return_old_on_failure = yes;
        self
    }

    /// What the action counts toward a transaction's 4 MB: the whole item for a put, the key
    /// for a delete or check, the key and the expression values for an update.
    pub(crate) fn size(&self) -> usize {
        match &self.kind {
            Kind::Put(item) => item_size(item),
            Kind::Update { key, .. } => item_size(key) + self.values.as_ref().map_or(0, item_size),
            Kind::Delete(key) | Kind::Check(key) => item_size(key),
        }
    }

    fn return_values(&self) -> Option<ReturnValuesOnConditionCheckFailure> {
        self.return_old_on_failure.then_some(ReturnValuesOnConditionCheckFailure::AllOld)
    }

    /// The action as one item of a `TransactWriteItems` on `table`.
    pub(crate) fn into_transact_item(self, table: &str) -> Result<TransactWriteItem, Error> {
        let return_values = self.return_values();
        let Action { kind, condition, names, values, .. } = self;
        let item = TransactWriteItem::builder();
        Ok(match kind {
            Kind::Put(put) => item.put(
                guard!(Put::builder(), condition, names, values, return_values)
                    .table_name(table)
                    .set_item(Some(put))
                    .build()
                    .map_err(Error::build)?,
            ),
            Kind::Update { key, expression } => item.update(
                guard!(Update::builder(), condition, names, values, return_values)
                    .table_name(table)
                    .set_key(Some(key))
                    .update_expression(expression)
                    .build()
                    .map_err(Error::build)?,
            ),
            Kind::Delete(key) => item.delete(
                guard!(Delete::builder(), condition, names, values, return_values)
                    .table_name(table)
                    .set_key(Some(key))
                    .build()
                    .map_err(Error::build)?,
            ),
            Kind::Check(key) => item.condition_check(
                guard!(ConditionCheck::builder(), condition, names, values, return_values)
                    .table_name(table)
                    .set_key(Some(key))
                    .build()
                    .map_err(Error::build)?,
            ),
        }
        .build())
    }

    /// A `PutItem` request on `db`'s table (the caller adds what it wants returned and the
    /// capacity report), refused outside a scoped handle's tenant (`ops::tenant`). Panics in
    /// debug builds on an action that is not a put.
    pub(crate) fn put_item<T: Table>(self, db: &Db<T>) -> Result<PutItemFluentBuilder, Error> {
        let request = db.client().put_item();
        let return_values = self.return_values();
        let Action { kind, condition, names, values, .. } = self;
        let Kind::Put(item) = kind else {
            debug_assert!(false, "put_item of an action that is not a put");
            return Ok(request);
        };
        tenant::item(db, Op::PutItem, &item)?;
        Ok(guard!(request, condition, names, values, return_values)
            .table_name(db.table_name())
            .set_item(Some(item)))
    }

    /// An `UpdateItem` request on `db`'s table, like [`put_item`](Action::put_item).
    pub(crate) fn update_item<T: Table>(
        self,
        db: &Db<T>,
    ) -> Result<UpdateItemFluentBuilder, Error> {
        let request = db.client().update_item();
        let return_values = self.return_values();
        let Action { kind, condition, names, values, .. } = self;
        let Kind::Update { key, expression } = kind else {
            debug_assert!(false, "update_item of an action that is not an update");
            return Ok(request);
        };
        tenant::key(db, Op::UpdateItem, &key)?;
        Ok(guard!(request, condition, names, values, return_values)
            .table_name(db.table_name())
            .set_key(Some(key))
            .update_expression(expression))
    }

    /// A `DeleteItem` request on `db`'s table, like [`put_item`](Action::put_item).
    pub(crate) fn delete_item<T: Table>(
        self,
        db: &Db<T>,
    ) -> Result<DeleteItemFluentBuilder, Error> {
        let request = db.client().delete_item();
        let return_values = self.return_values();
        let Action { kind, condition, names, values, .. } = self;
        let Kind::Delete(key) = kind else {
            debug_assert!(false, "delete_item of an action that is not a delete");
            return Ok(request);
        };
        tenant::key(db, Op::DeleteItem, &key)?;
        Ok(guard!(request, condition, names, values, return_values)
            .table_name(db.table_name())
            .set_key(Some(key)))
    }
}
