//! The per-`Db` interceptor (issue 28): it sees every request the library sends and every
//! answer, once per request, and may only add conditions to writes; a failed addition is its
//! own typed error.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::error::RequestProblem;
use ddb_model::intercept::{AddedCondition, Additions, Interceptor, Outcome, Request};
use ddb_model::prelude::*;
use ddb_model::testing::{Faults, Harness};
use ddb_model::{DefaultTable, Op};

use crate::edge_model::{Follow, Graph, Member};
use crate::model::{App, Counter, Folder, Order, Status, User};
use crate::support::{self, raw, s};

/// Counts what it is shown, per operation: requests, answers, refusals and failures.
#[derive(Default)]
struct Tally(Mutex<BTreeMap<Op, [u64; 4]>>);

impl Tally {
    fn bump(&self, op: Op, i: usize) {
        self.0.lock().expect("tally").entry(op).or_default()[i] += 1;
    }
    fn get(&self, op: Op) -> [u64; 4] {
        self.0.lock().expect("tally").get(&op).copied().unwrap_or_default()
    }
}

impl Interceptor for Tally {
    fn before(&self, request: &Request, _: &mut Additions) {
        self.bump(request.op(), 0);
    }
    fn after(&self, request: &Request, outcome: Outcome<'_>) {
        let i = match outcome {
            Outcome::Answered(reply) => {
                assert_eq!(reply.op(), request.op());
                1
            }
            Outcome::Refused(_) => 2,
            _ => 3,
        };
        self.bump(request.op(), i);
    }
}

/// Every request counted by the handle was shown once before and once after.
fn shown_once(db: &Db<impl Table>, tally: &Tally) {
    for (op, n) in db.requests().iter() {
        let [before, answered, refused, failed] = tally.get(op);
        assert_eq!(before, n, "{op:?}");
        assert_eq!(answered + refused + failed, n, "{op:?}");
    }
}

#[tokio::test]
async fn every_request_and_answer_is_shown_once() -> Result<(), Error> {
    let tally = Arc::new(Tally::default());
    let db = support::db::<App>().await.with_interceptor(tally.clone());
    db.reset_requests();
    let users: Vec<User> = (0..30).map(|i| User::sample(&format!("u{i:02}"))).collect();
    users.iter().fold(db.batch_write(), |b, u| b.put(u)).await?;
    User::get(&db, "u01").await?;
    User::update(&db, "u01").add(User::LOGINS, 1).await?;
    User::update(&db, "u01").add(User::LOGINS, 1).no_return().await?;
    assert!(User::sample("u01").create(&db).await.unwrap_err().is_already_exists());
    db.scan::<User>().segments(2).await?;
    db.batch_get(users.iter().map(|u| User::key(&u.id)).collect::<Vec<_>>()).await?;
    shown_once(&db, &tally);
    assert_eq!(tally.get(Op::BatchWriteItem)[0], 2);
    assert_eq!(tally.get(Op::PutItem)[2], 1, "the refused create");
    assert_eq!(tally.get(Op::UpdateItem)[1], 2, "the marked update and its cleanup");

    let tally = Arc::new(Tally::default());
    let db = support::db::<DefaultTable>().await.with_interceptor(tally.clone());
    db.reset_requests();
    let tree = Folder::tree(&db, "d");
    for path in ["a", "a/x", "b"] {
        tree.insert(&Folder::at("d", path)).await?;
    }
    let p = |s: &str| s.parse::<ddb_model::TreePath>().expect("path");
    tree.move_subtree(&p("a"), &p("b/a")).await?;
    shown_once(&db, &tally);
    assert!(tally.get(Op::Query)[0] > 0 && tally.get(Op::TransactWriteItems)[1] > 0);

    let tally = Arc::new(Tally::default());
    let db = support::db::<Graph>().await.with_interceptor(tally.clone());
    db.reset_requests();
    for id in ["ann", "bob"] {
        Member::new(id).create(&db).await?;
    }
    Follow::edges(&db).link(&Follow::new("ann", "bob")).await?;
    shown_once(&db, &tally);
    Ok(())
}

