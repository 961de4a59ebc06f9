//! Transport failures (issue 13, items 5, 6 and 9), through the fault-injecting proxy
//! (`ddb_model::testing`): typed errors, token-carrying retries, counters that return the caller's own
//! number, and request accounting of calls and HTTP attempts.

use ddb_model::prelude::*;
use ddb_model::{DefaultTable, Op, error::TransportKind};

use crate::model::Counter;
use ddb_model::testing::{Faults, Harness, Proxy};

/// The proxy forwards requests on keep-alive connections one by one, and injects each kind of
/// fault at about its rate (seeded, so the run is reproducible).
#[tokio::test]
async fn the_proxy_forwards_requests_and_injects_faults() -> Result<(), Error> {
    let harness = Harness::<DefaultTable>::start(Faults::default()).await?;
    let (proxy, db, direct) = (harness.proxy(), harness.db().clone(), harness.direct().clone());
    for i in 0..20 {
        Counter { name: format!("c{i}"), n: i, log: vec![] }.create(&db).await?;
    }
    let counts = proxy.counts();
    assert_eq!((counts.requests, counts.forwarded, counts.faults()), (20, 20, 0));
    for i in 0..20 {
        assert_eq!(Counter::get(&direct, format!("c{i}")).await?.map(|c| c.n), Some(i));
    }

    proxy.set_faults(Faults::seeded(7).drop_before(0.1).drop_after(0.1).error_500(0.1));
    let mut failed = 0;
    for _ in 0..100 {
        // Reads are safe to retry: the SDK's retries hide most faults.
        if Counter::get(&db, "c1").await.is_err() {
            failed += 1;
        }
    }
    let counts = proxy.counts();
    println!("proxy: {counts:?}, {failed} reads failed after the SDK's retries");
    assert!(counts.dropped_before >= 5 && counts.dropped_after >= 5 && counts.errors_500 >= 5);
    assert_eq!(
        counts.requests,
        counts.forwarded + counts.faults(),
        "every request is forwarded or faulted"
    );
    Ok(())
}

/// A held request is parked until released, then lands even though its client gave up.
#[tokio::test]
async fn a_held_request_lands_after_its_client_gave_up() -> Result<(), Error> {
    let direct = crate::support::db::<DefaultTable>().await;
    let proxy = Proxy::start(Faults::default()).await?;
    let db = proxy.db(&direct);
    let hold = proxy.hold(Some("PutItem"), "late-writer", 1);
    let write = tokio::spawn(async move {
        Counter { name: "late-writer".into(), n: 1, log: vec![] }.create(&db).await
    });
    assert!(hold.wait_held(1, std::time::Duration::from_secs(10)).await, "the put was held");
    write.abort(); // the writer is killed while its request is in flight
    assert!(Counter::get(&direct, "late-writer").await?.is_none(), "not applied while held");
    hold.release();
    let mut landed = false;
    for _ in 0..100 {
        if Counter::get(&direct, "late-writer").await?.is_some() {
            landed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(landed, "the released request was forwarded");
    assert_eq!(proxy.counts().held, 1);
    Ok(())
}

/// Item 5: 50 concurrent `add(1)` on one counter return exactly 1..=50, each the caller's own
/// number; the final value is 50. Each returning `add` is two `UpdateItem` calls (the marked
/// update, the marker removal), and without faults every call is one HTTP attempt.
#[tokio::test]
async fn fifty_concurrent_adds_return_each_number_once() -> Result<(), Error> {
    let db = crate::support::db::<DefaultTable>().await;
    Counter { name: "seq".into(), n: 0, log: vec![] }.create(&db).await?;
    db.reset_requests();
    let adds = (0..50).map(|i| {
        let db = db.clone();
        async move {
            Counter::update(&db, "seq")
                .add(Counter::N, 1)
                .append(Counter::LOG, [i.to_string()])
                .await
        }
    });
    let results = futures_util::future::try_join_all(adds).await?;
    check_own_results(&results, 50);
    let stored = Counter::get(&db, "seq").await?.expect("counter");
    assert_eq!(stored.n, 50);
    assert_eq!(stored.log.len(), 50);
    let raw = crate::support::raw(&db, "COUNTER#seq", "COUNTER").await.expect("raw counter");
    assert!(!raw.keys().any(|k| k.starts_with("_ddbm.")), "markers removed: {raw:?}");

    let requests = db.requests();
    println!("50 concurrent returning adds: {requests}");
    assert_eq!(requests.get(Op::UpdateItem), 100, "the update and the marker removal");
    assert_eq!(requests.get(Op::GetItem), 1, "no read after a write");
    assert_eq!(requests.total_attempts(), requests.total(), "no retries without faults");
    Ok(())
}

/// Each result is its caller's own: the numbers are exactly 1..=n, and each caller's log
/// ends with its own entry and is as long as its number.
fn check_own_results(results: &[Counter], n: i64) {
    let mut numbers: Vec<i64> = results.iter().map(|c| c.n).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=n).collect::<Vec<_>>(), "each caller got its own number");
    for (i, c) in results.iter().enumerate() {
        assert_eq!(c.log.len() as i64, c.n, "the log as this add left it: {c:?}");
        assert_eq!(c.log.last(), Some(&i.to_string()), "ends with this caller's entry");
    }
}

