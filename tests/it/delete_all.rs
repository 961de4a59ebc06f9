//! `Query::delete_all`: every item a query reads, deleted in batches of 25; an entity's items
//! only, or a whole partition whatever the types; bounded by a limit; finished by running it
//! again after an interruption at any request.

use ddb_model::prelude::*;
use ddb_model::{Op, TreePath};

use crate::model::{App, Folder, Order, Status, User};
use crate::support::{db, snapshot_keys};
use ddb_model::testing::{Faults, Harness};

fn order(user: &str, seq: u64) -> Order {
    Order { user: user.into(), year: 2026, seq, status: Status::Open, total_cents: 100, version: 0 }
}

/// `n` orders of `user`, their profile, and an untouched neighbour's orders.
async fn fill(db: &Db<App>, user: &str, n: u64) -> Result<(), Error> {
    let mut orders: Vec<Order> = (0..n).map(|seq| order(user, seq)).collect();
    orders.extend((0..7).map(|seq| order("neighbour", seq)));
    let mut batch = db.batch_write().put(&User::sample(user));
    for o in &orders {
        batch = batch.put_unchecked(o); // versioned: batches write them as they are
    }
    batch.await?;
    Ok(())
}

#[tokio::test]
async fn an_entitys_items_go_and_the_rest_of_the_partition_stays() -> Result<(), Error> {
    let db = db::<App>().await;
    fill(&db, "ann", 130).await?;
    let before = db.requests();
    let mut seen = Vec::new();
    let deleted = Order::query(&db, "ann").delete_all().on_progress(|n| seen.push(n)).await?;
    let used = db.requests() - before;
    assert_eq!(deleted, 130);
    // 130 deletes are 6 batches; the keys fit one page.
    assert_eq!(used.get(Op::BatchWriteItem), 6, "{used}");
    assert_eq!(used.get(Op::Query), 1, "{used}");
    assert_eq!(seen.last(), Some(&130));
    assert!(Order::query(&db, "ann").all().await?.is_empty());
    assert!(User::get(&db, "ann").await?.is_some(), "another entity of the partition stays");
    assert_eq!(Order::query(&db, "neighbour").all().await?.len(), 7);
    // Nothing left: nothing sent but the read.
    let before = db.requests();
    assert_eq!(Order::query(&db, "ann").delete_all().await?, 0);
    assert_eq!((db.requests() - before).get(Op::BatchWriteItem), 0);
    Ok(())
}

#[tokio::test]
async fn a_whole_partition_goes_whatever_its_types() -> Result<(), Error> {
    let db = db::<App>().await;
    fill(&db, "ann", 40).await?;
    let others = snapshot_keys(&db).await.into_iter().filter(|k| !k.starts_with("USER#ann |"));
    let others: Vec<String> = others.collect();
    let deleted = Order::partition(&db, "ann").items().delete_all().await?;
    assert_eq!(deleted, 41, "40 orders and the profile");
    assert_eq!(snapshot_keys(&db).await, others);
    Ok(())
}

#[tokio::test]
async fn a_limit_or_a_key_range_bounds_the_delete() -> Result<(), Error> {
    let db = db::<App>().await;
    fill(&db, "ann", 30).await?;
    assert_eq!(Order::query(&db, "ann").limit(10).delete_all().await?, 10);
    assert_eq!(Order::query(&db, "ann").all().await?.len(), 20);
    assert_eq!(Order::query(&db, "ann").year(2026).seq_lt(25).delete_all().await?, 15);
    let left: Vec<u64> = Order::query(&db, "ann").all().await?.iter().map(|o| o.seq).collect();
    assert_eq!(left, [25, 26, 27, 28, 29]);
    Ok(())
}

#[tokio::test]
async fn a_tree_partition_goes_with_its_bookkeeping() -> Result<(), Error> {
    let db: Db = db().await;
    let tree = Folder::tree(&db, "D");
    for path in ["a", "a/b", "a/b/c", "d"] {
        tree.insert(&Folder { drive: "D".into(), path: path.parse::<TreePath>()? }).await?;
    }
    assert!(Folder::partition(&db, "D").items().delete_all().await? >= 4);
    assert!(tree.nodes().all().await?.is_empty());
    assert!(snapshot_keys(&db).await.iter().all(|k| !k.starts_with("DRIVE#D |")));
    Ok(())
}

/// Cut after each request of the delete: running it again finishes it, whatever was done.
#[tokio::test]
async fn an_interrupted_delete_is_finished_by_running_it_again() -> Result<(), Error> {
    let direct = db::<App>().await;
    // Without faults: 1 query page and 11 batches.
    for k in 0..12 {
        fill(&direct, "ann", 260).await?;
        let cut_off = Harness::on(direct.clone(), Faults::default().fail_from(k)).await?;
        let cut = cut_off.db().clone();
        let err = Order::query(&cut, "ann").delete_all().await;
        assert!(err.is_err(), "cut after {k} requests: {err:?}");
        let left = Order::query(&direct, "ann").all().await?.len() as u64;
        // Running it again deletes exactly what is left.
        assert_eq!(Order::query(&direct, "ann").delete_all().await?, left, "cut after {k}");
        assert!(Order::query(&direct, "ann").all().await?.is_empty());
        assert!(User::get(&direct, "ann").await?.is_some());
        assert_eq!(Order::query(&direct, "neighbour").all().await?.len(), 7);
    }
    Ok(())
}
