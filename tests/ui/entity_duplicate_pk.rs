use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE", pk = "U#<id>")]
struct User {
    id: String,
}

fn main() {}
