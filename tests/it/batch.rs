//! Batch get and batch write: chunking, request counts, duplicates, typed results, checks
//! before sending, and the retry of unprocessed keys and writes, proven by a client that
//! really withholds some of them from the service.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aws_smithy_runtime_api::client::http::{
    HttpClient, HttpConnector, HttpConnectorFuture, HttpConnectorSettings, SharedHttpClient,
    SharedHttpConnector,
};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use ddb_model::aws_sdk_dynamodb::config::interceptors::{
    BeforeSerializationInterceptorContextMut, FinalizerInterceptorContextMut,
};
use ddb_model::aws_sdk_dynamodb::config::{
    BehaviorVersion, ConfigBag, Credentials, Intercept, Region,
};
use ddb_model::aws_sdk_dynamodb::error::BoxError;
use ddb_model::aws_sdk_dynamodb::operation::batch_get_item::{
    BatchGetItemInput, BatchGetItemOutput,
};
use ddb_model::aws_sdk_dynamodb::operation::batch_write_item::{
    BatchWriteItemInput, BatchWriteItemOutput,
};
use ddb_model::aws_sdk_dynamodb::types::{DeleteRequest, KeysAndAttributes, WriteRequest};
use ddb_model::aws_sdk_dynamodb::{Client, Config};
use ddb_model::prelude::*;
use ddb_model::{
    Item, Op,
    error::{BatchAction, BatchKey},
    local,
};
use serde::{Deserialize, Serialize};

use crate::model::{App, Order, Status, User};
use crate::support::{self, raw, s};

fn users(range: std::ops::Range<usize>) -> Vec<User> {
    range.map(|i| User::sample(&format!("u{i:03}"))).collect()
}

fn user_keys(range: std::ops::Range<usize>) -> Vec<Key<User>> {
    range.map(|i| User::key(format!("u{i:03}"))).collect()
}

fn order(user: &str, seq: u64, version: u64) -> Order {
    Order { user: user.into(), year: 2024, seq, status: Status::Open, total_cents: 100, version }
}

/// Another entity type whose keys collide with `User`'s by design.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<id>", sk = "PROFILE", name = "Impostor")]
struct Impostor {
    id: String,
}

/// An entity whose partition key is the bare field, so an empty field is an empty key.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "<name>", sk = "TAG")]
struct Tag {
    name: String,
}

fn stats(db: &Db<App>) -> (u64, u64, u64) {
    let r = db.requests();
    (r.get(Op::BatchGetItem), r.get(Op::BatchWriteItem), r.total())
}

// -------------------------------------------------------------------------------------------
// Chunking, order, duplicates
// -------------------------------------------------------------------------------------------

#[tokio::test]
async fn puts_go_in_chunks_of_25_and_gets_in_chunks_of_100() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let all = users(0..250);
    db.reset_requests();
    db.batch_put(&all).await?;
    assert_eq!(stats(&db), (0, 10, 10), "250 puts = 10 BatchWriteItem requests");
    assert_eq!(support::snapshot(&db).await.len(), 250);

    // 250 stored keys and 10 missing ones, interleaved, in reverse: 260 keys = 3 requests.
    let mut keys = Vec::new();
    let mut expected = Vec::new();
    for (i, user) in all.iter().enumerate().rev() {
        keys.push(user.key());
        expected.push(Some(user.clone()));
        if i % 25 == 0 {
            keys.push(User::key(format!("missing-{i}")));
            expected.push(None);
        }
    }
    assert_eq!(keys.len(), 260);
    db.reset_requests();
    let found = db.batch_get(keys).consistent().await?;
    assert_eq!(stats(&db), (3, 0, 3));
    assert_eq!(found, expected, "one result per key, in the order of the keys");

    // Every item written is readable one by one too.
    for user in all.iter().step_by(50) {
        assert_eq!(User::get(&db, &user.id).consistent().await?.as_ref(), Some(user));
    }
    Ok(())
}

