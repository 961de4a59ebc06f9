use ddb_model::{Entity, TreePath};
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy]
struct Bare {
    drive: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = gsi1, parents = path)]
struct UnknownKey {
    drive: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = gsi1, strategy = nested)]
struct UnknownStrategy {
    drive: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = gsi1, index = gsi2)]
struct DuplicateKey {
    drive: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = "path", index = gsi1, max_depth = "8")]
struct QuotedValues {
    drive: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = gsi1, max_depth = 0)]
#[hierarchy(path = path, index = gsi1)]
struct DepthAndDuplicate {
    drive: String,
    path: TreePath,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path, index = indexes::gsi1)]
struct MalformedValues {
    drive: String,
    path: TreePath,
}

fn main() {}
