use ddb_model::Entity;
use serde::{Deserialize, Serialize};

#[derive(Entity, Serialize, Deserialize)]
#[entity(pk = "USER#<id>", sk = "PROFILE")]
struct User {
    #[entity(from_key)]
    id: String,
    #[entity(from_key)]
    email: String,
}

fn main() {}