#[tokio::test]
async fn duplicate_keys_are_read_once_and_every_position_gets_its_entity() -> Result<(), Error> {
    let clean = support::db::<App>().await;
    let all = users(0..100);
    clean.batch_put(&all).await?;

    let inject = Inject::new();
    let db = inject.db(&clean);
    // 150 keys: the 100 stored users, then 50 of them again.
    let keys: Vec<Key<User>> = user_keys(0..100).into_iter().chain(user_keys(25..75)).collect();
    let found = db.batch_get(keys).consistent().await?;
    assert_eq!(stats(&db), (1, 0, 1), "100 distinct keys fit one request; 150 would not");
    assert_eq!(inject.sent(), vec![100], "each distinct key sent once");
    let expected: Vec<Option<User>> = all.iter().chain(&all[25..75]).cloned().map(Some).collect();
    assert_eq!(found, expected);

    // 101 distinct keys need two requests.
    db.reset_requests();
    let keys: Vec<Key<User>> = user_keys(0..101).into_iter().chain(user_keys(0..101)).collect();
    let found = db.batch_get(keys).await?;
    assert_eq!(stats(&db), (2, 0, 2));
    assert_eq!(found.len(), 202);
    assert_eq!(found[100], None);
    assert_eq!(found[201], None);
    assert_eq!(found[101].as_ref(), Some(&all[0]));

    // The same, as a map: one entry per distinct key found.
    db.reset_requests();
    let by_key = db.batch_get(user_keys(0..120)).by_key().await?;
    assert_eq!(stats(&db), (2, 0, 2));
    assert_eq!(by_key.len(), 100);
    for user in &all {
        assert_eq!(by_key.get(&user.key()), Some(user));
    }
    Ok(())
}

#[tokio::test]
async fn empty_batches_send_nothing() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let found = crate::no_request!(db, db.batch_get(Vec::<Key<User>>::new()).await?);
    assert!(found.is_empty());
    crate::no_request!(db, db.batch_put(&Vec::<User>::new()).await?);
    crate::no_request!(db, db.batch_write().await?);
    let read = crate::no_request!(db, db.batch_read().await?);
    drop(read);
    Ok(())
}

#[tokio::test]
async fn a_foreign_item_under_a_requested_key_is_wrong_entity_type() -> Result<(), Error> {
    let db = support::db::<App>().await;
    db.batch_put(&users(0..5)).await?;
    Impostor { id: "u900".into() }.create(&db).await?;
    db.reset_requests();
    let err =
        db.batch_get(user_keys(0..5).into_iter().chain([User::key("u900")])).await.unwrap_err();
    assert!(
        matches!(&err, Error::WrongEntityType { expected: "User", found: Some(f), .. } if f == "Impostor"),
        "{err:?}"
    );
    assert_eq!(stats(&db), (1, 0, 1));
    Ok(())
}

#[tokio::test]
async fn batch_read_reads_several_entity_types_at_once() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let people = users(0..3);
    db.batch_put(&people).await?;
    let mut first = order("u000", 1, 0);
    first.create(&db).await?;
    Impostor { id: "imp".into() }.create(&db).await?;

    db.reset_requests();
    let mut batch = db.batch_read();
    let user = batch.get(User::key("u000"));
    let order1 = batch.get(Order::key("u000", 2024, 1u64));
    let order2 = batch.get(Order::key("u000", 2024, 2u64));
    let again = batch.get(User::key("u000"));
    let impostor = batch.get(User::key("imp"));
    let found = batch.consistent().await?;
    assert_eq!(stats(&db), (1, 0, 1));
    assert_eq!(found.get(user)?.as_ref(), Some(&people[0]));
    assert_eq!(found.get(again)?.as_ref(), Some(&people[0]));
    assert_eq!(found.get(order1)?, Some(first));
    assert_eq!(found.get(order2)?, None);
    let err = found.get(impostor).unwrap_err();
    assert!(matches!(err, Error::WrongEntityType { expected: "User", .. }), "{err:?}");
    assert!(found.item(impostor).is_some(), "the raw item is there");

    // A slot of another batch is refused, not mistaken for one of this batch.
    let mut other = db.batch_read();
    let elsewhere = other.get(User::key("u001"));
    assert!(found.get(elsewhere).is_err());
    assert!(found.item(elsewhere).is_none());
    Ok(())
}

