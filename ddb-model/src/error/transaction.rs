//! What can go wrong with a transaction: problems found before sending
//! ([`TransactionProblem`]) and the per-action reasons of a canceled transaction
//! ([`ActionReason`], [`CancelReason`]). Public as `ddb_model::error::{...}` and
//! `ddb_model::ops::{...}`; the mapping from the service's reasons is in
//! `ops::transact::reason`.

use std::fmt;

use super::Error;

/// What is wrong with a transaction that was rejected before anything was sent
/// ([`Error::InvalidTransaction`]).
///
/// ```
/// use ddb_model::{Error, error::TransactionProblem};
///
/// let err = Error::InvalidTransaction {
///     problem: TransactionProblem::TooManyActions { actions: 101, max: 100 },
/// };
/// assert!(err.is_invalid_input());
/// assert_eq!(err.to_string(), "invalid transaction: 101 actions; a transaction holds at most 100");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransactionProblem {
    /// More actions (or keys, for [`TransactGet`](crate::ops::TransactGet)) than DynamoDB
    /// accepts in one transaction.
    #[error("{actions} actions; a transaction holds at most {max}")]
    TooManyActions {
        /// How many there are.
        actions: usize,
        /// The limit.
        max: usize,
    },
    /// The items and keys of the transaction add up to more than DynamoDB accepts.
    #[error("its items and keys are {size} bytes; the limit is {max} bytes")]
    TooLarge {
        /// Their size, counted as DynamoDB counts item sizes.
        size: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// Two actions address the same item; DynamoDB allows one action per item.
    #[error(
        "actions {first} and {second} both address item {key}; a transaction holds one action per item"
    )]
    DuplicateItem {
        /// The item's key, for display.
        key: String,
        /// The index of the first action on the item.
        first: usize,
        /// The index of the second action on the item.
        second: usize,
    },
    /// The idempotency token is empty or longer than DynamoDB accepts.
    #[error("the idempotency token is {len} characters long; it must be 1 to {max} characters")]
    InvalidToken {
        /// Its length in characters.
        len: usize,
        /// The limit in characters.
        max: usize,
    },
    /// A [`Slot`](crate::ops::Slot) was read from the output of another transactional get.
    #[error("the slot belongs to another transactional get")]
    ForeignSlot,
}

/// Why one action of a canceled transaction did not commit. DynamoDB gives one reason per
/// action; the actions that were fine have [`CancelReason::None`] (example on
/// [`ActionReason`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum CancelReason {
    /// The action did not fail; the transaction was canceled because of another action.
    None,
    /// The action's guard or condition did not hold. The error is the one the same
    /// single-item write returns: [`Error::AlreadyExists`], [`Error::NotFound`],
    /// [`Error::WrongEntityType`], [`Error::VersionConflict`] or [`Error::ConditionFailed`],
    /// with the stored item where there is one.
    Condition(Error),
    /// Another transaction or a concurrent write was in progress on the item
    /// (`TransactionConflict`). Sending the transaction again may succeed.
    TransactionConflict {
        /// The service's message.
        message: Option<String>,
    },
    /// DynamoDB throttled the action (`ProvisionedThroughputExceeded`, `ThrottlingError`,
    /// `RequestLimitExceeded`).
    Throttled {
        /// The service's reason code.
        code: String,
        /// The service's message.
        message: Option<String>,
    },
    /// The action is invalid against the stored item (`ValidationError`): an `add` to an
    /// attribute that is not a number, an update that makes the item too large, ...
    Validation {
        /// The service's message.
        message: Option<String>,
    },
    /// Any other reason code (`ItemCollectionSizeLimitExceeded`, ...).
    Other {
        /// The service's reason code.
        code: String,
        /// The service's message.
        message: Option<String>,
    },
    /// The service gave no reason for this action.
    Unknown,
}

impl CancelReason {
    /// True for every reason but [`CancelReason::None`]: this action is why the transaction
    /// was canceled (or the service did not say).
    pub fn is_failure(&self) -> bool {
        !matches!(self, CancelReason::None)
    }

    /// The error of a failed guard or condition ([`CancelReason::Condition`]).
    pub fn condition_error(&self) -> Option<&Error> {
        match self {
            CancelReason::Condition(e) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for CancelReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (text, message) = match self {
            CancelReason::None => ("did not fail".into(), &None),
            CancelReason::Condition(e) => return write!(f, "{e}"),
            CancelReason::TransactionConflict { message } => {
                ("another transaction or write was in progress on the item".into(), message)
            }
            CancelReason::Throttled { code, message } => (format!("throttled ({code})"), message),
            CancelReason::Validation { message } => ("invalid".into(), message),
            CancelReason::Other { code, message } => (code.clone(), message),
            CancelReason::Unknown => ("the service gave no reason".into(), &None),
        };
        match message {
            Some(m) => write!(f, "{text}: {m}"),
            None => f.write_str(&text),
        }
    }
}

/// One action of a canceled transaction and why it did not commit
/// ([`Error::TransactionCanceled`]).
///
/// ```
/// use ddb_model::{Error, error::CancelReason};
///
/// fn explain(err: &Error) {
///     for reason in err.cancellation_reasons().iter().filter(|r| r.reason.is_failure()) {
///         println!("action {} on `{}` {}: {}", reason.action, reason.entity, reason.key, reason.reason);
///     }
/// }
/// let conflict = CancelReason::TransactionConflict { message: None };
/// assert!(conflict.is_failure());
/// assert!(!CancelReason::None.is_failure());
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub struct ActionReason {
    /// The action's index in the transaction (the order actions were added, from 0).
    pub action: usize,
    /// The entity type the action is on.
    pub entity: &'static str,
    /// The item's key, for display.
    pub key: String,
    /// Why the action did not commit.
    pub reason: CancelReason,
}

impl fmt::Display for ActionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "action {} on `{}` {}: {}", self.action, self.entity, self.key, self.reason)
    }
}

/// The message of [`Error::TransactionCanceled`]: the first action that failed.
pub(crate) fn describe_canceled(reasons: &[ActionReason]) -> String {
    let mut failed = reasons.iter().filter(|r| r.reason.is_failure());
    match (failed.next(), failed.count()) {
        (None, _) => "transaction canceled".to_owned(),
        (Some(first), 0) => format!("transaction canceled: {first}"),
        (Some(first), more) => {
            format!("transaction canceled: {first} (and {more} more failed actions)")
        }
    }
}
