//! The fault harness (`ddb_model::testing`, issue 29 item 4): each kind of fault is seen by
//! the library as the service's failure would be (the typed error, the SDK's or the library's
//! retries, counted by the request counter and the proxy), and `Harness::run` catches an
//! invariant that a non-idempotent retry breaks, naming the seed and what was injected;
//! batches left unprocessed are sent again, and a cut fails every request after it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use ddb_model::error::{CancelReason, ThrottleLimit, ThrottledAccess};
use ddb_model::prelude::*;
use ddb_model::testing::{CancelCode, Faults, Harness};
use ddb_model::{DefaultTable, Op};

use crate::model::{App, Counter, User};

/// Throttled requests: the SDK tries each 3 times, then the error names the service's reason,
/// for the table or the index, reads or writes; nothing was written.
#[tokio::test]
async fn throttling_is_typed_with_the_services_reasons() -> Result<(), Error> {
    let faults = Faults::seeded(3).throttle(1.0, ThrottleLimit::KeyRange);
    let harness = Harness::<App>::start(faults).await?;
    let (db, direct) = (harness.db(), harness.direct());
    let err = User::sample("ann").put(db).await.unwrap_err();
    assert!(matches!(&err, Error::Throttled { operation: Op::PutItem, .. }), "{err:?}");
    assert!(err.is_hot_key() && err.is_transient() && !err.maybe_applied(), "{err:?}");
    let reason = &err.throttle_reasons()[0];
    assert_eq!((reason.access, reason.on_index), (Some(ThrottledAccess::Write), false));
    assert!(reason.resource.as_deref().is_some_and(|r| r.ends_with(direct.table_name())));
    assert_eq!((db.requests().get(Op::PutItem), db.requests().attempts(Op::PutItem)), (1, 3));
    assert_eq!(harness.proxy().counts().throttled, 3);
    assert_eq!(User::get(direct, "ann").await?, None, "a throttled put writes nothing");

    harness.proxy().set_faults(Faults::seeded(3).throttle(1.0, ThrottleLimit::Provisioned));
    let err = User::query_gsi1(db, "acme").all().await.unwrap_err();
    assert!(matches!(&err, Error::Throttled { operation: Op::Query, .. }), "{err:?}");
    let reason = &err.throttle_reasons()[0];
    assert_eq!(reason.limit, ThrottleLimit::Provisioned);
    assert_eq!((reason.access, reason.on_index), (Some(ThrottledAccess::Read), true));
    assert!(reason.resource.as_deref().is_some_and(|r| r.ends_with("/index/gsi1")), "{reason}");
    assert_eq!(harness.proxy().counts().throttled, 6);
    Ok(())
}

/// Some requests throttled, some answered 500: the SDK's retries hide most of them, and every
/// attempt it made reached the proxy (the request counter and the proxy agree).
#[tokio::test]
async fn retried_faults_are_counted_as_attempts() -> Result<(), Error> {
    let faults = Faults::seeded(11).throttle(0.2, ThrottleLimit::Provisioned).error_500(0.2);
    let harness = Harness::<DefaultTable>::start(Faults::seeded(0)).await?;
    Counter { name: "c".into(), n: 7, log: vec![] }.create(harness.direct()).await?;
    harness.proxy().set_faults(faults);
    let mut ok = 0;
    for _ in 0..40 {
        if let Ok(Some(c)) = Counter::get(harness.db(), "c").await {
            assert_eq!(c.n, 7);
            ok += 1;
        }
    }
    let counts = harness.proxy().counts();
    let requests = harness.db().requests();
    println!("{counts}; {requests}");
    assert!(counts.throttled >= 5 && counts.errors_500 >= 5, "{counts}");
    assert_eq!(requests.get(Op::GetItem), 40);
    assert_eq!(requests.attempts(Op::GetItem), counts.requests);
    assert_eq!(counts.requests, counts.forwarded + counts.faults());
    assert!(ok >= 35, "{ok} of 40 reads succeeded within the SDK's 3 attempts");
    Ok(())
}