/// Item 5 through faults: responses lost after the write was applied (the retry finds the
/// marker and returns the applied write's own state), connections dropped before forwarding,
/// 500s. The numbers are still exactly 1..=50, the final value 50, no marker left.
#[tokio::test]
async fn fifty_concurrent_adds_through_faults_return_each_number_once() -> Result<(), Error> {
    let faults = Faults::seeded(13).drop_before(0.05).drop_after(0.15).error_500(0.05);
    let harness = Harness::<DefaultTable>::start(Faults::default()).await?;
    let (proxy, db, direct) = (harness.proxy(), harness.db().clone(), harness.direct().clone());
    Counter { name: "seq".into(), n: 0, log: vec![] }.create(&direct).await?;
    proxy.set_faults(faults);
    let adds = (0..50).map(|i| {
        let db = db.clone();
        async move {
            Counter::update(&db, "seq")
                .add(Counter::N, 1)
                .append(Counter::LOG, [i.to_string()])
                .await
        }
    });
    let results = futures_util::future::try_join_all(adds).await?;
    let counts = proxy.counts();
    let requests = db.requests();
    println!("50 concurrent adds through faults: {counts:?}; {requests}");
    assert!(counts.dropped_after >= 5, "responses were lost after the write: {counts:?}");
    check_own_results(&results, 50);
    let stored = Counter::get(&direct, "seq").await?.expect("counter");
    assert_eq!(stored.n, 50, "no add applied twice");
    let raw = crate::support::raw(&direct, "COUNTER#seq", "COUNTER").await.expect("raw");
    assert!(!raw.keys().any(|k| k.starts_with("_ddbm.")), "markers removed: {raw:?}");
    // Item 9: every HTTP attempt the SDK made reached the proxy, and there were retries.
    assert_eq!(requests.total_attempts(), counts.requests);
    assert!(requests.total_attempts() > requests.total(), "{requests}");
    assert!(requests.get(Op::UpdateItem) >= 100);
    Ok(())
}

