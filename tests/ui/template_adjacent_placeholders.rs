use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<org><id>", sk = "PROFILE")]
struct User {
    org: String,
    id: String,
}

fn main() {}
