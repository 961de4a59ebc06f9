//! What can go wrong with a transaction: problems found before sending
//! ([`TransactionProblem`]) and the per-action reasons of a canceled transaction
//! ([`ActionReason`], [`CancelReason`]).

use std::fmt;

use aws_sdk_dynamodb::types::CancellationReason;

use crate::entity::{Entity, key_display};
use crate::error::Error;
use crate::item::Item;
use crate::key::Key;
use crate::ops::Guard;

/// What is wrong with a transaction that was rejected before anything was sent
/// ([`Error::InvalidTransaction`]).
///
/// ```
/// use ddb_model::{Error, TransactionProblem};
///
/// let err = Error::InvalidTransaction {
///     problem: TransactionProblem::TooManyActions { actions: 101, max: 100 },
/// };
/// assert!(err.is_invalid_input());
/// assert_eq!(err.to_string(), "invalid transaction: 101 actions; a transaction holds at most 100");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransactionProblem {
    /// More actions (or keys, for [`TransactGet`](crate::ops::TransactGet)) than DynamoDB
    /// accepts in one transaction.
    TooManyActions {
        /// How many there are.
        actions: usize,
        /// The limit.
        max: usize,
    },
    /// The items and keys of the transaction add up to more than DynamoDB accepts.
    TooLarge {
        /// Their size, counted as DynamoDB counts item sizes.
        size: usize,
        /// The limit in bytes.
        max: usize,
    },
    /// Two actions address the same item; DynamoDB allows one action per item.
    DuplicateItem {
        /// The item's key, for display.
        key: String,
        /// The index of the first action on the item.
        first: usize,
        /// The index of the second action on the item.
        second: usize,
    },
    /// The idempotency token is empty or longer than DynamoDB accepts.
    InvalidToken {
        /// Its length in characters.
        len: usize,
        /// The limit in characters.
        max: usize,
    },
    /// A [`Slot`](crate::ops::Slot) was read from the output of another transactional get.
    ForeignSlot,
}

impl fmt::Display for TransactionProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransactionProblem::TooManyActions { actions, max } => {
                write!(f, "{actions} actions; a transaction holds at most {max}")
            }
            TransactionProblem::TooLarge { size, max } => {
                write!(f, "its items and keys are {size} bytes; the limit is {max} bytes")
            }
            TransactionProblem::DuplicateItem { key, first, second } => write!(
                f,
                "actions {first} and {second} both address item {key}; a transaction holds one action per item"
            ),
            TransactionProblem::InvalidToken { len, max } => write!(
                f,
                "the idempotency token is {len} characters long; it must be 1 to {max} characters"
            ),
            TransactionProblem::ForeignSlot => {
                f.write_str("the slot belongs to another transactional get")
            }
        }
    }
}

/// Why one action of a canceled transaction did not commit. DynamoDB gives one reason per
/// action; the actions that were fine have [`CancelReason::None`].
///
/// ```
/// use ddb_model::CancelReason;
///
/// let conflict = CancelReason::TransactionConflict { message: None };
/// assert!(conflict.is_failure());
/// assert!(!CancelReason::None.is_failure());
/// ```
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
        let with_message =
            |f: &mut fmt::Formatter<'_>, text: &str, message: &Option<String>| match message {
                Some(m) => write!(f, "{text}: {m}"),
                None => f.write_str(text),
            };
        match self {
            CancelReason::None => f.write_str("did not fail"),
            CancelReason::Condition(e) => write!(f, "{e}"),
            CancelReason::TransactionConflict { message } => {
                with_message(f, "another transaction or write was in progress on the item", message)
            }
            CancelReason::Throttled { code, message } => {
                with_message(f, &format!("throttled ({code})"), message)
            }
            CancelReason::Validation { message } => with_message(f, "invalid", message),
            CancelReason::Other { code, message } => with_message(f, code, message),
            CancelReason::Unknown => f.write_str("the service gave no reason"),
        }
    }
}