// -------------------------------------------------------------------------------------------
// Writes: mixes, versions, checks before sending
// -------------------------------------------------------------------------------------------

#[tokio::test]
async fn a_batch_mixes_puts_and_deletes_of_several_entity_types() -> Result<(), Error> {
    let db = support::db::<App>().await;
    db.batch_put(&users(0..30)).await?;
    Impostor { id: "x1".into() }.create(&db).await?;

    db.reset_requests();
    db.batch_write()
        .put_all(&users(30..50))
        .delete_all(user_keys(0..15))
        .put(&Tag { name: "rust".into() })
        // Batch deletes are unconditional: another entity's item under the key goes too.
        .delete(Impostor::key("x1"))
        .await?;
    assert_eq!(stats(&db), (0, 2, 2), "37 writes = 2 requests");

    let found = db.batch_get(user_keys(0..50)).await?;
    let present: Vec<usize> =
        found.iter().enumerate().filter(|(_, u)| u.is_some()).map(|(i, _)| i).collect();
    assert_eq!(present, (15..50).collect::<Vec<_>>());
    assert!(raw(&db, "rust", "TAG").await.is_some());
    assert!(raw(&db, "USER#x1", "PROFILE").await.is_none());
    assert_eq!(support::snapshot(&db).await.len(), 36);
    Ok(())
}

#[tokio::test]
async fn a_batch_put_overwrites_whatever_is_stored() -> Result<(), Error> {
    let db = support::db::<App>().await;
    Impostor { id: "u001".into() }.create(&db).await?;
    let mut user = User::sample("u001");
    user.logins = 7;
    db.batch_put([&user]).await?;
    assert_eq!(User::get(&db, "u001").await?, Some(user), "no entity-type guard in a batch");
    Ok(())
}

#[tokio::test]
async fn versioned_entities_are_refused_unless_put_unchecked() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut stored = order("ann", 1, 0);
    stored.create(&db).await?;
    stored.total_cents = 500;
    stored.replace(&db).await?; // version 2
    let before = support::snapshot(&db).await;

    let stale = order("ann", 1, 0);
    let err = crate::no_request!(
        db,
        db.batch_write().put(&User::sample("u1")).put(&stale).await.unwrap_err()
    );
    assert!(
        matches!(&err, Error::VersionedBatchPut { entity: "Order", key } if key.contains("ORDER#")),
        "{err:?}"
    );
    assert!(err.is_invalid_input());
    assert_eq!(support::snapshot(&db).await, before, "nothing written, the user neither");

    // put_unchecked overwrites and stores the next version of the value written.
    let imported = order("bob", 1, 0);
    db.reset_requests();
    db.batch_write().put_unchecked(&stale).put_unchecked(&imported).await?;
    assert_eq!(stats(&db), (0, 1, 1));
    let ann = Order::get(&db, "ann", 2024, 1u64).await?.expect("ann's order");
    assert_eq!((ann.total_cents, ann.version), (100, 1), "overwritten at version 0 + 1");
    let bob = Order::get(&db, "bob", 2024, 1u64).await?.expect("bob's order");
    assert_eq!(bob.version, 1);
    // Optimistic locking continues from the stored version.
    let mut bob = bob;
    bob.total_cents = 1;
    bob.replace(&db).await?;
    assert!(order("bob", 1, 1).replace(&db).await.unwrap_err().is_version_conflict());
    Ok(())
}

