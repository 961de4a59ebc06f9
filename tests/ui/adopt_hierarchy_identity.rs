use ddb_model::{Entity, Table};
use serde::{Deserialize, Serialize};

#[derive(Table)]
#[table(name = "app", gsi(name = "gsi1", pk = "gsi1pk", sk = "gsi1sk"))]
struct App;

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "DRIVE#<drive:verbatim>", sk = "NODE#<path>", no_type_attr)]
#[hierarchy(path = path, index = gsi1)]
struct Folder {
    drive: String,
    path: ddb_model::TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(table = App, pk = "ORG#<org>", sk = "EMP#<id>", type_attr = "kind")]
#[hierarchy(strategy = closure, parent = boss)]
struct Employee {
    org: String,
    id: String,
    boss: Option<String>,
}

fn main() {}