/// Canceled transactions: one reason per action, the injected code on one of them, typed as
/// a conflict or a throttled action; nothing is written. Other requests pass.
#[tokio::test]
async fn canceled_transactions_carry_the_services_reason_codes() -> Result<(), Error> {
    let faults = Faults::seeded(5).cancel(1.0, CancelCode::TransactionConflict);
    let harness = Harness::<App>::start(faults).await?;
    let (db, direct) = (harness.db(), harness.direct());
    User::sample("ann").create(db).await?; // not a transaction: forwarded
    let err = db
        .transaction()
        .create(&User::sample("bob"))
        .create(&User::sample("cid"))
        .update(User::key("ann"), |u| u.add(User::LOGINS, 1))
        .await
        .unwrap_err();
    assert!(err.is_transaction_conflict() && err.is_transient(), "{err:?}");
    let reasons = err.cancellation_reasons();
    assert_eq!(reasons.len(), 3, "{err:?}");
    assert_eq!(reasons.iter().filter(|r| r.reason.is_failure()).count(), 1, "{err:?}");
    assert_eq!(db.requests().get(Op::TransactWriteItems), 1);
    assert_eq!(harness.proxy().counts().canceled, 1);
    assert_eq!(User::get(direct, "bob").await?, None, "a canceled transaction writes nothing");

    harness.proxy().set_faults(Faults::seeded(5).cancel(1.0, CancelCode::ThrottlingError));
    let err = db.transaction().create(&User::sample("bob")).await.unwrap_err();
    assert!(
        matches!(&err.cancellation_reasons()[0].reason, CancelReason::Throttled { code, .. } if code == "ThrottlingError"),
        "{err:?}"
    );
    assert_eq!(User::get(direct, "ann").await?.map(|u| u.logins), Some(0));
    Ok(())
}

/// Latency delays every request by at least the set time (a lower bound: the proxy sleeps
/// before forwarding).
#[tokio::test]
async fn latency_delays_every_request() -> Result<(), Error> {
    let faults = Faults::seeded(0).latency(Duration::from_millis(30));
    let harness = Harness::<DefaultTable>::start(faults).await?;
    let started = Instant::now();
    for _ in 0..3 {
        assert!(Counter::get(harness.db(), "none").await?.is_none());
    }
    assert!(started.elapsed() >= Duration::from_millis(90), "{:?}", started.elapsed());
    assert_eq!(harness.proxy().counts().forwarded, 3);
    Ok(())
}

/// `at_least_once()` adds are not idempotent: a response lost after the write makes the SDK
/// send the add again. The harness runs them concurrently under lost responses and the
/// invariant (the counter equals the adds that returned, at most plus those that failed)
/// fails, with the seed and the injected faults in the report. The library's default add,
/// marked, keeps the same invariant under the same faults.
#[tokio::test]
async fn the_harness_catches_a_retry_that_applies_twice() -> Result<(), Error> {
    let faults = Faults::seeded(29).drop_after(0.3);
    for at_least_once in [true, false] {
        let harness = Harness::<DefaultTable>::start(faults.clone()).await?;
        Counter { name: "n".into(), n: 0, log: vec![] }.create(harness.direct()).await?;
        let (ok, failed) = (&AtomicU64::new(0), &AtomicU64::new(0));
        let result = harness
            .run(
                4,
                6,
                |db, _| async move {
                    let add = Counter::update(&db, "n").add(Counter::N, 1);
                    let add = if at_least_once { add.at_least_once() } else { add };
                    let r = add.await.map(drop);
                    match &r {
                        Ok(()) => ok.fetch_add(1, Ordering::SeqCst),
                        Err(_) => failed.fetch_add(1, Ordering::SeqCst),
                    };
                    r
                },
                |direct| async move {
                    let stored = Counter::get(&direct, "n").await.map_err(|e| e.to_string())?;
                    let n = stored.map_or(0, |c| c.n) as u64;
                    let (ok, failed) = (ok.load(Ordering::SeqCst), failed.load(Ordering::SeqCst));
                    if n < ok || n > ok + failed {
                        return Err(format!("counter {n}, {ok} adds returned, {failed} failed"));
                    }
                    Ok::<_, String>(())
                },
            )
            .await;
        match (at_least_once, result) {
            (true, Err(failed)) => {
                let text = failed.to_string();
                println!("{text}");
                assert_eq!(failed.report.seed, 29);
                assert!(failed.report.injected.dropped_after > 0, "{text}");
                assert!(text.contains("seed 29") && text.contains("dropped after"), "{text}");
            }
            (false, Ok(report)) => {
                assert_eq!(report.ok + report.failed, 24);
                assert!(report.injected.dropped_after > 0, "{report}");
                assert_eq!(report.requests.total_attempts(), report.injected.requests);
            }
            (at_least_once, other) => {
                panic!(
                    "at_least_once {at_least_once}: unexpected {:?}",
                    other.map(|r| r.to_string())
                )
            }
        }
    }
    Ok(())
}