#[tokio::test]
async fn bad_input_fails_the_whole_batch_before_anything_is_sent() -> Result<(), Error> {
    let db = support::db::<App>().await;
    db.batch_put(&users(0..3)).await?;
    let before = support::snapshot(&db).await;

    // An item over 400 KB, after 40 good ones.
    let mut huge = User::sample("huge");
    huge.nick = Some("x".repeat(410 * 1024));
    let good = users(10..50);
    let err = crate::no_request!(db, db.batch_put(good.iter().chain([&huge])).await.unwrap_err());
    assert!(matches!(err, Error::ItemTooLarge { entity: "User", .. }), "{err:?}");

    // Empty keys, in puts, deletes and gets.
    let err = crate::no_request!(
        db,
        db.batch_write().put_all(&good).put(&Tag { name: String::new() }).await.unwrap_err()
    );
    assert!(matches!(err, Error::InvalidKey { entity: "Tag", .. }), "{err:?}");
    let err = crate::no_request!(
        db,
        db.batch_write().delete_all(user_keys(0..3)).delete(Tag::key("")).await.unwrap_err()
    );
    assert!(matches!(err, Error::InvalidKey { .. }), "{err:?}");
    let err =
        crate::no_request!(db, db.batch_get([Tag::key("a"), Tag::key("")]).await.unwrap_err());
    assert!(matches!(err, Error::InvalidKey { .. }), "{err:?}");
    let mut read = db.batch_read();
    let _ok = read.get(User::key("u000"));
    let _bad = read.get(Tag::key(""));
    let err = crate::no_request!(db, read.await.unwrap_err());
    assert!(matches!(err, Error::InvalidKey { .. }), "{err:?}");

    // Two writes to one item, even 30 writes apart (in different chunks).
    let err = crate::no_request!(
        db,
        db.batch_write().put_all(&good[..30]).delete(good[0].key()).await.unwrap_err()
    );
    assert!(
        matches!(&err, Error::DuplicateBatchKey { entity: "User", key } if key.contains("u010")),
        "{err:?}"
    );
    assert!(err.is_invalid_input());
    let twice = [&good[1], &good[1]];
    let err = crate::no_request!(db, db.batch_put(twice).await.unwrap_err());
    assert!(matches!(err, Error::DuplicateBatchKey { .. }), "{err:?}");
    // Two entity types, one item.
    let err = crate::no_request!(
        db,
        db.batch_write()
            .put(&User::sample("z"))
            .put(&Impostor { id: "z".into() })
            .await
            .unwrap_err()
    );
    assert!(matches!(err, Error::DuplicateBatchKey { entity: "Impostor", .. }), "{err:?}");

    assert_eq!(support::snapshot(&db).await, before, "nothing was written");
    Ok(())
}

// -------------------------------------------------------------------------------------------
// Unprocessed keys and writes, injected
// -------------------------------------------------------------------------------------------

const FOREVER: u32 = u32::MAX;

#[tokio::test]
async fn unprocessed_writes_are_sent_again() -> Result<(), Error> {
    let clean = support::db::<App>().await;
    let inject = Inject::new();
    let db = inject.db(&clean);
    let all = users(0..25);
    inject.withhold(all.iter().step_by(2).take(10).map(|u| u.key().pk().to_owned()), 1);

    db.batch_put(&all).backoff(Duration::from_millis(1), Duration::from_millis(10)).await?;
    assert_eq!(stats(&db), (0, 2, 2), "one request, then one for the 10 unprocessed");
    assert_eq!(inject.sent(), vec![15, 10], "the 10 really were not sent the first time");
    assert_eq!(inject.withheld(), 10);
    let found = clean.batch_get(user_keys(0..25)).consistent().await?;
    assert_eq!(found, all.into_iter().map(Some).collect::<Vec<_>>());
    Ok(())
}

