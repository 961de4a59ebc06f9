//! Dry runs (issue 28): every builder hands back the requests it would send, not sent, and
//! they are the requests the same operation then sends (recorded by an interceptor).

use std::sync::{Arc, Mutex};
use std::time::{Duration, UNIX_EPOCH};

use ddb_model::intercept::{Additions, Interceptor, Request};
use ddb_model::prelude::*;
use ddb_model::{DefaultTable, Op};
use proptest::prelude::*;

use crate::edge_model::{Follow, Graph, Member};
use crate::model::{App, Folder, Order, Status, Store, User};
use crate::support;

/// Records every request it is shown.
#[derive(Default)]
pub(crate) struct Recorder(Mutex<Vec<Request>>);

impl Interceptor for Recorder {
    fn before(&self, request: &Request, _: &mut Additions) {
        self.0.lock().expect("recorder").push(request.clone());
    }
}

impl Recorder {
    pub(crate) fn take(&self) -> Vec<Request> {
        std::mem::take(&mut *self.0.lock().expect("recorder"))
    }
}

/// A handle on a fresh table with a fixed clock, recording what it sends.
async fn recorded<T: Table>() -> (Db<T>, Arc<Recorder>) {
    let at = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let recorder = Arc::new(Recorder::default());
    let db = support::db::<T>().await.with_clock(move || at).with_interceptor(recorder.clone());
    (db, recorder)
}

/// The requests as text, with what differs between two sends of the same operation (its
/// idempotency token, the random part of an update's marker attributes) blanked.
pub(crate) fn texts<'r>(requests: impl IntoIterator<Item = &'r Request>) -> Vec<String> {
    requests.into_iter().map(|r| blank(&r.to_string())).collect()
}