/// `at_least_once()`: one plain `UpdateItem` per add. Without faults the numbers are exactly
/// 1..=50 in 50 requests; through lost responses a retry may apply an add again (a number is
/// skipped), but no two callers ever get the same number and each gets its own write's.
#[tokio::test]
async fn at_least_once_adds_never_hand_out_a_number_twice() -> Result<(), Error> {
    let db = crate::support::db::<DefaultTable>().await;
    Counter { name: "seq".into(), n: 0, log: vec![] }.create(&db).await?;
    db.reset_requests();
    let adds = (0..50).map(|_| {
        let db = db.clone();
        async move { Counter::update(&db, "seq").add(Counter::N, 1).at_least_once().await }
    });
    let mut numbers: Vec<i64> =
        futures_util::future::try_join_all(adds).await?.iter().map(|c| c.n).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=50).collect::<Vec<_>>());
    assert_eq!(db.requests().get(Op::UpdateItem), 50, "one request each");

    let faults = Faults::seeded(21).drop_before(0.05).drop_after(0.15).error_500(0.05);
    let harness = Harness::<DefaultTable>::start(Faults::default()).await?;
    let (proxy, db, direct) = (harness.proxy(), harness.db().clone(), harness.direct().clone());
    Counter { name: "seq".into(), n: 0, log: vec![] }.create(&direct).await?;
    proxy.set_faults(faults);
    let adds = (0..50).map(|_| {
        let db = db.clone();
        async move { Counter::update(&db, "seq").add(Counter::N, 1).at_least_once().await }
    });
    // A call whose attempts all failed is a transport error that says the add may have
    // been applied (nothing retries it beyond the SDK's attempts: that would not be safe).
    let mut numbers = Vec::new();
    let mut failed = 0;
    for result in futures_util::future::join_all(adds).await {
        match result {
            Ok(c) => numbers.push(c.n),
            Err(e) => {
                assert!(e.is_transient() && e.maybe_applied(), "{e:?}");
                failed += 1;
            }
        }
    }
    let answered = numbers.len();
    numbers.sort_unstable();
    numbers.dedup();
    assert_eq!(numbers.len(), answered, "no number handed out twice");
    let stored = Counter::get(&direct, "seq").await?.expect("counter").n;
    assert!(numbers.iter().all(|&n| n <= stored), "{numbers:?} / {stored}");
    assert!(stored >= answered as i64, "every answered add applied: {stored}");
    assert!(answered >= 40, "most calls answered: {answered}, {failed} failed");
    let counts = proxy.counts();
    println!("50 at-least-once adds through faults: stored {stored}, {failed} failed, {counts:?}");
    assert!(counts.dropped_after >= 5, "responses were lost after the write: {counts:?}");
    let raw = crate::support::raw(&direct, "COUNTER#seq", "COUNTER").await.expect("raw");
    assert!(!raw.keys().any(|k| k.starts_with("_ddbm.")), "no markers: {raw:?}");
    Ok(())
}

/// Item 5 with optimistic locking and lost responses: each returning `add` with
/// `expect_version` returns the version and total its own write stored, although a retry of
/// an applied write fails the version check (the marker says it was this write).
#[tokio::test]
async fn returning_adds_on_a_versioned_entity_return_their_own_version() -> Result<(), Error> {
    use crate::model::{App, Order, Status};
    let harness = Harness::<App>::start(Faults::default()).await?;
    let (proxy, db, direct) = (harness.proxy(), harness.db().clone(), harness.direct().clone());
    let mut order = Order {
        user: "u".into(),
        year: 2024,
        seq: 1,
        status: Status::Open,
        total_cents: 0,
        version: 0,
    };
    order.create(&direct).await?;
    proxy.set_faults(Faults::seeded(5).drop_after(0.3));
    for i in 1..=20 {
        let updated = Order::update(&db, "u", 2024, 1u64)
            .add(Order::TOTAL_CENTS, 10)
            .set(Order::STATUS, if i % 2 == 0 { Status::Open } else { Status::Shipped })
            .expect_version(order.version)
            .await?;
        assert_eq!((updated.total_cents, updated.version), (10 * i, order.version + 1));
        assert_eq!(Order::get(&direct, "u", 2024, 1u64).await?.as_ref(), Some(&updated));
        order = updated;
    }
    let counts = proxy.counts();
    println!("20 versioned adds: {counts:?}; {}", db.requests());
    assert!(counts.dropped_after >= 5, "{counts:?}");
    Ok(())
}

fn assert_typed(e: &Error) {
    let text = e.to_string();
    assert!(!text.contains("unhandled error"), "displays as unhandled: {text}");
    assert!(!matches!(e, Error::Sdk { .. }), "an untyped SDK error: {text}");
}