#[tokio::test]
async fn unprocessed_writes_of_several_chunks_in_parallel() -> Result<(), Error> {
    let clean = support::db::<App>().await;
    let inject = Inject::new();
    let db = inject.db(&clean);
    let all = users(0..250);
    // Chunks 0, 3 and 9 have unprocessed writes: twice in chunk 3.
    inject.withhold(["u003", "u010", "u099"].map(|id| format!("USER#{id}")), 1);
    inject.withhold(["u075", "u080"].map(|id| format!("USER#{id}")), 2);
    inject.withhold(["u249"].map(|id| format!("USER#{id}")), 1);

    db.batch_put(&all).backoff(Duration::from_millis(1), Duration::from_millis(10)).await?;
    // 10 chunks + chunk 0 once more + chunk 3 twice more + chunk 9 once more.
    assert_eq!(stats(&db), (0, 14, 14));
    assert_eq!(inject.withheld(), 3 + 2 * 2 + 1);
    assert_eq!(inject.sent().iter().sum::<usize>(), 250, "each write reached the service once");
    assert_eq!(support::snapshot(&clean).await.len(), 250);
    Ok(())
}

#[tokio::test]
async fn writes_unprocessed_after_max_attempts_are_a_typed_error() -> Result<(), Error> {
    let clean = support::db::<App>().await;
    let inject = Inject::new();
    let db = inject.db(&clean);
    let all = users(0..60); // chunks of 25, 25, 10
    let stuck = ["u055", "u002", "u007"];
    inject.withhold(stuck.map(|id| format!("USER#{id}")), FOREVER);

    let err = db
        .batch_put(&all)
        .max_attempts(3)
        .backoff(Duration::from_millis(1), Duration::from_millis(5))
        .await
        .unwrap_err();
    let Error::BatchWriteIncomplete { written, attempts, unprocessed, source } = &err else {
        panic!("expected BatchWriteIncomplete, got {err:?}");
    };
    assert_eq!((*written, *attempts), (57, 3));
    assert!(source.is_none(), "no request failed");
    let keys: Vec<(BatchAction, &str, &str)> =
        unprocessed.iter().map(|w| (w.action, w.key.entity, w.key.pk.as_str())).collect();
    assert_eq!(
        keys,
        [
            (BatchAction::Put, "User", "USER#u002"),
            (BatchAction::Put, "User", "USER#u007"),
            (BatchAction::Put, "User", "USER#u055"),
        ],
        "exactly the stuck writes, in the order they were added"
    );
    assert!(unprocessed.iter().all(|w| w.key.key::<User>().is_some()));
    assert!(err.to_string().contains("57 writes applied, 3 not applied"), "{err}");
    // Chunk 0 (u002, u007) and chunk 2 (u055): 3 requests each; chunk 1: one.
    assert_eq!(stats(&db), (0, 7, 7));
    let stored = clean.batch_get(user_keys(0..60)).consistent().await?;
    let missing: Vec<usize> =
        stored.iter().enumerate().filter(|(_, u)| u.is_none()).map(|(i, _)| i).collect();
    assert_eq!(missing, [2, 7, 55], "everything else was written");
    Ok(())
}

#[tokio::test]
async fn a_failed_request_reports_what_was_written_and_what_was_not() -> Result<(), Error> {
    let clean = support::db::<App>().await;
    let inject = Inject::new();
    let db = inject.db(&clean);
    let all = users(0..60);
    inject.fail_requests_with("USER#u030"); // in the second chunk

    let err = db.batch_put(&all).concurrency(1).await.unwrap_err();
    let Error::BatchWriteIncomplete { written, unprocessed, source, .. } = &err else {
        panic!("expected BatchWriteIncomplete, got {err:?}");
    };
    assert_eq!(*written, 25, "the first chunk");
    assert!(
        matches!(source.as_deref(), Some(Error::Transport { operation: Op::BatchWriteItem, .. })),
        "{source:?}"
    );
    let pks: Vec<&str> = unprocessed.iter().map(|w| w.key.pk.as_str()).collect();
    let expected: Vec<String> = (25..60).map(|i| format!("USER#u{i:03}")).collect();
    assert_eq!(pks, expected, "the failed chunk and the chunk never sent");
    assert_eq!(stats(&db), (0, 2, 2), "the third chunk was not sent");
    assert_eq!(support::snapshot(&clean).await.len(), 25);
    Ok(())
}

