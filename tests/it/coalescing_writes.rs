//! Coalescing writes (issue 29, item 3): on a handle `with_coalescing(window)`, concurrent
//! unconditional puts and deletes become `BatchWriteItem`s of up to 25, each caller handed
//! its own outcome; every write whose meaning a batch would not keep is sent alone. Requests
//! counted; against the same writes without coalescing; with injected faults.

use std::sync::Arc;
use std::time::Duration;

use ddb_model::intercept::Interceptor;
use ddb_model::prelude::*;
use ddb_model::testing::{Faults, Harness};
use ddb_model::{DefaultTable, Op, Table};
use futures_util::future::join_all;
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

use crate::support;

const WINDOW: Duration = Duration::from_millis(5);

/// A table whose entities are told apart by their keys: a plain put or delete carries no
/// condition at all, so it may join a batch.
#[derive(Table)]
#[table(name = "plain", pk = "pk", sk = "sk", no_type_attr)]
struct Plain;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Plain, pk = "NOTE#<id>", sk = "NOTE")]
struct Note {
    id: u32,
    body: String,
}

fn note(id: u32, body: &str) -> Note {
    Note { id, body: body.into() }
}

/// Optimistic locking: every write is conditioned on the stored version.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Plain, pk = "DOC#<id>", sk = "DOC", version = version)]
struct Doc {
    id: u32,
    version: u64,
}

/// A unique field: every write is a transaction with its claim (unique constraints need a
/// type attribute, so this is a tagged entity of the default table).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "MEMBER#<id>", sk = "MEMBER")]
struct Member {
    id: u32,
    #[unique]
    email: String,
}

/// A sealed entity: its put is encrypted and signed before it is sent.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = Plain, pk = "SECRET#<id>", sk = "SECRET")]
struct Secret {
    id: u32,
    #[encrypt]
    code: String,
}

/// A tagged entity (the default table's `_type`): every put and delete is guarded by the
/// entity type stored under its key.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "TAG#<id>", sk = "TAG")]
struct Tagged {
    id: u32,
}

#[derive(Table)]
#[table(name = "plain_tenants", pk = "pk", sk = "sk", no_type_attr, tenant = "ORG#")]
struct PlainTenants;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = PlainTenants, pk = "ORG#<org>", sk = "NOTE#<id>", tenant = org)]
struct OrgNote {
    org: String,
    id: u32,
}

/// `(BatchWriteItem, PutItem, DeleteItem)` sent through `db` since its last reset.
fn writes<T: Table>(db: &Db<T>) -> (u64, u64, u64) {
    let r = db.requests();
    (r.get(Op::BatchWriteItem), r.get(Op::PutItem), r.get(Op::DeleteItem))
}

async fn stored(db: &Db<Plain>, id: u32) -> Option<String> {
    Note::get(db, id).consistent().await.expect("get").map(|n| n.body)
}

#[tokio::test]
async fn concurrent_puts_and_deletes_are_batches_of_25() -> Result<(), Error> {
    let direct = support::db::<Plain>().await;
    let db = direct.clone().with_coalescing(WINDOW);
    let notes: Vec<Note> = (0..64).map(|id| note(id, &format!("n{id}"))).collect();
    let put = join_all(notes.iter().map(|n| n.put(&db))).await;
    assert!(put.iter().all(Result::is_ok), "{put:?}");
    // ceil(64 / 25) = 3 requests: 25 + 25 + 14.
    assert_eq!(writes(&db), (3, 0, 0));
    assert_eq!(direct.scan::<Note>().all().await?.len(), 64);

    // Deletes, and puts and deletes mixed: 50 deletes are 2 requests, 30 mixed writes 2.
    direct.reset_requests();
    let deleted = join_all((0..50).map(|id| Note::delete(&db, id).send())).await;
    assert!(deleted.iter().all(Result::is_ok), "{deleted:?}");
    assert_eq!(writes(&db), (2, 0, 0));
    direct.reset_requests();
    let again: Vec<Note> = (0..15).map(|id| note(id, "again")).collect();
    let (puts, deletes) = futures_util::future::join(
        join_all(again.iter().map(|n| n.put(&db))),
        join_all((50..65).map(|id| Note::delete(&db, id).send())),
    )
    .await;
    assert!(puts.iter().all(Result::is_ok) && deletes.iter().all(Result::is_ok));
    assert_eq!(writes(&db), (2, 0, 0));
    let left = direct.scan::<Note>().all().await?;
    assert_eq!(left.len(), 15);
    assert!(left.iter().all(|n| n.id < 15 && n.body == "again"));

    // A write alone in its window is its own request; without coalescing, one each.
    direct.reset_requests();
    note(1, "alone").put(&db).await?;
    Note::delete(&db, 2).await?;
    assert_eq!(writes(&db), (0, 1, 1));
    direct.reset_requests();
    join_all(notes[..3].iter().map(|n| n.put(&direct))).await;
    assert_eq!(writes(&direct), (0, 3, 0));
    Ok(())
}

