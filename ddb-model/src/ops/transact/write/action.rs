//! One action of a transaction, rendered for the wire from a typed write (a put, update,
//! delete or check guarded like the single-item write of the same name), with what it
//! counts toward the size limit and what explains its failure.

use aws_sdk_dynamodb::types::TransactWriteItem;

use crate::error::Error;
use crate::model::Entity;
use crate::ops::action::Kind;
use crate::ops::put::PreparedPut;
use crate::ops::transact::{ActionInfo, explain};
use crate::ops::unique;
use crate::ops::update::PreparedUpdate;
use crate::ops::{Put, Rendered, Target, key_item};

/// One action, rendered for the wire.
pub(super) struct Action<'a> {
    pub(super) info: ActionInfo,
    pub(super) item: TransactWriteItem,
    /// What the action counts toward the 4 MB limit.
    pub(super) size: usize,
    /// Stores the new version in a `&mut` entity after the commit.
    pub(super) on_commit: Option<Box<dyn FnOnce() + Send + 'a>>,
}

/// A write's action followed by its sentinel actions.
pub(super) fn with_sentinels(
    action: Action<'_>,
    sentinels: Vec<unique::SentinelWrite>,
) -> Result<Vec<Action<'_>>, Error> {
    let mut out = Vec::with_capacity(1 + sentinels.len());
    out.push(action);
    out.extend(sentinels.into_iter().map(|s| Action {
        info: s.info,
        item: s.item,
        size: s.size,
        on_commit: None,
    }));
    Ok(out)
}

pub(crate) fn info<E: Entity>(rendered: &Rendered<E>) -> ActionInfo {
    ActionInfo {
        entity: E::NAME,
        pk: rendered.key.pk().to_owned(),
        sk: rendered.key.sk().map(str::to_owned),
        explain: Some((rendered.guard, explain::<E>)),
        unique: None,
    }
}

/// Renders a typed write for the wire: `kind` guarded by `write` (a failed guard returns the
/// stored item).
pub(super) fn action<'a, E: Entity>(
    table: &str,
    write: Rendered<E>,
    kind: Kind,
    on_commit: Option<Box<dyn FnOnce() + Send + 'a>>,
) -> Result<Action<'a>, Error> {
    let info = info(&write);
    let action = write.into_action(kind);
    let size = action.size();
    Ok(Action { info, item: action.into_transact_item(table)?, size, on_commit })
}

pub(super) fn put_action<'a, E: Entity>(table: &str, put: Put<'a, E>) -> Result<Action<'a>, Error> {
    let PreparedPut { write, item, next_version, stamp } = put.prepare()?;
    let on_commit: Option<Box<dyn FnOnce() + Send + 'a>> = match put.into_target() {
        Some(mut target @ Target::Exclusive(_))
            if next_version.is_some() || E::TIMESTAMPS.any() =>
        {
            Some(Box::new(move || target.written(next_version, stamp)))
        }
        _ => None,
    };
    action(table, write, Kind::Put(item), on_commit)
}

pub(super) fn update_action<'a, E: Entity>(
    table: &str,
    prepared: PreparedUpdate<E>,
) -> Result<Action<'a>, Error> {
    let PreparedUpdate { write, update_expression, .. } = prepared;
    let key = key_item(&write.key);
    action(table, write, Kind::Update { key, expression: update_expression }, None)
}

pub(super) fn delete_action<'a, E: Entity>(
    table: &str,
    rendered: Rendered<E>,
) -> Result<Action<'a>, Error> {
    let key = key_item(&rendered.key);
    action(table, rendered, Kind::Delete(key), None)
}

pub(super) fn check_action<'a, E: Entity>(
    table: &str,
    rendered: Rendered<E>,
) -> Result<Action<'a>, Error> {
    let key = key_item(&rendered.key);
    action(table, rendered, Kind::Check(key), None)
}
