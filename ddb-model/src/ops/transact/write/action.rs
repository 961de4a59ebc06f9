//! One action of a transaction, rendered for the wire from a typed write (a put, update,
//! delete or check guarded like the single-item write of the same name), with what it
//! counts toward the size limit and what explains its failure.

use aws_sdk_dynamodb::types::TransactWriteItem;

use crate::error::Error;
use crate::model::Entity;
use crate::ops::action::Kind;
use crate::ops::transact::{ActionInfo, explain};
use crate::ops::write::TxAction;
use crate::ops::{Rendered, key_item};

/// One action, rendered for the wire.
pub(super) struct Action<'a> {
    pub(super) info: ActionInfo,
    pub(super) item: TransactWriteItem,
    /// What the action counts toward the 4 MB limit.
    pub(super) size: usize,
    /// Stores the new version in a `&mut` entity after the commit.
    pub(super) on_commit: Option<Box<dyn FnOnce() + Send + 'a>>,
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

/// An action of the write pipeline (`ops::write`) rendered for the wire on `table`.
pub(super) fn for_wire<'a>(
    table: &str,
    (info, action, on_commit): TxAction<'a>,
) -> Result<Action<'a>, Error> {
    let size = action.size();
    Ok(Action { info, item: action.into_transact_item(table)?, size, on_commit })
}

/// A condition check guarded by `rendered`.
pub(super) fn check_action<'a, E: Entity>(
    table: &str,
    rendered: Rendered<E>,
) -> Result<Action<'a>, Error> {
    let key = key_item(&rendered.key);
    let info = info(&rendered);
    for_wire(table, (info, rendered.into_action(Kind::Check(key)), None))
}