#[tokio::test]
async fn writes_of_one_key_go_in_successive_rounds() -> Result<(), Error> {
    let direct = support::db::<Plain>().await;
    let db = direct.clone().with_coalescing(WINDOW);
    note(1, "old").put(&direct).await?;
    direct.reset_requests();
    // Rounds: {0 a, 1 delete}, {0 b, 1 put}, {0 c}; a key's writes in the order they joined.
    let (a, b, c, one) = (note(0, "a"), note(0, "b"), note(0, "c"), note(1, "back"));
    let results = join_all([
        Box::pin(a.put(&db).send()) as ddb_model::ops::BoxFuture<'_, Result<(), Error>>,
        Box::pin(Note::delete(&db, 1).send()),
        Box::pin(b.put(&db).send()),
        Box::pin(one.put(&db).send()),
        Box::pin(c.put(&db).send()),
    ])
    .await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(writes(&db), (3, 0, 0));
    assert_eq!(stored(&direct, 0).await.as_deref(), Some("c"));
    assert_eq!(stored(&direct, 1).await.as_deref(), Some("back"));
    Ok(())
}

#[tokio::test]
async fn each_caller_gets_its_own_refusal() -> Result<(), Error> {
    let direct = support::db::<Plain>().await;
    let db = direct.clone().with_coalescing(WINDOW);
    let mut notes: Vec<Note> = (0..6).map(|id| note(id, "ok")).collect();
    notes[3].body = "x".repeat(410 * 1024);
    let results = join_all(notes.iter().map(|n| n.put(&db))).await;
    for (id, result) in results.iter().enumerate() {
        match id {
            3 => assert!(matches!(result, Err(Error::ItemTooLarge { .. })), "{result:?}"),
            _ => assert!(result.is_ok(), "{result:?}"),
        }
    }
    assert_eq!(writes(&db), (1, 0, 0));
    assert_eq!(stored(&direct, 3).await, None);
    assert_eq!(direct.scan::<Note>().all().await?.len(), 5);

    // A tenant's handle: another tenant's write is refused before sending, alone.
    let tenants = support::db::<PlainTenants>().await;
    let acme = tenants.clone().for_tenant("acme").with_coalescing(WINDOW);
    let orgs = ["acme", "acme", "globex", "acme"];
    let items: Vec<OrgNote> =
        orgs.iter().zip(0..).map(|(org, id)| OrgNote { org: (*org).into(), id }).collect();
    let results = join_all(items.iter().map(|n| n.put(&acme))).await;
    for (item, result) in items.iter().zip(&results) {
        match item.org.as_str() {
            "acme" => assert!(result.is_ok(), "{result:?}"),
            _ => assert!(matches!(result, Err(Error::OutsideTenant { .. })), "{result:?}"),
        }
    }
    assert_eq!(writes(&acme), (1, 0, 0));
    assert_eq!(tenants.scan::<OrgNote>().all().await?.len(), 3);
    Ok(())
}

/// Counts the requests it is shown (and adds nothing).
struct Seen;
impl Interceptor for Seen {}

