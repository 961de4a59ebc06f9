use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// The old layout names no field.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", rekey(pk = "U#<user_id>", sk = "PROFILE"))]
struct User {
    id: String,
}

fn main() {}