/// Item 6: when the SDK's attempts run out, the error is typed, says how it failed, how many
/// attempts were made and whether a write may have been applied; nothing displays as
/// "unhandled error".
#[tokio::test]
async fn transport_failures_are_typed() -> Result<(), Error> {
    let direct = crate::support::db::<DefaultTable>().await;
    Counter { name: "c".into(), n: 0, log: vec![] }.create(&direct).await?;
    let counter = Counter { name: "d".into(), n: 1, log: vec![] };

    // Nothing listens: the request provably never left.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let refused = Proxy::start_for(&format!("http://{closed}"), Faults::default()).await?;
    let client = ddb_model::local::client_for(&format!("http://{closed}"));
    drop(refused);
    let db: Db = Db::with_table_name(client, direct.table_name());
    let e = counter.put(&db).await.unwrap_err();
    println!("refused: {e}");
    assert_typed(&e);
    assert!(
        matches!(e, Error::Transport { kind: TransportKind::Connect, maybe_applied: false, .. }),
        "{e:?}"
    );
    assert!(e.is_transient() && !e.maybe_applied());
    assert!(e.to_string().contains("the write was not applied"), "{e}");

    // The connection is closed after the request was sent: it may have been applied.
    let proxy = Proxy::start(Faults::default().drop_before(1.0)).await?;
    let db = proxy.db(&direct);
    let e = counter.put(&db).await.unwrap_err();
    println!("dropped: {e}");
    assert_typed(&e);
    assert!(matches!(e, Error::Transport { kind: TransportKind::Dispatch, attempts: 3, .. }));
    assert!(e.is_transient() && e.maybe_applied());
    assert!(e.to_string().contains("may have been applied"), "{e}");
    let e = Counter::get(&db, "c").await.unwrap_err();
    assert_typed(&e);
    assert!(!e.maybe_applied(), "a read applies nothing: {e}");
    assert_eq!(Counter::get(&direct, "d").await?, None, "the proxy forwarded nothing");

    // Answered with 500.
    proxy.set_faults(Faults::default().error_500(1.0));
    let e = counter.put(&db).await.unwrap_err();
    println!("500: {e}");
    assert_typed(&e);
    assert!(matches!(e, Error::Transport { kind: TransportKind::Server { status: 500 }, .. }));
    assert!(e.to_string().contains("HTTP 500"), "{e}");
    Ok(())
}

/// Item 6: a write that carries an idempotency token is sent again beyond the SDK's attempts
/// (5 calls of 3 attempts); every response lost, it is still applied exactly once, and its
/// error says it may have been applied. Item 9: 5 calls, 15 attempts.
#[tokio::test]
async fn token_carrying_writes_get_a_retry_budget_of_their_own() -> Result<(), Error> {
    let harness = Harness::<DefaultTable>::start(Faults::default()).await?;
    let (proxy, db, direct) = (harness.proxy(), harness.db().clone(), harness.direct().clone());
    Counter { name: "c".into(), n: 0, log: vec![] }.create(&direct).await?;
    proxy.set_faults(Faults::default().drop_after(1.0));
    db.reset_requests();
    let e = Counter::update(&db, "c").add(Counter::N, 1).no_return().await.unwrap_err();
    println!("every response lost: {e}; {}", db.requests());
    assert_typed(&e);
    assert!(matches!(e, Error::Transport { attempts: 15, maybe_applied: true, .. }), "{e:?}");
    let requests = db.requests();
    assert_eq!(
        (requests.get(Op::TransactWriteItems), requests.attempts(Op::TransactWriteItems)),
        (5, 15)
    );
    assert_eq!(proxy.counts().dropped_after, 15);
    assert_eq!(Counter::get(&direct, "c").await?.map(|c| c.n), Some(1), "applied exactly once");

    // A plain write carries no token: the SDK's attempts only.
    db.reset_requests();
    let e = Counter { name: "p".into(), n: 1, log: vec![] }.put(&db).await.unwrap_err();
    assert!(matches!(e, Error::Transport { attempts: 3, maybe_applied: true, .. }), "{e:?}");
    assert_eq!((db.requests().total(), db.requests().total_attempts()), (1, 3));
    Ok(())
}

