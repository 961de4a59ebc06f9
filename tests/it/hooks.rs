//! Per-entity hooks: `#[entity(validate = ..)]` runs before every write of a whole value (put,
//! create, replace, batch, transaction, tree and edge writes; never `update`, which carries
//! no whole value) and refuses it with `Error::Hook` before anything is sent;
//! `#[entity(after_read = ..)]` runs on every read, and may not change the key or the
//! version.

use std::fmt;

use ddb_model::Edge;
use ddb_model::entity::to_item;
use ddb_model::error::HookProblem;
use ddb_model::prelude::*;
use ddb_model::stream::{Change, StreamEvent};
use ddb_model::{Collection, DefaultTable};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::support::{self, s};

/// The validation's own error type.
#[derive(Debug, PartialEq)]
enum OrderError {
    NegativeTotal(i64),
    Untitled,
}

impl fmt::Display for OrderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OrderError::NegativeTotal(t) => write!(f, "the total {t} is negative"),
            OrderError::Untitled => f.write_str("the title is empty"),
        }
    }
}

impl std::error::Error for OrderError {}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "CUST#<customer>", sk = "ORDER#<id>", version = version)]
#[entity(validate = check_order, after_read = Order::normalize)]
struct Order {
    customer: String,
    id: String,
    total: i64,
    title: String,
    #[serde(default)]
    version: u64,
}

fn check_order(order: &Order) -> Result<(), OrderError> {
    if order.total < 0 {
        return Err(OrderError::NegativeTotal(order.total));
    }
    if order.title.is_empty() { Err(OrderError::Untitled) } else { Ok(()) }
}

impl Order {
    /// Titles written by other services in any case read in lower case.
    fn normalize(&mut self) {
        self.title = self.title.to_lowercase();
    }

    fn new(id: &str, total: i64) -> Order {
        Order {
            customer: "c".into(),
            id: id.into(),
            total,
            title: format!("Order {id}"),
            version: 0,
        }
    }
}

#[derive(Collection, Debug, PartialEq)]
enum Orders {
    Order(Order),
}

/// The validation error an error carries, if it is the validation's.
fn refusal(err: &Error) -> Option<&OrderError> {
    err.validation_error().and_then(|e| e.downcast_ref())
}

#[tokio::test]
async fn validation_refuses_every_write_of_a_whole_value_before_sending() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let mut ok = Order::new("ok", 5);
    ok.create(&db).await?;
    let before = support::snapshot(&db).await;
    db.reset_requests();

    let mut bad = Order::new("bad", -3);
    let err = bad.create(&db).await.unwrap_err();
    assert!(err.is_invalid_entity() && err.is_invalid_input(), "{err}");
    assert_eq!(refusal(&err), Some(&OrderError::NegativeTotal(-3)));
    assert_eq!(
        err.to_string(),
        "`Order` (\"CUST#c\", \"ORDER#bad\"): refused by its validation: the total -3 is negative"
    );
    // The user's error is the end of the `source` chain.
    let hook = std::error::Error::source(&err).expect("the hook problem");
    let user = hook.source().expect("the user's error");
    assert_eq!(user.to_string(), "the total -3 is negative");

    let mut untitled = ok.clone();
    untitled.title.clear();
    let errs = [
        bad.put(&db).await.unwrap_err(),
        untitled.clone().replace(&db).await.unwrap_err(),
        db.put(&untitled).await.unwrap_err(),
        db.batch_write().put_unchecked(&bad).await.unwrap_err(),
        db.batch_write()
            .put_unchecked(&Order::new("fine", 1))
            .put_unchecked(&untitled)
            .await
            .unwrap_err(),
        db.transaction().create(&bad).await.unwrap_err(),
        db.transaction().create(&Order::new("fine", 1)).put(&untitled).await.unwrap_err(),
    ];
    for err in &errs {
        assert!(refusal(err).is_some(), "{err}");
    }
    assert_eq!(db.requests().total(), 0, "nothing sent: {}", db.requests());
    assert_eq!(support::snapshot(&db).await, before);

    // `update` carries no whole value: it is not validated (a condition guards it).
    Order::update(&db, "c", "ok").set(Order::TOTAL, -1).await?;
    // ... and an upsert neither.
    let created =
        Order::update(&db, "c", "new").upsert().set(Order::TOTAL, -2).set(Order::TITLE, "");
    assert_eq!(created.await?.total, -2);
    Ok(())
}

/// A tree node and an edge with validations: their writes are refused too.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "DRIVE#<drive>", sk = "DIR#<id>", validate = named)]
#[hierarchy(strategy = adjacency, parent = parent, index = gsi2)]
struct Dir {
    drive: String,
    id: String,
    parent: Option<String>,
    name: String,
}

fn named(dir: &Dir) -> Result<(), OrderError> {
    if dir.name.is_empty() { Err(OrderError::Untitled) } else { Ok(()) }
}

#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "USER#<follower>", sk = "FOLLOWS#<followee>", validate = not_self)]
#[edge(from = follower, to = followee, inverse(pk = "USER#<followee>", sk = "FOLLOWER#<follower>"))]
struct Follow {
    follower: String,
    followee: String,
}

