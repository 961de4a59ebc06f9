//! ddb-model in five minutes: declare a table and two entities, then create, read, update and
//! delete them, with the typed errors and the requests each step sends.
//!
//!     cargo run --example quickstart
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example).

use ddb_model::prelude::*;
use ddb_model::{KeyPart, local};
use serde::{Deserialize, Serialize};

/// The physical table: a partition key, a sort key and one global secondary index.
#[derive(Table)]
#[table(
    name = "quickstart",
    pk = "pk",
    sk = "sk",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk")
)]
struct App;

/// A user, stored under `USER#<id>` / `PROFILE`, and findable by organisation on gsi1; an
/// e-mail address belongs to one user at most.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<id>", sk = "PROFILE")]
#[index(gsi1, pk = "ORG#<org>", sk = "USER#<name>")]
struct User {
    id: String,
    org: String,
    name: String,
    #[unique]
    email: String,
    #[serde(default)]
    logins: u64,
    nickname: Option<String>,
}

#[derive(KeyPart, Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
enum OrderStatus {
    Open,
    Shipped,
}

/// A user's orders live in the user's partition, sorted by number; versioned.
#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[entity(table = App, pk = "USER#<user_id>", sk = "ORDER#<number>", version = version)]
struct Order {
    user_id: String,
    number: u32,
    status: OrderStatus,
    total_cents: i64,
    version: u64,
}

fn step<T: Table>(db: &Db<T>, what: &str, before: ddb_model::RequestStats) {
    println!("  {what:<58} [{}]", db.requests() - before);
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    // A fresh table on the embedded engine (or on DDB_ENDPOINT).
    let db = local::isolated_db::<App>().await?;
    println!("table `{}` on {}\n", db.table_name(), local::endpoint()?);

    println!("keys are built from the templates, separators in values are escaped:");
    println!("  User::key(\"ann\")        = {}", User::key("ann"));
    println!("  Order::key(\"ann\", 7)    = {}", Order::key("ann", 7u32));
    println!("  User::key(\"a#b\")        = {}\n", User::key("a#b"));

    println!("single-item operations:");
    let mut ann = User {
        id: "ann".into(),
        org: "acme".into(),
        name: "Ann".into(),
        email: "ann@acme.test".into(),
        logins: 0,
        nickname: None,
    };
    let t = db.requests();
    ann.create(&db).await?;
    step(&db, "create ann", t);

    let t = db.requests();
    let err = ann.create(&db).await.unwrap_err();
    let current: Option<User> = err.current().transpose()?;
    step(
        &db,
        &format!("create ann again -> AlreadyExists, stored: {:?}", current.map(|u| u.name)),
        t,
    );

    let t = db.requests();
    let read = User::get(&db, "ann").await?;
    assert_eq!(read.as_ref(), Some(&ann));
    step(&db, "get ann", t);

    let t = db.requests();
    let updated = User::update(&db, "ann")
        .set(User::NICKNAME, "annie")
        .condition(User::EMAIL.contains("@acme."))
        .await?;
    step(&db, &format!("set nickname if e-mail is at acme -> {:?}", updated.nickname), t);

    let t = db.requests();
    let updated = User::update(&db, "ann").add(User::LOGINS, 1).await?;
    step(
        &db,
        &format!(
            "add 1 login (marked UpdateItem + marker removal: its own result) -> {}",
            updated.logins
        ),
        t,
    );

    println!("\nunique e-mail addresses:");
    let bob = User { id: "bob".into(), name: "Bob".into(), ..ann.clone() };
    let t = db.requests();
    let err = bob.create(&db).await.unwrap_err();
    step(&db, &format!("sign up bob with ann's e-mail -> {}", short(&err)), t);

    let t = db.requests();
    User::update(&db, "ann").set(User::EMAIL, "ann@acme.example").await?;
    step(&db, "change ann's e-mail (read, then move it in one transaction)", t);

    let t = db.requests();
    bob.create(&db).await?;
    step(&db, "sign up bob with ann's old e-mail, free again", t);

    let t = db.requests();
    let err = User::update(&db, "nobody").set(User::NICKNAME, "x").await.unwrap_err();
    step(&db, &format!("update a missing user -> {}", short(&err)), t);
    ann = updated;

    println!("\noptimistic locking:");
    let mut order = Order {
        user_id: "ann".into(),
        number: 1,
        status: OrderStatus::Open,
        total_cents: 4200,
        version: 0,
    };
    let t = db.requests();
    order.create(&db).await?;
    step(&db, &format!("create order 1 -> version {}", order.version), t);

    let mut stale = order.clone();
    let t = db.requests();
    order.status = OrderStatus::Shipped;
    order.replace(&db).await?;
    step(&db, &format!("ship order 1 -> version {}", order.version), t);

    let t = db.requests();
    stale.total_cents = 1;
    let err = stale.replace(&db).await.unwrap_err();
    step(&db, &format!("replace a stale copy -> {}", short(&err)), t);

    println!("\nlimits are checked before sending:");
    let t = db.requests();
    let huge = User { id: "x".repeat(3000), ..ann.clone() };
    let err = huge.create(&db).await.unwrap_err();
    step(&db, &format!("create with a 3000-byte id -> {}", short(&err)), t);

    let t = db.requests();
    let old = User::delete(&db, "ann").return_old().await?;
    step(&db, &format!("delete ann (returning {:?})", old.map(|u| u.name)), t);

    println!("\nrequests sent in total: {}", db.requests());
    Ok(())
}

/// A short description of an error.
fn short(err: &Error) -> String {
    match err {
        Error::NotFound { .. } => "NotFound".into(),
        Error::VersionConflict { expected, actual, .. } => {
            format!("VersionConflict (expected {expected}, stored {actual:?})")
        }
        Error::Unique { field, scope, owner, .. } => {
            format!(
                "Unique `{field}` (scope {scope}, owned by {})",
                owner.as_deref().unwrap_or("?")
            )
        }
        Error::InvalidKey { attribute, problem, .. } => {
            format!("InvalidKey `{attribute}`: {problem}")
        }
        other => other.to_string(),
    }
}
