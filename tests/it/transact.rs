//! Transactions: mixed actions across entity types in one request, per-action failure
//! reasons, limits checked before sending, versions, idempotency under lost responses, and
//! transactional reads.

use ddb_model::aws_sdk_dynamodb::error::ProvideErrorMetadata;
use ddb_model::ops::{MAX_TRANSACTION_ACTIONS, Transaction};
use ddb_model::prelude::*;
use ddb_model::testing::{Faults, Harness};
use ddb_model::{
    DefaultTable, Op,
    error::{CancelReason, TransactionProblem},
    local,
};
use serde::{Deserialize, Serialize};

use crate::model::{App, Counter, Order, Status, User};
use crate::support::{self, n, put_raw, raw, s};

/// A third entity type in the `App` table, in the users' partitions.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<user>", sk = "NOTE#<seq>")]
pub struct Note {
    pub user: String,
    pub seq: u32,
    pub text: String,
}

/// Another entity type whose keys are the same as `Note`'s: one item, two views.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<user>", sk = "NOTE#<seq>")]
pub struct NoteAlias {
    pub user: String,
    pub seq: u32,
}

/// One entry per counted event, for the idempotency test.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "COUNTER#<counter>", sk = "ENTRY#<seq>")]
pub struct Entry {
    pub counter: String,
    pub seq: u32,
}

fn note(user: &str, seq: u32) -> Note {
    Note { user: user.into(), seq, text: format!("note {seq} of {user}") }
}

fn order(seq: u64) -> Order {
    Order {
        user: "ann".into(),
        year: 2024,
        seq,
        status: Status::Open,
        total_cents: 1000,
        version: 0,
    }
}

#[tokio::test]
async fn mixed_actions_across_entity_types_commit_in_one_request() -> Result<(), Error> {
    let db = support::db::<App>().await;
    User::sample("ann").create(&db).await?;
    User::sample("carl").create(&db).await?;
    let mut first = order(1);
    first.create(&db).await?;
    order(2).create(&db).await?;
    order(3).create(&db).await?;
    note("ann", 1).create(&db).await?;

    let bob = User::sample("bob");
    let bobs_note = note("bob", 1);
    first.total_cents = 2500;
    let before = db.requests();
    db.transaction()
        .create(&bob)
        .replace(&mut first)
        .update(User::key("ann"), |u| u.add(User::LOGINS, 3).set(User::NICK, "annie"))
        .delete(Note::key("ann", 1))
        .create(&bobs_note)
        .check_version(Order::key("ann", 2024, 2), 1)
        .update(Order::key("ann", 2024, 3), |u| {
            u.set(Order::STATUS, Status::Shipped).expect_version(1)
        })
        .check(User::key("carl"), User::ORG.eq("acme"))
        .check_not_exists(User::key("dave"))
        .await?;
    let spent = db.requests() - before;
    assert_eq!((spent.get(Op::TransactWriteItems), spent.total()), (1, 1), "{spent}");

    assert_eq!(first.version, 2, "the &mut entity holds the stored version");
    assert_eq!(Order::get(&db, "ann", 2024, 1u64).await?, Some(first.clone()));
    assert_eq!(User::get(&db, "bob").await?, Some(bob));
    let ann = User::get(&db, "ann").await?.expect("ann");
    assert_eq!((ann.logins, ann.nick.as_deref()), (3, Some("annie")));
    assert_eq!(Note::get(&db, "ann", 1u32).await?, None);
    assert_eq!(Note::get(&db, "bob", 1u32).await?, Some(bobs_note));
    assert_eq!(Order::get(&db, "ann", 2024, 2u64).await?.map(|o| o.version), Some(1));
    let third = Order::get(&db, "ann", 2024, 3u64).await?.expect("order 3");
    assert_eq!((third.status, third.version), (Status::Shipped, 2), "updates bump the version");
    assert_eq!(User::get(&db, "carl").await?, Some(User::sample("carl")), "checks write nothing");
    assert_eq!(User::get(&db, "dave").await?, None);
    assert_eq!(support::snapshot(&db).await.len(), 7);
    Ok(())
}

