//! The tree's bookkeeping requests, rendered by hand: revision bumps, guarded deletes, the
//! intent record and the check against it. They name attributes the entity does not have
//! (the revision, the intent's fields), so they do not go through the typed expressions.

use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, Put, ReturnConsumedCapacity,
    ReturnValuesOnConditionCheckFailure, TransactWriteItem, Update,
};

use super::{TREE_REV_ATTR, pk_attr};
use crate::db::Db;
use crate::entity::{Entity, string_attr};
use crate::error::Error;
use crate::expr::ExprBuilder;
use crate::item::{Item, item_size};
use crate::stats::Op;
use crate::table::Table;

/// Attributes of the intent record.
pub(crate) const OP_KIND: &str = "op";
pub(crate) const OP_FROM: &str = "from";
pub(crate) const OP_TO: &str = "to";
pub(crate) const OP_PHASE: &str = "phase";
pub(crate) const OP_TOKEN: &str = "token";
/// The new parent of a closure or adjacency move (escaped id, empty for the top level).
pub(crate) const OP_PARENT: &str = "parent";
/// The ancestors of a closure move's node before and after the move (encoded chains).
pub(crate) const OP_OLD_UP: &str = "old_up";
pub(crate) const OP_NEW_UP: &str = "new_up";

/// The largest number of values in one `IN` list.
const MAX_IN_VALUES: usize = 100;

pub(crate) fn s(text: &str) -> AttributeValue {
    AttributeValue::S(text.to_owned())
}

pub(crate) fn key_of<E: Entity>(pk: &str, sk: &str) -> Item {
    let mut key = Item::new();
    key.insert(pk_attr::<E>().to_owned(), s(pk));
    if let Some(attr) = <E::Table as Table>::SK {
        key.insert(attr.to_owned(), s(sk));
    }
    key
}

pub(crate) fn build_error(e: aws_sdk_dynamodb::error::BuildError) -> Error {
    Error::InvalidExpression(e.to_string())
}

/// `pk exists AND type = E`.
pub(crate) fn is_node<E: Entity>(x: &mut ExprBuilder) -> String {
    let pk = x.name(pk_attr::<E>());
    let t = x.name(<E::Table as Table>::TYPE_ATTR);
    let name = x.value(s(E::NAME));
    format!("attribute_exists({pk}) AND {t} = {name}")
}

/// Increments the revision of the node `(pk, sk)`, which must exist: the parent check of an
/// insert, and what makes a concurrent move or delete of the parent's subtree fail.
pub(crate) fn rev_bump<E: Entity>(
    table: &str,
    pk: &str,
    sk: &str,
) -> Result<(TransactWriteItem, usize), Error> {
    let mut x = ExprBuilder::default();
    let cond = is_node::<E>(&mut x);
    let rev = x.name(TREE_REV_ATTR);
    let one = x.value(AttributeValue::N("1".into()));
    let key = key_of::<E>(pk, sk);
    let size = item_size(&key) + 8;
    let update = update_action(table, key, format!("ADD {rev} {one}"), cond, x)?;
    Ok((update, size))
}

/// Deletes the node `(pk, sk)` only if it is still the node that was read: same revision
/// (no insert under it since) and, for versioned entities, same version.
pub(crate) fn guarded_delete<E: Entity>(
    table: &str,
    pk: &str,
    sk: &str,
    rev: u64,
    version: Option<u64>,
) -> Result<(TransactWriteItem, usize), Error> {
    let mut x = ExprBuilder::default();
    let mut cond = is_node::<E>(&mut x);
    let rev_name = x.name(TREE_REV_ATTR);
    let rev_value = x.value(AttributeValue::N(rev.to_string()));
    if rev == 0 {
        cond.push_str(&format!(
            " AND (attribute_not_exists({rev_name}) OR {rev_name} = {rev_value})"
        ));
    } else {
        cond.push_str(&format!(" AND {rev_name} = {rev_value}"));
    }
    if let (Some(def), Some(v)) = (E::VERSION, version) {
        let attr = x.name(def.attr);
        let value = x.value(AttributeValue::N(v.to_string()));
        if v == 0 {
            cond.push_str(&format!(" AND (attribute_not_exists({attr}) OR {attr} = {value})"));
        } else {
            cond.push_str(&format!(" AND {attr} = {value}"));
        }
    }
    let key = key_of::<E>(pk, sk);
    let size = item_size(&key);
    let delete = delete_action(table, key, cond, x)?;
    Ok((delete, size))
}

