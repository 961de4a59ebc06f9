//! Sending an edge transaction (with an idempotency token) and reading why it was canceled:
//! which action failed, which counted node is missing, whether to try again.

use super::action::Raw;
use crate::error::Error;
use crate::model::Table;
use crate::ops::idempotency_token;

/// Sends a transaction of `actions` with an idempotency token. An action that failed its
/// checks is reported as its own error: nothing was sent.
pub(crate) async fn commit<T: Table>(
    db: &crate::db::Db<T>,
    actions: Vec<Result<Raw, Error>>,
) -> Result<(), Error> {
    let mut tx = db.transaction().token(idempotency_token());
    for action in actions {
        tx = match action {
            Ok(raw) => tx.push_raw(raw.info, raw.item, raw.size),
            Err(e) => tx.push_invalid(e),
        };
    }
    match tx.send().await {
        Err(Error::InvalidAction { source, .. }) => Err(*source),
        other => other,
    }
}

/// True when sending the same writes again may succeed.
pub(crate) fn retryable(err: &Error) -> bool {
    err.is_transaction_conflict()
        || err.is_throttled()
        || matches!(err, Error::TransactionInProgress { .. })
}

/// The node keys whose counter update failed because the node item does not exist.
pub(crate) fn missing_nodes(
    err: &Error,
    counter_keys: &[(String, Option<String>)],
    first: usize,
) -> Vec<(String, Option<String>)> {
    err.cancellation_reasons()
        .iter()
        .filter(|r| r.action >= first)
        .filter(|r| r.reason.condition_error().is_some_and(|e| matches!(e, Error::NotFound { .. })))
        .filter_map(|r| counter_keys.get(r.action - first).cloned())
        .collect()
}

/// The condition error of action `action` of a canceled transaction.
pub(crate) fn action_error(err: &Error, action: usize) -> Option<&Error> {
    err.cancellation_reasons()
        .iter()
        .find(|r| r.action == action)
        .and_then(|r| r.reason.condition_error())
}

/// The positions in `at` (action indexes) of the actions of a canceled transaction whose
/// condition error passes `test`, in order.
pub(crate) fn failed_at(err: &Error, at: &[usize], test: impl Fn(&Error) -> bool) -> Vec<usize> {
    (0..at.len()).filter(|&i| action_error(err, at[i]).is_some_and(&test)).collect()
}