/// Sends `tx`, whose action 1 must fail, and checks what every canceled transaction
/// guarantees: one request, nothing written, one reason per action, only action 1 failed.
async fn canceled_at_1(db: &Db<App>, tx: Transaction<'_, App>) -> Error {
    let snapshot = support::snapshot(db).await;
    let before = db.requests();
    let err = tx.await.expect_err("the transaction must be canceled");
    let spent = db.requests() - before;
    assert_eq!((spent.get(Op::TransactWriteItems), spent.total()), (1, 1), "{spent}");
    assert_eq!(support::snapshot(db).await, snapshot, "a canceled transaction writes nothing");
    let reasons = err.cancellation_reasons();
    assert_eq!(reasons.len(), 3, "one reason per action: {err:?}");
    assert!(matches!(reasons[0].reason, CancelReason::None), "{err:?}");
    assert!(matches!(reasons[2].reason, CancelReason::None), "{err:?}");
    assert_eq!(err.failed_action().map(|r| r.action), Some(1), "{err:?}");
    // The helpers answer as for the single-item error of the failed action.
    let inner = condition_error(&err);
    assert_eq!(err.is_condition_failed(), inner.is_condition_failed(), "{err}");
    assert_eq!(err.current_item(), inner.current_item());
    assert!(err.to_string().contains("action 1 on"), "{err}");
    err
}

/// Wraps the failing action between two that are fine.
fn around<'a>(
    db: &'a Db<App>,
    failing: impl FnOnce(Transaction<'a, App>) -> Transaction<'a, App>,
) -> Transaction<'a, App> {
    failing(db.transaction().check_not_exists(Note::key("ann", 7))).delete(Note::key("zed", 1))
}

fn condition_error(err: &Error) -> &Error {
    match err.failed_action().map(|r| &r.reason) {
        Some(CancelReason::Condition(e)) => e,
        other => panic!("expected a failed condition, got {other:?}"),
    }
}

#[tokio::test]
async fn each_failed_guard_names_its_action_and_reason() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let ann = User::sample("ann");
    ann.create(&db).await?;
    let mut stale = order(1);
    stale.create(&db).await?;
    let mut fresh = stale.clone();
    fresh.total_cents = 1;
    fresh.replace(&db).await?; // stored at version 2, `stale` at 1
    let mut foreign = support::raw(&db, "USER#ann", "PROFILE").await.expect("ann");
    foreign.insert("pk".into(), s("USER#ghost"));
    foreign.insert("_type".into(), s("Intruder"));
    put_raw(&db, foreign).await;

    // create over an existing item: AlreadyExists with the stored item.
    let err = canceled_at_1(&db, around(&db, |tx| tx.create(&ann))).await;
    let inner = condition_error(&err);
    assert!(matches!(inner, Error::AlreadyExists { entity: "User", .. }), "{inner:?}");
    assert!(err.is_already_exists() && !err.is_not_found() && !err.is_version_conflict());
    assert_eq!(err.current::<User>().transpose()?, Some(ann.clone()), "carries the stored item");
    assert_eq!(err.cancellation_reasons()[1].entity, "User");
    assert_eq!(err.cancellation_reasons()[1].key, User::key("ann").to_string());

    // replace / update of a missing item: NotFound.
    let nobody = User::sample("nobody");
    let err = canceled_at_1(&db, around(&db, |tx| tx.replace(&nobody))).await;
    assert!(matches!(condition_error(&err), Error::NotFound { entity: "User", .. }), "{err:?}");
    assert!(err.is_not_found());
    let err = canceled_at_1(
        &db,
        around(&db, |tx| tx.update(User::key("nobody"), |u| u.add(User::LOGINS, 1))),
    )
    .await;
    assert!(err.is_not_found(), "{err:?}");

    // A put over an item of another entity type: WrongEntityType.
    let ghost = User::sample("ghost");
    let err = canceled_at_1(&db, around(&db, |tx| tx.put(&ghost))).await;
    match condition_error(&err) {
        Error::WrongEntityType { expected: "User", found, .. } => {
            assert_eq!(found.as_deref(), Some("Intruder"));
        }
        other => panic!("expected WrongEntityType, got {other:?}"),
    }
    let err = canceled_at_1(&db, around(&db, |tx| tx.delete(User::key("ghost")))).await;
    assert!(matches!(condition_error(&err), Error::WrongEntityType { .. }), "{err:?}");

    // Stale versions: VersionConflict with both versions, for every kind of action.
    let order_key = || Order::key("ann", 2024, 1);
    let conflicts = [
        canceled_at_1(&db, around(&db, |tx| tx.put(&mut stale))).await,
        canceled_at_1(&db, around(&db, |tx| tx.replace(&stale))).await,
        canceled_at_1(
            &db,
            around(&db, |tx| {
                tx.update(order_key(), |u| u.add(Order::TOTAL_CENTS, 1).expect_version(1))
            }),
        )
        .await,
        canceled_at_1(&db, around(&db, |tx| tx.delete_with(order_key(), |d| d.expect_version(1))))
            .await,
        canceled_at_1(&db, around(&db, |tx| tx.check_version(order_key(), 1))).await,
    ];
    for err in &conflicts {
        match condition_error(err) {
            Error::VersionConflict { entity: "Order", expected: 1, actual: Some(2), .. } => {}
            other => panic!("expected a version conflict 1 vs 2, got {other:?}"),
        }
        assert!(err.is_version_conflict(), "{err}");
    }
    assert_eq!(stale.version, 1, "a canceled transaction leaves the version alone");

    // User conditions: ConditionFailed with the stored item.
    let failed = [
        canceled_at_1(
            &db,
            around(&db, |tx| {
                tx.update(User::key("ann"), |u| {
                    u.set(User::NICK, "x").condition(User::ORG.eq("globex"))
                })
            }),
        )
        .await,
        canceled_at_1(&db, around(&db, |tx| tx.check(User::key("ann"), User::LOGINS.gt(5)))).await,
        canceled_at_1(
            &db,
            around(&db, |tx| tx.put_with(&ann, |p| p.condition(User::ORG.ne("acme")))),
        )
        .await,
        canceled_at_1(
            &db,
            around(&db, |tx| tx.delete_with(User::key("ann"), |d| d.condition(User::NAME.eq("x")))),
        )
        .await,
    ];
    for err in &failed {
        assert!(matches!(condition_error(err), Error::ConditionFailed { entity: "User", .. }));
        assert_eq!(err.current::<User>().transpose()?, Some(ann.clone()), "{err:?}");
    }

    // Checks of existence.
    let err = canceled_at_1(&db, around(&db, |tx| tx.check_exists(User::key("nobody")))).await;
    assert!(err.is_not_found(), "{err:?}");
    let err = canceled_at_1(&db, around(&db, |tx| tx.check_not_exists(User::key("ann")))).await;
    assert!(err.is_already_exists(), "{err:?}");
    assert_eq!(err.current::<User>().transpose()?, Some(ann));
    Ok(())
}

