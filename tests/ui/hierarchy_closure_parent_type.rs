use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// The parent must be an Option of the id type.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = manager)]
struct NotAnOption {
    org: String,
    id: String,
    manager: String,
}

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ORG#<org>", sk = "EMP#<id>")]
#[hierarchy(strategy = closure, parent = manager)]
struct OtherIdType {
    org: String,
    id: String,
    manager: Option<u64>,
}

fn main() {}