/// Item 6 for a tree insert: its transaction carries a token, and a call after the first
/// sends the same transaction again (rendered anew from the node, not a copy of the first
/// request): every response lost, the node and the parent's revision are written once.
#[tokio::test]
async fn a_tree_insert_whose_responses_are_lost_is_applied_once() -> Result<(), Error> {
    use crate::model::Folder;
    let harness = Harness::<DefaultTable>::start(Faults::default()).await?;
    let (proxy, db, direct) = (harness.proxy(), harness.db().clone(), harness.direct().clone());
    Folder::tree(&direct, "lost").insert(&Folder::at("lost", "a")).await?;
    proxy.set_faults(Faults::default().drop_after(1.0));
    db.reset_requests();
    let e = Folder::tree(&db, "lost").insert(&Folder::at("lost", "a/b")).await.unwrap_err();
    assert_typed(&e);
    assert!(matches!(e, Error::Transport { attempts: 15, maybe_applied: true, .. }), "{e:?}");
    let requests = db.requests();
    assert_eq!(
        (requests.get(Op::TransactWriteItems), requests.attempts(Op::TransactWriteItems)),
        (5, 15)
    );
    assert_eq!(proxy.counts().dropped_after, 15);
    let tree = Folder::tree(&direct, "lost");
    let children = tree.children(&"a".parse().map_err(Error::from)?).all().await?;
    assert_eq!(children, [Folder::at("lost", "a/b")], "applied exactly once");
    // The parent's revision was counted once.
    use aws_sdk_dynamodb::types::AttributeValue::{N, S};
    let parent = direct
        .client()
        .get_item()
        .table_name(direct.table_name())
        .key("pk", S("DRIVE#lost".into()))
        .key("sk", S("NODE#a".into()))
        .consistent_read(true)
        .send()
        .await
        .expect("the parent");
    let rev = parent.item.as_ref().and_then(|item| item.get("_tree_rev"));
    assert_eq!(rev, Some(&N("1".into())), "{parent:?}");
    Ok(())
}

