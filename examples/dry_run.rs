//! Dry runs and an auditing interceptor, one section each:
//!
//! - dry runs: an update, a tree move and an edge link hand back the requests they would
//!   send, printed as DynamoDB JSON; nothing is written (the move reads its subtree first);
//! - an interceptor on the handle logs every request and its outcome, and adds a condition to
//!   every write: items under a legal hold cannot change, and the error says it was the
//!   interceptor's condition that failed.
//!
//!     cargo run --example dry_run
//!
//! Runs against the embedded engine; set `DDB_ENDPOINT` to use another endpoint (AWS's
//! DynamoDB Local).

use std::sync::{Arc, Mutex};

use ddb_model::aws_sdk_dynamodb::error::ProvideErrorMetadata;
use ddb_model::aws_sdk_dynamodb::types::AttributeValue;
use ddb_model::intercept::{AddedCondition, Additions, Interceptor, Outcome, Request};
use ddb_model::prelude::*;
use ddb_model::{Edge, Op, TreePath, local};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "dry_run", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct App;

/// A member with follower counters.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = App, pk = "MEMBER#<id>", sk = "PROFILE")]
struct Member {
    id: String,
    name: String,
    #[serde(default)]
    following: u64,
    #[serde(default)]
    followers: u64,
}

/// `follower` follows `followee`: both directions and both counters in one transaction.
#[derive(Entity, Edge, Serialize, Deserialize, Debug, Clone)]
#[entity(table = App, pk = "MEMBER#<follower>", sk = "FOLLOWS#<followee>")]
#[edge(
    from = follower,
    to = followee,
    inverse(pk = "MEMBER#<followee>", sk = "FOLLOWER#<follower>"),
    from_count = Member::FOLLOWING,
    to_count = Member::FOLLOWERS
)]
struct Follow {
    follower: String,
    followee: String,
}

/// A folder of a drive, in a tree by path.
#[derive(Entity, Serialize, Deserialize, Debug, Clone)]
#[entity(table = App, pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = gsi1)]
struct Folder {
    drive: String,
    path: TreePath,
}

/// Logs every request and its outcome; adds "not under a legal hold" to every write.
#[derive(Default)]
struct Audit(Mutex<Vec<String>>);

impl Interceptor for Audit {
    fn before(&self, request: &Request, add: &mut Additions) {
        let hold =
            || AddedCondition::new("attribute_not_exists(#hold)").name("#hold", "legal_hold");
        match request {
            Request::PutItem(_) | Request::UpdateItem(_) | Request::DeleteItem(_) => {
                add.condition(hold())
            }
            Request::TransactWriteItems(t) => {
                for action in 0..t.transact_items().len() {
                    add.action_condition(action, hold());
                }
            }
            _ => {}
        }
    }

    fn after(&self, request: &Request, outcome: Outcome<'_>) {
        let how = match outcome {
            Outcome::Answered(_) => "ok".to_owned(),
            Outcome::Refused(e) => format!("refused ({})", e.meta().code().unwrap_or("?")),
            Outcome::Failed(e) => format!("failed ({e})"),
            _ => "?".to_owned(),
        };
        self.0.lock().expect("audit log").push(format!("{:?}: {how}", request.op()));
    }
}

fn p(path: &str) -> TreePath {
    path.parse().expect("a valid path")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = local::isolated_db::<App>().await?;
    for id in ["ann", "bob"] {
        Member { id: id.into(), name: id.to_uppercase(), following: 0, followers: 0 }
            .create(&db)
            .await?;
    }
    let tree = Folder::tree(&db, "d");
    for path in ["a", "a/x", "b"] {
        Box::pin(tree.insert(&Folder { drive: "d".into(), path: p(path) })).await?;
    }

    Box::pin(dry_runs(&db, &tree)).await?;
    Box::pin(audited(&db)).await
}

/// An update, a tree move and an edge link, dry.
async fn dry_runs(
    db: &Db<App>,
    tree: &ddb_model::tree::PathTree<'_, Folder>,
) -> Result<(), Box<dyn std::error::Error>> {
    println!("== dry runs: the requests, not sent");
    db.reset_requests();
    let update = Member::update(db, "ann").set(Member::NAME, "Ann".to_owned()).dry_run().await?;
    println!("{}", update[0].to_json_pretty());
    assert_eq!(db.requests().total(), 0, "an update's dry run sends nothing");

    let moved = tree.move_subtree(&p("a"), &p("b/a")).dry_run().await?;
    let reads = db.requests().total();
    println!("a tree move ({reads} reads sent first), then:");
    for request in &moved {
        println!("{}", request.to_json_pretty());
    }
    assert_eq!(db.requests().get(Op::TransactWriteItems), 0);

    let follows = Follow::edges(db);
    let edge = Follow { follower: "ann".into(), followee: "bob".into() };
    let linked = db.dry_run(follows.link(&edge)).await?;
    println!("an edge link:\n{}", linked[0].to_json_pretty());
    assert!(matches!(linked.as_slice(), [Request::TransactWriteItems(_)]));
    assert!(Follow::get(db, "ann", "bob").await?.is_none(), "nothing was written");
    assert_eq!(Member::get(db, "ann").await?.map(|m| m.name).as_deref(), Some("ANN"));

    follows.link(&edge).await?;
    Ok(())
}

/// The audited handle: every request logged, writes held back by a legal hold.
async fn audited(db: &Db<App>) -> Result<(), Box<dyn std::error::Error>> {
    println!("\n== an auditing interceptor that adds a condition to every write");
    let audit = Arc::new(Audit::default());
    let audited = db.clone().with_interceptor(audit.clone());
    Member::update(&audited, "ann").set(Member::NAME, "Ann".to_owned()).await?;
    // A legal hold, set by another system: writes through the audited handle now fail.
    db.client()
        .update_item()
        .table_name(db.table_name())
        .key("pk", AttributeValue::S("MEMBER#bob".into()))
        .key("sk", AttributeValue::S("PROFILE".into()))
        .update_expression("SET legal_hold = :t")
        .expression_attribute_values(":t", AttributeValue::Bool(true))
        .send()
        .await?;
    let err = Member::update(&audited, "bob").set(Member::NAME, "Robert".to_owned()).await;
    let err = err.expect_err("bob is under a legal hold");
    println!("update of bob: {err}");
    assert!(err.is_added_condition_failed());
    let err = Follow::edges(&audited).unlink("ann", "bob").await.expect_err("held");
    println!("unlink of ann -> bob: {err}");
    assert!(err.is_added_condition_failed());
    for line in audit.0.lock().expect("audit log").iter() {
        println!("  audit: {line}");
    }
    Ok(())
}
