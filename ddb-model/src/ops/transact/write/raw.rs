//! Actions rendered by other layers: tree bookkeeping, and the graph layer (`crate::edge`),
//! which writes items that are not one entity's plain item (inverse edges, counters on node
//! items) with guards of its own and renders them again for a token-carrying retry.

use aws_sdk_dynamodb::types::TransactWriteItem;

use super::action::Action;
use super::limits::checked;
use super::{Entry, Rebuild, Transaction};
use crate::error::Error;
use crate::model::Table;
use crate::ops::transact::ActionInfo;

impl<'a, T: Table> Transaction<'a, T> {
    /// Adds an action rendered elsewhere (tree bookkeeping): `entity` and the key name it in
    /// errors; a failed condition is reported as `CancelReason::Other`.
    pub(crate) fn raw(
        self,
        entity: &'static str,
        (pk, sk): (String, Option<String>),
        item: TransactWriteItem,
        size: usize,
    ) -> Self {
        self.push_raw(ActionInfo { entity, pk, sk, explain: None, unique: None }, item, size)
    }

    /// Adds a rendered action: `info` names its item and explains a failed condition,
    /// `size` is what it counts toward the 4 MB limit.
    pub(crate) fn push_raw(self, info: ActionInfo, item: TransactWriteItem, size: usize) -> Self {
        self.push(Ok(Action { info, item, size, on_commit: None }))
    }

    /// Adds an action that failed its checks before sending (reported with its index).
    pub(crate) fn push_invalid(self, error: Error) -> Self {
        self.push(Err(error))
    }

    /// The transaction, sent again after a transport failure (the token-carrying retry) with
    /// the items `rebuild` renders instead of a copy of its request taken before the first
    /// send. `rebuild` must render the same items as this transaction's actions (the retry
    /// carries the same token); it runs only if the transaction is sent again.
    pub(crate) fn rebuilt_by(self, rebuild: &'a Rebuild<'a>) -> Self {
        Transaction { rebuild: Some(rebuild), ..self }
    }

    /// The items of the transaction's actions, in order, after the checks of
    /// [`send`](Transaction::send) (for a [`Rebuild`]).
    pub(crate) fn into_items(self) -> Result<Vec<TransactWriteItem>, Error> {
        let actions = self
            .actions
            .into_iter()
            .map(|entry| match entry {
                Entry::Ready(action) => action,
                // Only unique constraints defer, and no layer that rebuilds has them.
                Entry::Deferred(_) => {
                    Err(Error::Internal { problem: crate::error::InternalProblem::DeferredRebuild })
                }
            })
            .collect();
        Ok(checked(actions)?.into_iter().map(|a| a.item).collect())
    }
}
