use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// No parent field.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure)]
struct NoParent {
    org: String,
    id: String,
}

// A path is not for the closure strategy (an `index` is accepted, and unused).
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = manager, path = id, index = gsi1)]
struct PathAndIndex {
    org: String,
    id: String,
    manager: Option<String>,
}

// The parent field does not exist.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = boss)]
struct UnknownParent {
    org: String,
    id: String,
    manager: Option<String>,
}

// Too deep for one transaction per insert.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = manager, max_depth = 200)]
struct TooDeep {
    org: String,
    id: String,
    manager: Option<String>,
}

// `parent` without an id strategy.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "DRIVE#<drive>", sk = "NODE#<path>")]
#[hierarchy(path = path, index = gsi1, parent = up)]
struct PathWithParent {
    drive: String,
    path: ddb_model::TreePath,
    up: Option<String>,
}

fn main() {}