#[tokio::test]
async fn unprocessed_keys_are_read_again() -> Result<(), Error> {
    let clean = support::db::<App>().await;
    let all = users(0..250);
    clean.batch_put(&all).await?;
    let inject = Inject::new();
    let db = inject.db(&clean);
    // Keys of chunk 0 (twice) and chunk 2 (once) are left unprocessed.
    inject.withhold(["u001", "u050", "u099"].map(|id| format!("USER#{id}")), 2);
    inject.withhold(["u200", "u249"].map(|id| format!("USER#{id}")), 1);

    let found = db
        .batch_get(user_keys(0..250))
        .backoff(Duration::from_millis(1), Duration::from_millis(10))
        .await?;
    assert_eq!(found, all.into_iter().map(Some).collect::<Vec<_>>());
    // 3 chunks + chunk 0 twice more + chunk 2 once more.
    assert_eq!(stats(&db), (6, 0, 6));
    assert_eq!(inject.withheld(), 3 * 2 + 2);
    assert_eq!(inject.sent().iter().sum::<usize>(), 250, "each key reached the service once");
    Ok(())
}

#[tokio::test]
async fn keys_unprocessed_after_max_attempts_are_a_typed_error() -> Result<(), Error> {
    let clean = support::db::<App>().await;
    clean.batch_put(&users(0..150)).await?;
    let inject = Inject::new();
    let db = inject.db(&clean);
    inject.withhold(["u140", "u120"].map(|id| format!("USER#{id}")), FOREVER);

    let err = db
        .batch_get(user_keys(0..150).into_iter().chain(user_keys(120..121)))
        .max_attempts(4)
        .backoff(Duration::from_millis(1), Duration::from_millis(5))
        .await
        .unwrap_err();
    let Error::BatchGetIncomplete { processed, attempts, unprocessed } = &err else {
        panic!("expected BatchGetIncomplete, got {err:?}");
    };
    assert_eq!((*processed, *attempts), (148, 4));
    let pks: Vec<&str> = unprocessed.iter().map(|k| k.pk.as_str()).collect();
    assert_eq!(pks, ["USER#u120", "USER#u140"], "exactly the stuck keys, once each");
    assert!(
        unprocessed
            .iter()
            .all(|k: &BatchKey| k.entity == "User" && k.sk.as_deref() == Some("PROFILE"))
    );
    assert!(unprocessed[0].is(&User::key("u120")));
    // Chunk 0: one request; chunk 1 (the stuck keys): 4.
    assert_eq!(stats(&db), (5, 0, 5));
    Ok(())
}

// -------------------------------------------------------------------------------------------
// The injecting client
// -------------------------------------------------------------------------------------------

/// A client whose batch requests lose some keys or writes on the way: an SDK interceptor
/// removes them from the request before it is serialised (so the service never sees them)
/// and adds them to `UnprocessedKeys` / `UnprocessedItems` of the response, as DynamoDB does
/// under throttling. A request that lost some carries a marker key (a get or delete of an
/// item that does not exist); the HTTP layer copies the marker into a response header, which
/// ties the response to what its request lost.
#[derive(Clone, Default)]
struct Inject(Arc<InjectState>);

#[derive(Default)]
struct InjectState {
    /// Partition key -> how many more times it is withheld.
    withhold: Mutex<HashMap<String, u32>>,
    /// Requests carrying one of these partition keys fail before they are sent.
    fail: Mutex<HashSet<String>>,
    lost: Mutex<HashMap<u64, Lost>>,
    next: AtomicU64,
    /// Keys or writes each request delivered to the service, marker excluded.
    sent: Mutex<Vec<usize>>,
    withheld: AtomicU64,
}

