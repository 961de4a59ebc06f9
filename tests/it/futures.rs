//! Builders are futures (not only `IntoFuture`): `join_all` takes them without `.send()`.

use std::future::Future;

use ddb_model::prelude::*;
use ddb_model::{Op, UpdateActions};
use futures_util::future::join_all;

use crate::model::{App, Order, Status, User};
use crate::support;

fn all_ok<T>(results: Vec<Result<T, Error>>) -> Result<Vec<T>, Error> {
    results.into_iter().collect()
}

fn is_future<F: Future + Send + Sync>(_: &F) {}

#[tokio::test]
async fn join_all_takes_every_builder_without_send() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let users: Vec<User> = (0..5).map(|i| User::sample(&format!("j{i}"))).collect();

    all_ok(join_all(users.iter().map(|u| u.create(&db))).await)?;
    all_ok(join_all(users.iter().map(|u| u.put(&db))).await)?;
    all_ok(join_all(users.iter().map(|u| u.replace(&db))).await)?;
    let updated = all_ok(
        join_all(users.iter().map(|u| User::update(&db, &u.id).add(User::LOGINS, 1))).await,
    )?;
    assert!(updated.iter().all(|u| u.logins == 1));
    all_ok(
        join_all(users.iter().map(|u| User::update(&db, &u.id).add(User::LOGINS, 1).no_return()))
            .await,
    )?;
    let found = all_ok(join_all(users.iter().map(|u| User::get(&db, &u.id))).await)?;
    assert!(found.iter().all(|u| u.as_ref().is_some_and(|u| u.logins == 2)));
    let partitions = all_ok(join_all(users.iter().map(|u| User::partition(&db, &u.id))).await)?;
    assert!(partitions.iter().all(|p| p.len() == 1));
    let scans = all_ok(join_all([db.scan::<User>(), db.scan::<User>().segments(2)]).await)?;
    assert!(scans.iter().all(|s| s.len() == 5));
    let raw = all_ok(join_all([db.scan_items(), db.scan_items()]).await)?;
    assert!(raw.iter().all(|s| s.len() == 5));

    // Batches.
    let keys = || users.iter().map(|u| User::key(&u.id));
    let got = all_ok(join_all([db.batch_get(keys()), db.batch_get(keys())]).await)?;
    assert!(got.iter().all(|g| g.iter().all(Option::is_some)));
    let by_key = all_ok(join_all([db.batch_get(keys()).by_key()]).await)?;
    assert_eq!(by_key[0].len(), 5);
    let order = |seq| Order {
        user: "j0".into(),
        year: 2024,
        seq,
        status: Status::Open,
        total_cents: 1,
        version: 0,
    };
    let orders: Vec<Order> = (0..4).map(order).collect();
    all_ok(
        join_all(
            orders.chunks(2).map(|c| c.iter().fold(db.batch_write(), |b, o| b.put_unchecked(o))),
        )
        .await,
    )?;
    // Generated query levels are futures too.
    let levels = all_ok(join_all([Order::query(&db, "j0"), Order::query(&db, "nobody")]).await)?;
    assert_eq!((levels[0].len(), levels[1].len()), (4, 0));
    let years = all_ok(join_all([Order::query(&db, "j0").year(2024)]).await)?;
    assert_eq!(years[0].len(), 4);
    is_future(&Order::query(&db, "j0").year(2024));
    let mut read = db.batch_read();
    let slot = read.get(User::key("j0"));
    let reads = all_ok(join_all([read]).await)?;
    assert!(reads[0].get(slot)?.is_some());

    // Transactions.
    all_ok(
        join_all(users.iter().map(|u| {
            db.transaction().update(User::key(&u.id), |up| {
                up.actions(UpdateActions::new().add(User::LOGINS, 1))
            })
        }))
        .await,
    )?;
    let mut tg = db.transact_get();
    let first = tg.get(User::key("j0"));
    let out = all_ok(join_all([tg]).await)?;
    assert_eq!(out[0].get(&first)?.map(|u| u.logins), Some(3));

    // Deletes, returning the old item or not.
    let olds =
        all_ok(join_all(users[..2].iter().map(|u| User::delete(&db, &u.id).return_old())).await)?;
    assert!(olds.iter().all(Option::is_some));
    all_ok(join_all(users[2..].iter().map(|u| User::delete(&db, &u.id))).await)?;
    assert_eq!(db.scan::<User>().count().await?, 0);

    // `.await` and `.send()` still work, and the builders stay `Send + Sync` futures.
    let put = users[0].create(&db);
    is_future(&put);
    put.await?;
    users[0].put(&db).send().await?;
    is_future(&User::get(&db, "j0"));
    is_future(&User::update(&db, "j0").add(User::LOGINS, 1));
    is_future(&User::delete(&db, "j0"));
    is_future(&User::partition(&db, "j0"));
    is_future(&db.batch_get([User::key("j0")]));
    is_future(&db.scan::<User>().index("gsi1"));
    let before = db.requests();
    let _dropped = users[0].put(&db); // never polled: nothing sent
    assert_eq!((db.requests() - before).get(Op::PutItem), 0);
    Ok(())
}

