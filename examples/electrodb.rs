//! Taking over a table that ElectroDB wrote. A Node service declared a `user` and a `task`
//! entity with ElectroDB (`examples/peers/electrodb.mjs`, the versions in
//! `examples/peers/package.json`): a collection `workspace` on index `gsi1` holds a user and
//! their tasks, index `gsi2` lists tasks by status and due date, `gsi3` by sprint number.
//! ElectroDB writes its keys in its own grammar (`$taskapp#taskid_t-100`, `$task_1`), lower
//! cased, with unpadded numbers and ISO 8601 dates in milliseconds, and tags every item with
//! `__edb_e__` (the entity) and `__edb_v__` (its version).
//!
//! The program creates the table, lets ElectroDB write users and tasks, reads and queries them
//! through the typed API, updates one task's status (one `UpdateItem`: only the status index's
//! partition key is rewritten), clears a field (removed, not stored as `NULL`), creates a user
//! and a task, and lets ElectroDB read everything back and compare the created items with the
//! ones it writes itself.
//!
//!     npm ci --prefix examples/peers && cargo run --example electrodb
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

/// The table as ElectroDB's service uses it: `pk`/`sk`, three indexes, and the entity named
/// in `__edb_e__`.
#[derive(Table)]
#[table(
    name = "taskapp",
    type_attr = "__edb_e__",
    gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"),
    gsi(name = "gsi2", pk = "gsi2pk", sk = "gsi2sk"),
    gsi(name = "gsi3", pk = "gsi3pk", sk = "gsi3sk")
)]
struct TaskApp;

#[derive(Entity, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
#[entity(table = TaskApp, name = "user", constant(__edb_v__ = "1"),
         pk = "$taskapp#userid_<user_id:lower>", sk = "$user_1")]
#[index(gsi1, pk = "$taskapp#userid_<user_id:lower>", sk = "$workspace#user_1")]
struct User {
    user_id: String,
    name: String,
    email: Option<String>,
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
#[entity(table = TaskApp, name = "task", constant(__edb_v__ = "1"),
         pk = "$taskapp#taskid_<task_id:lower>", sk = "$task_1")]
#[index(
    gsi1,
    pk = "$taskapp#userid_<user_id:lower>",
    sk = "$workspace#task_1#taskid_<task_id:lower>"
)]
#[index(
    gsi2,
    pk = "$taskapp#status_<status>",
    sk = "$task_1#due_<due:iso8601(ms):lower>#taskid_<task_id:lower>"
)]
#[index(gsi3, pk = "$taskapp#sprint_<sprint:unpadded>", sk = "$task_1#taskid_<task_id:lower>")]
struct Task {
    task_id: String,
    user_id: String,
    title: String,
    status: Status,
    due: IsoMillis,
    sprint: u32,
    notes: Option<String>,
}

/// ElectroDB's collection `workspace`: a user and their tasks, one query of `gsi1`.
#[derive(Collection, Debug)]
enum Workspace {
    User(User),
    Task(Task),
}

fn jan(day: u32, hour: u32) -> IsoMillis {
    Utc.with_ymd_and_hms(2026, 1, day, hour, 0, 0).single().expect("a valid date").into()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let db = local::isolated_db::<TaskApp>().await?;
    let endpoint = local::endpoint()?;
    node::run("electrodb.mjs", "seed", &endpoint, db.table_name())?;

    // Reads: a get, the collection, a range of the status index, an index keyed by a number.
    let ann = User::get(&db, "Ann-01").await?.ok_or("ElectroDB's user Ann-01")?;
    assert_eq!((ann.name.as_str(), ann.email.as_deref()), ("Ann", Some("ann@example.com")));
    let workspace = User::partition_gsi1(&db, "Ann-01").collection::<Workspace>().all().await?;
    let mut tasks = Vec::new();
    for item in &workspace {
        match item {
            Workspace::User(user) => assert_eq!(user.name, "Ann"),
            Workspace::Task(task) => tasks.push(task.task_id.as_str()),
        }
    }
    assert_eq!(tasks, ["T-100", "T-101", "T-102"], "Ann's tasks: {workspace:?}");
    let open = Task::query_gsi2(&db, Status::Open).all().await?;
    let ids: Vec<_> = open.iter().map(|t| t.task_id.as_str()).collect();
    assert_eq!(ids, ["T-100", "T-103", "T-101"], "open tasks by due date");
    let sprint5 = Task::query_gsi3(&db, 5).all().await?;
    assert_eq!(sprint5.len(), 2);

    // Updates: the status alone (only `gsi2pk` depends on it), and a cleared field.
    db.reset_requests();
    Task::update(&db, "T-100").set(Task::STATUS, Status::Done).await?;
    assert_eq!(db.requests().total(), 1, "one UpdateItem, no read");
    Task::update(&db, "T-101").set(Task::NOTES, None).await?;

    // Creates, which ElectroDB reads back as its own.
    User { user_id: "Cara-03".into(), name: "Cara".into(), email: None }.create(&db).await?;
    Task {
        task_id: "T-200".into(),
        user_id: "Cara-03".into(),
        title: "Plan the next sprint".into(),
        status: Status::Open,
        due: Utc.with_ymd_and_hms(2026, 2, 1, 12, 0, 0).single().expect("a valid date").into(),
        sprint: 7,
        notes: None,
    }
    .create(&db)
    .await?;
    assert_eq!(Task::query_gsi2(&db, Status::Done).due_ge(jan(3, 0)).all().await?.len(), 1);

    node::run("electrodb.mjs", "verify", &endpoint, db.table_name())?;
    println!("ElectroDB's items read, queried and updated; ddb-model's items read by ElectroDB");
    Ok(())
}
