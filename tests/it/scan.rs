//! Parallel scan: every item of the entity exactly once, whatever the segments; other entity
//! types never come back; filters; pages and requests; raw items.

use std::collections::HashMap;

use ddb_model::prelude::*;
use ddb_model::{Item, Op};
use futures_util::{StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};

use crate::model::{App, Order, Status, User};
use crate::support::{self, s};

/// Another entity type with a `logins` field, so a filter on it would match these items too
/// if the entity-type filter were missing.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "BOT#<id>", sk = "BOT")]
struct Bot {
    id: String,
    logins: u64,
}

fn user(i: usize) -> User {
    let mut u = User::sample(&format!("u{i:03}"));
    u.logins = i as u64;
    u
}

/// `users` users, 40 bots and 25 orders.
async fn populated(users: usize) -> Result<(Db<App>, Vec<User>), Error> {
    let db = support::db::<App>().await;
    let all: Vec<User> = (0..users).map(user).collect();
    let bots: Vec<Bot> = (0..40).map(|i| Bot { id: format!("b{i}"), logins: 1000 }).collect();
    let orders: Vec<Order> = (0..25)
        .map(|i| Order {
            user: "u001".into(),
            year: 2024,
            seq: i,
            status: Status::Open,
            total_cents: 0,
            version: 0,
        })
        .collect();
    let mut batch = db.batch_put(&all).put_all(&bots);
    for order in &orders {
        batch = batch.put_unchecked(order);
    }
    batch.await?;
    db.reset_requests();
    Ok((db, all))
}

fn sorted(mut users: Vec<User>) -> Vec<User> {
    users.sort_by(|a, b| a.id.cmp(&b.id));
    users
}

/// The pages a plain SDK scan of `segment` takes with `limit` (the reference our scan must
/// match request for request).
async fn reference_pages(db: &Db<App>, segment: i32, total: i32, limit: i32) -> u64 {
    let mut pages = 0;
    let mut start = None;
    loop {
        let mut scan = db.client().scan().table_name(db.table_name()).limit(limit);
        if total > 1 {
            scan = scan.segment(segment).total_segments(total);
        }
        let out = scan.set_exclusive_start_key(start).send().await.expect("reference scan");
        pages += 1;
        start = out.last_evaluated_key.filter(|k| !k.is_empty());
        if start.is_none() {
            return pages;
        }
    }
}

#[tokio::test]
async fn every_item_comes_back_exactly_once_whatever_the_segments() -> Result<(), Error> {
    let (db, all) = populated(120).await?;
    for segments in [1u32, 2, 3, 4, 7, 16] {
        db.reset_requests();
        let found = db.scan::<User>().segments(segments).consistent().all().await?;
        assert_eq!(found.len(), 120, "{segments} segments: no item twice");
        assert_eq!(sorted(found), all, "{segments} segments");
        // Each segment fits one page (well under 1 MB): one request per segment.
        assert_eq!(db.requests().get(Op::Scan), u64::from(segments));
        assert_eq!(db.requests().total(), u64::from(segments));
    }
    // More segments than parallel slots: still every segment, each once.
    db.reset_requests();
    let found = db.scan::<User>().segments(9).concurrency(2).await?;
    assert_eq!(sorted(found), all);
    assert_eq!(db.requests().get(Op::Scan), 9);

    let orders = db.scan::<Order>().segments(3).all().await?;
    assert_eq!(orders.len(), 25);
    assert!(orders.iter().all(|o| o.version == 1), "put_unchecked stored version 1");
    Ok(())
}