fn is_send_future<F: Future + Send>(_: &F) {}

/// Every builder of multi-request operations is a future too (one await convention): tree
/// moves, deletes, reads of descendants and bulk loads, closure updates, migrations and
/// `delete_all`.
#[tokio::test]
async fn join_all_takes_tree_and_bulk_builders() -> Result<(), Error> {
    use crate::model::{Cat, Dir, Folder};
    use ddb_model::tree::TreePath;

    let app = support::db::<App>().await;
    let db = support::db::<ddb_model::DefaultTable>().await;
    let drive = Folder::tree(&db, "J");
    let folders = ["a", "b", "c"].map(|p| Folder::at("J", p));
    all_ok(join_all(folders.iter().map(|f| drive.insert(f))).await)?;
    let nodes =
        all_ok(join_all([drive.bulk_load(["a/x", "a/y"].map(|p| Folder::at("J", p)))]).await)?;
    assert_eq!(nodes[0].nodes, 2);
    let paths: Vec<TreePath> = ["a", "b"].iter().map(|p| p.parse()).collect::<Result<_, _>>()?;
    let below = all_ok(join_all(paths.iter().map(|p| drive.descendants(p))).await)?;
    assert_eq!((below[0].len(), below[1].len()), (2, 0));
    let counts =
        all_ok(join_all(paths.iter().map(|p| drive.descendants(p).depth(0..).count())).await)?;
    assert_eq!(counts, [3, 1]);
    let c: TreePath = "c".parse()?;
    let moved = all_ok(join_all(paths.iter().map(|p| drive.move_under(p, &c))).await)?;
    assert!(moved.iter().all(|r| r.nodes >= 1));
    let gone = all_ok(join_all([drive.delete_subtree(&c)]).await)?;
    assert_eq!(gone[0].nodes, 5);

    let org = Dir::tree(&db, "J");
    for (id, parent) in [("r", None), ("s", Some("r")), ("t", Some("r"))] {
        org.insert(&Dir::new("J", id, parent)).await?;
    }
    let renamed = |id: &str| org.update(id).set(Dir::NAME, format!("renamed {id}"));
    all_ok(join_all(["s", "t"].map(renamed)).await)?;
    assert_eq!(org.get("t").await?.map(|d| d.name), Some("renamed t".into()));
    let moves = all_ok(join_all([org.move_to_top("s"), org.move_to_top("t")]).await)?;
    assert_eq!(moves.iter().map(|r| r.nodes).sum::<usize>(), 2);
    assert_eq!(org.roots().all().await?.len(), 3);

    let shop = Cat::tree(&db, "J");
    is_send_future(&shop.descendants("x").concurrency(2));
    is_send_future(&shop.delete_subtree("x").transaction_limit(3));
    is_send_future(&app.migrate::<User>());
    is_send_future(&User::partition(&app, "j0").delete_all());
    let wiped = all_ok(join_all([Dir::partition(&db, "J").delete_all()]).await)?;
    assert!(wiped[0] >= 3);
    Ok(())
}