#[tokio::test]
async fn writes_a_batch_cannot_keep_are_sent_alone() -> Result<(), Error> {
    let direct = support::db::<Plain>().await;
    let db = direct.clone().with_coalescing(WINDOW);
    let three = |body: &str| -> Vec<Note> { (0..3).map(|id| note(id, body)).collect() };
    let ok = |r: &[Result<(), Error>]| assert!(r.iter().all(Result::is_ok), "{r:?}");

    // A create (no item may exist), an explicit condition, an update.
    let notes = three("a");
    ok(&join_all(notes.iter().map(|n| n.create(&db))).await);
    assert_eq!(writes(&db), (0, 3, 0));
    direct.reset_requests();
    let notes = three("b");
    let cond = notes.iter().map(|n| n.put(&db).condition(Note::BODY.eq("a")).send());
    ok(&join_all(cond).await);
    assert_eq!(writes(&db), (0, 3, 0));
    direct.reset_requests();
    ok(&join_all((0..3).map(|id| Note::update(&db, id).set(Note::BODY, "c").send()))
        .await
        .into_iter()
        .map(|r| r.map(drop))
        .collect::<Vec<_>>());
    assert_eq!((writes(&db), db.requests().get(Op::UpdateItem)), ((0, 0, 0), 3));

    // Deletes that return the item or are conditioned.
    direct.reset_requests();
    let old = join_all((0..2).map(|id| Note::delete(&db, id).return_old().send())).await;
    assert!(old.iter().all(|r| matches!(r, Ok(Some(n)) if n.body == "c")), "{old:?}");
    assert_eq!(writes(&db), (0, 0, 2));
    direct.reset_requests();
    let cond = join_all((0..3).map(|id| Note::delete(&db, id).condition(Note::BODY.eq("c"))));
    let cond = cond.await;
    assert!(matches!(cond[2], Ok(())) && matches!(cond[0], Err(Error::NotFound { .. })));
    assert_eq!(writes(&db), (0, 0, 3));

    // A version field (the put checks the stored version), a unique field (a transaction).
    direct.reset_requests();
    let mut docs: Vec<Doc> = (0..3).map(|id| Doc { id, version: 0 }).collect();
    ok(&join_all(docs.iter_mut().map(|d| d.put(&db))).await);
    assert_eq!(writes(&db), (0, 3, 0));
    assert!(docs.iter().all(|d| d.version == 1));

    // Transactions, dry runs, a handle with an interceptor.
    direct.reset_requests();
    let notes = three("tx");
    ok(&join_all(notes.iter().map(|n| db.transaction().put(n).send())).await);
    assert_eq!((writes(&db), db.requests().get(Op::TransactWriteItems)), ((0, 0, 0), 3));
    direct.reset_requests();
    let dry = join_all(notes.iter().map(|n| n.put(&db).dry_run())).await;
    for requests in dry {
        let requests = requests?;
        assert!(matches!(requests[..], [ddb_model::intercept::Request::PutItem(_)]));
    }
    assert_eq!(db.requests().total(), 0);
    let hooked = db.clone().with_interceptor(Arc::new(Seen));
    ok(&join_all(notes.iter().map(|n| n.put(&hooked))).await);
    assert_eq!(writes(&db), (0, 3, 0));

    // A tagged entity: its entity-type guard is a condition. Unique fields: transactions.
    let tagged = support::db::<DefaultTable>().await.with_coalescing(WINDOW);
    let items: Vec<Tagged> = (0..3).map(|id| Tagged { id }).collect();
    ok(&join_all(items.iter().map(|t| t.put(&tagged))).await);
    ok(&join_all((0..3).map(|id| Tagged::delete(&tagged, id).send())).await);
    assert_eq!(writes(&tagged), (0, 3, 3));
    tagged.reset_requests();
    let members: Vec<Member> =
        (0..3).map(|id| Member { id, email: format!("m{id}@example.com") }).collect();
    ok(&join_all(members.iter().map(|m| m.put(&tagged))).await);
    let transactions = tagged.requests().get(Op::TransactWriteItems);
    assert_eq!((writes(&tagged), transactions), ((0, 0, 0), 3));
    Ok(())
}

#[tokio::test]
async fn sealed_puts_join_a_batch_sealed() -> Result<(), Error> {
    use ddb_model::encryption::Encryption;
    let direct = support::db::<Plain>().await;
    let keyring = crate::encryption::keyring(7).await;
    let db = direct.clone().with_encryption(Encryption::new(keyring)).with_coalescing(WINDOW);
    let secrets: Vec<Secret> = (0..4).map(|id| Secret { id, code: format!("c{id}") }).collect();
    let results = join_all(secrets.iter().map(|s| s.put(&db))).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(writes(&db), (1, 0, 0));
    for s in &secrets {
        assert_eq!(Secret::get(&db, s.id).await?.as_ref(), Some(s));
        // Stored sealed: the plaintext is nowhere in the item.
        let key = Secret::key(s.id);
        let raw = support::raw(&direct, key.pk(), key.sk().unwrap_or_default()).await;
        let raw = raw.expect("stored");
        assert!(!raw.values().any(|v| v.as_s().is_ok_and(|t| t.contains(&s.code))), "{raw:?}");
    }
    Ok(())
}

