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

fn main() {}