#[tokio::test]
async fn other_entity_types_never_come_back_and_filters_apply() -> Result<(), Error> {
    let (db, all) = populated(100).await?;
    // Bots have logins = 1000 and match the filter; they are not users.
    let regulars = db.scan::<User>().segments(4).filter(User::LOGINS.ge(60)).all().await?;
    assert_eq!(sorted(regulars), all[60..].to_vec());
    assert_eq!(db.requests().get(Op::Scan), 4);

    let filter = User::LOGINS.lt(10) | User::ID.eq("u050");
    let few = db.scan::<User>().filter(filter).filter(User::ORG.eq("acme")).all().await?;
    let expected: Vec<User> = all[..10].iter().chain([&all[50]]).cloned().collect();
    assert_eq!(sorted(few), expected, "filters combine with AND");

    assert_eq!(db.scan::<User>().segments(3).count().await?, 100);
    assert_eq!(db.scan::<User>().filter(User::LOGINS.ge(90)).count().await?, 10);
    assert_eq!(db.scan::<Bot>().segments(2).count().await?, 40);
    assert_eq!(db.scan::<Bot>().filter(Bot::LOGINS.ge(60)).all().await?.len(), 40);
    Ok(())
}

#[tokio::test]
async fn pages_follow_the_page_size() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let all: Vec<User> = (0..25).map(user).collect();
    db.batch_put(&all).await?;
    db.reset_requests();
    let found = db.scan::<User>().page_size(10).all().await?;
    assert_eq!(sorted(found), all);
    assert_eq!(db.requests().get(Op::Scan), 3, "25 items, 10 per page: 10 + 10 + 5");

    db.reset_requests();
    assert_eq!(db.scan::<User>().page_size(10).count().await?, 25);
    assert_eq!(db.requests().get(Op::Scan), 3);
    Ok(())
}

#[tokio::test]
async fn paged_parallel_scans_send_exactly_the_pages_of_each_segment() -> Result<(), Error> {
    let (db, all) = populated(150).await?;
    for (segments, limit) in [(1u32, 7u32), (3, 10), (4, 1), (5, 40)] {
        let mut expected = 0;
        for segment in 0..segments {
            expected += reference_pages(&db, segment as i32, segments as i32, limit as i32).await;
        }
        db.reset_requests();
        let found = db.scan::<User>().segments(segments).page_size(limit).all().await?;
        assert_eq!(sorted(found), all, "{segments} segments of pages of {limit}");
        assert_eq!(
            db.requests().get(Op::Scan),
            expected,
            "{segments} segments of pages of {limit}"
        );
        // Limit counts items read before the entity-type filter: more pages than users alone.
        assert!(expected >= u64::from(215 / limit), "{expected} pages");
    }
    Ok(())
}

#[tokio::test]
async fn the_stream_yields_items_as_pages_arrive() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let all: Vec<User> = (0..95).map(user).collect();
    db.batch_put(&all).await?;
    db.reset_requests();

    let mut stream = db.scan::<User>().page_size(10).stream();
    let first: Vec<User> = (&mut stream).take(5).try_collect().await?;
    assert_eq!(first.len(), 5);
    assert_eq!(db.requests().get(Op::Scan), 1, "five items need one page, not the table");
    let rest: Vec<User> = stream.try_collect().await?;
    assert_eq!(sorted(first.into_iter().chain(rest).collect()), all);
    assert_eq!(db.requests().get(Op::Scan), 10, "9 full pages and one of 5");
    Ok(())
}

#[tokio::test]
async fn raw_items_of_every_entity_type() -> Result<(), Error> {
    let (db, _) = populated(30).await?;
    let items: Vec<Item> = db.scan_items().segments(3).consistent().all().await?;
    assert_eq!(items.len(), 30 + 40 + 25);
    let mut types: HashMap<String, usize> = HashMap::new();
    for item in &items {
        let Some(ddb_model::aws_sdk_dynamodb::types::AttributeValue::S(t)) = item.get("_type")
        else {
            panic!("an item without a type: {item:?}");
        };
        *types.entry(t.clone()).or_default() += 1;
    }
    assert_eq!(
        types,
        HashMap::from([("User".into(), 30), ("Bot".into(), 40), ("Order".into(), 25)])
    );
    assert_eq!(db.requests().get(Op::Scan), 3);

    // A foreign item the typed scans skip is still exported.
    support::put_raw(
        &db,
        HashMap::from([("pk".to_owned(), s("RAW")), ("sk".to_owned(), s("RAW"))]),
    )
    .await;
    assert_eq!(db.scan_items().count().await?, 96);
    assert_eq!(db.scan_items().page_size(50).stream().try_collect::<Vec<_>>().await?.len(), 96);
    assert_eq!(db.scan::<User>().count().await?, 30);
    Ok(())
}

