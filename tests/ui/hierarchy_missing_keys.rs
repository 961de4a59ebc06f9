use ddb_model::{Entity, TreePath};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(index = gsi1)]
struct NoPath {
    drive: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path)]
struct NoIndex {
    drive: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = location, index = gsi1)]
struct NoSuchField {
    drive: String,
    path: TreePath,
}

fn main() {}
