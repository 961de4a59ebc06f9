use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<user_id>", sk = "PROFILE")]
struct User {
    id: String,
    email: String,
}

fn main() {}