#[tokio::test]
async fn a_filter_that_cannot_be_built_sends_nothing() -> Result<(), Error> {
    let (db, _) = populated(5).await?;
    let empty: Vec<u64> = Vec::new();
    let err = crate::no_request!(
        db,
        db.scan::<User>().segments(4).filter(User::LOGINS.is_in(empty.clone())).all().await
    )
    .unwrap_err();
    assert!(
        matches!(
            &err,
            Error::InvalidRequest { path, problem: RequestProblem::InOperands { count: 0, max: 100 } }
                if path == "logins"
        ),
        "{err:?}"
    );
    let results: Vec<Result<User, Error>> = crate::no_request!(
        db,
        db.scan::<User>().filter(User::LOGINS.is_in(empty.clone())).stream().collect().await
    );
    assert_eq!(results.len(), 1, "the error, then the end");
    assert!(results[0].is_err());
    crate::no_request!(
        db,
        assert!(db.scan::<User>().filter(User::LOGINS.is_in(empty)).count().await.is_err())
    );
    Ok(())
}

#[tokio::test]
async fn a_corrupt_item_is_an_error_in_the_stream() -> Result<(), Error> {
    let (db, _) = populated(20).await?;
    // A `User` whose stored key does not match its fields.
    let mut item = ddb_model::entity::to_item(&user(999), None)?;
    item.insert("pk".into(), s("USER#someone-else"));
    support::put_raw(&db, item).await;
    let err = db.scan::<User>().segments(2).all().await.unwrap_err();
    assert!(matches!(err, Error::CorruptItem { entity: "User", .. }), "{err:?}");
    Ok(())
}

/// A bot in gsi2 too (another entity type in the same sparse index).
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "BOT#<id>", sk = "MAILBOT")]
#[index(gsi2, pk = "EMAIL#<email>")]
struct MailBot {
    id: String,
    email: String,
}

#[tokio::test]
async fn scanning_a_sparse_index_reads_only_its_items() -> Result<(), Error> {
    let (db, users) = populated(60).await?;
    // Two users in three leave the sparse gsi2 (no e-mail); a bot joins it.
    let in_index: Vec<User> = users.iter().step_by(3).cloned().collect();
    let without: Vec<User> = users
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 != 0)
        .map(|(_, u)| User { email: None, ..u.clone() })
        .collect();
    db.batch_put(&without).await?;
    MailBot { id: "m".into(), email: "m@bots.test".into() }.create(&db).await?;
    db.reset_requests();

    for segments in [1, 3] {
        let before = db.requests();
        let found = db.scan::<User>().index("gsi2").segments(segments).all().await?;
        assert_eq!(sorted(found), sorted(in_index.clone()), "{segments} segments");
        let spent = db.requests() - before;
        assert_eq!(
            spent.items_read(),
            in_index.len() as u64 + 1,
            "only the index: users and the bot"
        );
        assert!(spent.get(Op::Scan) >= u64::from(segments));
    }
    let count = db.scan::<User>().index("gsi2").filter(User::LOGINS.ge(30)).count().await?;
    assert_eq!(count, in_index.iter().filter(|u| u.logins >= 30).count());
    let bots = db.scan::<MailBot>().index("gsi2").all().await?;
    assert_eq!(bots.len(), 1);
    // Streams and pages work as on the table.
    let streamed: Vec<User> =
        db.scan::<User>().index("gsi2").segments(2).page_size(5).stream().try_collect().await?;
    assert_eq!(streamed.len(), in_index.len());
    // An index the table does not declare: refused before sending.
    let err = crate::no_request!(db, db.scan::<User>().index("nope").all().await.unwrap_err());
    assert!(err.to_string().contains("nope"), "{err}");
    Ok(())
}