enum Lost {
    Writes(String, Vec<WriteRequest>),
    Keys(String, Vec<Item>, Option<bool>),
}

const MARKER: &str = "WITHHELD#";
const MARKER_HEADER: &str = "x-test-withheld";

impl fmt::Debug for Inject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Inject")
    }
}

impl Inject {
    fn new() -> Inject {
        Inject::default()
    }

    fn withhold(&self, pks: impl IntoIterator<Item = String>, times: u32) {
        let mut map = self.0.withhold.lock().unwrap();
        for pk in pks {
            map.insert(pk, times);
        }
    }

    fn fail_requests_with(&self, pk: &str) {
        self.0.fail.lock().unwrap().insert(pk.to_owned());
    }

    fn sent(&self) -> Vec<usize> {
        self.0.sent.lock().unwrap().clone()
    }

    fn withheld(&self) -> u64 {
        self.0.withheld.load(Ordering::SeqCst)
    }

    /// A `Db` on the table of `clean`, through this client.
    fn db(&self, clean: &Db<App>) -> Db<App> {
        let endpoint = local::endpoint().expect("endpoint");
        let http = aws_smithy_http_client::Builder::new().build_http();
        let config = Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new("local", "local", None, None, "test"))
            .endpoint_url(endpoint)
            .http_client(MarkerEcho { inner: http })
            .retry_partition(crate::support::own_retry_partition())
            .interceptor(self.clone())
            .build();
        Db::with_table_name(Client::from_conf(config), clean.table_name())
    }

    /// Splits `keys` into kept and withheld (by partition key), counting what is sent.
    fn split(&self, keys: Vec<Item>) -> Result<(Vec<Item>, Vec<Item>), BoxError> {
        let fail = self.0.fail.lock().unwrap();
        let mut withhold = self.0.withhold.lock().unwrap();
        let (mut kept, mut lost) = (Vec::new(), Vec::new());
        for key in keys {
            let pk = match key.get("pk") {
                Some(ddb_model::aws_sdk_dynamodb::types::AttributeValue::S(pk)) => pk.clone(),
                _ => String::new(),
            };
            if fail.contains(&pk) {
                return Err("injected failure".into());
            }
            match withhold.get_mut(&pk) {
                Some(n) if *n > 0 => {
                    if *n != FOREVER {
                        *n -= 1;
                    }
                    lost.push(key);
                }
                _ => kept.push(key),
            }
        }
        self.0.sent.lock().unwrap().push(kept.len());
        self.0.withheld.fetch_add(lost.len() as u64, Ordering::SeqCst);
        Ok((kept, lost))
    }

    fn marker(&self) -> (u64, Item) {
        let id = self.0.next.fetch_add(1, Ordering::SeqCst);
        let key = HashMap::from([
            ("pk".to_owned(), s(&format!("{MARKER}{id}"))),
            ("sk".to_owned(), s("X")),
        ]);
        (id, key)
    }
}

fn write_key(w: &WriteRequest) -> Item {
    match (w.put_request(), w.delete_request()) {
        (Some(put), _) => put.item().clone(),
        (_, Some(delete)) => delete.key().clone(),
        _ => Item::new(),
    }
}