#[tokio::test]
async fn several_failed_actions_are_all_reported() -> Result<(), Error> {
    let db = support::db::<App>().await;
    User::sample("ann").create(&db).await?;
    let err = db
        .transaction()
        .create(&User::sample("ann"))
        .create(&note("ann", 1))
        .check_exists(User::key("nobody"))
        .await
        .expect_err("two actions fail");
    let kinds: Vec<(usize, bool, bool, bool)> = err
        .cancellation_reasons()
        .iter()
        .map(|r| {
            let e = r.reason.condition_error();
            (
                r.action,
                r.reason.is_failure(),
                e.is_some_and(Error::is_already_exists),
                e.is_some_and(Error::is_not_found),
            )
        })
        .collect();
    assert_eq!(kinds, [(0, true, true, false), (1, false, false, false), (2, true, false, true)]);
    assert_eq!(err.failed_action().map(|r| r.action), Some(0));
    assert!(err.to_string().contains("and 1 more"), "{err}");
    Ok(())
}

#[tokio::test]
async fn an_action_invalid_against_the_stored_item_is_a_validation_reason() -> Result<(), Error> {
    let db = support::db::<App>().await;
    User::sample("ann").create(&db).await?;
    // A `User` item whose `logins` is not a number: the typed `add` cannot apply.
    let mut item = raw(&db, "USER#ann", "PROFILE").await.expect("ann");
    item.insert("logins".into(), s("many"));
    put_raw(&db, item).await;
    let snapshot = support::snapshot(&db).await;

    let err = db
        .transaction()
        .create(&note("ann", 1))
        .update(User::key("ann"), |u| u.add(User::LOGINS, 1))
        .await
        .expect_err("ADD on a string");
    match &err {
        // DynamoDB and the embedded engine cancel the transaction and say which action.
        Error::TransactionCanceled { reasons, .. } => {
            assert_eq!(reasons.len(), 2, "{err:?}");
            assert!(matches!(reasons[0].reason, CancelReason::None), "{err:?}");
            assert!(matches!(reasons[1].reason, CancelReason::Validation { .. }), "{err:?}");
            assert_eq!(err.failed_action().map(|r| r.action), Some(1));
        }
        // DynamoDB Local rejects the whole request instead.
        Error::Sdk { operation: Op::TransactWriteItems, source } => {
            assert!(!local::is_embedded(), "{err:?}");
            assert_eq!(source.code(), Some("ValidationException"), "{err:?}");
        }
        other => panic!("expected a validation failure, got {other:?}"),
    }
    assert!(!err.is_condition_failed() && !err.is_throttled(), "{err}");
    assert_eq!(support::snapshot(&db).await, snapshot);
    Ok(())
}

