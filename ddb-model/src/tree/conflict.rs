//! What a failed tree transaction says, and how often it is tried again: shared by every
//! strategy's writes.

use crate::error::Error;
use crate::ops::retry::Backoff;
use crate::ops::{ActionReason, CancelReason};

/// How often a move or delete of a small subtree is retried when a concurrent write changed
/// the subtree between its read and its transaction.
pub(crate) const CONFLICT_RETRIES: u32 = 3;

/// The tree writes that read, then write conditioned on what they read (inserts, moves,
/// deletes, replaces of every strategy) and meet a concurrent change: `1 + CONFLICT_RETRIES`
/// tries in all, pausing up to 10, 20 and 40 ms between them (see `ops::retry`).
pub(crate) const CONFLICTS: Backoff = Backoff {
    tries: CONFLICT_RETRIES + 1,
    base: std::time::Duration::from_millis(10),
    max: std::time::Duration::from_millis(40),
};

/// What canceled a transaction: the actions whose condition failed, in order, and whether
/// anything else (a conflict, throttling, ...) did.
pub(crate) fn failures(err: &Error) -> (Vec<usize>, bool) {
    let mut conditions = Vec::new();
    let mut other = false;
    for r in err.cancellation_reasons() {
        match &r.reason {
            CancelReason::None => {}
            CancelReason::Condition(_) => conditions.push(r.action),
            CancelReason::Other { code, .. } if code == "ConditionalCheckFailed" => {
                conditions.push(r.action);
            }
            _ => other = true,
        }
    }
    (conditions, other)
}

/// True when nothing but a transaction conflict (a concurrent write of one of its items)
/// canceled a transaction: no condition failed, so sending it again may succeed.
pub(crate) fn only_conflict(conditions: &[usize], other: bool, err: &Error) -> bool {
    conditions.is_empty() && other && err.is_transaction_conflict()
}

/// The typed error of action `index` of a failed transaction: what the action alone would
/// have returned (`AlreadyExists`, a key problem, ...); `err` itself otherwise.
pub(crate) fn action_error(err: Error, index: usize) -> Error {
    match err {
        Error::InvalidAction { action, source } if action == index => *source,
        Error::TransactionCanceled { mut reasons, source } => {
            let Some(pos) = reasons.iter().position(|r| r.action == index) else {
                return Error::TransactionCanceled { reasons, source };
            };
            let ActionReason { action, entity, key, reason } = reasons.remove(pos);
            match reason {
                CancelReason::Condition(e) => e,
                reason => {
                    reasons.insert(pos, ActionReason { action, entity, key, reason });
                    Error::TransactionCanceled { reasons, source }
                }
            }
        }
        other => other,
    }
}