/// Checks the tree's intent record: with `paths`, that no operation in progress moves or
/// deletes any of them (an insert passes its path and its ancestors'); without, that no
/// operation is in progress at all. Fails with the stored record.
pub(crate) fn op_check<E: Entity>(
    table: &str,
    pk: &str,
    op_sk: &str,
    paths: Option<&[String]>,
) -> Result<(TransactWriteItem, usize), Error> {
    let mut x = ExprBuilder::default();
    let pk_name = x.name(pk_attr::<E>());
    let mut cond = format!("attribute_not_exists({pk_name})");
    if let Some(paths) = paths.filter(|p| !p.is_empty()) {
        let mut parts = Vec::new();
        for attr in [OP_FROM, OP_TO] {
            let name = x.name(attr);
            for chunk in paths.chunks(MAX_IN_VALUES) {
                let list: Vec<String> = chunk.iter().map(|p| x.value(s(p))).collect();
                parts.push(format!("NOT ({name} IN ({}))", list.join(", ")));
            }
        }
        if !parts.is_empty() {
            cond = format!("{cond} OR ({})", parts.join(" AND "));
        }
    }
    let key = key_of::<E>(pk, op_sk);
    let size = item_size(&key);
    let check = check_action(table, key, cond, x)?;
    Ok((check, size))
}

/// A transaction action updating the item at `key` with `update` if `cond` holds; `x` holds
/// the names and values of both expressions.
pub(crate) fn update_action(
    table: &str,
    key: Item,
    update: impl Into<String>,
    cond: String,
    x: ExprBuilder,
) -> Result<TransactWriteItem, Error> {
    let (names, values) = x.finish();
    let update = Update::builder()
        .table_name(table)
        .set_key(Some(key))
        .update_expression(update)
        .condition_expression(cond)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .build()
        .map_err(build_error)?;
    Ok(TransactWriteItem::builder().update(update).build())
}

/// A transaction action deleting the item at `key` if `cond` holds.
pub(crate) fn delete_action(
    table: &str,
    key: Item,
    cond: String,
    x: ExprBuilder,
) -> Result<TransactWriteItem, Error> {
    let (names, values) = x.finish();
    let delete = Delete::builder()
        .table_name(table)
        .set_key(Some(key))
        .condition_expression(cond)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .build()
        .map_err(build_error)?;
    Ok(TransactWriteItem::builder().delete(delete).build())
}

/// A transaction action checking `cond` on the item at `key`; a failure returns the item.
pub(crate) fn check_action(
    table: &str,
    key: Item,
    cond: String,
    x: ExprBuilder,
) -> Result<TransactWriteItem, Error> {
    let (names, values) = x.finish();
    let check = ConditionCheck::builder()
        .table_name(table)
        .set_key(Some(key))
        .condition_expression(cond)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .build()
        .map_err(build_error)?;
    Ok(TransactWriteItem::builder().condition_check(check).build())
}

/// A transaction action writing `item` if `cond` holds; with `return_old`, a failure
/// returns the stored item.
pub(crate) fn put_action(
    table: &str,
    item: Item,
    cond: String,
    x: ExprBuilder,
    return_old: bool,
) -> Result<TransactWriteItem, Error> {
    let (names, values) = x.finish();
    let put = Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .condition_expression(cond)
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .set_return_values_on_condition_check_failure(
            return_old.then_some(ReturnValuesOnConditionCheckFailure::AllOld),
        )
        .build()
        .map_err(build_error)?;
    Ok(TransactWriteItem::builder().put(put).build())
}

/// The revision stored in a node item.
pub(crate) fn rev_of(item: &Item) -> u64 {
    match item.get(TREE_REV_ATTR) {
        Some(AttributeValue::N(n)) => n.parse().unwrap_or(0),
        _ => 0,
    }
}

/// A strongly consistent `GetItem` of `(pk, sk)`, raw.
pub(crate) async fn get_raw<E: Entity>(
    db: &Db<E::Table>,
    pk: &str,
    sk: &str,
) -> Result<Option<Item>, Error> {
    let request = db
        .client()
        .get_item()
        .table_name(db.table_name())
        .set_key(Some(key_of::<E>(pk, sk)))
        .consistent_read(true)
        .return_consumed_capacity(ReturnConsumedCapacity::Total);
    let out =
        crate::ops::retry::send(db, Op::GetItem, |t| request.customize().interceptor(t).send())
            .await?;
    db.record_capacity(Op::GetItem, out.consumed_capacity.as_ref());
    db.record_items(u64::from(out.item.is_some()));
    Ok(out.item)
}