#[tokio::test]
async fn limits_are_checked_before_sending() -> Result<(), Error> {
    let db = support::db::<App>().await;
    User::sample("ann").create(&db).await?;
    let snapshot = support::snapshot(&db).await;
    let notes: Vec<Note> = (0..=MAX_TRANSACTION_ACTIONS as u32).map(|i| note("ann", i)).collect();

    // 101 actions.
    let tx = notes.iter().fold(db.transaction(), |tx, n| tx.create(n));
    assert_eq!(tx.len(), 101);
    let err = crate::no_request!(db, tx.await.unwrap_err());
    assert!(
        matches!(
            err,
            Error::InvalidTransaction {
                problem: TransactionProblem::TooManyActions { actions: 101, max: 100 }
            }
        ),
        "{err:?}"
    );
    assert!(err.is_invalid_input());

    // Two actions on one item, even through two entity types.
    let err = crate::no_request!(
        db,
        db.transaction()
            .create(&notes[0])
            .update(User::key("ann"), |u| u.add(User::LOGINS, 1))
            .delete(Note::key("ann", 0))
            .await
            .unwrap_err()
    );
    match &err {
        Error::InvalidTransaction {
            problem: TransactionProblem::DuplicateItem { key, first: 0, second: 2 },
        } => assert_eq!(key, &Note::key("ann", 0).to_string()),
        other => panic!("expected a duplicate item, got {other:?}"),
    }
    assert!(err.to_string().contains("actions 0 and 2"), "{err}");
    let err = crate::no_request!(
        db,
        db.transaction()
            .check_exists(User::key("ann"))
            .delete(Note::key("ann", 5))
            .check_not_exists(NoteAlias::key("ann", 5))
            .await
            .unwrap_err()
    );
    assert!(
        matches!(
            err,
            Error::InvalidTransaction {
                problem: TransactionProblem::DuplicateItem { first: 1, second: 2, .. }
            }
        ),
        "{err:?}"
    );

    // More than 4 MB of items, each under 400 KB.
    let big = |id: usize, bytes: usize| {
        let mut u = User::sample(&format!("big{id}"));
        u.nick = Some("x".repeat(bytes));
        u
    };
    let bigs: Vec<User> = (0..11).map(|i| big(i, 390_000)).collect();
    let err = crate::no_request!(
        db,
        bigs.iter().fold(db.transaction(), |tx, u| tx.put(u)).await.unwrap_err()
    );
    match err {
        Error::InvalidTransaction { problem: TransactionProblem::TooLarge { size, max } } => {
            assert_eq!(max, 4 * 1024 * 1024);
            assert!(size > 11 * 390_000 && size < 11 * 391_000, "{size}");
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }

    // One action's own checks fail: the error names the action.
    let too_big = big(99, 410_000);
    let long_id = "x".repeat(2100);
    let invalid = [
        (2, db.transaction().create(&notes[0]).create(&notes[1]).put(&too_big)),
        (
            1,
            db.transaction()
                .create(&notes[0])
                .update(User::key(&long_id), |u| u.add(User::LOGINS, 1)),
        ),
        (0, db.transaction().update(User::key("ann"), |u| u)),
        (
            0,
            db.transaction().update(User::key("ann"), |u| u.set(User::NICK, "n").expect_version(1)),
        ),
        (1, db.transaction().check_exists(User::key("ann")).check_exists(User::key(&long_id))),
    ];
    for (index, tx) in invalid {
        let err = crate::no_request!(db, tx.await.unwrap_err());
        match &err {
            Error::InvalidAction { action, source } => {
                assert_eq!(*action, index, "{err}");
                assert!(source.is_invalid_input(), "{source:?}");
            }
            other => panic!("expected InvalidAction, got {other:?}"),
        }
        assert!(err.is_invalid_input());
    }

    // Tokens of 1 to 36 characters.
    for token in [String::new(), "t".repeat(37)] {
        let len = token.len();
        let err = crate::no_request!(
            db,
            db.transaction().delete(Note::key("ann", 1)).token(token).await.unwrap_err()
        );
        assert!(
            matches!(
                err,
                Error::InvalidTransaction {
                    problem: TransactionProblem::InvalidToken { len: l, max: 36 }
                } if l == len
            ),
            "{err:?}"
        );
    }

    // An empty transaction succeeds without a request.
    crate::no_request!(db, db.transaction().await)?;
    crate::no_request!(db, db.transaction().token("t").await)?;
    assert_eq!(support::snapshot(&db).await, snapshot, "nothing was written");

    // At the limits: 100 actions, and 10 items of 390 KB.
    let before = db.requests();
    notes[..100].iter().fold(db.transaction(), |tx, n| tx.create(n)).await?;
    bigs[..10].iter().fold(db.transaction(), |tx, u| tx.put(u)).await?;
    assert_eq!((db.requests() - before).get(Op::TransactWriteItems), 2);
    assert_eq!(support::snapshot(&db).await.len(), 1 + 100 + 10);
    Ok(())
}

#[tokio::test]
async fn versions_behave_as_in_single_item_writes() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut o = order(1);
    let sk = Order::key("ann", 2024, 1).sk().unwrap_or_default().to_owned();
    db.transaction().create(&mut o).await?;
    assert_eq!(o.version, 1);
    assert_eq!(raw(&db, "USER#ann", &sk).await.expect("stored")["version"], n(1));

    o.total_cents = 5;
    db.transaction().replace(&mut o).await?;
    assert_eq!(o.version, 2);
    db.transaction().put(&o).await?;
    assert_eq!(o.version, 2, "a shared reference is not updated");
    assert_eq!(Order::get(&db, "ann", 2024, 1u64).await?.map(|o| o.version), Some(3));

    // `o` is stale now: refused, and its version stays.
    let err = db.transaction().put(&mut o).await.unwrap_err();
    assert!(
        matches!(
            condition_error(&err),
            Error::VersionConflict { expected: 2, actual: Some(3), .. }
        ),
        "{err:?}"
    );
    assert_eq!(o.version, 2);

    // A canceled transaction leaves every version alone, even of the actions that were fine.
    let mut fresh = order(2);
    let err = db.transaction().create(&mut fresh).replace(&mut o).await.unwrap_err();
    assert_eq!(err.failed_action().map(|r| r.action), Some(1));
    assert_eq!((fresh.version, o.version), (0, 2));

    let stored = Order::get(&db, "ann", 2024, 1u64).await?.expect("order");
    db.transaction()
        .update(stored.key(), |u| u.set(Order::STATUS, Status::Shipped).expect_version(3))
        .create(&mut fresh)
        .await?;
    assert_eq!(fresh.version, 1);
    let updated = Order::get(&db, "ann", 2024, 1u64).await?.expect("order");
    assert_eq!((updated.status, updated.version), (Status::Shipped, 4));

    let err = db.transaction().delete_with(updated.key(), |d| d.expect_version(3)).await;
    assert!(err.is_err_and(|e| e.is_version_conflict()));
    db.transaction().delete_with(updated.key(), |d| d.expect_version(4)).await?;
    assert_eq!(Order::get(&db, "ann", 2024, 1u64).await?, None);
    Ok(())
}

