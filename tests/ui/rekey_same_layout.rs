use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// The old layout is the entity's.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", rekey(pk = "USER#<id>", sk = "PROFILE"))]
struct User {
    id: String,
}

fn main() {}
