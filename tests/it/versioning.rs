//! Optimistic locking with `#[entity(version = field)]`.

use ddb_model::prelude::*;

use crate::model::{App, Order, Status};
use crate::support::{self, n, raw};

fn order() -> Order {
    Order {
        user: "u1".into(),
        year: 2024,
        seq: 1,
        status: Status::Open,
        total_cents: 1000,
        version: 0,
    }
}

fn sk() -> String {
    Order::key("u1", 2024, 1).sk().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn every_write_checks_and_bumps_the_version() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut o = order();
    o.create(&db).await?;
    assert_eq!(o.version, 1, "the struct holds the stored version");
    assert_eq!(raw(&db, "USER#u1", &sk()).await.unwrap()["version"], n(1));

    o.total_cents = 1200;
    o.replace(&db).await?;
    assert_eq!(o.version, 2);
    o.put(&db).await?;
    assert_eq!(o.version, 3);

    let read = Order::get(&db, "u1", 2024, 1u64).await?.unwrap();
    assert_eq!(read, o);

    // Updates bump the version too, and can require one.
    let updated = Order::update(&db, "u1", 2024, 1u64).set(Order::STATUS, Status::Shipped).await?;
    assert_eq!(updated.version, 4);
    let updated = Order::update(&db, "u1", 2024, 1u64)
        .set(Order::TOTAL_CENTS, 1500)
        .expect_version(4)
        .await?;
    assert_eq!(updated.version, 5);
    Ok(())
}

#[tokio::test]
async fn a_stale_write_is_a_version_conflict_and_changes_nothing() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut mine = order();
    mine.create(&db).await?;
    let mut theirs = Order::get(&db, "u1", 2024, 1u64).await?.unwrap();
    theirs.total_cents = 1;
    theirs.replace(&db).await?;

    let before = support::snapshot(&db).await;
    mine.total_cents = 999;
    for err in [
        mine.clone().replace(&db).await.unwrap_err(),
        mine.clone().put(&db).await.unwrap_err(),
        Order::update(&db, "u1", 2024, 1u64)
            .set(Order::TOTAL_CENTS, 5)
            .expect_version(1)
            .await
            .unwrap_err(),
        Order::delete(&db, "u1", 2024, 1u64).expect_version(1).await.unwrap_err(),
    ] {
        match &err {
            Error::VersionConflict { expected, actual, .. } => {
                assert_eq!((*expected, *actual), (1, Some(2)), "{err}");
            }
            other => panic!("expected a version conflict, got {other:?}"),
        }
        assert!(err.is_version_conflict() && err.is_condition_failed());
    }
    assert_eq!(mine.version, 1, "a failed write leaves the struct's version alone");
    assert_eq!(support::snapshot(&db).await, before, "nothing was written");

    // A fresh value (version 0) cannot overwrite a stored one either.
    let err = order().put(&db).await.unwrap_err();
    assert!(matches!(err, Error::VersionConflict { expected: 0, actual: Some(2), .. }), "{err:?}");
    assert_eq!(support::snapshot(&db).await, before);

    // A conditional delete with the right version succeeds.
    Order::delete(&db, "u1", 2024, 1u64).expect_version(2).await?;
    assert!(support::snapshot(&db).await.is_empty());
    Ok(())
}

#[tokio::test]
async fn a_version_on_a_missing_item() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let mut stale = order();
    stale.version = 3;
    let err = stale.put(&db).await.unwrap_err();
    assert!(matches!(err, Error::VersionConflict { expected: 3, actual: None, .. }), "{err:?}");
    let err = Order::update(&db, "u1", 2024, 1u64)
        .set(Order::TOTAL_CENTS, 1)
        .expect_version(3)
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");
    assert!(support::snapshot(&db).await.is_empty());
    Ok(())
}

#[tokio::test]
async fn writes_through_a_shared_reference_do_not_touch_the_value() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let o = order();
    db.create(&o).await?;
    assert_eq!(o.version, 0, "&E cannot be updated");
    assert_eq!(Order::get(&db, "u1", 2024, 1u64).await?.unwrap().version, 1);
    // The stale copy is then refused, never silently applied, even with unchanged content.
    let err = db.put(&o).await.unwrap_err();
    assert!(err.is_version_conflict(), "{err}");
    let mut changed = o.clone();
    changed.total_cents += 1;
    let err = db.put(&changed).await.unwrap_err();
    assert!(err.is_version_conflict(), "{err}");
    assert_eq!(Order::get(&db, "u1", 2024, 1u64).await?.unwrap().total_cents, o.total_cents);
    Ok(())
}

#[tokio::test]
async fn concurrent_writers_one_wins() -> Result<(), Error> {
    let db = support::db::<App>().await;
    order().create(&db).await?;
    let base = Order::get(&db, "u1", 2024, 1u64).await?.unwrap();
    let mut tasks = Vec::new();
    for i in 0..8 {
        let db = db.clone();
        let mut copy = base.clone();
        tasks.push(tokio::spawn(async move {
            copy.total_cents = i;
            copy.replace(&db).await
        }));
    }
    let mut ok = 0;
    for task in tasks {
        match task.await.expect("join") {
            Ok(()) => ok += 1,
            Err(e) => assert!(e.is_version_conflict(), "{e}"),
        }
    }
    assert_eq!(ok, 1, "exactly one writer of version 1 wins");
    assert_eq!(Order::get(&db, "u1", 2024, 1u64).await?.unwrap().version, 2);
    Ok(())
}