/// Every transaction carries an idempotency token: when a response is lost after the write
/// and the SDK sends the request again, DynamoDB does not apply it twice. A retry that were
/// applied again would fail its `create` (the entry exists) or count the `add` twice (the
/// hazard `faults.rs` reproduces for a plain `ADD`).
#[tokio::test]
async fn a_transaction_is_applied_once_when_its_response_is_lost() -> Result<(), Error> {
    const COMMITS: u32 = 100;
    let clean = support::db::<DefaultTable>().await;
    Counter { name: "tx".into(), n: 0, log: vec![] }.create(&clean).await?;
    let harness = Harness::on(clean.clone(), Faults::seeded(10).drop_after(0.15)).await?;
    let db = harness.db();
    for i in 0..COMMITS {
        db.transaction()
            .update(Counter::key("tx"), |u| {
                u.add(Counter::N, 1).append(Counter::LOG, [i.to_string()])
            })
            .create(&Entry { counter: "tx".into(), seq: i })
            .await?;
    }
    let counter = Counter::get(&clean, "tx").await?.expect("counter");
    let lost = harness.proxy().counts().dropped_after;
    println!("transactions x{COMMITS}, {lost} responses lost: n = {}", counter.n);
    assert!(lost >= 10, "faults were injected: {lost}");
    assert_eq!(counter.n, i64::from(COMMITS), "each commit counted once");
    let expected: Vec<String> = (0..COMMITS).map(|i| i.to_string()).collect();
    assert_eq!(counter.log, expected, "each append once, in order");
    assert_eq!(support::snapshot(&clean).await.len(), 1 + COMMITS as usize);
    assert_eq!(db.requests().get(Op::TransactWriteItems), u64::from(COMMITS), "logical requests");
    Ok(())
}

