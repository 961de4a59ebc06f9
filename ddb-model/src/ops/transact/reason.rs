//! The mapping of the service's cancellation reasons to typed ones ([`ActionReason`],
//! [`CancelReason`], defined beside the errors that carry them).

use aws_sdk_dynamodb::types::CancellationReason;

use crate::error::{ActionReason, CancelReason, Error};
use crate::item::Item;
use crate::key::Key;
use crate::model::{Entity, UniqueDef, key_display};
use crate::ops::Guard;

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
    /// For the sentinel item of a unique constraint: the constraint, and whether the action
    /// claims the value (a failure: another item owns it) or releases it.
    pub unique: Option<UniqueAction>,
}

/// A sentinel action of a unique constraint (see `ops::unique`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct UniqueAction {
    pub def: &'static UniqueDef,
    pub claim: bool,
}

/// The attributes of a sentinel item that name its owner's key.
pub(crate) const OWNER_PK: &str = "_owner_pk";
pub(crate) const OWNER_SK: &str = "_owner_sk";

impl UniqueAction {
    /// Explains the failed condition of the action on the sentinel at `key`: a claim found the
    /// value owned by another item ([`Error::Unique`], naming it), a release found the
    /// sentinel of a value the item held owned by another item (the table broke the
    /// constraint before, [`Error::CorruptItem`]).
    pub(crate) fn failure(
        &self,
        entity: &'static str,
        key: String,
        current: Option<&Item>,
    ) -> Error {
        let text = |attr: &str| match current.and_then(|item| item.get(attr)) {
            Some(aws_sdk_dynamodb::types::AttributeValue::S(s)) => Some(s.as_str()),
            _ => None,
        };
        let owner = text(OWNER_PK).map(|pk| key_display(Some(pk), text(OWNER_SK)));
        if self.claim {
            return Error::Unique { entity, field: self.def.field, scope: self.def.scope, owner };
        }
        Error::CorruptItem {
            entity,
            key,
            reason: crate::error::CorruptReason::SentinelOwned {
                field: self.def.field,
                scope: self.def.scope,
                owner,
            },
        }
    }
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
        Some("ConditionalCheckFailed") => {
            let failure = match (info.unique, info.explain) {
                (Some(u), _) => Some(u.failure(info.entity, info.key_text(), reason.item())),
                (None, Some((guard, explain))) => {
                    Some(explain(guard, &info.pk, info.sk.as_deref(), reason.item().cloned()))
                }
                (None, None) => None,
            };
            let other = || CancelReason::Other { code: "ConditionalCheckFailed".into(), message };
            failure.map_or_else(other, CancelReason::Condition)
        }
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
            unique: None,
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
        assert!(!Error::Local(crate::error::LocalProblem::Stopped).is_transaction_conflict());
        assert!(
            Error::Local(crate::error::LocalProblem::Stopped).cancellation_reasons().is_empty()
        );
    }
}
