use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// The entity has a sort key, the old layout none.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", rekey(pk = "U#<id>"))]
struct User {
    id: String,
}

// The old layout has a sort key, the entity none.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "ITEM#<id>", rekey(pk = "I#<id>", sk = "ITEM"))]
struct Thing {
    id: String,
}

fn main() {}
