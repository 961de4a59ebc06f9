use ddb_model::{Entity, TreePath};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[index(gsi1, pk = "OWNER#<owner>", sk = "<path>")]
#[hierarchy(path = path, index = gsi1)]
struct IndexTwice {
    drive: String,
    owner: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = gsi1)]
struct RevisionField {
    drive: String,
    path: TreePath,
    #[serde(rename = "_tree_rev")]
    revision: u64,
}

fn main() {}
