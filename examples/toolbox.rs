//! Taking over a table that DynamoDB-Toolbox wrote. A Node service declared a `User` and a
//! `Task` entity with DynamoDB-Toolbox (`examples/peers/toolbox.mjs`, the versions in
//! `examples/peers/package.json`): a user's profile and tasks share the partition
//! `USER#<userId>`, and index `byStatus` lists tasks by status and due date through two
//! linked attributes. Toolbox names the entity in `_et`, stamps `_ct` and `_md` in ISO 8601
//! with milliseconds, and its formatter refuses an item whose attribute does not fit the
//! schema (a `NULL` where a string is optional, for one).
//!
//! The program creates the table, lets Toolbox write users and tasks, reads and queries them
//! through the typed API, updates one task's status (one `UpdateItem`: only the index's
//! partition key is rewritten), clears a field (removed, not stored as `NULL`), creates a user
//! and a task, and lets Toolbox read everything back and compare the created items with the
//! ones it writes itself.
//!
//!     npm ci --prefix examples/peers && cargo run --example toolbox
//!
//! Runs against the embedded DynamoDB-compatible engine; set `DDB_ENDPOINT` to use another
//! endpoint (AWS's DynamoDB Local, for example).

#[path = "peers/node.rs"]
mod node;

use ddb_model::chrono::{TimeZone, Utc};
use ddb_model::entity::IsoMillis;
use ddb_model::local;
use ddb_model::prelude::*;
use serde::{Deserialize, Serialize};

/// The table as Toolbox's `Table` declares it: `pk`/`sk`, index `byStatus`, the entity named
/// in `_et`.
#[derive(Table)]
#[table(name = "tasks", type_attr = "_et", gsi(name = "byStatus", pk = "gsi1pk", sk = "gsi1sk"))]
struct Tasks;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
#[entity(table = Tasks, name = "User", pk = "USER#<user_id>", sk = "PROFILE",
         created_at = created, updated_at = modified)]
struct User {
    user_id: String,
    name: String,
    email: Option<String>,
    #[serde(rename = "_ct")]
    created: IsoMillis,
    #[serde(rename = "_md")]
    modified: IsoMillis,
}

#[derive(KeyPart, Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
#[key_part(rename_all = "lowercase")]
enum Status {
    Open,
    Done,
}

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
#[entity(table = Tasks, name = "Task", pk = "USER#<user_id>", sk = "TASK#<task_id>",
         created_at = created, updated_at = modified)]
#[index(byStatus, query = by_status, pk = "STATUS#<status>", sk = "<due:iso8601(ms)>#<task_id>")]
struct Task {
    user_id: String,
    task_id: String,
    title: String,
    status: Status,
    due: IsoMillis,
    points: Option<u32>,
    #[serde(rename = "_ct")]
    created: IsoMillis,
    #[serde(rename = "_md")]
    modified: IsoMillis,
}

/// A user's partition: the profile and the tasks, one query.
#[derive(Collection, Debug)]
enum Account {
    User(User),
    Task(Task),
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = local::isolated_db::<Tasks>().await?;
    let endpoint = local::endpoint()?;
    node::run("toolbox.mjs", "seed", &endpoint, db.table_name())?;

    // Reads: a get, a partition of two entity types, a range of the index.
    let ann = User::get(&db, "Ann-01").await?.ok_or("Toolbox's user Ann-01")?;
    assert_eq!((ann.name.as_str(), ann.email.as_deref()), ("Ann", Some("ann@example.com")));
    let account = User::partition(&db, "Ann-01").collection::<Account>().all().await?;
    let mut tasks = Vec::new();
    for item in &account {
        match item {
            Account::User(user) => assert_eq!(user.name, "Ann"),
            Account::Task(task) => tasks.push(task.task_id.as_str()),
        }
    }
    assert_eq!(tasks, ["T-100", "T-101", "T-102"], "Ann's tasks: {account:?}");
    let open = Task::query_by_status(&db, Status::Open).all().await?;
    let ids: Vec<_> = open.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["T-100", "T-103", "T-101"], "open tasks by due date");

    // Updates: the status alone (only `gsi1pk` depends on it), and a cleared field.
    db.reset_requests();
    Task::update(&db, "Ann-01", "T-100").set(Task::STATUS, Status::Done).await?;
    assert_eq!(db.requests().total(), 1, "one UpdateItem, no read");
    Task::update(&db, "Ann-01", "T-101").set(Task::POINTS, None).await?;

    // Creates, which Toolbox reads back as its own.
    let now = IsoMillis::now();
    User {
        user_id: "Cara-03".into(),
        name: "Cara".into(),
        email: None,
        created: now,
        modified: now,
    }
    .create(&db)
    .await?;
    Task {
        user_id: "Cara-03".into(),
        task_id: "T-200".into(),
        title: "Plan the next sprint".into(),
        status: Status::Open,
        due: Utc.with_ymd_and_hms(2026, 2, 1, 12, 0, 0).single().expect("a valid date").into(),
        points: Some(5),
        created: now,
        modified: now,
    }
    .create(&db)
    .await?;

    node::run("toolbox.mjs", "verify", &endpoint, db.table_name())?;
    println!("Toolbox's items read, queried and updated; ddb-model's items read by Toolbox");
    Ok(())
}