fn not_self(follow: &Follow) -> Result<(), OrderError> {
    if follow.follower == follow.followee { Err(OrderError::Untitled) } else { Ok(()) }
}

#[tokio::test]
async fn tree_and_edge_writes_are_validated() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    let dir = |id: &str, parent: Option<&str>, name: &str| Dir {
        drive: "d".into(),
        id: id.into(),
        parent: parent.map(str::to_owned),
        name: name.into(),
    };
    let tree = Dir::tree(&db, "d");
    tree.insert(&dir("root", None, "Root")).await?;
    db.reset_requests();
    let err = tree.insert(&dir("a", Some("root"), "")).await.unwrap_err();
    assert!(refusal(&err).is_some(), "{err}");
    assert_eq!(db.requests().total(), 0, "{}", db.requests());

    let follows = Follow::edges(&db);
    follows.link(&Follow { follower: "ann".into(), followee: "bob".into() }).await?;
    db.reset_requests();
    let err = follows.link(&Follow { follower: "ann".into(), followee: "ann".into() }).await;
    assert!(err.as_ref().err().and_then(refusal).is_some(), "{err:?}");
    assert_eq!(db.requests().total(), 0, "{}", db.requests());
    Ok(())
}

#[tokio::test]
async fn after_read_runs_on_every_read_path() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    // Written by another service, in upper case.
    let mut item = to_item(&Order::new("x", 7), Some(1))?;
    item.insert("title".into(), s("SHOUTED"));
    support::put_raw(&db, item).await;
    let title = |o: &Order| o.title.clone();
    let want = Some("shouted".to_owned());

    assert_eq!(Order::get(&db, "c", "x").await?.as_ref().map(title), want);
    assert_eq!(Order::query(&db, "c").all().await?.first().map(title), want);
    assert_eq!(db.scan::<Order>().all().await?.first().map(title), want);
    let batch = db.batch_get([Order::key("c", "x")]).await?;
    assert_eq!(batch[0].as_ref().map(title), want);
    let mut read = db.transact_get();
    let slot = read.get(Order::key("c", "x"));
    assert_eq!(read.await?.get(&slot)?.as_ref().map(title), want);
    let all = Order::partition(&db, "c").collection::<Orders>().all().await?;
    assert_eq!(
        all,
        [Orders::Order(Order { title: "shouted".into(), version: 1, ..Order::new("x", 7) })]
    );
    let err = Order::new("x", 7).create(&db).await.unwrap_err();
    assert_eq!(err.current::<Order>().transpose()?.as_ref().map(title), want);
    let raw = support::raw(&db, "CUST#c", "ORDER#x").await.expect("stored");
    let event = json!({ "Records": [
        crate::streams::lambda_record("INSERT", "NEW_IMAGE", None, Some(&raw)),
    ]});
    let event: StreamEvent = serde_json::from_value(event).expect("a Lambda event");
    let changes: Vec<Change<Orders>> = event.decode().into_iter().collect::<Result<_, _>>()?;
    let read = changes[0].new_entity();
    assert!(matches!(read, Some(Orders::Order(o)) if o.title == "shouted"), "{read:?}");
    // The value written back is the transformed one.
    let mut read = Order::get(&db, "c", "x").await?.expect("stored");
    read.total = 8;
    read.replace(&db).await?;
    let stored = support::raw(&db, "CUST#c", "ORDER#x").await.expect("stored");
    assert_eq!(stored["title"], s("shouted"));
    Ok(())
}

/// Hooks that try to change what the library owns.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "K#<id>", sk = "K", after_read = rekey)]
struct Rekeyed {
    id: String,
}

fn rekey(value: &mut Rekeyed) {
    value.id.push('!');
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(pk = "V#<id>", sk = "V", version = version, after_read = Reversioned::bump)]
struct Reversioned {
    id: String,
    #[serde(default)]
    version: u32,
}

impl Reversioned {
    fn bump(&mut self) {
        self.version += 10;
    }
}

#[tokio::test]
async fn after_read_cannot_change_the_key_or_the_version() -> Result<(), Error> {
    let db = support::db::<DefaultTable>().await;
    Rekeyed { id: "a".into() }.create(&db).await?;
    let err = Rekeyed::get(&db, "a").await.unwrap_err();
    match &err {
        Error::Hook { entity: "Rekeyed", problem: HookProblem::KeyChanged { changed }, .. } => {
            assert_eq!(changed, "(\"K#a!\", \"K\")");
        }
        other => panic!("{other}"),
    }
    assert!(!err.is_invalid_entity());
    let err = Rekeyed::query(&db, "a").all().await.unwrap_err();
    assert!(matches!(err, Error::Hook { problem: HookProblem::KeyChanged { .. }, .. }), "{err}");

    let mut v = Reversioned { id: "v".into(), version: 0 };
    v.create(&db).await?;
    let err = Reversioned::get(&db, "v").await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Hook { problem: HookProblem::VersionChanged { stored: 1, changed: 11 }, .. }
        ),
        "{err}"
    );
    Ok(())
}