#[tokio::test]
async fn a_token_of_your_own_makes_a_retried_transaction_apply_once() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    Counter { name: "paid".into(), n: 0, log: vec![] }.create(&db).await?;
    // Unique per run: the server remembers tokens for 10 minutes.
    let token = format!("payment-{}", db.table_name().rsplit('-').next().unwrap_or_default());
    let pay = |amount: i64| {
        db.transaction()
            .update(Counter::key("paid"), |u| u.add(Counter::N, amount))
            .token(token.clone())
    };
    pay(5).await?;
    pay(5).await?; // the application retries: applied once
    assert_eq!(Counter::get(&db, "paid").await?.map(|c| c.n), Some(5));
    assert_eq!(db.requests().get(Op::TransactWriteItems), 2);

    // The same token for different actions.
    let err = pay(7).await.unwrap_err();
    match &err {
        Error::IdempotentParameterMismatch { token: t, .. } => assert_eq!(t, &token),
        other => panic!("expected IdempotentParameterMismatch, got {other:?}"),
    }
    assert_eq!(Counter::get(&db, "paid").await?.map(|c| c.n), Some(5));

    // A fresh token is a new transaction.
    db.transaction().update(Counter::key("paid"), |u| u.add(Counter::N, 5)).await?;
    assert_eq!(Counter::get(&db, "paid").await?.map(|c| c.n), Some(10));
    Ok(())
}

#[tokio::test]
async fn a_transactional_get_reads_several_entity_types_in_one_request() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let ann = User::sample("ann");
    let mut o = order(1);
    let ann_note = note("ann", 1);
    db.transaction().create(&ann).create(&mut o).create(&ann_note).await?;

    let before = db.requests();
    let mut read = db.transact_get();
    let user = read.get(User::key("ann"));
    let first = read.get(Order::key("ann", 2024, 1));
    let missing = read.get(Order::key("ann", 2024, 2));
    let again = read.get(User::key("ann"));
    let as_alias = read.get(NoteAlias::key("ann", 1));
    let as_note = read.get(Note::key("ann", 1));
    assert_eq!(read.len(), 4, "a key added twice is read once");
    let out = read.await?;
    let spent = db.requests() - before;
    assert_eq!((spent.get(Op::TransactGetItems), spent.total()), (1, 1), "{spent}");

    assert_eq!(out.get(&user)?, Some(ann.clone()));
    assert_eq!(out.get(&again)?, Some(ann));
    assert_eq!(out.get(&first)?, Some(o));
    assert_eq!(out.get(&missing)?, None);
    assert_eq!(out.get(&as_note)?, Some(ann_note));
    let err = out.get(&as_alias).unwrap_err();
    assert!(matches!(err, Error::WrongEntityType { expected: "NoteAlias", .. }), "{err:?}");
    assert_eq!(out.items().len(), 4);

    // A slot belongs to its own read.
    let mut other = db.transact_get();
    let foreign = other.get(User::key("ann"));
    let err = out.get(&foreign).unwrap_err();
    assert!(
        matches!(err, Error::InvalidTransaction { problem: TransactionProblem::ForeignSlot }),
        "{err:?}"
    );

    // Checked before sending: the number of keys, each key; no keys, no request.
    let mut read = db.transact_get();
    for i in 0..=MAX_TRANSACTION_ACTIONS as u32 {
        read.get(Note::key("ann", i));
    }
    let err = crate::no_request!(db, read.await.unwrap_err());
    assert!(
        matches!(
            err,
            Error::InvalidTransaction {
                problem: TransactionProblem::TooManyActions { actions: 101, .. }
            }
        ),
        "{err:?}"
    );
    let mut read = db.transact_get();
    read.get(User::key("ann"));
    read.get(User::key("x".repeat(2100)));
    let err = crate::no_request!(db, read.await.unwrap_err());
    assert!(matches!(err, Error::InvalidAction { action: 1, .. }), "{err:?}");
    let out = crate::no_request!(db, db.transact_get().await)?;
    assert!(out.items().is_empty());
    Ok(())
}