/// Failed batches: each caller sends its own request and gets its own result or error.
#[tokio::test]
async fn a_failed_batch_falls_back_to_each_callers_request() -> Result<(), Error> {
    let harness = Harness::<Plain>::start(Faults::seeded(5)).await?;
    let db = harness.db().clone().with_coalescing(WINDOW);
    let direct = harness.direct();
    // Every request answered 500 (the SDK's attempts included): the batch fails, each put
    // is sent alone and fails with its own error; nothing is written.
    harness.proxy().set_faults(Faults::seeded(5).error_500(1.0));
    let notes: Vec<Note> = (0..4).map(|id| note(id, "lost")).collect();
    let results = join_all(notes.iter().map(|n| n.put(&db))).await;
    assert!(results.iter().all(Result::is_err), "{results:?}");
    assert_eq!(writes(&db), (1, 4, 0));
    harness.proxy().set_faults(Faults::seeded(5));
    assert!(direct.scan::<Note>().all().await?.is_empty());

    // Dropped requests and responses, 500s: each put that answered Ok is stored, and every
    // caller's value is stored once the faults stop and it writes again.
    for seed in 0..4 {
        let faults = Faults::seeded(seed).drop_before(0.2).drop_after(0.2).error_500(0.2);
        harness.proxy().set_faults(faults);
        let body = format!("round{seed}");
        let notes: Vec<Note> = (0..30).map(|id| note(id, &body)).collect();
        let results = join_all(notes.iter().map(|n| n.put(&db))).await;
        harness.proxy().set_faults(Faults::seeded(seed));
        for (n, result) in notes.iter().zip(&results) {
            if result.is_ok() {
                assert_eq!(stored(direct, n.id).await.as_deref(), Some(body.as_str()));
            }
        }
        let failed: Vec<&Note> =
            notes.iter().zip(&results).filter(|(_, r)| r.is_err()).map(|(n, _)| n).collect();
        join_all(failed.iter().map(|n| n.put(&db))).await.into_iter().collect::<Result<(), _>>()?;
        let all = direct.scan::<Note>().all().await?;
        assert_eq!(all.len(), 30);
        assert!(all.iter().all(|n| n.body == body));
    }
    Ok(())
}

/// One write of a random mix.
#[derive(Debug, Clone)]
enum Write {
    Put(u32, String),
    Delete(u32),
}

async fn run_waves(db: &Db<Plain>, waves: &[Vec<Write>]) -> Vec<Note> {
    for wave in waves {
        let sends = wave.iter().map(|w| async move {
            match w {
                Write::Put(id, body) => note(*id, body).put(db).await,
                Write::Delete(id) => Note::delete(db, *id).await,
            }
        });
        let results = join_all(sends).await;
        assert!(results.iter().all(Result::is_ok), "{results:?}");
    }
    let mut all = db.scan::<Note>().consistent().all().await.expect("scan");
    all.sort_by_key(|n| n.id);
    all
}

/// Requests a coalescing handle sends for a wave of `n` writes: gatherings of 25, a last one
/// of a single write sent alone.
fn expected_requests(n: usize) -> u64 {
    let full = n / 25;
    let rest = n % 25;
    u64::try_from(full + usize::from(rest > 0)).unwrap_or(u64::MAX)
}

fn wave() -> impl Strategy<Value = Vec<Write>> {
    // Distinct keys in a wave: concurrent writes of one key have no order, with or without
    // coalescing (`writes_of_one_key_go_in_successive_rounds` orders a gathering's).
    prop::collection::btree_map(0u32..60, (any::<bool>(), "[a-z]{0,8}"), 1..60).prop_map(|m| {
        m.into_iter()
            .map(|(id, (put, body))| if put { Write::Put(id, body) } else { Write::Delete(id) })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12)
    ))]

    /// Waves of concurrent random puts and deletes leave the table as they do without
    /// coalescing, in the requests counted.
    #[test]
    fn coalesced_writes_leave_the_table_as_plain_writes(
        waves in prop::collection::vec(wave(), 1..4)
    ) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let (plain, coalesced, requests) = runtime.expect("runtime").block_on(async {
            let plain = run_waves(&support::db::<Plain>().await, &waves).await;
            let db = support::db::<Plain>().await.with_coalescing(WINDOW);
            let coalesced = run_waves(&db, &waves).await;
            let r = db.requests();
            let single = r.get(Op::PutItem) + r.get(Op::DeleteItem);
            (plain, coalesced, (r.get(Op::BatchWriteItem) + single, single))
        });
        prop_assert_eq!(plain, coalesced);
        let expected: u64 = waves.iter().map(|w| expected_requests(w.len())).sum();
        let alone = waves.iter().filter(|w| w.len() % 25 == 1).count();
        prop_assert_eq!(requests, (expected, u64::try_from(alone).unwrap_or(u64::MAX)));
    }
}