/// Unprocessed batches: a `BatchGetItem` or `BatchWriteItem` answered with every key or item
/// unprocessed is sent again by the library until all are done; other requests pass.
#[tokio::test]
async fn unprocessed_batches_are_sent_again() -> Result<(), Error> {
    let harness = Harness::<App>::start(Faults::seeded(8).unprocessed(0.6)).await?;
    let (db, direct) = (harness.db(), harness.direct());
    let users: Vec<User> = (0..30).map(|i| User::sample(&format!("u{i:02}"))).collect();
    db.batch_put(&users).await?;
    let keys: Vec<_> = users.iter().map(|u| User::key(&u.id)).collect();
    let read: Vec<Option<User>> = db.batch_get(keys).await?;
    assert_eq!(read.into_iter().flatten().collect::<Vec<_>>(), users);
    User::sample("solo").put(db).await?;
    let (counts, requests) = (harness.proxy().counts(), db.requests());
    assert!(counts.unprocessed >= 2, "{counts}");
    let batches = requests.get(Op::BatchWriteItem) + requests.get(Op::BatchGetItem);
    assert_eq!(batches, 3 + counts.unprocessed, "2 chunks of writes, 1 of reads: {counts}");
    assert_eq!(requests.get(Op::PutItem), 1);
    assert_eq!(direct.scan::<User>().all().await?.len(), 31);
    Ok(())
}

/// A cut: every request from the proxy's `n`-th on fails before the engine, the SDK's
/// retries included, whatever the rates; counted from the proxy's start, also when set later.
#[tokio::test]
async fn a_cut_fails_every_request_from_the_nth_on() -> Result<(), Error> {
    let harness = Harness::<DefaultTable>::start(Faults::seeded(1).fail_from(3)).await?;
    let (db, direct) = (harness.db(), harness.direct());
    let mut stored = Vec::new();
    for i in 0..5 {
        let counter = Counter { name: format!("c{i}"), n: i, log: vec![] };
        if counter.create(db).await.is_ok() {
            stored.push(i);
        }
    }
    assert_eq!(stored, [0, 1, 2]);
    for i in 0..5 {
        let found = Counter::get(direct, format!("c{i}")).await?.is_some();
        assert_eq!(found, i < 3, "c{i}");
    }
    let counts = harness.proxy().counts();
    assert_eq!((counts.forwarded, counts.dropped_before), (3, 2 * 3), "3 attempts each: {counts}");
    assert_eq!(db.requests().total_attempts(), counts.requests);

    // Lifted, then set again below the proxy's count: the next request fails at once.
    harness.proxy().set_faults(Faults::seeded(1));
    Counter { name: "c9".into(), n: 9, log: vec![] }.create(db).await?;
    harness.proxy().set_faults(Faults::seeded(1).fail_from(10));
    let err = Counter::get(db, "c9").await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err}");
    assert_eq!(harness.proxy().counts().dropped_before, 2 * 3 + 3);
    Ok(())
}
