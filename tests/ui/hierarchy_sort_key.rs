use ddb_model::{Entity, TreePath};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>#<path>")]
#[hierarchy(path = path, index = gsi1)]
struct NoSortKey {
    drive: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>#V1")]
#[hierarchy(path = path, index = gsi1)]
struct TextAfterPath {
    drive: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE", sk = "<drive>#<path>")]
#[hierarchy(path = path, index = gsi1)]
struct TwoPlaceholders {
    drive: String,
    path: TreePath,
}

fn main() {}