/// One action of a canceled transaction and why it did not commit
/// ([`Error::TransactionCanceled`]).
///
/// ```
/// use ddb_model::{CancelReason, Error};
///
/// fn explain(err: &Error) {
///     for reason in err.cancellation_reasons().iter().filter(|r| r.reason.is_failure()) {
///         println!("action {} on `{}` {}: {}", reason.action, reason.entity, reason.key, reason.reason);
///     }
/// }
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

/// Explains a failed guard of entity `E` from the item stored when it was checked.
pub(crate) type Explain = fn(Guard, &str, Option<&str>, Option<Item>) -> Error;

pub(crate) fn explain<E: Entity>(
    guard: Guard,
    pk: &str,
    sk: Option<&str>,
    current: Option<Item>,
) -> Error {
    guard.failure(&Key::<E>::from_parts(pk.to_owned(), sk.map(str::to_owned)), current)
}

/// What the cancellation mapping needs to know about one action.
pub(crate) struct ActionInfo {
    pub entity: &'static str,
    pub pk: String,
    pub sk: Option<String>,
    /// How to explain a failed condition; `None` for reads, which have none.
    pub explain: Option<(Guard, Explain)>,
}

impl ActionInfo {
    pub(crate) fn key_text(&self) -> String {
        key_display(Some(&self.pk), self.sk.as_deref())
    }
}

/// Maps the service's cancellation reasons (in action order) to typed reasons.
pub(crate) fn map_cancellation(
    reasons: &[CancellationReason],
    actions: &[ActionInfo],
) -> Vec<ActionReason> {
    actions
        .iter()
        .enumerate()
        .map(|(i, info)| ActionReason {
            action: i,
            entity: info.entity,
            key: info.key_text(),
            reason: reasons.get(i).map_or(CancelReason::Unknown, |r| map_reason(r, info)),
        })
        .collect()
}

fn map_reason(reason: &CancellationReason, info: &ActionInfo) -> CancelReason {
    let message = reason.message().map(str::to_owned);
    match reason.code() {
        None | Some("None") => CancelReason::None,
        Some("ConditionalCheckFailed") => match info.explain {
            Some((guard, explain)) => CancelReason::Condition(explain(
                guard,
                &info.pk,
                info.sk.as_deref(),
                reason.item().cloned(),
            )),
            None => CancelReason::Other { code: "ConditionalCheckFailed".to_owned(), message },
        },
        Some("TransactionConflict") => CancelReason::TransactionConflict { message },
        Some(
            code @ ("ProvisionedThroughputExceeded" | "ThrottlingError" | "RequestLimitExceeded"),
        ) => CancelReason::Throttled { code: code.to_owned(), message },
        Some("ValidationError") => CancelReason::Validation { message },
        Some(code) => CancelReason::Other { code: code.to_owned(), message },
    }
}

#[cfg(test)]
mod tests {
    use aws_sdk_dynamodb::types::AttributeValue;
    use aws_sdk_dynamodb::types::error::TransactionCanceledException;

    use super::*;
    use crate::ops::WriteKind;
    use crate::ops::transact::write::canceled;

    fn stub_explain(_: Guard, pk: &str, _: Option<&str>, current: Option<Item>) -> Error {
        Error::ConditionFailed {
            entity: "Thing",
            key: pk.to_owned(),
            current: current.map(Box::new),
        }
    }

    fn info(pk: &str, writes: bool) -> ActionInfo {
        let guard = Guard { kind: WriteKind::Update, expected_version: None };
        ActionInfo {
            entity: "Thing",
            pk: pk.to_owned(),
            sk: Some("S".to_owned()),
            explain: writes.then_some((guard, stub_explain as Explain)),
        }
    }

    fn reason(code: &str, message: Option<&str>) -> CancellationReason {
        CancellationReason::builder().code(code).set_message(message.map(str::to_owned)).build()
    }

    fn exception(reasons: Vec<CancellationReason>) -> TransactionCanceledException {
        TransactionCanceledException::builder()
            .message("Transaction cancelled")
            .set_cancellation_reasons(Some(reasons))
            .build()
    }

