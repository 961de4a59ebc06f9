use ddb_model::Entity;
use serde::{Deserialize, Serialize};

// A `<` that opens no placeholder.
#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<", sk = "PROFILE")]
struct User {
    id: String,
}

fn main() {}