fn blank(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\"ClientRequestToken\":\"").or_else(|| rest.find("_ddbm.")) {
        let token = rest[at..].starts_with('"');
        let start = if token { at + "\"ClientRequestToken\":\"".len() } else { at + 6 };
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let end = tail.find(|c: char| !(c.is_ascii_hexdigit() || c == '.')).unwrap_or(tail.len());
        out.push_str("<random>");
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// Dry-runs the builder `$make`, checks it counted no request, then sends it and checks that
/// the writes it sent (all its requests, for a read) are the dry run's.
macro_rules! same {
    ($db:expr, $rec:expr, $make:expr) => {{
        $db.reset_requests();
        let dry = $make.dry_run().await?;
        assert_eq!($db.requests().total(), 0, "a read's dry run sends nothing: {dry:?}");
        assert!(!dry.is_empty());
        $rec.take();
        let _ = $make.await?;
        let sent = $rec.take();
        assert_eq!(texts(&dry), texts(&sent), "{}", stringify!($make));
        dry
    }};
    (writes $db:expr, $rec:expr, $make:expr) => {{
        same!(@writes $db, $rec, $make.dry_run(), $make)
    }};
    (@writes $db:expr, $rec:expr, $dry:expr, $real:expr) => {{
        $db.reset_requests();
        $rec.take();
        let dry = $dry.await?;
        let reads = $db.requests().total();
        assert!(!dry.is_empty());
        assert!(dry.iter().all(|r| !r.is_read()), "{dry:?}");
        let dry_reads = $rec.take();
        assert_eq!(dry_reads.len() as u64, reads, "the dry run's reads were sent and counted");
        let _ = $real.await?;
        let sent = $rec.take();
        let writes = sent.iter().filter(|r| !r.is_read());
        assert_eq!(texts(&dry), texts(writes), "{}", stringify!($real));
        let sent_reads = sent.iter().filter(|r| r.is_read()).count();
        assert_eq!(sent_reads, dry_reads.len(), "the dry run read what the operation reads");
        dry
    }};
}

fn ops(requests: &[Request]) -> Vec<Op> {
    requests.iter().map(Request::op).collect()
}

#[tokio::test]
async fn item_writes_dry_run_to_what_they_send() -> Result<(), Error> {
    let (db, rec) = recorded::<App>().await;
    let ann = User::sample("ann");
    let dry = same!(writes db, rec, ann.create(&db));
    assert_eq!(ops(&dry), [Op::PutItem]);
    assert!(User::get(&db, "ann").await?.is_some(), "created by the real run");
    let mut renamed = ann.clone();
    renamed.name = "Ann".into();
    same!(writes db, rec, renamed.put(&db));
    same!(writes db, rec, renamed.replace(&db));

    // Updates: idempotent (one UpdateItem), returning a non-idempotent result (the marked
    // UpdateItem; its second request, which removes the markers, follows from the answer),
    // without a result (a one-action transaction with a token), an upsert.
    same!(writes db, rec, User::update(&db, "ann").set(User::NICK, Some("a".to_owned())));
    let dry = User::update(&db, "ann").add(User::LOGINS, 1).dry_run().await?;
    assert_eq!(ops(&dry), [Op::UpdateItem]);
    rec.take();
    User::update(&db, "ann").add(User::LOGINS, 1).await?;
    let sent = rec.take();
    assert_eq!(ops(&sent), [Op::UpdateItem, Op::UpdateItem], "the marked update, then its cleanup");
    assert_eq!(texts(&dry), texts(&sent[..1]));
    let dry = same!(writes db, rec, User::update(&db, "ann").add(User::LOGINS, 1).no_return());
    assert_eq!(ops(&dry), [Op::TransactWriteItems]);
    same!(writes db, rec, User::update(&db, "bob")
        .set(User::ORG, "acme".to_owned())
        .set(User::NAME, "Bob".to_owned())
        .upsert());
    same!(writes db, rec, db.delete(User::key("bob")));
    same!(writes db, rec, db.delete(User::key("ann")).return_old());
    assert!(User::get(&db, "ann").await?.is_none());
    Ok(())
}

#[tokio::test]
async fn reads_dry_run_to_what_they_send_and_send_nothing() -> Result<(), Error> {
    let (db, rec) = recorded::<App>().await;
    for id in ["ann", "bob"] {
        User::sample(id).create(&db).await?;
    }
    let mut order = Order {
        user: "ann".into(),
        year: 2024,
        seq: 1,
        status: Status::Open,
        total_cents: 10,
        version: 0,
    };
    order.create(&db).await?;
    let dry = same!(db, rec, User::get(&db, "ann"));
    assert_eq!(ops(&dry), [Op::GetItem]);
    same!(db, rec, User::get(&db, "ann").consistent());
    let dry = same!(db, rec, db.batch_get(vec![User::key("ann"), User::key("bob")]));
    assert_eq!(ops(&dry), [Op::BatchGetItem]);
    let dry = same!(db, rec, db.scan::<User>().segments(3));
    assert_eq!(ops(&dry), [Op::Scan; 3]);
    let get = || {
        let mut read = db.transact_get();
        read.get(User::key("ann"));
        read.get(Order::key("ann", 2024, 1));
        read
    };
    let dry = same!(db, rec, get());
    assert_eq!(ops(&dry), [Op::TransactGetItems]);
    let (db, rec) = recorded::<DefaultTable>().await;
    let store = Store {
        country: "USA".into(),
        state: "NY".into(),
        city: "NYC".into(),
        zip: "10001".into(),
        address: "1 Main St".into(),
        square_feet: 100,
    };
    store.create(&db).await?;
    let dry = same!(db, rec, Store::query(&db, "USA").state("NY").into_query());
    assert_eq!(ops(&dry), [Op::Query]);
    Ok(())
}

#[tokio::test]
async fn batches_dry_run_to_their_chunks() -> Result<(), Error> {
    let (db, rec) = recorded::<App>().await;
    let users: Vec<User> = (0..30).map(|i| User::sample(&format!("u{i:02}"))).collect();
    db.reset_requests();
    let dry = users.iter().fold(db.batch_write(), |b, u| b.put(u)).dry_run().await?;
    assert_eq!(ops(&dry), [Op::BatchWriteItem; 2], "25 writes per request");
    assert_eq!(db.requests().total(), 0);
    let sizes = |requests: &[Request]| -> Vec<usize> {
        let mut sizes: Vec<usize> = requests
            .iter()
            .map(|r| match r {
                Request::BatchWriteItem(b) => {
                    b.request_items().map_or(0, |t| t.values().map(Vec::len).sum())
                }
                _ => 0,
            })
            .collect();
        sizes.sort();
        sizes
    };
    assert_eq!(sizes(&dry), [5, 25]);
    rec.take();
    users.iter().fold(db.batch_write(), |b, u| b.put(u)).await?;
    let mut sent = texts(&rec.take());
    let mut dry = texts(&dry);
    // The chunks are sent in parallel: compare them in any order.
    sent.sort();
    dry.sort();
    assert_eq!(dry, sent);
    let keys: Vec<_> = users.iter().map(|u| User::key(&u.id)).collect();
    db.reset_requests();
    let dry = db.batch_get(keys.clone()).dry_run().await?;
    assert_eq!(ops(&dry), [Op::BatchGetItem], "30 keys fit one request of 100");
    assert_eq!(db.requests().total(), 0);
    Ok(())
}

#[tokio::test]
async fn transactions_dry_run_to_what_they_send() -> Result<(), Error> {
    let (db, rec) = recorded::<App>().await;
    User::sample("ann").create(&db).await?;
    let cat = User::sample("cat");
    let make = || {
        db.transaction()
            .create(&cat)
            .update(User::key("ann"), |u| u.set(User::NICK, Some("annie".to_owned())))
            .delete(User::key("nobody"))
    };
    let dry = same!(writes db, rec, make());
    assert_eq!(ops(&dry), [Op::TransactWriteItems]);
    let Request::TransactWriteItems(t) = &dry[0] else { unreachable!() };
    assert_eq!(t.transact_items().len(), 3);
    Ok(())
}

#[tokio::test]
async fn a_tree_move_and_insert_dry_run_to_their_transaction_after_reading() -> Result<(), Error> {
    let (db, rec) = recorded::<DefaultTable>().await;
    let tree = Folder::tree(&db, "d");
    for path in ["a", "a/x", "a/x/y", "b"] {
        tree.insert(&Folder::at("d", path)).await?;
    }
    let p = |s: &str| s.parse::<ddb_model::TreePath>().expect("path");
    let dry = same!(writes db, rec, tree.move_subtree(&p("a"), &p("b/a")));
    assert_eq!(ops(&dry), [Op::TransactWriteItems]);
    let Request::TransactWriteItems(t) = &dry[0] else { unreachable!() };
    assert!(t.transact_items().len() >= 6, "three deletes, three puts: {t:?}");
    let node = Folder::at("d", "c");
    let dry = same!(@writes db, rec, db.dry_run(tree.insert(&node)), tree.insert(&node));
    assert!(dry.iter().all(|r| !r.is_read()));

    // A refused move reads, finds the problem and says so, as when it is sent.
    let dry_err = tree.move_subtree(&p("b"), &p("b/a/b")).dry_run().await.unwrap_err();
    let err = tree.move_subtree(&p("b"), &p("b/a/b")).await.unwrap_err();
    assert_eq!(dry_err.to_string(), err.to_string());
    assert!(dry_err.is_tree_cycle());
    Ok(())
}

#[tokio::test]
async fn an_edge_link_and_unlink_dry_run_to_their_transaction() -> Result<(), Error> {
    let (db, rec) = recorded::<Graph>().await;
    for id in ["ann", "bob"] {
        Member::new(id).create(&db).await?;
    }
    let follows = Follow::edges(&db);
    let edge = Follow::new("ann", "bob");
    let dry = same!(@writes db, rec, db.dry_run(follows.link(&edge)), follows.link(&edge));
    assert_eq!(ops(&dry), [Op::TransactWriteItems]);
    let dry = same!(
        @writes db,
        rec,
        db.dry_run(follows.unlink("ann", "bob")),
        follows.unlink("ann", "bob")
    );
    assert_eq!(ops(&dry), [Op::TransactWriteItems]);
    Ok(())
}

#[tokio::test]
async fn a_dry_run_writes_nothing_and_refuses_what_sending_refuses() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let ann = User::sample("ann");
    let before = support::snapshot(&db).await;
    ann.create(&db).dry_run().await?;
    User::update(&db, "ann").add(User::LOGINS, 1).dry_run().await?;
    db.delete(User::key("ann")).dry_run().await?;
    assert_eq!(support::snapshot(&db).await, before);

    // A key over DynamoDB's limit: the same typed error, nothing sent, nothing counted.
    db.reset_requests();
    let long = User::sample(&"x".repeat(3000));
    let dry = long.create(&db).dry_run().await.unwrap_err();
    let sent = long.create(&db).await.unwrap_err();
    assert!(matches!(dry, Error::InvalidKey { .. }), "{dry}");
    assert_eq!(dry.to_string(), sent.to_string());
    // An item over 400 KB.
    let mut large = User::sample("large");
    large.tags = vec!["x".repeat(500_000)];
    let dry = large.create(&db).dry_run().await.unwrap_err();
    assert!(matches!(dry, Error::ItemTooLarge { .. }), "{dry}");
    assert_eq!(dry.to_string(), large.create(&db).await.unwrap_err().to_string());
    assert_eq!(db.requests().total(), 0, "{:?}", db.requests());
    Ok(())
}