#[tokio::test]
async fn each_round_of_a_retried_write_and_of_a_batch_is_shown() -> Result<(), Error> {
    // Batch items left unprocessed: each round is a request, shown.
    let tally = Arc::new(Tally::default());
    let harness = Harness::<App>::start(Faults::seeded(1).unprocessed(0.5)).await?;
    let harness = harness.configure(|db| db.with_interceptor(tally.clone()));
    let db = harness.db();
    let users: Vec<User> = (0..3).map(|i| User::sample(&format!("u{i}"))).collect();
    users.iter().fold(db.batch_write(), |b, u| b.put(u)).await?;
    let unprocessed = harness.proxy().counts().unprocessed;
    assert!(unprocessed >= 1, "some rounds left all unprocessed");
    assert_eq!(db.requests().get(Op::BatchWriteItem), 1 + unprocessed);
    shown_once(db, &tally);

    // A token-carrying write whose every attempt fails: every round is shown, and fails.
    let clean = support::db::<DefaultTable>().await;
    Counter { name: "c".into(), n: 0, log: vec![] }.create(&clean).await?;
    let tally = Arc::new(Tally::default());
    let harness = Harness::on(clean.clone(), Faults::default().fail_from(0)).await?;
    let db = harness.db().clone().with_interceptor(tally.clone());
    let err = Counter::update(&db, "c").add(Counter::N, 1).no_return().await.unwrap_err();
    assert!(matches!(err, Error::Transport { .. }), "{err}");
    let rounds = db.requests().get(Op::TransactWriteItems);
    assert!(rounds > 1, "sent again under TOKEN_ROUNDS");
    assert_eq!(tally.get(Op::TransactWriteItems), [rounds, 0, 0, rounds]);
    Ok(())
}

/// Adds `attribute_not_exists(legal_hold)` to every write, with the placeholders the library
/// uses itself (`#n0`), and records each request it was shown.
#[derive(Default)]
struct Hold(Mutex<Vec<Request>>);

fn hold() -> AddedCondition {
    AddedCondition::new("attribute_not_exists(#n0)").name("#n0", "legal_hold")
}

impl Interceptor for Hold {
    fn before(&self, request: &Request, add: &mut Additions) {
        self.0.lock().expect("hold").push(request.clone());
        match request {
            Request::PutItem(_) | Request::UpdateItem(_) | Request::DeleteItem(_) => {
                add.condition(hold())
            }
            Request::TransactWriteItems(t) => {
                for i in 0..t.transact_items().len() {
                    add.action_condition(i, hold());
                }
            }
            _ => {}
        }
    }
}

async fn set_hold<T: Table>(db: &Db<T>, pk: &str, sk: &str) {
    let mut item = raw(db, pk, sk).await.expect("stored");
    item.insert("legal_hold".into(), AttributeValue::Bool(true));
    support::put_raw(db, item).await;
}

#[tokio::test]
async fn an_added_condition_holds_writes_and_its_failure_is_its_own_error() -> Result<(), Error> {
    let db = support::db::<App>().await.with_interceptor(Arc::new(Hold::default()));
    let ann = User::sample("ann");
    ann.create(&db).await?;
    User::update(&db, "ann").set(User::NICK, Some("a".into())).await?;
    User::sample("cat").create(&db).await?;
    set_hold(&db, "USER#ann", "PROFILE").await;
    let before = support::snapshot(&db).await;

    let err = User::update(&db, "ann").set(User::NICK, Some("b".into())).await.unwrap_err();
    assert!(err.is_added_condition_failed(), "{err}");
    assert!(!err.is_condition_failed() && !err.is_not_found());
    assert!(matches!(err, Error::AddedConditionFailed { op: Op::UpdateItem, action: None }));
    let err = db.delete(User::key("ann")).await.unwrap_err();
    assert!(matches!(err, Error::AddedConditionFailed { op: Op::DeleteItem, action: None }));
    let err = ann.put(&db).await.unwrap_err();
    assert!(matches!(err, Error::AddedConditionFailed { op: Op::PutItem, action: None }));
    let err = User::update(&db, "ann").add(User::LOGINS, 1).no_return().await.unwrap_err();
    assert!(
        matches!(err, Error::AddedConditionFailed { op: Op::TransactWriteItems, action: Some(0) }),
        "{err}"
    );
    let err = db
        .transaction()
        .update(User::key("cat"), |u| u.set(User::NICK, Some("c".into())))
        .update(User::key("ann"), |u| u.set(User::NICK, Some("c".into())))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::AddedConditionFailed { op: Op::TransactWriteItems, action: Some(1) }),
        "{err}"
    );
    assert_eq!(support::snapshot(&db).await, before, "nothing was written");

    // The library's own guard still answers for itself.
    let err = User::update(&db, "nobody").set(User::NICK, None).await.unwrap_err();
    assert!(err.is_not_found(), "{err}");
    let err = User::sample("cat").create(&db).await.unwrap_err();
    assert!(err.is_already_exists(), "{err}");
    let mut order = Order {
        user: "cat".into(),
        year: 2024,
        seq: 1,
        status: Status::Open,
        total_cents: 1,
        version: 0,
    };
    order.create(&db).await?;
    let err =
        db.update(Order::key("cat", 2024, 1)).expect_version(7).set(Order::TOTAL_CENTS, 2).await;
    assert!(err.unwrap_err().is_version_conflict());
    // The caller's own condition too: both renamed apart, both applied.
    let cond = User::NAME.eq("someone else".to_owned());
    let err = User::update(&db, "cat").set(User::NICK, None).condition(cond).await.unwrap_err();
    assert!(err.is_condition_failed() && !err.is_added_condition_failed(), "{err}");
    let kept = User::update(&db, "cat").set(User::NICK, Some("k".into())).await?;
    assert_eq!(kept.nick.as_deref(), Some("k"));
    assert_eq!(raw(&db, "USER#cat", "PROFILE").await.expect("stored")["nick"], s("k"));
    Ok(())
}