/// Writes the intent record if the tree has none; `Err(Some(stored))` when it has one.
pub(crate) async fn put_intent<E: Entity>(
    db: &Db<E::Table>,
    pk: &str,
    op_sk: &str,
    fields: &[(&str, &str)],
) -> Result<Result<(), Option<Item>>, Error> {
    let mut item = key_of::<E>(pk, op_sk);
    item.insert(<E::Table as Table>::TYPE_ATTR.to_owned(), s(&intent_type::<E>()));
    for (attr, value) in fields {
        item.insert((*attr).to_owned(), s(value));
    }
    let mut x = ExprBuilder::default();
    let pk_name = x.name(pk_attr::<E>());
    let (names, _) = x.finish();
    let request = db
        .client()
        .put_item()
        .table_name(db.table_name())
        .set_item(Some(item))
        .condition_expression(format!("attribute_not_exists({pk_name})"))
        .set_expression_attribute_names(names)
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .return_consumed_capacity(ReturnConsumedCapacity::Total);
    let out =
        crate::ops::retry::send(db, Op::PutItem, |t| request.customize().interceptor(t).send())
            .await;
    match out {
        Ok(out) => {
            db.record_capacity(Op::PutItem, out.consumed_capacity.as_ref());
            Ok(Ok(()))
        }
        Err(e) => match e.into_service() {
            Err(e) => Err(e),
            Ok(aws_sdk_dynamodb::Error::ConditionalCheckFailedException(c)) => Ok(Err(c.item)),
            Ok(other) => Err(Error::service(Op::PutItem, other)),
        },
    }
}

/// Sets the intent's phase, if the intent is still the one with `token`.
pub(crate) async fn set_phase<E: Entity>(
    db: &Db<E::Table>,
    pk: &str,
    op_sk: &str,
    token: &str,
    phase: &str,
) -> Result<(), Error> {
    set_fields::<E>(db, pk, op_sk, token, &[(OP_PHASE, phase)]).await
}

/// Sets string attributes of the intent, if the intent is still the one with `token`.
pub(crate) async fn set_fields<E: Entity>(
    db: &Db<E::Table>,
    pk: &str,
    op_sk: &str,
    token: &str,
    fields: &[(&str, &str)],
) -> Result<(), Error> {
    let mut x = ExprBuilder::default();
    let token_name = x.name(OP_TOKEN);
    let token_value = x.value(s(token));
    let sets: Vec<String> = fields
        .iter()
        .map(|(attr, value)| {
            let name = x.name(attr);
            let value = x.value(s(value));
            format!("{name} = {value}")
        })
        .collect();
    let (names, values) = x.finish();
    let request = db
        .client()
        .update_item()
        .table_name(db.table_name())
        .set_key(Some(key_of::<E>(pk, op_sk)))
        .update_expression(format!("SET {}", sets.join(", ")))
        .condition_expression(format!("{token_name} = {token_value}"))
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .return_consumed_capacity(ReturnConsumedCapacity::Total);
    let out =
        crate::ops::retry::send(db, Op::UpdateItem, |t| request.customize().interceptor(t).send())
            .await?;
    db.record_capacity(Op::UpdateItem, out.consumed_capacity.as_ref());
    Ok(())
}

/// Removes the intent record with `token` (nothing when it is gone already).
pub(crate) async fn clear_intent<E: Entity>(
    db: &Db<E::Table>,
    pk: &str,
    op_sk: &str,
    token: &str,
) -> Result<(), Error> {
    let mut x = ExprBuilder::default();
    let pk_name = x.name(pk_attr::<E>());
    let token_name = x.name(OP_TOKEN);
    let token_value = x.value(s(token));
    let (names, values) = x.finish();
    let request = db
        .client()
        .delete_item()
        .table_name(db.table_name())
        .set_key(Some(key_of::<E>(pk, op_sk)))
        .condition_expression(format!(
            "attribute_not_exists({pk_name}) OR {token_name} = {token_value}"
        ))
        .set_expression_attribute_names(names)
        .set_expression_attribute_values(values)
        .return_consumed_capacity(ReturnConsumedCapacity::Total);
    let out =
        crate::ops::retry::send(db, Op::DeleteItem, |t| request.customize().interceptor(t).send())
            .await?;
    db.record_capacity(Op::DeleteItem, out.consumed_capacity.as_ref());
    Ok(())
}

/// The entity type stored in the intent record.
pub(crate) fn intent_type<E: Entity>() -> String {
    format!("{}:tree-op", E::NAME)
}

/// A string attribute of the intent record.
pub(crate) fn intent_field<'i>(item: &'i Item, attr: &str) -> Option<&'i str> {
    string_attr(item, attr)
}