#[tokio::test]
async fn a_dry_run_prints_as_dynamodb_json() -> Result<(), Error> {
    let db = support::db::<App>().await;
    let dry = User::update(&db, "ann").set(User::NAME, "Ann".to_owned()).dry_run().await?;
    let json: serde_json::Value = serde_json::from_str(&dry[0].to_json()).expect("JSON");
    assert_eq!(json["TableName"], db.table_name());
    assert_eq!(json["Key"]["pk"]["S"], "USER#ann");
    assert_eq!(json["Key"]["sk"]["S"], "PROFILE");
    let update = json["UpdateExpression"].as_str().expect("an update expression");
    assert!(update.starts_with("SET "), "{update}");
    let names = json["ExpressionAttributeNames"].as_object().expect("names");
    assert!(names.values().any(|n| n == "name"));
    let values = json["ExpressionAttributeValues"].as_object().expect("values");
    assert!(values.values().any(|v| v["S"] == "Ann"), "{values:?}");
    assert!(dry[0].to_string().starts_with("UpdateItem {"));
    Ok(())
}

/// Requests as text, or the error as text.
type Sent = Result<Vec<String>, String>;

fn user() -> impl Strategy<Value = User> {
    (
        "[a-z0-9#~%/]{1,12}",
        any::<String>(),
        proptest::option::of(any::<String>()),
        any::<u64>(),
        proptest::collection::vec(any::<String>(), 0..4),
        proptest::collection::btree_map("[a-z]{1,6}", any::<String>(), 0..3),
    )
        .prop_map(|(id, name, email, logins, tags, address)| User {
            org: "acme".into(),
            name,
            email,
            logins,
            tags,
            nick: None,
            address,
            id,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("DDB_PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
    ))]

    /// Any user: the dry runs of its create, put, update and delete are the requests then
    /// sent, or the same error.
    #[test]
    fn dry_runs_of_arbitrary_values_are_what_is_sent(u in user(), nick in any::<String>()) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let pairs = runtime.expect("runtime").block_on(async {
            let (db, rec) = recorded::<App>().await;
            let mut pairs: Vec<(Sent, Sent)> = vec![];
            macro_rules! pair {
                ($make:expr) => {{
                    let dry = $make.dry_run().await.map(|d| texts(&d)).map_err(|e| e.to_string());
                    rec.take();
                    let sent = $make.await.map(drop).map_err(|e| e.to_string());
                    let writes = texts(rec.take().iter().filter(|r| !r.is_read()));
                    pairs.push((dry, sent.map(|()| writes)));
                }};
            }
            pair!(u.create(&db));
            pair!(u.put(&db));
            pair!(User::update(&db, &u.id).set(User::NICK, Some(nick.clone())).no_return());
            pair!(User::update(&db, &u.id).set(User::NAME, nick.clone()));
            pair!(db.delete(User::key(&u.id)));
            pairs
        });
        for (dry, sent) in pairs {
            prop_assert_eq!(dry, sent);
        }
    }
}

#[tokio::test]
async fn counted_requests_of_a_write_dry_run_are_its_reads() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let tree = Folder::tree(&db, "d");
    for path in ["a", "a/x", "b"] {
        tree.insert(&Folder::at("d", path)).await?;
    }
    db.reset_requests();
    let p = |s: &str| s.parse::<ddb_model::TreePath>().expect("path");
    let dry = tree.move_subtree(&p("a"), &p("b/a")).dry_run().await?;
    let counted = db.requests();
    assert_eq!(counted.get(Op::TransactWriteItems), 0);
    assert!(counted.total() > 0, "a move reads its subtree first");
    assert_eq!(counted.total(), counted.get(Op::Query) + counted.get(Op::GetItem));
    assert_eq!(dry.len(), 1);
    assert!(Folder::get(&db, "d", p("a")).await?.is_some(), "not moved");
    Ok(())
}
