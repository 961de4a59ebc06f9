use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// Two fields in the sort key: the id must be the only one.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "EMP#<dept>#<id>")]
#[hierarchy(strategy = closure, parent = manager)]
struct TwoFields {
    org: String,
    dept: String,
    id: String,
    manager: Option<String>,
}

// The id in the partition key too.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<id>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = manager)]
struct IdInPartition {
    id: String,
    manager: Option<String>,
}

// The parent is the id.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = id)]
struct ParentIsId {
    org: String,
    id: String,
}

// The parent fills an index key: a move would change the key.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
#[index(gsi1, pk = "BOSS#<manager>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = manager)]
struct ParentInIndex {
    org: String,
    id: String,
    manager: Option<String>,
}

// A field stored where the copies keep their ancestors.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = manager)]
struct Reserved {
    org: String,
    id: String,
    manager: Option<String>,
    #[serde(rename = "_tree_up")]
    chain: String,
}

fn main() {}