fn ops_from_env(default: usize) -> usize {
    std::env::var("DDB_FAULT_OPS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Item 6 (and 9): edge links and unlinks and counter adds through the fault mix (3%
/// of requests dropped before forwarding, 3% after, 4% answered with 500), from 4 tasks. Every
/// failure is typed; the edge pairs and degree counters hold (checked on a clean connection)
/// and the counters did not drift. `DDB_FAULT_OPS` sizes the run (default 400 operations).
#[tokio::test]
async fn edges_and_counters_do_not_drift_through_faults() -> Result<(), Error> {
    use crate::edge_model::{Follow, Graph, Member};
    let ops = ops_from_env(400);
    let graph_direct = crate::support::db::<Graph>().await;
    let counters_direct = crate::support::db::<DefaultTable>().await;
    let proxy = Proxy::start(Faults::default()).await?;
    let graph = proxy.db(&graph_direct);
    let counters = proxy.db(&counters_direct);
    let ids: Vec<String> = (0..6).map(|i| format!("m{i}")).collect();
    for id in &ids {
        Member::new(id).create(&graph_direct).await?;
    }
    for t in 0..4 {
        Counter { name: format!("t{t}"), n: 0, log: vec![] }.create(&counters_direct).await?;
    }
    proxy.set_faults(Faults::mix(2024));

    let tasks = (0..4u64).map(|t| {
        let (graph, counters, ids) = (graph.clone(), counters.clone(), ids.clone());
        async move {
            let mut rng = t.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut next = move |n: usize| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                (rng % n as u64) as usize
            };
            // (counter adds that succeeded, failed adds that may have been applied, failures)
            let (mut added, mut unknown, mut failures) = (0i64, 0i64, Vec::new());
            let follows = graph.edges::<Follow>();
            for i in 0..ops / 4 {
                let (a, b) = (&ids[next(ids.len())], &ids[next(ids.len())]);
                let result = match next(5) {
                    0 => follows.link(&Follow::new(a, b)).await.map(|_| ()),
                    1 => follows.unlink(a, b).await.map(|_| ()),
                    2 | 3 => {
                        let update = Counter::update(&counters, format!("t{t}")).add(Counter::N, 1);
                        let r = if i % 2 == 0 {
                            update.no_return().await
                        } else {
                            update.await.map(|_| ())
                        };
                        match &r {
                            Ok(()) => added += 1,
                            Err(e) if e.maybe_applied() => unknown += 1,
                            Err(_) => {}
                        }
                        r
                    }
                    // A plain put carries no token: not sent again after the SDK's attempts.
                    _ => Counter { name: format!("p{t}"), n: i as i64, log: vec![] }
                        .put(&counters)
                        .await
                        .inspect_err(|e| {
                            assert!(!matches!(e, Error::Transport { .. }) || e.maybe_applied())
                        }),
                };
                if let Err(e) = result {
                    failures.push(e);
                }
            }
            (t, added, unknown, failures)
        }
    });
    let results = futures_util::future::join_all(tasks).await;
    proxy.set_faults(Faults::default());

    let mut failed = 0;
    for (t, added, unknown, failures) in results {
        for e in &failures {
            println!("task {t}: {e}");
            assert_typed(e);
            // Typed: a transport failure, or a domain error a caller can match on.
            assert!(
                matches!(e, Error::Transport { .. })
                    || e.is_transaction_conflict()
                    || e.is_throttled()
                    || e.is_not_found(),
                "{e:?}"
            );
        }
        failed += failures.len();
        let stored = Counter::get(&counters_direct, format!("t{t}")).await?.expect("counter").n;
        assert!(
            (added..=added + unknown).contains(&stored),
            "counter t{t}: {stored}, {added} adds succeeded, {unknown} may have been applied"
        );
        let raw = crate::support::raw(&counters_direct, &format!("COUNTER#t{t}"), "COUNTER").await;
        assert!(!raw.expect("raw").keys().any(|k| k.starts_with("_ddbm.")), "markers removed");
    }
    crate::edge::check_follow_invariants(&graph_direct).await;

    let counts = proxy.counts();
    let (calls, attempts) = (
        graph.requests().total() + counters.requests().total(),
        graph.requests().total_attempts() + counters.requests().total_attempts(),
    );
    println!(
        "{ops} operations through faults: {counts:?}; {failed} failed; graph {}; \
         counters {}; calls {calls}, attempts {attempts}",
        graph.requests(),
        counters.requests()
    );
    assert!(counts.faults() > 0, "faults were injected");
    // Item 9: the proxy saw every attempt; the attempts exceed the calls.
    assert_eq!(attempts, counts.requests);
    assert!(attempts > calls);
    Ok(())
}

/// An entity field named like a marker would be hidden from reads: refused before sending.
#[derive(ddb_model::Entity, serde::Serialize, serde::Deserialize, Debug)]
#[entity(pk = "ODD#<id>", sk = "ODD")]
struct Odd {
    id: String,
    #[serde(rename = "_ddbm.x")]
    x: u32,
}

/// Item 5: markers left by an update whose marker removal failed are invisible to entities,
/// and the next returning `add` of the item removes those older than 15 minutes (not the
/// fresh ones, whose update may still be retried).
#[tokio::test]
async fn leftover_markers_are_invisible_and_removed_once_stale() -> Result<(), Error> {
    use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
    let db = crate::support::db::<DefaultTable>().await;
    Counter { name: "c".into(), n: 4, log: vec![] }.create(&db).await?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as u64;
    let stale = format!("_ddbm.{:x}.0123456789abcdef.0", now - 16 * 60 * 1000);
    let fresh = format!("_ddbm.{:x}.fedcba9876543210.0", now - 60 * 1000);
    db.client()
        .update_item()
        .table_name(db.table_name())
        .key("pk", AttributeValue::S("COUNTER#c".into()))
        .key("sk", AttributeValue::S("COUNTER".into()))
        .update_expression("SET #s = :v, #f = :v")
        .expression_attribute_names("#s", &stale)
        .expression_attribute_names("#f", &fresh)
        .expression_attribute_values(":v", AttributeValue::N("99".into()))
        .send()
        .await
        .expect("plant markers");
    assert_eq!(Counter::get(&db, "c").await?.map(|c| c.n), Some(4));
    let c = Counter::update(&db, "c").add(Counter::N, 1).await?;
    assert_eq!(c.n, 5);
    let raw = crate::support::raw(&db, "COUNTER#c", "COUNTER").await.expect("raw");
    let markers: Vec<&String> = raw.keys().filter(|k| k.starts_with("_ddbm.")).collect();
    assert_eq!(markers, [&fresh], "the stale leftover is removed, the fresh one kept");

    let before = db.requests();
    let e = Odd { id: "a".into(), x: 1 }.put(&db).await.unwrap_err();
    assert!(matches!(e, Error::AttributeCollision { .. }), "{e:?}");
    assert_eq!((db.requests() - before).total(), 0, "nothing sent");
    Ok(())
}