    #[test]
    fn every_reason_code_is_mapped() {
        let failed = CancellationReason::builder()
            .code("ConditionalCheckFailed")
            .item("n", AttributeValue::N("1".into()))
            .build();
        let reasons = vec![
            reason("None", None),
            failed,
            reason("TransactionConflict", Some("Transaction is ongoing for the item.")),
            reason("ThrottlingError", Some("slow down")),
            reason("ProvisionedThroughputExceeded", None),
            reason("ValidationError", Some("bad operand")),
            reason("ItemCollectionSizeLimitExceeded", Some("Collection size exceeded.")),
            CancellationReason::builder().build(),
            reason("ConditionalCheckFailed", None),
        ];
        let infos: Vec<ActionInfo> = (0..10).map(|i| info(&format!("P{i}"), i != 8)).collect();
        let mapped = map_cancellation(&reasons, &infos);
        assert_eq!(mapped.len(), 10, "one reason per action, even when the service gave fewer");
        assert!(mapped.iter().enumerate().all(|(i, r)| r.action == i && r.entity == "Thing"));
        assert_eq!(mapped[1].key, "(\"P1\", \"S\")");
        assert!(matches!(mapped[0].reason, CancelReason::None));
        match &mapped[1].reason {
            CancelReason::Condition(Error::ConditionFailed {
                key, current: Some(item), ..
            }) => {
                assert_eq!(key, "P1");
                assert_eq!(item.get("n"), Some(&AttributeValue::N("1".into())));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            &mapped[2].reason,
            CancelReason::TransactionConflict { message: Some(m) } if m.contains("ongoing")
        ));
        assert!(
            matches!(&mapped[3].reason, CancelReason::Throttled { code, .. } if code == "ThrottlingError")
        );
        assert!(matches!(&mapped[4].reason, CancelReason::Throttled { message: None, .. }));
        assert!(
            matches!(&mapped[5].reason, CancelReason::Validation { message: Some(m) } if m == "bad operand")
        );
        assert!(matches!(
            &mapped[6].reason,
            CancelReason::Other { code, .. } if code == "ItemCollectionSizeLimitExceeded"
        ));
        assert!(matches!(mapped[7].reason, CancelReason::None), "no code: not a failure");
        assert!(
            matches!(&mapped[8].reason, CancelReason::Other { code, .. } if code == "ConditionalCheckFailed"),
            "a read has no condition to explain"
        );
        assert!(matches!(mapped[9].reason, CancelReason::Unknown));
    }

    #[test]
    fn helpers_look_into_the_reasons() {
        let infos = vec![info("A", true), info("B", true)];
        let conflict = canceled(
            exception(vec![reason("None", None), reason("TransactionConflict", None)]),
            &infos,
        );
        assert!(conflict.is_transaction_conflict());
        assert!(!conflict.is_throttled() && !conflict.is_condition_failed());
        assert_eq!(conflict.failed_action().map(|r| r.action), Some(1));
        assert_eq!(
            conflict.to_string(),
            "transaction canceled: action 1 on `Thing` (\"B\", \"S\"): another transaction or \
             write was in progress on the item"
        );
        assert!(std::error::Error::source(&conflict).is_some(), "keeps the SDK error");

        let throttled = canceled(
            exception(vec![reason("ThrottlingError", None), reason("None", None)]),
            &infos,
        );
        assert!(throttled.is_throttled() && !throttled.is_transaction_conflict());

        let failed = canceled(
            exception(vec![reason("ConditionalCheckFailed", None), reason("None", None)]),
            &infos,
        );
        assert!(failed.is_condition_failed());
        assert!(!failed.is_already_exists() && !failed.is_not_found());
        assert_eq!(failed.current_item(), None);

        let nothing = canceled(exception(vec![]), &infos);
        assert_eq!(nothing.failed_action().map(|r| r.action), Some(0), "unknown counts as failed");
        assert!(!Error::Local(String::new()).is_transaction_conflict());
        assert!(Error::Local(String::new()).cancellation_reasons().is_empty());
    }
}
