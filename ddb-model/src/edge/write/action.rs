//! One action of an edge transaction rendered for the wire: a put, delete or update of an
//! item (an edge, the item of the other direction, a counter) guarded on what the item under
//! its key must be, with what the transaction needs to explain a failed guard.

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};

use crate::edge::keys::other_type;
use crate::edge::{CounterRef, Edge};
use crate::error::Error;
use crate::expr::ExprBuilder;
use crate::item::Item;
use crate::model::{Table, key_display, string_attr};
use crate::ops::action::Action;
use crate::ops::transact::{ActionInfo, Explain};
use crate::ops::{Guard, WriteKind};

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
    pub(super) fn key(&self) -> (String, Option<String>) {
        (self.info.pk.clone(), self.info.sk.clone())
    }
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

pub(super) fn guard_expr<T: Table>(b: &mut ExprBuilder, need: Need, entity: &str) -> String {
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

pub(super) fn info(
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
pub(super) fn explain_other<E: Edge>(
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
pub(super) fn put<T: Table>(
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
pub(super) fn delete<T: Table>(
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
pub(super) fn update<T: Table>(
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
pub(super) fn shard_update<T: Table>(
    table: &str,
    counter: &CounterRef,
    clauses: impl FnOnce(&mut ExprBuilder) -> String,
) -> Result<Raw, Error> {
    let (pk, sk) = (counter.pk.as_str(), counter.sk.as_deref());
    let key = key_attrs::<T>(pk, sk);
    let mut b = ExprBuilder::default();
    let adds = clauses(&mut b);
    let (expression, condition) = crate::edge::shard::shard_update::<T>(&mut b, counter, &adds);
    let action = Action::update(key, expression).guarded(condition, b).return_old(true);
    raw(table, action, info(counter.entity, pk, sk, Need::AbsentOrSame, counter.explain))
}

/// Renders `action` with what the transaction needs to know about it.
pub(crate) fn raw(table: &str, action: Action, info: ActionInfo) -> Result<Raw, Error> {
    let size = action.size();
    Ok(Raw { info, item: action.into_transact_item(table)?, size })
}
