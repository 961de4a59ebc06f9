//! Unit tests of the error type: display, predicates and the mapping of service errors.

use aws_sdk_dynamodb::error::ErrorMetadata;
use aws_sdk_dynamodb::operation::put_item::PutItemError;

use super::*;

fn throttled(reasons: &[(&str, &str)]) -> Error {
    use aws_sdk_dynamodb::types::ThrottlingReason;
    use aws_sdk_dynamodb::types::error::ThrottlingException;
    let mut e = ThrottlingException::builder().message("slow down");
    for (reason, resource) in reasons {
        e = e.throttling_reasons(
            ThrottlingReason::builder().reason(*reason).resource(*resource).build(),
        );
    }
    Error::service(Op::PutItem, aws_sdk_dynamodb::Error::ThrottlingException(e.build()))
}

#[test]
fn throttling_errors_carry_their_reasons_and_advice() {
    let arn = "arn:aws:dynamodb:us-east-1:1:table/app";
    let hot = throttled(&[("TableWriteKeyRangeThroughputExceeded", arn)]);
    assert!(hot.is_throttled() && hot.is_hot_key() && hot.is_transient());
    assert!(!hot.maybe_applied());
    let reasons = hot.throttle_reasons();
    assert_eq!(reasons.len(), 1);
    assert_eq!(reasons[0].limit, ThrottleLimit::KeyRange);
    assert_eq!(reasons[0].access, Some(ThrottledAccess::Write));
    assert!(!reasons[0].on_index);
    assert_eq!(reasons[0].resource.as_deref(), Some(arn));
    assert_eq!(
        hot.to_string(),
        format!("DynamoDB throttled PutItem: TableWriteKeyRangeThroughputExceeded on {arn}")
    );
    assert!(
        matches!(hot.retry_advice(), RetryAdvice::RetryAfter { why, .. } if why.contains("hot partition key"))
    );

    // The worst of several reasons decides the advice; an index is told apart.
    let both = throttled(&[
        ("IndexReadProvisionedThroughputExceeded", "arn:x/index/gsi1"),
        ("TableReadAccountLimitExceeded", arn),
    ]);
    assert!(!both.is_hot_key());
    assert!(both.throttle_reasons()[0].on_index);
    assert!(
        matches!(both.retry_advice(), RetryAdvice::RetryAfter { why, .. } if why.contains("quota"))
    );

    // No reasons (an emulator, an older service): still typed and throttled.
    let bare = throttled(&[]);
    assert!(matches!(&bare, Error::Throttled { reasons, .. } if reasons.is_empty()));
    assert_eq!(bare.to_string(), "DynamoDB throttled PutItem");
    assert!(bare.retry_advice().may_retry());
}

#[test]
fn replicated_write_conflicts_are_typed_and_transient() {
    use aws_sdk_dynamodb::types::error::ReplicatedWriteConflictException;
    let e = Error::service(
        Op::UpdateItem,
        aws_sdk_dynamodb::Error::ReplicatedWriteConflictException(
            ReplicatedWriteConflictException::builder().message("conflict").build(),
        ),
    );
    assert!(e.is_replicated_write_conflict() && e.is_transient() && !e.is_throttled());
    assert!(matches!(e.retry_advice(), RetryAdvice::RetryAfter { .. }));
    assert!(e.to_string().contains("another Region"));
}

#[test]
fn errors_that_cannot_succeed_again_advise_against_retrying() {
    let e = Error::InvalidRequest { path: String::new(), problem: RequestProblem::EmptyUpdate };
    assert_eq!(e.retry_advice(), RetryAdvice::DoNotRetry);
    assert!(!e.retry_advice().may_retry());
    let e = Error::Transport {
        operation: Op::PutItem,
        kind: TransportKind::Timeout,
        maybe_applied: true,
        attempts: 3,
        source: "timed out".into(),
    };
    assert!(matches!(e.retry_advice(), RetryAdvice::CheckThenRetry { .. }));
    let e = Error::Transport {
        operation: Op::GetItem,
        kind: TransportKind::Timeout,
        maybe_applied: false,
        attempts: 3,
        source: "timed out".into(),
    };
    assert!(matches!(e.retry_advice(), RetryAdvice::RetryAfter { .. }));
}

proptest::proptest! {
    /// Any reason text parses without panicking, keeps the text, and reads back the
    /// parts it is made of.
    #[test]
    fn throttle_reasons_parse_any_text(
        resource in "(Table|Index|)",
        access in "(Read|Write|)",
        limit in "(ProvisionedThroughputExceeded|AccountLimitExceeded|KeyRangeThroughputExceeded|MaxOnDemandThroughputExceeded|\\PC*)",
        noise in "\\PC*",
    ) {
        let reason = format!("{resource}{access}{limit}");
        let t = Throttle::parse(&reason, None);
        proptest::prop_assert_eq!(&t.reason, &reason);
        let known = !resource.is_empty() && !access.is_empty() && !matches!(t.limit, ThrottleLimit::Other(_));
        if known {
            proptest::prop_assert_eq!(t.on_index, resource == "Index");
            proptest::prop_assert_eq!(t.access == Some(ThrottledAccess::Read), access == "Read");
        }
        let t = Throttle::parse(&noise, Some(noise.clone()));
        proptest::prop_assert_eq!(t.to_string(), format!("{noise} on {noise}"));
    }
}