impl Intercept for Inject {
    fn name(&self) -> &'static str {
        "test::Inject"
    }

    fn modify_before_serialization(
        &self,
        context: &mut BeforeSerializationInterceptorContextMut<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Some(input) = context.input_mut().downcast_mut::<BatchWriteItemInput>() {
            for (table, writes) in input.request_items.iter_mut().flatten() {
                let all = std::mem::take(writes);
                let by_key: Vec<Item> = all.iter().map(write_key).collect();
                let (kept, lost) = self.split(by_key)?;
                let is_kept = |w: &WriteRequest| kept.contains(&write_key(w));
                let (mut keep, held): (Vec<_>, Vec<_>) = all.into_iter().partition(is_kept);
                assert_eq!(held.len(), lost.len());
                if !held.is_empty() {
                    let (id, marker) = self.marker();
                    let delete = DeleteRequest::builder().set_key(Some(marker)).build()?;
                    keep.push(WriteRequest::builder().delete_request(delete).build());
                    self.0.lost.lock().unwrap().insert(id, Lost::Writes(table.clone(), held));
                }
                *writes = keep;
            }
        }
        if let Some(input) = context.input_mut().downcast_mut::<BatchGetItemInput>() {
            for (table, keys) in input.request_items.iter_mut().flatten() {
                let (mut kept, lost) = self.split(std::mem::take(&mut keys.keys))?;
                if !lost.is_empty() {
                    let (id, marker) = self.marker();
                    kept.push(marker);
                    let consistent = keys.consistent_read;
                    self.0
                        .lost
                        .lock()
                        .unwrap()
                        .insert(id, Lost::Keys(table.clone(), lost, consistent));
                }
                keys.keys = kept;
            }
        }
        Ok(())
    }

    fn modify_before_completion(
        &self,
        context: &mut FinalizerInterceptorContextMut<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let id = context
            .response()
            .and_then(|r| r.headers().get(MARKER_HEADER))
            .and_then(|id| id.parse::<u64>().ok());
        let Some(lost) = id.and_then(|id| self.0.lost.lock().unwrap().remove(&id)) else {
            return Ok(());
        };
        let Some(Ok(output)) = context.output_or_error_mut() else {
            return Ok(());
        };
        match lost {
            Lost::Writes(table, writes) => {
                let out = output.downcast_mut::<BatchWriteItemOutput>().expect("write output");
                out.unprocessed_items
                    .get_or_insert_default()
                    .entry(table)
                    .or_default()
                    .extend(writes);
            }
            Lost::Keys(table, keys, consistent) => {
                let out = output.downcast_mut::<BatchGetItemOutput>().expect("get output");
                let unprocessed = out.unprocessed_keys.get_or_insert_default();
                match unprocessed.get_mut(&table) {
                    Some(existing) => existing.keys.extend(keys),
                    None => {
                        let k = KeysAndAttributes::builder()
                            .set_keys(Some(keys))
                            .set_consistent_read(consistent)
                            .build()?;
                        unprocessed.insert(table, k);
                    }
                }
            }
        }
        Ok(())
    }
}

/// The HTTP layer: copies the marker of a request into a header of its response.
#[derive(Debug)]
struct MarkerEcho {
    inner: SharedHttpClient,
}

impl HttpClient for MarkerEcho {
    fn http_connector(
        &self,
        settings: &HttpConnectorSettings,
        components: &RuntimeComponents,
    ) -> SharedHttpConnector {
        let inner = self.inner.http_connector(settings, components);
        SharedHttpConnector::new(MarkerEchoConnector { inner })
    }
}

#[derive(Debug)]
struct MarkerEchoConnector {
    inner: SharedHttpConnector,
}

impl HttpConnector for MarkerEchoConnector {
    fn call(&self, request: HttpRequest) -> HttpConnectorFuture {
        let marker =
            request.body().bytes().and_then(|body| std::str::from_utf8(body).ok()).and_then(
                |body| {
                    let start = body.find(MARKER)? + MARKER.len();
                    let digits: String =
                        body[start..].chars().take_while(char::is_ascii_digit).collect();
                    Some(digits)
                },
            );
        let inner = self.inner.clone();
        HttpConnectorFuture::new(async move {
            let mut response = inner.call(request).await?;
            if let Some(id) = marker {
                response.headers_mut().insert(MARKER_HEADER, id);
            }
            Ok(response)
        })
    }
}
