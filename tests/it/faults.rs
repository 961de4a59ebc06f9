//! Faults injected below the library, through the fault proxy of `ddb_model::testing` (the
//! harness users get): a request fails before it reaches the engine, or is applied and its
//! response lost (so the SDK retries a write the service already applied).

use ddb_model::DefaultTable;
use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::prelude::*;
use ddb_model::testing::{Faults, Harness};

use crate::model::{App, Counter, Order, Status, User};
use crate::support::{self, s};

const WRITES: i64 = 200;

/// The hazard DESIGN.md describes, reproduced: a plain `ADD` whose response is lost is applied
/// again by the SDK's retry.
#[tokio::test]
async fn a_plain_add_is_applied_twice_when_its_response_is_lost() -> Result<(), Error> {
    let harness = Harness::<DefaultTable>::start(Faults::seeded(20).drop_after(0.1)).await?;
    let clean = harness.direct();
    Counter { name: "raw".into(), n: 0, log: vec![] }.create(clean).await?;
    let client = harness.proxy().client();
    for _ in 0..WRITES {
        let add = client
            .update_item()
            .table_name(clean.table_name())
            .key("pk", s("COUNTER#raw"))
            .key("sk", s("COUNTER"))
            .update_expression("ADD #n :one")
            .expression_attribute_names("#n", "n")
            .expression_attribute_values(":one", AttributeValue::N("1".into()));
        // Retried until it succeeds: by the SDK, then by hand when its 3 attempts were lost.
        while add.clone().send().await.is_err() {}
    }
    let counter = Counter::get(clean, "raw").await?.expect("counter");
    let lost = harness.proxy().counts().dropped_after;
    println!("plain ADD x{WRITES}, {lost} responses lost: n = {}", counter.n);
    assert!(lost >= 10, "faults were injected: {lost}");
    assert_eq!(counter.n, WRITES + lost as i64, "every lost response added once more");
    Ok(())
}

/// ddb-model sends `add` / `append` as a transaction with an idempotency token: the retry of a
/// request whose response was lost is not applied again.
#[tokio::test]
async fn add_and_append_are_applied_exactly_once_under_lost_responses() -> Result<(), Error> {
    let harness = Harness::<DefaultTable>::start(Faults::seeded(20).drop_after(0.1)).await?;
    let (db, clean) = (harness.db(), harness.direct());
    Counter { name: "safe".into(), n: 0, log: vec![] }.create(clean).await?;
    for i in 0..WRITES {
        Counter::update(db, "safe")
            .add(Counter::N, 1)
            .append(Counter::LOG, [i.to_string()])
            .no_return()
            .await?;
    }
    let counter = Counter::get(clean, "safe").await?.expect("counter");
    let lost = harness.proxy().counts().dropped_after;
    println!("ddb-model add x{WRITES}, {lost} responses lost: n = {}", counter.n);
    assert!(lost >= 10, "faults were injected: {lost}");
    assert_eq!(counter.n, WRITES);
    let expected: Vec<String> = (0..WRITES).map(|i| i.to_string()).collect();
    assert_eq!(counter.log, expected, "each append once, in order");
    Ok(())
}

/// A create whose response is lost is retried, and the retry finds the item the first attempt
/// stored: that is this write's own item, so the create succeeds instead of reporting
/// `AlreadyExists`. Versioned writes likewise end at the right version.
#[tokio::test]
async fn conditional_writes_recognise_their_own_applied_write() -> Result<(), Error> {
    let harness = Harness::<App>::start(Faults::seeded(4).drop_after(0.25)).await?;
    let (db, clean) = (harness.db(), harness.direct());
    for i in 0..20 {
        User::sample(&format!("u{i}")).create(db).await?;
    }
    let mut order = Order {
        user: "u1".into(),
        year: 2024,
        seq: 1,
        status: Status::Open,
        total_cents: 0,
        version: 0,
    };
    order.create(db).await?;
    for cents in 1..=20 {
        order.total_cents = cents;
        order.replace(db).await?;
    }
    let lost = harness.proxy().counts().dropped_after;
    assert!(lost >= 10, "faults were injected: {lost}");
    assert_eq!(support::snapshot(clean).await.len(), 21);
    let stored = Order::get(clean, "u1", 2024, 1u64).await?.expect("order");
    assert_eq!((stored.total_cents, stored.version), (20, 21));
    assert_eq!(order, stored);
    Ok(())
}

/// Requests that fail before reaching the service are retried by the SDK; nothing is lost or
/// duplicated, and the request counter counts logical requests, not attempts.
#[tokio::test]
async fn failures_before_sending_are_retried() -> Result<(), Error> {
    let harness = Harness::<DefaultTable>::start(Faults::seeded(3).drop_before(0.3)).await?;
    let (db, clean) = (harness.db(), harness.direct());
    Counter { name: "c".into(), n: 0, log: vec![] }.create(db).await?;
    for _ in 0..30 {
        Counter::update(db, "c").add(Counter::N, 1).no_return().await?;
    }
    let counts = harness.proxy().counts();
    assert!(counts.dropped_before >= 10, "{counts}");
    assert_eq!(Counter::get(clean, "c").await?.map(|c| c.n), Some(30));
    assert_eq!(db.requests().total(), 31, "logical requests");
    assert_eq!(db.requests().total_attempts(), counts.requests, "every attempt counted");
    Ok(())
}