/// Adds a condition to whatever it is shown.
struct Everywhere(AddedCondition, Option<usize>);

impl Interceptor for Everywhere {
    fn before(&self, _: &Request, add: &mut Additions) {
        match self.1 {
            None => add.condition(self.0.clone()),
            Some(i) => add.action_condition(i, self.0.clone()),
        }
    }
}

#[tokio::test]
async fn conditions_where_none_apply_are_refused_before_sending() -> Result<(), Error> {
    let clean = support::db::<App>().await;
    User::sample("ann").create(&clean).await?;
    fn refused(e: Error) -> (Op, Option<usize>) {
        match e {
            Error::BatchWriteIncomplete { written: 0, source: Some(source), .. } => {
                refused(*source)
            }
            Error::InvalidRequest {
                problem: RequestProblem::ConditionNotApplicable { op, action },
                ..
            } => (op, action),
            other => panic!("not refused: {other}"),
        }
    }
    let db = clean.clone().with_interceptor(Arc::new(Everywhere(hold(), None)));
    db.reset_requests();
    assert_eq!(refused(User::get(&db, "ann").await.unwrap_err()), (Op::GetItem, None));
    assert_eq!(refused(db.scan::<User>().await.unwrap_err()), (Op::Scan, None));
    let put = db.batch_write().put(&User::sample("bob")).await.unwrap_err();
    assert_eq!(refused(put), (Op::BatchWriteItem, None));
    let tx = User::update(&db, "ann").add(User::LOGINS, 1).no_return().await.unwrap_err();
    assert_eq!(
        refused(tx),
        (Op::TransactWriteItems, None),
        "a transaction's conditions name an action"
    );
    let db = clean.clone().with_interceptor(Arc::new(Everywhere(hold(), Some(1))));
    let tx = User::update(&db, "ann").add(User::LOGINS, 1).no_return().await.unwrap_err();
    assert_eq!(refused(tx), (Op::TransactWriteItems, Some(1)), "it has one action");
    let put = User::sample("bob").create(&db).await.unwrap_err();
    assert_eq!(refused(put), (Op::PutItem, Some(1)));

    // A placeholder the condition does not declare, or declares and does not use.
    let undeclared = AddedCondition::new("attribute_not_exists(#h) AND #x = :v").name("#h", "h");
    let db = clean.clone().with_interceptor(Arc::new(Everywhere(undeclared, None)));
    let err = User::sample("bob").create(&db).await.unwrap_err();
    assert!(
        matches!(&err, Error::InvalidRequest { problem: RequestProblem::AddedPlaceholder { placeholder }, .. } if placeholder == "#x"),
        "{err}"
    );
    let unused = hold().value(":v", AttributeValue::Bool(true));
    let db = clean.clone().with_interceptor(Arc::new(Everywhere(unused, None)));
    assert!(User::sample("bob").create(&db).await.is_err());
    assert_eq!(db.requests().total(), 0, "nothing was sent");
    assert!(User::get(&clean, "bob").await?.is_none());
    Ok(())
}

/// Tries to change what it is shown: it can only change a copy.
struct Meddler;

impl Interceptor for Meddler {
    fn before(&self, request: &Request, _: &mut Additions) {
        let mut copy = request.clone();
        if let Request::PutItem(put) = &mut copy {
            put.item = None;
            put.table_name = Some("elsewhere".into());
            assert_ne!(&copy, request);
        }
    }
}

#[tokio::test]
async fn an_interceptor_cannot_change_keys_items_or_bookkeeping() -> Result<(), Error> {
    let db = support::db::<App>().await.with_interceptor(Arc::new(Meddler));
    let ann = User::sample("ann");
    ann.create(&db).await?;
    assert_eq!(User::get(&db, "ann").await?, Some(ann));
    let item = raw(&db, "USER#ann", "PROFILE").await.expect("stored where the library put it");
    assert_eq!(item["_type"], s("User"));
    Ok(())
}
