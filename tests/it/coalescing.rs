//! Coalescing (issue 29, item 3): concurrent gets of a handle `with_coalescing(window)`
//! become one `BatchGetItem`, each caller handed its own typed result; against the same gets
//! without coalescing, with the requests counted.

use std::time::Duration;

use ddb_model::prelude::*;
use ddb_model::{DefaultTable, Op};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "ACCT#<id>", sk = "ITEM")]
struct Acct {
    id: u32,
    name: String,
}

/// Another entity under the same key layout: reading it as an `Acct` is a wrong entity type.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "ACCT#<id>", sk = "ITEM")]
struct Other {
    id: u32,
}

/// What a get answered, comparable across handles.
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    Found(String),
    Absent,
    WrongType,
    Failed(String),
}

fn answer(r: Result<Option<Acct>, Error>) -> Answer {
    match r {
        Ok(Some(a)) => Answer::Found(a.name),
        Ok(None) => Answer::Absent,
        Err(Error::WrongEntityType { .. }) => Answer::WrongType,
        Err(e) => Answer::Failed(e.to_string()),
    }
}

/// Ids 0..4 are accounts, 4..6 other entities, the rest absent.
async fn seeded() -> Db {
    let db: Db = crate::support::db::<DefaultTable>().await;
    for id in 0..4 {
        Acct { id, name: format!("acct-{id}") }.create(&db).await.expect("create");
    }
    for id in 4..6 {
        Other { id }.create(&db).await.expect("create");
    }
    db
}

async fn concurrent_gets(db: &Db, ids: &[u32]) -> Vec<Answer> {
    let gets = ids.iter().map(|&id| async move { answer(Acct::get(db, id).await) });
    futures_util::future::join_all(gets).await
}

#[tokio::test]
async fn sixty_four_concurrent_gets_are_one_batch() -> Result<(), Error> {
    let direct = seeded().await;
    let db = direct.clone().with_coalescing(Duration::from_millis(5));
    direct.reset_requests();
    let ids: Vec<u32> = (0..64).map(|i| i % 8).collect();
    let got = concurrent_gets(&db, &ids).await;
    let expected: Vec<Answer> = ids
        .iter()
        .map(|&id| match id {
            0..4 => Answer::Found(format!("acct-{id}")),
            4..6 => Answer::WrongType,
            _ => Answer::Absent,
        })
        .collect();
    assert_eq!(got, expected);
    let requests = db.requests();
    assert_eq!((requests.get(Op::BatchGetItem), requests.get(Op::GetItem)), (1, 0), "{requests}");

    // 150 distinct keys: two batches (100 + 50); a lone get is a plain GetItem.
    direct.reset_requests();
    let ids: Vec<u32> = (0..150).collect();
    let got = concurrent_gets(&db, &ids).await;
    assert_eq!(got.iter().filter(|a| matches!(a, Answer::Found(_))).count(), 4);
    assert_eq!(db.requests().get(Op::BatchGetItem), 2);
    direct.reset_requests();
    assert_eq!(answer(Acct::get(&db, 1).await), Answer::Found("acct-1".into()));
    assert_eq!((db.requests().get(Op::GetItem), db.requests().get(Op::BatchGetItem)), (1, 0));

    // Consistent and eventually consistent gets gather apart.
    direct.reset_requests();
    let (a, b) = futures_util::future::join(
        futures_util::future::join_all((0..3).map(|id| Acct::get(&db, id).consistent())),
        futures_util::future::join_all((0..3).map(|id| Acct::get(&db, id))),
    )
    .await;
    assert!(a.iter().chain(&b).all(|r| matches!(r, Ok(Some(_)))));
    assert_eq!(db.requests().get(Op::BatchGetItem), 2);
    // Without coalescing: one GetItem each.
    direct.reset_requests();
    concurrent_gets(&direct, &[0, 1, 2]).await;
    assert_eq!(
        (direct.requests().get(Op::GetItem), direct.requests().get(Op::BatchGetItem)),
        (3, 0)
    );
    Ok(())
}

/// A failed batch: each caller sends its own `GetItem` and gets its own result or error.
#[tokio::test]
async fn a_failed_batch_falls_back_to_each_callers_get() -> Result<(), Error> {
    use ddb_model::error::ThrottleLimit;
    use ddb_model::testing::{Faults, Harness};
    let harness = Harness::<DefaultTable>::start(Faults::seeded(2)).await?;
    Acct { id: 1, name: "one".into() }.create(harness.direct()).await?;
    let db = harness.db().clone().with_coalescing(Duration::from_millis(5));
    // Every BatchGetItem attempt throttled (3 attempts), then the gets go alone.
    harness.proxy().set_faults(Faults::seeded(2).throttle(1.0, ThrottleLimit::Provisioned));
    let got = concurrent_gets(&db, &[1, 2, 1]).await;
    assert!(
        got.iter()
            .all(|a| matches!(a, Answer::Failed(e) if e.contains("ProvisionedThroughputExceeded"))),
        "{got:?}"
    );
    let requests = db.requests();
    assert_eq!((requests.get(Op::BatchGetItem), requests.get(Op::GetItem)), (1, 3), "{requests}");
    harness.proxy().set_faults(Faults::seeded(2));
    let got = concurrent_gets(&db, &[1, 2, 1]).await;
    assert_eq!(got, [Answer::Found("one".into()), Answer::Absent, Answer::Found("one".into())]);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12)
    ))]

    /// Arbitrary concurrent gets (present, absent, repeated, another entity's key) answer the
    /// same with and without coalescing; coalesced, they are one `BatchGetItem` (one
    /// `GetItem` when there is one get).
    #[test]
    fn coalesced_gets_answer_as_plain_gets(ids in prop::collection::vec(0u32..10, 1..40)) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let (plain, coalesced, requests) = runtime.expect("runtime").block_on(async {
            let direct = seeded().await;
            let plain = concurrent_gets(&direct, &ids).await;
            let db = direct.clone().with_coalescing(Duration::from_millis(5));
            direct.reset_requests();
            let coalesced = concurrent_gets(&db, &ids).await;
            (plain, coalesced, db.requests())
        });
        prop_assert_eq!(plain, coalesced);
        let expected = if ids.len() == 1 { (0, 1) } else { (1, 0) };
        prop_assert_eq!((requests.get(Op::BatchGetItem), requests.get(Op::GetItem)), expected);
    }
}
