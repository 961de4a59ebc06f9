//! Whose condition failed, when a write an interceptor added conditions to fails its
//! condition: the added conditions are checked alone, in one `TransactWriteItems` of
//! `ConditionCheck`s (it writes nothing). One that fails makes the error
//! [`Error::AddedConditionFailed`]; when they all hold, the library's own guard (or the
//! caller's condition) failed, and the error is the one the write had.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::types::{ConditionCheck, TransactWriteItem};

use super::fluent::Check;
use super::fluent::Fluent;
use super::retry::{Call, SendError, finish, plain, request_span};
use crate::db::Db;
use crate::error::Error;
use crate::model::Table;
use crate::stats::Op;
use crate::telemetry::RequestSpan;
use crate::trace::{Trace, Traced};

/// The error of a write of `op` that failed with `err`, given the `checks` of the conditions
/// an interceptor added to it.
pub(super) async fn attribute<T: Table>(
    db: &Db<T>,
    op: Op,
    err: SendError,
    checks: Vec<Check>,
) -> SendError {
    let failed = |action: Option<usize>| match (&err, action) {
        (
            SendError::Service {
                err: aws_sdk_dynamodb::Error::ConditionalCheckFailedException(_),
                ..
            },
            None,
        ) => true,
        (
            SendError::Service {
                err: aws_sdk_dynamodb::Error::TransactionCanceledException(c),
                ..
            },
            Some(i),
        ) => c
            .cancellation_reasons()
            .get(i)
            .and_then(|r| r.code())
            .is_some_and(|code| code == "ConditionalCheckFailed"),
        _ => false,
    };
    // One check per failed action (or the write), its added conditions ANDed.
    let mut merged: BTreeMap<Option<usize>, Check> = BTreeMap::new();
    for check in checks.into_iter().filter(|c| failed(c.action)) {
        match merged.get_mut(&check.action) {
            None => {
                merged.insert(check.action, check);
            }
            Some(into) => {
                let (mut cond, mut names, mut values) = (
                    Some(std::mem::take(&mut into.condition.expression)),
                    Some(std::mem::take(&mut into.condition.names)),
                    Some(std::mem::take(&mut into.condition.values)),
                );
                check.condition.and_into(&mut cond, &mut names, &mut values);
                into.condition.expression = cond.unwrap_or_default();
                into.condition.names = names.unwrap_or_default();
                into.condition.values = values.unwrap_or_default();
            }
        }
    }
    if merged.is_empty() {
        return err;
    }
    let checks: Vec<Check> = merged.into_values().collect();
    let mut actions = Vec::with_capacity(checks.len());
    for c in &checks {
        let check = ConditionCheck::builder()
            .table_name(&c.table)
            .set_key(Some(c.key.clone()))
            .condition_expression(&c.condition.expression)
            .set_expression_attribute_names(
                (!c.condition.names.is_empty()).then(|| c.condition.names.clone()),
            )
            .set_expression_attribute_values(
                (!c.condition.values.is_empty()).then(|| c.condition.values.clone()),
            )
            .build();
        match check {
            Ok(check) => actions.push(TransactWriteItem::builder().condition_check(check).build()),
            Err(_) => return err,
        }
    }
    let request = db.client().transact_write_items().set_transact_items(Some(actions));
    let call = Call::from(Op::TransactWriteItems);
    let span = request_span(db, &call);
    let (mut attempts, mut reached) = (0, false);
    match plain!(db, &call, &span, request, 1, &mut attempts, &mut reached) {
        Err(SendError::Service {
            err: aws_sdk_dynamodb::Error::TransactionCanceledException(c),
            ..
        }) => {
            let reasons = c.cancellation_reasons();
            let failed = reasons.iter().position(|r| r.code() == Some("ConditionalCheckFailed"));
            match failed.and_then(|j| checks.get(j)) {
                Some(check) => {
                    SendError::Typed(Error::AddedConditionFailed { op, action: check.action })
                }
                None => err,
            }
        }
        _ => err,
    }
}
