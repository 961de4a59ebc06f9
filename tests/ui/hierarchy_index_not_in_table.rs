use ddb_model::{Entity, Table, TreePath};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "by_email", pk = "gsi2pk"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = children)]
struct MissingIndex {
    drive: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = by_email)]
struct IndexWithoutSortKey {
    drive: String,
    path: TreePath,
}

// The closure strategy reads no index, but one it is given must exist.
#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "ORG#<org>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = manager, index = children)]
struct ClosureMissingIndex {
    org: String,
    id: String,
    manager: Option<String>,
}

fn main() {}