fn unhandled(code: Option<&str>, message: Option<&str>) -> aws_sdk_dynamodb::Error {
    let mut meta = ErrorMetadata::builder();
    if let Some(code) = code {
        meta = meta.code(code);
    }
    if let Some(message) = message {
        meta = meta.message(message);
    }
    aws_sdk_dynamodb::Error::from(PutItemError::generic(meta.build()))
}

#[test]
fn service_errors_without_a_type_display_their_code_and_message() {
    let raw = unhandled(Some("ValidationException"), Some("Item size has exceeded"));
    assert!(raw.to_string().contains("unhandled error"), "the SDK's own display: {raw}");
    let err = Error::service(Op::PutItem, raw);
    assert_eq!(
        err.to_string(),
        "DynamoDB PutItem failed: ValidationException: Item size has exceeded"
    );
    let err = Error::service(Op::GetItem, unhandled(None, None));
    assert_eq!(err.to_string(), "DynamoDB GetItem failed: an error response without a code");
}

#[test]
fn transport_errors_say_how_they_failed_and_whether_a_write_may_have_applied() {
    let err = |operation, kind, maybe_applied, attempts| Error::Transport {
        operation,
        kind,
        maybe_applied,
        attempts,
        source: Box::new(ServerAnswer {
            status: 503,
            code: Some("ServiceUnavailable".into()),
            message: None,
        }),
    };
    let e = err(Op::UpdateItem, TransportKind::Server { status: 503 }, true, 3);
    assert_eq!(
        e.to_string(),
        "DynamoDB UpdateItem failed after 3 attempts: server error (HTTP 503): \
         HTTP 503 ServiceUnavailable; the write may have been applied"
    );
    assert!(e.is_transient() && e.maybe_applied());
    let e = err(Op::GetItem, TransportKind::Timeout, false, 1);
    assert_eq!(
        e.to_string(),
        "DynamoDB GetItem failed after 1 attempt: timed out: HTTP 503 ServiceUnavailable"
    );
    assert!(e.is_transient() && !e.maybe_applied());
    let e = err(Op::PutItem, TransportKind::Construction, false, 1);
    assert!(!e.is_transient() && e.to_string().contains("the write was not applied"));
    for kind in [
        TransportKind::Connect,
        TransportKind::Dispatch,
        TransportKind::Timeout,
        TransportKind::Response,
        TransportKind::Server { status: 500 },
        TransportKind::Construction,
    ] {
        assert!(!err(Op::PutItem, kind, true, 2).to_string().contains("unhandled"));
    }
}

#[test]
fn the_embedded_engine_says_which_step_failed() {
    let e = Error::Local(LocalProblem::Port { reason: "address in use".into() });
    assert_eq!(e.to_string(), "embedded DynamoDB: no loopback port: address in use");
    let e = Error::Local(LocalProblem::Stopped);
    assert_eq!(e.to_string(), "embedded DynamoDB: the server stopped before it was ready");
    assert!(!e.is_transient() && !e.maybe_applied() && !e.is_invalid_input());
}

/// Every `Result<_, Error>` carries the enum: the typed reasons keep it at 120 bytes
/// (clippy's `result_large_err` refuses 128).
#[test]
fn the_error_stays_small() {
    assert!(std::mem::size_of::<Error>() <= 120, "{}", std::mem::size_of::<Error>());
}

#[test]
fn typed_cursor_and_upsert_reasons_display_as_before() {
    let checkpoint = Error::InvalidCursor {
        reason: CursorReason::Checkpoint {
            entity: "Contact",
            version: 3,
            mismatch: CheckpointMismatch::Segments(0),
        },
    };
    assert_eq!(
        checkpoint.to_string(),
        "invalid cursor: the checkpoint cannot resume the migration of `Contact` to version 3: it has 0 segments"
    );
    assert!(checkpoint.is_invalid_input());
    let reason = UpsertReason::Unreadable {
        entity: "Page",
        key: "(\"s\", \"/c\")".into(),
        message: "missing field `title`".into(),
    };
    let upsert = |keys_unwritten| RequestProblem::UpsertIncomplete {
        reason: reason.clone(),
        keys_unwritten,
    };
    let text = "the item this upsert would create would not read back (cannot read `Page` item \
                (\"s\", \"/c\"): missing field `title`";
    assert_eq!(
        upsert(false).to_string(),
        format!("{text}): write every required field with `set` or `set_if_not_exists`")
    );
    assert!(upsert(true).to_string().starts_with(&format!("{text} (only an upsert started")));
    assert!(upsert(true).to_string().contains("declare them `#[entity(from_key)]`)): write"));
}
